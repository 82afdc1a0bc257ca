"""Issue 17's prefill shapes on the varlen (contiguous K/V) kernel: attnc's
varlen_attention (sm_90a: the warp-specialised form) against SDPA cuDNN on
the same data in the same run.

Shapes (B sequences of S tokens, query/KV heads, qk/v head dims, causal):
the four of issue 17's table, its non-causal 192/128 and 256/256 rows.
cuDNN runs [B, H, S, D] tensors, GQA by enable_gqa where it takes it, else
K/V expanded to the query heads (recorded). TFLOP/s = 2 x pairs x Hq x
(Dqk + Dv) / time, pairs the (query, key) pairs attended. Times: medians of
CUDA-graph replays (bench_varlen.graph_time). The paged op's prefill
kernel (the same template reading pages) is bench_paged_prefill.py's.

Usage (GPU machine): PYTHONPATH=python:bench ATTNC_LIBRARY=... \\
    python3 bench/bench_varlen_shapes.py [NAME ...] [bn=N,st=S ...] [rounds=N]
    # JSON to $OUT/bench_varlen_shapes.json
(NAME: substrings of the shape names to run; all by default. bn=N,st=S:
also time the warp-specialised schedule with block_n N and S pipeline
stages; bn=N,st=S,p=1 with persistent blocks; p=1 alone: attn-specialize's
schedule with persistent blocks. Variants are given in the IR, marked
attn.keep_schedule (attn-specialize keeps them; the emission checks refuse
one whose shared memory does not fit). rounds=N: cuDNN and attnc timed in
turn N times, the ratio the median of the rounds' ratios (min and max
recorded).)
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
import bench_varlen as bv  # noqa: E402  (graph_time, cu, rel_err)

import attnc  # noqa: E402

DEV = "cuda"
LAYER = "shape"
#: rounds=N on the command line: cuDNN and attnc timed in turn N times.
ROUNDS = 1

#: (name, B, S, Hq, Hkv, Dqk, Dv, causal)
SHAPES = [
    ("S8192_H16_192x128", 1, 8192, 16, 16, 192, 128, True),
    ("B4_S4096_H32x4_192x128", 4, 4096, 32, 4, 192, 128, True),
    ("B1_S8192_H32x8_128x128", 1, 8192, 32, 8, 128, 128, True),
    ("B2_S2048_H12x3_80x48", 2, 2048, 12, 3, 80, 48, True),
    ("S8192_H16_192x128_noncausal", 1, 8192, 16, 16, 192, 128, False),
    ("S8192_H16x2_256x256", 1, 8192, 16, 2, 256, 256, True),
]


def ws_schedule(hq, hkv, dqk, dv, block_n, stages, persistent=0):
    """The warp-specialised schedule attn-specialize would write, with the
    given block_n and stages (gqa_pack: its largest divisor of the group
    at most block_m)."""
    group = hq // hkv
    pack = max(d for d in range(1, min(group, 128) + 1) if group % d == 0)
    pad = lambda d: -(-d // 64) * 64  # noqa: E731
    return (f"#attn.attention_schedule<block_m = 128, block_n = {block_n}, num_warps = 12, "
            f"pipeline_stages = {stages}, qk_dim_padded = {pad(dqk)}, v_dim_padded = {pad(dv)}, "
            f"gqa_pack = {pack}, split_kv_min_keys = 256, max_kv_splits = 1, target_ctas = 264, "
            f'mma = "wgmma_ws"{", persistent = true" if persistent else ""}>')


def layer_ir(hq, hkv, dqk, dv, causal, schedule=None):
    q, k = f"tensor<?x{hq}x{dqk}xbf16>", f"tensor<?x{hkv}x{dqk}xbf16>"
    v, o = f"tensor<?x{hkv}x{dv}xbf16>", f"tensor<?x{hq}x{dv}xbf16>"
    flag = "" if causal else ", causal = false"
    if schedule:
        flag += f", attn.keep_schedule, schedule = {schedule}"
    return f"""
func.func @{LAYER}(%q: {q}, %k: {k}, %v: {v}, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> {o} {{
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {{softmax_scale = {dqk ** -0.5!r} : f64{flag}}}
      : {q}, {k}, {v}, tensor<?xi32>, tensor<?xi32> -> {o}
  return %o : {o}
}}
"""


def cudnn_runner(qt, kt, vt, causal):
    """SDPA cuDNN on [B, H, S, D]; the backend context is entered at every
    call (a closure made inside `with sdpa_kernel` would run outside it)."""
    group = qt.shape[1] // kt.shape[1]
    how = "same heads"
    kw = {}
    if group > 1:
        try:
            with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, enable_gqa=True)
            kw, how = {"enable_gqa": True}, "enable_gqa"
        except (RuntimeError, TypeError):
            kt, vt = kt.repeat_interleave(group, 1), vt.repeat_interleave(group, 1)
            how = "K/V expanded"

    def run():
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            return F.scaled_dot_product_attention(qt, kt, vt, is_causal=causal, **kw)
    return run, how


def run_shape(name, b, s, hq, hkv, dqk, dv, causal, variant=None):
    r = {}
    context = attnc.Context(cache_dir=tempfile.mkdtemp(prefix="attnc-bench-shapes-"))
    if variant and variant[0] is None:
        # p=1: attn-specialize's own schedule (read from its kernel), persistent.
        default = attnc.compile_ir(layer_ir(hq, hkv, dqk, dv, causal), context=context)
        line = next(x for x in default.kernel(LAYER, "varlen_attention").source.splitlines()
                    if x.startswith("// schedule:"))
        fields = dict(kv.split("=") for kv in line.split(":", 1)[1].split())
        variant = (int(fields["block_n"]), int(fields["pipeline_stages"]), 1)
    schedule = ws_schedule(hq, hkv, dqk, dv, *variant) if variant else None
    start = time.perf_counter()
    model = attnc.compile_ir(layer_ir(hq, hkv, dqk, dv, causal, schedule), context=context)
    r["compile_wall_s"] = time.perf_counter() - start
    kernel = model.kernel(LAYER, "varlen_attention")
    r["schedule_mma"] = bv._schedule_mma(kernel.source)
    pairs = b * (s * (s + 1) // 2 if causal else s * s)
    flops = 2 * pairs * hq * (dqk + dv)
    q = torch.randn(b * s, hq, dqk, device=DEV, dtype=torch.bfloat16)
    k = torch.randn(b * s, hkv, dqk, device=DEV, dtype=torch.bfloat16)
    v = torch.randn(b * s, hkv, dv, device=DEV, dtype=torch.bfloat16)
    as_bhsd = lambda x: x.view(b, s, x.shape[1], x.shape[2]).transpose(1, 2).contiguous()  # noqa: E731
    fn, r["cudnn_gqa"] = cudnn_runner(as_bhsd(q), as_bhsd(k), as_bhsd(v), causal)
    ref = fn().transpose(1, 2).reshape(b * s, hq, dv)
    r["sdpa_cudnn_TFLOPs"] = flops / bv.graph_time(fn) / 1e9
    out = torch.full((b * s, hq, dv), float("nan"), device=DEV, dtype=torch.bfloat16)
    cu_s = bv.cu([s] * b)

    def run():
        model.varlen_attention(LAYER, q, k, v, cu_seqlens_q=cu_s, cu_seqlens_k=cu_s, out=out)
    run()
    torch.cuda.synchronize()
    r["attnc_rel_err_vs_cudnn"] = bv.rel_err(out, ref)
    assert torch.isfinite(out).all() and r["attnc_rel_err_vs_cudnn"] < 2e-2, (name, r)
    if ROUNDS > 1:
        # cuDNN and attnc in turn: the median of the per-round ratios.
        t_cudnn, t_attnc = bv.interleaved_times([fn, run], ROUNDS)
        r["rounds"] = ROUNDS
        r["attnc_over_cudnn"], r["ratio_min_max"] = bv.round_ratios(t_cudnn, t_attnc)
        r["sdpa_cudnn_TFLOPs"] = flops / statistics.median(t_cudnn) / 1e9
        r["attnc_TFLOPs"] = flops / statistics.median(t_attnc) / 1e9
        return r
    r["attnc_TFLOPs"] = flops / bv.graph_time(run) / 1e9
    r["attnc_over_cudnn"] = r["attnc_TFLOPs"] / r["sdpa_cudnn_TFLOPs"]
    return r


def main():
    torch.manual_seed(0)
    res = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
           "command": " ".join(sys.argv), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version()}
    # Optional arguments: substrings of the shape names to run (all by
    # default) and schedule variants bn=N,st=S.
    global ROUNDS
    variants = [tuple(int(kv.split("=")[1]) for kv in a.split(","))
                for a in sys.argv[1:] if a.startswith("bn=")]
    variants += [(None, None, 1) for a in sys.argv[1:] if a == "p=1"]
    ROUNDS = bv.rounds_arg(sys.argv[1:])
    wanted = [a for a in sys.argv[1:] if not a.startswith(("bn=", "rounds=", "p="))]
    res["rounds"] = ROUNDS
    runs = [(shape, None) for shape in SHAPES] + [(shape, v) for shape in SHAPES for v in variants]
    for shape, variant in runs:
        if wanted and not any(w in shape[0] for w in wanted):
            continue
        key = shape[0] + ("" if not variant else "@persistent" if variant[0] is None else
                          "@bn{}st{}".format(*variant) + ("p" if variant[2:] and variant[2] else ""))
        try:
            res[key] = r = run_shape(*shape, variant=variant)
        except Exception as error:  # noqa: BLE001 - recorded, next shape
            res[key] = {"error": str(error).splitlines()[0][:300]}
            print(f"{key:40s} FAILED: {res[key]['error']}", flush=True)
            continue
        print(f"{key:40s} attnc {r['attnc_TFLOPs']:6.1f} TFLOP/s ({r['schedule_mma']}) "
              f"cuDNN {r['sdpa_cudnn_TFLOPs']:6.1f} ({r['cudnn_gqa']}) = "
              f"{r['attnc_over_cudnn']:.3f}x"
              + (" [{:.3f}-{:.3f}]".format(*r["ratio_min_max"]) if "ratio_min_max" in r else "")
              + f", err {r['attnc_rel_err_vs_cudnn']:.1e}, "
              f"compile {r['compile_wall_s']:.2f} s", flush=True)
    with open(os.path.join(os.environ.get("OUT", "."), "bench_varlen_shapes.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
