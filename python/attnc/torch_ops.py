"""``torch.ops.attnc.preprocess``, ``torch.ops.attnc.attention``,
``torch.ops.attnc.mla_preprocess``, ``torch.ops.attnc.latent_attention``,
``torch.ops.attnc.varlen_attention`` and ``torch.ops.attnc.latent_gather``.

    import attnc, attnc.torch_ops as ops
    ops.load()                                   # registers the ops once
    pre = ops.binding(model, "full_attention", "preprocess")
    att = ops.binding(model, "full_attention", "attention")
    ws = ops.workspace(model, "full_attention")  # None without split-KV
    torch.ops.attnc.preprocess(pre, qkv, slots, k_cache, v_cache, positions,
                               q_norm_weight, k_norm_weight, None, None,
                               q_out, None)
    torch.ops.attnc.attention(att, q_out, k_cache, v_cache, block_tables,
                              seq_lens, query_start_loc, None, None, None,
                              None, out, ws, 0)

MLA layers have ``torch.ops.attnc.mla_preprocess(binding, kv_a, q_rope,
slot_mapping, positions, kv_norm_weight, latent_cache, cache_scale,
latent_out, q_rope_out)`` (``binding(model, layer, "mla_preprocess")``;
``cache_scale`` None unless the cache is fp8). The outputs must be given;
passing ``kv_a`` as ``latent_out`` (or ``q_rope`` as ``q_rope_out``) runs in
place eagerly (under torch.compile that aliasing is untested: pass separate
outputs there). Their other three kernels (bindings of kind
``"latent_attention"``, ``"varlen_attention"``, ``"latent_gather"``)::

    ws = ops.workspace(model, "mla", kind="latent_attention")
    torch.ops.attnc.latent_attention(dec, query, latent_cache, block_tables,
                                     seq_lens, query_start_loc, None, out,
                                     ws, 0)
    torch.ops.attnc.varlen_attention(pre, query, key, value, cu_seqlens_q,
                                     cu_seqlens_k, out, ws_prefill, 0)
    torch.ops.attnc.latent_gather(gat, latent_cache, block_tables,
                                  cu_seqlens, None, out)

with the arguments of :meth:`attnc.Model.latent_attention`,
:meth:`~attnc.Model.varlen_attention` and :meth:`~attnc.Model.latent_gather`
(``out`` always given; key/value may be strided views).

A kernel whose q/k norm is a LayerNorm with a bias takes the biases as the
preprocess op's last two arguments (``q_norm_bias``, ``k_norm_bias``,
optional: calls without them stay valid for every other kernel).

The ops mutate their caches, outputs and workspace in place and return
nothing; their schemas say so (``Tensor(a!)``), and each has a fake
implementation, so ``torch.compile(fullgraph=True)`` traces a model that
calls them and CUDA-graph capture works (make the bindings, which load the
kernels, before capturing). ``num_kv_splits`` 0 means the split rule.

Two implementations, one schema (see :func:`load`):

* ``"cpp"``: a C++ extension (``csrc/torch_ops.cpp``, ``TORCH_LIBRARY``)
  built with ``torch.utils.cpp_extension`` on first use against the loaded
  libattnc.so: the dispatcher calls C++ directly, which describes the tensors
  and calls ``attnc_kernel_launch_checked`` (the C checks, named errors as
  ``ValueError``).
* ``"python"``: ``torch.library.custom_op`` functions that call the checked
  path (:meth:`attnc.Model.preprocess` / :meth:`~attnc.Model.attention`);
  no compiler needed, about 15 us more host time per call.
"""

# No `from __future__ import annotations`: torch.library.custom_op reads
# the functions' type hints as objects.
import os
import threading
import warnings
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from .errors import ArgumentError, AttncWarning
from ._library import library

#: The ops' tensor arguments, in schema order (the binding's slots). The
#: LayerNorm biases come last, optional, so that calls without them stay valid.
PREPROCESS_ARGS = ("qkv", "slot_mapping", "k_cache", "v_cache", "positions",
                   "q_norm_weight", "k_norm_weight", "k_scale", "v_scale",
                   "q_out", "gate_out", "q_norm_bias", "k_norm_bias")
ATTENTION_ARGS = ("query", "k_cache", "v_cache", "block_tables", "seq_lens",
                  "query_start_loc", "sinks", "k_scale", "v_scale", "gate",
                  "output", "workspace")
MLA_PREPROCESS_ARGS = ("kv_a", "q_rope", "slot_mapping", "positions", "kv_norm_weight",
                       "latent_cache", "cache_scale", "latent_out", "q_rope_out")
LATENT_ATTENTION_ARGS = ("query", "latent_cache", "block_tables", "seq_lens",
                         "query_start_loc", "cache_scale", "output", "workspace")
VARLEN_ATTENTION_ARGS = ("query", "key", "value", "cu_seqlens_q", "cu_seqlens_k",
                         "output", "workspace")
LATENT_GATHER_ARGS = ("latent_cache", "block_tables", "cu_seqlens", "cache_scale",
                      "output")
_ARGS = {"preprocess": PREPROCESS_ARGS, "attention": ATTENTION_ARGS,
         # sm_90a's warp-specialised prefill kernel: the attention op's
         # arguments (torch.ops.attnc.attention with its binding).
         "prefill_attention": ATTENTION_ARGS,
         "mla_preprocess": MLA_PREPROCESS_ARGS,
         "latent_attention": LATENT_ATTENTION_ARGS,
         "varlen_attention": VARLEN_ATTENTION_ARGS,
         "latent_gather": LATENT_GATHER_ARGS}

_HERE = Path(__file__).resolve().parent
_lock = threading.Lock()
_backend: Optional[str] = None
_registry: Dict[int, Tuple[Any, str, str]] = {}  # python backend bindings


def backend() -> Optional[str]:
    """"cpp", "python", or None before :func:`load`."""
    return _backend


def _include_dirs() -> List[str]:
    for candidate in (_HERE / "include", _HERE.parent.parent / "runtime" / "include"):
        if (candidate / "attnc-c" / "Runtime.h").is_file():
            return [str(candidate)]
    raise FileNotFoundError("attnc-c/Runtime.h not found next to the package or "
                            "in the source tree")


def _build_cpp(verbose: bool, build_directory: Optional[str]) -> None:
    from torch.utils.cpp_extension import load as load_extension
    libdir = os.path.dirname(library().path)
    if build_directory:
        os.makedirs(build_directory, exist_ok=True)
    # The extension has no CUDA sources, but torch derives arch flags anyway
    # and fails on machines without a GPU unless a list is given.
    saved = os.environ.get("TORCH_CUDA_ARCH_LIST")
    if saved is None:
        os.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"
    try:
        _load_extension(load_extension, libdir, verbose, build_directory)
    finally:
        if saved is None:
            os.environ.pop("TORCH_CUDA_ARCH_LIST", None)


def _load_extension(load_extension, libdir, verbose, build_directory) -> None:
    load_extension(
        name="attnc_torch_ops", sources=[str(_HERE / "csrc" / "torch_ops.cpp")],
        extra_include_paths=_include_dirs(), extra_cflags=["-O2"],
        extra_ldflags=[f"-L{libdir}", "-l:libattnc.so", f"-Wl,-rpath,{libdir}"],
        with_cuda=True, is_python_module=False, verbose=verbose,
        build_directory=build_directory)


def load(backend: str = "auto", *, verbose: bool = False,
         build_directory: Optional[str] = None) -> str:
    """Registers the ops (once per process) and returns the backend used.

    Args:
        backend: ``"cpp"`` (build/load the C++ extension; errors propagate),
            ``"python"`` (custom_op functions), or ``"auto"`` (cpp, else
            python with an :class:`attnc.AttncWarning` saying why).
        verbose: show the extension build.
        build_directory: where the extension is built (default torch's
            ``TORCH_EXTENSIONS_DIR``); a second load reuses the build.
    """
    global _backend
    with _lock:
        if _backend is not None:
            if backend not in ("auto", _backend):
                raise ArgumentError("backend", f"the ops are already registered "
                                    f"with the {_backend} backend")
            return _backend
        if backend not in ("auto", "cpp", "python"):
            raise ArgumentError("backend", f"expected 'auto', 'cpp' or 'python', "
                                f"got {backend!r}")
        if backend in ("auto", "cpp"):
            try:
                _build_cpp(verbose, build_directory)
                _register_fakes()
                _backend = "cpp"
                return _backend
            except Exception as error:  # noqa: BLE001 - reported, then fallback
                if backend == "cpp":
                    raise
                warnings.warn(f"attnc.torch_ops: the C++ extension could not be "
                              f"built ({type(error).__name__}: {error}); using the "
                              "Python custom ops", AttncWarning, stacklevel=2)
        _register_python()
        _backend = "python"
        return _backend


def binding(model, layer, kind: str) -> int:
    """The ``binding`` argument of the ops for `layer`'s `kind` kernel
    ("preprocess", "attention", "prefill_attention" (the attention op on the
    layer's warp-specialised prefill kernel: see :func:`attention_binding`),
    "mla_preprocess", "latent_attention", "varlen_attention" or
    "latent_gather"), made once per (model, layer kind, kind)
    and cached on the model. Making it loads the kernel into the current
    CUDA context (do it before capturing)."""
    if _backend is None:
        load()
    if kind not in _ARGS:
        raise ArgumentError("kind", f"expected one of {', '.join(map(repr, _ARGS))}, "
                            f"got {kind!r}")
    name = model.layer_kind(layer)
    cache = model.__dict__.setdefault("_torch_op_bindings", {})
    key = (name, kind)
    if key in cache:
        return cache[key]
    kernel, plan = model._plan(name, kind)
    names = _ARGS[kind]
    if _backend == "cpp":
        import torch
        slots = op_slots(plan, kind)
        torch.cuda.init()
        with torch.cuda.device(torch.cuda.current_device()):
            value = int(torch.ops.attnc._make_binding(kernel._handle, slots,
                                                      list(names)))
    else:
        value = len(_registry) + 1
        _registry[value] = (model, name, kind)
    cache[key] = value
    return value


def attention_binding(model, layer, num_tokens: int, num_seqs: int) -> int:
    """The attention op's binding for a batch of `num_tokens` query rows in
    `num_seqs` sequences: the kernel :meth:`attnc.Model.attention_kind`
    names (the prefill kernel for prefill-heavy batches where the layer has
    one). Host integers only: decide per captured batch shape."""
    return binding(model, layer, model.attention_kind(layer, num_tokens, num_seqs))


def op_slots(plan, kind: str) -> List[int]:
    """For each pointer parameter of `plan`'s kernel (ABI order), the index
    of the `kind` op's tensor argument that feeds it (the C++ binding's
    slots). Raises ArgumentError naming a parameter the op has no argument
    for."""
    names = _ARGS[kind]
    slots = []
    for param in plan.pointer_params:
        if param["name"] not in names:
            raise ArgumentError(param["name"], f"kernel {plan.name} takes a "
                                "tensor the op has no argument for")
        slots.append(names.index(param["name"]))
    return slots


def workspace(model, layer, device=None, kind: str = "attention"):
    """A zero-filled split-KV workspace for the `kind` op ("attention",
    "latent_attention" or "varlen_attention") of `layer` (None when its
    kernel has none). Each stream needs its own."""
    import torch
    if kind not in ("attention", "prefill_attention", "latent_attention",
                    "varlen_attention"):
        raise ArgumentError("kind", f"expected 'attention', 'prefill_attention', "
                            f"'latent_attention' or 'varlen_attention', got {kind!r}")
    size = model._workspace_size(layer, kind)
    if size is None:
        return None
    device = torch.cuda.current_device() if device is None else device
    return torch.zeros(size, dtype=torch.float32, device=torch.device("cuda", device))


# ---- registration -------------------------------------------------------------

def _register_fakes() -> None:
    import torch

    @torch.library.register_fake("attnc::preprocess")
    def _(binding, qkv, slot_mapping, k_cache, v_cache, positions, q_norm_weight,
          k_norm_weight, k_scale, v_scale, q_out, gate_out, q_norm_bias=None,
          k_norm_bias=None):
        return None

    @torch.library.register_fake("attnc::attention")
    def _(binding, query, k_cache, v_cache, block_tables, seq_lens,
          query_start_loc, sinks, k_scale, v_scale, gate, out, workspace,
          num_kv_splits):
        return None

    @torch.library.register_fake("attnc::mla_preprocess")
    def _(binding, kv_a, q_rope, slot_mapping, positions, kv_norm_weight,
          latent_cache, cache_scale, latent_out, q_rope_out):
        return None

    @torch.library.register_fake("attnc::latent_attention")
    def _(binding, query, latent_cache, block_tables, seq_lens, query_start_loc,
          cache_scale, out, workspace, num_kv_splits):
        return None

    @torch.library.register_fake("attnc::varlen_attention")
    def _(binding, query, key, value, cu_seqlens_q, cu_seqlens_k, out, workspace,
          num_kv_splits):
        return None

    @torch.library.register_fake("attnc::latent_gather")
    def _(binding, latent_cache, block_tables, cu_seqlens, cache_scale, out):
        return None


def _register_python() -> None:
    import torch
    from torch import Tensor

    @torch.library.custom_op("attnc::preprocess",
                             mutates_args=("k_cache", "v_cache", "q_out", "gate_out"))
    def preprocess(binding: int, qkv: Tensor, slot_mapping: Tensor, k_cache: Tensor,
                   v_cache: Tensor, positions: Optional[Tensor],
                   q_norm_weight: Optional[Tensor], k_norm_weight: Optional[Tensor],
                   k_scale: Optional[Tensor], v_scale: Optional[Tensor],
                   q_out: Tensor, gate_out: Optional[Tensor],
                   q_norm_bias: Optional[Tensor] = None,
                   k_norm_bias: Optional[Tensor] = None) -> None:
        model, layer, _ = _registry[binding]
        model.preprocess(layer, qkv, slot_mapping=slot_mapping, k_cache=k_cache,
                         v_cache=v_cache, positions=positions,
                         q_norm_weight=q_norm_weight, k_norm_weight=k_norm_weight,
                         q_norm_bias=q_norm_bias, k_norm_bias=k_norm_bias,
                         k_scale=k_scale, v_scale=v_scale, q_out=q_out,
                         gate_out=gate_out)

    @preprocess.register_fake
    def _(binding, qkv, slot_mapping, k_cache, v_cache, positions, q_norm_weight,
          k_norm_weight, k_scale, v_scale, q_out, gate_out, q_norm_bias=None,
          k_norm_bias=None):
        return None

    @torch.library.custom_op("attnc::attention", mutates_args=("out", "workspace"))
    def attention(binding: int, query: Tensor, k_cache: Tensor, v_cache: Tensor,
                  block_tables: Tensor, seq_lens: Tensor, query_start_loc: Tensor,
                  sinks: Optional[Tensor], k_scale: Optional[Tensor],
                  v_scale: Optional[Tensor], gate: Optional[Tensor], out: Tensor,
                  workspace: Optional[Tensor], num_kv_splits: int) -> None:
        model, layer, kind = _registry[binding]
        model.attention(layer, query, k_cache=k_cache, v_cache=v_cache,
                        block_tables=block_tables, seq_lens=seq_lens,
                        query_start_loc=query_start_loc, sinks=sinks,
                        k_scale=k_scale, v_scale=v_scale, gate=gate, out=out,
                        workspace=workspace, kind=kind,
                        num_kv_splits=num_kv_splits if num_kv_splits > 0 else None)

    @attention.register_fake
    def _(binding, query, k_cache, v_cache, block_tables, seq_lens, query_start_loc,
          sinks, k_scale, v_scale, gate, out, workspace, num_kv_splits):
        return None

    @torch.library.custom_op("attnc::mla_preprocess",
                             mutates_args=("latent_cache", "latent_out", "q_rope_out"))
    def mla_preprocess(binding: int, kv_a: Tensor, q_rope: Tensor, slot_mapping: Tensor,
                       positions: Tensor, kv_norm_weight: Tensor, latent_cache: Tensor,
                       cache_scale: Optional[Tensor], latent_out: Tensor,
                       q_rope_out: Tensor) -> None:
        model, layer, _ = _registry[binding]
        model.mla_preprocess(layer, kv_a, q_rope, slot_mapping=slot_mapping,
                             positions=positions, kv_norm_weight=kv_norm_weight,
                             latent_cache=latent_cache, cache_scale=cache_scale,
                             latent_out=latent_out, q_rope_out=q_rope_out)

    @mla_preprocess.register_fake
    def _(binding, kv_a, q_rope, slot_mapping, positions, kv_norm_weight,
          latent_cache, cache_scale, latent_out, q_rope_out):
        return None

    @torch.library.custom_op("attnc::latent_attention", mutates_args=("out", "workspace"))
    def latent_attention(binding: int, query: Tensor, latent_cache: Tensor,
                         block_tables: Tensor, seq_lens: Tensor,
                         query_start_loc: Tensor, cache_scale: Optional[Tensor],
                         out: Tensor, workspace: Optional[Tensor],
                         num_kv_splits: int) -> None:
        model, layer, _ = _registry[binding]
        model.latent_attention(layer, query, latent_cache=latent_cache,
                               block_tables=block_tables, seq_lens=seq_lens,
                               query_start_loc=query_start_loc,
                               cache_scale=cache_scale, out=out, workspace=workspace,
                               num_kv_splits=num_kv_splits if num_kv_splits > 0 else None)

    @latent_attention.register_fake
    def _(binding, query, latent_cache, block_tables, seq_lens, query_start_loc,
          cache_scale, out, workspace, num_kv_splits):
        return None

    @torch.library.custom_op("attnc::varlen_attention", mutates_args=("out", "workspace"))
    def varlen_attention(binding: int, query: Tensor, key: Tensor, value: Tensor,
                         cu_seqlens_q: Tensor, cu_seqlens_k: Tensor, out: Tensor,
                         workspace: Optional[Tensor], num_kv_splits: int) -> None:
        model, layer, _ = _registry[binding]
        model.varlen_attention(layer, query, key, value, cu_seqlens_q=cu_seqlens_q,
                               cu_seqlens_k=cu_seqlens_k, out=out, workspace=workspace,
                               num_kv_splits=num_kv_splits if num_kv_splits > 0 else None)

    @varlen_attention.register_fake
    def _(binding, query, key, value, cu_seqlens_q, cu_seqlens_k, out, workspace,
          num_kv_splits):
        return None

    @torch.library.custom_op("attnc::latent_gather", mutates_args=("out",))
    def latent_gather(binding: int, latent_cache: Tensor, block_tables: Tensor,
                      cu_seqlens: Tensor, cache_scale: Optional[Tensor],
                      out: Tensor) -> None:
        model, layer, _ = _registry[binding]
        model.latent_gather(layer, latent_cache=latent_cache, block_tables=block_tables,
                            cu_seqlens=cu_seqlens, cache_scale=cache_scale, out=out)

    @latent_gather.register_fake
    def _(binding, latent_cache, block_tables, cu_seqlens, cache_scale, out):
        return None
