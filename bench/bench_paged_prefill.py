"""Issue 17's prefill shapes on the PAGED attention op (attn.paged_attention,
K/V in a paged cache through block tables): the warp-specialised prefill
kernel (kind prefill_attention, sm_90a), the layer's decode-capable kernel
(kind attention: the wgmma form) and SDPA on the same data in the same run.

Shapes (B sequences of S new tokens over P cached ones, query/KV heads,
qk/v head dims, causal, page size): the four of issue 17's table, its
non-causal 192/128 and 256/256 rows at pages of 64, 192/128 at pages of 16,
and the chunked prefill of 1024 new tokens over 7168 cached (192/128,
32/4). SDPA runs [B, H, S, D] tensors of the same keys: cuDNN (GQA by
enable_gqa where it takes it, else K/V expanded, recorded); the chunked
shape's causal mask is lower-right aligned (torch's causal_lower_right),
which SDPA runs on the first backend of cuDNN, flash, efficient that takes
it (recorded). TFLOP/s = 2 x pairs x Hq x (Dqk + Dv) / time, pairs the
(query, key) pairs attended. Times: medians of CUDA-graph replays
(bench_varlen.graph_time). Each attnc output is checked against SDPA's
(relative error < 2e-2, finite; NaN-poisoned before the first launch).

Usage (GPU machine): PYTHONPATH=python:bench ATTNC_LIBRARY=... \\
    python3 bench/bench_paged_prefill.py [shape-name-substring ...] [rounds=N]
    # JSON to $OUT/bench_paged_prefill.json
"""
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_varlen as bv  # noqa: E402  (graph_time, rel_err)

import attnc  # noqa: E402

DEV = "cuda"
LAYER = "shape"
#: rounds=N on the command line: SDPA and the two kernels timed in turn N times.
ROUNDS = 1

#: (name, B, S new tokens, P cached tokens, Hq, Hkv, Dqk, Dv, causal, page)
SHAPES = [
    ("S8192_H16_192x128", 1, 8192, 0, 16, 16, 192, 128, True, 64),
    ("B4_S4096_H32x4_192x128", 4, 4096, 0, 32, 4, 192, 128, True, 64),
    ("B1_S8192_H32x8_128x128", 1, 8192, 0, 32, 8, 128, 128, True, 64),
    ("B2_S2048_H12x3_80x48", 2, 2048, 0, 12, 3, 80, 48, True, 64),
    ("S8192_H16_192x128_noncausal", 1, 8192, 0, 16, 16, 192, 128, False, 64),
    ("S8192_H16x2_256x256", 1, 8192, 0, 16, 2, 256, 256, True, 64),
    ("S8192_H16_192x128_page16", 1, 8192, 0, 16, 16, 192, 128, True, 16),
    ("chunk1024_over7168_H32x4_192x128", 1, 1024, 7168, 32, 4, 192, 128, True, 64),
]


def layer_ir(hq, hkv, dqk, dv, causal, page):
    q, o = f"tensor<?x{hq}x{dqk}xbf16>", f"tensor<?x{hq}x{dv}xbf16>"
    kc, vc = f"tensor<?x{page}x{hkv}x{dqk}xbf16>", f"tensor<?x{page}x{hkv}x{dv}xbf16>"
    flag = "" if causal else ", causal = false"
    return f"""
func.func @{LAYER}(%q: {q}, %kc: {kc}, %vc: {vc}, %bt: tensor<?x?xi32>, %sl: tensor<?xi32>, %qs: tensor<?xi32>) -> {o} {{
  %o = attn.paged_attention %q, %kc, %vc, %bt, %sl, %qs {{softmax_scale = {dqk ** -0.5!r} : f64{flag}}}
      : {q}, {kc}, {vc}, tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32> -> {o}
  return %o : {o}
}}
"""


def sdpa_runner(qt, kt, vt, causal, chunked):
    """SDPA on [B, H, S, D]: cuDNN where it runs the mask, else flash, then
    efficient; the backend context is entered at every call."""
    group = qt.shape[1] // kt.shape[1]
    mask = {}
    if causal and chunked:
        from torch.nn.attention.bias import causal_lower_right
        mask = {"attn_mask": causal_lower_right(qt.shape[2], kt.shape[2])}
    elif causal:
        mask = {"is_causal": True}
    for backend in (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,
                    SDPBackend.EFFICIENT_ATTENTION):
        for gqa in ((True, False) if group > 1 else (False,)):
            k, v = (kt, vt) if gqa or group == 1 else (kt.repeat_interleave(group, 1),
                                                       vt.repeat_interleave(group, 1))
            kw = dict(mask, **({"enable_gqa": True} if gqa else {}))
            try:
                with sdpa_kernel([backend]):
                    F.scaled_dot_product_attention(qt, k, v, **kw)
            except Exception:  # noqa: BLE001 - this backend does not run it
                continue

            def run(k=k, v=v, kw=kw, backend=backend):
                with sdpa_kernel([backend]):
                    return F.scaled_dot_product_attention(qt, k, v, **kw)
            how = ("enable_gqa" if gqa else "K/V expanded") if group > 1 else "same heads"
            return run, f"{backend.name} ({how})"
    raise RuntimeError("no SDPA backend runs this shape")


def paged(rows, page, b, total):
    """[B * total, H, D] row tensors -> paged caches [B * total / page + 1,
    page, H, D] (blocks shuffled; the last, spare one NaN) and the block
    tables."""
    blocks = b * total // page
    order = torch.randperm(blocks, device=DEV)
    caches = []
    for x in rows:
        cache = torch.full((blocks + 1, page, x.shape[1], x.shape[2]), float("nan"),
                           device=DEV, dtype=x.dtype)
        cache[order] = x.view(blocks, page, x.shape[1], x.shape[2])
        caches.append(cache)
    return caches, order.view(b, total // page).to(torch.int32)


def run_shape(name, b, s, p, hq, hkv, dqk, dv, causal, page):
    r = {"page": page}
    total = s + p
    context = attnc.Context(cache_dir=tempfile.mkdtemp(prefix="attnc-bench-paged-"))
    start = time.perf_counter()
    model = attnc.compile_ir(layer_ir(hq, hkv, dqk, dv, causal, page), context=context)
    r["compile_wall_s"] = time.perf_counter() - start
    if not model.has_prefill_attention(LAYER):
        raise RuntimeError("the layer has no prefill_attention kernel")
    r["attention_kind_chosen"] = model.attention_kind(LAYER, b * s, b)
    pairs = b * (s * (s + 1) // 2 + s * p if causal else s * total)
    flops = 2 * pairs * hq * (dqk + dv)
    q = torch.randn(b * s, hq, dqk, device=DEV, dtype=torch.bfloat16)
    k = torch.randn(b * total, hkv, dqk, device=DEV, dtype=torch.bfloat16)
    v = torch.randn(b * total, hkv, dv, device=DEV, dtype=torch.bfloat16)
    (k_cache, v_cache), tables = paged((k, v), page, b, total)
    seq_lens = torch.full((b,), total, device=DEV, dtype=torch.int32)
    starts = torch.arange(0, b * s + 1, s, device=DEV, dtype=torch.int32)
    bhsd = lambda x, n: x.view(b, n, x.shape[1], x.shape[2]).transpose(1, 2).contiguous()  # noqa: E731
    fn, r["sdpa_backend"] = sdpa_runner(bhsd(q, s), bhsd(k, total), bhsd(v, total), causal, p > 0)
    ref = fn().transpose(1, 2).reshape(b * s, hq, dv)
    r["sdpa_TFLOPs"] = flops / bv.graph_time(fn) / 1e9
    workspace = torch.zeros(model.attention_workspace_size(LAYER) or 1, device=DEV,
                            dtype=torch.float32)
    runs = {}
    for kind in ("prefill_attention", "attention"):
        out = torch.full((b * s, hq, dv), float("nan"), device=DEV, dtype=torch.bfloat16)

        def run(kind=kind, out=out):
            model.attention(LAYER, q, k_cache=k_cache, v_cache=v_cache, block_tables=tables,
                            seq_lens=seq_lens, query_start_loc=starts, out=out,
                            workspace=workspace, kind=kind)
        run()
        torch.cuda.synchronize()
        err = bv.rel_err(out, ref)
        r[f"{kind}_rel_err"] = err
        assert bool(torch.isfinite(out).all()) and err < 2e-2, (name, kind, r)
        runs[kind] = run
    if ROUNDS > 1:
        # SDPA and both kernels in turn: medians of the per-round ratios.
        t_sdpa, *t_kinds = bv.interleaved_times([fn, *runs.values()], ROUNDS)
        r["rounds"] = ROUNDS
        r["sdpa_TFLOPs"] = flops / statistics.median(t_sdpa) / 1e9
        for kind, times in zip(runs, t_kinds):
            r[f"{kind}_TFLOPs"] = flops / statistics.median(times) / 1e9
            r[f"{kind}_over_sdpa"], r[f"{kind}_ratio_min_max"] = bv.round_ratios(t_sdpa, times)
        return r
    for kind, run in runs.items():
        r[f"{kind}_TFLOPs"] = flops / bv.graph_time(run) / 1e9
        r[f"{kind}_over_sdpa"] = r[f"{kind}_TFLOPs"] / r["sdpa_TFLOPs"]
    return r


def main():
    global ROUNDS
    torch.manual_seed(0)
    ROUNDS = bv.rounds_arg(sys.argv[1:])
    picks = [a for a in sys.argv[1:] if not a.startswith("rounds=")]
    res = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
           "command": " ".join(sys.argv), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version()}
    for shape in SHAPES:
        if picks and not any(pick in shape[0] for pick in picks):
            continue
        try:
            res[shape[0]] = r = run_shape(*shape)
        except Exception as error:  # noqa: BLE001 - recorded, next shape
            res[shape[0]] = {"error": str(error).splitlines()[0][:300]}
            print(f"{shape[0]:34s} FAILED: {res[shape[0]]['error']}", flush=True)
            continue
        print(f"{shape[0]:34s} prefill {r['prefill_attention_TFLOPs']:6.1f} "
              f"({r['prefill_attention_over_sdpa']:.3f}x) attention "
              f"{r['attention_TFLOPs']:6.1f} ({r['attention_over_sdpa']:.3f}x) "
              f"SDPA {r['sdpa_TFLOPs']:6.1f} [{r['sdpa_backend']}] TFLOP/s; rule: "
              f"{r['attention_kind_chosen']}; err {r['prefill_attention_rel_err']:.1e}; "
              f"compile {r['compile_wall_s']:.2f} s", flush=True)
    with open(os.path.join(os.environ.get("OUT", "."), "bench_paged_prefill.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
