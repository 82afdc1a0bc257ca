#!/usr/bin/env bash
# The main job: build attnc, then the ahead-of-time steps on the bundled
# default model configuration (a 192/128 model). Until codegen lands this is
# `attnc layout` (segments and shards) and `attnc import` (the attn IR).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNC_BUILD_DIR:-$root/build}
config=${1:-$root/examples/configs/default.json}

"$root/scripts/build.sh" >&2
"$build/bin/attnc" layout "$config" --tp 4
"$build/bin/attnc" import "$config"
