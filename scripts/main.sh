#!/usr/bin/env bash
# The main job: build attnc, then the ahead-of-time compile of the bundled
# default model configuration (MiMo-V2-Flash, a 192/128 model): the attn
# pipeline, CUDA emission and NVRTC for sm_90a, written to a model bundle.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNC_BUILD_DIR:-$root/build}
config=${1:-$root/examples/configs/default.json}

"$root/scripts/build.sh" >&2
out=${ATTNC_OUT:-$build/default-model}
"$build/bin/attnc" compile "$config" --arch sm_90a -o "$out"
