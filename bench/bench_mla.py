"""MLA absorbed decode benchmark (attn.latent_attention, R 512 + P 64 = 576 /
512): attnc against a PyTorch implementation on the same data (the latent
rows gathered contiguously per sequence first, not timed; then batched bf16
torch.matmul -> softmax -> torch.matmul) and FlexAttention where it takes
576/512, with the copy bandwidth measured in the same run.

Cases (one query row per sequence, bf16 latent cache in 64-row pages,
shuffled block tables, every sequence of length L):
- H 128, B 64 and 128, L 4096: TFLOP/s = 2 B H L (576 + 512) / time
  (issue 14's target: >= 600);
- H 16 (TP 8), B 128, L 8192: TB/s = the latent rows read (B L 576 x 2
  bytes) / time, against the copy bandwidth (target: >= 90 %);
- H 128, B 1, L 32768 and H 16, B 8, L 8192: small batches through split-KV.

Times are medians of CUDA-graph replays (triton.testing.do_bench, which
flushes the L2 between replays). The NVRTC compile of the kernel is timed
cold (a fresh kernel cache) through attnc.compile_ir.

With --fp8, every case also runs the kernel of an fp8 e4m3 latent cache on
the same rows (quantised with a per-tensor scale, amax / 448: the rows
divided by cache_scale, as the MLA preprocess writes them): its time, the
TB/s of latent rows it reads (B L 576 x 1 byte), decode tokens/s (B / time,
one layer) next to bf16's, and its error against float64 on the
dequantised rows.

Usage (GPU machine): PYTHONPATH=python ATTNC_LIBRARY=build/lib/libattnc.so \
    python3 bench/bench_mla.py [--fp8] [cases]  # JSON to $OUT/bench_mla.json
    python3 bench/bench_mla.py 128x64x4096x256 128x64x4096 16x128x8192x256
                                   # HxBxL[xR] cases, attnc alone; R =
                                   # kv_lora_rank, 512 unless given (256:
                                   # Mistral 4); FLOP/s and bytes use R + 64
"""
import json
import math
import os
import sys
import tempfile
import time

import torch
from triton.testing import do_bench

import attnc

DEV = "cuda"
R, P, PAGE = 512, 64, 64
D = R + P  # the row width at R 512 (diagnostic scripts use it)
SCALE = 0.1352
LAYER = "mla"


def bench(fn, rep=100):
    return do_bench(fn, warmup=10, rep=rep, return_mode="median") * 1e-3  # s


def graph_time(fn, rep=100):
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    return bench(graph.replay, rep)


def layer_ir(heads, rank=R, fp8=False):
    D = rank + P
    cache = "f8E4M3FN" if fp8 else "bf16"
    scale_arg = ", %scale: tensor<f32>" if fp8 else ""
    scale_use = " scale %scale" if fp8 else ""
    scale_type = " scale tensor<f32>" if fp8 else ""
    return f"""
func.func @{LAYER}(%q: tensor<?x{heads}x{D}xbf16>, %cache: tensor<?x{PAGE}x{D}x{cache}>,
                   %tables: tensor<?x?xi32>, %lens: tensor<?xi32>, %starts: tensor<?xi32>{scale_arg})
    -> tensor<?x{heads}x{rank}xbf16> {{
  %o = attn.latent_attention %q, %cache, %tables, %lens, %starts{scale_use}
      {{kv_lora_rank = {rank}, softmax_scale = {SCALE} : f64}}
      : tensor<?x{heads}x{D}xbf16>, tensor<?x{PAGE}x{D}x{cache}>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?xi32>{scale_type} -> tensor<?x{heads}x{rank}xbf16>
  return %o : tensor<?x{heads}x{rank}xbf16>
}}
"""


_MODELS = {}


def model_for(heads, rank=R, fp8=False):
    if (heads, rank, fp8) not in _MODELS:
        with tempfile.TemporaryDirectory() as cache:
            context = attnc.Context(cache_dir=cache)
            start = time.perf_counter()
            model = attnc.compile_ir(layer_ir(heads, rank, fp8), context=context)
            model.kernel(LAYER, "latent_attention").cubin()
            cold = time.perf_counter() - start
        _MODELS[(heads, rank, fp8)] = (model, cold)
    return _MODELS[(heads, rank, fp8)]


def fp8_case(r, heads, batch, length, cache, tables, query, lens, starts, rank=R):
    """The fp8 kernel on `cache` quantised per tensor (amax / 448): its time,
    latent TB/s (1 byte a value), tokens/s and error into `r`."""
    R, D = rank, rank + P
    model, cold = model_for(heads, rank, fp8=True)
    scale = (cache.abs().max().float() / 448.0).reshape(())
    cache8 = (cache.float() / scale).to(torch.float8_e4m3fn)
    out = torch.empty(batch, heads, R, device=DEV, dtype=torch.bfloat16)
    workspace = torch.zeros(model.latent_attention_workspace_size(LAYER), device=DEV,
                            dtype=torch.float32)
    splits = model.latent_attention_splits(LAYER, batch, batch)

    def run():
        model.latent_attention(LAYER, query, latent_cache=cache8, block_tables=tables,
                               seq_lens=lens, query_start_loc=starts, cache_scale=scale,
                               out=out, workspace=workspace, num_kv_splits=splits)

    run()
    torch.cuda.synchronize()
    for s in (0, batch - 1):  # float64 on the dequantised rows (index the raw bytes)
        rows = cache8.view(torch.uint8)[tables[s].long()].view(torch.float8_e4m3fn)
        kv = rows.reshape(length, D).float().double() * scale.double()
        ref = torch.softmax((query[s].double() @ kv.T) * SCALE, -1) @ kv[:, :R]
        err = ((out[s].double() - ref).norm() / ref.norm()).item()
        r["fp8_rel_err"] = max(r.get("fp8_rel_err", 0.0), err)
    t = graph_time(run)
    r["fp8_compile_cold_s"] = cold
    r["fp8_us"] = t * 1e6
    r["fp8_TFLOPs"] = 2 * batch * heads * length * (D + R) / t / 1e12
    r["fp8_TBps"] = batch * length * D / t / 1e12
    r["fp8_tokens_per_s"] = batch / t
    r["fp8_over_bf16"] = r["attnc_us"] / r["fp8_us"]


def case(heads, batch, length, baselines=True, rank=R, fp8=False):
    R, D = rank, rank + P
    model, cold = model_for(heads, rank)
    pages = length // PAGE
    cache = torch.randn(batch * pages, PAGE, D, device=DEV, dtype=torch.bfloat16)
    tables = torch.randperm(batch * pages, device=DEV, dtype=torch.int32).view(batch, pages)
    query = torch.randn(batch, heads, D, device=DEV, dtype=torch.bfloat16)
    lens = torch.full((batch,), length, device=DEV, dtype=torch.int32)
    starts = torch.arange(batch + 1, device=DEV, dtype=torch.int32)
    out = torch.empty(batch, heads, R, device=DEV, dtype=torch.bfloat16)
    workspace = torch.zeros(model.latent_attention_workspace_size(LAYER), device=DEV,
                            dtype=torch.float32)
    splits = model.latent_attention_splits(LAYER, batch, batch)

    def run():
        model.latent_attention(LAYER, query, latent_cache=cache, block_tables=tables,
                               seq_lens=lens, query_start_loc=starts, out=out,
                               workspace=workspace, num_kv_splits=splits)

    flops = 2 * batch * heads * length * (D + R)
    cache_bytes = batch * length * D * 2
    r = {"heads": heads, "batch": batch, "length": length, "rank": rank, "kv_splits": splits,
         "compile_cold_s": cold}
    run()
    torch.cuda.synchronize()
    # Correctness on two sequences against float64.
    kv = cache[tables.long()].view(batch, length, D)  # contiguous per sequence
    for s in (0, batch - 1):
        sc = (query[s].double() @ kv[s].double().T) * SCALE
        ref = torch.softmax(sc, -1) @ kv[s, :, :R].double()
        err = ((out[s].double() - ref).norm() / ref.norm()).item()
        r["attnc_rel_err"] = max(r.get("attnc_rel_err", 0.0), err)
    t = graph_time(run)
    r["attnc_us"] = t * 1e6
    r["attnc_TFLOPs"] = flops / t / 1e12
    r["attnc_TBps"] = cache_bytes / t / 1e12
    r["attnc_launch_us"] = bench(run) * 1e6
    r["attnc_tokens_per_s"] = batch / t
    if fp8:
        fp8_case(r, heads, batch, length, cache, tables, query, lens, starts, rank)
    if baselines:
        # PyTorch: bf16 matmul -> softmax (fp32) -> bf16 matmul on the rows
        # gathered above.
        v = kv[:, :, :R]

        def torch_mla():
            s = torch.matmul(query, kv.transpose(1, 2))
            p = torch.softmax(s.float() * SCALE, dim=-1).to(torch.bfloat16)
            return torch.matmul(p, v)
        t = graph_time(torch_mla)
        r["torch_us"] = t * 1e6
        r["torch_TFLOPs"] = flops / t / 1e12
        r["torch_TBps"] = cache_bytes / t / 1e12
        r["attnc_over_torch"] = r["torch_us"] / r["attnc_us"]
        try:
            from torch.nn.attention.flex_attention import flex_attention
            fa = torch.compile(flex_attention)
            q4 = query.unsqueeze(2)  # [B, H, 1, 576]
            k4 = kv.unsqueeze(1)     # [B, 1, L, 576]
            v4 = v.unsqueeze(1)      # [B, 1, L, 512]
            fa(q4, k4, v4, scale=SCALE, enable_gqa=True)
            t = bench(lambda: fa(q4, k4, v4, scale=SCALE, enable_gqa=True))
            r["flex_us"] = t * 1e6
            r["flex_TFLOPs"] = flops / t / 1e12
        except Exception as error:  # noqa: BLE001 - recorded
            r["flex_error"] = f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
        torch._dynamo.reset()
        del kv, v
    return r


def main():
    torch.manual_seed(0)
    res = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
           "command": " ".join(sys.argv)}
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device=DEV).random_(0, 255)
    b = torch.empty_like(a)
    res["copy_TBps"] = 2 * n / bench(lambda: b.copy_(a)) / 1e12
    del a, b
    res["cases"] = []
    cases = [(128, 64, 4096, True), (128, 128, 4096, True), (16, 128, 8192, True),
             (128, 1, 32768, False), (16, 8, 8192, False), (64, 128, 4096, False)]
    cases = [c + (R,) for c in cases]
    fp8 = "--fp8" in sys.argv[1:]
    args = [arg for arg in sys.argv[1:] if arg != "--fp8"]
    if args:
        # HxBxL[xR] arguments: those cases only, attnc alone (no baselines)
        cases = []
        for arg in args:
            fields = [int(x) for x in arg.split("x")]
            if len(fields) not in (3, 4):
                sys.exit(f"bench_mla: case {arg!r} is not HxBxL or HxBxLxR")
            cases.append(tuple(fields[:3]) + (False, fields[3] if len(fields) == 4 else R))
    for heads, batch, length, baselines, rank in cases:
        r = case(heads, batch, length, baselines, rank, fp8)
        r["attnc_TBps_over_copy"] = r["attnc_TBps"] / res["copy_TBps"]
        if fp8:
            r["fp8_TBps_over_copy"] = r["fp8_TBps"] / res["copy_TBps"]
        res["cases"].append(r)
        print(json.dumps(r), flush=True)
    print(f"{'H':>4} {'B':>4} {'L':>6} {'R':>4} {'splits':>6} {'attnc us':>9} {'TFLOP/s':>8} {'TB/s':>6} "
          f"{'%copy':>6} {'torch us':>9} {'x torch':>8}")
    for r in res["cases"]:
        print(f"{r['heads']:>4} {r['batch']:>4} {r['length']:>6} {r['rank']:>4} {r['kv_splits']:>6} "
              f"{r['attnc_us']:>9.1f} {r['attnc_TFLOPs']:>8.1f} {r['attnc_TBps']:>6.2f} "
              f"{100 * r['attnc_TBps_over_copy']:>5.1f}% {r.get('torch_us', float('nan')):>9.1f} "
              f"{r.get('attnc_over_torch', float('nan')):>8.2f}")
    if fp8:
        print(f"\nfp8 e4m3 latent cache (TB/s: latent bytes read, 1 a value; tokens/s: B / time)")
        print(f"{'H':>4} {'B':>4} {'L':>6} {'bf16 us':>9} {'fp8 us':>9} {'bf16 TB/s':>9} "
              f"{'fp8 TB/s':>8} {'%copy':>6} {'bf16 tok/s':>11} {'fp8 tok/s':>11} {'x bf16':>7} "
              f"{'fp8 err':>8}")
        for r in res["cases"]:
            print(f"{r['heads']:>4} {r['batch']:>4} {r['length']:>6} {r['attnc_us']:>9.1f} "
                  f"{r['fp8_us']:>9.1f} {r['attnc_TBps']:>9.2f} {r['fp8_TBps']:>8.2f} "
                  f"{100 * r['fp8_TBps_over_copy']:>5.1f}% {r['attnc_tokens_per_s']:>11.0f} "
                  f"{r['fp8_tokens_per_s']:>11.0f} {r['fp8_over_bf16']:>7.2f} {r['fp8_rel_err']:>8.1e}")
    print(f"copy {res['copy_TBps']:.2f} TB/s; compile (cold, compile_ir + cubin): "
          + ", ".join(f"H{h} R{k}{' fp8' if f else ''} {c:.2f} s"
                      for (h, k, f), (_, c) in _MODELS.items()))
    with open(os.path.join(os.environ.get("OUT", "."), "bench_mla.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
