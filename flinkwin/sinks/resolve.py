"""``as_sink``: a sink from what ``start()`` accepts."""

from __future__ import annotations

from typing import Any

from .base import Sink
from .console import ConsoleSink
from .files import FileSink
from .foreach_batch import ForeachBatchSink
from .memory import MemorySink

_FILE_FORMATS = ("parquet", "json", "csv", "orc", "text")


def as_sink(value: Any) -> Sink:
    """A :class:`Sink` from a Sink, a ``fn(df, batch_id)`` callable, or a short string:
    ``"console"``, ``"memory:<view name>"``, ``"<format>:<path>"`` with format one of
    parquet, json, csv, orc, text."""
    if isinstance(value, Sink):
        return value
    if isinstance(value, str):
        kind, _, arg = value.partition(":")
        if kind == "console" and not arg:
            return ConsoleSink()
        if kind == "memory" and arg:
            return MemorySink(arg)
        if kind in _FILE_FORMATS and arg:
            return FileSink(arg, format=kind)
        raise ValueError(
            f"unknown sink {value!r}: use 'console', 'memory:<name>', '<format>:<path>' "
            f"(format in {_FILE_FORMATS}), a Sink or a fn(df, batch_id)"
        )
    if callable(value):
        return ForeachBatchSink(value)
    raise TypeError(f"not a sink: {value!r}")


__all__ = ["as_sink"]
