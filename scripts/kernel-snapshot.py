#!/usr/bin/env python3
"""Writes every kernel attnc generates for a fixed set of inputs, as its SASS
(and its ABI), into one folder, so that a refactor of the emitter or of the
device templates can be checked against the code it generated before:

    scripts/kernel-snapshot.py before/      # on the old tree
    scripts/kernel-snapshot.py after/       # on the new one
    diff -r before/sass after/sass          # empty: the same machine code

The inputs: every bundled config (examples/configs) with its own cache and
with fp8, for sm_90a and sm_86 (the mma.sync form), and every compile key of
the GPU suite (test/gpu) for sm_90a. Needs build/lib/libattnc.so (or
$ATTNC_LIBRARY) and cuobjdump on PATH or in $CUOBJDUMP (pip's
nvidia-cuda-cuobjdump has one); no GPU.
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))
os.environ.setdefault("ATTNC_LIBRARY", str(ROOT / "build" / "lib" / "libattnc.so"))

import attnc  # noqa: E402


def inputs():
    """(name, config, options) for every input of the snapshot."""
    for path in sorted((ROOT / "examples" / "configs").glob("*.json")):
        config = json.loads(path.read_text())
        for arch in ("sm_90a", "sm_86"):
            for kv in (None, "fp8"):
                options = {"arch": arch}
                if kv:
                    options["kv_dtype"] = kv
                yield f"{path.stem}-{arch}-{kv or 'same'}", config, options
    import attnc_gpu_cases as cases
    keys = set()
    for group in (cases.preprocess_cases(), cases.attention_cases(),
                  cases.split_kv_cases(), cases.counting_cases()):
        for case in group:
            keys.add(case.compile_key)
    for spec_json, options in sorted(keys):
        digest = hashlib.sha256((spec_json + repr(options)).encode()).hexdigest()[:12]
        yield f"gpu-{digest}", json.loads(spec_json), dict(options)


def sass(cuobjdump: str, cubin: bytes) -> str:
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(cubin)
        f.flush()
        text = subprocess.run([cuobjdump, "-sass", f.name], check=True,
                              capture_output=True, text=True).stdout
    return text


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    cuobjdump = os.environ.get("CUOBJDUMP") or shutil.which("cuobjdump")
    if not cuobjdump:
        print("kernel-snapshot: cuobjdump not found (set $CUOBJDUMP)", file=sys.stderr)
        return 2
    for sub in ("sass", "abi", "source"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    # $ATTNC_SNAPSHOT_CACHE keeps the cubins between snapshots (the cache key
    # hashes the source and the device headers, so only changed kernels
    # compile again).
    cache = os.environ.get("ATTNC_SNAPSHOT_CACHE") or str(out / "cache")
    context = attnc.Context(cache_dir=cache)
    todo = list(inputs())

    def one(item):
        name, config, options = item
        try:
            model = attnc.compile(config, context=context, **options)
        except attnc.AttncError as error:
            return name, f"error: {str(error).splitlines()[0]}"
        return name, model

    results = {}
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        for name, model in pool.map(one, todo):
            results[name] = model
    count = 0
    for name, model in sorted(results.items()):
        if isinstance(model, str):
            (out / "sass" / f"{name}.error").write_text(model + "\n")
            continue
        for kernel in model.kernels:
            stem = f"{name}.{kernel.name}"
            (out / "source" / f"{stem}.cu").write_text(kernel.source)
            (out / "abi" / f"{stem}.json").write_text(
                json.dumps(kernel.abi, indent=1, sort_keys=True) + "\n")
            (out / "sass" / f"{stem}.sass").write_text(sass(cuobjdump, kernel.cubin()))
            count += 1
    if cache == str(out / "cache"):
        shutil.rmtree(cache, ignore_errors=True)
    print(f"kernel-snapshot: {count} kernels of {len(results)} inputs in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
