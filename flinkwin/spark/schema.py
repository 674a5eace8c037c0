"""Output schemas: parsing and inference, pickled and whole-value columns, input columns Python
cannot carry.

PyFlink type information, DDL strings and ``StructType`` become the declared schema
(:func:`parse_schema`); the *pickled* schema (PyFlink's ``Types.PICKLED_BYTE_ARRAY()``, and what
a window function without a declared output type gets, as in PyFlink) is one ``value binary``
column of values pickled whole (:func:`is_pickled`, :func:`unpickle`); a whole-value type (a
basic type, ``Types.MAP``, ``Types.LIST`` or an array) is one ``value`` column
(:func:`is_value_schema`). How outputs are converted to those columns is
:mod:`flinkwin.spark.row_encoder`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyspark import cloudpickle
from pyspark.errors import PySparkTypeError
from pyspark.sql.pandas.types import to_arrow_type
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    MapType,
    StructField,
    StructType,
    VariantType,
)

from flinkwin.types import TypeInformation

from .timestamps import UTC_ZONES, quoted

_TYPE_INFO_DDL = {
    "STRING": "string", "BYTE": "tinyint", "BOOLEAN": "boolean", "SHORT": "smallint",
    "INT": "int", "LONG": "bigint", "FLOAT": "float", "DOUBLE": "double", "CHAR": "string",
    "BIG_INT": "decimal(38,0)", "BIG_DEC": "decimal(38,18)", "INSTANT": "timestamp",
    "SQL_DATE": "date", "SQL_TIMESTAMP": "timestamp", "PICKLED_BYTE_ARRAY": "binary",
}


#: The column metadata marking a column of pickled Python values.
PICKLED_METADATA = {"flinkwin.pickled": True}
#: The column metadata marking the one column of a whole-value type's stream (see
#: :func:`is_value_schema`).
VALUE_METADATA = {"flinkwin.value": True}
#: The column metadata marking a ``Types.SQL_TIMESTAMP()`` column: its naive datetimes are UTC
#: wall-clock times, as PyFlink's ``TimestampCoderImpl`` encodes them.
UTC_WALL_CLOCK_METADATA = {"flinkwin.utc_wall_clock": True}


def is_utc_wall_clock_field(field: StructField) -> bool:
    """True for a ``Types.SQL_TIMESTAMP()`` column (see :data:`UTC_WALL_CLOCK_METADATA`)."""
    return bool(field.metadata.get("flinkwin.utc_wall_clock"))


def check_carried(schema: StructType, what: str) -> None:
    """A clear error naming the column when a column type cannot travel through the window
    stage: its rows go to Python workers and back as Arrow, which has no year-month or
    calendar intervals, and a variant would reach the functions as raw bytes."""
    for f in schema.fields:
        problem = _uncarried(f.dataType)
        if problem is not None:
            raise TypeError(
                f"{what}: column {f.name!r} has type {f.dataType.simpleString()}, which "
                f"flinkwin cannot carry ({problem}); convert it before the window, e.g. "
                f"{_REMEDY.get(problem, 'cast it to a string')}"
            )


_VARIANT = "a variant reaches Python as its raw binary encoding"
_REMEDY = {_VARIANT: "to_json(column) or variant_get(column, path, type)"}


def _uncarried(dtype: DataType) -> str | None:
    if isinstance(dtype, VariantType):
        return _VARIANT
    if isinstance(dtype, (ArrayType, MapType, StructType)):
        children = (
            [dtype.elementType] if isinstance(dtype, ArrayType)
            else [dtype.keyType, dtype.valueType] if isinstance(dtype, MapType)
            else [f.dataType for f in dtype.fields]
        )
        return next((p for c in children if (p := _uncarried(c)) is not None), None)
    try:
        to_arrow_type(dtype, timezone="UTC")
    except PySparkTypeError:  # UNSUPPORTED_DATA_TYPE_FOR_ARROW_CONVERSION
        return f"Spark has no Arrow conversion for {dtype.simpleString()}"
    return None


def pickled_schema() -> StructType:
    """One ``value binary`` column holding each output pickled (PyFlink's
    ``PICKLED_BYTE_ARRAY``): read it back with :func:`unpickle`."""
    return StructType([StructField("value", BinaryType(), True, dict(PICKLED_METADATA))])


def is_pickled(schema: StructType) -> bool:
    """True if ``schema`` is the pickled-values schema (see :func:`pickled_schema`)."""
    return len(schema.fields) == 1 and is_pickled_field(schema.fields[0])


def is_value_schema(schema: StructType) -> bool:
    """True if ``schema`` is the one ``value`` column of a whole-value PyFlink type (a basic
    type, ``Types.MAP``, ``Types.LIST`` or an array): each output is the column's value."""
    return len(schema.fields) == 1 and bool(schema.fields[0].metadata.get("flinkwin.value"))


def value_schema(schema: StructType) -> StructType:
    """``schema``'s one column marked as holding a whole-value type's values (see
    :func:`is_value_schema`)."""
    (field,) = schema.fields
    return StructType([StructField(field.name, field.dataType, True, dict(VALUE_METADATA))])


def is_pickled_field(field: StructField) -> bool:
    """True if ``field`` holds pickled Python values."""
    return bool(field.metadata.get("flinkwin.pickled"))


def without_pickled_marks(df: Any) -> Any:
    """``df`` without the column metadata that marks pickled values: a DataFrame from outside
    (a table, a file, a user's query) is never treated as pickled, whatever its metadata says
    (metadata survives Parquet and Delta, so anyone able to write such a table could otherwise
    run code in the Python workers)."""
    marked = [f.name for f in df.schema.fields if "flinkwin.pickled" in f.metadata]
    if not marked:
        return df
    return df.select([
        quoted(f.name).alias(f.name, metadata={
            k: v for k, v in f.metadata.items() if k != "flinkwin.pickled"
        }) if f.name in marked else quoted(f.name)
        for f in df.schema.fields
    ])


def _mark_pickled(schema: StructType, infos: list[TypeInformation]) -> StructType:
    """``schema`` with the fields whose type information is ``PICKLED_BYTE_ARRAY`` marked
    (:data:`PICKLED_METADATA`), and those of ``SQL_TIMESTAMP`` (:data:`UTC_WALL_CLOCK_METADATA`)."""
    marks = {"PICKLED_BYTE_ARRAY": PICKLED_METADATA, "SQL_TIMESTAMP": UTC_WALL_CLOCK_METADATA}
    return StructType([
        StructField(f.name, f.dataType, f.nullable, {**f.metadata, **marks[info.name]})
        if info.name in marks else f
        for f, info in zip(schema.fields, infos)
    ])


def unpickle(data: bytes | bytearray | None) -> Any:
    """The Python value a pickled output column holds."""
    return None if data is None else cloudpickle.loads(bytes(data))


def _type_info_ddl(info: TypeInformation) -> str:
    name, args = info.name, info.args
    if name in _TYPE_INFO_DDL:
        return _TYPE_INFO_DDL[name]
    if name in ("PRIMITIVE_ARRAY", "LIST") and args and args[0].name == "BYTE":
        return "binary"  # a Java byte[]: PyFlink hands it over as Python bytes
    if name in ("PRIMITIVE_ARRAY", "BASIC_ARRAY", "OBJECT_ARRAY", "LIST") and args:
        return f"array<{_type_info_ddl(args[0])}>"
    if name == "MAP" and len(args) == 2:
        return f"map<{_type_info_ddl(args[0])},{_type_info_ddl(args[1])}>"
    if name in ("ROW", "TUPLE", "ROW_NAMED"):
        return f"struct<{_type_info_fields(info)}>"
    raise ValueError(f"no Spark type for {info!r}")


def _field_types(info: TypeInformation) -> list[TypeInformation]:
    return list(info.args[1] if info.name == "ROW_NAMED" else info.args[0])


def _type_info_fields(info: TypeInformation) -> str:
    if info.name == "ROW_NAMED":
        names, types = info.args
    else:
        types = info.args[0]
        names = [f"f{i}" for i in range(len(types))]
    return ", ".join(f"`{n}` {_type_info_ddl(t)}" for n, t in zip(names, types))


#: the prefix of flinkwin's own column names (a user's are refused: :func:`refuse_reserved_names`)
RESERVED_PREFIX = "_fw_"


def refuse_reserved_names(names: Sequence[str], what: str) -> None:
    """Fail naming the columns of ``names`` that start with ``_fw_`` (in any case, as Spark
    matches column names by default): flinkwin's own columns would hide, replace or be taken
    for them."""
    reserved = [n for n in names if n.lower().startswith(RESERVED_PREFIX)]
    if reserved:
        raise ValueError(
            f"{what}: names starting with {RESERVED_PREFIX!r} are reserved for flinkwin's own "
            f"columns, got {reserved}; rename them (DataFrame.withColumnRenamed, or the "
            f"declared type's field names)"
        )


def parse_schema(value: Any, what: str = "output_schema") -> StructType:
    """The schema of a type a user declared (see :func:`_parse_schema`); names starting with
    ``_fw_`` are refused."""
    schema = _parse_schema(value, what)
    refuse_reserved_names(schema.fieldNames(), what)
    return schema


def _parse_schema(value: Any, what: str) -> StructType:
    """A ``StructType`` from a DDL string (``"user string, total bigint"``), a StructType, or
    PyFlink type information: ``Types.ROW_NAMED(names, types)``; ``Types.ROW``/``Types.TUPLE``
    (fields ``f0, f1, ...`` as Flink names tuple fields); a whole-value type (a basic type,
    ``Types.MAP``, ``Types.LIST``, an array: one field ``value``, see :func:`is_value_schema`)."""
    if isinstance(value, StructType):
        return value
    if isinstance(value, TypeInformation):
        if value.name == "PICKLED_BYTE_ARRAY":
            return pickled_schema()
        try:
            if value.name in ("ROW", "TUPLE", "ROW_NAMED"):
                fields = _parse_schema(_type_info_fields(value), what)
                return _mark_pickled(fields, _field_types(value))
            whole = value_schema(_parse_schema(f"value {_type_info_ddl(value)}", what))
            return _mark_pickled(whole, [value])
        except (ValueError, TypeError, IndexError) as exc:
            raise ValueError(f"{what}: cannot map {value!r} to a Spark schema ({exc})") from None
    if isinstance(value, str):
        try:
            parsed = StructType.fromDDL(value)
        except Exception as exc:  # the JVM parser's error is long; keep the first line
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ValueError(f"{what}: cannot parse DDL {value!r}: {first}") from None
        if not isinstance(parsed, StructType):
            raise ValueError(f"{what} must describe columns (a struct), got {value!r}")
        return parsed
    raise TypeError(
        f"{what} must be a DDL string like 'user string, total bigint', a StructType or "
        "PyFlink type information (Types.ROW_NAMED(...)), "
        f"got {type(value).__name__}: {value!r}"
    )


__all__ = [
    "UTC_ZONES",
    "is_value_schema",
    "parse_schema",
    "value_schema",
]
