"""Per-element user code before the window's shuffle: key selectors and timestamp assigners.

A key selector (``key_by(lambda x: x[0])``, a ``KeySelector``) decides which key group a row is
shuffled to, and a ``TimestampAssigner`` decides its event time: both are Python functions of
the element, so they run in one ``mapInArrow`` stage before the shuffle. Each Arrow batch
becomes the elements the window functions see (:func:`batch_elements`: the same conversion as
the window stage's), the functions are called once per element, and the stage appends:

- ``_fw_kh``: the key, pickled (:func:`flinkwin.spark.key_bytes.key_bytes`: the same bytes for
  equal keys, whichever of their values are one Python object). Spark hashes these bytes into
  the key group. PyFlink ships keys declared without ``key_type`` as pickled bytes too, and
  compares keys by them. The window stage calls the selector again on each element to key its
  state (a key selector must be deterministic, as in Flink), so the window function gets the
  key exactly as returned.
- ``_fw_ats``: the event timestamp, epoch milliseconds (Flink's ``long``).
- ``_fw_seq`` (streaming input): the row's arrival sequence (:mod:`flinkwin.spark.arrival`),
  counted here so that the stream needs no other Python pass before the shuffle for it.

Keys must be built from values whose pickled form is the same in every Python worker: ``str``,
``bytes``, ``int``, ``float``, ``bool``, ``None``, dates, times, decimals and tuples (``Row``)
of those. Anything else (a list, a set, an object) raises an error naming the element.
``key_type`` (PyFlink type information) is checked against every key, and the key hashed is the
declared type's value (:func:`flinkwin.declared_keys.declared_key`, the operators' key). A key
that is None fails (Flink: "Assigned key must not be null!"); a tuple key with a None field is
a key as in PyFlink, which pickles keys without ``key_type``; with
``key_type=Types.TUPLE(...)`` it fails as Flink's ``TupleSerializer`` does
(``NullFieldException``), while ``Types.ROW(...)`` fields may be null as in Flink's
``RowSerializer``.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import DataFrame
from pyspark.sql.types import BinaryType, LongType, StructField, StructType

from flinkwin.declared_keys import declared_key, key_type_mismatch
from flinkwin.functions.base import CallableKeySelector, KeySelector
from flinkwin.functions.internal import open_function
from flinkwin.operator.element_rows import _records
from flinkwin.operator.frames import from_arrow
from flinkwin.operator.runtime_context import TaskInfo, TaskRuntimeContext
from flinkwin.operator.window_operator import make_key_selector
from flinkwin.time import MAX_LONG, MIN_LONG
from flinkwin.timestamps import TimestampAssigner, as_timestamp
from flinkwin.types import TypeInformation, is_pickled_type

from .arrival import ARRIVAL_COLUMN, sequence
from .key_bytes import key_bytes
from .nested import Converter, element_converters
from .schema import unpickle

KEY_COLUMN = "_fw_kh"
TIMESTAMP_COLUMN = "_fw_ats"
#: A stream's hidden column with the timestamps its elements carry (window results).
RECORD_TIMESTAMP_COLUMN = "_fw_rts"

_KEY_ATOMS = (
    str, bytes, int, float, bool, type(None), datetime.date, datetime.time,
    datetime.timedelta, decimal.Decimal,
)

def batch_frame(batch: pa.RecordBatch, schema: StructType, time_zone: str) -> pd.DataFrame:
    """An Arrow batch from Spark as the frame the window stage builds its elements from:
    ``TIMESTAMP`` values time-zone aware in the session time zone (``TIMESTAMP_NTZ`` naive, see
    :mod:`flinkwin.spark.timestamps`), values exact (integers never through float, NaN not
    null: :func:`flinkwin.operator.frames.from_arrow`)."""
    frame = from_arrow(batch, date_as_object=True)
    for name, column in zip(batch.schema.names, batch.columns):
        if pa.types.is_timestamp(column.type) and column.type.tz is not None:
            frame[name] = frame[name].dt.tz_convert(time_zone)
    return frame


def batch_elements(
    batch: pa.RecordBatch, schema: StructType, time_zone: str, tuple_elements: bool = False,
    atomic_elements: bool = False, converters: dict[str, Converter] | None = None,
    pickled: bool = False,
) -> list[Any]:
    """The elements of an Arrow batch, exactly as the window functions see them (tuples for
    a ``Types.TUPLE`` stream, else Rows; the values themselves for a stream of pickled values,
    the output of a function without a declared type, and for a stream of an atomic type;
    nested values shaped by ``converters``, see :mod:`flinkwin.spark.nested`). ``pickled``:
    the stream's one column holds values flinkwin pickled upstream in this pipeline (its type
    says so, never the column's metadata)."""
    if pickled:
        column = batch.column(batch.schema.get_field_index(schema.fields[0].name))
        return [unpickle(v) for v in column.to_pylist()]
    names = schema.fieldNames()
    frame = batch_frame(batch, schema, time_zone)[names]
    return _records(frame, tuple_elements, atomic=atomic_elements, converters=converters)


def check_key(key: Any, key_type: TypeInformation | None, element: Any) -> Any:
    """The key Spark hashes into its key group (a declared type's value,
    :func:`flinkwin.declared_keys.declared_key`: the operators' key identity), or a clear error when
    ``key`` cannot key a Spark stream (see module docstring)."""
    if key is None:
        raise ValueError(
            f"the key selector returned None for element {element!r}; Flink rejects null keys "
            "(Assigned key must not be null!)"
        )
    if key_type is not None:
        problem = key_type_mismatch(key, key_type)
        if problem is not None:
            raise TypeError(
                f"the key selector returned {key!r} for element {element!r}, which does not "
                f"match key_type {key_type!r}: {problem}"
            )
    typed = declared_key(key, key_type)
    if not _stable_key(typed):
        raise TypeError(
            f"the key selector returned {key!r} ({type(key).__name__}) for element {element!r}: "
            "keys must be str, bytes, int, float, bool, dates/times, decimals or tuples "
            "of those (values with the same bytes in every Python worker)"
        )
    return typed


def _stable_key(key: Any) -> bool:
    if isinstance(key, tuple):
        return all(_stable_key(k) for k in key)
    return isinstance(key, _KEY_ATOMS)


def check_timestamp(timestamp: Any, element: Any) -> int:
    """The timestamp as an int (a float truncated as PyFlink does, see
    :func:`flinkwin.timestamps.as_timestamp`), or a clear error naming the element."""
    value = None if isinstance(timestamp, np.bool_) else as_timestamp(timestamp)
    if value is not None and MIN_LONG <= value <= MAX_LONG:
        return value
    raise TypeError(
        f"extract_timestamp returned {timestamp!r} ({type(timestamp).__name__}) for element "
        f"{element!r}: it must return a number of epoch milliseconds within a Java long"
    )


def task_info(name: str, parallelism: int) -> TaskInfo:
    """The running Spark task as Flink's task information (see module docstring)."""
    context = TaskContext.get()
    index = context.partitionId() if context is not None else 0
    attempt = context.attemptNumber() if context is not None else 0
    subtasks = max(parallelism, index + 1)
    return TaskInfo(
        task_name=name,
        index_of_this_subtask=index,
        number_of_parallel_subtasks=subtasks,
        max_number_of_parallel_subtasks=subtasks,
        attempt_number=attempt,
    )



@dataclass
class ElementStage:
    """The key selector and/or timestamp assigner of one window stage (picklable)."""

    schema: StructType
    time_zone: str
    key_selector: KeySelector | None
    key_type: TypeInformation | None
    timestamp_assigner: TimestampAssigner | None
    record_timestamps: bool
    tuple_elements: bool = False
    atomic_elements: bool = False
    #: per nested column, the function shaping its values (flinkwin.spark.nested)
    converters: dict[str, Converter] = field(default_factory=dict)
    #: the elements are values flinkwin pickled upstream (a stream of PICKLED_BYTE_ARRAY)
    pickled: bool = False
    #: append the rows' arrival sequence (``_fw_seq``)
    arrival_sequence: bool = False

    def process(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """The ``mapInArrow`` function; a user ``KeySelector`` is opened before the first
        element and closed after the last (PyFlink opens it as a rich function)."""
        selector = self.key_selector
        rich = selector if type(selector) not in (CallableKeySelector, type(None)) else None
        if rich is not None:
            open_function(rich, TaskRuntimeContext(task_info("KeyBy", 0)))
        try:
            yield from self._process(batches)
        finally:
            if rich is not None:
                rich.close()

    def _process(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        context = TaskContext.get()
        partition = context.partitionId() if context is not None else 0
        position = 0  # of the batch's first row in the partition (mapInArrow: one call each)
        for batch in batches:
            if batch.num_rows == 0:
                continue
            elements = batch_elements(
                batch, self.schema, self.time_zone, self.tuple_elements, self.atomic_elements,
                self.converters, self.pickled,
            )
            arrays = list(batch.columns)
            names = list(batch.schema.names)
            if self.key_selector is not None:
                arrays.append(pa.array(self._keys(elements), pa.binary()))
                names.append(KEY_COLUMN)
            if self.timestamp_assigner is not None:
                if self.record_timestamps:
                    index = batch.schema.get_field_index(RECORD_TIMESTAMP_COLUMN)
                    carried = batch.column(index).fill_null(MIN_LONG).to_pylist()
                else:
                    carried = [MIN_LONG] * len(elements)
                arrays.append(pa.array(self._timestamps(elements, carried), pa.int64()))
                names.append(TIMESTAMP_COLUMN)
            if self.arrival_sequence:
                arrays.append(pa.array(sequence(partition, position, batch.num_rows)))
                names.append(ARRIVAL_COLUMN)
            position += batch.num_rows
            yield pa.RecordBatch.from_arrays(arrays, names=names)

    def _keys(self, elements: list[Any]) -> list[bytes]:
        get_key = self.key_selector.get_key  # type: ignore[union-attr]
        key_type = self.key_type
        out = []
        for element in elements:
            # the bytes Spark hashes agree with the operators' key identity (flinkwin.keys):
            # a declared type's value (1 declared DOUBLE is 1.0, an IntEnum declared INT its
            # int, a tuple declared ROW a Row), NaN and -0.0 as in Java, numpy scalars as the
            # Python values they stand for; equal values one object or two alike
            # (flinkwin.spark.key_bytes)
            out.append(key_bytes(check_key(get_key(element), key_type, element)))
        return out

    def _timestamps(self, elements: list[Any], carried: list[int]) -> list[int]:
        extract = self.timestamp_assigner.extract_timestamp  # type: ignore[union-attr]
        return [
            check_timestamp(extract(element, record_ts), element)
            for element, record_ts in zip(elements, carried)
        ]


def apply_element_stage(
    df: DataFrame,
    schema: StructType,
    key_selector: Any,
    key_type: TypeInformation | None,
    timestamp_assigner: TimestampAssigner | None,
    time_zone: str,
    tuple_elements: bool = False,
    atomic_elements: bool = False,
    element_type: TypeInformation | None = None,
    arrival_sequence: bool = False,
) -> DataFrame:
    """``df`` with ``_fw_kh`` (when there is a key selector), ``_fw_ats`` (when there is a
    timestamp assigner) and ``_fw_seq`` (when ``arrival_sequence``) appended; ``schema`` is
    the elements' schema (``df``'s user columns), ``tuple_elements``/``atomic_elements`` their
    shape (tuples for a ``Types.TUPLE`` stream, the one column's values for an atomic type),
    ``element_type`` the stream's PyFlink type (the shape of nested values)."""
    selector = make_key_selector(key_selector) if key_selector is not None else None
    stage = ElementStage(
        schema=schema,
        time_zone=time_zone,
        key_selector=selector,
        key_type=key_type,
        timestamp_assigner=timestamp_assigner,
        record_timestamps=RECORD_TIMESTAMP_COLUMN in df.columns,
        tuple_elements=tuple_elements,
        atomic_elements=atomic_elements,
        converters=element_converters(schema, element_type),
        pickled=is_pickled_type(element_type),
        arrival_sequence=arrival_sequence,
    )
    fields = list(df.schema.fields)
    if selector is not None:
        fields.append(StructField(KEY_COLUMN, BinaryType(), False))
    if timestamp_assigner is not None:
        fields.append(StructField(TIMESTAMP_COLUMN, LongType(), False))
    if arrival_sequence:
        fields.append(StructField(ARRIVAL_COLUMN, LongType(), False))
    process: Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]] = stage.process
    return df.mapInArrow(_plain(process), StructType(fields))


def _plain(method: Any) -> Any:
    """A bound method as a plain one-argument function (PySpark counts ``self``)."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        return method(batches)  # type: ignore[no-any-return]

    return run


__all__ = [
    "KEY_COLUMN",
    "RECORD_TIMESTAMP_COLUMN",
    "TIMESTAMP_COLUMN",
    "ElementStage",
    "apply_element_stage",
    "batch_elements",
    "batch_frame",
    "check_key",
    "check_timestamp",
    "task_info",
]
