"""Launch plans: the engine path.

A plan is made once per layer and kernel with the tensors that stay the same
from step to step (the KV caches, norm weights, sinks, fp8 scales, the
split-KV workspace). Making it checks those tensors fully, as the checked
path (:meth:`Model.preprocess` / :meth:`Model.attention`) does, prepares the
kernel in the current CUDA context (module, function, shared-memory limit)
and creates its C launch plan (``attnc_launch_plan_create``). ``run(...)``
then takes only the tensors of one step, writes their data pointers and the
step's sizes into a buffer bound to the C plan once, and launches with one
C call (``attnc_launch_plan_run``): no locks, lookups or allocations, so a
run may be captured in a CUDA graph.

What a run checks, in code generated for the kernel when the plan is made
(one comparison per fact, no loops): each tensor's dtype, its shape against
the ABI (constants, and the symbols the step's tensors bind: num_tokens,
num_seqs, ...; symbols the plan's own tensors bound are constants by then),
C-contiguity (for a tensor whose ABI entry has "strides", those strides
instead, by the checked path's rules, passed to the kernel), 16-byte
alignment of the data pointer and the device. On any
failure the step's arguments go through the checked path, which raises the
:class:`~attnc.ArgumentError` that names the argument and the rule, so both
paths report the same error the same way.

Runs take torch tensors only (the checked path also takes
``__cuda_array_interface__`` and DLPack objects).
"""

from __future__ import annotations

import ctypes
import threading
import weakref
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import ArgumentError
from ._launch import (KV_SPLITS, WORKSPACE, KernelPlan, _Bindings,
                      check_argument, choose_kv_splits, prepare_launch,
                      row_granule, zeroed_workspace)
from ._streams import resolve_stream
from ._tensors import (ALIGNMENT, ITEMSIZE, from_object, import_torch,
                       torch_dtype)

_INT32_MAX = 2**31 - 1

#: Symbols that follow from another: name -> (base, offset).
_DERIVED = {"num_seqs_plus_one": ("num_seqs", 1)}


class _CPlan:
    """An attnc_launch_plan_t, destroyed with its owner."""

    def __init__(self, lib, kernel_handle: int, device: int):
        torch = import_torch()
        handle = ctypes.c_void_p()
        with torch.cuda.device(device):
            torch.cuda.init()
            # The kernel launches in the current CUDA context: make torch's
            # primary context of `device` current on this thread first.
            torch.cuda.current_stream(device)
            lib.check(lib.attnc_launch_plan_create(ctypes.c_void_p(kernel_handle),
                                                   ctypes.byref(handle)))
        self.handle = handle.value
        self._finalizer = weakref.finalize(self, lib.attnc_launch_plan_destroy,
                                           ctypes.c_void_p(self.handle))


def _raw_stream_getter(torch):
    """A fast `device -> current CUstream` (torch's private getter when it
    has one: one C call, no Stream object)."""
    getter = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if getter is not None:
        return getter
    return lambda device: int(torch.cuda.current_stream(device).cuda_stream)


class LaunchPlan:
    """One kernel's launch with its fixed tensors bound (see the module doc).

    Args:
        model: the :class:`attnc.Model`.
        layer: layer kind name or index.
        kind: the kernel kind: ``"preprocess"``, ``"attention"``,
            ``"prefill_attention"``, ``"latent_attention"``,
            ``"varlen_attention"`` or ``"latent_gather"``.
        bound: parameter name -> tensor (or None) fixed for the plan's
            lifetime. Every pointer parameter of the kernel must be either
            bound here or listed in `step`.
        step: the parameter names each run takes, in the order of
            ``run``'s positional arguments.
        python_names: parameter name -> the name the caller uses (messages).
    """

    def __init__(self, model, layer, kind: str, *, bound: Mapping[str, Any],
                 step: Sequence[str], python_names: Mapping[str, str] = {}):
        torch = import_torch()
        if torch is None:
            raise ArgumentError("plan", "launch plans need torch (pip install torch)")
        kernel, kplan = model._plan(layer, kind)
        self._model = model
        self._kernel = kernel
        self._kplan: KernelPlan = kplan
        self.layer = model.layer_kind(layer)
        self.kind = kind
        self.name = kplan.name
        self._python_names = dict(python_names)
        lib = model._lib
        self._lib = lib

        # Which pointer parameters each run gives, which the plan holds.
        self.step_names = [n for n in step if kplan.has(n)]
        for name, value in bound.items():
            if value is not None and not kplan.has(name):
                raise ArgumentError(self._py(name), f"this model's kernel has no "
                                    f"{kplan.feature_of(name)}")
        self._bound: Dict[str, Any] = {}
        for param in kplan.pointer_params:
            name = param["name"]
            if name in self.step_names:
                continue
            value = bound.get(name)
            if value is None:
                if name == WORKSPACE:
                    continue  # made below
                raise ArgumentError(
                    self._py(name), f"missing: this model's kernel has "
                    f"{kplan.feature_of(name)} and the plan needs {self._py(name)}")
            self._bound[name] = value

        # Check the plan's own tensors once, binding their symbols.
        bindings = _Bindings()
        device: List[Optional[int]] = [None]
        source = [""]
        for param in kplan.pointer_params:
            name = param["name"]
            if name in self._bound:
                arg = from_object(self._py(name), self._bound[name])
                arg.name = name
                check_argument(kplan, param, arg, bindings, device, source)
        if device[0] is None:
            device[0] = torch.cuda.current_device()
        self.device: int = device[0]
        if kplan.has(WORKSPACE) and WORKSPACE not in self._bound:
            param = next(p for p in kplan.pointer_params if p["name"] == WORKSPACE)
            shape = [int(d) for d in param.get("shape") or []]
            # Zero-filled now, before any capture; every launch leaves it
            # reusable, so runs on one stream share it.
            self._bound[WORKSPACE] = zeroed_workspace(
                param, shape, self.device, resolve_stream(None, self.device))
            arg = from_object(WORKSPACE, self._bound[WORKSPACE])
            check_argument(kplan, param, arg, bindings, device, source)
        self._static_bindings = bindings

        # The value buffer: one 8-byte slot per parameter (pointers and i64
        # fill it, i32 its low half: little-endian), and the argument array
        # of pointers into it that cuLaunchKernel reads.
        params = kplan.params
        self._values = (ctypes.c_int64 * max(len(params), 1))()
        base = ctypes.addressof(self._values)
        # (NULL for a tensor map: the runtime encodes it at each launch)
        self._args = (ctypes.c_void_p * max(len(params), 1))(
            *[None if p.get("kind") == "tensor_map" else base + 8 * i
              for i, p in enumerate(params)])
        self._launch_scalars = (ctypes.c_int64 * max(len(kplan.launch_scalars), 1))()
        for i, param in enumerate(params):
            if param["name"] in self._bound:
                self._values[i] = from_object(param["name"], self._bound[param["name"]]).ptr

        self._cplan = _CPlan(lib, kernel._handle, self.device)
        run_c = lib.attnc_launch_plan_run
        self._splits: Dict[Tuple[int, ...], int] = {}
        self._splits_lock = threading.Lock()
        self._run = self._generate(torch, run_c)

    @property
    def programmatic_launch(self) -> bool:
        """Whether runs launch with programmatic dependent launch (the
        kernel's ABI says ``programmatic_dependent_launch``, the switch is on,
        the device is sm_90 or newer and the driver has cuLaunchKernelEx;
        ``attnc_launch_plan_programmatic_launch``)."""
        return bool(self._lib.attnc_launch_plan_programmatic_launch(
            ctypes.c_void_p(self._cplan.handle)))

    # ---- per-batch planning --------------------------------------------------

    @property
    def takes_kv_splits(self) -> bool:
        return self._kplan.takes_kv_splits

    def plan(self, num_tokens: int, num_seqs: int, *,
             num_kv_splits: Optional[int] = None) -> int:
        """Fixes the split count runs use for batches of `num_tokens` query
        rows in `num_seqs` sequences: the split rule's (as
        :meth:`Model.attention_splits`), or `num_kv_splits` after its checks.
        Returns it (1 for kernels without split-KV). Runs of a batch shape
        that was never planned use the rule (planned on first sight)."""
        splits = choose_kv_splits(self._kplan, dict(
            num_tokens=int(num_tokens), num_seqs=int(num_seqs)), num_kv_splits)
        with self._splits_lock:
            self._splits[(int(num_tokens), int(num_seqs))] = splits
        return splits

    def _splits_for(self, num_tokens: int, num_seqs: int) -> int:
        key = (num_tokens, num_seqs)
        splits = self._splits.get(key)
        if splits is None:
            splits = self.plan(num_tokens, num_seqs)
        return splits

    # ---- the generated run -------------------------------------------------

    def _py(self, name: str) -> str:
        return self._python_names.get(name, name)

    def _generate(self, torch, run_c):
        """Writes and compiles the run function of this kernel (see the
        module doc): straight-line checks, then the buffer writes and the C
        call."""
        kplan = self._kplan
        static = self._static_bindings
        env: Dict[str, Any] = {"_values": self._values,
                               "_plan_args": ctypes.addressof(self._args),
                               "_launch_scalars": self._launch_scalars,
                               "_scalars_ptr": ctypes.addressof(self._launch_scalars),
                               "_run_c": run_c, "_plan": self._cplan.handle,
                               "_raw_stream": _raw_stream_getter(torch),
                               "_resolve": resolve_stream, "_dev": self.device,
                               "_self": self, "_error_for": self._lib.error_for}
        lines: List[str] = []
        known: Dict[str, str] = {}  # symbol -> expression holding it

        def symbol_value(symbol: str) -> Optional[str]:
            value = static.get(symbol)
            if value is not None:
                return repr(int(value))
            if symbol in known:
                return known[symbol]
            base = _DERIVED.get(symbol)
            if base is not None and base[0] in known:
                return f"({known[base[0]]} + {base[1]})"
            for derived, (b, offset) in _DERIVED.items():
                if b == symbol and derived in known:
                    return f"({known[derived]} - {offset})"
            return None

        arg_names = [f"a{i}" for i in range(len(self.step_names))]
        for k, name in enumerate(self.step_names):
            a = arg_names[k]
            param = next(p for p in kplan.pointer_params if p["name"] == name)
            env[f"_dt{k}"] = torch_dtype(param["dtype"])
            shape = param.get("shape")
            lines.append(f"if {a}.dtype is not _dt{k}: return _self._slow({k}, args, stream)")
            lines.append(f"s{k} = {a}.shape")
            if shape is not None:
                lines.append(f"if len(s{k}) != {len(shape)}: return _self._slow({k}, args, stream)")
                for d, dim in enumerate(shape):
                    if isinstance(dim, str):
                        expr = symbol_value(dim)
                        if expr is None:
                            var = f"y_{dim}"
                            lines.append(f"{var} = s{k}[{d}]")
                            known[dim] = var
                            if dim in _DERIVED:
                                lines.append(f"if {var} < {_DERIVED[dim][1]}: "
                                             f"return _self._slow({k}, args, stream)")
                        else:
                            lines.append(f"if s{k}[{d}] != {expr}: "
                                         f"return _self._slow({k}, args, stream)")
                    else:
                        lines.append(f"if s{k}[{d}] != {int(dim)}: "
                                     f"return _self._slow({k}, args, stream)")
            strides = param.get("strides")
            if strides is not None and shape is not None:
                # A view with free strides (ABI "strides"): the layout
                # checks of _launch.check_strides, inline.
                self._stride_checks(lines, k, param, strides, symbol_value, known,
                                    env)
                contiguous = ""
            else:
                contiguous = f"not {a}.is_contiguous() or "
            lines.append(f"p{k} = {a}.data_ptr()")
            lines.append(f"if p{k} & {ALIGNMENT - 1} or {contiguous}"
                         f"{a}.get_device() != _dev or (not p{k} and {a}.numel()): "
                         f"return _self._slow({k}, args, stream)")
        if "num_tokens" in known and "num_seqs" in known:
            lines.append(f"if {known['num_tokens']} and not {known['num_seqs']}: "
                         "return _self._slow(0, args, stream)")

        # Buffer writes: step pointers, step scalars, split count.
        index = {p["name"]: i for i, p in enumerate(kplan.params)}
        for k, name in enumerate(self.step_names):
            lines.append(f"_values[{index[name]}] = p{k}")
        for param in kplan.scalar_params:
            name = param["name"]
            i = index[name]
            if name == KV_SPLITS:
                continue
            expr = symbol_value(name)
            if expr is None:
                raise ArgumentError(self._py(name), f"kernel {self.name}: cannot "
                                    "be derived from the plan's or a run's tensors")
            if static.get(name) is not None:
                self._values[i] = int(static.get(name))
                continue
            if param.get("kind") == "i32":
                lines.append(f"if {expr} > {_INT32_MAX}: return _self._slow(0, args, stream)")
            lines.append(f"_values[{i}] = {expr}")
        if kplan.has(KV_SPLITS):
            kplan.split_kv  # an ABI without the hints fails here, by name
            tokens, seqs = symbol_value("num_tokens"), symbol_value("num_seqs")
            if tokens is None or seqs is None:
                raise ArgumentError(KV_SPLITS, f"kernel {self.name}: the split "
                                    "rule needs num_tokens and num_seqs from the "
                                    "run's tensors")
            lines.append(f"_values[{index[KV_SPLITS]}] = _self._splits.get(({tokens}, {seqs})) "
                         f"or _self._splits_for({tokens}, {seqs})")
        for j, scalar in enumerate(kplan.launch_scalars):
            expr = symbol_value(scalar)
            if expr is None:
                raise ArgumentError(scalar, f"kernel {self.name}: launch scalar "
                                    "cannot be derived from the tensors")
            lines.append(f"_launch_scalars[{j}] = {expr}")
        lines.append("h = _raw_stream(_dev) if stream is None else _resolve(stream, _dev)")
        lines.append("rc = _run_c(_plan, h, _plan_args, _scalars_ptr)")
        lines.append("if rc: raise _error_for(rc)")
        body = "\n    ".join(lines)
        params = ", ".join(arg_names)
        source = (f"def run({params}, stream=None):\n"
                  f"    args = ({params}{',' if len(arg_names) == 1 else ''})\n"
                  f"    {body}\n")
        self.source = source  # for debugging: plan.source
        exec(compile(source, f"<attnc plan {self.name}>", "exec"), env)  # noqa: S102
        return env["run"]

    @staticmethod
    def _stride_checks(lines: List[str], k: int, param: Mapping[str, Any],
                       strides: Sequence[Any], symbol_value, known: Dict[str, str],
                       env: Dict[str, Any]) -> None:
        """Appends the run's checks of step tensor `k` against its ABI
        strides (the rules of :func:`_launch.check_strides`: a constant is
        the stride; a symbol takes it, positive, a multiple of the stride
        granule in bytes, at most 2^31 - 1, equal to the symbol's other
        sources; dims of size 1 and empty tensors take the contiguous
        stride unchecked) and makes each stride symbol known."""
        shape = param["shape"]
        if len(strides) != len(shape):
            raise ArgumentError(param["name"], f"the ABI gives {len(strides)} strides "
                                f"for {len(shape)} dims")
        itemsize = ITEMSIZE.get(param.get("dtype"), 1)
        last = shape[-1] if shape else 1
        if isinstance(last, str):
            env["row_granule"] = row_granule
            granule = f"row_granule({itemsize}, s{k}[-1])"
        else:
            granule = repr(row_granule(itemsize, int(last)))
        slow = f"return _self._slow({k}, args, stream)"
        lines.append(f"t{k} = a{k}.stride()")
        lines.append(f"u{k} = 0 not in s{k}")  # empty: every stride unused
        for i, want in enumerate(strides):
            used = f"u{k} and s{k}[{i}] != 1"
            if not isinstance(want, str):
                lines.append(f"if {used} and t{k}[{i}] != {int(want)}: {slow}")
                continue
            # The contiguous stride of dim i: the product of the later dims
            # (a 0 counted as 1, as _tensors.contiguous_strides does).
            later = [repr(max(int(d), 1)) if not isinstance(d, str) else f"(s{k}[{j}] or 1)"
                     for j, d in enumerate(shape) if j > i]
            contiguous = " * ".join(later) or "1"
            var = f"x{k}_{i}"
            lines.append(f"{var} = t{k}[{i}] if {used} else {contiguous}")
            lines.append(f"if {var} <= 0 or {var} > {_INT32_MAX} or "
                         f"({used} and {var} * {itemsize} % {granule}): {slow}")
            expr = symbol_value(want)
            if expr is None:
                known[want] = var
            else:
                lines.append(f"if {var} != {expr}: {slow}")

    def _slow(self, which: int, args: Sequence[Any], stream: Any) -> None:
        """A run whose fast checks failed: the checked path's checks on the
        same arguments raise the named error."""
        given = dict(self._bound)
        given.update(zip(self.step_names, args))
        kplan = self._kplan

        def derive(bindings):
            if kplan.takes_kv_splits:
                tokens, seqs = bindings.get("num_tokens"), bindings.get("num_seqs")
                bindings.bind(KV_SPLITS, self._splits_for(tokens or 0, seqs or 0),
                              "the plan")

        try:
            _, _, _, device = prepare_launch(kplan, given, derive=derive)
        except ArgumentError as error:
            raise ArgumentError(self._py(error.argument), error.rule) from None
        name = self.step_names[which] if self.step_names else "?"
        if device is not None and device != self.device:
            raise ArgumentError(self._py(name), f"is on cuda:{device}, but the plan "
                                f"was made for tensors on cuda:{self.device}")
        raise ArgumentError(self._py(name), "does not match the plan (a torch tensor "
                            "of the ABI's dtype, shape and layout, contiguous and "
                            f"16-byte aligned, on cuda:{self.device})")


class PreprocessPlan(LaunchPlan):
    """The preprocess kernel of one layer with its caches and weights bound;
    made by :meth:`attnc.Model.preprocess_plan`."""

    def __init__(self, model, layer, **bound):
        step = ["qkv", "slot_mapping", "positions", "q_out", "gate_out"]
        super().__init__(model, layer, "preprocess", bound=bound, step=step)
        self._has_gate = self._kplan.has("gate_out")
        self._has_positions = self._kplan.has("positions")

    def run(self, qkv, slot_mapping, positions=None, *, q_out, gate_out=None,
            stream=None):
        """Runs the preprocess (as :meth:`Model.preprocess`) on one step's
        tensors: ``qkv [num_tokens, fused_width]``, ``slot_mapping``,
        ``positions`` (iff the model has rope), ``q_out`` and ``gate_out``
        (iff the model has an output gate), all given (no allocation).
        Returns q_out, or (q_out, gate_out)."""
        args = [qkv, slot_mapping]
        if self._has_positions:
            args.append(positions)
        elif positions is not None:
            raise ArgumentError("positions", "this model's kernel has no rope")
        args.append(q_out)
        if self._has_gate:
            args.append(gate_out)
        elif gate_out is not None:
            raise ArgumentError("gate_out", "this model's kernel has no output gate")
        if any(a is None for a in args):
            name = self.step_names[[a is None for a in args].index(True)]
            raise ArgumentError(name, f"missing: {self.name} needs {name}")
        self._run(*args, stream=stream)
        return (q_out, gate_out) if self._has_gate else q_out


class AttentionPlan(LaunchPlan):
    """The attention kernel of one layer with its caches (and sinks, fp8
    scales, split-KV workspace) bound; made by
    :meth:`attnc.Model.attention_plan` (kind ``"attention"``) or
    :meth:`attnc.Model.prefill_attention_plan` (``"prefill_attention"``)."""

    def __init__(self, model, layer, kind: str = "attention", **bound):
        step = ["query", "block_tables", "seq_lens", "query_start_loc", "gate",
                "output"]
        if kind not in ("attention", "prefill_attention"):
            raise ArgumentError("kind", f"expected 'attention' or 'prefill_attention', "
                                f"got {kind!r}")
        super().__init__(model, layer, kind, bound=bound, step=step,
                         python_names={"output": "out"})
        self._has_gate = self._kplan.has("gate")

    def run(self, query, block_tables, seq_lens, query_start_loc, *, out,
            gate=None, stream=None):
        """Runs the attention (as :meth:`Model.attention`) on one step's
        tensors, all given: ``query``, ``block_tables``, ``seq_lens``,
        ``query_start_loc``, ``gate`` (iff the model has an output gate)
        and ``out``. The split count is the one :meth:`plan` fixed for this
        batch shape (the rule when it was never planned). Returns out."""
        if self._has_gate:
            if gate is None:
                raise ArgumentError("gate", "missing: this model's kernel has an "
                                    "output gate and needs gate")
            self._run(query, block_tables, seq_lens, query_start_loc, gate, out,
                      stream=stream)
        else:
            if gate is not None:
                raise ArgumentError("gate", "this model's kernel has no output gate")
            self._run(query, block_tables, seq_lens, query_start_loc, out,
                      stream=stream)
        return out

    @property
    def workspace(self):
        """The split-KV workspace the plan launches with (None without
        split-KV)."""
        return self._bound.get(WORKSPACE)


class MlaPreprocessPlan(LaunchPlan):
    """MLA's preprocess kernel (``mla_preprocess``) of one layer with its
    norm weight and latent cache (and fp8 ``cache_scale``) bound; made by
    :meth:`attnc.Model.mla_preprocess_plan`. The step tensors may be the
    strided views :meth:`Model.mla_preprocess` takes (kv_a / latent_out
    rows, q_rope / q_rope_out tokens and heads; latent_out may be kv_a and
    q_rope_out may be q_rope or a view into the absorbed query)."""

    def __init__(self, model, layer, **bound):
        step = ["kv_a", "q_rope", "slot_mapping", "positions", "latent_out",
                "q_rope_out"]
        super().__init__(model, layer, "mla_preprocess", bound=bound, step=step)

    def run(self, kv_a, q_rope, slot_mapping, positions, *, latent_out, q_rope_out,
            stream=None):
        """Runs the preprocess (as :meth:`Model.mla_preprocess`) on one
        step's tensors, all given. Returns ``(latent_out, q_rope_out)``."""
        self._run(kv_a, q_rope, slot_mapping, positions, latent_out, q_rope_out,
                  stream=stream)
        return latent_out, q_rope_out


class LatentAttentionPlan(LaunchPlan):
    """MLA's absorbed decode kernel (``latent_attention``) of one layer with
    its latent cache (and fp8 ``cache_scale``, split-KV workspace) bound;
    made by :meth:`attnc.Model.latent_attention_plan`."""

    def __init__(self, model, layer, **bound):
        step = ["query", "block_tables", "seq_lens", "query_start_loc", "output"]
        super().__init__(model, layer, "latent_attention", bound=bound, step=step,
                         python_names={"output": "out"})

    def run(self, query, block_tables, seq_lens, query_start_loc, *, out,
            stream=None):
        """Runs the decode (as :meth:`Model.latent_attention`) on one step's
        tensors, all given: ``query [num_tokens, num_heads, R + P]``,
        ``block_tables``, ``seq_lens``, ``query_start_loc`` and ``out
        [num_tokens, num_heads, R]``. The split count is the one
        :meth:`plan` fixed for this batch shape (the rule when it was never
        planned). Returns out."""
        self._run(query, block_tables, seq_lens, query_start_loc, out, stream=stream)
        return out

    @property
    def workspace(self):
        """The split-KV workspace the plan launches with (None without
        split-KV)."""
        return self._bound.get(WORKSPACE)


class VarlenAttentionPlan(LaunchPlan):
    """The varlen attention kernel (``varlen_attention``: MLA's
    decompressed prefill over ragged contiguous K/V) of one layer with its
    split-KV workspace bound; made by
    :meth:`attnc.Model.varlen_attention_plan`. Every tensor but the
    workspace is a step tensor: query, key and value may be views with free
    token and head strides, as for :meth:`Model.varlen_attention`."""

    def __init__(self, model, layer, **bound):
        step = ["query", "key", "value", "cu_seqlens_q", "cu_seqlens_k", "output"]
        super().__init__(model, layer, "varlen_attention", bound=bound, step=step,
                         python_names={"output": "out"})

    def run(self, query, key, value, cu_seqlens_q, cu_seqlens_k, *, out,
            stream=None):
        """Runs the attention (as :meth:`Model.varlen_attention`) on one
        step's tensors, all given: ``query [num_tokens, num_q_heads,
        qk_head_dim]``, ``key``, ``value``, ``cu_seqlens_q``,
        ``cu_seqlens_k`` and ``out [num_tokens, num_q_heads, v_head_dim]``.
        The split count is the one :meth:`plan` fixed for (num_tokens,
        num_seqs) (the rule when it was never planned). Returns out."""
        self._run(query, key, value, cu_seqlens_q, cu_seqlens_k, out, stream=stream)
        return out

    @property
    def workspace(self):
        """The split-KV workspace the plan launches with (None without
        split-KV)."""
        return self._bound.get(WORKSPACE)


class LatentGatherPlan(LaunchPlan):
    """MLA's latent gather kernel (``latent_gather``) of one layer with its
    latent cache (and fp8 ``cache_scale``) bound; made by
    :meth:`attnc.Model.latent_gather_plan`."""

    def __init__(self, model, layer, **bound):
        step = ["block_tables", "cu_seqlens", "output"]
        super().__init__(model, layer, "latent_gather", bound=bound, step=step,
                         python_names={"output": "out"})

    def run(self, block_tables, cu_seqlens, *, out, stream=None):
        """Copies the cached rows (as :meth:`Model.latent_gather`) of one
        step's sequences: ``block_tables``, ``cu_seqlens`` and ``out
        [num_tokens, R + P]`` (at least ``cu_seqlens[-1]`` rows), all given.
        Returns out."""
        self._run(block_tables, cu_seqlens, out, stream=stream)
        return out
