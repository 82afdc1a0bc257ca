#!/usr/bin/env bash
# Installs what attnc's build and tests need on a Debian 12 machine.
# Idempotent: when every package is already at the pinned version it only
# checks, which takes well under a second.
set -euo pipefail

# One LLVM/MLIR version, pinned: the dialect's ODS and the C++ API follow it.
LLVM_MAJOR=22
LLVM_VERSION="1:22.1.8-1~deb12u1"

pinned=(
  "libmlir-${LLVM_MAJOR}-dev=${LLVM_VERSION}"
  "mlir-${LLVM_MAJOR}-tools=${LLVM_VERSION}"
  "llvm-${LLVM_MAJOR}-dev=${LLVM_VERSION}"
  "llvm-${LLVM_MAJOR}-tools=${LLVM_VERSION}"
)
unpinned=(libzstd-dev ninja-build cmake g++ libgtest-dev nlohmann-json3-dev python3)

SUDO=
[[ $(id -u) -eq 0 ]] || SUDO=sudo

missing=()
for spec in "${pinned[@]}"; do
  name=${spec%%=*}
  want=${spec#*=}
  have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
  [[ "$have" == "install ok installed $want" ]] || missing+=("$spec")
done
for name in "${unpinned[@]}"; do
  dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q '^install ok installed' \
    || missing+=("$name")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# pytest for the Python package's tests, for whichever python3 is first on
# PATH: pip where it may install (a pyenv or venv Python), else Debian's
# package for the system Python (which refuses pip installs, PEP 668).
if ! python3 -c 'import pytest' >/dev/null 2>&1; then
  echo "setup: installing pytest" >&2
  if ! python3 -m pip install -q pytest >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    ${SUDO:-} apt-get install -y -qq --no-install-recommends python3-pytest >/dev/null
  fi
  python3 -c 'import pytest' || { echo "setup: error: pytest could not be installed for $(command -v python3)" >&2; exit 1; }
fi

# The CUDA 13 toolkit (NVRTC and headers) is expected on the machine, not
# installed here: it is not in Debian's archive.
cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [[ ! -f "$cuda_home/include/nvrtc.h" ]] ||
   ! ls "$cuda_home"/lib64/libnvrtc.so.13* >/dev/null 2>&1; then
  echo "setup: error: the CUDA 13 toolkit was not found at $cuda_home" \
       "(need include/nvrtc.h and lib64/libnvrtc.so.13); install it or set CUDA_HOME" >&2
  exit 1
fi
