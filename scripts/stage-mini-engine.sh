#!/usr/bin/env bash
# Copies what test/gpu/test_mini_engine.py needs (the package, the example,
# the bundled configs, the GPU suite, libattnc.so) into DEST, for a device
# run from another checkout (a git-ignored folder there, named in carry).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=${1:?usage: stage-mini-engine.sh DEST}
rm -rf "$dest"
mkdir -p "$dest/build/lib" "$dest/examples" "$dest/test"
cp -r "$root/python" "$dest/python"
cp -r "$root/examples/configs" "$root/examples/mini_engine" "$dest/examples/"
cp -r "$root/test/gpu" "$dest/test/gpu"
cp "$root/build/lib/libattnc.so" "$dest/build/lib/"
find "$dest" -name __pycache__ -prune -exec rm -rf {} +
rm -rf "$dest/python/build" "$dest/python/attnc/_lib"
du -sh "$dest"
