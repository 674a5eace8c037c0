"""Which column types Flink's built-in field aggregations accept, checked when they are built.

Flink's ``SumAggregator`` takes the field's class from the stream's type: ``SumFunction`` adds
``Byte``, ``Short``, ``Integer``, ``Long``, ``Float`` and ``Double`` and refuses anything else
when the aggregation is created ("DataStream cannot be summed because the class String does not
support the + operator."). ``min``/``max``/``minBy``/``maxBy`` (``ComparableAggregator``) cast
the field to ``Comparable``: strings, booleans, decimals, dates, timestamps and durations
compare; ``byte[]``, arrays, maps and rows do not (Flink fails at the first two elements with a
``ClassCastException``; here, when the aggregation is built). A sum adds in the field's class:
a ``float`` field's in single precision (``FloatSum``), an ``int``, ``smallint`` or ``tinyint``
field's in Java ``int``, ``short`` or ``byte``, wrapping around there (``IntSum``, ``ShortSum``,
``ByteSum``), or raising under the ``"error"`` overflow policy (:mod:`flinkwin.longs`).
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DayTimeIntervalType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from flinkwin.functions.builtin import BuiltinAggregation

_SUMMABLE = (ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType)
_JAVA_CLASSES: tuple[tuple[type, str], ...] = (
    (ByteType, "Byte"), (ShortType, "Short"), (IntegerType, "Integer"), (LongType, "Long"),
    (FloatType, "Float"), (DoubleType, "Double"), (StringType, "String"),
    (BooleanType, "Boolean"), (DecimalType, "BigDecimal"), (DateType, "Date"),
    (TimestampType, "Timestamp"), (TimestampNTZType, "LocalDateTime"),
    (DayTimeIntervalType, "Duration"), (BinaryType, "byte[]"), (ArrayType, "Object[]"),
    (MapType, "Map"), (StructType, "Row"),
)
_NOT_COMPARABLE = (BinaryType, ArrayType, MapType, StructType)
#: The integral column types narrower than a Java long, by width in bits.
_NARROW = ((ByteType, 8), (ShortType, 16), (IntegerType, 32))


def java_class(dtype: DataType) -> str:
    """The simple name of the Java class Flink would hold a value of ``dtype`` in."""
    return next((name for t, name in _JAVA_CLASSES if isinstance(dtype, t)), "Object")


def check_aggregatable(kind: str, call: str, field: str, dtype: DataType) -> None:
    """Raise ``TypeError`` when the built-in aggregation ``kind`` (``sum``, ``min``, ``max``,
    ``min_by``, ``max_by``; ``call`` as the user wrote it) cannot aggregate a ``dtype`` field."""
    described = f"field {field!r} has type {dtype.simpleString()}"
    if kind == "sum":
        if not isinstance(dtype, _SUMMABLE):
            raise TypeError(
                f"{call}: DataStream cannot be summed because the class {java_class(dtype)} "
                f"does not support the + operator. ({described})"
            )
    elif isinstance(dtype, _NOT_COMPARABLE):
        raise TypeError(
            f"{call}: {described}, whose Java class {java_class(dtype)} is not Comparable: "
            "Flink's ComparableAggregator cannot compare its values (ClassCastException: "
            f"{java_class(dtype)} cannot be cast to java.lang.Comparable)"
        )


def over_field(function: BuiltinAggregation, dtype: DataType) -> BuiltinAggregation:
    """``function`` adding a ``dtype`` field as Flink's ``SumFunction`` adds its class (see
    module docstring)."""
    if isinstance(dtype, FloatType):
        return function.with_single_precision()
    bits = next((b for t, b in _NARROW if isinstance(dtype, t)), 64)
    return function if bits == 64 else function.with_bits(bits)


__all__ = ["check_aggregatable", "java_class", "over_field"]
