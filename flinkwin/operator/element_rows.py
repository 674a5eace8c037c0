"""A batch's rows as the elements user functions see: Rows (or tuples, or a stream's bare
values) built column by column, timestamps as ``datetime.datetime``."""

from __future__ import annotations

import datetime
import operator
import pickle
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from flinkwin.record import element_class

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator


def column_values(column: pd.Series, rows: np.ndarray | None = None) -> list[Any]:
    """A column as Python values (with ``rows``, the values at these positions); timestamps
    become ``datetime.datetime`` and durations ``datetime.timedelta`` (what a
    ``pyspark.sql.Row`` holds) rather than ``pandas.Timestamp``/``Timedelta``, a null None."""
    if column.dtype.kind == "M":
        return _datetimes(column.array if rows is None else column.array.take(rows))
    if column.dtype.kind == "m":
        return _timedeltas(column.to_numpy() if rows is None else column.to_numpy()[rows])
    if rows is None:
        return column.tolist()
    if isinstance(column.dtype, np.dtype) and column.dtype.kind in "biufO":
        # (numpy's tolist gives what pandas' gives for these; a timedelta64[ns] would become
        # an int of nanoseconds)
        return cast(list[Any], column.to_numpy()[rows].tolist())
    return column.take(rows).tolist()


_UTC_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
#: datetime's range (years 1 to 9999) in microseconds since the epoch
_MICROS_RANGE = (-62_135_596_800_000_000, 253_402_300_799_999_999)
_PER_MICRO = {"s": 1_000_000, "ms": 1_000, "us": 1}


def _datetimes(array: Any) -> list[Any]:
    """``list(array.to_pydatetime())`` for a pandas datetime array, a null as None (what a
    ``pyspark.sql.Row`` holds; pandas gives ``NaT``, which ``is None`` takes for a value);
    naive or in UTC, the same objects (equal, ``fold`` 0, the array's own ``tzinfo``) are
    built by numpy (naive) or as the UTC epoch plus numpy-built timedeltas, a C call per
    value."""
    nulls = np.asarray(array.isna())
    if nulls.any():
        values = np.full(len(array), None, dtype=object)
        kept = np.flatnonzero(~nulls)
        values[kept] = _datetimes(array.take(kept)) if len(kept) else []
        return cast(list[Any], values.tolist())
    tz = array.tz
    if tz is None or tz is datetime.timezone.utc:
        ints = array.asi8
        unit = array.unit
        if unit == "ns" and len(ints) and not (ints % 1000).any():
            ints, unit = ints // 1000, "us"
        per = _PER_MICRO.get(unit)
        if per is not None and len(ints):
            low, high = _MICROS_RANGE
            if low // per <= int(ints.min()) and int(ints.max()) <= high // per:
                # (NaT is the smallest int64, below the range)
                if tz is None:
                    return cast(list[Any], ints.astype(f"datetime64[{unit}]").tolist())
                deltas = ints.astype(f"timedelta64[{unit}]").tolist()
                return list(map(operator.add, repeat(_UTC_EPOCH, len(deltas)), deltas))
    return list(array.to_pydatetime())


def _timedeltas(values: np.ndarray) -> list[Any]:
    """A ``timedelta64`` array as ``datetime.timedelta`` values, ``NaT`` as None (what a
    ``pyspark.sql.Row`` holds; pandas gives ``Timedelta`` and ``NaT``), exact to the
    microsecond over the whole range of Spark's day-time intervals."""
    micros = values.astype("timedelta64[us]").astype(np.int64)
    nulls = np.isnat(values)
    return [None if null else datetime.timedelta(microseconds=m)
            for m, null in zip(micros.tolist(), nulls.tolist())]


def _records(
    frame: pd.DataFrame, tuple_elements: bool = False, pickled: bool = False,
    atomic: bool = False, converters: Mapping[str, Callable[[Any], Any]] | None = None,
    rows: np.ndarray | None = None, columns: Sequence[str] | None = None,
) -> list[Any]:
    """The frame's rows (with ``rows``, those at these positions, in this order) as elements
    (tuples for a ``Types.TUPLE`` stream, else Rows) of the frame's ``columns`` (default:
    all); with
    ``pickled``, the frame's one column holds pickled values (a stream without a declared
    type) and the elements are those values; with ``atomic``, the frame's one column holds
    the values of an atomic type (``Types.STRING()``, ``Types.MAP(...)``...) and the elements
    are those values.
    ``converters`` shape the values of nested columns (see ``flinkwin.spark.nested``)."""
    names = tuple(frame.columns if columns is None else columns)
    if pickled or atomic:  # one column
        values = column_values(frame.iloc[:, 0] if columns is None else frame[names[0]], rows)
        if pickled:
            return [None if v is None else pickle.loads(v) for v in values]
        return _shaped(values, names[0], converters)
    klass = element_class(names, tuple_elements)
    data = [_shaped(column_values(frame[c], rows), c, converters) for c in names]
    count = len(frame) if rows is None else len(rows)
    return list(map(tuple.__new__, repeat(klass, count), zip(*data)))


def _shaped(
    values: list[Any], column: str, converters: Mapping[str, Callable[[Any], Any]] | None
) -> list[Any]:
    convert = converters.get(column) if converters else None
    return values if convert is None else [convert(v) for v in values]


def op_records(
    op: WindowOperator, frame: pd.DataFrame, rows: np.ndarray | None = None,
    columns: Sequence[str] | None = None,
) -> list[Any]:
    """The elements of ``frame`` (with ``rows``, those at these positions; with ``columns``,
    of these columns) in ``op``'s stream shape."""
    return _records(
        frame, op.tuple_elements, op.pickled_elements, op.atomic_elements, op.element_converters,
        rows, columns,
    )
