"""ForeachBatchSink: a user function per batch, like ``DataStreamWriter.foreachBatch``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyspark.sql import DataFrame

from .base import Sink


class ForeachBatchSink(Sink):
    """Calls ``fn(df, batch_id)`` per batch, like ``DataStreamWriter.foreachBatch``.

    As the only sink of a query it receives the batch exactly as Spark's ``foreachBatch`` does:
    each action on ``df`` computes the window stage again (``persist`` it to read it twice),
    and Spark fails a batch whose state-store partitions are left unread (e.g. a lone
    ``show()``). Alongside other sinks it gets the persisted, materialised batch.

    The guarantee is the function's: a batch replayed after a failure calls it again with the
    same ``batch_id`` and rows (Spark's at-least-once), so ``fn`` must skip or replace a batch
    id it already wrote to be exactly-once.
    """

    single_pass = True

    def __init__(self, fn: Callable[[DataFrame, int], Any]) -> None:
        self.fn = fn

    def write_batch(self, df: DataFrame, batch_id: int) -> None:
        self.fn(df, batch_id)

    def __repr__(self) -> str:
        return f"ForeachBatchSink({getattr(self.fn, '__name__', self.fn)!r})"


__all__ = ["ForeachBatchSink"]
