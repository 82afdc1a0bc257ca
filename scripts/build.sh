#!/usr/bin/env bash
# Configures (once) and builds attnc into ${ATTNC_BUILD_DIR:-build}. Runs the
# set-up first, so it works on a fresh Debian 12 machine.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNC_BUILD_DIR:-$root/build}

"$root/scripts/setup.sh"

if [[ ! -f "$build/build.ninja" ]]; then
  # The log goes inside the build folder, never beside it in the tree.
  mkdir -p "$build"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; exit 1; }
fi
# Two jobs: MLIR translation units need about 1 GiB each.
jobs=${ATTNC_BUILD_JOBS:-$(nproc)}
cmake --build "$build" -j "$jobs"
