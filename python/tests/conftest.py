"""Fixtures for the CPU tests of the attnc package (no GPU needed).

The library is found as the package finds it ($ATTNC_LIBRARY, the package
copy, <repo>/build/lib/libattnc.so). Compiling needs NVRTC; launching is
tested against the project's fake CUDA driver (build/lib/
libattnc-fake-cuda.so, built with the C++ tests), which resolves only kernels
named attnc_test_*, hence the layer kind names used with it.
"""

import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))  # the package from this checkout
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

import attnc  # noqa: E402
from attnc_cpu_helpers import FAKE_DRIVER, GATED, PLAIN  # noqa: E402


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    """One disk cache for the session: each config compiles once."""
    return tmp_path_factory.mktemp("attnc-cache")


@pytest.fixture(scope="session")
def context(cache_dir):
    """A context with the session's cache and the machine's own driver."""
    return attnc.Context(cache_dir=cache_dir)


@pytest.fixture(scope="session")
def fake_context(cache_dir):
    """A context whose CUDA driver is the fake one: launches go all the way to
    cuLaunchKernel, which records them."""
    if not FAKE_DRIVER.is_file():
        pytest.skip(f"fake CUDA driver not built ({FAKE_DRIVER})")
    return attnc.Context(cache_dir=cache_dir, cuda_driver_library=FAKE_DRIVER)


@pytest.fixture(scope="session")
def compiled(request, context):
    """compiled(config, fake=False, **options) -> Model, cached per session;
    fake=True compiles in the fake-driver context."""
    models = {}

    def get(config, fake=False, **options):
        key = (json.dumps(config, sort_keys=True, default=str), fake,
               tuple(sorted(options.items())))
        if key not in models:
            ctx = request.getfixturevalue("fake_context") if fake else context
            models[key] = attnc.compile(config, context=ctx, **options)
        return models[key]

    return get


@pytest.fixture
def gated(compiled):
    """The GATED spec compiled in the fake-driver context."""
    return compiled(GATED, fake=True)


@pytest.fixture
def plain(compiled):
    """The PLAIN spec compiled in the fake-driver context."""
    return compiled(PLAIN, fake=True)


@pytest.fixture
def fp8(compiled):
    """The PLAIN spec with an fp8 cache, in the fake-driver context."""
    return compiled(PLAIN, fake=True, kv_dtype="fp8")
