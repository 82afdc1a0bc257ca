"""Varlen (non-paged) attention benchmark: MLA's decompressed prefill,
qk_head_dim 192 / v_head_dim 128, H 128 heads (DeepSeek-V3 at TP 1), attnc's
varlen_attention against PyTorch SDPA (cuDNN backend) in the same run.

- prefill: one causal sequence of S 8192 tokens over its own contiguous K/V
  (cu_seqlens [0, S]); SDPA cuDNN on [1, H, S, D] (Dqk 192, Dv 128) with
  is_causal. Also attnc with an engine's views (k = [k_nope | k_pe] rows
  assembled per head, v the second half of kv_b_proj's [S, H, 128 + 128]
  output: a strided view, no copy), and the same 8192 tokens as 16
  sequences of 512 (attnc only).
- chunked: 1024 new rows after 7168 cached keys (Tq 1024, Tk 8192), causal
  aligned bottom-right. The baseline is SDPA with
  torch.nn.attention.bias.causal_lower_right, on cuDNN if it takes it, else
  on the memory-efficient backend, else an explicit boolean mask on cuDNN;
  the backend that ran is recorded (and every refusal, with its message).

TFLOP/s = 2 * pairs * H * (Dqk + Dv) / time, pairs the exact number of
(query, key) pairs attended: S (S + 1) / 2 for the causal prefill, sum over
rows of the keys each sees for the chunk. Times are medians of CUDA-graph
replays (the kernels alone). The output is checked against the baseline's
(relative L2 error recorded). The NVRTC compile time of the kernel (this
process, cold cache) is recorded too.

Usage (GPU machine): PYTHONPATH=python ATTNC_LIBRARY=build/lib/libattnc.so \
    python3 bench/bench_varlen.py      # JSON to $OUT/bench_varlen.json
  --heads H (default 128), --seq S (default 8192), --chunk NEW CACHED
  (default 1024 7168).
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from triton.testing import do_bench

import attnc

DEV = "cuda"
DQK, DV = 192, 128
LAYER = "mla_prefill"


def bench(fn, rep=100):
    return do_bench(fn, warmup=10, rep=rep, return_mode="median")  # ms


def capture(fn):
    """One call of fn captured in a CUDA graph (after a warm call: module
    load and allocations outside the capture); returns the graph's replay."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return graph.replay


def graph_time(fn, rep=50):
    """Median time of one call captured in a CUDA graph: the kernel(s)
    without the Python launch path."""
    return bench(capture(fn), rep)


def rounds_arg(argv):
    """rounds=N among the command-line arguments (1 without it)."""
    return max([int(a.split("=")[1]) for a in argv if a.startswith("rounds=")] or [1])


def round_ratios(base_times, times):
    """The per-round ratios base / time: their median and [min, max]."""
    ratios = sorted(b / t for b, t in zip(base_times, times))
    return statistics.median(ratios), [ratios[0], ratios[-1]]


def interleaved_times(fns, rounds, rep=25):
    """Graph-replay medians of each of fns, timed in turn `rounds` times
    (a list of per-round times per fn): clock and power drift between the
    rounds then hits every fn alike, and per-round ratios cancel it."""
    replays = [capture(fn) for fn in fns]
    times = [[] for _ in fns]
    for _ in range(rounds):
        for i, replay in enumerate(replays):
            times[i].append(bench(replay, rep))
    return times


def ir(heads):
    q = f"tensor<?x{heads}x{DQK}xbf16>"
    v = f"tensor<?x{heads}x{DV}xbf16>"
    return f"""
func.func @{LAYER}(%q: {q}, %k: {q}, %v: {v}, %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>) -> {v} {{
  %o = attn.varlen_attention %q, %k, %v, %cu_q, %cu_k {{softmax_scale = {DQK ** -0.5!r} : f64}}
      : {q}, {q}, {v}, tensor<?xi32>, tensor<?xi32> -> {v}
  return %o : {v}
}}
"""


def compile_model(heads):
    """The varlen kernel, compiled cold (a fresh cache) so that the NVRTC
    time is measured."""
    context = attnc.Context(cache_dir=tempfile.mkdtemp(prefix="attnc-bench-varlen-"))
    start = time.perf_counter()
    model = attnc.compile_ir(ir(heads), context=context)
    wall = time.perf_counter() - start
    kernel = model.kernel(LAYER, "varlen_attention")
    reports = kernel.build_reports()
    return model, {"compile_wall_s": wall,
                   "nvrtc_compile_ms": [r.get("compile_ms") for r in reports],
                   "schedule_mma": _schedule_mma(kernel.source)}


def _schedule_mma(source):
    """The schedule's mma, from the kernel source's schedule line."""
    for line in source.splitlines():
        if line.startswith("// schedule:"):
            for field in line.split():
                if field.startswith("mma="):
                    return field[len("mma="):]
    return "mma.sync"  # the default, omitted when printed


def cu(lengths):
    out = [0]
    for n in lengths:
        out.append(out[-1] + n)
    return torch.tensor(out, device=DEV, dtype=torch.int32)


def attnc_runner(model, q, k, v, cu_q, cu_k, out):
    """One launch as a closure, with its own split-KV workspace made now,
    outside any capture."""
    extra = {}
    n = None
    for p in model.kernel(LAYER, "varlen_attention").abi["params"]:
        if p["name"] == "workspace":
            n = p["shape"][0]
    if n:
        extra["workspace"] = torch.zeros(n, device=DEV, dtype=torch.float32)

    def run():
        model.varlen_attention(LAYER, q, k, v, cu_seqlens_q=cu_q, cu_seqlens_k=cu_k,
                               out=out, **extra)
    return run


def rel_err(out, ref):
    return ((out.float() - ref.float()).norm() / ref.float().norm()).item()


def prefill(model, seq, heads):
    r = {}
    pairs = seq * (seq + 1) // 2
    flops = 2 * pairs * heads * (DQK + DV)
    q = torch.randn(seq, heads, DQK, device=DEV, dtype=torch.bfloat16)
    k = torch.randn(seq, heads, DQK, device=DEV, dtype=torch.bfloat16)
    v = torch.randn(seq, heads, DV, device=DEV, dtype=torch.bfloat16)
    qt, kt, vt = (x.transpose(0, 1).unsqueeze(0) for x in (q, k, v))  # [1, H, S, D] views
    qt, kt, vt = qt.contiguous(), kt.contiguous(), vt.contiguous()
    with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
        cudnn = lambda: F.scaled_dot_product_attention(qt, kt, vt, is_causal=True)  # noqa: E731
        ref = cudnn()[0].transpose(0, 1)
        r["sdpa_cudnn_TFLOPs"] = flops / graph_time(cudnn) / 1e9
    out = torch.full((seq, heads, DV), float("nan"), device=DEV, dtype=torch.bfloat16)
    cu_s = cu([seq])
    run = attnc_runner(model, q, k, v, cu_s, cu_s, out)
    run()
    torch.cuda.synchronize()
    r["attnc_rel_err_vs_cudnn"] = rel_err(out, ref)
    r["attnc_TFLOPs"] = flops / graph_time(run) / 1e9
    r["attnc_over_cudnn"] = r["attnc_TFLOPs"] / r["sdpa_cudnn_TFLOPs"]

    # An engine's views: k assembled per head, v a view of kv_b_proj's output.
    kv = torch.randn(seq, heads, DV + DV, device=DEV, dtype=torch.bfloat16)
    kv[..., DV:] = v
    v_view = kv[..., DV:]
    out_v = torch.full_like(out, float("nan"))
    run_v = attnc_runner(model, q, k, v_view, cu_s, cu_s, out_v)
    run_v()
    torch.cuda.synchronize()
    r["attnc_views_bit_identical"] = bool(torch.equal(out_v, out))
    r["attnc_views_TFLOPs"] = flops / graph_time(run_v) / 1e9

    # The same tokens as 16 sequences of S / 16 (attnc only).
    n = seq // 16
    lens = [n] * 16
    pairs16 = 16 * n * (n + 1) // 2
    out16 = torch.empty_like(out)
    run16 = attnc_runner(model, q[:16 * n], k[:16 * n], v[:16 * n], cu(lens), cu(lens),
                         out16[:16 * n])
    r["varlen_16x%d_attnc_TFLOPs" % n] = 2 * pairs16 * heads * (DQK + DV) / graph_time(run16) / 1e9
    return r


def chunked(model, new, cached, heads):
    r = {"new": new, "cached": cached}
    total = new + cached
    pairs = sum(cached + i + 1 for i in range(new))
    flops = 2 * pairs * heads * (DQK + DV)
    q = torch.randn(new, heads, DQK, device=DEV, dtype=torch.bfloat16)
    k = torch.randn(total, heads, DQK, device=DEV, dtype=torch.bfloat16)
    v = torch.randn(total, heads, DV, device=DEV, dtype=torch.bfloat16)
    qt = q.transpose(0, 1).unsqueeze(0).contiguous()
    kt = k.transpose(0, 1).unsqueeze(0).contiguous()
    vt = v.transpose(0, 1).unsqueeze(0).contiguous()
    ref = None
    errors = {}
    from torch.nn.attention.bias import causal_lower_right
    bias = causal_lower_right(new, total)
    mask = (torch.arange(total, device=DEV)[None, :]
            <= cached + torch.arange(new, device=DEV)[:, None])
    attempts = [
        ("cudnn_causal_lower_right", SDPBackend.CUDNN_ATTENTION, bias),
        ("efficient_causal_lower_right", SDPBackend.EFFICIENT_ATTENTION, bias),
        ("cudnn_bool_mask", SDPBackend.CUDNN_ATTENTION, mask),
    ]
    for name, backend, attn_mask in attempts:
        try:
            with sdpa_kernel([backend]):
                fn = lambda: F.scaled_dot_product_attention(qt, kt, vt, attn_mask=attn_mask)  # noqa: E731,B023
                ref = fn()[0].transpose(0, 1)
                r["baseline"] = name
                r["baseline_TFLOPs"] = flops / graph_time(fn) / 1e9
            break
        except Exception as error:  # noqa: BLE001 - recorded, next backend
            errors[name] = str(error).splitlines()[0][:300]
            ref = None
    if errors:
        r["baseline_refused"] = errors
    out = torch.full((new, heads, DV), float("nan"), device=DEV, dtype=torch.bfloat16)
    run = attnc_runner(model, q, k, v, cu([new]), cu([total]), out)
    run()
    torch.cuda.synchronize()
    if ref is not None:
        r["attnc_rel_err_vs_baseline"] = rel_err(out, ref)
    else:
        # no baseline ran: a float32 reference on the same data
        scores = torch.einsum("qhd,khd->hqk", q.float(), k.float()) * DQK ** -0.5
        scores = scores.masked_fill(~mask[None], float("-inf"))
        ref32 = torch.einsum("hqk,khd->qhd", scores.softmax(-1), v.float())
        r["attnc_rel_err_vs_float32"] = rel_err(out, ref32)
    r["attnc_TFLOPs"] = flops / graph_time(run) / 1e9
    if "baseline_TFLOPs" in r:
        r["attnc_over_baseline"] = r["attnc_TFLOPs"] / r["baseline_TFLOPs"]
    return r


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--heads", type=int, default=128)
    parser.add_argument("--seq", type=int, default=8192)
    parser.add_argument("--chunk", type=int, nargs=2, default=[1024, 7168],
                        metavar=("NEW", "CACHED"))
    args = parser.parse_args()
    torch.manual_seed(0)
    res = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
           "command": " ".join(sys.argv), "torch": torch.__version__,
           "cudnn": torch.backends.cudnn.version()}
    m = 8192
    x = torch.randn(m, m, device=DEV, dtype=torch.bfloat16)
    y = torch.randn(m, m, device=DEV, dtype=torch.bfloat16)
    res["bf16_mm_TFLOPs"] = 2 * m ** 3 / bench(lambda: x @ y) / 1e9
    del x, y
    model, res["compile"] = compile_model(args.heads)
    key = f"prefill_S{args.seq}_H{args.heads}_causal"
    res[key] = r = prefill(model, args.seq, args.heads)
    print("prefill", json.dumps(r), flush=True)
    ckey = f"chunked_{args.chunk[0]}_over_{args.chunk[1]}_H{args.heads}"
    res[ckey] = c = chunked(model, args.chunk[0], args.chunk[1], args.heads)
    print("chunked", json.dumps(c), flush=True)
    with open(os.path.join(os.environ.get("OUT", "."), "bench_varlen.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"\n{res['gpu']}, bf16 mm {res['bf16_mm_TFLOPs']:.0f} TFLOP/s, {res['date']}; "
          f"compile {res['compile']}")
    print(f"prefill S{args.seq} H{args.heads} 192/128 causal: attnc {r['attnc_TFLOPs']:.0f} "
          f"TFLOP/s, cuDNN {r['sdpa_cudnn_TFLOPs']:.0f} ({r['attnc_over_cudnn']:.3f}x), "
          f"views {r['attnc_views_TFLOPs']:.0f} (bit-identical: "
          f"{r['attnc_views_bit_identical']}), err {r['attnc_rel_err_vs_cudnn']:.1e}")
    base = (f", {c['baseline']} {c['baseline_TFLOPs']:.0f} ({c['attnc_over_baseline']:.3f}x)"
            if "baseline_TFLOPs" in c else ", no SDPA baseline")
    print(f"chunked {args.chunk[0]} over {args.chunk[1]}: attnc {c['attnc_TFLOPs']:.0f} "
          f"TFLOP/s{base}")


if __name__ == "__main__":
    main()
