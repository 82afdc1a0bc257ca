"""Turning the ``stream=`` argument into a CUstream handle."""

from __future__ import annotations

from typing import Any, Optional

from .errors import ArgumentError
from ._tensors import torch_module


def resolve_stream(stream: Any, device: Optional[int]) -> int:
    """The CUstream handle (an int; 0 is the legacy default stream) for a
    launch.

    Args:
        stream: ``None`` (torch's current stream on the tensors' device when
            torch is in use, else the legacy default stream), an ``int``
            handle, a ``torch.cuda.Stream`` or any object with a
            ``cuda_stream`` attribute, or an object with ``__cuda_stream__``
            (the CUDA Python protocol: returns ``(version, handle)``).
        device: the CUDA device of the launch's torch tensors, if known.
    """
    if stream is None:
        torch = torch_module()
        if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
            current = (torch.cuda.current_stream(device) if device is not None
                       else torch.cuda.current_stream())
            return int(current.cuda_stream)
        return 0
    if isinstance(stream, bool):
        raise ArgumentError("stream", "expected a stream, got a bool")
    if isinstance(stream, int):
        if stream < 0:
            raise ArgumentError("stream", f"handle must be >= 0, got {stream}")
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        value = protocol() if callable(protocol) else protocol
        if isinstance(value, (tuple, list)) and len(value) == 2:
            return int(value[1])
        raise ArgumentError("stream", "__cuda_stream__ must return (version, "
                            f"handle), got {value!r}")
    handle = getattr(stream, "cuda_stream", None)
    if handle is not None:
        return int(handle)
    raise ArgumentError(
        "stream", f"expected None, an int CUstream handle, a torch.cuda.Stream "
        f"or an object with cuda_stream / __cuda_stream__, got "
        f"{type(stream).__name__}")
