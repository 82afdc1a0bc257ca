"""GPU correctness suite: fixtures and skipping.

Without torch or a CUDA device every test here is skipped with the reason
"skipped: no GPU" (CI). With one, the configs the collected cases need are
compiled once per session, in parallel, into $ATTNC_CACHE_DIR (or a
session temp dir).
"""

import concurrent.futures
import json
import os
import sys
import zlib
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
for path in (str(REPO / "python"), str(HERE)):
    if path not in sys.path:
        sys.path.insert(0, path)

try:
    import torch
    HAVE_GPU = bool(torch.cuda.is_available())
except ImportError:
    torch = None
    HAVE_GPU = False

SKIP_REASON = "skipped: no GPU"

#: test_hf_families.py's cases run without a GPU when their attnc side is
#: the reference (ATTNC_HF_CHECK_BACKEND=reference, torch on the CPU).
HF_REFERENCE_ON_CPU = (torch is not None
                       and os.environ.get("ATTNC_HF_CHECK_BACKEND") == "reference")


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "hf_reference_on_cpu: runs without a GPU under "
        "ATTNC_HF_CHECK_BACKEND=reference")


def _in_this_suite(item) -> bool:
    try:
        Path(str(item.fspath)).resolve().relative_to(HERE)
        return True
    except ValueError:
        return False


_compile_keys = []


def pytest_collection_modifyitems(config, items):
    # Called for the whole session: touch only this folder's tests.
    mine = [item for item in items if _in_this_suite(item)]
    if not HAVE_GPU:
        marker = pytest.mark.skip(reason=SKIP_REASON)
        for item in mine:
            if HF_REFERENCE_ON_CPU and item.get_closest_marker("hf_reference_on_cpu"):
                continue
            item.add_marker(marker)
        return
    seen = set()
    for item in mine:
        callspec = getattr(item, "callspec", None)
        case = callspec.params.get("case") if callspec else None
        key = getattr(case, "compile_key", None)
        if key is not None and key not in seen:
            seen.add(key)
            _compile_keys.append(key)


def pytest_report_header(config):
    if not HAVE_GPU:
        return f"attnc GPU suite: {SKIP_REASON}"
    return (f"attnc GPU suite: {torch.cuda.get_device_name()} "
            f"(torch {torch.__version__}, CUDA {torch.version.cuda})")


@pytest.fixture(scope="session", autouse=True)
def _exact_float32():
    if HAVE_GPU:
        # The references are float32: no TF32 in matmuls or einsums.
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
    yield


@pytest.fixture(scope="session")
def attnc_context(tmp_path_factory):
    import attnc
    cache_dir = os.environ.get("ATTNC_CACHE_DIR") or str(tmp_path_factory.mktemp("attnc-cache"))
    return attnc.Context(cache_dir=cache_dir)


class ModelCache:
    """compile_key -> Model; everything collected is compiled on first use,
    in parallel (compiling is thread-safe, and ctypes drops the GIL)."""

    def __init__(self, context):
        self.context = context
        self.models = {}
        self.errors = {}

    def _compile(self, key):
        import attnc
        spec_json, options = key
        return attnc.compile(json.loads(spec_json), context=self.context, **dict(options))

    def warm(self, keys):
        todo = [k for k in keys if k not in self.models and k not in self.errors]
        workers = max(1, min(len(todo), os.cpu_count() or 1, 16))
        with concurrent.futures.ThreadPoolExecutor(workers) as pool:
            futures = {pool.submit(self._compile, key): key for key in todo}
            for future in concurrent.futures.as_completed(futures):
                key = futures[future]
                try:
                    self.models[key] = future.result()
                except Exception as error:  # noqa: BLE001 - reported per test
                    self.errors[key] = error

    def get(self, key):
        if key not in self.models and key not in self.errors:
            self.warm([key])
        if key in self.errors:
            raise self.errors[key]
        return self.models[key]


@pytest.fixture(scope="session")
def models(attnc_context):
    cache = ModelCache(attnc_context)
    cache.warm(_compile_keys)
    return cache


def compile_key(spec: dict, **options):
    """A hashable key for (spec, compile options)."""
    return (json.dumps(spec, sort_keys=True),
            tuple(sorted((k, v) for k, v in options.items() if v is not None)))


@pytest.fixture
def generator(request):
    """A CUDA generator seeded from the test's id (reproducible per case)."""
    seed = zlib.crc32(request.node.nodeid.encode())
    g = torch.Generator(device="cuda")
    g.manual_seed(seed)
    return g
