"""``as_sink``: a sink from what ``start()`` accepts."""

from __future__ import annotations

from typing import Any

from .base import Sink
from .console import ConsoleSink
from .delta import DeltaSink
from .delta_upsert import DeltaUpsertSink
from .files import FileSink
from .foreach_batch import ForeachBatchSink
from .memory import MemorySink

FILE_FORMATS = ("parquet", "json", "csv", "orc", "text")


def as_sink(value: Any, *, delta_engine: Any = "auto") -> Sink:
    """A :class:`Sink` from a Sink, a ``fn(df, batch_id)`` callable, or a short string, the
    same everywhere (``start()``, ``writeStream...sideOutput()``, ``flinkwin-job --sink``):
    ``"delta:<path>"``, ``"delta-table:<catalog.schema.table>"`` (a :class:`DeltaSink` with
    ``delta_engine``), ``"delta-upsert:<path>"``, ``"delta-upsert-table:<name>"`` (a
    :class:`DeltaUpsertSink`), ``"<format>:<path>"`` with format one of parquet, json, csv,
    orc, text, ``"memory:<view name>"`` and ``"console"``."""
    if isinstance(value, Sink):
        return value
    if isinstance(value, str):
        kind, _, arg = value.partition(":")
        if kind == "console" and not arg:
            return ConsoleSink()
        if kind == "memory" and arg:
            return MemorySink(arg)
        if kind == "delta" and arg:
            return DeltaSink(arg, engine=delta_engine)
        if kind == "delta-table" and arg:
            return DeltaSink(table=arg, engine=delta_engine)
        if kind == "delta-upsert" and arg:
            return DeltaUpsertSink(arg, engine=delta_engine)
        if kind == "delta-upsert-table" and arg:
            return DeltaUpsertSink(table=arg, engine=delta_engine)
        if kind in FILE_FORMATS and arg:
            return FileSink(arg, format=kind)
        raise ValueError(
            f"unknown sink {value!r}: use 'delta:<path>', 'delta-table:<catalog.schema.table>', "
            "'delta-upsert:<path>', 'delta-upsert-table:<catalog.schema.table>', "
            f"'<format>:<path>' (format in {', '.join(FILE_FORMATS)}), 'memory:<name>', "
            "'console', a Sink or a fn(df, batch_id)"
        )
    if callable(value):
        return ForeachBatchSink(value)
    raise TypeError(f"not a sink: {value!r}")


__all__ = ["as_sink"]
