"""Host cost of one launch: attnc's engine path (plan/run), its torch ops,
its checked path and the C plan, beside torch's own ops, in one run.

Each row is host microseconds per call back to back: N calls (default
3000) with no synchronisation between them, one synchronize at the end,
the minimum over 3 repetitions (the GPU work of these small launches is
shorter than their host cost, so the loop measures the host side; a row
whose GPU time per call exceeds its host time is flagged). Rows, at T=1 and
T=16 query rows (decode of T sequences, qwen3-8b's shapes: 32/8 heads, 128
dims, q/k norm, rope, bf16 paged cache of 16-token blocks, 16 keys each:
few, so that the GPU work of a call stays below its host cost and the loop
measures the host; each row also gives the GPU time per call from a CUDA
graph of 20 calls, and a row whose GPU time is not below its host time is
flagged):

  preprocess / attention, plan.run ........ attnc.PreprocessPlan / AttentionPlan
  preprocess / attention, torch op ........ torch.ops.attnc.* (backend named)
  preprocess / attention, checked ......... Model.preprocess / Model.attention
  C: cuLaunchKernel ....................... the attention kernel's CUfunction
                                            launched through ctypes
  C: attnc_launch_plan_run ................ the same launch through the plan
                                            (ctypes both: the difference is
                                            attnc's C cost)
  F.rms_norm, SDPA decode ................. torch, same shapes
  graph replay ............................ one CUDA graph of preprocess +
                                            attention, replay cost per call
  mla_preprocess plan.run / torch op /
    checked ............................... MLA preprocess of the decode
                                            step's tokens (same model)
  latent_attention plan.run / torch op /
    checked ............................... MLA absorbed decode (deepseek-v3
                                            at TP 8: 16 heads, 576/512, bf16
                                            latent cache of 64-token pages,
                                            64 keys per sequence) through
                                            attnc.LatentAttentionPlan,
                                            torch.ops.attnc.latent_attention
                                            and Model.latent_attention

Usage (GPU machine): PYTHONPATH=python ATTNC_LIBRARY=build/lib/libattnc.so \
    python3 bench/bench_launch.py [--n 3000] [--backend auto|cpp|python]
JSON to $OUT/bench_launch.json (or ./bench_launch.json).
"""
import argparse
import ctypes
import json
import os
import platform
import sys
import time

import torch
import torch.nn.functional as F

import attnc
import attnc.torch_ops as ops

HQ, HKV, D, BS, KEYS = 32, 8, 128, 16, 16
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                      "examples", "configs", "qwen3-8b.json")
MLA_CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                          "examples", "configs", "deepseek-v3.json")
MLA_TP, MLA_KEYS = 8, 64


def per_call_us(fn, n, reps=3):
    """Host us per call: min over reps of (n back-to-back calls + one
    sync) / n. Valid while the GPU keeps up (see gpu_us): with kernels
    longer than the host cost the launch queue fills and the loop measures
    the GPU instead."""
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        best = min(best, (t1 - t0) / n * 1e6)
    return best


def capture(fn, calls=1):
    """A CUDA graph of `calls` calls of fn, after one warm-up call on a side
    stream (module loads and first-use allocations stay out of the capture)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    return graph


def gpu_us(fn, calls=20, reps=20):
    """GPU us per call: a CUDA graph of `calls` calls, replayed (median of
    reps); None when the call cannot be captured."""
    try:
        graph = capture(fn, calls)
    except Exception:  # noqa: BLE001 - reported as None
        torch.cuda.synchronize()
        return None
    graph.replay()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / calls)
    return sorted(times)[len(times) // 2]


def row(fn, n, capture=True):
    return per_call_us(fn, n), (gpu_us(fn) if capture else None)


def make_step(T, dev):
    W = HQ * D + 2 * HKV * D
    blocks_per_seq = KEYS // BS
    nb = T * blocks_per_seq + 4
    g = torch.Generator(device=dev).manual_seed(T)
    step = {
        "qkv": torch.randn(T, W, device=dev, dtype=torch.bfloat16, generator=g),
        "positions": torch.full((T,), KEYS - 1, device=dev, dtype=torch.int64),
        "k_cache": torch.randn(nb, BS, HKV, D, device=dev, dtype=torch.bfloat16, generator=g),
        "v_cache": torch.randn(nb, BS, HKV, D, device=dev, dtype=torch.bfloat16, generator=g),
        "qw": torch.randn(D, device=dev, dtype=torch.bfloat16, generator=g),
        "kw": torch.randn(D, device=dev, dtype=torch.bfloat16, generator=g),
        "block_tables": torch.arange(T * blocks_per_seq, device=dev,
                                     dtype=torch.int32).view(T, blocks_per_seq),
        "seq_lens": torch.full((T,), KEYS, device=dev, dtype=torch.int32),
        "query_start_loc": torch.arange(T + 1, device=dev, dtype=torch.int32),
        "q_out": torch.empty(T, HQ, D, device=dev, dtype=torch.bfloat16),
        "out": torch.empty(T, HQ, D, device=dev, dtype=torch.bfloat16),
    }
    bt = step["block_tables"]
    step["slots"] = (bt[:, -1].to(torch.int64) * BS + BS - 1).contiguous()
    return step


def make_mla_step(mla, layer, T, dev):
    """One MLA decode step of T sequences (one query row, MLA_KEYS keys
    each), shapes from the kernel's ABI."""
    param = {p["name"]: p for p in mla.kernel(layer, "latent_attention").abi["params"]}
    _, heads, width = param["query"]["shape"]
    _, page, _ = param["latent_cache"]["shape"]
    rank = param["output"]["shape"][2]
    blocks_per_seq = -(-MLA_KEYS // page)
    g = torch.Generator(device=dev).manual_seed(100 + T)
    return {
        "query": torch.randn(T, heads, width, device=dev, generator=g).to(torch.bfloat16),
        "latent_cache": torch.randn(T * blocks_per_seq + 4, page, width, device=dev,
                                    generator=g).to(torch.bfloat16),
        "block_tables": torch.arange(T * blocks_per_seq, device=dev,
                                     dtype=torch.int32).view(T, blocks_per_seq),
        "seq_lens": torch.full((T,), MLA_KEYS, device=dev, dtype=torch.int32),
        "query_start_loc": torch.arange(T + 1, device=dev, dtype=torch.int32),
        "out": torch.empty(T, heads, rank, device=dev, dtype=torch.bfloat16),
    }


def mla_rows(mla, layer, T, dev, n, backend):
    """mla_preprocess and latent_attention through the plan, the torch op and
    the checked path."""
    m = make_mla_step(mla, layer, T, dev)
    plan = mla.latent_attention_plan(layer, latent_cache=m["latent_cache"])
    plan.plan(T, T)
    binding = ops.binding(mla, layer, "latent_attention")
    ws = ops.workspace(mla, layer, kind="latent_attention")
    step = (m["query"], m["block_tables"], m["seq_lens"], m["query_start_loc"])
    op = torch.ops.attnc.latent_attention
    rows = mla_preprocess_rows(mla, layer, m, T, dev, n, backend)
    return rows | {
        "latent_attention plan.run": row(lambda: plan.run(*step, out=m["out"]), n),
        f"latent_attention torch op ({backend})": row(lambda: op(
            binding, m["query"], m["latent_cache"], *step[1:], None, m["out"], ws, 0), n),
        "latent_attention checked (Model.latent_attention)": row(
            lambda: mla.latent_attention(
                layer, m["query"], latent_cache=m["latent_cache"],
                block_tables=m["block_tables"], seq_lens=m["seq_lens"],
                query_start_loc=m["query_start_loc"], out=m["out"], workspace=ws),
            max(n // 3, 300)),
    }


def mla_preprocess_rows(mla, layer, m, T, dev, n, backend):
    """mla_preprocess through the plan, the torch op and the checked path,
    into the decode step's latent cache (one token per sequence, its last
    cache row)."""
    param = {p["name"]: p for p in mla.kernel(layer, "mla_preprocess").abi["params"]}
    width = param["kv_a"]["shape"][1]
    _, heads, rope = param["q_rope"]["shape"]
    rank = param["kv_norm_weight"]["shape"][0]
    g = torch.Generator(device=dev).manual_seed(200 + T)
    kv_a = torch.randn(T, width, device=dev, generator=g).to(torch.bfloat16)
    q_rope = torch.randn(T, heads, rope, device=dev, generator=g).to(torch.bfloat16)
    weight = torch.randn(rank, device=dev, generator=g).to(torch.bfloat16)
    page = m["latent_cache"].shape[1]
    slots = (m["block_tables"][:, -1].to(torch.int64) * page + MLA_KEYS - 1).contiguous()
    positions = torch.full((T,), MLA_KEYS - 1, device=dev, dtype=torch.int64)
    latent_out, q_rope_out = torch.empty_like(kv_a), torch.empty_like(q_rope)
    cache = m["latent_cache"]
    plan = mla.mla_preprocess_plan(layer, kv_norm_weight=weight, latent_cache=cache)
    binding = ops.binding(mla, layer, "mla_preprocess")
    op = torch.ops.attnc.mla_preprocess
    return {
        "mla_preprocess plan.run": row(lambda: plan.run(
            kv_a, q_rope, slots, positions, latent_out=latent_out,
            q_rope_out=q_rope_out), n),
        f"mla_preprocess torch op ({backend})": row(lambda: op(
            binding, kv_a, q_rope, slots, positions, weight, cache, None, latent_out,
            q_rope_out), n),
        "mla_preprocess checked (Model.mla_preprocess)": row(
            lambda: mla.mla_preprocess(
                layer, kv_a, q_rope, slot_mapping=slots, positions=positions,
                kv_norm_weight=weight, latent_cache=cache, latent_out=latent_out,
                q_rope_out=q_rope_out), max(n // 3, 300)),
    }


def c_rows(model, layer, s, n):
    """cuLaunchKernel vs attnc_launch_plan_run on the same CUfunction, both
    through ctypes with pre-built argument arrays."""
    lib = attnc._library.library()
    plan = model.attention_plan(layer, k_cache=s["k_cache"], v_cache=s["v_cache"])
    plan.run(s["q_out"], s["block_tables"], s["seq_lens"], s["query_start_loc"],
             out=s["out"])  # writes the value buffer once
    cuda = ctypes.CDLL("libcuda.so.1")
    kernel = model.kernel(layer, "attention")
    cubin = kernel.cubin("sm_90a")
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    assert cuda.cuModuleLoadData(ctypes.byref(module), cubin) == 0
    assert cuda.cuModuleGetFunction(ctypes.byref(function), module,
                                    kernel.name.encode()) == 0
    abi = plan._kplan.abi
    smem = int(abi["dynamic_shared_memory_bytes"])
    assert cuda.cuFuncSetAttribute(function, 8, smem) == 0  # MAX_DYNAMIC_SHARED_SIZE_BYTES
    values = plan._values
    rule = abi["grid"]
    T = s["q_out"].shape[0]
    splits = values[plan._kplan.param_names.index("num_kv_splits")]
    gx = -(-T * rule[0]["multiplier"] // rule[0]["divisor"]) + T
    grid = (gx, rule[1] if isinstance(rule[1], int) else 1, splits)
    block = abi["block"]
    args = plan._args
    stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
    launch = cuda.cuLaunchKernel
    launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    g = [ctypes.c_uint(v) for v in grid]
    b = [ctypes.c_uint(v) for v in block]
    sm = ctypes.c_uint(smem)
    run = lib.attnc_launch_plan_run
    handle = plan._cplan.handle
    args_ptr = ctypes.addressof(args)
    scalars = ctypes.addressof(plan._launch_scalars)
    raw = stream.value

    def direct():
        launch(function, g[0], g[1], g[2], b[0], b[1], b[2], sm, stream, args, None)

    def via_plan():
        run(handle, raw, args_ptr, scalars)

    rows = {"C: cuLaunchKernel (ctypes)": row(direct, n, capture=False),
            "C: attnc_launch_plan_run (ctypes)": row(via_plan, n, capture=False)}
    cuda.cuModuleUnload(module)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--build-directory", default=None)
    args = parser.parse_args()
    dev = torch.device("cuda", 0)
    torch.cuda.set_device(dev)
    t0 = time.perf_counter()
    backend = ops.load(args.backend, build_directory=args.build_directory)
    op_build_s = time.perf_counter() - t0
    model = attnc.compile(CONFIG)
    layer = "full_attention"
    mla = attnc.compile(MLA_CONFIG, tp=MLA_TP)
    mla_layer = next(k.layer for k in mla.kernels if k.kind == "latent_attention")
    results = {"date": time.strftime("%Y-%m-%d"), "gpu": torch.cuda.get_device_name(0),
               "python": platform.python_version(), "torch": torch.__version__,
               "n": args.n, "op_backend": backend, "op_build_s": round(op_build_s, 1),
               "mla": {"config": "deepseek-v3", "tp": MLA_TP, "keys_per_seq": MLA_KEYS},
               "rows": {}}
    for T in (1, 16):
        s = make_step(T, dev)
        pre = model.preprocess_plan(layer, k_cache=s["k_cache"], v_cache=s["v_cache"],
                                    q_norm_weight=s["qw"], k_norm_weight=s["kw"])
        att = model.attention_plan(layer, k_cache=s["k_cache"], v_cache=s["v_cache"])
        att.plan(T, T)
        ws = att.workspace
        pb = ops.binding(model, layer, "preprocess")
        ab = ops.binding(model, layer, "attention")
        q = s["q_out"]
        rows = {}
        rows["preprocess plan.run"] = row(lambda: pre.run(
            s["qkv"], s["slots"], s["positions"], q_out=q), args.n)
        rows["attention plan.run"] = row(lambda: att.run(
            q, s["block_tables"], s["seq_lens"], s["query_start_loc"], out=s["out"]),
            args.n)
        tp, ta = torch.ops.attnc.preprocess, torch.ops.attnc.attention
        rows[f"preprocess torch op ({backend})"] = row(lambda: tp(
            pb, s["qkv"], s["slots"], s["k_cache"], s["v_cache"], s["positions"],
            s["qw"], s["kw"], None, None, q, None), args.n)
        rows[f"attention torch op ({backend})"] = row(lambda: ta(
            ab, q, s["k_cache"], s["v_cache"], s["block_tables"], s["seq_lens"],
            s["query_start_loc"], None, None, None, None, s["out"], ws, 0), args.n)
        rows["preprocess checked (Model.preprocess)"] = row(lambda: model.preprocess(
            layer, s["qkv"], slot_mapping=s["slots"], k_cache=s["k_cache"],
            v_cache=s["v_cache"], positions=s["positions"], q_norm_weight=s["qw"],
            k_norm_weight=s["kw"], q_out=q), max(args.n // 3, 300))
        rows["attention checked (Model.attention)"] = row(lambda: model.attention(
            layer, q, k_cache=s["k_cache"], v_cache=s["v_cache"],
            block_tables=s["block_tables"], seq_lens=s["seq_lens"],
            query_start_loc=s["query_start_loc"], out=s["out"], workspace=ws),
            max(args.n // 3, 300))
        rows.update(c_rows(model, layer, s, args.n))
        x = torch.randn(T * HQ, D, device=dev, dtype=torch.bfloat16)
        w = torch.randn(D, device=dev, dtype=torch.bfloat16)
        rows["torch F.rms_norm"] = row(lambda: F.rms_norm(x, (D,), w, 1e-6), args.n)
        qs = torch.randn(T, HQ, 1, D, device=dev, dtype=torch.bfloat16)
        ks = torch.randn(T, HKV, KEYS, D, device=dev, dtype=torch.bfloat16)
        vs = torch.randn(T, HKV, KEYS, D, device=dev, dtype=torch.bfloat16)
        rows["torch SDPA decode"] = row(lambda: F.scaled_dot_product_attention(
            qs, ks, vs, enable_gqa=True), args.n)

        def step_fn():
            pre.run(s["qkv"], s["slots"], s["positions"], q_out=q)
            att.run(q, s["block_tables"], s["seq_lens"], s["query_start_loc"], out=s["out"])
        graph = capture(step_fn)
        rows["graph replay (preprocess + attention)"] = row(graph.replay, args.n,
                                                            capture=False)
        rows.update(mla_rows(mla, mla_layer, T, dev, args.n, backend))
        results["rows"][f"T={T}"] = {
            k: {"host_us": round(h, 2), "gpu_us": None if g is None else round(g, 2),
                "gpu_bound": g is not None and g >= h}
            for k, (h, g) in rows.items()}
        print(f"== T={T}, {KEYS} keys ({MLA_KEYS} for latent_attention; host us per call, "
              "back to back, min of 3; GPU us per call in a graph)")
        for k, (h, g) in rows.items():
            flag = "  (GPU-bound: host figure is an upper bound)" if g is not None and g >= h else ""
            gpu = "    -  " if g is None else f"{g:7.2f}"
            print(f"  {k:45s} {h:7.2f}  {gpu}{flag}")
        c = rows["C: attnc_launch_plan_run (ctypes)"][0] - rows["C: cuLaunchKernel (ctypes)"][0]
        print(f"  attnc C plan over cuLaunchKernel: {c:+.2f} us")
        results["rows"][f"T={T}"]["c_plan_over_cuLaunchKernel_us"] = round(c, 3)
    out = os.path.join(os.environ.get("OUT", "."), "bench_launch.json")
    with open(out, "w") as f:
        json.dump(results, f, indent=1)
    print("wrote", out)


if __name__ == "__main__":
    sys.exit(main())
