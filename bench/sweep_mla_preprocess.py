"""MLA preprocess schedule sweep (attn.mla_preprocess): times a grid of
explicit #attn.mla_preprocess_schedule variants against the kernel
attn-specialize chooses and against a device copy of the same byte count,
in one process, and checks that every variant writes bit-for-bit what the
chosen kernel writes.

Shape: DeepSeek-V3's (bench/bench_mla_preprocess.py's: R 512, P 64, gptj rope
de-interleaved, yarn, bf16 activations and cache, 64-token pages, random
slots), H 128 and 16; T 16384 with contiguous tensors and with an engine's
views (q_rope = q[..., 128:] of [T, H, 192], q_rope_out = q_abs[..., 512:]
of [T, H, 576]), and T 1 and 64 (views).

Variants are schedules written into the IR (attn-specialize keeps an explicit
schedule); the knobs (dialect/include/attnc/Dialect/Attn/AttnAttrs.td):
warps_per_token, tokens_per_block, min_blocks_per_sm (the launch bound: the
registers a thread may take), token_steps (tokens a token place handles in
turn, the next one's loads in flight during this one's math and stores),
l2_prefetch (ld.global.L2::256B row loads), streaming_stores (st.global.cs),
stage_in_shared (row loads as cp.async copies into shared memory, as many
steps in flight as fit 48 KB). "chosen" is what attn-specialize picks
(passes/lib/Specialize.cpp, the kMla* constants); the 2026-12-03 kernel is
w8_b3 (H 128) and w1_t2_b7 (H 16).

Timing, each a CUDA graph (no launch gaps), min and median over `--reps`:
  - cold: one launch after L2 is filled with clean lines (a read of a
    256 MB buffer), so neither the inputs nor dirty lines of earlier work
    sit in L2;
  - stream: a graph of 8 back-to-back launches over the same tensors, per
    launch (the steady state an engine's step sees; at T 16384 the working
    set, 124-594 MB, is beyond L2).
The floor is a torch copy moving the same bytes (bytes / 2 read, bytes / 2
written), timed the same two ways in the same run; `x floor` is the
variant's time over the copy's.

Usage (on the GPU machine):
    PYTHONPATH=python ATTNC_LIBRARY=build/lib/libattnc.so \\
        python3 bench/sweep_mla_preprocess.py [--reps N] [--only H128,H16] [--quick]
JSON to $OUT/sweep_mla_preprocess.json (default: the working directory).
"""
import argparse
import json
import os
import sys
import time

import torch

import attnc

DEV = "cuda"
R, P, NOPE, BS = 512, 64, 128, 64
YARN = ("#attn.rope_scaling<kind = yarn, factor = 40.0, original_max_position = 4096, "
        "mscale = 1.0, mscale_all_dim = 1.0>")
STREAM_LAUNCHES = 8
FLUSH_BYTES = 256 << 20


def schedule(wpt, tpb, min_blocks, steps=1, l2=False, cs=False, sh=False, vw=8):
    """The #attn.mla_preprocess_schedule text of one variant."""
    threads = 32 * (wpt + 1) * tpb
    text = (f"vector_width = {vw}, warps_per_token = {wpt}, tokens_per_block = {tpb}, "
            f"threads_per_block = {threads}, min_blocks_per_sm = {min_blocks}")
    if steps != 1:
        text += f", token_steps = {steps}"
    if l2:
        text += ", l2_prefetch = true"
    if cs:
        text += ", streaming_stores = true"
    if sh:
        text += ", stage_in_shared = true"
    return text


def knobs(wpt, tpb, min_blocks, steps=1, l2=False, cs=False, sh=False):
    return dict(wpt=wpt, tpb=tpb, min_blocks=min_blocks, steps=steps, l2=l2, cs=cs, sh=sh)


# (name, knobs or None for attn-specialize's choice). "sh": rows staged in
# shared memory (cp.async); "sN": token_steps N; "bN": min_blocks_per_sm N
# (the launch bound: 65536 / (N x threads) registers a thread); "wN": query
# warps a token; "tN": token places a block. Registers / spill bytes from
# nvcc 13.0 for sm_90a when this list was written, in the comments.
VARIANTS = {
    128: [
        ("chosen", None),                                  # = w8_b3_s2_sh: 72 r, no spill
        ("w8_b3", knobs(8, 1, 3)),                         # the 2026-12-03 kernel: 72 r
        ("w8_b3_l2_cs", knobs(8, 1, 3, l2=True, cs=True)),
        ("w8_b4", knobs(8, 1, 4)),                         # 56 r, spills 48 B
        ("w8_b2_s2", knobs(8, 1, 2, steps=2)),             # registers double buffer: 96 r
        ("w4_b4", knobs(4, 1, 4)),                         # 96 r
        ("w4_b5", knobs(4, 1, 5)),                         # 72 r, spills 76 B
        ("w8_b3_s2_sh_l2", knobs(8, 1, 3, steps=2, sh=True, l2=True)),
        ("w8_b3_s2_sh_cs", knobs(8, 1, 3, steps=2, sh=True, cs=True)),
        ("w8_b3_s4_sh", knobs(8, 1, 3, steps=4, sh=True)),  # 2 stages rolling: 72 r
        ("w8_b3_s4_sh_l2", knobs(8, 1, 3, steps=4, sh=True, l2=True)),
        ("w8_b3_s8_sh", knobs(8, 1, 3, steps=8, sh=True)),
        ("w8_b4_s2_sh", knobs(8, 1, 4, steps=2, sh=True)),  # 56 r, spills 28 B
        ("w8_b3_s1_sh", knobs(8, 1, 3, steps=1, sh=True)),  # staging alone: 66 r
        ("w4_b4_s4_sh", knobs(4, 1, 4, steps=4, sh=True)),  # 96 r
    ],
    16: [
        ("chosen", None),                                  # = w1_t2_b7_s2_sh: 72 r
        ("w1_t2_b7", knobs(1, 2, 7)),                      # the 2026-12-03 kernel: 72 r
        ("w1_t2_b7_l2_cs", knobs(1, 2, 7, l2=True, cs=True)),
        ("w1_t2_b8", knobs(1, 2, 8)),                      # 64 r, spills 14 B
        ("w1_t2_b5_s2", knobs(1, 2, 5, steps=2)),          # registers double buffer: 96 r
        ("w2_t1_b10", knobs(2, 1, 10)),                    # 64 r, spills 2 B
        ("w1_t2_b7_s2_sh_l2", knobs(1, 2, 7, steps=2, sh=True, l2=True)),
        ("w1_t2_b7_s2_sh_cs", knobs(1, 2, 7, steps=2, sh=True, cs=True)),
        ("w1_t2_b7_s4_sh", knobs(1, 2, 7, steps=4, sh=True)),
        ("w1_t2_b7_s8_sh", knobs(1, 2, 7, steps=8, sh=True)),  # 5 stages rolling
        ("w1_t2_b7_s4_sh_l2_cs", knobs(1, 2, 7, steps=4, sh=True, l2=True, cs=True)),
        ("w1_t4_b3_s2_sh", knobs(1, 4, 3, steps=2, sh=True)),  # 80 r
        ("w1_t1_b12_s4_sh", knobs(1, 1, 12, steps=4, sh=True)),
        ("w2_t1_b10_s4_sh", knobs(2, 1, 10, steps=4, sh=True)),
    ],
}


def layer_ir(heads, sched_text=None):
    width = R + P
    sched = f",\n       schedule = #attn.mla_preprocess_schedule<{sched_text}>" if sched_text else ""
    return f"""
func.func @mla(%kv_a: tensor<?x{width}xbf16>, %q_pe: tensor<?x{heads}x{P}xbf16>,
    %slots: tensor<?xi64>, %pos: tensor<?xi64>, %w: tensor<{R}xbf16>,
    %cache: tensor<?x{BS}x{width}xbf16>)
    -> (tensor<?x{width}xbf16>, tensor<?x{heads}x{P}xbf16>, tensor<?x{BS}x{width}xbf16>) {{
  %lat, %qr, %c = attn.mla_preprocess %kv_a, %q_pe, %slots, %pos, %w into %cache
      {{num_heads = {heads}, kv_lora_rank = {R}, rope_head_dim = {P},
       norm_eps = 1.0e-6 : f64, rope_style = #attn.rope_style<gptj>,
       rope_deinterleave = true, theta = 1.0e4 : f64, scaling = {YARN}{sched}}}
      : tensor<?x{width}xbf16>, tensor<?x{heads}x{P}xbf16>, tensor<?xi64>,
        tensor<?xi64>, tensor<{R}xbf16> into tensor<?x{BS}x{width}xbf16>
  return %lat, %qr, %c : tensor<?x{width}xbf16>, tensor<?x{heads}x{P}xbf16>,
      tensor<?x{BS}x{width}xbf16>
}}
"""


def case_bytes(T, H):
    """Bytes that must move: kv_a, q_rope, the norm weight read; latent_out,
    q_rope_out, the cache row written; positions and slots read."""
    return (T * (R + P) * 2 + T * H * P * 2 + R * 2
            + T * (R + P) * 2 + T * H * P * 2 + T * (R + P) * 2 + T * 16)


class Case:
    """One shape's inputs (shared by every variant) and outputs (reset per
    variant: poisoned with 0xFF, NaN in bf16)."""

    def __init__(self, T, H, contig):
        self.T, self.H, self.contig = T, H, contig
        self.kv_a = torch.randn(T, R + P, device=DEV, dtype=torch.bfloat16) * 3
        self.weight = (1 + 0.2 * torch.randn(R, device=DEV)).to(torch.bfloat16)
        self.pos = torch.randint(0, 163840, (T,), device=DEV)
        nb = T // BS + 8
        self.cache = torch.empty(nb, BS, R + P, device=DEV, dtype=torch.bfloat16)
        self.slots = torch.randperm(nb * BS, device=DEV)[:T]
        if T > 8:
            self.slots[torch.randperm(T, device=DEV)[:T // 16]] = -1  # padding
        self.latent_out = torch.empty(T, R + P, device=DEV, dtype=torch.bfloat16)
        if contig:
            self.q_rope = torch.randn(T, H, P, device=DEV, dtype=torch.bfloat16)
            self.q_out_storage = torch.empty(T, H, P, device=DEV, dtype=torch.bfloat16)
            self.q_rope_out = self.q_out_storage
        else:
            self.q_rope = torch.randn(T, H, NOPE + P, device=DEV, dtype=torch.bfloat16)[..., NOPE:]
            self.q_out_storage = torch.empty(T, H, R + P, device=DEV, dtype=torch.bfloat16)
            self.q_rope_out = self.q_out_storage[..., R:]
        self.bytes = case_bytes(T, H)

    def poison(self):
        for t in (self.cache, self.latent_out, self.q_out_storage):
            t.view(torch.uint8).fill_(0xFF)

    def run(self, model):
        model.mla_preprocess("mla", self.kv_a, self.q_rope, slot_mapping=self.slots,
                             positions=self.pos, kv_norm_weight=self.weight,
                             latent_cache=self.cache, latent_out=self.latent_out,
                             q_rope_out=self.q_rope_out)

    def outputs(self):
        """The written bytes (views' unwritten columns included: they must
        stay poisoned alike)."""
        return [t.view(torch.uint8).clone()
                for t in (self.cache, self.latent_out, self.q_out_storage)]


class Timer:
    def __init__(self, reps):
        self.reps = reps
        self.flush_buf = torch.ones(FLUSH_BYTES // 4, device=DEV, dtype=torch.float32)

    def _graph(self, fn, launches):
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            fn()  # warm: module load and argument checks outside the capture
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(launches):
                fn()
        torch.cuda.synchronize()
        return graph

    def measure(self, fn):
        """{cold_us: [min, median], stream_us: [min, median]} for one call."""
        out = {}
        for mode, launches in (("cold", 1), ("stream", STREAM_LAUNCHES)):
            graph = self._graph(fn, launches)
            graph.replay()  # warm
            times = []
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            for _ in range(self.reps):
                if mode == "cold":
                    self.flush_buf.sum()  # clean lines in L2, no write-back debt
                start.record()
                graph.replay()
                end.record()
                end.synchronize()
                times.append(start.elapsed_time(end) * 1e3 / launches)
            times.sort()
            out[f"{mode}_us"] = [times[0], times[len(times) // 2]]
            del graph
        return out


def in_flight_estimate(H, k):
    """Bytes of row loads a schedule has in flight per SM at most: blocks a
    SM (the launch bound, fewer when the shared-memory stages do not fit
    228 KB) x token places x steps in flight x bytes read per token. The
    held vectors mirror the kernel's kHeld at DeepSeek's dims (R 512, P 64,
    width 8): max(2 x min(units a query thread, 4), 4 latent vectors)."""
    if k is None:
        return None
    per_token = (R + P) * 2 + H * P * 2
    threads = 32 * (k["wpt"] + 1) * k["tpb"]
    units = -(-(H * P // 16) // (32 * k["wpt"]))
    held = max(2 * min(units, 4), 4)
    blocks, steps_in_flight = k["min_blocks"], 1
    if k["sh"]:
        tables = 2 * k["tpb"] * k["steps"] * (P // 2) * 4
        stage = threads * (held * 16 + 8)
        steps_in_flight = min(k["steps"], (48 * 1024 - tables) // stage, 8)
        per_block = steps_in_flight * stage + tables + 1024  # + the system's 1 KB
        blocks = min(blocks, 228 * 1024 // per_block)
    elif k["steps"] > 1:
        steps_in_flight = 2
    return blocks * k["tpb"] * steps_in_flight * per_token


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--only", default="", help="comma list of H128,H16")
    parser.add_argument("--quick", action="store_true", help="T 16384 views only, 10 reps")
    args = parser.parse_args()
    reps = 10 if args.quick else args.reps
    out_dir = os.environ.get("OUT", ".")
    torch.manual_seed(0)
    timer = Timer(reps)
    res = {"date": time.strftime("%Y-%m-%d %H:%M"), "gpu": torch.cuda.get_device_name(),
           "command": " ".join(sys.argv), "reps": reps, "stream_launches": STREAM_LAUNCHES,
           "variants": {}, "cases": {}}
    heads = [128, 16]
    if args.only:
        heads = [int(h.strip()[1:]) for h in args.only.split(",")]
    shapes = [(16384, False), (16384, True)] + ([] if args.quick else [(64, False), (1, False)])
    if args.quick:
        shapes = [(16384, False)]
    table = []
    for H in heads:
        models = {}
        for name, k in VARIANTS[H]:
            text = None if k is None else schedule(**k)
            start = time.perf_counter()
            try:
                models[name] = attnc.compile_ir(layer_ir(H, text))
                err = None
            except Exception as e:  # a variant that does not build is reported, not fatal
                err = f"{type(e).__name__}: {e}"
            printed = None
            if err is None:  # the generated source's header says the schedule
                printed = next((line[len("// schedule: "):]
                                for line in models[name].kernels[0].source.splitlines()
                                if line.startswith("// schedule: ")), None)
                print(f"H{H} {name:20} {printed}", flush=True)
            res["variants"][f"H{H}/{name}"] = {
                "schedule": text or "attn-specialize's choice", "printed": printed, "knobs": k,
                "compile_ms": (time.perf_counter() - start) * 1e3, "error": err,
                "in_flight_bytes_per_sm_estimate": in_flight_estimate(H, k)}
            if err:
                print(f"H{H} {name}: compile failed: {err[:300]}", flush=True)
        for T, contig in shapes:
            case_name = f"H{H}_T{T}_{'contig' if contig else 'views'}"
            case = Case(T, H, contig)
            n = case.bytes // 2
            src = torch.empty(n, dtype=torch.uint8, device=DEV).random_(0, 255)
            dst = torch.empty_like(src)
            copy = timer.measure(lambda: dst.copy_(src))
            del src, dst
            entry = {"bytes": case.bytes, "copy": copy, "variants": {}}
            res["cases"][case_name] = entry
            print(f"\n{case_name}: {case.bytes / 1e6:.2f} MB, copy cold {copy['cold_us'][0]:.2f} us "
                  f"stream {copy['stream_us'][0]:.2f} us "
                  f"({case.bytes / copy['stream_us'][0] / 1e6:.2f} TB/s)", flush=True)
            reference = None
            for name, _ in VARIANTS[H]:
                if name not in models:
                    continue
                case.poison()
                case.run(models[name])
                torch.cuda.synchronize()
                got = case.outputs()
                if reference is None:
                    reference = got  # the first variant is attn-specialize's choice
                    same = True
                else:
                    same = all(torch.equal(a, b) for a, b in zip(reference, got))
                nan_free = (not case.latent_out.isnan().any().item()
                            and not case.q_rope_out.isnan().any().item())
                r = {"bitwise_equal_to_chosen": same, "outputs_finite": nan_free}
                r.update(timer.measure(lambda: case.run(models[name])))
                for mode in ("cold", "stream"):
                    r[f"{mode}_x_floor"] = r[f"{mode}_us"][0] / copy[f"{mode}_us"][0]
                r["stream_TBps"] = case.bytes / r["stream_us"][0] / 1e6
                entry["variants"][name] = r
                table.append((case_name, name, r))
                print(f"  {name:20} cold {r['cold_us'][0]:8.2f} us ({r['cold_x_floor']:.2f}x)  "
                      f"stream {r['stream_us'][0]:8.2f} us ({r['stream_x_floor']:.2f}x, "
                      f"{r['stream_TBps']:.2f} TB/s)  {'ok' if same and nan_free else 'MISMATCH'}",
                      flush=True)
            del case
            torch.cuda.empty_cache()
        del models

    with open(os.path.join(out_dir, "sweep_mla_preprocess.json"), "w") as f:
        json.dump(res, f, indent=1)
    print(f"\n{res['gpu']}, {res['date']}, min of {reps} (median in the JSON)")
    print(f"{'case':22} {'variant':20} {'cold us':>9} {'x floor':>8} {'stream us':>10} "
          f"{'x floor':>8} {'TB/s':>6} {'same':>5}")
    for case_name, name, r in table:
        print(f"{case_name:22} {name:20} {r['cold_us'][0]:9.2f} {r['cold_x_floor']:8.2f} "
              f"{r['stream_us'][0]:10.2f} {r['stream_x_floor']:8.2f} {r['stream_TBps']:6.2f} "
              f"{'yes' if r['bitwise_equal_to_chosen'] and r['outputs_finite'] else 'NO':>5}")
    print("\nBest per case (stream):")
    for case_name, entry in res["cases"].items():
        ok = {n: r for n, r in entry["variants"].items()
              if r["bitwise_equal_to_chosen"] and r["outputs_finite"]}
        if ok:
            best = min(ok, key=lambda n: ok[n]["stream_us"][0])
            chosen = entry["variants"].get("chosen")
            print(f"  {case_name:22} {best:20} {ok[best]['stream_x_floor']:.2f}x floor"
                  + (f" (chosen {chosen['stream_x_floor']:.2f}x)" if chosen else ""))
    bad = [(c, n) for c, n, r in table
           if not (r["bitwise_equal_to_chosen"] and r["outputs_finite"])]
    if bad:
        print(f"\nMISMATCH against the chosen kernel: {bad}")
        sys.exit(1)


if __name__ == "__main__":
    main()
