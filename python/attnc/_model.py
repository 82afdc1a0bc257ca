"""Contexts, models and kernels: the Python face of attnc_context_t and
attnc_model_t."""

from __future__ import annotations

import ctypes
import json
import os
import threading
import warnings
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import ArgumentError, AttncWarning, ConfigError, NotFoundError
from ._library import (BUILD_OUTCOMES, BuildReport, ContextOptions, Library,
                       ModelOptions, WARNING_CALLBACK, library)
from . import _launch, _tensors
from ._launch import KV_SPLITS, WORKSPACE, KernelPlan, launch
from ._tensors import torch_module

PathLike = Union[str, "os.PathLike[str]"]


def _encode(text: Optional[Union[str, "os.PathLike[str]"]]) -> Optional[bytes]:
    return None if text is None else os.fsencode(text)


def _decode(value: Optional[bytes]) -> str:
    return value.decode("utf-8", "replace") if value else ""


# ---- context ----------------------------------------------------------------

class Context:
    """An attnc runtime context: options, kernel cache, NVRTC and driver.

    Most code never makes one: :func:`compile` and :func:`load` use a shared
    default context per (cache_dir, arch). Make one to choose the libraries or
    to bypass the cache.

    Args:
        cache_dir: disk cache root. ``None``: ``$ATTNC_CACHE_DIR``, else
            ``$XDG_CACHE_HOME/attnc``, else ``~/.cache/attnc``.
        archs: archs to compile for; ``None``: ``("sm_90a",)``.
        disable_cache: bypass the memory and disk caches.
        nvrtc_library: libnvrtc to load (``None``: ``$CUDA_HOME/lib64``,
            ``/usr/local/cuda/lib64``, then the loader's search path).
        cuda_driver_library: CUDA driver library (``None``: libcuda.so.1).
        disable_pdl: launch every kernel without programmatic dependent
            launch (``ATTNC_PDL=0`` in the environment does the same for the
            whole process); e.g. to compare a CUDA graph of decode steps with
            and without the overlap in one run.

    Warnings from the runtime (a corrupt cache entry recompiled, an unwritable
    cache directory) are issued as :class:`attnc.AttncWarning`.
    Thread safety: a context may be used from many threads at once.
    """

    def __init__(self, *, cache_dir: Optional[PathLike] = None,
                 archs: Optional[Sequence[str]] = None,
                 disable_cache: bool = False,
                 nvrtc_library: Optional[PathLike] = None,
                 cuda_driver_library: Optional[PathLike] = None,
                 disable_pdl: bool = False):
        lib = library()
        self._lib = lib
        options = ContextOptions()
        lib.attnc_context_options_initialize(ctypes.byref(options))
        # Everything the options point to stays referenced by self.
        self._cache_dir = _encode(cache_dir)
        self._archs = [a.encode() for a in (archs or ())]
        self._arch_array = (ctypes.c_char_p * max(len(self._archs), 1))(*self._archs)
        self._nvrtc = _encode(nvrtc_library)
        self._driver = _encode(cuda_driver_library)
        self._callback = WARNING_CALLBACK(_warn)
        options.cache_dir = self._cache_dir
        if self._archs:
            options.archs = self._arch_array
            options.num_archs = len(self._archs)
        options.disable_cache = 1 if disable_cache else 0
        options.nvrtc_library_path = self._nvrtc
        options.cuda_driver_library = self._driver
        options.warning_callback = self._callback
        options.disable_pdl = 1 if disable_pdl else 0
        handle = ctypes.c_void_p()
        lib.check(lib.attnc_context_create(ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle.value
        self.archs = tuple(archs or ("sm_90a",))
        self._disable_cache = bool(disable_cache) or os.environ.get(
            "ATTNC_DISABLE_CACHE", "") not in ("", "0", "false")
        # compile()'s memo: (entry, text, options) -> a template Model.
        self._models: Dict[Any, "Model"] = {}
        self.cache_dir = None if cache_dir is None else Path(cache_dir)
        # Kernel sets keep the context's internals alive (Runtime.h), so the
        # context may go before the models made with it.
        self._finalizer = weakref.finalize(self, lib.attnc_context_destroy,
                                           ctypes.c_void_p(self._handle))
        self._finalizer.atexit = False

    @property
    def handle(self) -> int:
        """The attnc_context_t, as an int."""
        return self._handle

    def nvrtc_version(self) -> Tuple[int, int]:
        """(major, minor) of the NVRTC this context compiles with (loads it).

        Raises:
            NoDriverError: NVRTC cannot be loaded.
        """
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._lib.check(self._lib.attnc_context_nvrtc_version(
            ctypes.c_void_p(self._handle), ctypes.byref(major), ctypes.byref(minor)))
        return major.value, minor.value

    def __repr__(self) -> str:
        return f"attnc.Context(archs={list(self.archs)}, cache_dir={self.cache_dir})"


def _warn(_user_data, message):
    try:
        warnings.warn(_decode(message), AttncWarning, stacklevel=2)
    except Exception:  # noqa: BLE001 - never raise into C
        pass


_default_contexts: Dict[Tuple[Optional[str], str], Context] = {}
_default_lock = threading.Lock()


def default_context(cache_dir: Optional[PathLike] = None,
                    arch: str = "sm_90a") -> Context:
    """The shared context for (cache_dir, arch), made on first use."""
    key = (None if cache_dir is None else os.fspath(cache_dir), arch)
    with _default_lock:
        context = _default_contexts.get(key)
        if context is None:
            context = Context(cache_dir=cache_dir, archs=[arch])
            _default_contexts[key] = context
        return context


# ---- kernels -----------------------------------------------------------------

@dataclass
class Kernel:
    """One generated kernel of a model.

    Attributes:
        name: the entry point, ``"<layer>__<kind>"``.
        kind: ``"preprocess"``, ``"attention"``, ``"mla_preprocess"``,
            ``"latent_attention"``, ``"varlen_attention"``, ``"latent_gather"``.
        layer: the layer kind it belongs to (``"full_attention"``, ...).
        abi: the kernel's ABI (parameter names, dtypes and shapes, block,
            grid rule, dynamic shared memory) as a dict.
        source: the generated CUDA C++ source.
    """

    name: str
    kind: str
    layer: str
    abi: Dict[str, Any]
    source: str
    _set: int = field(default=0, repr=False, compare=False)
    _handle: int = field(default=0, repr=False, compare=False)
    _lib: Any = field(default=None, repr=False, compare=False)

    @property
    def params(self) -> List[str]:
        """The kernel's parameter names, in order."""
        return [p["name"] for p in self.abi.get("params", [])]

    def build_reports(self) -> List[Dict[str, Any]]:
        """How each arch's binary was obtained: dicts with ``arch``,
        ``outcome`` ("memory_hit", "disk_hit", "compiled", "bundle"),
        ``total_ms``, ``compile_ms``, ``lock_wait_ms``, ``cache_key`` and
        ``cache_entry_path``."""
        lib = self._lib
        reports = []
        handle = ctypes.c_void_p(self._set)
        for i in range(lib.attnc_kernel_set_arch_count(handle)):
            report = BuildReport()
            lib.check(lib.attnc_kernel_set_build_report(handle, i, ctypes.byref(report)))
            reports.append({
                "arch": _decode(report.arch),
                "outcome": BUILD_OUTCOMES.get(report.outcome, str(report.outcome)),
                "total_ms": report.total_ms,
                "compile_ms": report.compile_ms,
                "lock_wait_ms": report.lock_wait_ms,
                "cache_key": _decode(report.cache_key),
                "cache_entry_path": _decode(report.cache_entry_path),
            })
        return reports

    @property
    def tier(self) -> str:
        """``"baseline"`` while a tiered kernel's launches use its baseline
        form (its optimised form compiling, or done and waiting for a launch
        boundary), else ``"optimised"`` (see :func:`attnc.compile`'s
        ``tiered``)."""
        tier = self._lib.attnc_kernel_set_tier(ctypes.c_void_p(self._set))
        return "baseline" if tier == _TIER_BASELINE else "optimised"

    def cubin(self, arch: Optional[str] = None) -> bytes:
        """The kernel's cubin for `arch` (default: the first arch)."""
        lib = self._lib
        handle = ctypes.c_void_p(self._set)
        if arch is None:
            arch = _decode(lib.attnc_kernel_set_arch(handle, 0))
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        lib.check(lib.attnc_kernel_set_cubin(handle, arch.encode(),
                                             ctypes.byref(data), ctypes.byref(size)))
        return ctypes.string_at(data, size.value)

    def ptx(self, arch: Optional[str] = None) -> str:
        """The kernel's PTX for `arch` (default: the first arch); empty for
        a kernel loaded from a bundle, which keeps cubins only."""
        lib = self._lib
        handle = ctypes.c_void_p(self._set)
        if arch is None:
            arch = _decode(lib.attnc_kernel_set_arch(handle, 0))
        text = ctypes.c_char_p()
        lib.check(lib.attnc_kernel_set_ptx(handle, arch.encode(), ctypes.byref(text)))
        return _decode(text.value)


#: attnc_kernel_set_tier's ATTNC_KERNEL_TIER_BASELINE.
_TIER_BASELINE = 1
#: attnc_tiering_t by the values compile's ``tiered`` takes.
_TIERING = {True: 1, False: 2, "baseline": 3}

# Argument name -> the model feature it belongs to (for error messages).
_PREPROCESS_FEATURES = {
    "positions": "rope",
    "q_norm_weight": "q/k norm",
    "k_norm_weight": "q/k norm",
    "q_norm_bias": "q/k layernorm bias",
    "k_norm_bias": "q/k layernorm bias",
    "k_scale": "fp8 cache",
    "v_scale": "fp8 cache",
    "gate_out": "output gate",
}
_MLA_PREPROCESS_FEATURES = {
    "cache_scale": "fp8 latent cache",
}
_ATTENTION_FEATURES = {
    "sinks": "attention sinks",
    "k_scale": "fp8 cache",
    "v_scale": "fp8 cache",
    "gate": "output gate",
    "workspace": "split-KV workspace",
}

_LATENT_ATTENTION_FEATURES = {
    "cache_scale": "fp8 latent cache",
    "workspace": "split-KV workspace",
}

_VARLEN_ATTENTION_FEATURES = {
    "workspace": "split-KV workspace",
}

_LATENT_GATHER_FEATURES = {
    "cache_scale": "fp8 latent cache",
}


#: Split-KV workspaces a model keeps for its checked attention launches, one
#: per (device, stream, shape); the least recently used goes first.
_MAX_WORKSPACES = 8


# ---- model -------------------------------------------------------------------

class Model:
    """A compiled (or loaded) model: one preprocess and one attention kernel
    per layer kind, ready to launch on torch (or any CUDA) tensors.

    Made by :func:`attnc.compile` or :func:`attnc.load`. Immutable (but for
    the split-KV workspaces it caches, see :meth:`attention`); launches may
    run from any number of threads.
    """

    def __init__(self, handle: int, context: Context):
        lib = context._lib
        self._lib: Library = lib
        self._handle = handle
        self._context = context
        self._finalizer = weakref.finalize(self, lib.attnc_model_destroy,
                                           ctypes.c_void_p(handle))
        # Modules are unloaded when the model goes; at interpreter exit the
        # CUDA contexts may already be torn down, so leave that to the OS.
        self._finalizer.atexit = False
        model = ctypes.c_void_p(handle)
        self.manifest: Dict[str, Any] = json.loads(
            _decode(lib.attnc_model_manifest_json(model)) or "{}")
        self.kernels: List[Kernel] = []
        for i in range(lib.attnc_model_kernel_count(model)):
            name = _decode(lib.attnc_model_kernel_name(model, i))
            kernel_set = lib.attnc_model_kernel_set(model, i)
            kernel_handle = ctypes.c_void_p()
            lib.check(lib.attnc_kernel_set_find_kernel(
                ctypes.c_void_p(kernel_set), name.encode(), ctypes.byref(kernel_handle)))
            abi = json.loads(_decode(lib.attnc_kernel_abi_json(kernel_handle)))
            self.kernels.append(Kernel(
                name=name, kind=_decode(lib.attnc_model_kernel_kind(model, i)),
                layer=_decode(lib.attnc_model_kernel_layer(model, i)), abi=abi,
                source=_decode(lib.attnc_model_kernel_source(model, i)),
                _set=kernel_set, _handle=kernel_handle.value, _lib=lib))
        self.layers: List[str] = []
        for kernel in self.kernels:
            if kernel.layer not in self.layers:
                self.layers.append(kernel.layer)
        self._plans: Dict[Tuple[str, str], Tuple[Kernel, KernelPlan]] = {}
        for kernel in self.kernels:
            if kernel.kind == "preprocess":
                plan = KernelPlan(kernel.abi, features=_PREPROCESS_FEATURES,
                                  outputs=("q_out", "gate_out"),
                                  writable=("k_cache", "v_cache", "q_out", "gate_out"))
            elif kernel.kind == "mla_preprocess":
                plan = KernelPlan(kernel.abi, features=_MLA_PREPROCESS_FEATURES,
                                  outputs=("latent_out", "q_rope_out"),
                                  writable=("latent_cache", "latent_out", "q_rope_out"))
            elif kernel.kind in ("attention", "prefill_attention"):
                # prefill_attention: sm_90a's warp-specialised prefill kernel
                # of the same layer (the same parameters, no split-KV).
                plan = KernelPlan(kernel.abi, features=_ATTENTION_FEATURES,
                                  outputs=("output",),
                                  writable=("output", WORKSPACE),
                                  at_least=(WORKSPACE,))
            elif kernel.kind == "latent_attention":
                plan = KernelPlan(kernel.abi, features=_LATENT_ATTENTION_FEATURES,
                                  outputs=("output",),
                                  writable=("output", WORKSPACE),
                                  at_least=(WORKSPACE,))
            elif kernel.kind == "varlen_attention":
                plan = KernelPlan(kernel.abi, features=_VARLEN_ATTENTION_FEATURES,
                                  outputs=("output",),
                                  writable=("output", WORKSPACE),
                                  at_least=(WORKSPACE,))
            elif kernel.kind == "latent_gather":
                plan = KernelPlan(kernel.abi, features=_LATENT_GATHER_FEATURES,
                                  outputs=("output",), writable=("output",))
            else:
                continue
            self._plans[(kernel.layer, kernel.kind)] = (kernel, plan)
        # Split-KV workspaces the package made: (device, stream handle, shape,
        # dtype) -> zero-filled tensor, kept for the model's lifetime.
        self._workspaces: Dict[Tuple[Any, ...], Any] = {}
        self._workspace_lock = threading.Lock()

    def _sharing(self, handle: Optional[int]) -> "Model":
        """A Model over this one's kernels (the same C kernel sets) with its
        own mutable state. `handle`: the new Model's attnc_model_t (a C memo
        hit for the same input), destroyed with it; None: no handle of its
        own (the memo's template, which keeps this Model alive)."""
        clone = Model.__new__(Model)
        clone.__dict__.update(self.__dict__)
        clone.__dict__.pop("_torch_op_bindings", None)
        clone._plans = dict(self._plans)
        clone._workspaces = {}
        clone._workspace_lock = threading.Lock()
        if handle is None:
            clone._template_of = self
        else:
            clone.__dict__.pop("_template_of", None)
            clone._handle = handle
            clone._finalizer = weakref.finalize(clone, self._lib.attnc_model_destroy,
                                                ctypes.c_void_p(handle))
            clone._finalizer.atexit = False
        return clone

    # ---- tiers ----

    def wait_optimised(self) -> "Model":
        """Blocks until every kernel's optimised tier has compiled (at once
        when the model has none: compiled with ``tiered=False``, from the
        cache, or no kernel with two forms). The kernels take it at their
        next launch boundary: a checked launch on a stream that is not
        capturing, or a new launch plan. Plans made before keep their
        kernel, so call this before making the plans a CUDA graph captures.

        Raises:
            CompileError: an optimised kernel failed to compile (its kernel
                stays on the baseline).
        """
        self._lib.check(self._lib.attnc_model_wait_optimised(ctypes.c_void_p(self._handle)))
        return self

    @property
    def tiers(self) -> Dict[str, str]:
        """Kernel name -> the tier its launches use now (:attr:`Kernel.tier`)."""
        return {kernel.name: kernel.tier for kernel in self.kernels}

    # ---- metadata ----

    @property
    def handle(self) -> int:
        """The attnc_model_t, as an int."""
        return self._handle

    @property
    def context(self) -> Context:
        return self._context

    @property
    def config(self) -> Dict[str, Any]:
        """The model configuration as the compiler read it, in attnc spec form
        (docs/config-import.md): layer_kinds with head counts, dims, norm,
        rope, sliding window, sinks, softmax_scale, ... ({} if the manifest
        has none)."""
        config = self.manifest.get("config")
        if isinstance(config, str):
            try:
                config = json.loads(config)
            except ValueError:
                config = None
        return config if isinstance(config, dict) else {}

    def kernel(self, layer: Union[str, int], kind: str) -> Kernel:
        """The kernel of `kind` ("preprocess", "attention", "mla_preprocess",
        ...) for `layer` (a layer kind name, or a layer index)."""
        return self._plan(layer, kind)[0]

    def layer_kind(self, layer: Union[str, int]) -> str:
        """The layer kind name of `layer`: a kind name (returned as is) or a
        model layer index (looked up in the manifest's configuration)."""
        if isinstance(layer, bool):
            raise ArgumentError("layer", "expected a layer kind name or index, got a bool")
        if isinstance(layer, str):
            if layer not in self.layers:
                raise ArgumentError("layer", f"no layer kind '{layer}' in this model "
                                    f"(it has {', '.join(self.layers)})")
            return layer
        if isinstance(layer, int):
            for name, indices in self._layer_indices().items():
                if layer in indices and name in self.layers:
                    return name
            raise ArgumentError("layer", f"layer {layer} belongs to no layer kind of "
                                f"this model (kinds: {', '.join(self.layers)})")
        raise ArgumentError("layer", f"expected a layer kind name or index, got "
                            f"{type(layer).__name__}")

    def _layer_indices(self) -> Dict[str, List[int]]:
        """Layer kind -> model layer indices, from the manifest's config (the
        attnc spec form: layer_kinds[i].name / .layers), when it has them."""
        kinds = self.config.get("layer_kinds")
        result: Dict[str, List[int]] = {}
        for kind in kinds or []:
            if isinstance(kind, dict) and "name" in kind:
                result[kind["name"]] = list(kind.get("layers") or [])
        return result

    def _plan(self, layer: Union[str, int], kind: str) -> Tuple[Kernel, KernelPlan]:
        name = self.layer_kind(layer)
        entry = self._plans.get((name, kind))
        if entry is None:
            raise NotFoundError(f"layer kind '{name}' has no {kind} kernel",
                                status="not_found")
        return entry

    def save(self, directory: PathLike) -> Path:
        """Writes the model as a bundle directory (manifest.json, per kernel
        its source and cubins); :func:`attnc.load` reads it back without NVRTC.
        Returns the directory."""
        self._lib.check(self._lib.attnc_model_write_bundle(
            ctypes.c_void_p(self._handle), os.fsencode(directory)))
        return Path(directory)

    def __repr__(self) -> str:
        return (f"attnc.Model(layers={self.layers}, "
                f"kernels={[k.name for k in self.kernels]})")

    # ---- launches ----

    def preprocess(self, layer: Union[str, int], qkv, *, slot_mapping, k_cache,
                   v_cache, positions=None, q_norm_weight=None,
                   k_norm_weight=None, q_norm_bias=None, k_norm_bias=None,
                   k_scale=None, v_scale=None, q_out=None,
                   gate_out=None, stream=None):
        """Runs the fused preprocess kernel of `layer`: splits the fused QKV(G)
        projection output, applies the q/k norm and rope (when the model has
        them), writes k and v into the paged cache, and writes q (and the
        gate).

        Args:
            layer: layer kind name (``"full_attention"``) or layer index.
            qkv: ``[num_tokens, fused_width]``, activation dtype.
            slot_mapping: ``[num_tokens]`` int64; cache slot of each token
                (block * block_size + offset), negative for padding (skipped).
            k_cache: ``[num_blocks, block_size, num_kv_heads, qk_head_dim]``.
            v_cache: ``[num_blocks, block_size, num_kv_heads, v_head_dim]``.
                Both caches may be strided views of the engine's own
                allocation: any block, token and head strides (the kernels
                take them as parameters), with the head dim contiguous
                (stride 1), every stride positive and a multiple of 16
                bytes (of the row's bytes' largest power of two, when a
                row is not whole 16-byte chunks), and the data pointer
                16-byte aligned. So vLLM's ``t[:, 0]`` / ``t[:, 1]`` of one
                ``[num_blocks, 2, block_size, num_kv_heads, head_dim]``
                tensor, ``t[..., :qk_head_dim]`` / ``t[..., qk_head_dim:]``
                of K|V packed per token ``[num_blocks, block_size,
                num_kv_heads, qk_head_dim + v_head_dim]``, and FlashInfer's
                HND pages ``[num_blocks, num_kv_heads, block_size,
                head_dim]`` passed as ``.transpose(1, 2)`` are all taken
                as they are. Strides of dims of size 1 are not checked.
            positions: ``[num_tokens]`` int64; required iff the model has rope.
            q_norm_weight, k_norm_weight: activation dtype; required iff the
                model has a weighted q/k norm (not Llama 4's unweighted
                one). Shape by the norm's scope: ``[qk_head_dim]`` (one
                weight for all heads), ``[heads, qk_head_dim]`` (a row per
                head: Cohere, StableLM) or ``[heads * qk_head_dim]`` (over
                the whole projection: OLMo-2, MiniMax-M2), heads being
                num_q_heads for q and num_kv_heads for k.
            q_norm_bias, k_norm_bias: the weights' shape and dtype; required
                iff the model's q/k norm is a LayerNorm with a bias (Phi,
                Persimmon).
            k_scale, v_scale: float32 scalar tensors (shape ``[]``) on the
                device; required iff the cache is fp8 (the cache stores
                ``x / scale``).
            q_out: ``[num_tokens, num_q_heads, qk_head_dim]``; allocated with
                torch if not given.
            gate_out: ``[num_tokens, num_q_heads, v_head_dim]`` (``[..., 1]`` for a
                head_scalar gate, one value per head), only for models
                with an output gate; allocated if not given.
            stream: ``None`` (torch's current stream, or the legacy default
                stream without torch), an int ``CUstream``, a
                ``torch.cuda.Stream``, or an object with ``cuda_stream`` /
                ``__cuda_stream__``.

        Returns:
            ``q_out``, or ``(q_out, gate_out)`` when the model has an output
            gate.

        Raises:
            ArgumentError: an argument broke a rule (the message names it):
                wrong shape, dtype, device, strides (C-contiguous only, but
                for the caches' views above), alignment (16 bytes), a
                feature the kernel lacks, or a missing one.
        """
        kernel, plan = self._plan(layer, "preprocess")
        given = {"qkv": qkv, "slot_mapping": slot_mapping, "k_cache": k_cache,
                 "v_cache": v_cache, "positions": positions,
                 "q_norm_weight": q_norm_weight, "k_norm_weight": k_norm_weight,
                 "q_norm_bias": q_norm_bias, "k_norm_bias": k_norm_bias,
                 "k_scale": k_scale, "v_scale": v_scale, "q_out": q_out,
                 "gate_out": gate_out}
        out = launch(self._lib, kernel._handle, plan, given, stream)
        if plan.has("gate_out"):
            return out["q_out"], out["gate_out"]
        return out["q_out"]

    def mla_preprocess(self, layer: Union[str, int], kv_a, q_rope, *, slot_mapping,
                       positions, kv_norm_weight, latent_cache, cache_scale=None,
                       latent_out=None, q_rope_out=None, stream=None):
        """Runs the MLA preprocess kernel of `layer` (DeepSeek-V2/V3, Kimi-K2,
        ...): RMSNorm of the latent ``c_kv = kv_a[:, :kv_lora_rank]`` with
        `kv_norm_weight` (times the model's latent_scale when it has one),
        rope on ``k_pe = kv_a[:, kv_lora_rank:]`` and on every head of
        `q_rope` at `positions`, the rows ``[c_kv | k_pe]`` into the latent
        cache, and the rows out.

        Args:
            layer: layer kind name or layer index.
            kv_a: ``[num_tokens, kv_lora_rank + rope_head_dim]``, activation
                dtype (``kv_a_proj_with_mqa``'s output); rows may be strided
                (a view of a wider projection output), the last dim
                contiguous.
            q_rope: ``[num_tokens, num_heads, rope_head_dim]``, the rope part
                of the query: token and head strides are free (e.g.
                ``q.view(T, H, nope + P)[..., nope:]``), the last dim
                contiguous.
            slot_mapping: ``[num_tokens]``; cache slot of each token (block *
                block_size + offset), negative for padding (nothing written).
            positions: ``[num_tokens]``; rope positions.
            kv_norm_weight: ``[kv_lora_rank]``, activation dtype.
            latent_cache: ``[num_blocks, block_size, kv_lora_rank +
                rope_head_dim]``, activation dtype or
                ``torch.float8_e4m3fn``; block and token strides are free
                (multiples of 16 bytes), the last dim contiguous.
            cache_scale: float32 scalar tensor (shape ``[]``); required iff
                the cache is fp8 (it stores ``x / scale``, saturating).
            latent_out: ``[num_tokens, kv_lora_rank + rope_head_dim]``, the
                normalised, rotated rows; may be `kv_a` itself (in place) or
                any row-strided view; allocated with torch if not given.
            q_rope_out: ``[num_tokens, num_heads, rope_head_dim]``, the
                rotated query rope part; may be `q_rope` itself (in place)
                or a view into the absorbed query ``[num_tokens, num_heads,
                kv_lora_rank + rope_head_dim][..., kv_lora_rank:]``;
                allocated with torch if not given.
            stream: as for :meth:`preprocess`.

        Every pointer must be 16-byte aligned and every stride (in bytes)
        a positive multiple of 16.

        Returns:
            ``(latent_out, q_rope_out)``.

        Raises:
            ArgumentError: an argument broke a rule (the message names it):
                wrong shape, dtype, device, strides or alignment, a
                `cache_scale` for a cache that is not fp8, or a missing one.
        """
        kernel, plan = self._plan(layer, "mla_preprocess")
        given = {"kv_a": kv_a, "q_rope": q_rope, "slot_mapping": slot_mapping,
                 "positions": positions, "kv_norm_weight": kv_norm_weight,
                 "latent_cache": latent_cache, "cache_scale": cache_scale,
                 "latent_out": latent_out, "q_rope_out": q_rope_out}
        out = launch(self._lib, kernel._handle, plan, given, stream)
        return out["latent_out"], out["q_rope_out"]

    def attention(self, layer: Union[str, int], query, *, k_cache, v_cache,
                  block_tables, seq_lens, query_start_loc, sinks=None,
                  k_scale=None, v_scale=None, gate=None, out=None,
                  workspace=None, num_kv_splits=None, kind=None, stream=None):
        """Runs the paged attention kernel of `layer` over varlen rows (decode
        and prefill rows may share one batch), with the output gate as its
        epilogue when the model has one.

        A layer compiled for sm_90a may have two paged attention kernels:
        ``"attention"`` (decode-capable: 16-row tiles, split-KV) and
        ``"prefill_attention"`` (warp-specialised, 128-row tiles, no
        split-KV; layers with a 16-bit cache in pages of 8+ tokens). The
        launch takes the one :meth:`attention_kind` names for this batch
        (host integers only: query rows and sequences), unless `kind`
        names one.

        Sequence ``s`` owns query rows ``[query_start_loc[s],
        query_start_loc[s+1])`` and ``seq_lens[s]`` keys (its queries are the
        last rows of those positions), found through row ``s`` of
        ``block_tables``.

        Split-KV (kernels whose ABI has ``num_kv_splits`` and ``workspace``;
        see :meth:`attention_splits`): a launch runs ``num_kv_splits`` CTAs
        along grid z for each (row block, KV head), each over a part of the
        keys, and the last one of a row block to finish merges the partials
        kept in ``workspace``. Kernels without split-KV take neither
        keyword (passing one is an error).

        Args:
            layer: layer kind name or layer index.
            query: ``[num_tokens, num_q_heads, qk_head_dim]`` (preprocess's
                q_out).
            k_cache, v_cache: the paged caches, as for :meth:`preprocess`:
                ``[num_blocks, block_size, num_kv_heads, head_dim]``, C-
                contiguous or strided views (vLLM's K/V halves of one
                allocation, K|V packed per token, FlashInfer's HND pages
                transposed) whose head dim is contiguous and whose strides
                are multiples of 16 bytes.
            block_tables: ``[num_seqs, max_blocks_per_seq]`` int32.
            seq_lens: ``[num_seqs]`` int32, keys per sequence (including the
                new tokens).
            query_start_loc: ``[num_seqs + 1]`` int32, cumulative query rows.
            sinks: ``[num_q_heads]`` float32 sink logits; required iff the
                model has attention sinks.
            k_scale, v_scale: float32 scalar tensors; required iff the cache is
                fp8.
            gate: ``[num_tokens, num_q_heads, v_head_dim]`` or ``[..., 1]`` (preprocess's
                gate_out); required iff the model has an output gate.
            out: ``[num_tokens, num_q_heads, v_head_dim]``; allocated with torch
                if not given.
            workspace: split-KV only: a float32 tensor of shape ``[W]`` (or
                1-D with more elements; W is
                :meth:`attention_workspace_size`), contiguous, 16-byte
                aligned, on the tensors' device. It must be ZERO-FILLED before
                its first use; every launch leaves it reusable (the kernel
                resets its counters), so one workspace serves any number of
                launches that run one after another, but launches that may
                run concurrently (different streams) must not share one.
                ``None``: the package's own, made with ``torch.zeros`` on
                first use and cached on the model per (device, stream); pass
                your own when capturing CUDA graphs.
            num_kv_splits: split-KV only: ``None`` (the rule of
                :meth:`attention_splits`) or a count in ``[1,
                max_kv_splits]`` with ``base * num_kv_splits <= 2 *
                target_ctas`` (the workspace capacity; base = grid x * grid
                y), else ArgumentError naming ``num_kv_splits``. A count
                above 1 keeps the decode-capable kernel.
            kind: None (the rule of :meth:`attention_kind`), ``"attention"``
                or ``"prefill_attention"`` (the layer must have it).
            stream: as for :meth:`preprocess`.

        Returns:
            ``out``.

        Raises:
            ArgumentError: as for :meth:`preprocess`; also a workspace of
                the wrong dtype, size, device or layout, and a split count
                outside the rule.
        """
        if kind is None:
            kind = "attention"
            if (self.has_prefill_attention(layer)
                    and (num_kv_splits is None or num_kv_splits == 1)):
                kind = self.attention_kind(layer, _rows(query, "query"),
                                           _rows(query_start_loc, "query_start_loc") - 1)
        elif kind not in ("attention", "prefill_attention"):
            raise ArgumentError("kind", f"expected None, 'attention' or "
                                f"'prefill_attention', got {kind!r}")
        kernel, plan = self._plan(layer, kind)
        given = {"query": query, "k_cache": k_cache, "v_cache": v_cache,
                 "block_tables": block_tables, "seq_lens": seq_lens,
                 "query_start_loc": query_start_loc, "sinks": sinks,
                 "k_scale": k_scale, "v_scale": v_scale, "gate": gate,
                 "output": out, WORKSPACE: workspace}
        return self._launch_split_kv(kernel, plan, given, num_kv_splits, stream)

    def has_prefill_attention(self, layer: Union[str, int]) -> bool:
        """Whether `layer` has the warp-specialised prefill kernel (kind
        ``"prefill_attention"``; sm_90a, a 16-bit cache in pages of 8+
        tokens, head dims whose pads of 64 fit; not with the compile option
        that turns it off)."""
        return (self.layer_kind(layer), "prefill_attention") in self._plans

    def attention_kind(self, layer: Union[str, int], num_tokens: int,
                       num_seqs: int) -> str:
        """The paged attention kernel :meth:`attention` launches for a batch
        of `num_tokens` query rows in `num_seqs` sequences:
        ``"prefill_attention"`` where `layer` has it and the batch is
        prefill-heavy, ``num_tokens * P >= R * num_seqs`` (P, R: its ABI
        hints ``gqa_pack`` and ``min_rows_per_seq``, 64: on average half its
        128-row tile a sequence), else ``"attention"`` (decode batches, and
        mixed ones with few prefill rows: 16-row tiles and split-KV)."""
        name = self.layer_kind(layer)
        entry = self._plans.get((name, "prefill_attention"))
        if entry is None:
            return "attention"
        for name_, value in (("num_tokens", num_tokens), ("num_seqs", num_seqs)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ArgumentError(name_, f"expected an int >= 0, got {value!r}")
        hints = entry[1].hints
        pack, min_rows = hints.get("gqa_pack"), hints.get("min_rows_per_seq")
        if pack is None or min_rows is None:
            raise ArgumentError("hints", f"kernel {entry[0].name}: a prefill_attention "
                                "ABI needs the hints gqa_pack and min_rows_per_seq")
        if num_seqs > 0 and num_tokens * pack >= min_rows * num_seqs:
            return "prefill_attention"
        return "attention"

    def latent_attention(self, layer: Union[str, int], query, *, latent_cache,
                         block_tables, seq_lens, query_start_loc,
                         cache_scale=None, out=None, workspace=None,
                         num_kv_splits=None, stream=None):
        """Runs the MLA absorbed decode kernel of `layer` (``attn.latent_attention``):
        every query head attends to the one latent head, K = the latent
        cache rows ``[c_kv | k_pe]`` (``R + P`` values), V = their first
        ``R`` (kv_lora_rank) values.

        Sequence ``s`` owns query rows ``[query_start_loc[s],
        query_start_loc[s+1])`` (1 for decode, a few for MTP/speculative
        rows; causal: row ``i`` of ``n`` sees keys up to ``seq_lens[s] - n +
        i``) and ``seq_lens[s]`` cached rows, found through row ``s`` of
        ``block_tables``. Split-KV as for :meth:`attention`
        (:meth:`latent_attention_splits`).

        Args:
            layer: layer kind name or layer index.
            query: ``[num_tokens, num_heads, R + P]``: the absorbed
                ``q_nope @ W_UK`` in the first R values, the rotated q_pe
                after them.
            latent_cache: ``[num_blocks, block_size, R + P]`` of the
                activation dtype or fp8 e4m3 (``torch.float8_e4m3fn``),
                C-contiguous or a view whose rows are contiguous and whose
                block and token strides are multiples of 16 bytes.
            block_tables: ``[num_seqs, max_blocks_per_seq]`` int32.
            seq_lens: ``[num_seqs]`` int32, cached rows per sequence
                (including this step's).
            query_start_loc: ``[num_seqs + 1]`` int32, cumulative query rows.
            cache_scale: float32 scalar tensor (shape ``[]``); required iff
                the latent cache is fp8 e4m3 (its rows are stored divided by
                it, as :meth:`mla_preprocess` writes them).
            out: ``[num_tokens, num_heads, R]``; allocated with torch if not
                given.
            workspace, num_kv_splits, stream: as for :meth:`attention`.

        Returns:
            ``out``.
        """
        kernel, plan = self._plan(layer, "latent_attention")
        given = {"query": query, "latent_cache": latent_cache,
                 "block_tables": block_tables, "seq_lens": seq_lens,
                 "query_start_loc": query_start_loc, "cache_scale": cache_scale,
                 "output": out, WORKSPACE: workspace}
        return self._launch_split_kv(kernel, plan, given, num_kv_splits, stream)

    def latent_attention_splits(self, layer: Union[str, int], num_tokens: int,
                                num_seqs: int, *,
                                num_kv_splits: Optional[int] = None) -> int:
        """The ``num_kv_splits`` :meth:`latent_attention` launches `layer`'s
        kernel with for `num_tokens` query rows in `num_seqs` sequences: the
        rule of :meth:`attention_splits` with the kernel's hints
        (``target_ctas`` = the SMs: one CTA per SM; rows = num_tokens x
        num_heads in tiles of 64). Given `num_kv_splits`, checks it."""
        _, plan = self._plan(layer, "latent_attention")
        values = dict(num_tokens=num_tokens, num_seqs=num_seqs)
        return _launch.choose_kv_splits(plan, values, num_kv_splits)

    def latent_attention_workspace_size(self, layer: Union[str, int]) -> Optional[int]:
        """W, the float32 elements of `layer`'s MLA decode workspace."""
        return self._workspace_size(layer, "latent_attention")

    def _launch_split_kv(self, kernel: "Kernel", plan: KernelPlan,
                         given: Dict[str, Any], num_kv_splits, stream):
        """Launches a split-KV kernel: the count by the rule (or checked),
        the package's workspace unless one is given; ``out`` in errors."""
        derive = None
        if plan.takes_kv_splits:
            plan.split_kv  # an ABI without the hints fails here, by name
            derive = lambda bindings: _launch.bind_kv_splits(  # noqa: E731
                plan, bindings, num_kv_splits)
        elif num_kv_splits is not None:
            raise ArgumentError(KV_SPLITS, _launch.no_kv_splits_rule(plan))
        provide = {WORKSPACE: self._provide_workspace} if plan.has(WORKSPACE) else None
        try:
            result = launch(self._lib, kernel._handle, plan, given, stream,
                            derive=derive, provide=provide)
        except ArgumentError as error:
            if error.argument == "output":  # the Python name is `out`
                raise ArgumentError("out", error.rule) from None
            raise
        return result["output"]

    def varlen_attention(self, layer: Union[str, int], query, key, value, *,
                         cu_seqlens_q, cu_seqlens_k, out=None, workspace=None,
                         num_kv_splits=None, stream=None):
        """Runs the varlen attention kernel of `layer` over ragged contiguous
        K/V (no pages): MLA's decompressed prefill, or any prefill whose keys
        and values the engine holds as rows.

        Sequence ``s`` owns query rows ``[cu_seqlens_q[s], cu_seqlens_q[s+1])``
        and key/value rows ``[cu_seqlens_k[s], cu_seqlens_k[s+1])``; query
        head ``h`` reads KV head ``h // (num_q_heads // num_kv_heads)``. With
        a causal layer the last query row of a sequence is aligned with its
        last key (a chunk of new tokens after cached ones): query row ``i`` of
        ``n`` sees keys ``[0, m - n + i]`` of the sequence's ``m``; a row that
        sees no key (``m < n``) is 0.

        Split-KV as for :meth:`attention` (the same kernel template, grid
        and rule, with ``num_tokens`` the query rows): ``num_kv_splits=None``
        applies the rule, ``workspace=None`` uses the package's.

        Args:
            layer: layer kind name or layer index.
            query: ``[num_tokens, num_q_heads, qk_head_dim]``.
            key: ``[num_kv_tokens, num_kv_heads, qk_head_dim]``.
            value: ``[num_kv_tokens, num_kv_heads, v_head_dim]``. All three
                of the activation dtype, and views with any token and head
                strides (so MLA's ``k = [k_nope | k_pe]`` and the ``v`` half
                of ``kv_b_proj``'s output are taken as they are): the head
                dim contiguous (stride 1), every stride positive and a
                multiple of 16 bytes, the data 16-byte aligned.
            cu_seqlens_q, cu_seqlens_k: ``[num_seqs + 1]`` int32, cumulative
                query and key rows per sequence (non-decreasing, from 0).
            out: ``[num_tokens, num_q_heads, v_head_dim]``, C-contiguous;
                allocated with torch if not given.
            workspace, num_kv_splits: split-KV, as for :meth:`attention`
                (``None``: the package's workspace and the split rule).
            stream: as for :meth:`preprocess`.

        Returns:
            ``out``.

        Raises:
            ArgumentError: an argument broke a rule (the message names it:
                shape, dtype, device, strides, alignment, a split count or
                workspace outside the rule).
        """
        kernel, plan = self._plan(layer, "varlen_attention")
        given = {"query": query, "key": key, "value": value,
                 "cu_seqlens_q": cu_seqlens_q, "cu_seqlens_k": cu_seqlens_k,
                 "output": out, WORKSPACE: workspace}
        derive = None
        if plan.takes_kv_splits:
            plan.split_kv  # an ABI without the hints fails here, by name
            derive = lambda bindings: _launch.bind_kv_splits(  # noqa: E731
                plan, bindings, num_kv_splits)
        elif num_kv_splits is not None:
            raise ArgumentError(KV_SPLITS, _launch.no_kv_splits_rule(plan))
        provide = {WORKSPACE: self._provide_workspace} if plan.has(WORKSPACE) else None
        try:
            result = launch(self._lib, kernel._handle, plan, given, stream,
                            derive=derive, provide=provide)
        except ArgumentError as error:
            if error.argument == "output":  # the Python name is `out`
                raise ArgumentError("out", error.rule) from None
            raise
        return result["output"]

    def latent_gather(self, layer: Union[str, int], *, latent_cache,
                      block_tables, cu_seqlens, cache_scale=None, out=None,
                      stream=None):
        """Copies cached MLA latent rows ``[c_kv | k_pe]`` of each sequence
        into contiguous rows (chunked prefill: the engine up-projects the
        cached prefix with ``kv_b_proj``).

        Sequence ``s``'s first ``cu_seqlens[s+1] - cu_seqlens[s]`` cached
        rows, found through row ``s`` of ``block_tables``, become output rows
        ``[cu_seqlens[s], cu_seqlens[s+1])``, in the activation dtype (an fp8
        cache is multiplied by ``cache_scale``; a 16-bit cache is copied
        exactly). Output rows at or past ``cu_seqlens[num_seqs]`` are not
        written.

        Args:
            layer: layer kind name or layer index.
            latent_cache: ``[num_blocks, block_size, kv_lora_rank +
                rope_head_dim]``, the activation dtype or float8_e4m3fn; a
                view with any block and token strides (row contiguous,
                strides multiples of 16 bytes, data 16-byte aligned).
            block_tables: ``[num_seqs, max_blocks_per_seq]`` int32.
            cu_seqlens: ``[num_seqs + 1]`` int32, cumulative rows per
                sequence (non-decreasing, from 0); each sequence's count at
                most ``max_blocks_per_seq * block_size`` (rows past that
                are not written).
            cache_scale: float32 scalar tensor (shape ``[]``); required iff
                the cache is fp8.
            out: ``[num_tokens, kv_lora_rank + rope_head_dim]``, C-contiguous
                (num_tokens at least ``cu_seqlens[-1]``); if not given,
                allocated with torch with ``cu_seqlens[-1]`` rows, which
                reads that value from the device (a synchronising copy: pass
                ``out`` under CUDA graph capture).
            stream: as for :meth:`preprocess`.

        Returns:
            ``out``.

        Raises:
            ArgumentError: as for :meth:`varlen_attention`; also a
                ``cache_scale`` given for a 16-bit cache or missing for fp8.
        """
        kernel, plan = self._plan(layer, "latent_gather")
        if out is None:
            out = _gather_output(plan, cu_seqlens)
        given = {"latent_cache": latent_cache, "block_tables": block_tables,
                 "cu_seqlens": cu_seqlens, "cache_scale": cache_scale,
                 "output": out}
        try:
            result = launch(self._lib, kernel._handle, plan, given, stream)
        except ArgumentError as error:
            if error.argument == "output":  # the Python name is `out`
                raise ArgumentError("out", error.rule) from None
            raise
        return result["output"]

    # ---- launch plans (the engine path) ----

    def preprocess_plan(self, layer: Union[str, int], *, k_cache, v_cache,
                        q_norm_weight=None, k_norm_weight=None,
                        q_norm_bias=None, k_norm_bias=None, k_scale=None,
                        v_scale=None):
        """A :class:`~attnc.PreprocessPlan` for `layer`: the caches and (when
        the model has them) the q/k norm weights and biases and fp8 scales
        are checked once and bound; ``plan.run(qkv, slot_mapping, positions, q_out=...,
        gate_out=...)`` launches on one step's tensors with a few
        microseconds of host time and no allocation (capturable). Make plans
        before capturing: making one loads the kernel into the current CUDA
        context. The tensors bound must outlive the plan's runs."""
        from ._plan import PreprocessPlan
        return PreprocessPlan(self, layer, k_cache=k_cache, v_cache=v_cache,
                              q_norm_weight=q_norm_weight,
                              k_norm_weight=k_norm_weight,
                              q_norm_bias=q_norm_bias,
                              k_norm_bias=k_norm_bias, k_scale=k_scale,
                              v_scale=v_scale)

    def attention_plan(self, layer: Union[str, int], *, k_cache, v_cache,
                       sinks=None, k_scale=None, v_scale=None, workspace=None):
        """An :class:`~attnc.AttentionPlan` for `layer`: the caches, sinks and
        fp8 scales are checked once and bound, with a split-KV `workspace`
        (given: zero-filled, as for :meth:`attention`; None: the plan makes
        its own, zero-filled now). ``plan.plan(num_tokens, num_seqs)`` fixes
        the split count of a batch shape (FlashInfer's plan/run split);
        ``plan.run(query, block_tables, seq_lens, query_start_loc, out=...,
        gate=...)`` launches. Runs of one plan must not run concurrently on
        different streams (they share the workspace): make one plan per
        stream."""
        from ._plan import AttentionPlan
        return AttentionPlan(self, layer, k_cache=k_cache, v_cache=v_cache,
                             sinks=sinks, k_scale=k_scale, v_scale=v_scale,
                             workspace=workspace)

    def prefill_attention_plan(self, layer: Union[str, int], *, k_cache, v_cache,
                               sinks=None, workspace=None):
        """An :class:`~attnc.AttentionPlan` for `layer`'s warp-specialised
        prefill kernel (kind ``"prefill_attention"``; NotFoundError when the
        layer has none, see :meth:`has_prefill_attention`), bound as
        :meth:`attention_plan` binds (no fp8 scales: the kernel reads 16-bit
        caches); an engine captures it for its prefill-heavy batch shapes
        (:meth:`attention_kind`) and the attention plan for the others."""
        from ._plan import AttentionPlan
        return AttentionPlan(self, layer, kind="prefill_attention", k_cache=k_cache,
                             v_cache=v_cache, sinks=sinks, workspace=workspace)

    def mla_preprocess_plan(self, layer: Union[str, int], *, kv_norm_weight,
                            latent_cache, cache_scale=None):
        """A :class:`~attnc.MlaPreprocessPlan` for `layer`'s MLA preprocess
        kernel: `kv_norm_weight`, the latent cache and, for an fp8 cache,
        `cache_scale` are checked once and bound; ``plan.run(kv_a, q_rope,
        slot_mapping, positions, latent_out=..., q_rope_out=...)`` launches
        on one step's tensors (the views :meth:`mla_preprocess` takes) with
        a few microseconds of host time and no allocation (capturable)."""
        from ._plan import MlaPreprocessPlan
        return MlaPreprocessPlan(self, layer, kv_norm_weight=kv_norm_weight,
                                 latent_cache=latent_cache, cache_scale=cache_scale)

    def latent_attention_plan(self, layer: Union[str, int], *, latent_cache,
                              cache_scale=None, workspace=None):
        """A :class:`~attnc.LatentAttentionPlan` for `layer`'s MLA decode
        kernel: the latent cache (any view :meth:`latent_attention` takes)
        and, for an fp8 cache, `cache_scale` are checked once and bound,
        with a split-KV `workspace` (given: zero-filled, at least
        :meth:`latent_attention_workspace_size` float32 elements; None: the
        plan makes its own, zero-filled now). ``plan.plan(num_tokens,
        num_seqs, num_kv_splits=None)`` fixes a batch shape's split count
        (as :meth:`latent_attention_splits`); ``plan.run(query,
        block_tables, seq_lens, query_start_loc, out=...)`` launches on one
        step's tensors with a few microseconds of host time and no
        allocation (capturable). Make plans before capturing; one plan per
        stream (runs share the workspace); the bound tensors must outlive
        the plan's runs."""
        from ._plan import LatentAttentionPlan
        return LatentAttentionPlan(self, layer, latent_cache=latent_cache,
                                   cache_scale=cache_scale, workspace=workspace)

    def varlen_attention_plan(self, layer: Union[str, int], *, workspace=None):
        """A :class:`~attnc.VarlenAttentionPlan` for `layer`'s varlen
        attention kernel (MLA's decompressed prefill): only the split-KV
        `workspace` is bound (given: zero-filled, at least
        :meth:`varlen_attention_workspace_size` float32 elements; None: the
        plan makes its own). ``plan.plan(num_tokens, num_seqs,
        num_kv_splits=None)`` fixes a batch shape's split count;
        ``plan.run(query, key, value, cu_seqlens_q, cu_seqlens_k, out=...)``
        launches (query/key/value may be strided views, as for
        :meth:`varlen_attention`). One plan per stream."""
        from ._plan import VarlenAttentionPlan
        return VarlenAttentionPlan(self, layer, workspace=workspace)

    def varlen_attention_workspace_size(self, layer: Union[str, int]) -> Optional[int]:
        """W, the float32 elements of `layer`'s varlen attention split-KV
        workspace, or None when the kernel has none."""
        return self._workspace_size(layer, "varlen_attention")

    def latent_gather_plan(self, layer: Union[str, int], *, latent_cache,
                           cache_scale=None):
        """A :class:`~attnc.LatentGatherPlan` for `layer`'s latent gather
        kernel: the latent cache and, for an fp8 cache, `cache_scale` are
        checked once and bound; ``plan.run(block_tables, cu_seqlens,
        out=...)`` launches (``out`` always given: the plan never reads
        ``cu_seqlens[-1]`` from the device)."""
        from ._plan import LatentGatherPlan
        return LatentGatherPlan(self, layer, latent_cache=latent_cache,
                                cache_scale=cache_scale)

    def attention_splits(self, layer: Union[str, int], num_tokens: int,
                         num_seqs: int, *, num_kv_splits: Optional[int] = None,
                         **symbols: int) -> int:
        """The ``num_kv_splits`` :meth:`attention` launches `layer`'s kernel
        with for a batch of `num_tokens` query rows in `num_seqs` sequences
        (1 for kernels without split-KV).

        The rule, with gy the kernel's grid y, x = ceil_div(num_tokens * P,
        BM) + num_seqs its grid x for this batch (its ABI's grid rules; one
        spare block per sequence) and T, M its ABI hints ``target_ctas`` and
        ``max_kv_splits``: ``busy = max(ceil_div(num_tokens * P, BM),
        num_seqs) * gy``, the blocks that surely have rows (exact for decode
        batches); ``1 if busy >= T else min(M, floor(T / busy))``: the most
        splits whose busy blocks fit one wave.
        Given `num_kv_splits`, checks it as :meth:`attention` does and
        returns it. `symbols` gives any other value a grid rule names.
        """
        _, plan = self._plan(layer, "attention")
        values = dict(symbols, num_tokens=num_tokens, num_seqs=num_seqs)
        return _launch.choose_kv_splits(plan, values, num_kv_splits)

    def attention_workspace_size(self, layer: Union[str, int]) -> Optional[int]:
        """W, the float32 elements of `layer`'s split-KV workspace (its
        ABI's ``workspace`` shape), or None when the kernel has none."""
        return self._workspace_size(layer, "attention")

    def _workspace_size(self, layer: Union[str, int], kind: str) -> Optional[int]:
        _, plan = self._plan(layer, kind)
        for param in plan.pointer_params:
            if param["name"] == WORKSPACE:
                size = 1
                for dim in param.get("shape") or []:
                    if isinstance(dim, str):
                        raise ArgumentError(WORKSPACE, f"the ABI gives the "
                                            f"workspace a symbolic dim {dim}")
                    size *= int(dim)
                return size
        return None

    def _provide_workspace(self, param: Mapping[str, Any], shape: List[int],
                           device: Optional[int], handle: int):
        """The package's zero-filled workspace for launches on (device,
        stream): made once, then reused (launches on one stream run in
        order, and each leaves it reusable); the _MAX_WORKSPACES most
        recently used are kept."""
        if device is None:
            torch = torch_module()
            if torch is not None and torch.cuda.is_available():
                device = torch.cuda.current_device()
        key = (device, handle, tuple(shape), param["dtype"])
        with self._workspace_lock:
            tensor = self._workspaces.pop(key, None)
            if tensor is None and len(self._workspaces) >= _MAX_WORKSPACES:
                # Least recently used first (dicts keep insertion order, and
                # a hit is re-inserted below). The tensor was recorded on its
                # stream, so its memory is reused only after that stream's
                # launches are done.
                self._workspaces.pop(next(iter(self._workspaces)))
            if tensor is None:
                tensor = _launch.zeroed_workspace(param, shape, device, handle)
            self._workspaces[key] = tensor
            return tensor


def _gather_output(plan: KernelPlan, cu_seqlens):
    """A torch tensor for latent_gather's output: cu_seqlens[-1] rows (read
    from the device) of the ABI's row width and dtype."""
    torch = torch_module()
    if torch is None or not isinstance(cu_seqlens, torch.Tensor):
        raise ArgumentError("out", "not given, and its row count (cu_seqlens[-1]) "
                            "can be read only from a torch tensor: pass out")
    if cu_seqlens.dim() != 1 or cu_seqlens.numel() < 1:
        raise ArgumentError("cu_seqlens", f"must be 1-D [num_seqs + 1], got shape "
                            f"{list(cu_seqlens.shape)}")
    rows = int(cu_seqlens[-1])
    if rows < 0:
        raise ArgumentError("cu_seqlens", f"the last entry (the row count) must "
                            f"not be negative, got {rows}")
    param = next(p for p in plan.pointer_params if p["name"] == "output")
    return torch.empty((rows, int(param["shape"][1])),
                       dtype=_tensors.torch_dtype(param["dtype"]),
                       device=cu_seqlens.device)


# ---- compile and load ------------------------------------------------------

_DTYPES = {"bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "f16": "fp16",
           "float16": "fp16", "half": "fp16"}
_KV_DTYPES = dict(_DTYPES, fp8="fp8", fp8_e4m3="fp8", float8_e4m3fn="fp8",
                  e4m3="fp8")


def _normalize_dtype(option: str, value: Any, table: Mapping[str, str]) -> Optional[str]:
    if value is None:
        return None
    text = str(value)
    if text.startswith("torch."):
        text = text[len("torch."):]
    result = table.get(text.lower())
    if result is None:
        allowed = "|".join(sorted(set(table.values())))
        raise ConfigError(f"{option}: unknown dtype {value!r} (expected {allowed})")
    return result


def _json_default(obj: Any) -> Any:
    """json.dumps fallback for HF config values: nested configs, dtypes."""
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_dict()
    text = str(obj)
    if text.startswith("torch."):  # torch.bfloat16 -> "bfloat16"
        return text[len("torch."):]
    if hasattr(obj, "__dict__"):
        return {k: v for k, v in vars(obj).items() if not k.startswith("_")}
    return text


def config_to_json(config: Any) -> str:
    """The JSON text of a configuration given as a path, a dict, or an object
    with Hugging Face config attributes (``.to_dict()`` if it has one, else
    ``vars()``)."""
    if isinstance(config, (str, os.PathLike)):
        path = Path(config)
        if not path.is_file():
            raise ConfigError(
                f"config: {os.fspath(config)!r} is not a file (pass a path to "
                "a config.json or attnc spec, a dict, or an object with Hugging "
                "Face config attributes)")
        return path.read_text(encoding="utf-8")
    if isinstance(config, (bytes, bytearray)):
        raise ConfigError("config: bytes are not accepted (pass a path, a dict, "
                          "or a config object)")
    if isinstance(config, Mapping):
        data = dict(config)
    elif callable(getattr(config, "to_dict", None)):
        data = config.to_dict()
    elif hasattr(config, "__dict__"):
        data = {k: v for k, v in vars(config).items() if not k.startswith("_")}
    else:
        raise ConfigError(f"config: expected a path, a dict or a config object, "
                          f"got {type(config).__name__}")
    try:
        return json.dumps(data, default=_json_default)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"config: cannot be written as JSON: {error}") from None


def _rows(tensor: Any, name: str) -> int:
    """Dim 0 of a tensor-like argument (a host integer: its shape)."""
    from ._tensors import from_object
    shape = from_object(name, tensor).shape
    if len(shape) < 1:
        raise ArgumentError(name, "expected a tensor with at least one dimension, "
                            "got a scalar")
    return int(shape[0])


def _check_int(option: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{option}: must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ConfigError(f"{option}: must be >= {minimum} (got {value})")
    return value


def compile(config: Any, *, arch: str = "sm_90a", tp: int = 1, rank: int = 0,
            block_size: int = 16, dtype: Any = None, kv_dtype: Any = None,
            tiered: Union[bool, str] = False,
            cache_dir: Optional[PathLike] = None,
            context: Optional[Context] = None) -> Model:
    """Compiles a model's attention layers into kernels.

    Args:
        config: a path to a Hugging Face ``config.json`` or attnc spec file, a
            dict of one, or an object with Hugging Face config attributes
            (e.g. ``transformers.AutoConfig``; ``.to_dict()`` is used if
            present, else ``vars()``).
        arch: target arch (``"sm_90a"`` for H100/H200).
        tp, rank: tensor-parallel degree and this rank (the kernels see the
            rank's heads).
        block_size: tokens per KV-cache block.
        dtype: activation dtype, ``"bf16"`` | ``"fp16"`` (or the torch dtype);
            ``None``: the config's.
        kv_dtype: KV-cache dtype, ``"bf16"`` | ``"fp16"`` | ``"fp8"`` (e4m3,
            or ``torch.float8_e4m3fn``); ``None``: the activation dtype.
        tiered: tiered compilation (``attnc-c/Compiler.h``). ``False`` (the
            default): the compile waits for the optimised kernels, so what
            runs, is checked and is captured never depends on what the cache
            held. ``True``: an attention kernel whose optimised form takes long to
            compile (wgmma on sm_90a) starts in a baseline form that compiles
            in a fraction of the time, and swaps to the optimised one at a
            launch boundary once it has compiled in the background (never
            while the launch stream captures a CUDA graph; launch plans keep
            the kernel they were made with -- call
            :meth:`Model.wait_optimised` before making the plans a graph
            captures): the first launch within a second of a cold start.
            ``"baseline"``: the baseline kernels only (tests, benchmarks).
        cache_dir: disk cache root (``None``: ``$ATTNC_CACHE_DIR``, else
            ``$XDG_CACHE_HOME/attnc``).
        context: a :class:`Context` to compile in (then ``cache_dir`` must be
            ``None``); default: a shared one per (cache_dir, arch).

    Returns:
        The :class:`Model`.

    The same configuration text and options compiled again in one context
    return a new :class:`Model` over the same kernels without compiling
    (unless the context's cache is disabled); a new process finds the kernels through the disk
    cache's model index without running the compiler.

    Raises:
        ConfigError: the configuration or an option was rejected (the message
            names the field, e.g. ``layer_kinds[0].num_kv_heads: ...``).
        CompileError: NVRTC rejected the generated source (log included).
        NoDriverError: NVRTC cannot be loaded.
        LibraryNotFoundError: libattnc.so was not found.
    """
    text = config_to_json(config)
    if not isinstance(tiered, (bool, str)) or tiered not in _TIERING:
        raise ConfigError(f"tiered: must be True, False or \"baseline\", got {tiered!r}")
    options_values = dict(
        arch=str(arch), tp=_check_int("tp", tp, 1), rank=_check_int("rank", rank, 0),
        block_size=_check_int("block_size", block_size, 1),
        dtype=_normalize_dtype("dtype", dtype, _DTYPES),
        kv_dtype=_normalize_dtype("kv_dtype", kv_dtype, _KV_DTYPES),
        tiering=_TIERING[tiered])
    context = _pick_context(context, cache_dir, options_values["arch"])
    return _compile_in(context, "attnc_model_compile_config", text, options_values)


def compile_ir(mlir: str, *, arch: str = "sm_90a",
               cache_dir: Optional[PathLike] = None,
               context: Optional[Context] = None) -> Model:
    """Compiles ``attn`` IR in layer form (one ``func.func`` per layer kind,
    as ``attnc import`` prints it) into kernels, through the same pipeline as
    :func:`compile`.

    Raises:
        ConfigError: the IR does not parse or verify, or a pipeline stage
            rejected it (the message carries the MLIR diagnostics).
        CompileError, NoDriverError, LibraryNotFoundError: as for
            :func:`compile`.
    """
    if not isinstance(mlir, str):
        raise TypeError(f"mlir: expected the IR as a str, got {type(mlir).__name__}")
    context = _pick_context(context, cache_dir, str(arch))
    return _compile_in(context, "attnc_model_compile_ir", mlir, {"arch": str(arch)})


def _compile_in(context: Context, entry: str, text: str,
                options_values: Mapping[str, Any]) -> Model:
    """Calls the C API's `entry` (attnc_model_compile_config or _ir) on
    `text` with the library's default options, `options_values` set over
    them (str values as bytes, alive until the call returns)."""
    # The context's memo: the same input again gets a new Model over the
    # same kernels (the C API's memo answers the call without compiling, and
    # the manifest is not parsed again); each Model keeps its own mutable
    # state (workspaces, plans).
    memo_key = None
    template = None
    if not context._disable_cache:
        memo_key = (entry, text, tuple(sorted(options_values.items())))
        template = context._models.get(memo_key)
    lib = context._lib
    options = ModelOptions()
    lib.attnc_model_options_initialize(ctypes.byref(options))
    keep = {k: (v.encode() if isinstance(v, str) else v) for k, v in options_values.items()}
    for name, value in keep.items():
        setattr(options, name, value)
    handle = ctypes.c_void_p()
    status = getattr(lib, entry)(
        ctypes.c_void_p(context.handle), text.encode("utf-8"), ctypes.byref(options),
        ctypes.byref(handle))
    lib.check(status, config=True)
    if template is not None:
        return template._sharing(handle.value)
    model = Model(handle.value, context)
    if memo_key is not None:
        context._models.setdefault(memo_key, model._sharing(None))
    return model


def load(directory: PathLike, *, cache_dir: Optional[PathLike] = None,
         context: Optional[Context] = None) -> Model:
    """Loads a model bundle written by :meth:`Model.save` or ``attnc compile``
    (needs neither NVRTC nor a GPU until launch).

    Raises:
        BundleIOError, CorruptError, NotFoundError: the bundle cannot be read.
    """
    context = _pick_context(context, cache_dir, "sm_90a")
    lib = context._lib
    handle = ctypes.c_void_p()
    lib.check(lib.attnc_model_load_bundle(ctypes.c_void_p(context.handle),
                                          os.fsencode(directory), ctypes.byref(handle)))
    return Model(handle.value, context)


def _pick_context(context: Optional[Context], cache_dir: Optional[PathLike],
                  arch: str) -> Context:
    if context is not None:
        if cache_dir is not None:
            raise ConfigError("cache_dir: give either a context or a cache_dir")
        if not isinstance(context, Context):
            raise ConfigError(f"context: expected attnc.Context, got "
                              f"{type(context).__name__}")
        return context
    return default_context(cache_dir, arch)
