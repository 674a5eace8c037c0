"""MemorySink: rows collected on the driver, served as a temporary view (tests, notebooks)."""

from __future__ import annotations

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql.types import StructType

from .base import Sink


class MemorySink(Sink):
    """Collects rows on the driver and serves them as the temporary view ``name``.

    ``batches`` maps each batch id to its rows (empty batches included), which makes it easy to
    check results batch by batch; ``rows()`` is everything so far. For small outputs
    (tests, notebooks): every batch rebuilds the view from all collected rows.

    A test sink: a replayed batch id replaces that batch, but the rows live in the driver's
    memory, so a restarted driver starts empty (at-least-once across driver restarts).
    """

    single_pass = True

    def __init__(self, name: str) -> None:
        if not name.isidentifier():
            raise ValueError(f"memory sink name must be an identifier, got {name!r}")
        self.name = name
        self.batches: dict[int, list[Row]] = {}
        self._session: SparkSession | None = None
        self._schema: StructType | None = None

    def bind(self, session: SparkSession, schema: StructType, label: str) -> None:
        if type(session).__module__.startswith("pyspark.sql.connect"):
            raise ValueError(
                f"MemorySink({self.name!r}) cannot collect rows on Spark Connect: the query's "
                "foreachBatch runs in a Python process on the server, not in this client; "
                "write to a FileSink or Delta sink and read it back"
            )
        self._session, self._schema = session, schema
        self._publish()

    def write_batch(self, df: DataFrame, batch_id: int) -> None:
        rows = df.collect()
        changed = bool(rows) or bool(self.batches.get(batch_id))
        self.batches[batch_id] = rows
        if changed:
            self._publish()

    def rows(self) -> list[Row]:
        """All rows collected so far, in batch order."""
        return [r for b in sorted(self.batches) for r in self.batches[b]]

    def _publish(self) -> None:
        if self._session is None:
            return
        self._session.createDataFrame(self.rows(), self._schema).createOrReplaceTempView(
            self.name
        )

    def __repr__(self) -> str:
        return f"MemorySink({self.name!r})"


__all__ = ["MemorySink"]
