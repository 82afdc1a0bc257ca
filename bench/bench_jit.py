"""JIT latency per bundled model: cold time to the first launch, cold time to
the optimised kernels, warm (disk) and hot (memory) compile times.

Every measurement that needs a new process gets one (``--child``), so the
in-process memo and NVRTC's and the driver's state never leak between
rows:

  cold ........... a fresh cache directory, ``attnc.compile(config,
                   tiered=True)``, then one launch of every kernel
                   of the model on zero-filled tensors and a synchronize:
                   ``first_launch_ms`` from the compile call to the end of
                   that synchronize (CUDA is initialised before the clock
                   starts; the Python import is not counted). Then
                   ``Model.wait_optimised()``: ``optimised_ms`` from the same
                   start. Then another launch (the launch boundary where the
                   optimised tier is taken) and the tiers seen then.
  cold_untiered .. (``--untiered``) the same with ``tiered=False`` (the
                   default): the compile waits for the optimised kernels.
  warm ........... a new process on the cold run's cache directory:
                   ``attnc.compile(config)`` (the disk model index and the
                   kernel cache, no compiler, no NVRTC): ``warm_ms``; then
                   ``hot_ms``, the same call again in that process (the
                   package's and the C API's memo: a new Model over the same
                   kernels), and ``hot_c_us``, the C API's
                   ``attnc_model_compile_config`` on the same text in the
                   same context (its memo, through ctypes).

Without a GPU (or with ``--no-launch``) nothing is launched: the cold row's
``first_launch_ms`` is then the time to the compile's return
(``first_ready_ms``). Times are the median over ``--repeat`` runs (each its
own processes and directory).

Usage: PYTHONPATH=python ATTNC_LIBRARY=build/lib/libattnc.so \\
    python3 bench/bench_jit.py [--configs examples/configs/*.json]
    [--repeat 3] [--untiered] [--no-launch] [--json PATH]
JSON to PATH, else $OUT/bench_jit.json, else ./bench_jit.json.
"""
import argparse
import ctypes
import glob
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# Symbol values of the launches: one token of one sequence, two cache blocks.
SIZES = {"num_tokens": 1, "num_seqs": 1, "num_seqs_plus_one": 2, "num_blocks": 2,
         "max_blocks_per_seq": 1}


# ---- child side ----------------------------------------------------------------

def _torch_if_gpu(no_launch):
    if no_launch:
        return None
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _tensor(torch, param, device):
    """A tensor for one pointer parameter of the ABI: zeros, except the
    sequence bookkeeping (one sequence of one token in block 0) and scales 1."""
    shape = [SIZES[d] if isinstance(d, str) else d for d in param.get("shape", [])]
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32,
             "i32": torch.int32, "i64": torch.int64,
             "fp8_e4m3": getattr(torch, "float8_e4m3fn", None)}[param["dtype"]]
    name = param["name"]
    if name == "query_start_loc":
        return torch.tensor([0, 1], dtype=dtype, device=device)
    if name in ("seq_lens",):
        return torch.ones(shape, dtype=dtype, device=device)
    if name in ("k_scale", "v_scale"):
        return torch.ones(shape, dtype=dtype, device=device)
    return torch.zeros(shape, dtype=dtype, device=device)


def _launch_all(torch, model):
    """One launch of every kernel of the model (checked path), then a sync."""
    device = torch.device("cuda", torch.cuda.current_device())
    for kernel in model.kernels:
        args = {p["name"]: _tensor(torch, p, device) for p in kernel.abi["params"]
                if p["kind"] == "pointer"}
        if kernel.kind == "preprocess":
            qkv = args.pop("qkv")
            model.preprocess(kernel.layer, qkv, **args)
        elif kernel.kind == "attention":
            args["out"] = args.pop("output")
            query = args.pop("query")
            model.attention(kernel.layer, query, **args)
    torch.cuda.synchronize()


def child(mode, config, cache_dir, no_launch):
    os.environ["ATTNC_CACHE_DIR"] = cache_dir
    torch = _torch_if_gpu(no_launch)
    if torch is not None:
        torch.cuda.init()
        torch.zeros(1, device="cuda")  # the CUDA context, before the clock
        torch.cuda.synchronize()
    import attnc
    result = {"mode": mode, "launched": torch is not None}
    if mode in ("cold", "cold_untiered"):
        tiered = mode == "cold"
        start = time.perf_counter()
        model = attnc.compile(config, tiered=tiered)
        result["first_ready_ms"] = (time.perf_counter() - start) * 1e3
        result["tiers_at_first_launch"] = model.tiers
        if torch is not None:
            _launch_all(torch, model)
        result["first_launch_ms"] = (time.perf_counter() - start) * 1e3
        model.wait_optimised()
        result["optimised_ms"] = (time.perf_counter() - start) * 1e3
        if torch is not None:
            _launch_all(torch, model)  # the launch boundary: the swap
        result["tiers_after"] = model.tiers
        result["kernels"] = len(model.kernels)
        result["outcomes"] = [k.build_reports()[0]["outcome"] for k in model.kernels]
    elif mode == "warm":
        with open(config, encoding="utf-8") as f:
            text = f.read()
        start = time.perf_counter()
        model = attnc.compile(config)
        result["warm_ms"] = (time.perf_counter() - start) * 1e3
        result["outcomes"] = [k.build_reports()[0]["outcome"] for k in model.kernels]
        result["tiers"] = model.tiers
        hot = []
        for _ in range(20):
            start = time.perf_counter()
            again = attnc.compile(config)
            hot.append((time.perf_counter() - start) * 1e3)
        assert [k._set for k in again.kernels] == [k._set for k in model.kernels]
        result["hot_ms"] = statistics.median(hot)
        # The C API's memo, without the package's: the same text and options.
        from attnc._library import ModelOptions
        context = model.context
        lib = context._lib
        options = ModelOptions()
        lib.attnc_model_options_initialize(ctypes.byref(options))
        options.arch = b"sm_90a"
        encoded = text.encode("utf-8")
        hot_c = []
        for _ in range(200):
            handle = ctypes.c_void_p()
            start = time.perf_counter()
            status = lib.attnc_model_compile_config(ctypes.c_void_p(context.handle),
                                                    encoded, ctypes.byref(options),
                                                    ctypes.byref(handle))
            hot_c.append((time.perf_counter() - start) * 1e6)
            lib.check(status)
            lib.attnc_model_destroy(handle)
        result["hot_c_us"] = statistics.median(hot_c[1:])  # the first fills the memo
        if torch is not None:
            start = time.perf_counter()
            _launch_all(torch, model)
            result["warm_first_launch_ms"] = result["warm_ms"] + (
                time.perf_counter() - start) * 1e3
    print("BENCH_JIT_RESULT " + json.dumps(result), flush=True)


# ---- parent side ---------------------------------------------------------------

def run_child(mode, config, cache_dir, no_launch):
    command = [sys.executable, os.path.abspath(__file__), "--child", mode,
               "--config", config, "--cache-dir", cache_dir]
    if no_launch:
        command.append("--no-launch")
    done = subprocess.run(command, capture_output=True, text=True)
    for line in done.stdout.splitlines():
        if line.startswith("BENCH_JIT_RESULT "):
            return json.loads(line[len("BENCH_JIT_RESULT "):])
    raise RuntimeError(f"{mode} {config} failed (exit {done.returncode}):\n"
                       f"{done.stdout}\n{done.stderr}")


def measure(config, repeat, untiered, no_launch):
    runs = {"cold": [], "warm": [], "cold_untiered": []}
    for _ in range(repeat):
        directory = tempfile.mkdtemp(prefix="attnc-bench-jit-")
        try:
            runs["cold"].append(run_child("cold", config, directory, no_launch))
            runs["warm"].append(run_child("warm", config, directory, no_launch))
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        if untiered:
            directory = tempfile.mkdtemp(prefix="attnc-bench-jit-")
            try:
                runs["cold_untiered"].append(
                    run_child("cold_untiered", config, directory, no_launch))
            finally:
                shutil.rmtree(directory, ignore_errors=True)

    def median(mode, key):
        values = [r[key] for r in runs[mode] if key in r]
        return round(statistics.median(values), 3) if values else None

    row = {
        "config": os.path.relpath(config, REPO),
        "kernels": runs["cold"][0]["kernels"],
        "launched": runs["cold"][0]["launched"],
        "cold_first_launch_ms": median("cold", "first_launch_ms"),
        "cold_first_ready_ms": median("cold", "first_ready_ms"),
        "cold_optimised_ms": median("cold", "optimised_ms"),
        "tiers_at_first_launch": runs["cold"][0]["tiers_at_first_launch"],
        "tiers_after": runs["cold"][0]["tiers_after"],
        "warm_ms": median("warm", "warm_ms"),
        "warm_first_launch_ms": median("warm", "warm_first_launch_ms"),
        "warm_outcomes": runs["warm"][0]["outcomes"],
        "hot_ms": median("warm", "hot_ms"),
        "hot_c_us": median("warm", "hot_c_us"),
        "runs": runs,
    }
    if untiered:
        row["cold_untiered_first_launch_ms"] = median("cold_untiered", "first_launch_ms")
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", nargs="*",
                        default=sorted(glob.glob(os.path.join(REPO, "examples", "configs",
                                                              "*.json"))))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--untiered", action="store_true",
                        help="also the cold time with tiered=False")
    parser.add_argument("--no-launch", action="store_true",
                        help="compile only, even with a GPU")
    parser.add_argument("--json", default=None)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--config", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.config, args.cache_dir, args.no_launch)
        return

    torch = _torch_if_gpu(args.no_launch)
    results = {"date": time.strftime("%Y-%m-%d"),
               "gpu": torch.cuda.get_device_name(0) if torch else None,
               "host": platform.node(), "cpus": os.cpu_count(),
               "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
               "repeat": args.repeat, "rows": []}
    header = (f"{'config':32s} {'kern':>4s} {'first launch':>12s} {'optimised':>10s} "
              f"{'warm':>8s} {'hot':>8s} {'hot C':>8s}  tiers at first launch")
    print(header)
    print("-" * len(header))
    for config in args.configs:
        row = measure(config, args.repeat, args.untiered, args.no_launch)
        results["rows"].append(row)
        baseline = sorted(k for k, t in row["tiers_at_first_launch"].items()
                          if t == "baseline")
        first = row["cold_first_launch_ms"]
        print(f"{os.path.basename(config):32s} {row['kernels']:4d} "
              f"{first / 1e3:10.3f} s {row['cold_optimised_ms'] / 1e3:8.3f} s "
              f"{row['warm_ms']:6.2f}ms {row['hot_ms'] * 1e3:6.1f}us "
              f"{row['hot_c_us']:6.1f}us  "
              f"{len(baseline)} baseline" + (f" ({', '.join(baseline)})" if baseline else ""),
              flush=True)
        if args.untiered:
            print(f"{'':32s}      untiered cold: "
                  f"{row['cold_untiered_first_launch_ms'] / 1e3:.3f} s")
    print("first launch: compile + one launch of every kernel + sync"
          if torch else "no GPU: 'first launch' is the compile's return (nothing launched)")
    out = args.json or os.path.join(os.environ.get("OUT", "."), "bench_jit.json")
    with open(out, "w") as f:
        json.dump(results, f, indent=1)
    print(f"JSON: {out}")


if __name__ == "__main__":
    main()
