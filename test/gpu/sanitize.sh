#!/usr/bin/env bash
# compute-sanitizer over one case of every kernel family and form, each
# checked against its reference as in the GPU suite:
#   preprocess: no stage, q/k norm (rms, gemma), rope (neox, gptj, partial,
#     mla, yarn), the gate segment (qkvg, interleaved), bf16/fp16 caches and
#     fp8 with scales, 1..4096 tokens;
#   attention: the CUDA-core form (v > 256), the tensor-core form with
#     mma.sync (sm_90, and fp8 caches widened in shared memory) and with wgmma
#     (sm_90a), split-KV with its in-kernel merge (forced and by the rule,
#     fp8 among them), sliding window, sinks, gate, softcap;
#   the warp-specialised kernel: varlen (192/128, 80/48) and paged prefill
#     (chunked with window, sinks and gate; 80/48).
# Tools: memcheck, racecheck, synccheck, initcheck; only attnc's kernels
# (names contain "attn__") are instrumented, except by initcheck, which must
# see torch's kernels write the inputs.
#
#   test/gpu/sanitize.sh [tool ...]     (default: all four)
#
# Environment as test/gpu/run_on_device.sh; OUT (if set) receives a log per
# tool and sanitize-summary.txt. Exit status non-zero if any tool reports an
# error or a test fails under it.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

export ATTNC_LIBRARY="${ATTNC_LIBRARY:-$PWD/build/lib/libattnc.so}"
export ATTNC_CACHE_DIR="${ATTNC_CACHE_DIR:-$(mktemp -d /tmp/attnc-sanitize-cache.XXXXXX)}"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
sanitizer=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
out=${OUT:-$(mktemp -d /tmp/attnc-sanitize.XXXXXX)}
tools=("$@")
((${#tools[@]})) || tools=(memcheck racecheck synccheck initcheck)

pre=test/gpu/test_preprocess.py::test_preprocess
att=test/gpu/test_attention.py::test_attention
split=test/gpu/test_split_kv.py::test_forced_split_count
ws=test/gpu/test_varlen_attention.py::test_varlen_attention
prefill=test/gpu/test_attention.py::test_prefill_kernel
cases=(
  "$pre[d2x3-h1x1-none-none-gnone-bf16-kvbf16-t1-b16]"
  "$pre[d192x128-h64x4-rms-neox-gqkvg-fp16-kvfp8-t1-b64]"
  "$pre[d192x128-h8x1-gemma-gptj-ginterleaved-bf16-kvbf16-t4096-b16]"
  "$pre[d96x64-h64x4-rms-mla-gqkvg-bf16-kvfp8-t4096-b16]"
  "$pre[d128x128-h1x1-rms-partial-gnone-fp16-kvfp8-t300-b64]"
  "$pre[d128x128-h16x2-none-yarn-gnone-bf16-kvbf16-t4096-b16]"
  "$att[d320x384-h8x2-bf16-kvbf16-b16-mixed]"
  "$att[d384x384-h4x2-fp16-kvfp8-b64-mixed-w128-sinks-gate]"
  "$att[d2x3-h16x2-bf16-kvfp8-b16-mixed-w128-gate-value_scale]"
  "$att[d128x128-h32x4-bf16-kvbf16-b16-mixed-sm_90-softcap]"
  "$att[d192x128-h64x4-bf16-kvfp8-b64-mixed-w128-sinks]"
  "$att[d128x128-h16x2-bf16-kvbf16-b16-prefill-softcap]"
  "$att[d192x128-h16x2-bf16-kvbf16-b16-mixed-softcap]"
  "$att[d64x64-h64x4-bf16-kvbf16-b16-mixed-w128-sinks]"
  "$att[d192x128-h16x2-bf16-kvfp8-b64-long_mixed]"
  "$split[d192x128-h16x2-bf16-kvbf16-b64-split_append-splits7]"
  "$split[d128x128-h32x4-bf16-kvbf16-b16-split_short-w1000-sinks-splitsmax]"
  "$ws[bf16_h16_16_d192_128_sm_90a-varlen_16]"
  "$ws[bf16_h12_3_d80_48_sm_90a-chunked]"
  "$prefill[d192x128-h16x2-bf16-kvbf16-b16-chunked_prefill-w1000-sinks-gate]"
  "$prefill[d80x48-h12x3-bf16-kvbf16-b16-prefill-value_scale]"
)
# ATTNC_SANITIZE_CASES (space-separated pytest ids) replaces the list.
if [[ -n ${ATTNC_SANITIZE_CASES:-} ]]; then
  read -r -a cases <<< "$ATTNC_SANITIZE_CASES"
fi

echo "== compute-sanitizer over ${#cases[@]} cases: ${tools[*]}"
"$sanitizer" --version | tail -1
status=0
summary="$out/sanitize-summary.txt"
: > "$summary"
for tool in "${tools[@]}"; do
  log="$out/sanitize-$tool.log"
  start=$(date +%s)
  # initcheck tracks which bytes were written: torch's kernels must be
  # tracked too, or the inputs they filled read as uninitialized.
  filter=(--kernel-name kns=attn__)
  [[ $tool == initcheck ]] && filter=()
  "$sanitizer" --tool "$tool" "${filter[@]}" --error-exitcode 86 \
    --print-limit 50 --target-processes all \
    python3 -m pytest -q -p no:cacheprovider "${cases[@]}" > "$log" 2>&1
  rc=$?
  elapsed=$(( $(date +%s) - start ))
  errors=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
  hazards=$(sed -n 's/.*RACECHECK SUMMARY: \([0-9]*\) hazard.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
  tests=$(grep -E '[0-9]+ (passed|failed)' "$log" | tail -1)
  line="$tool: exit $rc, $errors errors, $hazards racecheck hazards, ${elapsed}s; pytest: ${tests:-no summary}"
  echo "$line" | tee -a "$summary"
  [[ $rc -eq 0 ]] || status=1
done
echo "logs: $out"
exit $status
