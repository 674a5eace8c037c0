"""Each source's greatest event time, sent to every key group of a graph stage.

A graph of two or more watermarked sources gives each operator the minimum of the watermarks
of the sources it reads, each generated from that source's greatest timestamp so far (Flink's
``StatusWatermarkValve``). Spark computes the same minimum (one ``withWatermark`` per source,
``multipleWatermarkPolicy=min``) but keeps each source's greatest event time in the driver's
memory only: its offset log records the query's one watermark, so after a restart every
source's maximum starts again from its first new rows and the minimum stays at the restored
watermark until every source has passed it, behind Flink's.

A graph stage in several key groups (the keyed plan: one keyed operator reading the sources,
keyed by columns) therefore keeps the sources' maxima itself, in every key group's state, as
the one-key-group stage does: this ``mapInArrow`` pass after the sources' union passes every
row on with its arrival sequence and, at the end of each input partition, adds for each
source with rows there a copy of its row with the greatest event time for every key group,
marked as a heartbeat (arrival sequence ``HEARTBEAT_SEQUENCE``). Every key group is then
called in every micro-batch with input (the heartbeats' role, see ``docs/metrics.md``), and
reads from the heartbeats each source's greatest event time of the batch
(:meth:`flinkwin.operator.graph.GraphOperator.see_source_clocks`), whichever key groups its
rows went to. Spark's watermark is then only a wake-up clock
(:func:`flinkwin.spark.event_time._with_wake_clock`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark import TaskContext
from pyspark.sql import DataFrame
from pyspark.sql.types import LongType, StructField, StructType

from flinkwin.time import MIN_LONG

from .arrival import sequence
from .key_groups import key_group_labels
from .runtime import HEARTBEAT_SEQUENCE, KEY_GROUP_COLUMN


class _SourceClocks:
    """The ``mapInArrow`` function (module docstring): one input partition's batches."""

    def __init__(self, key_groups: int, source_column: str, event_column: str,
                 sequence_column: str) -> None:
        self.key_groups = key_groups
        self.source_column = source_column
        self.event_column = event_column
        self.sequence_column = sequence_column

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        context = TaskContext.get()
        partition = context.partitionId() if context is not None else 0
        position = 0  # of the batch's first row in the partition
        #: per source: its greatest event time in the partition and a row holding it
        top: dict[int, tuple[int, pa.RecordBatch]] = {}
        for batch in batches:
            if not batch.num_rows:
                continue
            batch = pa.RecordBatch.from_arrays(
                [*batch.columns, pa.array(sequence(partition, position, batch.num_rows))],
                names=[*batch.schema.names, self.sequence_column],
            )
            position += batch.num_rows
            self._note(batch, top)
            yield batch
        if top:
            yield from self._heartbeats([row for _, row in top.values()])

    def _note(self, batch: pa.RecordBatch, top: dict[int, tuple[int, pa.RecordBatch]]) -> None:
        sources = batch.column(self.source_column).to_numpy(zero_copy_only=False)
        events = pc.fill_null(batch.column(self.event_column), MIN_LONG).to_numpy(
            zero_copy_only=False)
        for source in np.unique(sources).tolist():
            rows = np.flatnonzero(sources == source)
            at = int(rows[np.argmax(events[rows])])
            value = int(events[at])
            if source not in top or value > top[source][0]:
                top[source] = (value, batch.slice(at, 1))

    def _heartbeats(self, rows: list[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        labels = key_group_labels(self.key_groups)
        copies = pa.Table.from_batches([row for row in rows for _ in labels])
        schema = copies.schema
        count = copies.num_rows
        at = schema.get_field_index(KEY_GROUP_COLUMN)
        copies = copies.set_column(
            at, schema.field(at), pa.array(list(labels) * len(rows), schema.field(at).type))
        at = schema.get_field_index(self.sequence_column)
        copies = copies.set_column(
            at, schema.field(at), pa.array([HEARTBEAT_SEQUENCE] * count, schema.field(at).type))
        yield from copies.to_batches()


def with_source_clocks(
    df: DataFrame, key_groups: int, source_column: str, event_column: str, sequence_column: str,
    wake_clock: tuple[str, int],
) -> DataFrame:
    """``df`` (the union of a graph's sources with their key-group labels) with the rows'
    arrival sequence in ``sequence_column`` (:mod:`flinkwin.spark.arrival`, computed in this
    pass rather than in one of its own) plus the heartbeats carrying each source's greatest
    event time (module docstring).
    ``wake_clock``: the column carrying Spark's watermark and its delay in ms, whose mark the
    pass's output keeps (written out: a Spark Connect schema does not carry it)."""
    column, delay_ms = wake_clock
    schema = StructType([
        StructField(f.name, f.dataType, f.nullable,
                    {"spark.watermarkDelayMs": delay_ms} if f.name == column else f.metadata)
        for f in df.schema.fields
    ] + [StructField(sequence_column, LongType(), False)])
    function: Any = _SourceClocks(key_groups, source_column, event_column, sequence_column)
    return df.mapInArrow(function, schema)


__all__ = ["with_source_clocks"]
