"""Combining before the shuffle: the window stages that fold a pane's elements per input
partition (:mod:`flinkwin.operator.states.partials`), and the ``mapInArrow`` pass that does it.

A stream whose window is a keyed built-in ``sum``/``min``/``max`` of an integer column over
tumbling event-time windows, with the default trigger, no evictor, no allowed lateness and no
late-data side output, in STREAMING mode, keyed by columns, sends one row per (key, window) of
each input partition through the shuffle instead of every element, as Spark's own
aggregations combine map-side. The same pass counts the rows' arrival sequence, so it replaces
the Python pass that would count it otherwise (:mod:`flinkwin.spark.arrival`). The results are
exactly those without it; ``spark.flinkwin.combine=false`` turns it off (read when the query
is built).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import DataFrame
from pyspark.sql.types import (
    BooleanType,
    DataType,
    DateType,
    IntegralType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from flinkwin.assigners.tumbling import TumblingEventTimeWindows
from flinkwin.longs import ERROR
from flinkwin.operator.batch_windows import in_safe_band
from flinkwin.operator.states import COLUMNAR
from flinkwin.operator.states.partials import PartialSpec, combine
from flinkwin.operator.window_operator import WindowOperator

from .arrival import sequence
from .inputs import EventTime
from .nulls import NullMask
from .watermarks import MAX_EVENT_TIME_MS

#: Session setting: "false" keeps every element through the shuffle.
CONF = "spark.flinkwin.combine"
_KEY_TYPES = (StringType, IntegralType, BooleanType, DateType, TimestampType, TimestampNTZType)


def combining_enabled(session: Any) -> bool:
    """False when the session turned combining off (``spark.flinkwin.combine=false``)."""
    value = session.conf.get(CONF, "true")
    return str(value).strip().lower() != "false"


def can_combine(
    template: WindowOperator, kind: str, schema: StructType, key_columns: list[str] | None,
) -> bool:
    """True if the stage's window has the shape the module docstring names (the caller checks
    the stream side: streaming input, STREAMING mode, no Python element stage)."""
    builtin = template.spec.builtin
    if kind != COLUMNAR or builtin is None or key_columns is None:
        return False
    if type(template.assigner) is not TumblingEventTimeWindows:
        return False
    if template.allowed_lateness != 0 or template.late_output_tag is not None:
        return False
    field_type = _type(schema, builtin.field)
    if builtin.kind == "sum" and not isinstance(field_type, LongType):
        return False
    if not isinstance(field_type, IntegralType):
        return False
    if not all(isinstance(_type(schema, c), _KEY_TYPES) for c in key_columns):
        return False
    # every event time Spark lets through keeps the window arithmetic exact on numpy's path
    return in_safe_band(
        template.assigner, 0, pa.array([-MAX_EVENT_TIME_MS, MAX_EVENT_TIME_MS]).to_numpy()
    )


def _type(schema: StructType, name: str) -> DataType | None:
    return schema[name].dataType if name in schema.fieldNames() else None


def partial_spec(
    template: WindowOperator, key_columns: list[str], event_time: EventTime,
    masks: tuple[NullMask, ...], sequence_column: str,
) -> PartialSpec:
    """How this stage combines (see :class:`~flinkwin.operator.states.partials.PartialSpec`)."""
    builtin = template.spec.builtin
    assert builtin is not None
    by_column = {m.column: (m.mask, m.bit) for m in masks}
    return PartialSpec(
        key_columns=tuple(key_columns),
        key_masks=tuple(by_column.get(c, ("", 0)) for c in key_columns),
        field=builtin.field,
        kind=builtin.kind,
        field_mask=by_column.get(builtin.field),
        time_column=event_time.column,
        time_unit=event_time.unit,
        assigner=template.assigner,
        sequence_column=sequence_column,
        bounds=builtin.kind == "sum" and getattr(template, "overflow", None) == ERROR,
    )


@dataclass(frozen=True)
class _Combiner:
    """The ``mapInArrow`` function: one input partition's rows to their partials."""

    spec: PartialSpec

    def __call__(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        parts = [b for b in batches if b.num_rows]
        if not parts:
            return
        table = pa.Table.from_batches(parts)
        context = TaskContext.get()
        partition = context.partitionId() if context is not None else 0
        combined = combine(table, self.spec, sequence(partition, 0, table.num_rows))
        yield from combined.to_batches()


def with_partials(df: DataFrame, spec: PartialSpec) -> DataFrame:
    """``df`` combined per input partition (one row per pane, plus the elements that travel
    alone) with the columns :attr:`PartialSpec.added_columns`."""
    fields = list(df.schema.fields) + [
        StructField(name, LongType(), True) for name in spec.added_columns
    ]
    return df.mapInArrow(_Combiner(spec), StructType(fields))


__all__ = ["CONF", "can_combine", "combining_enabled", "partial_spec", "with_partials"]
