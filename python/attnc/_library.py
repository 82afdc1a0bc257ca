"""Finding libattnc.so and declaring its C API for ctypes.

The package binds the C API (attnc-c/Runtime.h and attnc-c/Compiler.h) with
ctypes rather than a compiled extension, so one pure-Python package works on
any CPython >= 3.8 (see python/README.md for why).

Lookup order, first match wins:
  1. ``$ATTNC_LIBRARY`` (a path to the .so; if set, nothing else is tried);
  2. the copy inside the package, ``attnc/_lib/libattnc.so`` (what
     ``pip install`` puts there);
  3. the build tree, ``<repo>/build/lib/libattnc.so``.
The library is loaded on first use, so ``import attnc`` works without it.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path
from typing import List, Optional

from .errors import STATUS_CLASSES, AttncError, LibraryNotFoundError

LIBRARY_NAME = "libattnc.so"
ENV_LIBRARY = "ATTNC_LIBRARY"

_PACKAGE_DIR = Path(__file__).resolve().parent
_REPO_DIR = _PACKAGE_DIR.parent.parent  # python/attnc -> python -> repo

c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_size_t = ctypes.c_size_t
c_int = ctypes.c_int
c_int64 = ctypes.c_int64
c_double = ctypes.c_double


# ---- structs (must match the headers field for field) ---------------------

WARNING_CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, c_char_p)


class ContextOptions(ctypes.Structure):
    """attnc_context_options_t"""

    _fields_ = [
        ("cache_dir", c_char_p),
        ("archs", ctypes.POINTER(c_char_p)),
        ("num_archs", c_size_t),
        ("disable_cache", c_int),
        ("nvrtc_library_path", c_char_p),
        ("cuda_driver_library", c_char_p),
        ("warning_callback", WARNING_CALLBACK),
        ("warning_user_data", c_void_p),
        ("disable_pdl", c_int),
    ]


class ModelOptions(ctypes.Structure):
    """attnc_model_options_t"""

    _fields_ = [
        ("arch", c_char_p),
        ("tp", c_int64),
        ("rank", c_int64),
        ("block_size", c_int64),
        ("dtype", c_char_p),
        ("kv_dtype", c_char_p),
        ("tiering", ctypes.c_int32),
    ]


class BuildReport(ctypes.Structure):
    """attnc_build_report_t"""

    _fields_ = [
        ("arch", c_char_p),
        ("outcome", c_int),
        ("total_ms", c_double),
        ("compile_ms", c_double),
        ("lock_wait_ms", c_double),
        ("cache_key", c_char_p),
        ("cache_entry_path", c_char_p),
    ]


BUILD_OUTCOMES = {0: "memory_hit", 1: "disk_hit", 2: "compiled", 3: "bundle"}

_P = c_void_p  # opaque handles
_STATUS = c_int

# name -> (restype, argtypes)
_SIGNATURES = {
    # Runtime.h
    "attnc_status_name": (c_char_p, [c_int]),
    "attnc_last_error": (c_char_p, []),
    "attnc_version": (c_char_p, []),
    "attnc_context_options_initialize": (None, [ctypes.POINTER(ContextOptions)]),
    "attnc_context_create": (_STATUS, [ctypes.POINTER(ContextOptions),
                                       ctypes.POINTER(_P)]),
    "attnc_context_destroy": (None, [_P]),
    "attnc_context_nvrtc_version": (_STATUS, [_P, ctypes.POINTER(c_int),
                                              ctypes.POINTER(c_int)]),
    "attnc_split_kv_count": (_STATUS, [c_int64, c_int64, c_int64, c_int64,
                                       ctypes.POINTER(c_int64), c_char_p,
                                       ctypes.POINTER(c_int64)]),
    "attnc_kernel_set_destroy": (None, [_P]),
    "attnc_kernel_set_kernel_count": (c_size_t, [_P]),
    "attnc_kernel_set_kernel_at": (_STATUS, [_P, c_size_t, ctypes.POINTER(_P)]),
    "attnc_kernel_set_find_kernel": (_STATUS, [_P, c_char_p, ctypes.POINTER(_P)]),
    "attnc_kernel_name": (c_char_p, [_P]),
    "attnc_kernel_abi_json": (c_char_p, [_P]),
    "attnc_kernel_param_count": (c_size_t, [_P]),
    "attnc_kernel_launch_scalar_count": (c_size_t, [_P]),
    "attnc_kernel_set_arch_count": (c_size_t, [_P]),
    "attnc_kernel_set_arch": (c_char_p, [_P, c_size_t]),
    "attnc_kernel_set_cubin": (_STATUS, [_P, c_char_p, ctypes.POINTER(c_void_p),
                                         ctypes.POINTER(c_size_t)]),
    "attnc_kernel_set_ptx": (_STATUS, [_P, c_char_p, ctypes.POINTER(c_char_p)]),
    "attnc_kernel_set_build_report": (_STATUS, [_P, c_size_t,
                                                ctypes.POINTER(BuildReport)]),
    "attnc_kernel_launch": (_STATUS, [_P, c_void_p, ctypes.POINTER(c_void_p),
                                      c_size_t, ctypes.POINTER(c_int64),
                                      c_size_t]),
    "attnc_kernel_prepare": (_STATUS, [_P]),
    "attnc_launch_plan_create": (_STATUS, [_P, ctypes.POINTER(_P)]),
    "attnc_launch_plan_destroy": (None, [_P]),
    "attnc_launch_plan_run": (_STATUS, [_P, c_void_p, c_void_p, c_void_p]),
    "attnc_launch_plan_programmatic_launch": (c_int, [_P]),
    # Compiler.h
    "attnc_model_options_initialize": (None, [ctypes.POINTER(ModelOptions)]),
    "attnc_model_compile_config": (_STATUS, [_P, c_char_p,
                                             ctypes.POINTER(ModelOptions),
                                             ctypes.POINTER(_P)]),
    "attnc_model_compile_ir": (_STATUS, [_P, c_char_p,
                                         ctypes.POINTER(ModelOptions),
                                         ctypes.POINTER(_P)]),
    "attnc_model_load_bundle": (_STATUS, [_P, c_char_p, ctypes.POINTER(_P)]),
    "attnc_model_write_bundle": (_STATUS, [_P, c_char_p]),
    "attnc_model_destroy": (None, [_P]),
    "attnc_model_manifest_json": (c_char_p, [_P]),
    "attnc_model_kernel_count": (c_size_t, [_P]),
    "attnc_model_kernel_name": (c_char_p, [_P, c_size_t]),
    "attnc_model_kernel_kind": (c_char_p, [_P, c_size_t]),
    "attnc_model_kernel_layer": (c_char_p, [_P, c_size_t]),
    "attnc_model_kernel_source": (c_char_p, [_P, c_size_t]),
    "attnc_model_kernel_set": (_P, [_P, c_size_t]),
    "attnc_model_wait_optimised": (_STATUS, [_P]),
    "attnc_kernel_set_tier": (c_int, [_P]),
}


def candidate_paths() -> List[Path]:
    """Where the library is looked for, in order (see the module doc)."""
    env = os.environ.get(ENV_LIBRARY)
    if env:
        return [Path(env)]
    return [_PACKAGE_DIR / "_lib" / LIBRARY_NAME,
            _REPO_DIR / "build" / "lib" / LIBRARY_NAME]


class _MissingSymbol:
    """Stands in for an entry point the loaded library does not export, so
    that an older library fails on the call that needs the symbol only."""

    def __init__(self, name: str, path: str):
        self._name, self._path = name, path

    def __call__(self, *args, **kwargs):
        raise LibraryNotFoundError(
            f"{self._path} does not export {self._name} (a library built from "
            "an older attnc, or without the compiler?)")


class Library:
    """The loaded library: each C entry point as an attribute."""

    def __init__(self, path: Path):
        self.path = str(path)
        try:
            self._dll = ctypes.CDLL(self.path)
        except OSError as error:
            raise LibraryNotFoundError(f"cannot load {self.path}: {error}") from None
        for name, (restype, argtypes) in _SIGNATURES.items():
            try:
                function = getattr(self._dll, name)
            except AttributeError:
                setattr(self, name, _MissingSymbol(name, self.path))
                continue
            function.restype = restype
            function.argtypes = argtypes
            setattr(self, name, function)

    # ---- status handling ------------------------------------------------

    def error_for(self, status: int, *, config: bool = False) -> AttncError:
        """The exception for a failed call's status; must run on the thread
        that made the call (attnc_last_error() is per thread)."""
        message = _text(self.attnc_last_error())
        name = _text(self.attnc_status_name(status)) or f"status {status}"
        cls = STATUS_CLASSES.get(status, AttncError)
        if config and status == 1:
            from .errors import ConfigError
            cls = ConfigError
        return cls(message, status=name, code=status)

    def check(self, status: int, *, config: bool = False) -> None:
        """Raises the matching AttncError when status is not ATTNC_STATUS_OK."""
        if status != 0:
            raise self.error_for(status, config=config)


def _text(value: Optional[bytes]) -> str:
    return value.decode("utf-8", "replace") if value else ""


_lock = threading.Lock()
_library: Optional[Library] = None


def library() -> Library:
    """The library, loaded on first use (thread-safe).

    Raises:
        LibraryNotFoundError: no candidate exists, or the one found does not
            load; the message lists every path tried.
    """
    global _library
    if _library is not None:
        return _library
    with _lock:
        if _library is None:
            _library = _load()
    return _library


def _load() -> Library:
    candidates = candidate_paths()
    from_env = bool(os.environ.get(ENV_LIBRARY))
    for path in candidates:
        if path.is_file():
            return Library(path)
    if from_env:
        raise LibraryNotFoundError(
            f"${ENV_LIBRARY} is set to {candidates[0]}, which is not a file")
    tried = ", ".join(str(p) for p in candidates)
    raise LibraryNotFoundError(
        f"{LIBRARY_NAME} not found (tried {tried}); build it (cmake --build "
        f"build --target attnc), install the package with pip, or set "
        f"${ENV_LIBRARY} to its path")


def reset_for_tests() -> None:
    """Forgets the loaded library so the next call looks it up again (tests of
    the lookup only; objects made with the old library keep using it)."""
    global _library
    with _lock:
        _library = None
