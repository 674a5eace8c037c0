"""A window function's outputs as Arrow columns of the declared output schema, validated.

A window function's outputs are Python values; Spark needs columns of a declared type. Each
output value becomes one row:

- a ``Row``, ``pyspark.sql.Row`` or ``dict`` is matched to the schema by field name (every
  schema field must be present, no extra fields); under Flink's tuple field names ``f0, f1, ...``
  (``Types.ROW([...])``/``Types.TUPLE([...])``) a row of the same arity is matched by position,
  as PyFlink does;
- a plain ``tuple``/``list`` is matched by position (same length as the schema);
- any other value (a scalar, or a list for a single array field) fills a one-field schema;
- under the one ``value`` field of a whole-value type (a basic type, ``Types.MAP``,
  ``Types.LIST`` or an array: :func:`~flinkwin.spark.schema.is_value_schema`), every output is
  that field's value as it is: a ``dict`` for ``Types.MAP`` (not a record matched by field
  names), a ``list`` for ``Types.LIST``, a ``str`` for ``Types.STRING()``;
- under the *pickled* schema (see :mod:`flinkwin.spark.schema`), every value is pickled whole
  into one ``value binary`` column; a ``PICKLED_BYTE_ARRAY`` field of a row type is a
  ``binary`` column holding that field's value pickled.

Values are converted with Arrow's checked conversion plus a check that no float with a
fractional part lands in an integer column; anything else raises :class:`SchemaMismatchError`
naming the field, the declared type and the offending value.

Timestamps (top-level or nested) are written exactly: for a ``TIMESTAMP`` field an aware
datetime is its instant, and a naive one is wall time in the Spark session time zone, as Spark
reads it, except that a wall time the zone skips or repeats (a daylight-saving change) is an
error rather than a guess, and that under a field declared ``Types.SQL_TIMESTAMP()`` (marked
in the schema) a naive datetime is UTC wall time, as PyFlink's ``TimestampCoderImpl`` encodes
it (the values such a field hands to functions are naive UTC: :mod:`flinkwin.spark.nested`);
for a ``TIMESTAMP_NTZ`` field a naive datetime is kept as it is and an aware one becomes its
wall time in the session zone (Spark's cast).
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark import cloudpickle
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import (
    ArrayType,
    ByteType,
    DataType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from .schema import is_pickled, is_pickled_field, is_utc_wall_clock_field, is_value_schema
from .timestamps import UTC_ZONES, has_timestamps

_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)


#: values ``RowEncoder.to_row`` takes as a one-field schema's value
_PLAIN_SCALARS = frozenset({int, float, str, bool, type(None)})


_NULLABLE_PANDAS = {
    pa.int8(): pd.Int8Dtype(),
    pa.int16(): pd.Int16Dtype(),
    pa.int32(): pd.Int32Dtype(),
    pa.int64(): pd.Int64Dtype(),
    pa.bool_(): pd.BooleanDtype(),
    pa.float32(): pd.Float32Dtype(),
    pa.float64(): pd.Float64Dtype(),
}


class SchemaMismatchError(TypeError):
    """A window function produced a value that does not fit the declared output schema."""


class RowEncoder:
    """Turns output values into Arrow arrays for one schema (see module docstring).

    Picklable; ``what`` names the output in error messages (e.g. ``"reduce output"``).
    """

    def __init__(self, schema: StructType, session_time_zone: str, what: str) -> None:
        self.schema = schema
        self.names = tuple(schema.fieldNames())
        self.time_zone = session_time_zone
        self.what = what
        self.arrow_types = [
            to_arrow_type(f.dataType, timezone="UTC") for f in schema.fields
        ]
        self._single_scalar = len(schema.fields) == 1
        # each output is the one column's value (pickled, or of a whole-value type)
        self._whole = is_pickled(schema) or is_value_schema(schema)
        self._pickled_columns = {
            i for i, f in enumerate(schema.fields) if is_pickled_field(f)
        }
        self._utc_columns = {
            i for i, f in enumerate(schema.fields) if is_utc_wall_clock_field(f)
        }
        # Flink's tuple field names (Types.ROW/TUPLE): rows are matched by position, as PyFlink
        # encodes them whatever their field names
        self._positional = self.names == tuple(f"f{i}" for i in range(len(self.names)))
        self._index_cache: dict[type, tuple[int, ...] | None] = {}

    # ----------------------------------------------------------------- rows
    def _describe(self) -> str:
        return f"{self.what} schema <{self.schema.simpleString()[7:-1]}>"

    def _mapping_row(self, value: Mapping[str, Any]) -> tuple[Any, ...]:
        missing = [n for n in self.names if n not in value]
        extra = [k for k in value if k not in self.names]
        if missing or extra:
            detail = []
            if missing:
                detail.append(f"missing field(s) {missing}")
            if extra:
                detail.append(f"unexpected field(s) {extra}")
            raise SchemaMismatchError(
                f"{self._describe()} does not match output {value!r}: {', '.join(detail)}"
            )
        return tuple(value[n] for n in self.names)

    def _named_row(self, value: tuple[Any, ...]) -> tuple[Any, ...]:
        klass = type(value)
        try:
            index = self._index_cache[klass]
        except KeyError:
            fields = tuple(value.__fields__)  # type: ignore[attr-defined]
            if fields == self.names or (self._positional and len(fields) == len(self.names)):
                index = None
            else:
                self._mapping_row(dict(zip(fields, value)))  # raises with the field names
                index = tuple(fields.index(n) for n in self.names)
            self._index_cache[klass] = index
        if index is None:
            return value
        return tuple(value[i] for i in index)

    def to_row(self, value: Any) -> tuple[Any, ...]:
        """One output value as a tuple in schema order."""
        if self._whole:
            return (value,)
        if isinstance(value, tuple) and getattr(value, "__fields__", None) is not None:
            return self._named_row(value)
        if isinstance(value, Mapping):
            return self._mapping_row(value)
        positional = isinstance(value, tuple) or (
            isinstance(value, list)
            and not (self._single_scalar and isinstance(self.schema.fields[0].dataType, ArrayType))
        )
        if positional:
            if len(value) != len(self.names):
                raise SchemaMismatchError(
                    f"{self._describe()} has {len(self.names)} field(s) but the output "
                    f"{value!r} has {len(value)} value(s)"
                )
            return tuple(value)
        if self._single_scalar:
            return (value,)
        raise SchemaMismatchError(
            f"{self._describe()} has {len(self.names)} fields; output {value!r} "
            f"({type(value).__name__}) is neither a record, a dict nor a tuple"
        )

    # --------------------------------------------------------------- arrays
    def arrays(self, values: Sequence[Any]) -> list[pa.Array]:
        """One Arrow array per schema field for ``values`` (one output row each)."""
        types = set(map(type, values))
        if self._single_scalar and (self._whole or types <= _PLAIN_SCALARS):
            # each value is its row's one field (what to_row does, without a call per value)
            return [self._array(0, list(values), [(v,) for v in values])]
        rows: list[tuple[Any, ...]]
        if types == {tuple} and not self._whole and set(map(len, values)) == {len(self.names)}:
            rows = list(values)  # plain tuples of the schema's width: to_row's tuple(value)
        else:
            rows = [self.to_row(v) for v in values]
        columns: list[Sequence[Any]] = (
            list(zip(*rows)) if rows else [() for _ in self.names]
        )
        return [self._array(i, col, rows) for i, col in enumerate(columns)]

    @functools.cached_property
    def empty_arrays(self) -> list[pa.Array]:
        """``arrays([])``, built once (Arrow arrays are immutable)."""
        return self.arrays([])

    def frame_arrays(self, frame: pd.DataFrame) -> list[pa.Array]:
        """One Arrow array per schema field from the same-named columns of ``frame``, whose
        values already have the field types (rows the stage received, timestamps rebuilt as
        :mod:`flinkwin.spark.timestamps` describes)."""
        arrays = []
        for i, (name, field) in enumerate(zip(self.names, self.schema.fields)):
            column = frame[name]
            try:
                if isinstance(field.dataType, (TimestampType, TimestampNTZType)):
                    arrays.append(self._timestamp_array(field.dataType, column))
                elif has_timestamps(field.dataType):
                    arrays.append(self._convert(i, column.tolist()))
                elif column.dtype == object or pa.types.is_floating(self.arrow_types[i]):
                    # Python values (None is null) and floats: NaN, also nested, is not null
                    arrays.append(pa.array(
                        column.to_numpy(), type=self.arrow_types[i], from_pandas=False
                    ))
                else:
                    arrays.append(
                        pa.Array.from_pandas(column, type=self.arrow_types[i], safe=False)
                    )
            except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
                raise SchemaMismatchError(
                    f"{self._describe()}: field {name!r} ({field.dataType.simpleString()}) "
                    f"cannot hold the values produced: {exc}"
                ) from None
        return arrays

    def _timestamp_array(self, dtype: DataType, column: pd.Series) -> pa.Array:
        if column.dtype.kind == "M":
            aware = getattr(column.dtype, "tz", None) is not None
            if aware == isinstance(dtype, TimestampType):
                return pa.Array.from_pandas(column, type=self._arrow_of(dtype), safe=False)
        return self._timestamps(dtype, column.tolist())

    def _array(self, i: int, column: Sequence[Any], rows: list[tuple[Any, ...]]) -> pa.Array:
        try:
            return self._convert(i, column)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
            raise self._offending(i, column, rows, exc) from None

    def _convert(self, i: int, column: Sequence[Any]) -> pa.Array:
        dtype = self.schema.fields[i].dataType
        arrow_type = self.arrow_types[i]
        if i in self._pickled_columns:
            column = [None if v is None else cloudpickle.dumps(v) for v in column]
        if isinstance(dtype, (TimestampType, TimestampNTZType)):
            return self._timestamps(dtype, column, i in self._utc_columns)
        if has_timestamps(dtype):
            convert = self._nested_converter(dtype)
            return pa.array([convert(v) for v in column], type=arrow_type, safe=False)
        if isinstance(dtype, _INTEGRAL):
            self._check_integral(column)
        # NaN is a float value (also inside nested values), never null: only None is null
        return pa.array(column, type=arrow_type, from_pandas=False)

    def _check_integral(self, column: Sequence[Any]) -> None:
        if not any(issubclass(t, float) for t in set(map(type, column))):
            return
        for v in column:
            if isinstance(v, float) and not v.is_integer():
                raise ValueError(
                    f"float {v!r} would be truncated" if v == v
                    else "NaN is not an integer (nor null: return None for a null)"
                )

    @staticmethod
    def _arrow_of(dtype: DataType) -> pa.DataType:
        return pa.timestamp("us", tz="UTC" if isinstance(dtype, TimestampType) else None)

    def _timestamps(
        self, dtype: DataType, column: Sequence[Any], naive_utc: bool = False
    ) -> pa.Array:
        """Datetimes as an exact Arrow timestamp array for ``dtype`` (see module docstring);
        ``naive_utc``: a naive one is UTC wall time (a ``Types.SQL_TIMESTAMP()`` field)."""
        values = list(column)
        n = len(values)
        nulls = np.zeros(n, dtype=bool)
        aware = np.zeros(n, dtype=bool)
        for j, v in enumerate(values):
            if v is None or v is pd.NaT or (isinstance(v, np.datetime64) and np.isnat(v)):
                nulls[j] = True
            elif isinstance(v, datetime.datetime):
                aware[j] = v.tzinfo is not None
            elif not isinstance(v, np.datetime64):
                raise TypeError(f"expected a datetime, got {type(v).__name__}")
        micros = np.zeros(n, dtype=np.int64)
        naive = ~nulls & ~aware
        if aware.any():
            instants = pa.array(
                [values[j] for j in np.flatnonzero(aware)], type=pa.timestamp("us", tz="UTC"),
                safe=False,
            )
            utc = instants.cast(pa.int64()).to_numpy()
            if isinstance(dtype, TimestampNTZType):  # the wall time in the session zone
                utc = self._wall_micros(utc)
            micros[aware] = utc
        if naive.any():
            wall = np.array([values[j] for j in np.flatnonzero(naive)], dtype="datetime64[us]")
            if isinstance(dtype, TimestampType) and not naive_utc:
                micros[naive] = self._instant_micros(wall)
            else:
                micros[naive] = wall.astype(np.int64)
        return pa.array(micros, mask=nulls).cast(self._arrow_of(dtype))

    def _instant_micros(self, wall: np.ndarray) -> np.ndarray:
        """Naive wall times in the session zone as epoch microseconds; a wall time the zone
        skips or repeats raises (naming it) instead of being guessed."""
        if self.time_zone in UTC_ZONES:
            return wall.astype(np.int64)
        try:
            local = pd.DatetimeIndex(wall).tz_localize(
                self.time_zone, ambiguous="raise", nonexistent="raise"
            )
        except Exception as exc:  # noqa: BLE001 (pytz and pandas raise several kinds)
            raise ValueError(
                f"a naive datetime names no single instant in the session time zone "
                f"{self.time_zone!r}, which skips or repeats it ({exc}): return a time-zone "
                "aware datetime for a timestamp field"
            ) from None
        return local.tz_convert("UTC").tz_localize(None).to_numpy().astype(
            "datetime64[us]"
        ).astype(np.int64)

    def _wall_micros(self, utc: np.ndarray) -> np.ndarray:
        if self.time_zone in UTC_ZONES:
            return utc
        index = pd.DatetimeIndex(utc.astype("datetime64[us]")).tz_localize("UTC")
        local = index.tz_convert(self.time_zone).tz_localize(None)
        return local.to_numpy().astype("datetime64[us]").astype(np.int64)

    def _nested_converter(self, dtype: DataType) -> Any:
        """A function preparing one nested value for Arrow: naive timestamps read in the
        session zone (aware ones kept), aware wall times for ``TIMESTAMP_NTZ`` made naive."""
        if isinstance(dtype, (TimestampType, TimestampNTZType)):
            def convert(v: Any) -> Any:
                if v is None or v is pd.NaT:
                    return None
                array = self._timestamps(dtype, [v])
                return array[0].as_py()
            return convert
        if not has_timestamps(dtype):
            return lambda v: v
        if isinstance(dtype, ArrayType):
            element = self._nested_converter(dtype.elementType)
            return lambda v: None if v is None else [element(x) for x in v]
        if isinstance(dtype, MapType):
            key = self._nested_converter(dtype.keyType)
            value = self._nested_converter(dtype.valueType)
            return lambda v: None if v is None else [
                (key(a), value(b)) for a, b in (v.items() if isinstance(v, Mapping) else v)
            ]
        assert isinstance(dtype, StructType)
        names = dtype.fieldNames()
        fields = [self._nested_converter(f.dataType) for f in dtype.fields]

        def struct(v: Any) -> Any:
            if v is None:
                return None
            if isinstance(v, Mapping):
                items = [v.get(n) for n in names]
            elif getattr(v, "__fields__", None) is not None:
                items = [getattr(v, n) for n in names]
            else:
                items = list(v)
            return {n: f(x) for n, f, x in zip(names, fields, items)}
        return struct

    def _offending(
        self, i: int, column: Sequence[Any], rows: list[tuple[Any, ...]], exc: Exception
    ) -> SchemaMismatchError:
        """The error naming the first value of field ``i`` that does not convert."""
        field = self.schema.fields[i]
        declared = field.dataType.simpleString()
        for j, v in enumerate(column):
            try:
                self._convert(i, [v])
            except Exception as inner:  # noqa: BLE001 (any conversion failure names the value)
                return SchemaMismatchError(
                    f"{self._describe()}: field {field.name!r} is declared {declared} but got "
                    f"{v!r} ({type(v).__name__}) in output row {rows[j]!r}: {inner}"
                )
        return SchemaMismatchError(
            f"{self._describe()}: field {field.name!r} ({declared}) cannot hold the values "
            f"produced: {exc}"
        )


def arrow_to_pandas(table: pa.Table, tail: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """A pandas frame Spark converts back losslessly: nullable integer/boolean/float dtypes (no
    float round trip for big longs with nulls; a NaN stays NaN and a null null, as PySpark takes
    these columns' Arrow arrays as they are), nested values as Python dicts/lists.

    Integer, boolean, float, string and timestamp columns are built here from their Arrow
    values and null masks, exactly as Arrow's own conversion builds them (a stage's output
    frame is small and Arrow's per-column pandas conversion costs ~40 µs a column whatever
    its size); the other columns take Arrow's conversion. ``tail``: pandas arrays of the
    table's length appended as the last columns as they are."""
    names = table.column_names
    tail = tail or {}
    if len(set(names) | set(tail)) != len(names) + len(tail):
        frame = _arrow_to_pandas(table)
        return pd.concat([frame, pd.DataFrame(tail, index=frame.index)], axis=1) if tail else frame
    columns: dict[str, Any] = {}
    rest: list[str] = []
    for name, column in zip(names, table.columns):
        converted = _direct(column)
        if converted is None:
            rest.append(name)
        columns[name] = converted
    if rest:
        converted_rest = _arrow_to_pandas(table.select(rest))
        for name in rest:
            columns[name] = converted_rest[name]._values
    columns.update(tail)
    return pd.DataFrame._from_arrays(  # the arrays are already the columns' final form
        list(columns.values()), columns=list(columns), index=pd.RangeIndex(table.num_rows),
        verify_integrity=False,
    )


def _arrow_to_pandas(table: pa.Table) -> pd.DataFrame:
    """Arrow's own conversion, with the nullable dtypes and nested values as Python values."""
    # (one thread: a stage's frames are small, a thread pool's hand-offs cost more than they save)
    frame = table.to_pandas(types_mapper=_NULLABLE_PANDAS.get, use_threads=False)
    for name, column in zip(table.column_names, table.columns):
        if pa.types.is_nested(column.type):
            frame[name] = pd.Series(
                column.to_pylist(maps_as_pydicts="strict"), dtype=object, index=frame.index
            )
    return frame


def _direct(column: pa.ChunkedArray) -> Any:
    """``column`` as the pandas array Arrow's conversion gives (see ``arrow_to_pandas``), or
    None for a type converted by Arrow."""
    kind = column.type
    mapped = _NULLABLE_PANDAS.get(kind)
    if mapped is not None:
        if column.null_count:
            nulls = column.is_null().to_numpy(zero_copy_only=False)
            column = column.fill_null(False if kind == pa.bool_() else 0)
        else:
            nulls = np.zeros(len(column), dtype=bool)
        values = np.array(column.to_numpy(zero_copy_only=False), copy=True)  # writable
        return mapped.construct_array_type()(values, nulls)
    if kind == pa.string():
        return column.to_numpy(zero_copy_only=False)  # str objects, None for nulls
    if pa.types.is_timestamp(kind) and kind.tz in (None, "UTC"):
        values = column.to_numpy(zero_copy_only=False)  # datetime64[unit], NaT for nulls
        if kind.tz is None:
            return values
        return pd.arrays.DatetimeArray._from_sequence(values).tz_localize(_ARROW_UTC)
    return None


#: The time zone object Arrow's pandas conversion gives a ``timestamp(tz="UTC")`` column.
_ARROW_UTC = pa.array([], pa.timestamp("us", tz="UTC")).to_pandas().dtype.tz


__all__ = ["RowEncoder", "SchemaMismatchError", "arrow_to_pandas"]
