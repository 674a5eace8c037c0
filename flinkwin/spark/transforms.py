"""``map``, ``flat_map`` and ``filter`` over a stream's elements, as one ``mapInArrow`` stage.

Each Arrow batch becomes the elements a window function would see (the same conversion as the
window stage's, :func:`flinkwin.spark.elements.batch_elements`); the user function runs once
per element (user code is per element by nature) and its outputs are encoded with the checked
conversion of window outputs (:class:`flinkwin.spark.schema.RowEncoder`): a mismatch with the
declared output type is an error naming the value, never a silent null. ``filter`` keeps the
input's Arrow columns as they are and only selects rows. Every output keeps the timestamp its
element carries (the hidden ``_fw_rts`` column of a window's results), as in Flink.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import LongType, StructField, StructType

from flinkwin.functions.internal import iterate_outputs

from .elements import RECORD_TIMESTAMP_COLUMN, batch_elements
from .schema import RowEncoder

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

    def process(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """The ``mapInArrow`` function."""
        for batch in batches:
            if batch.num_rows == 0:
                continue
            elements = batch_elements(batch, self.schema, self.time_zone, self.tuple_elements)
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
) -> DataFrame:
    """``df`` (user columns ``schema`` plus an optional ``_fw_rts``) through the transform;
    ``tuple_elements``: the elements are tuples (a ``Types.TUPLE`` stream), else Rows."""
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
    stage = TransformStage(kind, function, schema, encoder, time_zone, name, tuple_elements)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return stage.process(batches)

    return df.mapInArrow(run, out_schema)


__all__ = ["FILTER", "FLAT_MAP", "MAP", "TransformStage", "apply_transform"]
