#!/usr/bin/env bash
# The test command: set-up, build, then the lit suite, the gtest suite, the
# launch-overhead guard (test/bench/launch_overhead.c: the C plan path must
# cost <= 300 ns over cuLaunchKernel, against the fake driver), the pytest
# suite and the fuzz targets (scripts/fuzz.sh, 60 s each). Prints
# each suite's counts and a closing "N passed, N failed, N skipped" line
# (skipped: lit's unsupported, gtest's and pytest's skipped, among them the
# GPU tests on a machine without one); exits non-zero if any test fails.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${ATTNC_BUILD_DIR:-$root/build}

"$root/scripts/build.sh" || exit 1

passed=0
failed=0
skipped=0
status=0

echo "== lit suite"
lit_log=$(mktemp)
/usr/lib/llvm-22/bin/lit -sv "$build/test" 2>&1 | tee "$lit_log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
lit_passed=$(sed -n 's/^ *Passed *: *\([0-9]*\).*/\1/p' "$lit_log" | tail -1)
lit_failed=$(awk -F: '/^ *(Failed|Unresolved|Timed Out|Unexpectedly Passed) *:/ {n += $2} END {print n + 0}' "$lit_log")
lit_skipped=$(sed -n 's/^ *Unsupported *: *\([0-9]*\).*/\1/p' "$lit_log" | tail -1)
passed=$((passed + ${lit_passed:-0}))
failed=$((failed + ${lit_failed:-0}))
skipped=$((skipped + ${lit_skipped:-0}))
echo "lit: ${lit_passed:-0} passed, ${lit_failed:-0} failed, ${lit_skipped:-0} unsupported"

echo "== gtest suite"
gtest_log=$(mktemp)
g_passed=0
g_failed=0
g_skipped=0
for binary in "$build"/bin/attnc-*tests; do
  echo "-- $(basename "$binary")"
  "$binary" --gtest_brief=1 2>&1 | tee "$gtest_log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  n=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\?\..*/\1/p' "$gtest_log")
  f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\?, listed below.*/\1/p' "$gtest_log")
  g_passed=$((g_passed + ${n:-0}))
  k=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\?.*/\1/p' "$gtest_log" | head -1)
  g_failed=$((g_failed + ${f:-0}))
  g_skipped=$((g_skipped + ${k:-0}))
done
passed=$((passed + g_passed))
failed=$((failed + g_failed))
skipped=$((skipped + g_skipped))
echo "gtest: $g_passed passed, $g_failed failed, $g_skipped skipped"

echo "== launch overhead (test/bench/launch_overhead.c, fake driver)"
bench_log=$(mktemp)
"$build/bin/attnc-launch-overhead" 2>&1 | tee "$bench_log"
bench_status=${PIPESTATUS[0]}
if grep -q '^launch_overhead: skipped' "$bench_log"; then
  skipped=$((skipped + 1))
elif [[ $bench_status -eq 0 ]]; then
  passed=$((passed + 1))
else
  failed=$((failed + 1))
  status=1
fi
rm -f "$bench_log"

echo "== pytest suite (python/tests; test/gpu skips without a GPU)"
py_log=$(mktemp)
(cd "$root" && PYTHONPATH="$root/python" ATTNC_LIBRARY="$build/lib/libattnc.so" \
  python3 -m pytest -q -rs python/tests test/gpu 2>&1) | tee "$py_log"
py_status=${PIPESTATUS[0]}
# pytest's closing line: "N passed, M skipped in ..." (and "K failed" when any).
py_passed=$(tail -1 "$py_log" | grep -oE '[0-9]+ passed' | grep -oE '[0-9]+')
py_failed=$(tail -1 "$py_log" | grep -oE '[0-9]+ (failed|error|errors)' | grep -oE '[0-9]+' | paste -sd+ | awk '{s=0; n=split($0,a,"+"); for(i=1;i<=n;i++) s+=a[i]; print s}')
py_skipped=$(tail -1 "$py_log" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+')
[[ $py_status -eq 0 ]] || status=1
passed=$((passed + ${py_passed:-0}))
failed=$((failed + ${py_failed:-0}))
skipped=$((skipped + ${py_skipped:-0}))
echo "pytest: ${py_passed:-0} passed, ${py_failed:-0} failed, ${py_skipped:-0} skipped (GPU tests: skipped: no GPU unless one is present)"

# The libFuzzer targets (test/fuzz): their own build (build-fuzz, clang-22
# with ASan and UBSan), the regression inputs, then 60 s of fuzzing each. A
# crash, sanitizer report, leak or timeout is a failed target.
# ATTNC_FUZZ_SECONDS=0 skips this step.
fuzz_seconds=${ATTNC_FUZZ_SECONDS:-60}
fuzz_log=$(mktemp)
if [[ $fuzz_seconds != 0 ]]; then
  echo "== fuzz ($fuzz_seconds s each)"
  "$root/scripts/fuzz.sh" "$fuzz_seconds" 2>&1 | tee "$fuzz_log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
  f_passed=$(sed -n 's/^fuzz: \([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$fuzz_log" | tail -1)
  f_failed=$(sed -n 's/^fuzz: \([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$fuzz_log" | tail -1)
  passed=$((passed + ${f_passed:-0}))
  failed=$((failed + ${f_failed:-0}))
  echo "fuzz: ${f_passed:-0} targets passed, ${f_failed:-0} failed"
else
  echo "== fuzz: skipped (ATTNC_FUZZ_SECONDS=0)"
fi

rm -f "$lit_log" "$gtest_log" "$py_log" "$fuzz_log"
if [[ $status -ne 0 && $failed -eq 0 ]]; then
  failed=1 # a runner failed without a countable test failure (crash, build)
fi
echo "attnc: $passed passed, $failed failed, $skipped skipped"
exit $status
