"""Sinks for a pipeline's outputs, and the one streaming query that feeds them all.

``start_query`` runs the stateful stage once per micro-batch (``foreachBatch`` over the
persisted batch; a lone single-pass sink gets the batch directly) and hands each output's rows
to its sink: the main output and every side output (late data...) can go to a different place.
A sink is anything with ``write_batch(df, batch_id)``; :class:`Sink` is the base class new sinks
(Delta...) extend.

Delivery is Spark's ``foreachBatch`` guarantee: at least once. A batch re-run after a failure
has the same ``batch_id``; :class:`MemorySink` replaces that batch, file sinks append again.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType

from flinkwin.output_tag import OutputTag

if TYPE_CHECKING:
    from .compiler import CompiledStage


class Sink(ABC):
    """Receives one output's rows, batch by batch.

    ``single_pass``: ``write_batch`` reads every row of ``df`` in one Spark action. A query
    whose only sink is single-pass hands it the stage's batch directly, as Spark's
    ``foreachBatch`` does; otherwise the batch is persisted and materialised once first, so the
    stateful stage runs exactly once however many sinks read it.
    """

    single_pass = False

    def bind(self, session: SparkSession, schema: StructType, label: str) -> None:
        """Called once before the first batch with the output's schema and name
        (``"main"`` or the side output's tag id)."""
        return None

    @abstractmethod
    def write_batch(self, df: DataFrame, batch_id: int) -> None:
        """Write one micro-batch's rows (a static DataFrame)."""


class MemorySink(Sink):
    """Collects rows on the driver and serves them as the temporary view ``name``.

    ``batches`` maps each batch id to its rows (empty batches included), which makes it easy to
    check results batch by batch; ``rows()`` is everything so far. For small outputs
    (tests, notebooks): every batch rebuilds the view from all collected rows.
    """

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

    single_pass = True

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


class ConsoleSink(Sink):
    """Prints each batch (``DataFrame.show``) under a ``Batch: <id> (<output>)`` header."""

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


class FileSink(Sink):
    """Appends each non-empty batch to ``path`` in ``format`` (parquet, json, csv, orc...)."""

    def __init__(
        self,
        path: str,
        format: str = "parquet",  # noqa: A002 (DataFrameWriter's name)
        partition_by: list[str] | None = None,
        **options: Any,
    ) -> None:
        self.path = path
        self.format = format
        self.partition_by = partition_by
        self.options = options

    def write_batch(self, df: DataFrame, batch_id: int) -> None:
        if df.isEmpty():
            return
        writer = df.write.mode("append").format(self.format).options(**self.options)
        if self.partition_by:
            writer = writer.partitionBy(*self.partition_by)
        writer.save(self.path)

    def __repr__(self) -> str:
        return f"FileSink({self.path!r}, format={self.format!r})"


class ForeachBatchSink(Sink):
    """Calls ``fn(df, batch_id)`` per batch, like ``DataStreamWriter.foreachBatch``.

    As the only sink of a query it receives the batch exactly as Spark's ``foreachBatch`` does:
    each action on ``df`` computes the window stage again (``persist`` it to read it twice),
    and Spark fails a batch whose state-store partitions are left unread (e.g. a lone
    ``show()``). Alongside other sinks it gets the persisted, materialised batch.
    """

    single_pass = True

    def __init__(self, fn: Callable[[DataFrame, int], Any]) -> None:
        self.fn = fn

    def write_batch(self, df: DataFrame, batch_id: int) -> None:
        self.fn(df, batch_id)

    def __repr__(self) -> str:
        return f"ForeachBatchSink({getattr(self.fn, '__name__', self.fn)!r})"


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


def _side_of(stage: CompiledStage, tag: OutputTag, df: DataFrame) -> DataFrame:
    return stage.side(tag, df)


def start_query(
    stage: CompiledStage,
    main: Any,
    side_outputs: Mapping[OutputTag, Any],
    *,
    checkpoint_location: str | None,
    trigger: Mapping[str, Any] | None,
    output_mode: str,
    query_name: str | None,
    options: Mapping[str, Any],
) -> StreamingQuery | None:
    """Launch one streaming query writing every output to its sink (see module docstring).
    On a static stage the outputs are written once, synchronously, and None is returned."""
    if output_mode != "append":
        raise ValueError(
            f"output_mode={output_mode!r}: window results are final once emitted, so only "
            "'append' is supported"
        )
    targets: list[tuple[Sink, Callable[[DataFrame], DataFrame]]] = []
    session = stage.combined.sparkSession
    if main is not None:
        sink = as_sink(main)
        sink.bind(session, stage.main().schema, "main")
        targets.append((sink, stage.main))
    for tag, value in side_outputs.items():
        sink = as_sink(value)
        sink.bind(session, stage.side(tag).schema, tag.tag_id)
        targets.append((sink, functools.partial(_side_of, stage, tag)))
    if not targets:
        raise ValueError("start() needs at least one sink (main=... or side_outputs={...})")

    direct = len(targets) == 1 and targets[0][0].single_pass

    def dispatch(batch: DataFrame, batch_id: int) -> None:
        if direct:
            sink, project = targets[0]
            sink.write_batch(project(batch), batch_id)
            return
        # Materialize every partition once: the stateful stage runs (and commits its state
        # stores) exactly once per batch however many sinks read it, and whatever they do.
        data = batch.persist()
        try:
            data.count()
            for sink, project in targets:
                sink.write_batch(project(data), batch_id)
        finally:
            data.unpersist()

    if not stage.combined.isStreaming:
        dispatch(stage.combined, 0)
        return None
    writer = stage.combined.writeStream.foreachBatch(dispatch).outputMode("append")
    if checkpoint_location is not None:
        writer = writer.option("checkpointLocation", checkpoint_location)
    if trigger:
        writer = writer.trigger(**trigger)
    if query_name is not None:
        writer = writer.queryName(query_name)
    for key, value in options.items():
        writer = writer.option(key, value)
    return writer.start()


__all__ = [
    "ConsoleSink",
    "FileSink",
    "ForeachBatchSink",
    "MemorySink",
    "Sink",
    "as_sink",
    "start_query",
]
