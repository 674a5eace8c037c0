"""``map``, ``flat_map`` and ``filter`` over a stream's elements, as one ``mapInArrow`` stage.

Each Arrow batch becomes the elements a window function would see (the same conversion as the
window stage's, :func:`flinkwin.spark.elements.batch_elements`); the user function runs once
per element (user code is per element by nature) and its outputs are encoded with the checked
conversion of window outputs (:class:`flinkwin.spark.row_encoder.RowEncoder`): a mismatch with the
declared output type is an error naming the value, never a silent null. ``filter`` keeps the
input's Arrow columns as they are and only selects rows. Every output keeps the timestamp its
element carries (the hidden ``_fw_rts`` column of a window's results), as in Flink.

A rich function (a ``MapFunction``/``FlatMapFunction``/``FilterFunction``, PyFlink's
``Function``) is opened in each Spark task before its first element, ``open(runtime_context)``
with the task's information (a subtask is a partition of the stage's input: its index, and
the number of partitions where Spark reports it, a static DataFrame's), and closed after the
last, as Flink opens and closes it per subtask.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import LongType, StructField, StructType

from flinkwin.functions.base import Function
from flinkwin.functions.internal import iterate_outputs, open_function
from flinkwin.operator.runtime_context import TaskRuntimeContext
from flinkwin.types import is_pickled_type

from .elements import RECORD_TIMESTAMP_COLUMN, batch_elements, task_info
from .nested import Converter, element_converters
from .row_encoder import RowEncoder

MAP, FLAT_MAP, FILTER = "map", "flat_map", "filter"


@dataclass
class TransformStage:
    """One map/flat_map/filter (picklable; see module docstring)."""

    kind: str
    function: Any
    schema: StructType
    encoder: RowEncoder | None
    time_zone: str
    name: str
    tuple_elements: bool = False
    #: the elements are the one column's values (a stream of an atomic type)
    atomic_elements: bool = False
    #: the user's ``Function`` object to open and close (None for a plain function)
    rich: Any = None
    #: the number of partitions of the input (0: unknown)
    parallelism: int = 0
    #: per nested column, the function shaping its values (flinkwin.spark.nested)
    converters: dict[str, Converter] = field(default_factory=dict)
    #: the elements are values flinkwin pickled upstream (a stream of PICKLED_BYTE_ARRAY)
    pickled: bool = False

    def process(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """The ``mapInArrow`` function: opens the rich function, transforms, closes it."""
        rich = self.rich
        if rich is not None:
            open_function(rich, TaskRuntimeContext(task_info(self.name, self.parallelism)))
        try:
            yield from self._transform(batches)
        finally:
            if rich is not None:
                rich.close()

    def _transform(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            elements = batch_elements(
                batch, self.schema, self.time_zone, self.tuple_elements, self.atomic_elements,
                self.converters, self.pickled,
            )
            index = batch.schema.get_field_index(RECORD_TIMESTAMP_COLUMN)
            stamps = batch.column(index) if index >= 0 else None
            if self.kind == FILTER:
                mask = pa.array([bool(self.function(e)) for e in elements], pa.bool_())
                yield batch.filter(mask)
                continue
            outputs: list[Any] = []
            origin: list[int] = []
            if self.kind == MAP:
                outputs = [self.function(e) for e in elements]
                origin = list(range(len(elements)))
            else:
                for i, element in enumerate(elements):
                    produced = iterate_outputs(self.function(element), self.name)
                    for out in produced:
                        outputs.append(out)
                        origin.append(i)
            assert self.encoder is not None
            arrays = self.encoder.arrays(outputs)
            names = list(self.encoder.names)
            if stamps is not None:
                arrays.append(stamps.take(pa.array(np.asarray(origin, dtype=np.int64))))
                names.append(RECORD_TIMESTAMP_COLUMN)
            yield pa.RecordBatch.from_arrays(arrays, names=names)


def apply_transform(
    df: DataFrame,
    kind: str,
    function: Any,
    schema: StructType,
    output_schema: StructType | None,
    name: str,
    tuple_elements: bool = False,
    rich: Any = None,
    atomic_elements: bool = False,
    element_type: Any = None,
) -> DataFrame:
    """``df`` (user columns ``schema`` plus an optional ``_fw_rts``) through the transform;
    ``tuple_elements``: the elements are tuples (a ``Types.TUPLE`` stream), ``atomic_elements``:
    the one column's values (an atomic type such as ``Types.STRING()``), else Rows."""
    time_zone = df.sparkSession.conf.get("spark.sql.session.timeZone") or "UTC"
    carried = RECORD_TIMESTAMP_COLUMN in df.columns
    if kind == FILTER:
        out_schema = df.schema
        encoder = None
    else:
        assert output_schema is not None
        encoder = RowEncoder(output_schema, time_zone, f"{name} output")
        fields = list(output_schema.fields)
        if carried:
            fields.append(StructField(RECORD_TIMESTAMP_COLUMN, LongType(), True))
        out_schema = StructType(fields)
    stage = TransformStage(
        kind, function, schema, encoder, time_zone, name, tuple_elements,
        rich=rich if isinstance(rich, Function) else None,
        parallelism=_partitions(df) if isinstance(rich, Function) else 0,
        atomic_elements=atomic_elements,
        converters=element_converters(schema, element_type),
        pickled=is_pickled_type(element_type),
    )

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return stage.process(batches)

    return df.mapInArrow(run, out_schema)


def _partitions(df: DataFrame) -> int:
    """The number of partitions of a static DataFrame (0: unknown, e.g. a streaming one)."""
    if df.isStreaming:
        return 0
    try:
        return int(df.rdd.getNumPartitions())
    except Exception:  # Spark Connect has no RDDs
        return 0


__all__ = ["FILTER", "FLAT_MAP", "MAP", "TransformStage", "apply_transform"]
