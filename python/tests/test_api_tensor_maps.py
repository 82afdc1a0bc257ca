"""A kernel ABI with a tensor_map parameter (runtime/include/attnc/Runtime/
KernelAbi.h): the package checks and binds the tensor it maps like any
other, derives the strides and launch scalars the runtime encodes it from,
and passes NULL at the map's position (the runtime encodes the map from
that launch's pointer, dims and strides; the gtests in TensorMapTest.cpp
check that side). No GPU: fake tensors and a stand-in for the library's
launch entry point, which copies what it is given at call time."""
import ctypes

import pytest

from attnc import _launch
from attnc.errors import ArgumentError
from attnc_cpu_helpers import FakeTensor

ABI = {
    "name": "attnc_test_tma",
    "params": [
        {"name": "cache_map", "kind": "tensor_map", "tensor": "cache",
         "box": [1, 64, 64], "swizzle": 128},
        {"name": "cache", "kind": "pointer", "dtype": "bf16",
         "shape": ["num_blocks", 64, 576],
         "strides": ["cache_block_stride", "cache_token_stride", 1]},
        {"name": "out", "kind": "pointer", "dtype": "f32", "shape": ["n"],
         "writes": True},
        {"name": "cache_block_stride", "kind": "i64"},
        {"name": "cache_token_stride", "kind": "i64"},
        {"name": "n", "kind": "i32"},
    ],
    "launch_scalars": ["num_blocks"],
    "block": [128, 1, 1],
    "grid": [{"value": "n", "divisor": 128}, 1, 1],
    "dynamic_shared_memory_bytes": 0,
}


def _plan():
    return _launch.KernelPlan(ABI, features={}, outputs=["out"], writable=["out"])


def _given(blocks=12, token_stride=576):
    # the K half of a [blocks, 2, 64, 576]-shaped allocation: a strided view
    cache = FakeTensor((blocks, 64, 576), "<V2",
                       strides=(2 * 64 * 576 * 2, token_stride * 2, 2))
    return {"cache": cache, "out": FakeTensor((256,), "<f4")}


class _Recorder:
    """Stands in for the library: records attnc_kernel_launch's arguments,
    read at call time."""

    def __init__(self):
        self.calls = []

    def attnc_kernel_launch(self, kernel, stream, pointers, count, scalars, num_scalars):
        values = []
        for i in range(count):
            address = pointers[i]
            values.append(None if not address else ctypes.string_at(address, 8))
        self.calls.append({"values": values, "count": count,
                           "scalars": [scalars[j] for j in range(num_scalars)]})
        return 0


def test_a_tensor_map_is_neither_a_pointer_nor_a_scalar():
    plan = _plan()
    assert [p["name"] for p in plan.pointer_params] == ["cache", "out"]
    assert [p["name"] for p in plan.scalar_params] == [
        "cache_block_stride", "cache_token_stride", "n"]


def test_the_package_derives_what_the_map_is_encoded_from():
    args, scalars, launch_scalars, _ = _launch.prepare_launch(_plan(), _given())
    assert set(args) == {"cache", "out"}
    assert scalars == {"cache_block_stride": 2 * 64 * 576, "cache_token_stride": 576,
                       "n": 256}
    assert launch_scalars == [12]  # num_blocks: the map's outer dim


def test_the_launch_passes_null_for_the_map():
    lib = _Recorder()
    given = _given(blocks=7)
    _launch.launch(lib, 1, _plan(), given, None)
    (call,) = lib.calls
    assert call["count"] == 6
    values = call["values"]
    assert values[0] is None  # cache_map: the runtime's to fill
    assert int.from_bytes(values[1], "little") == given["cache"].ptr
    assert int.from_bytes(values[2], "little") == given["out"].ptr
    assert int.from_bytes(values[3], "little") == 2 * 64 * 576
    assert int.from_bytes(values[4], "little") == 576
    assert int.from_bytes(values[5][:4], "little") == 256
    assert call["scalars"] == [7]


def test_the_mapped_tensor_is_still_checked():
    given = _given()
    given["cache"] = FakeTensor((12, 64, 512), "<V2")
    with pytest.raises(ArgumentError) as error:
        _launch.prepare_launch(_plan(), given)
    assert error.value.argument == "cache"
