"""ConsoleSink: prints each batch (debugging)."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from .base import Sink


class ConsoleSink(Sink):
    """Prints each batch (``DataFrame.show``) under a ``Batch: <id> (<output>)`` header.

    A debugging sink: a batch replayed after a failure is printed again (at-least-once).
    """

    def __init__(self, num_rows: int = 20, truncate: bool = False) -> None:
        self.num_rows = num_rows
        self.truncate = truncate
        self.label = ""

    def bind(self, session: SparkSession, schema: StructType, label: str) -> None:
        self.label = label

    def write_batch(self, df: DataFrame, batch_id: int) -> None:
        print("-------------------------------------------")
        print(f"Batch: {batch_id} ({self.label})")
        print("-------------------------------------------")
        df.show(self.num_rows, self.truncate)

    def __repr__(self) -> str:
        return "ConsoleSink()"


__all__ = ["ConsoleSink"]
