#!/usr/bin/env bash
# The MLA decode's split-KV merge tree on the GPU, in one command (about
# two minutes): its GPU tests (test/gpu/test_mla_decode.py, the merge
# cases: the most splits with 1 and 2 row tiles, B 1 L 32768 at H 128 and
# 16, R 256, fp8, one workspace reused across split counts; all against
# float64 on NaN-poisoned outputs), then the split-KV decode timings
# (bench/bench_mla.py: CUDA-graph replays of one launch).
#
# Usage, from the repository root of the GPU machine:
#   bash bench/check_mla_merge.sh [path/to/libattnc.so]
# The library: the argument, else $ATTNC_LIBRARY, else .carry/merge/libattnc.so
# when present, else build/lib/libattnc.so. The bench's JSON goes to $OUT.
set -u
lib=${1:-${ATTNC_LIBRARY:-}}
if [ -z "$lib" ]; then
  if [ -f .carry/merge/libattnc.so ]; then lib=.carry/merge/libattnc.so; else lib=build/lib/libattnc.so; fi
fi
export ATTNC_LIBRARY=$lib PYTHONPATH=python${PYTHONPATH:+:$PYTHONPATH}
echo "library: $ATTNC_LIBRARY"
status=0
timeout 95 python3 -m pytest -q -x -p no:cacheprovider test/gpu/test_mla_decode.py -k merge || status=$?
echo "before (the one-CTA merge, 2026-12-03 session 9): 128x1x32768 106.8 us, 128x8x8192 68.4 us," \
  "16x8x8192 47.3 us, 128x64x4096 138 us"
timeout 50 python3 bench/bench_mla.py 128x1x32768 128x8x8192 16x8x8192 128x64x4096 || status=$?
exit $status
