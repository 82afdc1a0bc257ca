"""Paged attention benchmark, qk_head_dim 192 / v_head_dim 128: attnc against
PyTorch SDPA (cuDNN backend, contiguous KV), FlexAttention, the copy-bandwidth
floor (decode) and the bf16 matmul rate (prefill), side by side in one run.

- decode: batch 64 (and 8), context 8192, Hq 16, Hkv 2, one query row per
  sequence, bf16 paged cache (64-token pages, shuffled block tables).
  Effective bandwidth = KV bytes / time, against the measured copy bandwidth.
  Where the package can say (Model.attention_splits), the split-KV count
  its automatic rule launched with is recorded as attnc_kv_splits.
- prefill: one causal sequence of 8192 tokens, 16 heads (Hkv 16), through the
  same varlen paged kernel. TFLOP/s = 2 * S^2/2 * H * (Dqk + Dv) / time.

- decode cache layouts (--layout): the same K/V bytes in engine layouts
  that attnc takes as strided views, timed side by side with the contiguous
  caches: vllm (one [pages, 2, 64, Hkv, 192] tensor, K = t[:, 0], V =
  t[:, 1, ..., :128]), packed (K|V per token, [pages, 64, Hkv, 320]) and
  hnd (FlashInfer's [pages, Hkv, 64, D] pages as .transpose(1, 2) views).
  Each layout's output is checked bit for bit against the contiguous one.

Times are medians of CUDA-graph replays (the kernels alone) for attnc and
SDPA cuDNN; decode also records one launch from Python ("launch" keys).
FlexAttention is timed as compiled calls.

Usage (GPU machine): PYTHONPATH=python ATTNC_LIBRARY=build/lib/libattnc.so \
    python3 bench/bench_attention.py     # JSON to $OUT/bench_attention.json
  --layout all (or some of contiguous vllm packed hnd): the decode layouts;
  --decode-only: decode alone (no prefill, matmul or FlexAttention).
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.flex_attention import create_block_mask, flex_attention
from triton.testing import do_bench

import attnc

DEV = "cuda"
DQK, DV, PAGE = 192, 128, 64


def bench(fn, rep=100):
    return do_bench(fn, warmup=10, rep=rep, return_mode="median")  # ms


def graph_time(fn, rep=100):
    """Median time of one call captured in a CUDA graph: the kernel(s)
    without the Python launch path."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()  # warm: module load and allocations outside the capture
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return bench(graph.replay, rep)


def attnc_runner(model, query, kc, vc, tables, lens, starts, out):
    """One attnc attention launch of the benchmark's layer as a closure, with
    its split-KV workspace (if any) made now, outside any graph capture."""
    extra = {}
    workspace = workspace_for(model, "full_attention")
    if workspace is not None:
        extra["workspace"] = workspace

    def run():
        model.attention("full_attention", query, k_cache=kc, v_cache=vc,
                        block_tables=tables, seq_lens=lens,
                        query_start_loc=starts, out=out, **extra)
    return run


def workspace_for(model, layer):
    """A zero-filled split-KV workspace made outside any capture (None for
    kernels without split-KV)."""
    size = getattr(model, "attention_workspace_size", None)
    if size is None:
        return None
    n = size(layer)
    return torch.zeros(n, device=DEV, dtype=torch.float32) if n else None


def model_for(hq, hkv):
    return attnc.compile({"model_type": "llama", "num_attention_heads": hq,
                          "num_key_value_heads": hkv, "head_dim": DQK,
                          "v_head_dim": DV, "num_hidden_layers": 1,
                          "torch_dtype": "bfloat16"}, block_size=PAGE)


def paged(k, v, batch, length, hkv):
    """k/v [B, Hkv, L, D] → paged caches with a shuffled block table."""
    pages_per_seq = length // PAGE
    num_pages = batch * pages_per_seq
    order = torch.randperm(num_pages, device=DEV)
    tables = order.view(batch, pages_per_seq).to(torch.int32)
    kc = torch.empty(num_pages, PAGE, hkv, DQK, device=DEV, dtype=torch.bfloat16)
    vc = torch.empty(num_pages, PAGE, hkv, DV, device=DEV, dtype=torch.bfloat16)
    kc[order.view(batch, pages_per_seq)] = k.permute(0, 2, 1, 3).reshape(
        batch, pages_per_seq, PAGE, hkv, DQK)
    vc[order.view(batch, pages_per_seq)] = v.permute(0, 2, 1, 3).reshape(
        batch, pages_per_seq, PAGE, hkv, DV)
    return kc, vc, tables


LAYOUTS = ("contiguous", "vllm", "packed", "hnd")


def layout_views(layout, kc, vc):
    """The contiguous caches kc [pages, PAGE, Hkv, DQK] and vc [..., DV]
    copied into `layout`'s allocation; returns the K and V views attnc is
    given."""
    if layout == "contiguous":
        return kc, vc
    pages, page, hkv = kc.shape[:3]
    if layout == "vllm":  # one allocation, both halves DQK wide
        t = torch.empty(pages, 2, page, hkv, max(DQK, DV), device=DEV, dtype=kc.dtype)
        k, v = t[:, 0, ..., :DQK], t[:, 1, ..., :DV]
    elif layout == "packed":  # K|V per token
        t = torch.empty(pages, page, hkv, DQK + DV, device=DEV, dtype=kc.dtype)
        k, v = t[..., :DQK], t[..., DQK:]
    elif layout == "hnd":  # [pages, Hkv, PAGE, D] pages
        k = torch.empty(pages, hkv, page, DQK, device=DEV, dtype=kc.dtype).transpose(1, 2)
        v = torch.empty(pages, hkv, page, DV, device=DEV, dtype=vc.dtype).transpose(1, 2)
    else:
        raise ValueError(layout)
    k.copy_(kc)
    v.copy_(vc)
    return k, v


def decode(batch, hq=16, hkv=2, length=8192, layouts=("contiguous",), baselines=True):
    q = torch.randn(batch, hq, 1, DQK, device=DEV, dtype=torch.bfloat16)
    k = torch.randn(batch, hkv, length, DQK, device=DEV, dtype=torch.bfloat16)
    v = torch.randn(batch, hkv, length, DV, device=DEV, dtype=torch.bfloat16)
    kv_bytes = batch * hkv * length * (DQK + DV) * 2
    r = {}
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        cudnn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)  # noqa: E731
        r["sdpa_cudnn_launch_TBps"] = kv_bytes / bench(cudnn) / 1e9
        r["sdpa_cudnn_TBps"] = kv_bytes / graph_time(cudnn) / 1e9
    if baselines:
        fa = torch.compile(flex_attention)
        fa(q, k, v, enable_gqa=True)
        r["flex_TBps"] = kv_bytes / bench(lambda: fa(q, k, v, enable_gqa=True)) / 1e9
        torch._dynamo.reset()
    kc, vc, tables = paged(k, v, batch, length, hkv)
    model = model_for(hq, hkv)
    query = q[:, :, 0].contiguous()  # [B, Hq, Dqk]: one row per sequence
    lens = torch.full((batch,), length, device=DEV, dtype=torch.int32)
    starts = torch.arange(batch + 1, device=DEV, dtype=torch.int32)
    out = torch.empty(batch, hq, DV, device=DEV, dtype=torch.bfloat16)
    run = attnc_runner(model, query, kc, vc, tables, lens, starts, out)
    run()
    ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float(),
                                         enable_gqa=True)[:, :, 0]
    r["attnc_rel_err"] = ((out.float() - ref).norm() / ref.norm()).item()
    r["attnc_launch_TBps"] = kv_bytes / bench(run) / 1e9
    r["attnc_TBps"] = kv_bytes / graph_time(run) / 1e9
    splits = kv_splits(model, "full_attention", batch, batch)
    if splits is not None:
        r["attnc_kv_splits"] = splits
    # The same bytes in each engine layout, side by side with contiguous.
    for layout in layouts:
        if layout == "contiguous":
            entry = {"TBps": r["attnc_TBps"], "launch_TBps": r["attnc_launch_TBps"]}
        else:
            lk, lv = layout_views(layout, kc, vc)
            lout = torch.full_like(out, float("nan"))
            lrun = attnc_runner(model, query, lk, lv, tables, lens, starts, lout)
            lrun()
            torch.cuda.synchronize()
            entry = {"bit_identical": bool(torch.equal(lout.view(torch.int16),
                                                       out.view(torch.int16))),
                     "strides": {"k": list(lk.stride()), "v": list(lv.stride())},
                     "launch_TBps": kv_bytes / bench(lrun) / 1e9,
                     "TBps": kv_bytes / graph_time(lrun) / 1e9}
            del lk, lv
        entry["over_contiguous"] = entry["TBps"] / r["attnc_TBps"]
        r.setdefault("layouts", {})[layout] = entry
    # A second contiguous measurement after the layouts: the run-to-run noise
    # the ratios above sit in.
    if len(layouts) > 1:
        r["attnc_TBps_again"] = kv_bytes / graph_time(run) / 1e9
    return r


def kv_splits(model, layer, num_tokens, num_seqs):
    """The split count attnc's automatic rule picks for the batch, where the
    package has the helper; None where it has not; the error text if it
    fails."""
    if not hasattr(model, "attention_splits"):
        return None
    try:
        return model.attention_splits(layer, num_tokens, num_seqs)
    except Exception as error:  # noqa: BLE001 - recorded, not fatal
        return f"error: {error}"


def prefill(seq=8192, heads=16):
    q = torch.randn(1, heads, seq, DQK, device=DEV, dtype=torch.bfloat16)
    k = torch.randn(1, heads, seq, DQK, device=DEV, dtype=torch.bfloat16)
    v = torch.randn(1, heads, seq, DV, device=DEV, dtype=torch.bfloat16)
    flops = 2 * seq * seq * heads * (DQK + DV) / 2
    r = {}
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        r["sdpa_cudnn_TFLOPs"] = flops / graph_time(
            lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)) / 1e9
    mask = create_block_mask(lambda b, h, i, j: i >= j, 1, heads, seq, seq, device=DEV)
    fa = torch.compile(flex_attention)
    fa(q, k, v, block_mask=mask)
    r["flex_TFLOPs"] = flops / bench(lambda: fa(q, k, v, block_mask=mask)) / 1e9
    torch._dynamo.reset()
    kc, vc, tables = paged(k, v, 1, seq, heads)
    model = model_for(heads, heads)
    query = q[0].transpose(0, 1).contiguous()  # [S, H, Dqk]
    lens = torch.tensor([seq], device=DEV, dtype=torch.int32)
    starts = torch.tensor([0, seq], device=DEV, dtype=torch.int32)
    out = torch.empty(seq, heads, DV, device=DEV, dtype=torch.bfloat16)
    run = attnc_runner(model, query, kc, vc, tables, lens, starts, out)
    run()
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        ref = F.scaled_dot_product_attention(q, k, v, is_causal=True)[0].transpose(0, 1)
    r["attnc_rel_err_vs_cudnn"] = ((out.float() - ref.float()).norm() / ref.float().norm()).item()
    r["attnc_TFLOPs"] = flops / graph_time(run, rep=20) / 1e9
    return r


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layout", nargs="+", default=["contiguous"],
                        choices=list(LAYOUTS) + ["all"],
                        help="decode cache layouts to time beside contiguous")
    parser.add_argument("--decode-only", action="store_true",
                        help="decode alone: no prefill, matmul or FlexAttention")
    args = parser.parse_args()
    layouts = list(LAYOUTS) if "all" in args.layout else args.layout
    args.layouts = ["contiguous"] + [l for l in layouts if l != "contiguous"]
    return args


def main():
    args = parse_args()
    torch.manual_seed(0)
    res = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
           "command": " ".join(sys.argv)}
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device=DEV).random_(0, 255)
    b = torch.empty_like(a)
    res["copy_TBps"] = 2 * n / bench(lambda: b.copy_(a)) / 1e9
    del a, b
    if not args.decode_only:
        m = 8192
        x = torch.randn(m, m, device=DEV, dtype=torch.bfloat16)
        y = torch.randn(m, m, device=DEV, dtype=torch.bfloat16)
        res["bf16_mm_TFLOPs"] = 2 * m ** 3 / bench(lambda: x @ y) / 1e9
        del x, y
    for batch in (64, 8):
        res[f"decode_B{batch}"] = r = decode(batch, layouts=args.layouts,
                                             baselines=not args.decode_only)
        r["attnc_over_copy"] = r["attnc_TBps"] / res["copy_TBps"]
        r["attnc_over_cudnn"] = r["attnc_TBps"] / r["sdpa_cudnn_TBps"]
        print(f"decode B{batch}", json.dumps(r), flush=True)
    if not args.decode_only:
        res["prefill_S8192_H16_causal"] = r = prefill()
        r["attnc_over_cudnn"] = r["attnc_TFLOPs"] / r["sdpa_cudnn_TFLOPs"]
        r["attnc_over_matmul"] = r["attnc_TFLOPs"] / res["bf16_mm_TFLOPs"]
        print("prefill", json.dumps(r), flush=True)
    with open(os.path.join(os.environ.get("OUT", "."), "bench_attention.json"), "w") as f:
        json.dump(res, f, indent=1)
    mm = f", bf16 mm {res['bf16_mm_TFLOPs']:.0f} TFLOP/s" if "bf16_mm_TFLOPs" in res else ""
    print(f"\n{res['gpu']}, copy {res['copy_TBps']:.2f} TB/s{mm}, {res['date']}")
    for batch in (64, 8):
        r = res[f"decode_B{batch}"]
        splits = f", {r['attnc_kv_splits']} KV splits" if "attnc_kv_splits" in r else ""
        flex = f", Flex {r['flex_TBps']:.2f}" if "flex_TBps" in r else ""
        print(f"decode B{batch:<3} attnc {r['attnc_TBps']:.2f} TB/s "
              f"({r['attnc_over_copy']:.0%} of copy, {r['attnc_over_cudnn']:.2f}x cuDNN "
              f"{r['sdpa_cudnn_TBps']:.2f}{flex}) err {r['attnc_rel_err']:.1e}{splits}")
        for layout, entry in r.get("layouts", {}).items():
            same = "" if layout == "contiguous" else (
                ", bit-identical" if entry["bit_identical"] else ", OUTPUT DIFFERS")
            print(f"  layout {layout:<10} {entry['TBps']:.2f} TB/s "
                  f"({entry['over_contiguous']:.3f}x contiguous{same})")
        if "attnc_TBps_again" in r:
            print(f"  contiguous again {r['attnc_TBps_again']:.2f} TB/s (noise)")
    if args.decode_only:
        return
    r = res["prefill_S8192_H16_causal"]
    print(f"prefill S8192 causal: attnc {r['attnc_TFLOPs']:.1f} TFLOP/s, cuDNN "
          f"{r['sdpa_cudnn_TFLOPs']:.0f}, Flex {r['flex_TFLOPs']:.0f} "
          f"({r['attnc_over_cudnn']:.3f}x cuDNN) err {r['attnc_rel_err_vs_cudnn']:.1e}")


if __name__ == "__main__":
    main()
