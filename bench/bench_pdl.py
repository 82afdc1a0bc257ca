"""Programmatic dependent launch (PDL) in a decode step, on against off.

One CUDA graph of N layers' decode launches, each layer with its own cache
(together far larger than the 50 MB L2), as an engine's decode step runs
them; per-layer time = replay median / N. Each case is timed twice in the
same run, from the same tensors: with the kernels launched with PDL (the
default: cuLaunchKernelEx with programmatic stream serialization, the
kernels' griddepcontrol.wait first) and without (attnc.Context(
disable_pdl=True): plain cuLaunchKernel). The difference is the launch
latency and block start-up that PDL hides under the previous kernel's tail.

- llama-3.1-8b (examples/configs/llama-3.1-8b-instruct.json: 32/8 heads,
  128/128, neox rope), bf16 cache in 16-token pages, L 4096, B 1/8/64: per
  layer preprocess (T = B tokens: q_out and the new K/V rows) then paged
  attention (one row per sequence), through launch plans (the engine path).
  Also the attention alone (a graph of N attentions) and the preprocess
  alone, on and off.
- DeepSeek-V3 MLA at TP 8 (16 heads), B 64, L 4096: mla_preprocess then
  latent_attention per layer (bench_mla_step.py's layers, checked launches).

Usage (GPU machine): PYTHONPATH=python ATTNC_LIBRARY=build/lib/libattnc.so \
    python3 bench/bench_pdl.py [layers]   # JSON to $OUT/bench_pdl.json
(kernels compile into $ATTNC_CACHE_DIR when set, else a temporary cache).
"""
import json
import os
import sys
import tempfile
import time

import torch

import attnc
from bench_mla_step import CONFIG as MLA_CONFIG, Layer as MlaLayer, bench, graph_of

DEV = "cuda"
HERE = os.path.dirname(os.path.abspath(__file__))
LLAMA = os.path.join(HERE, "..", "examples", "configs", "llama-3.1-8b-instruct.json")
HQ, HKV, D, PAGE = 32, 8, 128, 16


class LlamaLayer:
    """One layer: its caches, block tables, the step's inputs, and plans of
    both models (PDL on and off) bound to the same caches."""

    def __init__(self, models, batch, length, q_out, gen):
        pages = (length + PAGE - 1) // PAGE
        self.k_cache = torch.randn(batch * pages, PAGE, HKV, D, device=DEV,
                                   dtype=torch.bfloat16, generator=gen)
        self.v_cache = torch.randn_like(self.k_cache)
        self.tables = torch.randperm(batch * pages, device=DEV, dtype=torch.int32,
                                     generator=gen).view(batch, pages)
        self.lens = torch.full((batch,), length, device=DEV, dtype=torch.int32)
        self.starts = torch.arange(batch + 1, device=DEV, dtype=torch.int32)
        pos = length - 1  # the step's token: each sequence's last position
        self.positions = torch.full((batch,), pos, device=DEV, dtype=torch.int64)
        self.slots = self.tables[:, pos // PAGE].long() * PAGE + pos % PAGE
        self.qkv = torch.randn(batch, (HQ + 2 * HKV) * D, device=DEV, dtype=torch.bfloat16,
                               generator=gen)
        self.q_out = q_out  # shared by the layers, as in an engine
        self.out = torch.empty(batch, HQ, D, device=DEV, dtype=torch.bfloat16)
        self.plans = {}
        for pdl, model in models.items():
            kind = model.layer_kind(0)
            pre = model.preprocess_plan(kind, k_cache=self.k_cache, v_cache=self.v_cache)
            att = model.attention_plan(kind, k_cache=self.k_cache, v_cache=self.v_cache)
            self.plans[pdl] = (pre, att)

    def preprocess(self, pdl):
        pre = self.plans[pdl][0]
        return lambda: pre.run(self.qkv, self.slots, self.positions, q_out=self.q_out)

    def attention(self, pdl):
        att = self.plans[pdl][1]
        return lambda: att.run(self.q_out, self.tables, self.lens, self.starts, out=self.out)


def per_layer_us(fns, layers):
    graph = graph_of(fns)
    t = bench(graph.replay) * 1e6 / layers
    del graph
    return t


def llama_case(models, batch, length, layers):
    gen = torch.Generator(device=DEV).manual_seed(4242)
    q_out = torch.empty(batch, HQ, D, device=DEV, dtype=torch.bfloat16)
    stack = [LlamaLayer(models, batch, length, q_out, gen) for _ in range(layers)]
    kv_bytes = 2 * batch * length * HKV * D * 2
    r = {"model": "llama-3.1-8b", "batch": batch, "length": length, "layers": layers,
         "kv_MB_per_layer": kv_bytes / 1e6,
         "kv_splits": models[True].attention_splits(models[True].layer_kind(0), batch, batch),
         # what the plans report (attnc_launch_plan_programmatic_launch)
         "on_launches_with_pdl": all(p.programmatic_launch for p in stack[0].plans[True]),
         "off_launches_with_pdl": any(p.programmatic_launch for p in stack[0].plans[False])}
    for pdl, tag in ((True, "on"), (False, "off")):
        r[f"step_{tag}_us"] = per_layer_us(
            [f for l in stack for f in (l.preprocess(pdl), l.attention(pdl))], layers)
        r[f"attention_{tag}_us"] = per_layer_us([l.attention(pdl) for l in stack], layers)
        r[f"preprocess_{tag}_us"] = per_layer_us([l.preprocess(pdl) for l in stack], layers)
    r["attention_on_TBps"] = kv_bytes / (r["attention_on_us"] * 1e-6) / 1e12
    del stack
    torch.cuda.empty_cache()
    return r


def mla_case(models, batch, length, layers):
    gen = torch.Generator(device=DEV).manual_seed(4243)
    heads = 16  # TP 8
    r = {"model": "deepseek-v3 MLA tp8", "batch": batch, "length": length, "layers": layers}
    stacks = {}
    for pdl, model in models.items():
        # The same cache contents for both (same seed); separate tensors so
        # that each model's checked launches bind their own.
        g = torch.Generator(device=DEV).manual_seed(4243)
        stacks[pdl] = [MlaLayer(model, model.layer_kind(0), heads, batch, length, g)
                       for _ in range(layers)]
        r["kv_splits"] = stacks[pdl][0].splits
    r["kv_MB_per_layer"] = batch * length * 576 * 2 / 1e6
    for pdl, tag in ((True, "on"), (False, "off")):
        stack = stacks[pdl]
        r[f"step_{tag}_us"] = per_layer_us(
            [f for l in stack for f in (l.preprocess, l.attention)], layers)
        r[f"attention_{tag}_us"] = per_layer_us([l.attention for l in stack], layers)
        r[f"preprocess_{tag}_us"] = per_layer_us([l.preprocess for l in stack], layers)
        del stacks[pdl][:]
        torch.cuda.empty_cache()
    del gen
    return r


def main():
    layers = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    res = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(),
           "command": " ".join(sys.argv), "layers": layers,
           "ATTNC_PDL": os.environ.get("ATTNC_PDL")}
    res["cases"] = []
    with tempfile.TemporaryDirectory() as temp_dir:
        cache_dir = os.environ.get("ATTNC_CACHE_DIR") or temp_dir
        contexts = {True: attnc.Context(cache_dir=cache_dir),
                    False: attnc.Context(cache_dir=cache_dir, disable_pdl=True)}
        llama = {pdl: attnc.compile(LLAMA, context=c, dtype="bf16", kv_dtype="bf16",
                                    block_size=PAGE) for pdl, c in contexts.items()}
        for batch in (1, 8, 64):
            r = llama_case(llama, batch, 4096, layers)
            res["cases"].append(r)
            print(json.dumps(r), flush=True)
        mla = {pdl: attnc.compile(MLA_CONFIG, context=c, tp=8, dtype="bf16", kv_dtype="bf16",
                                  block_size=64) for pdl, c in contexts.items()}
        r = mla_case(mla, 64, 4096, layers)
        res["cases"].append(r)
        print(json.dumps(r), flush=True)
    print(f"{'model':<22} {'B':>3} {'L':>5} {'spl':>4} {'step on':>8} {'step off':>9} "
          f"{'saved':>6} {'attn on':>8} {'attn off':>9} {'pre on':>7} {'pre off':>8}")
    for r in res["cases"]:
        print(f"{r['model']:<22} {r['batch']:>3} {r['length']:>5} {r['kv_splits']:>4} "
              f"{r['step_on_us']:>8.2f} {r['step_off_us']:>9.2f} "
              f"{r['step_off_us'] - r['step_on_us']:>6.2f} "
              f"{r['attention_on_us']:>8.2f} {r['attention_off_us']:>9.2f} "
              f"{r['preprocess_on_us']:>7.2f} {r['preprocess_off_us']:>8.2f}")
    print(f"per-layer µs: one CUDA graph of {layers} layers / {layers}; on = PDL, "
          f"off = attnc.Context(disable_pdl=True)")
    with open(os.path.join(os.environ.get("OUT", "."), "bench_pdl.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
