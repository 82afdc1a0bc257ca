"""Issue 13's decode matrix: attnc's paged decode against SDPA cuDNN over
contiguous K/V, per layer inside one CUDA graph of many layers (what an
engine's decode step sees), and as single launches, side by side in one run.

Cells: B in {1, 8, 32, 64, 128} x L in {4096, 32768} x seven layer kinds of
real configurations (examples/configs), one query row per sequence:
  llama-3.1-8b        32/8  128/128
  qwen3-8b            32/8  128/128 (q/k norm: preprocess only)
  mimo-v2-flash full  64/4  192/128, value scale 0.707
  mimo-v2-flash swa   64/8  192/128, window 129, sinks
  gpt-oss-20b full    64/8   64/64, sinks
  gpt-oss-20b swa     64/8   64/64, window 128, sinks
  qwen3-next          16/2  256/256, interleaved output gate

Per cell and layer: the K/V rows a decode row reads (all L, or the window's
last W for a sliding layer) are drawn at random, once for cuDNN as
contiguous [B, Hkv, Lread, D] tensors and once scattered into attnc's paged
caches (pages of `page` rows, shuffled block tables). Poison: in the paged
caches the rows past each sequence's end (the last page's tail) are NaN, and
for sliding layers every block-table entry before the window points at a
NaN page, so reading any key the layer must not read shows as NaN.

Timing: N layers, each with its own caches (N = clamp(ceil(1 GiB / bytes
read per layer), 2, 32): together far beyond the 50 MB L2, also for small
cells), captured in one CUDA graph per side; per-layer time = replay / N.
attnc and cuDNN graphs are timed in turn `rounds` times (clock drift cancels
in the per-round ratios; bench_varlen.interleaved_times). "single" is one
launch captured alone (its K/V may sit in L2 for small cells, both sides
alike). Bandwidth = K/V bytes read / time; the floor is the device-to-device
copy rate measured in the same run (read + write bytes / time).

cuDNN computes plain softmax attention: it has no sinks, output gate or
value scale (elementwise epilogues attnc fuses; they move no K/V bytes),
and reads the window as a contiguous slice. attnc's output of the first
layer is checked against a float32 reference (test/gpu's
attention_reference, sinks, gate and value scale included) on the first
two sequences: relative error below 2e-2 and no NaN, else the cell fails.

Options: rows=N gives every sequence N query rows (speculative decoding:
causal among them, the last N positions; cuDNN gets the same N rows without
the causal mask, which reads the same K/V bytes). kv=fp8 stores the caches
in fp8 e4m3 with a scale of 0.05 (cuDNN keeps bf16: its ratio is then the
tokens-per-second gain of the fp8 cache; attnc's TB/s counts fp8 bytes), and
the check reads the dequantised values (relative error below 4e-2).
tiered=baseline compiles the tiered JIT's first tier only (mma.sync for
tiles of more than 16 rows: less shared memory, more blocks per SM).

Usage (GPU machine): PYTHONPATH=python ATTNC_LIBRARY=build/lib/libattnc.so \\
    python3 bench/bench_decode_matrix.py [rounds=3] [page=16] [B=1,8] [L=4096]
        [models=llama,mimo-full] [splits=N,M,...] [rows=N] [kv=fp8] [tiered=baseline]   # JSON to $OUT/bench_decode_matrix.json
"""
import itertools
import json
import math
import os
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "test", "gpu"))
import bench_varlen as bv  # noqa: E402  (bench, capture, interleaved_times, round_ratios)
from attnc_gpu_reference import attention_reference, fp8_quantize  # noqa: E402

import attnc  # noqa: E402

DEV = "cuda"
CONFIGS = os.path.join(HERE, "..", "examples", "configs")
#: name -> (config file, layer kind)
MODELS = {
    "llama": ("llama-3.1-8b-instruct.json", "full_attention"),
    "qwen3": ("qwen3-8b.json", "full_attention"),
    "mimo-full": ("mimo-v2-flash.json", "full_attention"),
    "mimo-swa": ("mimo-v2-flash.json", "sliding_attention"),
    "gpt-oss-full": ("gpt-oss-20b.json", "full_attention"),
    "gpt-oss-swa": ("gpt-oss-20b.json", "sliding_attention"),
    "qwen3-next": ("qwen3-next-80b-a3b.json", "full_attention"),
}
BATCHES = (1, 8, 32, 64, 128)
LENGTHS = (4096, 32768)
LAYER_BYTES = 1 << 30
#: the fp8 caches' scale (randn / 0.05 stays well inside e4m3's 448)
FP8_SCALE = 0.05


def arg(argv, key, default, conv=str):
    for a in argv:
        if a.startswith(key + "="):
            return conv(a.split("=", 1)[1])
    return default


def kind_of(model, name):
    for k in model.config["layer_kinds"]:
        if k["name"] == name:
            return k
    raise KeyError(name)


class Layer:
    """One layer of a cell: contiguous K/V for cuDNN, the same rows in paged
    caches (poisoned outside what the layer reads; fp8 e4m3 with a scale when
    fp8_scale is set) for attnc, the step's query/gate/out (`qrows` query rows
    per sequence, the last positions), and attnc's plan bound to the caches."""

    def __init__(self, model, kind, batch, length, page, gen, splits, qrows=1, fp8_scale=None):
        hq, hkv = kind["num_q_heads"], kind["num_kv_heads"]
        dqk, dv = kind["qk_head_dim"], kind["v_head_dim"]
        lread = read_keys(kind, length, qrows)
        bf = torch.bfloat16
        self.k = torch.randn(batch, hkv, lread, dqk, device=DEV, dtype=bf, generator=gen)
        self.v = torch.randn(batch, hkv, lread, dv, device=DEV, dtype=bf, generator=gen)
        self.q = torch.randn(batch * qrows, hq, dqk, device=DEV, dtype=bf, generator=gen)
        # the pages the read rows touch, per sequence: [first, last]
        first, last = (length - lread) // page, (length - 1) // page
        touched = last - first + 1
        real = batch * touched
        pages_per_seq = (length + page - 1) // page
        nan_page = real  # one extra page, all NaN, for the entries never read
        self.tables = torch.full((batch, pages_per_seq), nan_page, device=DEV, dtype=torch.int32)
        order = torch.randperm(real, device=DEV, generator=gen).to(torch.int32).view(batch, touched)
        self.tables[:, first:last + 1] = order
        caches = []
        for src in (self.k, self.v):
            d = src.shape[-1]
            rows = torch.full((batch, touched * page, hkv, d), float("nan"), device=DEV, dtype=bf)
            pre = length - lread - first * page  # rows of the first page before the read ones
            if pre:
                rows[:, :pre] = torch.randn(batch, pre, hkv, d, device=DEV, dtype=bf, generator=gen)
            rows[:, pre:pre + lread] = src.permute(0, 2, 1, 3)
            cache = torch.full((real + 1, page, hkv, d), float("nan"), device=DEV, dtype=bf)
            cache[order.long()] = rows.view(batch, touched, page, hkv, d)
            del rows
            caches.append(cache if fp8_scale is None else fp8_quantize(cache, fp8_scale))
        self.kc, self.vc = caches
        # what the check's float32 reference reads: the first two sequences'
        # K/V as the cache holds them (dequantised)
        n = min(2, batch)
        self.ref_k, self.ref_v = [
            (x[:n].float() if fp8_scale is None else fp8_quantize(x[:n], fp8_scale).float() * fp8_scale)
            for x in (self.k, self.v)]
        self.lens = torch.full((batch,), length, device=DEV, dtype=torch.int32)
        self.starts = torch.arange(0, batch * qrows + 1, qrows, device=DEV, dtype=torch.int32)
        self.sinks = (torch.randn(hq, device=DEV, generator=gen) * 2) if kind["sinks"] else None
        self.gate = (torch.randn(batch * qrows, hq, dv, device=DEV, dtype=bf, generator=gen)
                     if kind["gate"] != "none" else None)
        self.out = torch.full((batch * qrows, hq, dv), float("nan"), device=DEV, dtype=bf)
        scales = {}
        if fp8_scale is not None:
            scales = {name: torch.tensor(fp8_scale, dtype=torch.float32, device=DEV)
                      for name in ("k_scale", "v_scale")}
        self.plan = model.attention_plan(kind["name"], k_cache=self.kc, v_cache=self.vc,
                                         sinks=self.sinks, **scales)
        self.splits = self.plan.plan(batch * qrows, batch, num_kv_splits=splits)
        # cuDNN: [B, Hq, qrows, D] (not causal among the rows: the same K/V bytes)
        self.q4 = self.q.view(batch, qrows, hq, dqk).transpose(1, 2).contiguous()
        self.cudnn_out = torch.empty(batch, hq, qrows, dv, device=DEV, dtype=bf)
        self.scale, self.gqa, self.qrows = kind["softmax_scale"], hq != hkv, qrows

    def attnc(self):
        self.plan.run(self.q, self.tables, self.lens, self.starts, out=self.out, gate=self.gate)

    def cudnn(self):
        with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
            self.cudnn_out.copy_(F.scaled_dot_product_attention(
                self.q4, self.k, self.v, scale=self.scale, enable_gqa=self.gqa))

    def check(self, kind):
        """attnc's output of the first two sequences against float32."""
        n, r = self.ref_k.shape[0], self.qrows
        ref = attention_reference(
            [self.q[s * r:(s + 1) * r] for s in range(n)],
            [self.ref_k[s].permute(1, 0, 2) for s in range(n)],
            [self.ref_v[s].permute(1, 0, 2) for s in range(n)],
            softmax_scale=kind["softmax_scale"], sliding_window=kind["sliding_window"],
            sinks=self.sinks, value_scale=kind["value_scale"],
            gate=None if self.gate is None else self.gate[:n * r])
        got = self.out[:n * r].float()
        err = ((got - ref).norm() / ref.norm()).item()
        return err, bool(torch.isnan(got).any())


def read_keys(kind, length, qrows):
    """The keys a decode step of `qrows` rows reads per sequence: all, or
    the window of each row (the first row's reaches back window - 1)."""
    window = kind["sliding_window"]
    return min(length, window + qrows - 1) if window else length


def cell(model, kind, batch, length, page, rounds, splits, gen, qrows=1, fp8_scale=None):
    hkv, dqk, dv = kind["num_kv_heads"], kind["qk_head_dim"], kind["v_head_dim"]
    per_layer = batch * hkv * read_keys(kind, length, qrows) * (dqk + dv) * 2  # bf16 (cuDNN)
    attnc_bytes = per_layer // 2 if fp8_scale is not None else per_layer
    layers = max(2, min(32, math.ceil(LAYER_BYTES / attnc_bytes)))
    stack = [Layer(model, kind, batch, length, page, gen, splits, qrows, fp8_scale)
             for _ in range(layers)]
    stack[0].attnc()
    torch.cuda.synchronize()
    err, nan = stack[0].check(kind)
    r = {"batch": batch, "length": length, "rows": qrows, "layers": layers,
         "kv_MB_per_layer": attnc_bytes / 1e6, "cudnn_kv_MB_per_layer": per_layer / 1e6,
         "splits": stack[0].splits, "rel_err": err, "nan": nan,
         "ok": (not nan) and err < (4e-2 if fp8_scale is not None else 2e-2)}
    fns = [lambda: [l.attnc() for l in stack], lambda: [l.cudnn() for l in stack],
           stack[0].attnc, stack[0].cudnn]
    try:
        times = bv.interleaved_times(fns, rounds)
    except RuntimeError as e:  # cuDNN refusing a shape: time attnc alone
        r["cudnn_error"] = str(e).splitlines()[0][:200]
        times = bv.interleaved_times([fns[0], fns[2]], rounds)
        times = [times[0], None, times[1], None]
    med = lambda ts: sorted(ts)[len(ts) // 2]  # noqa: E731
    r["attnc_us"] = med(times[0]) * 1e3 / layers
    r["attnc_single_us"] = med(times[2]) * 1e3
    r["attnc_TBps"] = attnc_bytes / (r["attnc_us"] * 1e-6) / 1e12
    if times[1] is not None:
        r["cudnn_us"] = med(times[1]) * 1e3 / layers
        r["cudnn_single_us"] = med(times[3]) * 1e3
        r["cudnn_TBps"] = per_layer / (r["cudnn_us"] * 1e-6) / 1e12
        r["ratio"], (r["ratio_min"], r["ratio_max"]) = bv.round_ratios(times[1], times[0])
        r["single_ratio"] = bv.round_ratios(times[3], times[2])[0]
    del stack, fns
    torch.cuda.empty_cache()
    return r


def schedule_line(model, layer):
    """The decode kernel's schedule comment line (its form and tiles)."""
    for line in model.kernel(layer, "attention").source.splitlines():
        if "schedule" in line:
            return line.strip()[:240]
    return None


def copy_TBps():
    n = 1 << 30
    a = torch.empty(n, device=DEV, dtype=torch.uint8)
    b = torch.empty_like(a)
    t = bv.bench(lambda: b.copy_(a))
    del a, b
    return 2 * n / (t * 1e-3) / 1e12


def main():
    argv = sys.argv[1:]
    rounds = bv.rounds_arg(argv) if any(a.startswith("rounds=") for a in argv) else 3
    page = arg(argv, "page", 16, int)
    batches = arg(argv, "B", BATCHES, lambda s: tuple(map(int, s.split(","))))
    lengths = arg(argv, "L", LENGTHS, lambda s: tuple(map(int, s.split(","))))
    names = arg(argv, "models", tuple(MODELS), lambda s: tuple(s.split(",")))
    split_counts = arg(argv, "splits", (None,), lambda s: tuple(map(int, s.split(","))))
    qrows = arg(argv, "rows", 1, int)
    fp8 = arg(argv, "kv", "bf16") == "fp8"
    fp8_scale = FP8_SCALE if fp8 else None
    tiered = arg(argv, "tiered", False, lambda v: "baseline" if v == "baseline" else v == "true")
    res = {"date": time.strftime("%Y-%m-%d %H:%M"), "gpu": torch.cuda.get_device_name(),
           "command": " ".join(["python3", "bench/bench_decode_matrix.py"] + argv),
           "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "page": page, "rounds": rounds, "rows": qrows, "kv": "fp8_e4m3" if fp8 else "bf16", "tiered": tiered,
           "copy_TBps": copy_TBps(), "cells": []}
    gen = torch.Generator(device=DEV).manual_seed(1313)
    models = {}
    with tempfile.TemporaryDirectory() as tmp:
        ctx = attnc.Context(cache_dir=os.environ.get("ATTNC_CACHE_DIR") or tmp)
        for name in names:
            file, kind_name = MODELS[name]
            if file not in models:
                models[file] = attnc.compile(os.path.join(CONFIGS, file), context=ctx, dtype="bf16",
                                             kv_dtype="fp8_e4m3" if fp8 else "bf16",
                                             block_size=page, tiered=tiered)
            model = models[file]
            kind = kind_of(model, kind_name)
            res.setdefault("schedules", {})[name] = schedule_line(model, kind_name)
            print(f"{name}: {res['schedules'][name]}", flush=True)
            for length, batch, splits in itertools.product(lengths, batches, split_counts):
                try:
                    r = cell(model, kind, batch, length, page, rounds, splits, gen, qrows, fp8_scale)
                except attnc.errors.ArgumentError as e:  # a forced split count the plan refuses
                    print(f"{name} B{batch} L{length} splits={splits}: {e}", flush=True)
                    continue
                r["model"] = name
                r["shape"] = (f"{kind['num_q_heads']}/{kind['num_kv_heads']} "
                              f"{kind['qk_head_dim']}/{kind['v_head_dim']}")
                r["attnc_over_copy"] = r["attnc_TBps"] / res["copy_TBps"]
                res["cells"].append(r)
                print(f"{name:<13} {r['shape']:<16} B{batch:<4} L{length:<6} spl {r['splits']:>3} "
                      f"N{r['layers']:<3} {r['kv_MB_per_layer']:>8.1f} MB  attnc {r['attnc_us']:>8.2f} us "
                      f"{r['attnc_TBps']:5.2f} TB/s ({r['attnc_over_copy']:4.0%})  "
                      + (f"cuDNN {r['cudnn_us']:>8.2f} us {r['cudnn_TBps']:5.2f}  = {r['ratio']:.3f}x "
                         f"[{r['ratio_min']:.3f}-{r['ratio_max']:.3f}] single {r['single_ratio']:.3f}x"
                         if "ratio" in r else f"cuDNN: {r.get('cudnn_error')}")
                      + f"  err {r['rel_err']:.1e}{'' if r['ok'] else '  FAIL'}", flush=True)
    res["copy_TBps_end"] = copy_TBps()
    cells = res["cells"]
    ratios = [c["ratio"] for c in cells if "ratio" in c]
    big = [c for c in cells if c["kv_MB_per_layer"] >= 64]
    res["summary"] = {
        "cells": len(cells), "failed_checks": sum(not c["ok"] for c in cells),
        "at_or_above_cudnn": sum(r >= 1.0 for r in ratios), "with_cudnn": len(ratios),
        "geomean_ratio": math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None,
        "big_cells": len(big), "big_at_90pct_copy": sum(c["attnc_over_copy"] >= 0.9 for c in big),
    }
    print(f"{res['gpu']}, copy {res['copy_TBps']:.2f} / {res['copy_TBps_end']:.2f} TB/s (start/end), "
          f"pages of {page}, {rounds} rounds: {json.dumps(res['summary'])}")
    with open(os.path.join(os.environ.get("OUT", "."), "bench_decode_matrix.json"), "w") as f:
        json.dump(res, f, indent=1)
    if res["summary"]["failed_checks"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
