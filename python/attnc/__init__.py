"""attnc: JIT-compiled attention kernels for a model, launched on your tensors.

    import attnc, torch

    model = attnc.compile("config.json", kv_dtype="bf16")      # or a dict / HF config
    q = model.preprocess("full_attention", qkv, positions=pos,
                         slot_mapping=slots, k_cache=kc, v_cache=vc,
                         q_norm_weight=qw, k_norm_weight=kw)
    out = model.attention("full_attention", q, k_cache=kc, v_cache=vc,
                          block_tables=bt, seq_lens=lens,
                          query_start_loc=qsl)

The package binds the attnc C API (libattnc.so) with ctypes; it has no
compiled code of its own. See python/README.md.
"""

from __future__ import annotations

from .errors import (ArgumentError, AttncError, AttncWarning, BundleIOError,
                     CompileError, ConfigError, CorruptError, CudaError,
                     InternalError, InvalidArgumentError, LibraryNotFoundError,
                     NoDriverError, NotFoundError)
from ._model import Context, Kernel, Model, compile, compile_ir, config_to_json, load
from ._plan import (AttentionPlan, LatentAttentionPlan, LatentGatherPlan,
                    LaunchPlan, MlaPreprocessPlan, PreprocessPlan,
                    VarlenAttentionPlan)
from . import _library

__version__ = "0.1.0"


def library_path() -> str:
    """The path of the libattnc.so in use (loading it if needed).

    Raises:
        LibraryNotFoundError: it cannot be found or loaded.
    """
    return _library.library().path


def version() -> str:
    """The version of the loaded libattnc.so (attnc_version())."""
    value = _library.library().attnc_version()
    return value.decode() if value else ""


__all__ = [
    "compile", "compile_ir", "load", "Model", "Kernel", "Context", "config_to_json",
    "PreprocessPlan", "AttentionPlan", "LaunchPlan",
    "MlaPreprocessPlan", "LatentAttentionPlan", "VarlenAttentionPlan",
    "LatentGatherPlan",
    "library_path", "version",
    "AttncError", "LibraryNotFoundError", "InvalidArgumentError", "ConfigError",
    "ArgumentError", "CompileError", "CudaError", "NoDriverError",
    "BundleIOError", "CorruptError", "NotFoundError", "InternalError",
    "AttncWarning",
]
