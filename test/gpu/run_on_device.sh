#!/usr/bin/env bash
# Runs the GPU correctness suite and the package's CPU tests on a GPU machine
# (python3 with torch, no network), from the repository root, against the
# libattnc.so in build/lib (built elsewhere and carried along).
#
#   test/gpu/run_on_device.sh [extra pytest arguments]
#
# Environment: ATTNC_LIBRARY (default build/lib/libattnc.so), ATTNC_CACHE_DIR
# (default a fresh /tmp/attnc-gpu-cache.XXXX), OUT (if set, the JUnit XML and
# the log are written there).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

export ATTNC_LIBRARY="${ATTNC_LIBRARY:-$PWD/build/lib/libattnc.so}"
export ATTNC_CACHE_DIR="${ATTNC_CACHE_DIR:-$(mktemp -d /tmp/attnc-gpu-cache.XXXXXX)}"
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1

echo "== attnc GPU suite"
echo "library:   $ATTNC_LIBRARY"
echo "cache dir: $ATTNC_CACHE_DIR"
if [[ ! -f "$ATTNC_LIBRARY" ]]; then
  echo "error: $ATTNC_LIBRARY not found (build the attnc target, carry build/lib)" >&2
  exit 2
fi
python3 - <<'EOF'
import sys
try:
    import torch
    print(f"python {sys.version.split()[0]}, torch {torch.__version__}, "
          f"CUDA {torch.version.cuda}, devices: "
          + ", ".join(torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())))
except Exception as error:  # report and let pytest say what is skipped
    print(f"python {sys.version.split()[0]}, torch unavailable: {error}")
EOF
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader

log_dir="${OUT:-$(mktemp -d /tmp/attnc-gpu-log.XXXXXX)}"
mkdir -p "$log_dir"
start=$(date +%s)
python3 -m pytest -q -rfEs --durations=15 --junitxml="$log_dir/attnc-gpu-junit.xml" \
  test/gpu python/tests "$@" 2>&1 | tee "$log_dir/attnc-gpu-pytest.log"
status=${PIPESTATUS[0]}
elapsed=$(( $(date +%s) - start ))

echo
echo "== summary (${elapsed}s, pytest exit status $status)"
python3 - "$log_dir/attnc-gpu-junit.xml" <<'EOF'
import sys
import xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception as error:
    print(f"no JUnit report: {error}")
    sys.exit(0)
suites = [root] if root.tag == "testsuite" else list(root)
by_file = {}
for suite in suites:
    for case in suite.iter("testcase"):
        name = case.get("classname", "").split(".")[-1] or "?"
        outcome = ("failed" if case.find("failure") is not None or case.find("error") is not None
                   else "skipped" if case.find("skipped") is not None else "passed")
        counts = by_file.setdefault(name, {"passed": 0, "failed": 0, "skipped": 0})
        counts[outcome] += 1
total = {"passed": 0, "failed": 0, "skipped": 0}
for name, counts in sorted(by_file.items()):
    print(f"  {name:32s} {counts['passed']:4d} passed {counts['failed']:4d} failed "
          f"{counts['skipped']:4d} skipped")
    for key in total:
        total[key] += counts[key]
print(f"{total['passed']} passed, {total['failed']} failed, {total['skipped']} skipped")
EOF
echo "log: $log_dir/attnc-gpu-pytest.log"
exit "$status"
