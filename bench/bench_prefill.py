"""Issue 17's causal prefill shapes, attnc's paged kernel against PyTorch SDPA
(cuDNN backend) in one run: S 8192, 16 heads, 192/128 and B 1, S 8192,
32/8 heads, 128/128, bf16. attnc reads a paged cache with a shuffled block
table; its wgmma form loads K/V tiles by TMA for pages of 8+ tokens and by
the cp.async gather for smaller pages, so pages of 4 time the cp.async form
of the same kernel in the same run (an A/B of the K/V copies).

TFLOP/s = 2 * S^2 / 2 * Hq * (Dqk + Dv) / time; times are medians of
CUDA-graph replays. Each attnc output is compared with cuDNN's (relative
Frobenius error; NaN fails).

Usage (GPU machine): PYTHONPATH=python ATTNC_LIBRARY=build/lib/libattnc.so \
    python3 bench/bench_prefill.py      # JSON to $OUT/bench_prefill.json
"""
import json
import math
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_attention import attnc_runner, graph_time  # noqa: E402

import attnc  # noqa: E402

DEV = "cuda"
# (name, S, Hq, Hkv, Dqk, Dv, pages): the pages attnc is timed with.
SHAPES = [
    ("S8192_H16_192x128", 8192, 16, 16, 192, 128, (64, 16, 4)),
    ("S8192_H32x8_128x128", 8192, 32, 8, 128, 128, (64,)),
]


def cudnn(q, k, v):
    """SDPA cuDNN, causal, [1, H, S, D] inputs; GQA by enable_gqa where the
    backend takes it, else K/V expanded to the query heads."""
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        if k.shape[1] == q.shape[1]:
            return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
        try:
            F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
            return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                          enable_gqa=True)
        except (RuntimeError, TypeError):  # no GQA in this backend or torch
            group = q.shape[1] // k.shape[1]
            ke, ve = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
            return lambda: F.scaled_dot_product_attention(q, ke, ve, is_causal=True)


def paged(k, v, page):
    """k/v [1, Hkv, S, D] -> caches [pages, page, Hkv, D] in shuffled order."""
    _, hkv, seq, dqk = k.shape
    dv = v.shape[-1]
    pages = seq // page
    order = torch.randperm(pages, device=DEV)
    kc = torch.empty(pages, page, hkv, dqk, device=DEV, dtype=k.dtype)
    vc = torch.empty(pages, page, hkv, dv, device=DEV, dtype=v.dtype)
    kc[order] = k[0].transpose(0, 1).reshape(pages, page, hkv, dqk)
    vc[order] = v[0].transpose(0, 1).reshape(pages, page, hkv, dv)
    return kc, vc, order.view(1, pages).to(torch.int32)


def run_shape(name, seq, hq, hkv, dqk, dv, pages):
    q = torch.randn(1, hq, seq, dqk, device=DEV, dtype=torch.bfloat16)
    k = torch.randn(1, hkv, seq, dqk, device=DEV, dtype=torch.bfloat16)
    v = torch.randn(1, hkv, seq, dv, device=DEV, dtype=torch.bfloat16)
    flops = 2 * seq * seq * hq * (dqk + dv) / 2
    ref_fn = cudnn(q, k, v)
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        ref = ref_fn()[0].transpose(0, 1).float()
        r = {"sdpa_cudnn_TFLOPs": flops / graph_time(ref_fn) / 1e9}
    query = q[0].transpose(0, 1).contiguous()  # [S, Hq, Dqk]
    lens = torch.tensor([seq], device=DEV, dtype=torch.int32)
    starts = torch.tensor([0, seq], device=DEV, dtype=torch.int32)
    for page in pages:
        kc, vc, tables = paged(k, v, page)
        t0 = time.perf_counter()
        model = attnc.compile({"model_type": "llama", "num_attention_heads": hq,
                               "num_key_value_heads": hkv, "head_dim": dqk,
                               "v_head_dim": dv, "num_hidden_layers": 1,
                               "torch_dtype": "bfloat16"}, block_size=page)
        out = torch.full((seq, hq, dv), float("nan"), device=DEV, dtype=torch.bfloat16)
        run = attnc_runner(model, query, kc, vc, tables, lens, starts, out)
        run()
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
        err = ((out.float() - ref).norm() / ref.norm()).item()
        entry = {"TFLOPs": flops / graph_time(run, rep=20) / 1e9, "rel_err_vs_cudnn": err,
                 "compile_and_first_launch_s": compile_s,
                 "copies": "TMA" if page >= 64 else "cp.async"}  # kTmaMinPageRows
        entry["over_cudnn"] = entry["TFLOPs"] / r["sdpa_cudnn_TFLOPs"]
        r[f"attnc_page{page}"] = entry
        print(f"{name} page {page:>2} ({entry['copies']:>8}): attnc {entry['TFLOPs']:6.1f} "
              f"TFLOP/s = {entry['over_cudnn']:.3f}x cuDNN {r['sdpa_cudnn_TFLOPs']:.0f}, "
              f"err {err:.1e}, compile+first {compile_s:.1f} s", flush=True)
        assert math.isfinite(err) and err < 2e-2, f"{name} page {page}: error {err}"
        del model, kc, vc
    return r


def main():
    torch.manual_seed(0)
    res = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
           "command": " ".join(sys.argv)}
    for shape in SHAPES:
        res[shape[0]] = run_shape(*shape)
    with open(os.path.join(os.environ.get("OUT", "."), "bench_prefill.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
