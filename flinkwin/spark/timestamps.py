"""Timestamps carried exactly between Spark and the window stage.

PySpark hands a pandas function a ``TIMESTAMP`` (an instant) as naive wall time in the session
time zone, which is ambiguous in the repeated hour of a daylight-saving change, and converts a
naive value coming back in that zone. flinkwin does not rely on that conversion:

- **In**: every ``TIMESTAMP`` and ``TIMESTAMP_NTZ`` of the input, at any depth (arrays, maps,
  structs), travels as epoch microseconds (``unix_micros``; for ``TIMESTAMP_NTZ`` its wall time
  read as UTC, which is exact whatever the session zone). A null top-level value travels as
  ``MIN_LONG``, so the column stays ``int64`` and exact in pandas; a value of exactly
  ``MIN_LONG`` microseconds (outside a Python ``datetime``) fails as the row enters the stage
  (:func:`with_checked_timestamps`) rather than arrive as a null. The
  workers rebuild the values: a ``TIMESTAMP`` becomes a time-zone aware datetime in the session
  time zone (as PyFlink hands a ``TIMESTAMP_LTZ``), a ``TIMESTAMP_NTZ`` a naive datetime (as
  PyFlink hands a ``TIMESTAMP``).
- **Floats inside nested values** travel the same way, as text: PySpark hands an
  ``array<double>`` (or a map or struct holding floats) to pandas as float arrays, where a null
  element becomes NaN. Every ``float``/``double`` inside an array, map or struct therefore
  travels as Spark's text of the value (``cast(... as string)``: ``NaN``, ``-0.0``,
  ``Infinity``, or the shortest digits that round-trip) and the workers parse it back: a null
  stays ``None``, a NaN ``nan``, a ``float`` the single-precision value. Top-level float columns
  keep their values and travel with a null mask (:mod:`flinkwin.spark.nulls`). The stage's
  outputs do the same in the other direction (:func:`text_floats`): PySpark would turn a NaN
  inside a nested output value into null, so such fields leave the stage with their floats as
  Arrow's text (``nan``, ``-0``, the shortest round-trip digits) and Spark casts them back to
  the declared type right after it.
- **Day-time intervals** at the top level travel as microseconds too (Spark's exact decimal
  of their seconds, times 10^6: PySpark's pandas conversion would take them through
  nanoseconds, wrapping those beyond about 292 years, and hand a null as ``NaT``); their
  nulls travel in the column's null mask (:mod:`flinkwin.spark.nulls`), and the workers
  rebuild them as ``timedelta64[us]`` (a null as ``NaT``, which the elements hold as ``None``:
  :func:`flinkwin.operator.element_rows.column_values`), or, in a batch holding Spark's least
  interval (-2^63 µs, which is ``NaT`` in numpy), as ``datetime.timedelta`` objects. Inside
  arrays, maps and structs PySpark hands them over exactly.
- **Out**: the stage returns timestamps as Arrow arrays with an explicit UTC zone (instants) or
  without one (``TIMESTAMP_NTZ`` wall time), which Spark stores exactly; see
  :class:`flinkwin.spark.row_encoder.RowEncoder` for how returned values are read.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    DataType,
    DayTimeIntervalType,
    DoubleType,
    FloatType,
    MapType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from flinkwin.time import MIN_LONG

UTC_ZONES = frozenset({"UTC", "Etc/UTC", "GMT", "Etc/GMT", "Z", "+00:00", "Zulu"})
_TIMESTAMPS = (TimestampType, TimestampNTZType)
_EPOCH = datetime.datetime(1970, 1, 1)


def _contains(dtype: DataType, leaves: tuple[type[DataType], ...]) -> bool:
    """True if ``dtype`` is, or holds at any depth, a value of one of the ``leaves`` types."""
    if isinstance(dtype, leaves):
        return True
    if isinstance(dtype, ArrayType):
        return _contains(dtype.elementType, leaves)
    if isinstance(dtype, MapType):
        return _contains(dtype.keyType, leaves) or _contains(dtype.valueType, leaves)
    if isinstance(dtype, StructType):
        return any(_contains(f.dataType, leaves) for f in dtype.fields)
    return False


def has_timestamps(dtype: DataType) -> bool:
    """True if ``dtype`` is or contains a ``TIMESTAMP``/``TIMESTAMP_NTZ``."""
    return _contains(dtype, _TIMESTAMPS)


def _has_floats(dtype: DataType) -> bool:
    return _contains(dtype, (FloatType, DoubleType))


def _changed(dtype: DataType) -> bool:
    """Whether a value of ``dtype`` inside a nested value travels changed (see module doc)."""
    return has_timestamps(dtype) or _has_floats(dtype)


def on_wire(dtype: DataType) -> bool:
    """True if an input column of ``dtype`` travels changed (see module docstring): a
    timestamp at any depth, a day-time interval, or a float inside an array, map or
    struct."""
    if has_timestamps(dtype) or isinstance(dtype, DayTimeIntervalType):
        return True
    return isinstance(dtype, (ArrayType, MapType, StructType)) and _has_floats(dtype)


def text_floats(dtype: DataType) -> DataType:
    """``dtype`` with every ``float``/``double`` inside an array, map or struct as a string:
    the type a stage output of ``dtype`` has on its way to Spark (see module docstring)."""
    if not isinstance(dtype, (ArrayType, MapType, StructType)) or not _has_floats(dtype):
        return dtype
    return _texts(dtype)


def _texts(dtype: DataType) -> DataType:
    if isinstance(dtype, (FloatType, DoubleType)):
        return StringType()
    if isinstance(dtype, ArrayType):
        return ArrayType(_texts(dtype.elementType), dtype.containsNull)
    if isinstance(dtype, MapType):
        return MapType(_texts(dtype.keyType), _texts(dtype.valueType), dtype.valueContainsNull)
    if isinstance(dtype, StructType):
        return StructType([
            StructField(f.name, _texts(f.dataType), f.nullable, f.metadata) for f in dtype.fields
        ])
    return dtype


def sql_name(name: str) -> str:
    """The top-level column ``name`` as a SQL identifier (dots and backticks taken
    literally)."""
    return "`" + name.replace("`", "``") + "`"


def described_row(names: Sequence[str]) -> Column:
    """The row's top-level columns ``names`` as JSON, then the Spark input partition it came
    from, for an error message. Nondeterministic on purpose (``spark_partition_id()``): Spark's
    constraint propagation infers no constraint from an expression holding it. A deterministic
    expression naming every column, followed in a projection by renames of those columns (as
    Spark renames a micro-batch's relation, and flinkwin a graph's sources), has its constraint
    copied once per renamed column: 2^n constraints for n columns, out of the default driver
    heap at 16 to 20 columns (``bench/probes/probe_wide_graph_memory.py``)."""
    fields = ", ".join(sql_name(c) for c in names)
    return F.expr(
        f"concat(to_json(struct({fields}), map('ignoreNullFields', 'false')), "
        "' (Spark input partition ', spark_partition_id(), ')')"
    )


def quoted(name: str) -> Column:
    """The top-level column ``name`` (dots and backticks taken literally). Made from SQL text:
    ``F.col`` records the Python call site for Spark's error context, about 19 py4j calls a
    column against 3."""
    return F.expr(sql_name(name))


# ------------------------------------------------------------------------ Spark side
def to_wire(column: Column, dtype: DataType) -> Column:
    """``column`` with every timestamp in it as epoch microseconds (see module docstring)."""
    if isinstance(dtype, _TIMESTAMPS):
        return F.coalesce(F.unix_micros(column), F.lit(MIN_LONG))
    if isinstance(dtype, DayTimeIntervalType):  # exact over the type's whole range
        seconds = column.cast("interval second").cast("decimal(38,6)")
        return (seconds * F.lit(1_000_000)).cast("bigint")
    return _nested_to_wire(column, dtype)


def _nested_to_wire(column: Column, dtype: DataType) -> Column:
    if isinstance(dtype, _TIMESTAMPS):
        return F.unix_micros(column)
    if isinstance(dtype, (FloatType, DoubleType)):
        return column.cast("string")
    if not _changed(dtype):
        return column
    if isinstance(dtype, ArrayType):
        element = dtype.elementType
        return F.transform(column, lambda x: _nested_to_wire(x, element))
    if isinstance(dtype, MapType):
        key_type, value_type = dtype.keyType, dtype.valueType
        if _changed(key_type):
            column = F.transform_keys(column, lambda k, _: _nested_to_wire(k, key_type))
        if _changed(value_type):
            column = F.transform_values(column, lambda _, v: _nested_to_wire(v, value_type))
        return column
    assert isinstance(dtype, StructType)
    fields = [
        _nested_to_wire(column.getField(f.name), f.dataType).alias(f.name) for f in dtype.fields
    ]
    return F.when(column.isNull(), F.lit(None)).otherwise(F.struct(*fields))


def with_checked_timestamps(df: DataFrame, schema: StructType) -> DataFrame:
    """``df``, whose public columns are ``schema``'s, with each top-level timestamp failing
    the query, naming the column and its row, when it holds exactly ``MIN_LONG``
    microseconds: the wire's null marker (about 292,000 years before 1970, outside what a
    Python ``datetime`` holds), which would reach the stage as a null."""
    checked = {}
    for f in schema.fields:
        if isinstance(f.dataType, _TIMESTAMPS):
            message = F.concat(
                F.lit(f"column {f.name!r} holds the {f.dataType.simpleString().upper()} value "
                      f"of {MIN_LONG} microseconds since the epoch (about 292,000 years before "
                      "1970), which a Python datetime cannot hold (years 1 to 9999) and which "
                      "flinkwin would otherwise take for a null, in row "),
                described_row(schema.fieldNames()),
            )
            column = quoted(f.name)
            checked[f.name] = F.when(
                F.unix_micros(column) == F.lit(MIN_LONG), F.raise_error(message)
            ).otherwise(column)
    return df.withColumns(checked) if checked else df


# ----------------------------------------------------------------------- worker side
def from_wire(values: np.ndarray, dtype: DataType, time_zone: str) -> Any:
    """The column's values rebuilt from the wire (see module docstring): a pandas datetime
    array for a top-level timestamp, an object array for a nested type."""
    if isinstance(dtype, _TIMESTAMPS):
        micros = np.asarray(values).astype(np.int64, copy=False)
        wall = micros.astype("datetime64[us]")
        nulls = micros == MIN_LONG
        if nulls.any():
            wall[nulls] = np.datetime64("NaT")
        if isinstance(dtype, TimestampNTZType):
            return wall
        return pd.DatetimeIndex(wall).tz_localize("UTC").tz_convert(time_zone).array
    if isinstance(dtype, DayTimeIntervalType):  # int64 micros, or ints and None (nulls)
        array = np.asarray(values)
        if array.dtype == object:
            nulls = np.array([v is None for v in array.tolist()], dtype=bool)
            array = np.where(nulls, 0, array).astype(np.int64)
        else:
            array, nulls = array.astype(np.int64, copy=False), None
        if (array == MIN_LONG).any() and (nulls is None or (array[~nulls] == MIN_LONG).any()):
            # Spark's least interval, -2^63 us, is numpy's NaT: the values as timedeltas
            out = np.empty(len(array), dtype=object)
            out[:] = [datetime.timedelta(microseconds=v) for v in array.tolist()]
            if nulls is not None:
                out[nulls] = None
            return out
        deltas = array.astype("timedelta64[us]")
        if nulls is not None:
            deltas[nulls] = np.timedelta64("NaT")
        return deltas
    decode = decoder(dtype, time_zone)
    out = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        out[i] = decode(value)
    return out


def decoder(dtype: DataType, time_zone: str) -> Callable[[Any], Any]:
    """A function rebuilding one nested value of ``dtype`` from the wire (Python objects:
    lists, dicts; timestamps as datetimes)."""
    if isinstance(dtype, TimestampType):
        return lambda v: None if v is None else instant(int(v), time_zone)
    if isinstance(dtype, TimestampNTZType):
        return lambda v: None if v is None else _EPOCH + datetime.timedelta(microseconds=int(v))
    if isinstance(dtype, DoubleType):
        return lambda v: None if v is None else float(v)
    if isinstance(dtype, FloatType):
        return lambda v: None if v is None else float(np.float32(v))
    if not _changed(dtype):
        return lambda v: v
    if isinstance(dtype, ArrayType):
        element = decoder(dtype.elementType, time_zone)
        return lambda v: None if v is None else [element(x) for x in v]
    if isinstance(dtype, MapType):
        key, value = decoder(dtype.keyType, time_zone), decoder(dtype.valueType, time_zone)
        return lambda v: None if v is None else {key(a): value(b) for a, b in _items(v)}
    assert isinstance(dtype, StructType)
    fields = [(f.name, decoder(f.dataType, time_zone)) for f in dtype.fields]
    return lambda v: None if v is None else {n: d(_field(v, n)) for n, d in fields}


def instant(micros: int, time_zone: str) -> datetime.datetime:
    """Epoch microseconds as an aware datetime in ``time_zone``; ``MIN_LONG`` (pandas' ``NaT``,
    outside what a ``datetime`` holds) fails naming the value."""
    if micros == MIN_LONG:
        raise ValueError(
            f"a TIMESTAMP of {MIN_LONG} microseconds since the epoch (about 292,000 years "
            "before 1970) inside an array, map or struct: a Python datetime cannot hold it "
            "(years 1 to 9999)"
        )
    return pd.Timestamp(micros, unit="us", tz="UTC").tz_convert(time_zone).to_pydatetime()


def _items(value: Any) -> Any:
    return value.items() if isinstance(value, Mapping) else value


def _field(value: Any, name: str) -> Any:
    if isinstance(value, Mapping):
        return value[name]
    return getattr(value, name)


__all__ = [
    "UTC_ZONES",
    "decoder",
    "from_wire",
    "has_timestamps",
    "instant",
    "on_wire",
    "quoted",
    "sql_name",
    "text_floats",
    "to_wire",
]
