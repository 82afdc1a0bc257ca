"""Programmatic dependent launch from the package (no GPU: the project's fake
CUDA driver, at compute capability 9.0, records whether each launch went
through cuLaunchKernelEx with programmatic stream serialization).

The flag travels in the kernel ABI ("programmatic_dependent_launch"): the
package launches through the C API, whose launch plan decides; nothing in
the package reads the flag. attnc.Context(disable_pdl=True) turns it off
for the kernels of that context."""

import ctypes
import os

import pytest

import attnc
from attnc_cpu_helpers import FAKE_DRIVER, LAYER, PLAIN, SIZES, fake_args


def _launches():
    """(launches, launches through cuLaunchKernelEx, last one programmatic)."""
    library = ctypes.CDLL(str(FAKE_DRIVER))  # the handle the runtime opened
    counts = [ctypes.c_int() for _ in range(3)]
    library.attnc_fake_cuda_launches(*[ctypes.byref(c) for c in counts])
    return tuple(c.value for c in counts)


def _launch_both(model):
    """Model.preprocess then Model.attention on fake tensors; the fake's
    record after each."""
    seen = []
    args = fake_args(model.kernel(LAYER, "preprocess"), SIZES)
    qkv = args.pop("qkv")
    model.preprocess(LAYER, qkv, **args)
    seen.append(_launches())
    args = fake_args(model.kernel(LAYER, "attention"), SIZES)
    query = args.pop("query")
    args["out"] = args.pop("output")
    model.attention(LAYER, query, **args)
    seen.append(_launches())
    return seen


def test_abi_flags_the_kernels_that_wait(plain):
    # Both templates wait (griddepcontrol.wait) before any global access.
    assert plain.kernel(LAYER, "preprocess").abi.get("programmatic_dependent_launch") is True
    assert plain.kernel(LAYER, "attention").abi.get("programmatic_dependent_launch") is True


@pytest.mark.skipif(os.environ.get("ATTNC_PDL", "").lower() in ("0", "false", "off", "no"),
                    reason="ATTNC_PDL turns programmatic launch off in this environment")
def test_launches_are_programmatic_by_default(plain):
    before = _launches()
    seen = _launch_both(plain)
    for i, (launches, launches_ex, programmatic) in enumerate(seen):
        assert launches == before[0] + i + 1
        assert launches_ex == before[1] + i + 1, "launched through cuLaunchKernelEx"
        assert programmatic == 1


def test_context_switch_turns_it_off(cache_dir):
    if not FAKE_DRIVER.is_file():
        pytest.skip(f"fake CUDA driver not built ({FAKE_DRIVER})")
    context = attnc.Context(cache_dir=cache_dir, cuda_driver_library=FAKE_DRIVER,
                            disable_pdl=True)
    model = attnc.compile(PLAIN, context=context)
    before = _launches()
    seen = _launch_both(model)
    for i, (launches, launches_ex, programmatic) in enumerate(seen):
        assert launches == before[0] + i + 1
        assert launches_ex == before[1], "plain cuLaunchKernel"
        assert programmatic == 0
