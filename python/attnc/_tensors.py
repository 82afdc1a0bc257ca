"""Tensor interop: what the launcher needs to know about an argument.

Accepted, in this order of preference:
  * ``torch.Tensor`` (read directly: data_ptr, shape, stride, dtype, device);
  * objects with ``__cuda_array_interface__`` (version 2 or 3: shape,
    typestr, data, strides; CuPy, Numba, ...), read without importing torch;
  * objects with ``__dlpack__``, converted with
    ``torch.utils.dlpack.from_dlpack`` (needs torch).

Element types use the kernel ABI's names: "bf16", "f16", "f32", "fp8_e4m3",
"fp8_e5m2", "i8", "u8", "i32", "i64".
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Optional, Tuple

from .errors import ArgumentError

#: ABI element type -> bytes per element.
ITEMSIZE = {"f32": 4, "f16": 2, "bf16": 2, "fp8_e4m3": 1, "fp8_e5m2": 1,
            "i8": 1, "u8": 1, "i32": 4, "i64": 8}

#: ABI element type -> the torch dtype attribute name.
TORCH_DTYPE_NAMES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16",
                     "fp8_e4m3": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2",
                     "i8": "int8", "u8": "uint8", "i32": "int32", "i64": "int64"}

# __cuda_array_interface__ typestr (byte order stripped) -> ABI element type.
# bf16 and fp8 have no standard typestr; raw void types of their size ("V2",
# "V1") are accepted for them (see _cai_dtype_matches).
_TYPESTR = {"f2": "f16", "f4": "f32", "i1": "i8", "u1": "u8", "i4": "i32",
            "i8": "i64"}

ALIGNMENT = 16


@dataclass
class TensorArg:
    """One tensor argument, as the launcher sees it."""

    name: str
    obj: Any                     # what the caller passed (returned as is)
    ptr: int
    shape: Tuple[int, ...]
    strides: Optional[Tuple[int, ...]]  # in elements; None: C-contiguous
    dtype: str                   # ABI element type, or "V<n>" (raw bytes)
    device: Optional[int]        # CUDA device index; None when unknown
    readonly: bool = False
    torch_tensor: Any = None     # the torch view, when there is one

    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


def torch_module():
    """torch if it is already imported (never imports it)."""
    return sys.modules.get("torch")


def import_torch():
    """torch, imported if needed; None if it is not installed."""
    try:
        import torch  # noqa: F401
        return torch
    except ImportError:
        return None


def torch_abi_dtype(dtype) -> Optional[str]:
    """The ABI name of a torch dtype, or None."""
    torch = torch_module()
    if torch is None:
        return None
    for abi, attr in TORCH_DTYPE_NAMES.items():
        if getattr(torch, attr, None) == dtype:
            return abi
    return None


def torch_dtype(abi: str):
    """The torch dtype of an ABI element type."""
    torch = import_torch()
    return getattr(torch, TORCH_DTYPE_NAMES[abi])


def describe_dtype(abi: str) -> str:
    """"bf16 (torch.bfloat16)" for messages."""
    torch_name = TORCH_DTYPE_NAMES.get(abi)
    return f"{abi} (torch.{torch_name})" if torch_name else abi


def from_object(name: str, obj: Any) -> TensorArg:
    """Reads a tensor argument. Raises ArgumentError naming `name` for
    anything that is not a CUDA tensor of a supported kind."""
    torch = torch_module()
    if torch is not None and isinstance(obj, torch.Tensor):
        return _from_torch(name, obj)
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is not None:
        return _from_cai(name, obj, interface)
    if hasattr(obj, "__dlpack__"):
        torch = import_torch()
        if torch is None:
            raise ArgumentError(
                name, f"{type(obj).__name__} offers only __dlpack__, and "
                "converting it needs torch (pip install torch), or pass an "
                "object with __cuda_array_interface__")
        try:
            converted = torch.utils.dlpack.from_dlpack(obj)
        except Exception as error:  # noqa: BLE001 - any producer error
            raise ArgumentError(name, f"__dlpack__ conversion failed: {error}") from None
        arg = _from_torch(name, converted)
        arg.obj = obj
        return arg
    raise ArgumentError(
        name, f"expected a CUDA tensor (torch.Tensor, an object with "
        f"__cuda_array_interface__ or __dlpack__), got {type(obj).__name__}")


def _from_torch(name: str, tensor) -> TensorArg:
    device = tensor.device
    if device.type != "cuda":
        raise ArgumentError(name, f"must be on a CUDA device, got {device}")
    dtype = torch_abi_dtype(tensor.dtype)
    if dtype is None:
        raise ArgumentError(name, f"unsupported dtype {tensor.dtype}")
    return TensorArg(name=name, obj=tensor, ptr=int(tensor.data_ptr()),
                     shape=tuple(int(d) for d in tensor.shape),
                     strides=tuple(int(s) for s in tensor.stride()),
                     dtype=dtype, device=device.index if device.index is not None else 0,
                     torch_tensor=tensor)


def _from_cai(name: str, obj: Any, interface: Any) -> TensorArg:
    if not isinstance(interface, dict):
        raise ArgumentError(name, "__cuda_array_interface__ is not a dict")
    for key in ("shape", "typestr", "data"):
        if key not in interface:
            raise ArgumentError(name, f"__cuda_array_interface__ has no '{key}'")
    version = interface.get("version", 0)
    if isinstance(version, int) and version > 3:
        raise ArgumentError(name, f"__cuda_array_interface__ version {version} "
                            "is newer than the supported 2 and 3")
    if interface.get("mask") is not None:
        raise ArgumentError(name, "masked arrays are not supported "
                            "(__cuda_array_interface__ 'mask' is set)")
    typestr = str(interface["typestr"])
    if len(typestr) < 2 or typestr[0] not in "<|=":
        raise ArgumentError(name, f"typestr '{typestr}' is not a little-endian "
                            "type")
    code = typestr[1:]
    if code in _TYPESTR:
        dtype = _TYPESTR[code]
    elif code in ("V1", "V2"):
        dtype = code  # raw bytes: matched against bf16 / fp8 by size
    else:
        raise ArgumentError(name, f"unsupported typestr '{typestr}'")
    shape = tuple(int(d) for d in interface["shape"])
    data = interface["data"]
    if not isinstance(data, (tuple, list)) or len(data) != 2:
        raise ArgumentError(name, "__cuda_array_interface__ 'data' must be "
                            "(pointer, read_only)")
    ptr = int(data[0] or 0)
    itemsize = int(code[1:]) if code.startswith("V") else ITEMSIZE[dtype]
    byte_strides = interface.get("strides")
    strides = None
    if byte_strides is not None:
        byte_strides = tuple(int(s) for s in byte_strides)
        if len(byte_strides) != len(shape):
            raise ArgumentError(name, f"strides {byte_strides} and shape {shape} "
                                "differ in length")
        if any(s % itemsize for s in byte_strides):
            raise ArgumentError(name, f"byte strides {byte_strides} are not "
                                f"multiples of the element size {itemsize}")
        strides = tuple(s // itemsize for s in byte_strides)
    return TensorArg(name=name, obj=obj, ptr=ptr, shape=shape, strides=strides,
                     dtype=dtype, device=None, readonly=bool(data[1]))


def dtype_matches(actual: str, expected: str) -> bool:
    """Whether an argument's element type fits the ABI's. A raw void type from
    __cuda_array_interface__ matches any type of its size that has no typestr
    of its own (bf16, fp8)."""
    if actual == expected:
        return True
    if actual == "V2":
        return expected == "bf16"
    if actual == "V1":
        return expected in ("fp8_e4m3", "fp8_e5m2")
    return False


def contiguous_strides(shape: Tuple[int, ...]) -> Tuple[int, ...]:
    strides = []
    step = 1
    for d in reversed(shape):
        strides.append(step)
        step *= max(d, 1)
    return tuple(reversed(strides))


def is_c_contiguous(arg: TensorArg) -> bool:
    """C-contiguous, ignoring the strides of size-1 dims (as torch does);
    empty tensors count as contiguous."""
    if arg.strides is None or arg.numel() == 0:
        return True
    expected = contiguous_strides(arg.shape)
    return all(d == 1 or s == e
               for d, s, e in zip(arg.shape, arg.strides, expected))
