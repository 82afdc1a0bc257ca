"""Exceptions raised by attnc.

Every failure of the C API becomes an :class:`AttncError` subclass chosen by
its status code; the exception carries the status name (``"invalid_argument"``,
``"compile_error"``, ...) and the text of ``attnc_last_error()``. Argument
checks done in Python before a launch raise :class:`ArgumentError`, which names
the argument and the rule it broke.
"""

from __future__ import annotations

from typing import Optional


class AttncError(Exception):
    """Base class of every attnc error.

    Attributes:
        status: the C API status name, e.g. ``"invalid_argument"``
            (``"library_not_found"`` when the library itself is missing).
        message: the error text (for C API failures, ``attnc_last_error()``).
        code: the C API status code, or ``None`` for errors raised in Python.
    """

    status = "error"

    def __init__(self, message: str, *, status: Optional[str] = None,
                 code: Optional[int] = None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.code = code

    def __str__(self) -> str:  # "compile_error: <log>"
        return f"{self.status}: {self.message}" if self.message else self.status


class LibraryNotFoundError(AttncError, OSError):
    """libattnc.so could not be found or loaded (the message lists where it
    was looked for)."""

    status = "library_not_found"


class InvalidArgumentError(AttncError, ValueError):
    """Malformed input (status ``invalid_argument``); the message names the
    field or argument and the rule."""

    status = "invalid_argument"


class ConfigError(InvalidArgumentError):
    """The model configuration or a compile option was rejected; the message
    names the config field (``layer_kinds[0].rope.rotary_dim: ...``) or the
    option."""


class ArgumentError(InvalidArgumentError):
    """A tensor or value passed to a kernel call broke a rule, found in Python
    before the launch. ``argument`` is the parameter name (``"k_cache"``)."""

    def __init__(self, argument: str, rule: str):
        super().__init__(f"{argument}: {rule}")
        self.argument = argument
        self.rule = rule


class CompileError(AttncError):
    """NVRTC rejected generated source (status ``compile_error``); the message
    holds the log, the options and where the source was saved."""

    status = "compile_error"


class CudaError(AttncError):
    """A CUDA driver call failed (status ``cuda_error``)."""

    status = "cuda_error"


class NoDriverError(AttncError):
    """The CUDA driver (libcuda.so.1) or NVRTC could not be loaded (status
    ``no_driver``): launching needs a GPU driver, compiling needs NVRTC."""

    status = "no_driver"


class BundleIOError(AttncError, OSError):
    """Reading or writing a file failed (status ``io_error``)."""

    status = "io_error"


class CorruptError(AttncError):
    """Stored data (a bundle, a cache entry) failed its checks (status
    ``corrupt``)."""

    status = "corrupt"


class NotFoundError(AttncError, LookupError):
    """No such kernel, arch or file (status ``not_found``)."""

    status = "not_found"


class InternalError(AttncError):
    """A bug in attnc, or out of memory (status ``internal``)."""

    status = "internal"


class AttncWarning(UserWarning):
    """A warning reported by the runtime (a corrupt cache entry that was
    recompiled, an unwritable cache directory)."""


#: C API status code -> exception class (attnc_status_t in attnc-c/Runtime.h).
STATUS_CLASSES = {
    1: InvalidArgumentError,
    2: CompileError,
    3: CudaError,
    4: NoDriverError,
    5: BundleIOError,
    6: CorruptError,
    7: NotFoundError,
    8: InternalError,
}

__all__ = [
    "AttncError", "LibraryNotFoundError", "InvalidArgumentError", "ConfigError",
    "ArgumentError", "CompileError", "CudaError", "NoDriverError",
    "BundleIOError", "CorruptError", "NotFoundError", "InternalError",
    "AttncWarning",
]
