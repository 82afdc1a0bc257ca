"""MLA decode as an engine runs it: one CUDA graph of many layers.

DeepSeek-V3 (examples/configs/deepseek-v3.json) compiled by attnc.compile, as
an engine would (bf16, bf16 latent cache in 64-token pages), at TP 1
(128 heads) and TP 8 (16 heads). Each of N layers has its own latent cache
(the layers' caches together are far larger than the 50 MB L2, so no layer
finds the previous layer's rows there), its own block tables and its own
query; per decode step and layer an engine runs:

  1. mla_preprocess on the step's T = B tokens (kv_a [T, 576] ->
     RMSNorm, rope, the cache row; q_pe [T, H, 64] -> rope into the
     absorbed query's last 64 values), then
  2. latent_attention (absorbed decode) over the layer's cache.

(The absorbed query's first 512 values, q_nope . W_UK, and the output's
up-projection are the engine's GEMMs, not attnc's: not timed.)

Timed, side by side in one run: one CUDA graph of N layers of (1) + (2);
of N layers of (2) alone; of N layers of (1) alone; and one layer's
(2) alone in its own graph (the single-launch number of bench_mla.py). Times
per layer are the graph replay's median over N. Floors: the latent rows a
layer reads over the copy bandwidth measured in this run (HBM), and the
FLOPs over 989 TFLOP/s (the H200's dense bf16 peak at 1.98 GHz is about
990; the measured bf16 matmul peak is 700-790).

Usage (GPU machine): PYTHONPATH=python ATTNC_LIBRARY=build/lib/libattnc.so \
    python3 bench/bench_mla_step.py [layers]   # JSON to $OUT/bench_mla_step.json
"""
import json
import os
import sys
import tempfile
import time

import torch
from triton.testing import do_bench

import attnc

DEV = "cuda"
R, P, NOPE, PAGE = 512, 64, 128, 64
D = R + P
HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = os.path.join(HERE, "..", "examples", "configs", "deepseek-v3.json")
PEAK_TFLOPS = 989.0


def bench(fn, rep=50):
    return do_bench(fn, warmup=5, rep=rep, return_mode="median") * 1e-3  # s


def graph_of(fns):
    """One CUDA graph that calls every fn in order (warmed outside the
    capture first: module loads and workspace zeroing)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for fn in fns:
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for fn in fns:
            fn()
    return graph


class Layer:
    """One layer's tensors: cache, tables, inputs and outputs of both kernels."""

    def __init__(self, model, layer, heads, batch, length, gen):
        pages = (length + PAGE - 1) // PAGE
        self.model, self.layer = model, layer
        self.cache = torch.randn(batch * pages, PAGE, D, device=DEV, dtype=torch.bfloat16,
                                 generator=gen)
        self.tables = torch.randperm(batch * pages, device=DEV, dtype=torch.int32,
                                     generator=gen).view(batch, pages)
        self.lens = torch.full((batch,), length, device=DEV, dtype=torch.int32)
        self.starts = torch.arange(batch + 1, device=DEV, dtype=torch.int32)
        # the step's new token of each sequence goes to its last position
        pos = length - 1
        self.positions = torch.full((batch,), pos, device=DEV, dtype=torch.int64)
        self.slots = (self.tables[:, pos // PAGE].long() * PAGE + pos % PAGE)
        self.kv_a = torch.randn(batch, D, device=DEV, dtype=torch.bfloat16, generator=gen)
        self.q = torch.randn(batch, heads, NOPE + P, device=DEV, dtype=torch.bfloat16,
                             generator=gen)
        self.q_abs = torch.randn(batch, heads, D, device=DEV, dtype=torch.bfloat16,
                                 generator=gen)
        self.norm_weight = torch.ones(R, device=DEV, dtype=torch.bfloat16)
        self.out = torch.empty(batch, heads, R, device=DEV, dtype=torch.bfloat16)
        self.workspace = torch.zeros(model.latent_attention_workspace_size(layer), device=DEV,
                                     dtype=torch.float32)
        self.splits = model.latent_attention_splits(layer, batch, batch)

    def preprocess(self):
        self.model.mla_preprocess(
            self.layer, self.kv_a, self.q[..., NOPE:], slot_mapping=self.slots,
            positions=self.positions, kv_norm_weight=self.norm_weight,
            latent_cache=self.cache, latent_out=self.kv_a, q_rope_out=self.q_abs[..., R:])

    def attention(self):
        self.model.latent_attention(
            self.layer, self.q_abs, latent_cache=self.cache, block_tables=self.tables,
            seq_lens=self.lens, query_start_loc=self.starts, out=self.out,
            workspace=self.workspace, num_kv_splits=self.splits)


def case(models, tp, batch, length, layers, copy_tbps):
    model = models[tp]
    kind = model.layer_kind(0)
    heads = 128 // tp
    gen = torch.Generator(device=DEV).manual_seed(1234)
    stack = [Layer(model, kind, heads, batch, length, gen) for _ in range(layers)]
    flops = 2 * batch * heads * length * (D + R)
    cache_bytes = batch * length * D * 2
    r = {"tp": tp, "heads": heads, "batch": batch, "length": length, "layers": layers,
         "kv_splits": stack[0].splits, "cache_MB_per_layer": cache_bytes / 1e6,
         "floor_hbm_us": cache_bytes / (copy_tbps * 1e12) * 1e6,
         "floor_flops_us": flops / (PEAK_TFLOPS * 1e12) * 1e6}
    one = graph_of([stack[0].attention])
    r["attention_single_us"] = bench(one.replay) * 1e6
    del one
    for name, fns in (("step", [f for l in stack for f in (l.preprocess, l.attention)]),
                      ("attention", [l.attention for l in stack]),
                      ("preprocess", [l.preprocess for l in stack])):
        graph = graph_of(fns)
        r[f"{name}_per_layer_us"] = bench(graph.replay) * 1e6 / layers
        del graph
    t = r["attention_per_layer_us"] * 1e-6
    r["attention_TFLOPs"] = flops / t / 1e12
    r["attention_TBps"] = cache_bytes / t / 1e12
    r["attention_over_copy"] = r["attention_TBps"] / copy_tbps
    r["step_over_attention"] = r["step_per_layer_us"] / r["attention_per_layer_us"]
    del stack
    torch.cuda.empty_cache()
    return r


def main():
    layers = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    res = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
           "command": " ".join(sys.argv), "config": "examples/configs/deepseek-v3.json"}
    n = 1 << 30
    a = torch.empty(n, dtype=torch.uint8, device=DEV).random_(0, 255)
    b = torch.empty_like(a)
    res["copy_TBps"] = copy = 2 * n / bench(lambda: b.copy_(a)) / 1e12
    del a, b
    models = {}
    with tempfile.TemporaryDirectory() as cache_dir:
        context = attnc.Context(cache_dir=cache_dir)
        for tp in (1, 8):
            models[tp] = attnc.compile(CONFIG, context=context, tp=tp, dtype="bf16",
                                       kv_dtype="bf16", block_size=PAGE)
        res["cases"] = []
        for tp, batch, length in ((1, 64, 4096), (1, 128, 4096), (8, 128, 8192),
                                  (1, 1, 32768), (1, 8, 8192), (8, 8, 8192)):
            r = case(models, tp, batch, length, layers, copy)
            res["cases"].append(r)
            print(json.dumps(r), flush=True)
    print(f"{'H':>4} {'B':>4} {'L':>6} {'spl':>4} {'single':>8} {'attn/l':>8} {'pre/l':>7} "
          f"{'step/l':>8} {'TFLOP/s':>8} {'TB/s':>6} {'%copy':>6} {'hbm fl':>7} {'flop fl':>7}")
    for r in res["cases"]:
        print(f"{r['heads']:>4} {r['batch']:>4} {r['length']:>6} {r['kv_splits']:>4} "
              f"{r['attention_single_us']:>8.1f} {r['attention_per_layer_us']:>8.1f} "
              f"{r['preprocess_per_layer_us']:>7.2f} {r['step_per_layer_us']:>8.1f} "
              f"{r['attention_TFLOPs']:>8.1f} {r['attention_TBps']:>6.2f} "
              f"{100 * r['attention_over_copy']:>5.1f}% {r['floor_hbm_us']:>7.1f} "
              f"{r['floor_flops_us']:>7.1f}")
    print(f"copy {copy:.2f} TB/s; per-layer times are one graph of {layers} layers / {layers}")
    with open(os.path.join(os.environ.get("OUT", "."), "bench_mla_step.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
