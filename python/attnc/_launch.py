"""Checking a kernel call's arguments against the kernel's ABI, then
launching it.

Parameters are matched by name with the ABI JSON of the kernel
(attnc_kernel_abi_json). Each pointer parameter's ABI entry gives its element
type and shape, whose dims are constants or symbols (num_tokens, num_blocks,
num_seqs, max_blocks_per_seq, num_seqs_plus_one). A symbol is bound by the
first argument that has it and must agree everywhere after; the i32/i64
parameters and launch scalars (num_tokens, num_seqs, max_blocks_per_seq) take
the bound values, never values from the caller. A value no tensor carries
(num_kv_splits) is bound by the caller of :func:`launch` through `derive`.

Strides: a tensor must be C-contiguous unless its ABI entry has "strides"
(the paged caches), one per dim, in elements: a constant must be the
tensor's stride (the innermost is 1), a symbol binds the i64 parameter of
that name to the tensor's stride (see :func:`check_strides`), so the kernels
take engine-owned views of a cache allocation.

Split-KV (attention kernels whose ABI has a ``num_kv_splits`` parameter, a
``workspace`` pointer and the hints ``target_ctas`` / ``max_kv_splits``): see
:func:`choose_kv_splits` for the split rule and :func:`zeroed_workspace` for
the package's own workspace.
"""

from __future__ import annotations

import contextlib
import ctypes
import operator
from typing import (Any, Callable, Dict, List, Mapping, Optional, Sequence,
                    Tuple)

from .errors import ArgumentError
from ._library import Library
from ._streams import resolve_stream
from ._tensors import (ALIGNMENT, ITEMSIZE, TensorArg, describe_dtype,
                       dtype_matches, from_object, import_torch,
                       is_c_contiguous, contiguous_strides, torch_dtype,
                       torch_module)

_INT32_MAX = 2**31 - 1

#: Symbols whose value follows from another: name -> (base symbol, offset).
_DERIVED_SYMBOLS = {"num_seqs_plus_one": ("num_seqs", 1)}

#: The split-KV contract's names (ABI parameters and hints).
KV_SPLITS = "num_kv_splits"
WORKSPACE = "workspace"
TARGET_CTAS = "target_ctas"
MAX_KV_SPLITS = "max_kv_splits"


def parse_hints(abi: Mapping[str, Any]) -> Dict[str, int]:
    """The ABI's "hints" (name -> int; {} when it has none). Raises
    ArgumentError("hints", ...) for anything but an object of integers."""
    hints = abi.get("hints")
    if hints is None:
        return {}
    name = abi.get("name", "?")
    if not isinstance(hints, Mapping):
        raise ArgumentError("hints", f"kernel {name}: the ABI's hints must be an "
                            f"object of name -> integer, got {type(hints).__name__}")
    result = {}
    for key, value in hints.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise ArgumentError("hints", f"kernel {name}: hint name {key!r} is not "
                                "an identifier")
        if isinstance(value, bool) or not isinstance(value, int):
            raise ArgumentError(f"hints.{key}", f"kernel {name}: must be an "
                                f"integer, got {value!r}")
        result[key] = value
    return result


def grid_dim(rule: Any, lookup: Callable[[str], Optional[int]], axis: int = 0) -> int:
    """One grid dimension of an ABI grid rule (an int, or {"value",
    "multiplier", "divisor", "plus"}) for symbol values from `lookup`, as the
    runtime computes it: ceil_div(value * multiplier, divisor) + plus."""
    if isinstance(rule, int):
        return rule

    def symbol(key: str) -> int:
        name = rule[key]
        value = lookup(name)
        if value is None:
            raise ArgumentError(name, f"the grid rule of axis {'xyz'[axis]} needs "
                                f"{name}, which no argument gives")
        if value < 0:
            raise ArgumentError(name, f"is negative ({value}); grid axis "
                                f"{'xyz'[axis]} needs it")
        return value

    blocks = -(-symbol("value") * int(rule.get("multiplier", 1))
               // int(rule.get("divisor", 1)))
    if rule.get("plus"):
        blocks += symbol("plus")
    return blocks


def busy_grid_dim(rule: Any, lookup: Callable[[str], Optional[int]],
                  axis: int = 0) -> int:
    """The blocks of one grid axis that surely have work: for a rule with
    `plus` (ceil_div(value * multiplier, divisor) + plus: tiles of rows plus
    one spare per sequence), max(ceil_div(...), plus), the least the rows
    can occupy when every sequence has one (exact for decode batches); other
    rules as grid_dim."""
    if isinstance(rule, int) or not rule.get("plus"):
        return grid_dim(rule, lookup, axis)
    rows = grid_dim({k: v for k, v in rule.items() if k != "plus"}, lookup, axis)
    spare = grid_dim(rule, lookup, axis) - rows
    return max(rows, spare)


def _rule_symbols(rule: Any) -> Tuple[str, ...]:
    if isinstance(rule, int):
        return ()
    return tuple(rule[k] for k in ("value", "plus") if rule.get(k))


class SplitKv:
    """A kernel's split-KV facts, read from its ABI.

    Attributes:
        target_ctas: T, the CTA count that fills the GPU (hint target_ctas).
        max_kv_splits: M, the largest split count (hint max_kv_splits).
        base_axes: the grid axes that do not follow num_kv_splits; their
            product is the launch's CTA count per split ("base").
    """

    def __init__(self, abi: Mapping[str, Any], hints: Mapping[str, int]):
        name = abi.get("name", "?")
        missing = [h for h in (TARGET_CTAS, MAX_KV_SPLITS) if h not in hints]
        if missing:
            raise ArgumentError(
                KV_SPLITS, f"kernel {name} takes {KV_SPLITS}, but its ABI has no "
                f"hint {' / '.join(missing)} to choose it with")
        self.target_ctas = int(hints[TARGET_CTAS])
        self.max_kv_splits = int(hints[MAX_KV_SPLITS])
        if self.target_ctas < 1 or self.max_kv_splits < 1:
            raise ArgumentError(
                KV_SPLITS, f"kernel {name}: hints {TARGET_CTAS} ({self.target_ctas}) "
                f"and {MAX_KV_SPLITS} ({self.max_kv_splits}) must be >= 1")
        self.grid = list(abi["grid"])
        self.base_axes = [d for d, rule in enumerate(self.grid)
                          if KV_SPLITS not in _rule_symbols(rule)]

    @property
    def capacity(self) -> int:
        """The most CTAs (base * splits) the workspace holds partials for:
        2 * target_ctas."""
        return 2 * self.target_ctas

    def base(self, lookup: Callable[[str], Optional[int]]) -> int:
        """base = the product of the grid axes that do not follow
        num_kv_splits (gx * gy for the attention kernel)."""
        return self._per_split(grid_dim, lookup)

    def busy(self, lookup: Callable[[str], Optional[int]]) -> int:
        """busy = the CTAs per split that surely have rows: the product of
        the base axes with the x axis counted by busy_grid_dim (for the
        attention kernel max(ceil(num_tokens * P / BM), num_seqs) * gy)."""
        return self._per_split(busy_grid_dim, lookup)

    def _per_split(self, dim: Callable[..., int],
                   lookup: Callable[[str], Optional[int]]) -> int:
        product = 1
        for d in self.base_axes:
            product *= dim(self.grid[d], lookup, d)
        return product

    def choose(self, base: int, requested: Any = None, busy: Optional[int] = None) -> int:
        """The split count for a launch of `base` CTAs per split of which
        `busy` (default `base`) surely have rows: the rule when `requested`
        is None, else `requested` after checking it. Both are the plan
        library's (plan/lib/SplitKv.cpp, through attnc_split_kv_count): the
        most splits whose busy CTAs fit one wave of target_ctas, and a
        requested count in [1, max_kv_splits] whose base * splits fits the
        workspace's 2 * target_ctas CTAs."""
        if requested is not None:
            if isinstance(requested, bool) or not hasattr(requested, "__index__"):
                raise ArgumentError(KV_SPLITS, f"expected None (automatic) or an int, "
                                    f"got {type(requested).__name__}")
            requested = operator.index(requested)
        from ._library import library
        lib = library()
        busy = base if busy is None else busy
        axes = " * ".join("xyz"[d] for d in self.base_axes).encode()
        out = ctypes.c_int64()
        asked = None if requested is None else ctypes.byref(ctypes.c_int64(requested))
        status = lib.attnc_split_kv_count(self.target_ctas, self.max_kv_splits,
                                          max(base, 0), max(busy, 0), asked, axes,
                                          ctypes.byref(out))
        if status != 0:
            message = (lib.attnc_last_error() or b"").decode("utf-8", "replace")
            prefix = KV_SPLITS + ": "
            rule = message[len(prefix):] if message.startswith(prefix) else message
            raise ArgumentError(KV_SPLITS, rule)
        return out.value


class KernelPlan:
    """What a launch of one kernel needs, read once from its ABI.

    Args:
        abi: the kernel's ABI (parsed JSON).
        features: argument name -> the feature it belongs to, for messages
            ("q_norm_weight" -> "q/k norm").
        outputs: names of parameters the launcher allocates when not given.
        writable: names of parameters the kernel writes (outputs, caches).
        at_least: names of pointer parameters whose constant 1-D shape
            ``[W]`` is a minimum: a 1-D tensor of at least W elements is
            accepted (scratch buffers such as the split-KV workspace).

    Attributes:
        hints: the ABI's hints (name -> int, {} when none).
        split_kv: the :class:`SplitKv` facts when the kernel takes
            ``num_kv_splits``, else None.
    """

    def __init__(self, abi: Mapping[str, Any], *, features: Mapping[str, str],
                 outputs: Sequence[str], writable: Sequence[str],
                 at_least: Sequence[str] = ()):
        self.abi = abi
        self.name = abi["name"]
        self.params: List[Mapping[str, Any]] = list(abi["params"])
        self.param_names = [p["name"] for p in self.params]
        self.pointer_params = [p for p in self.params if p.get("kind") == "pointer"]
        # Tensor maps are encoded by the runtime at launch (KernelAbi.h):
        # the package passes nothing for them.
        self.scalar_params = [p for p in self.params
                              if p.get("kind") not in ("pointer", "tensor_map")]
        self.launch_scalars: List[str] = list(abi.get("launch_scalars") or [])
        self.features = dict(features)
        self.outputs = [o for o in outputs if o in self.param_names]
        self.writable = set(writable)
        self.at_least = set(at_least)
        for p in self.scalar_params:
            if p.get("kind") not in ("i32", "i64"):
                raise ArgumentError(
                    p["name"], f"kernel {self.name} takes a {p.get('kind')} "
                    "parameter that this package does not know how to fill")
        self.hints = parse_hints(abi)
        self._split_kv: Optional[SplitKv] = None
        self._split_kv_error: Optional[ArgumentError] = None
        if any(p["name"] == KV_SPLITS for p in self.scalar_params):
            try:
                self._split_kv = SplitKv(abi, self.hints)
            except ArgumentError as error:  # reported when a launch needs it
                self._split_kv_error = error

    @property
    def takes_kv_splits(self) -> bool:
        """Whether the kernel has the num_kv_splits parameter."""
        return self._split_kv is not None or self._split_kv_error is not None

    @property
    def split_kv(self) -> Optional[SplitKv]:
        """The split-KV facts (None for kernels without num_kv_splits).
        Raises ArgumentError when the kernel takes num_kv_splits but its ABI
        lacks the hints to choose it."""
        if self._split_kv_error is not None:
            raise self._split_kv_error
        return self._split_kv

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
    if (shape is not None and name in plan.at_least and len(shape) == 1
            and not isinstance(shape[0], str)):
        minimum = int(shape[0])
        if len(arg.shape) != 1 or arg.shape[0] < minimum:
            raise ArgumentError(
                name, f"expected 1 dim of at least {minimum} elements "
                f"({_shape_text(shape)}), got shape {list(arg.shape)}")
        shape = None  # checked
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
    strides = param.get("strides")
    if strides is not None and param.get("shape") is not None:
        check_strides(param, arg, strides, bindings)
    elif not is_c_contiguous(arg):
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


def stride_granule(param: Mapping[str, Any], arg: TensorArg) -> int:
    """The bytes every stride of a strided view must be a multiple of: 16
    (the kernels copy rows in 16-byte chunks), or, for rows (the innermost
    dim) that are not a whole number of 16-byte chunks, the largest power of
    two dividing the row's bytes (such rows are copied in pieces of at most
    that size; contiguous tensors of any head dim stay accepted)."""
    return row_granule(ITEMSIZE.get(param.get("dtype"), 1),
                       arg.shape[-1] if arg.shape else 1)


def row_granule(itemsize: int, row: int) -> int:
    """:func:`stride_granule` for rows of `row` elements of `itemsize`
    bytes."""
    row_bytes = row * itemsize
    if row_bytes <= 0 or row_bytes % ALIGNMENT == 0:
        return ALIGNMENT
    return min(ALIGNMENT, row_bytes & -row_bytes)


def check_strides(param: Mapping[str, Any], arg: TensorArg,
                  strides: Sequence[Any], bindings: _Bindings) -> None:
    """Checks a tensor against the "strides" of its ABI entry (one per dim,
    in elements) and binds their symbols: a constant must equal the tensor's
    stride; a symbol names the i64 parameter the launch passes the tensor's
    stride in, which must be positive and, times the element size, a
    multiple of :func:`stride_granule` (16 bytes for rows of whole 16-byte
    chunks). Dims of size 1 (and empty tensors) are not checked: their
    stride never moves the address, and their symbols get the contiguous
    stride. Raises ArgumentError naming the tensor and the rule."""
    name = param["name"]
    shape = list(arg.shape)
    actual = list(arg.strides) if arg.strides is not None else list(
        contiguous_strides(arg.shape))
    contiguous = contiguous_strides(arg.shape)
    if len(strides) != len(shape):
        raise ArgumentError(name, f"the ABI gives {len(strides)} strides for "
                            f"{len(shape)} dims {_shape_text(shape)}")
    itemsize = ITEMSIZE.get(param.get("dtype"), 1)
    granule = stride_granule(param, arg)
    unused = arg.numel() == 0
    described = f"strides {actual} (in elements) for shape {shape}"
    used = [shape[i] != 1 and not unused for i in range(len(shape))]
    # The constants first: a head dim that is not contiguous is the error to
    # name, whatever the other strides are.
    for i, want in enumerate(strides):
        if used[i] and not isinstance(want, str) and actual[i] != int(want):
            rule = ("the innermost dim must be contiguous (stride 1)"
                    if i == len(shape) - 1 and int(want) == 1
                    else f"dim {i} must have stride {want}")
            raise ArgumentError(name, f"{rule}: got {described}")
    for i, want in enumerate(strides):
        if not isinstance(want, str):
            continue
        got = actual[i] if used[i] else contiguous[i]  # unused: any is accepted
        if got <= 0:
            raise ArgumentError(
                name, f"stride of dim {i} ({want}) must be positive: got {described}")
        if used[i] and got * itemsize % granule:
            raise ArgumentError(
                name, f"stride of dim {i} ({want}) is {got} elements = "
                f"{got * itemsize} bytes, not a multiple of {granule} bytes (the "
                f"kernels copy rows in {granule}-byte pieces): got {described}")
        if got > _INT32_MAX:
            raise ArgumentError(
                name, f"stride of dim {i} ({want}) is {got} elements, more than "
                f"the kernels' 32-bit strides hold (2^31 - 1): got {described}")
        bound = bindings.get(want)
        if bound is not None and bound != got:
            raise ArgumentError(
                name, f"stride of dim {i} is {got}, but {want} is {bound} "
                f"(from {bindings.source(want)})")
        bindings.bind(want, got, f"{name} stride {i}")


#: provide[name](param, shape, device, stream handle) -> a tensor for a
#: pointer parameter the caller did not give (e.g. a cached workspace).
Provider = Callable[[Mapping[str, Any], List[int], Optional[int], int], Any]


def prepare_launch(plan: KernelPlan, given: Mapping[str, Any], *,
                   derive: Optional[Callable[["_Bindings"], None]] = None,
                   provide: Optional[Mapping[str, Provider]] = None,
                   stream: Any = None):
    """Checks `given` (argument name -> tensor or None) against the plan and
    allocates missing outputs. Returns (args by name, scalar values, launch
    scalar values, device).

    Args:
        derive: called with the bindings after the tensors are checked, to
            bind symbols no tensor carries (num_kv_splits).
        provide: name -> function giving the tensor for a pointer parameter
            that was not given (called with the parameter, its shape, the
            device and the stream handle the launch will use); what it gives
            is checked like a given argument.
        stream: the launch's ``stream=`` (for `provide`).
    """
    provide = {k: v for k, v in (provide or {}).items() if plan.has(k)}
    for name, value in given.items():
        if value is not None and not plan.has(name):
            raise ArgumentError(
                name, f"this model's kernel has no {plan.feature_of(name)}")
    args: Dict[str, TensorArg] = {}
    for param in plan.pointer_params:
        name = param["name"]
        value = given.get(name)
        if value is None:
            if name in plan.outputs or name in provide:
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

    if derive is not None:
        derive(bindings)

    for param in plan.pointer_params:
        name = param["name"]
        if name in args or name in provide:
            continue
        args[name] = _allocate(plan, param, bindings, device[0])
        if device[0] is None:
            device[0] = args[name].device
        if param.get("strides") is not None:
            # A strided output the launcher made binds its stride symbols
            # (the contiguous strides).
            check_strides(param, args[name], param["strides"], bindings)

    missing = [p for p in plan.pointer_params
               if p["name"] in provide and p["name"] not in args]
    if missing:
        handle = resolve_stream(stream, device[0])
        for param in missing:
            name = param["name"]
            shape = _shape(param, bindings)
            arg = from_object(name, provide[name](param, shape, device[0], handle))
            check_argument(plan, param, arg, bindings, device, device_source)
            args[name] = arg

    scalars: Dict[str, int] = {}
    for param in plan.scalar_params:
        scalars[param["name"]] = _scalar(param["name"], param.get("kind"), bindings)
    launch_scalars = [_scalar(s, "i64", bindings) for s in plan.launch_scalars]
    return args, scalars, launch_scalars, device[0]


def bind_kv_splits(plan: KernelPlan, bindings: _Bindings,
                   requested: Any = None) -> int:
    """Binds num_kv_splits for a launch of `plan` (a kernel that takes it):
    the split rule's count for the bound grid values when `requested` is
    None, else `requested` after the checks of :meth:`SplitKv.choose`.
    Returns the count."""
    split_kv = plan.split_kv
    splits = split_kv.choose(split_kv.base(bindings.get), requested,
                             split_kv.busy(bindings.get))
    bindings.bind(KV_SPLITS, splits, "the split rule" if requested is None
                  else "num_kv_splits=")
    return splits


def no_kv_splits_rule(plan: KernelPlan) -> str:
    return (f"this model's kernel has no split-KV ({plan.name} takes no "
            f"{KV_SPLITS}); leave it None")


def choose_kv_splits(plan: KernelPlan, values: Mapping[str, int],
                     requested: Any = None) -> int:
    """The num_kv_splits a launch of `plan` with these symbol values
    (num_tokens, num_seqs, ...) gets: 1 for kernels without split-KV, else
    the split rule (or `requested`, checked). num_seqs_plus_one follows from
    num_seqs."""
    if not plan.takes_kv_splits:
        if requested is not None:
            raise ArgumentError(KV_SPLITS, no_kv_splits_rule(plan))
        return 1
    bindings = _Bindings()
    for name, value in values.items():
        bindings.bind(name, int(value), name)
    return bind_kv_splits(plan, bindings, requested)


def _scalar(name: str, kind: Optional[str], bindings: _Bindings) -> int:
    value = bindings.get(name)
    if value is None:
        raise ArgumentError(name, "cannot be derived from the tensors (no "
                            "argument has a dim of that name)")
    if kind == "i32" and value > _INT32_MAX:
        raise ArgumentError(name, f"{value} does not fit the kernel's int32")
    return value


def _shape(param: Mapping[str, Any], bindings: _Bindings) -> List[int]:
    """The shape of a parameter the launcher makes, from the bindings."""
    shape = []
    for dim in param.get("shape") or []:
        if isinstance(dim, str):
            value = bindings.get(dim)
            if value is None:
                raise ArgumentError(param["name"], f"not given, and its dim {dim} "
                                    "cannot be derived from the other arguments")
            shape.append(value)
        else:
            shape.append(int(dim))
    return shape


def _allocate(plan: KernelPlan, param: Mapping[str, Any], bindings: _Bindings,
              device: Optional[int]) -> TensorArg:
    name = param["name"]
    torch = import_torch()
    if torch is None:
        raise ArgumentError(name, "not given, and allocating it needs torch "
                            "(pip install torch), or pass it")
    shape = _shape(param, bindings)
    if device is None:
        device = torch.cuda.current_device()
    tensor = torch.empty(shape, dtype=torch_dtype(param["dtype"]),
                         device=torch.device("cuda", device))
    return from_object(name, tensor)


def zeroed_workspace(param: Mapping[str, Any], shape: Sequence[int],
                     device: Optional[int], handle: int):
    """A new zero-filled tensor for `param` (torch.zeros on `device`, default
    torch's current device), ready for a launch on stream `handle`: when
    that is not torch's current stream, stream `handle` waits for the zero
    fill on the GPU (an event, no host synchronisation, so this works while
    capturing), and the tensor is recorded as used on `handle`, so torch's
    allocator does not reuse its memory before that stream's work is done."""
    name = param["name"]
    torch = import_torch()
    if torch is None:
        raise ArgumentError(name, "not given, and allocating it needs torch "
                            "(pip install torch), or pass it (a zero-filled "
                            f"{describe_dtype(param['dtype'])} tensor of shape "
                            f"{list(shape)}, one per stream)")
    if device is None:
        device = torch.cuda.current_device()
    where = torch.device("cuda", device)
    tensor = torch.zeros(list(shape), dtype=torch_dtype(param["dtype"]), device=where)
    current = torch.cuda.current_stream(where)
    if int(current.cuda_stream) != handle:
        other = torch.cuda.ExternalStream(handle, device=where)
        other.wait_stream(current)
        tensor.record_stream(other)
    return tensor


def launch(lib: Library, kernel_handle: int, plan: KernelPlan,
           given: Mapping[str, Any], stream: Any, *,
           derive: Optional[Callable[[_Bindings], None]] = None,
           provide: Optional[Mapping[str, Provider]] = None) -> Dict[str, Any]:
    """Checks, allocates, and launches. Returns the objects passed for every
    pointer parameter (allocated outputs as torch tensors), by name.
    `derive` and `provide` are as for :func:`prepare_launch`."""
    args, scalars, launch_scalars, device = prepare_launch(
        plan, given, derive=derive, provide=provide, stream=stream)
    handle = resolve_stream(stream, device)

    keep = []  # ctypes values must outlive the call
    pointers = (ctypes.c_void_p * len(plan.params))()
    for i, param in enumerate(plan.params):
        name = param["name"]
        if param.get("kind") == "tensor_map":
            pointers[i] = None  # the runtime encodes it from the tensor it maps
            continue
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
