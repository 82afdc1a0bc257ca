"""Checking a kernel call's arguments against the kernel's ABI, then
launching it.

Parameters are matched by name with the ABI JSON of the kernel
(attnc_kernel_abi_json). Each pointer parameter's ABI entry gives its element
type and shape, whose dims are constants or symbols (num_tokens, num_blocks,
num_seqs, max_blocks_per_seq, num_seqs_plus_one). A symbol is bound by the
first argument that has it and must agree everywhere after; the i32/i64
parameters and launch scalars (num_tokens, num_seqs, max_blocks_per_seq) take
the bound values, never values from the caller.
"""

from __future__ import annotations

import contextlib
import ctypes
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import ArgumentError
from ._library import Library
from ._streams import resolve_stream
from ._tensors import (ALIGNMENT, TensorArg, describe_dtype, dtype_matches,
                       from_object, import_torch, is_c_contiguous,
                       contiguous_strides, torch_dtype, torch_module)

_INT32_MAX = 2**31 - 1

#: Symbols whose value follows from another: name -> (base symbol, offset).
_DERIVED_SYMBOLS = {"num_seqs_plus_one": ("num_seqs", 1)}


class KernelPlan:
    """What a launch of one kernel needs, read once from its ABI.

    Args:
        abi: the kernel's ABI (parsed JSON).
        features: argument name -> the feature it belongs to, for messages
            ("q_norm_weight" -> "q/k norm").
        outputs: names of parameters the launcher allocates when not given.
        writable: names of parameters the kernel writes (outputs, caches).
    """

    def __init__(self, abi: Mapping[str, Any], *, features: Mapping[str, str],
                 outputs: Sequence[str], writable: Sequence[str]):
        self.abi = abi
        self.name = abi["name"]
        self.params: List[Mapping[str, Any]] = list(abi["params"])
        self.param_names = [p["name"] for p in self.params]
        self.pointer_params = [p for p in self.params if p.get("kind") == "pointer"]
        self.scalar_params = [p for p in self.params if p.get("kind") != "pointer"]
        self.launch_scalars: List[str] = list(abi.get("launch_scalars") or [])
        self.features = dict(features)
        self.outputs = [o for o in outputs if o in self.param_names]
        self.writable = set(writable)
        for p in self.scalar_params:
            if p.get("kind") not in ("i32", "i64"):
                raise ArgumentError(
                    p["name"], f"kernel {self.name} takes a {p.get('kind')} "
                    "parameter that this package does not know how to fill")

    def has(self, name: str) -> bool:
        return name in self.param_names

    def feature_of(self, name: str) -> str:
        return self.features.get(name, name)


class _Bindings:
    """Symbol -> (value, where it came from)."""

    def __init__(self):
        self.values: Dict[str, Tuple[int, str]] = {}

    def get(self, symbol: str) -> Optional[int]:
        entry = self.values.get(symbol)
        if entry is not None:
            return entry[0]
        derived = _DERIVED_SYMBOLS.get(symbol)
        if derived is not None and derived[0] in self.values:
            return self.values[derived[0]][0] + derived[1]
        for other, (base, offset) in _DERIVED_SYMBOLS.items():
            if base == symbol and other in self.values:
                return self.values[other][0] - offset
        return None

    def source(self, symbol: str) -> str:
        if symbol in self.values:
            return self.values[symbol][1]
        derived = _DERIVED_SYMBOLS.get(symbol)
        if derived is not None and derived[0] in self.values:
            return f"{derived[0]} + {derived[1]}, {derived[0]} from {self.values[derived[0]][1]}"
        for other, (base, offset) in _DERIVED_SYMBOLS.items():
            if base == symbol and other in self.values:
                return f"{other} - {offset}, {other} from {self.values[other][1]}"
        return "?"

    def bind(self, symbol: str, value: int, where: str) -> None:
        self.values[symbol] = (value, where)


def _shape_text(shape: Sequence[Any]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def check_argument(plan: KernelPlan, param: Mapping[str, Any], arg: TensorArg,
                   bindings: _Bindings, device: List[Optional[int]],
                   device_source: List[str]) -> None:
    """Checks one tensor against its ABI entry, binding shape symbols.
    Raises ArgumentError naming the argument and the rule."""
    name = param["name"]
    expected_dtype = param.get("dtype")
    if expected_dtype and not dtype_matches(arg.dtype, expected_dtype):
        raise ArgumentError(
            name, f"dtype is {describe_dtype(arg.dtype)}, expected "
            f"{describe_dtype(expected_dtype)}")
    shape = param.get("shape")
    if shape is not None:
        if len(shape) == 0:
            # A scalar: shape [] (also accepted: [1]).
            if arg.shape not in ((), (1,)):
                raise ArgumentError(name, f"must be a scalar tensor (shape [] "
                                    f"or [1]), got shape {list(arg.shape)}")
        else:
            if len(arg.shape) != len(shape):
                raise ArgumentError(
                    name, f"expected {len(shape)} dims {_shape_text(shape)}, got "
                    f"{len(arg.shape)} dims {list(arg.shape)}")
            for i, (want, got) in enumerate(zip(shape, arg.shape)):
                if isinstance(want, str):
                    bound = bindings.get(want)
                    if bound is None:
                        if want in _DERIVED_SYMBOLS and got - _DERIVED_SYMBOLS[want][1] < 0:
                            raise ArgumentError(
                                name, f"dim {i} ({want}) is {got}, must be >= "
                                f"{_DERIVED_SYMBOLS[want][1]}")
                        bindings.bind(want, got, f"{name} dim {i}")
                    elif bound != got:
                        raise ArgumentError(
                            name, f"shape {list(arg.shape)} does not match "
                            f"{_shape_text(shape)}: dim {i} is {got}, but {want} "
                            f"is {bound} (from {bindings.source(want)})")
                elif int(want) != got:
                    raise ArgumentError(
                        name, f"shape {list(arg.shape)} does not match "
                        f"{_shape_text(shape)}: dim {i} is {got}, expected {want}")
    if not is_c_contiguous(arg):
        raise ArgumentError(
            name, f"must be C-contiguous: strides {list(arg.strides)} (in "
            f"elements) for shape {list(arg.shape)}, expected "
            f"{list(contiguous_strides(arg.shape))} (call .contiguous())")
    if arg.ptr % ALIGNMENT:
        raise ArgumentError(
            name, f"data pointer {arg.ptr:#x} is not {ALIGNMENT}-byte aligned "
            "(the kernels use 16-byte vector accesses; a sliced view?)")
    if arg.ptr == 0 and arg.numel() > 0:
        raise ArgumentError(name, "data pointer is NULL")
    if name in plan.writable and arg.readonly:
        raise ArgumentError(name, "is read-only, but the kernel writes it")
    if arg.device is not None:
        if device[0] is None:
            device[0], device_source[0] = arg.device, name
        elif device[0] != arg.device:
            raise ArgumentError(
                name, f"is on cuda:{arg.device}, but {device_source[0]} is on "
                f"cuda:{device[0]}; all tensors must be on one device")


def prepare_launch(plan: KernelPlan, given: Mapping[str, Any]):
    """Checks `given` (argument name -> tensor or None) against the plan and
    allocates missing outputs. Returns (args by name, scalar values, launch
    scalar values, device)."""
    for name, value in given.items():
        if value is not None and not plan.has(name):
            raise ArgumentError(
                name, f"this model's kernel has no {plan.feature_of(name)}")
    args: Dict[str, TensorArg] = {}
    for param in plan.pointer_params:
        name = param["name"]
        value = given.get(name)
        if value is None:
            if name in plan.outputs:
                continue
            if name in plan.features:
                raise ArgumentError(
                    name, f"missing: this model's kernel has "
                    f"{plan.feature_of(name)} and needs {name}")
            raise ArgumentError(name, f"missing: {plan.name} needs {name}")
        args[name] = from_object(name, value)

    bindings = _Bindings()
    device: List[Optional[int]] = [None]
    device_source = [""]
    for param in plan.pointer_params:
        if param["name"] in args:
            check_argument(plan, param, args[param["name"]], bindings, device,
                           device_source)
    for derived, (base, offset) in _DERIVED_SYMBOLS.items():
        if derived in bindings.values and base in bindings.values:
            if bindings.values[derived][0] != bindings.values[base][0] + offset:
                where = bindings.values[derived][1].split(" ")[0]
                raise ArgumentError(
                    where, f"{derived} is {bindings.values[derived][0]}, but "
                    f"{base} is {bindings.values[base][0]} (from "
                    f"{bindings.source(base)}); expected {base} + {offset}")

    tokens, seqs = bindings.get("num_tokens"), bindings.get("num_seqs")
    if tokens and seqs == 0:
        # The kernel finds each row's sequence in query_start_loc[0..num_seqs].
        raise ArgumentError("seq_lens", f"no sequences (num_seqs is 0), but there "
                            f"are {tokens} query rows")

    for param in plan.pointer_params:
        name = param["name"]
        if name in args:
            continue
        args[name] = _allocate(plan, param, bindings, device[0])
        if device[0] is None:
            device[0] = args[name].device

    scalars: Dict[str, int] = {}
    for param in plan.scalar_params:
        scalars[param["name"]] = _scalar(param["name"], param.get("kind"), bindings)
    launch_scalars = [_scalar(s, "i64", bindings) for s in plan.launch_scalars]
    return args, scalars, launch_scalars, device[0]


def _scalar(name: str, kind: Optional[str], bindings: _Bindings) -> int:
    value = bindings.get(name)
    if value is None:
        raise ArgumentError(name, "cannot be derived from the tensors (no "
                            "argument has a dim of that name)")
    if kind == "i32" and value > _INT32_MAX:
        raise ArgumentError(name, f"{value} does not fit the kernel's int32")
    return value


def _allocate(plan: KernelPlan, param: Mapping[str, Any], bindings: _Bindings,
              device: Optional[int]) -> TensorArg:
    name = param["name"]
    torch = import_torch()
    if torch is None:
        raise ArgumentError(name, "not given, and allocating it needs torch "
                            "(pip install torch), or pass it")
    shape = []
    for dim in param.get("shape") or []:
        if isinstance(dim, str):
            value = bindings.get(dim)
            if value is None:
                raise ArgumentError(name, f"not given, and its dim {dim} cannot "
                                    "be derived from the other arguments")
            shape.append(value)
        else:
            shape.append(int(dim))
    if device is None:
        device = torch.cuda.current_device()
    tensor = torch.empty(shape, dtype=torch_dtype(param["dtype"]),
                         device=torch.device("cuda", device))
    return from_object(name, tensor)


def launch(lib: Library, kernel_handle: int, plan: KernelPlan,
           given: Mapping[str, Any], stream: Any) -> Dict[str, Any]:
    """Checks, allocates, and launches. Returns the objects passed for every
    pointer parameter (allocated outputs as torch tensors), by name."""
    args, scalars, launch_scalars, device = prepare_launch(plan, given)
    handle = resolve_stream(stream, device)

    keep = []  # ctypes values must outlive the call
    pointers = (ctypes.c_void_p * len(plan.params))()
    for i, param in enumerate(plan.params):
        name = param["name"]
        if param.get("kind") == "pointer":
            value = ctypes.c_void_p(args[name].ptr)
        elif param.get("kind") == "i32":
            value = ctypes.c_int32(scalars[name])
        else:
            value = ctypes.c_int64(scalars[name])
        keep.append(value)
        pointers[i] = ctypes.addressof(value)
    scalar_array = (ctypes.c_int64 * max(len(launch_scalars), 1))(*launch_scalars)

    with _device_guard(device):
        status = lib.attnc_kernel_launch(
            ctypes.c_void_p(kernel_handle), ctypes.c_void_p(handle or None),
            pointers, len(plan.params), scalar_array, len(launch_scalars))
        if status != 0:
            raise lib.error_for(status)
    return {name: arg.obj for name, arg in args.items()}


@contextlib.contextmanager
def _device_guard(device: Optional[int]):
    """Makes `device` current for the launch when torch manages devices (the
    kernel launches in the calling thread's current CUDA context)."""
    torch = torch_module()
    if device is None or torch is None or not torch.cuda.is_initialized() \
            or torch.cuda.current_device() == device:
        yield
        return
    with torch.cuda.device(device):
        yield
