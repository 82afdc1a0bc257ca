#!/usr/bin/env bash
# Builds and runs the libFuzzer targets (test/fuzz/README.md).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# Installs clang-22 and its sanitizer runtimes (on top of scripts/setup.sh),
# configures a build directory of its own, ${ATTNC_FUZZ_BUILD_DIR:-build-fuzz}
# (ATTNC_FUZZ=ON, clang-22: the project's libraries with ASan and UBSan), and
# builds the targets. Then for each target: replays its regression inputs
# (test/fuzz/regressions/<target>/) once, and fuzzes for SECONDS (default 60;
# ATTNC_FUZZ_SECONDS) from its seed corpus with its dictionary. New corpus
# entries go to a scratch directory, never into the repository. A crash,
# sanitizer report, leak or timeout fails the target; its input is saved
# under <build-fuzz>/artifacts/<target>/.
#
# Prints one line per target and a closing "fuzz: N passed, N failed" line;
# exits non-zero if any target fails.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNC_FUZZ_BUILD_DIR:-$root/build-fuzz}
seconds=${1:-${ATTNC_FUZZ_SECONDS:-60}}
shift $(($# > 0 ? 1 : 0))
targets=("$@")
((${#targets[@]})) || targets=(config-import kernel-abi model-manifest attn-ir)

# clang-22 at the version of the installed LLVM (scripts/setup.sh pins it).
LLVM_VERSION="1:22.1.8-1~deb12u1"
"$root/scripts/setup.sh" || exit 1
SUDO=
[[ $(id -u) -eq 0 ]] || SUDO=sudo
missing=()
for name in clang-22 libclang-rt-22-dev; do
  have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
  [[ "$have" == "install ok installed $LLVM_VERSION" ]] || missing+=("$name=$LLVM_VERSION")
done
if ((${#missing[@]})); then
  echo "fuzz: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    { echo "fuzz: error: could not install ${missing[*]}" >&2; exit 1; }
fi

if [[ ! -f "$build/build.ninja" ]]; then
  # The log goes inside the build folder, never beside it in the tree.
  mkdir -p "$build"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DATTNC_FUZZ=ON -DATTNC_BUILD_TESTS=OFF \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; exit 1; }
fi
jobs=${ATTNC_BUILD_JOBS:-$(nproc)}
cmake --build "$build" -j "$jobs" --target attnc-fuzzers || exit 1

# Symbolized reports; UB already aborts (-fno-sanitize-recover). A leak fails
# the run (libFuzzer's -detect_leaks is on by default under ASan).
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:symbolize=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/lib/llvm-22/bin/llvm-symbolizer}

passed=0
failed=0
for target in "${targets[@]}"; do
  binary="$build/bin/attnc-fuzz-$target"
  if [[ ! -x "$binary" ]]; then
    echo "fuzz: $target: FAILED (no binary $binary)"
    failed=$((failed + 1))
    continue
  fi
  artifacts="$build/artifacts/$target"
  scratch=$(mktemp -d)
  log="$build/fuzz-$target.log"
  mkdir -p "$artifacts"
  # libFuzzer flags: inputs above 8 KiB are slow to mutate and not more
  # interesting; one input may take at most 20 s.
  flags=(-max_len=8192 -timeout=20 -rss_limit_mb=4096 -print_final_stats=1
         -artifact_prefix="$artifacts/")
  [[ -f "$root/test/fuzz/$target.dict" ]] && flags+=(-dict="$root/test/fuzz/$target.dict")

  # The inputs that once crashed first: each must now run cleanly.
  regressions=()
  if [[ -d "$root/test/fuzz/regressions/$target" ]]; then
    while IFS= read -r -d '' f; do regressions+=("$f"); done < <(
      find "$root/test/fuzz/regressions/$target" -type f ! -name '*.md' -print0 | sort -z)
  fi
  status=0
  if ((${#regressions[@]})); then
    "$binary" "${flags[@]}" "${regressions[@]}" >"$log.replay" 2>&1 || status=$?
    if ((status)); then
      tail -40 "$log.replay"
      echo "fuzz: $target: FAILED replaying test/fuzz/regressions/$target (exit $status; log $log.replay)"
      failed=$((failed + 1))
      rm -rf "$scratch"
      continue
    fi
  fi

  start=$SECONDS
  "$binary" "${flags[@]}" -max_total_time="$seconds" \
    "$scratch" "$root/test/fuzz/corpus/$target" >"$log" 2>&1 || status=$?
  elapsed=$((SECONDS - start))
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  if ((status)); then
    grep -E '^(==[0-9]+==|SUMMARY|.*runtime error|attnc fuzz invariant|artifact_prefix|Test unit written|#[0-9]+ +0x)' "$log" | head -40
    echo "fuzz: $target: FAILED (exit $status after ${elapsed} s; log $log; input under $artifacts/)"
    failed=$((failed + 1))
  else
    echo "fuzz: $target: passed (${runs:-?} runs in ${elapsed} s, ${rate:-?} exec/s, ${#regressions[@]} regression inputs)"
    passed=$((passed + 1))
  fi
  rm -rf "$scratch"
done

echo "fuzz: $passed passed, $failed failed"
((failed == 0))
