"""PyFlink's element shapes and ``print()`` format for a stream's rows.

A stream's rows reach a PyFlink program in the shape its type information gives them
(:func:`element_shaper`, the same conversion as the elements user functions see, see
:mod:`flinkwin.spark.nested`): ``Types.TUPLE`` a Python ``tuple``, ``Types.ROW``/``ROW_NAMED``
a ``Row``, ``Types.MAP`` a ``dict``, ``Types.LIST`` and the arrays a ``list``, a basic type
the value itself, a pickled value (no declared type) the object that was emitted.

:func:`printer` writes them as PyFlink's ``print()`` does (``DataStream._align_output_type``,
then Flink's print sink, which writes Java's ``toString``):

- pickled values (no declared type, ``PICKLED_BYTE_ARRAY``): Python's ``str(value)``;
- a ``Types.ROW``/``ROW_NAMED`` stream: PyFlink maps each Row to
  ``f"{row_kind}[{','.join(str(v) for v in row)}]"`` in Python, e.g. ``+I[a,1]``;
- every other type: Java's ``toString`` of the Java value (:func:`java_string`): a tuple
  ``(a,1)``, a nested Row ``+I[a, 1]``, a map ``{a=1, b=2}`` in ``java.util.HashMap``'s
  iteration order (Flink's ``MapSerializer`` builds a ``HashMap``), a list or array
  ``[1, 2]``, ``null``, ``true``, floats as ``Float``/``Double.toString`` (``1.0E7``), a
  ``java.sql.Timestamp`` as ``2024-01-01 10:00:00.0``, a ``java.sql.Time`` as ``10:00:00``,
  an ``Instant`` as ``2024-01-01T10:00:00Z``.

A stream without a declared type (a DataFrame's own rows) prints its Rows as Java's
``Row.toString`` (``+I[a, 1]``), the format of Flink's Java API (:func:`flink_string`).
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from pyspark.sql.types import ArrayType, DataType, FloatType, MapType, StructType

from flinkwin.record import Record, element_class, is_tuple_element
from flinkwin.spark.nested import element_converters
from flinkwin.spark.schema import is_pickled, unpickle
from flinkwin.types import TypeInformation, is_atomic_type

_RECORDS = ("ROW", "ROW_NAMED")


def element_shaper(schema: StructType, type_info: TypeInformation | None) -> Callable[[Any], Any]:
    """The function turning one collected Spark row (``pyspark.sql.Row``) of ``schema`` into
    the element a PyFlink program sees for ``type_info`` (see module docstring)."""
    if is_pickled(schema):
        return lambda row: unpickle(row[0])
    names = tuple(schema.fieldNames())
    converters = element_converters(schema, type_info)
    shapers = [converters.get(n) for n in names]
    if is_atomic_type(type_info):
        (convert,) = shapers
        return lambda row: row[0] if convert is None else convert(row[0])
    klass = element_class(names, getattr(type_info, "name", None) == "TUPLE")
    new = tuple.__new__

    def shape(row: Any) -> Any:
        return new(klass, [v if c is None else c(v) for c, v in zip(shapers, row)])

    return shape


def printer(type_info: TypeInformation | None, pickled: bool,
            schema: StructType | None = None) -> Callable[[Any], str]:
    """The line ``print()`` writes for an element of a stream of ``type_info`` (see module
    docstring); ``pickled``: the stream carries pickled values (no declared type). Without a
    declared type, ``schema`` (the stream's columns) tells the ``float`` columns, whose values
    Java holds as ``Float`` (``-73.9947``, not the double ``-73.99469757080078``)."""
    if pickled or getattr(type_info, "name", None) == "PICKLED_BYTE_ARRAY":
        return python_string
    if type_info is None:
        info = None if schema is None else _spark_info(schema)
        if info is not None:
            return lambda value: java_string(value, info)
        return flink_string
    if type_info.name in _RECORDS:
        return _pyflink_row
    return lambda value: java_string(value, type_info)


def _spark_info(dtype: DataType) -> TypeInformation | None:
    """The PyFlink type a value of Spark type ``dtype`` prints as, where the Python value alone
    cannot tell: ``FLOAT`` for a ``float`` column (a Python float either way), in structs,
    arrays and maps too; None where the value's own type prints right (no float inside)."""
    if isinstance(dtype, FloatType):
        return TypeInformation("FLOAT")
    if isinstance(dtype, StructType):
        infos = [_spark_info(f.dataType) for f in dtype.fields]
        if all(i is None for i in infos):
            return None
        return TypeInformation("ROW_NAMED", dtype.fieldNames(), infos)
    if isinstance(dtype, ArrayType):
        element = _spark_info(dtype.elementType)
        return None if element is None else TypeInformation("LIST", element)
    if isinstance(dtype, MapType):
        key, value = _spark_info(dtype.keyType), _spark_info(dtype.valueType)
        return None if key is None and value is None else TypeInformation("MAP", key, value)
    return None


def python_string(value: Any) -> str:
    """A pickled value (no declared type) as PyFlink's ``print()`` writes it: ``str(value)``
    (PyFlink maps such values through ``str`` before Flink's print sink)."""
    return value if isinstance(value, str) else str(value)


def _pyflink_row(row: Any) -> str:
    """PyFlink's ``print()`` of a Row-typed stream: the row kind, then the fields' Python
    ``str`` joined by ``,`` (``+I[a,1]``)."""
    if row is None:
        return "null"
    return "+I[" + ",".join(str(v) for v in row) + "]"


def flink_string(value: Any) -> str:
    """``value`` as Flink's Java ``toString`` writes it, its type read from the value itself
    (for values without declared type information, see module docstring)."""
    return java_string(value, None)


def java_string(value: Any, info: TypeInformation | None) -> str:
    """``value`` as Java's ``toString`` of the Java object Flink holds for ``info`` (its
    PyFlink type; None: read the type from the value)."""
    name = None if info is None else info.name
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if name == "FLOAT" and isinstance(value, (float, int)):
        return java_float(float(value))
    if isinstance(value, float):
        return java_double(value)
    if name == "TUPLE" or (name is None and is_tuple_element(value)):
        return "(" + ",".join(
            java_string(v, t) for v, t in zip(value, _field_infos(info, len(value)))
        ) + ")"
    if name in _RECORDS or (
        name is None and (isinstance(value, Record) or hasattr(value, "__fields__"))
    ):
        return "+I[" + ", ".join(
            java_string(v, t) for v, t in zip(value, _field_infos(info, len(value)))
        ) + "]"
    if isinstance(value, (bytes, bytearray)):  # a Java byte[], signed
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in value) + "]"
    if isinstance(value, Mapping):
        key_info, value_info = _arg(info, 0), _arg(info, 1)
        items = (
            f"{java_string(k, key_info)}={java_string(v, value_info)}"
            for k, v in hash_map_order(list(value.items()), key_info)
        )
        return "{" + ", ".join(items) + "}"
    if isinstance(value, (tuple, list)):
        element = _arg(info, 0)
        if name == "TUPLE" or (name is None and isinstance(value, tuple)):
            return "(" + ",".join(java_string(v, None) for v in value) + ")"
        return "[" + ", ".join(java_string(v, element) for v in value) + "]"
    if isinstance(value, datetime.datetime):
        if name == "INSTANT":
            return _java_instant(value)
        return value.strftime("%Y-%m-%d %H:%M:%S.") + (
            f"{value.microsecond:06d}".rstrip("0") or "0"
        )
    if isinstance(value, datetime.time):
        return value.strftime("%H:%M:%S")  # java.sql.Time keeps no fraction in toString
    return str(value)


def _java_instant(value: datetime.datetime) -> str:
    """``java.time.Instant.toString`` (ISO-8601 in UTC, the fraction in groups of three)."""
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc)
    text = value.strftime("%Y-%m-%dT%H:%M:%S")
    micros = value.microsecond
    if micros:
        text += f".{micros // 1000:03d}" if micros % 1000 == 0 else f".{micros:06d}"
    return text + "Z"


def _field_infos(info: TypeInformation | None, n: int) -> list[Any]:
    if info is None or not info.args:
        return [None] * n
    types = info.args[1] if info.name == "ROW_NAMED" else info.args[0]
    types = list(types) if isinstance(types, (list, tuple)) else []
    return types if len(types) == n else [None] * n


def _arg(info: TypeInformation | None, i: int) -> TypeInformation | None:
    if info is None or len(info.args) <= i:
        return None
    arg = info.args[i]
    return arg if isinstance(arg, TypeInformation) else None


# ---------------------------------------------------------------- Java's HashMap order
_INT_BITS = {"BYTE": 32, "SHORT": 32, "INT": 32, "LONG": 64}


def java_hash_code(value: Any, info: TypeInformation | None) -> int | None:
    """Java's ``hashCode()`` of the Java value Flink holds for ``value`` of PyFlink type
    ``info`` (a 32-bit signed int); None where flinkwin does not know it."""
    name = None if info is None else info.name
    if isinstance(value, bool):
        return 1231 if value else 1237
    if isinstance(value, str) and name in ("STRING", "CHAR"):
        h = 0
        for unit in np.frombuffer(value.encode("utf-16-le"), dtype="<u2").tolist():
            h = (31 * h + unit) & 0xFFFFFFFF
        return _signed32(h)
    if isinstance(value, int) and name in _INT_BITS:
        if _INT_BITS[name] == 32:
            return _signed32(value & 0xFFFFFFFF)
        bits = value & 0xFFFFFFFFFFFFFFFF
        return _signed32((bits ^ (bits >> 32)) & 0xFFFFFFFF)
    if isinstance(value, (float, int)) and name == "DOUBLE":
        bits = int(np.array(float(value), dtype=np.float64).view(np.uint64))
        if math.isnan(value):
            bits = 0x7FF8000000000000
        return _signed32((bits ^ (bits >> 32)) & 0xFFFFFFFF)
    if isinstance(value, (float, int)) and name == "FLOAT":
        bits = int(np.array(float(value), dtype=np.float32).view(np.uint32))
        return _signed32(0x7FC00000 if math.isnan(value) else bits)
    return None


def _signed32(bits: int) -> int:
    return bits - (1 << 32) if bits & 0x80000000 else bits


def hash_map_order(
    items: Sequence[tuple[Any, Any]], key_info: TypeInformation | None
) -> list[tuple[Any, Any]]:
    """``items`` in the iteration order of the ``java.util.HashMap`` Flink's
    ``MapSerializer`` builds from them (``new HashMap<>(size)``, then ``put`` in order); kept
    in their order where a key's Java hash code is not known."""
    hashes = [java_hash_code(k, key_info) for k, _ in items]
    if not items or any(h is None for h in hashes):
        return list(items)
    spread = [(h & 0xFFFFFFFF) ^ ((h & 0xFFFFFFFF) >> 16) for h in hashes]  # type: ignore[operator]
    capacity = _table_size_for(len(items))
    threshold = int(capacity * 0.75)
    bins: list[list[int]] = [[] for _ in range(capacity)]

    def resize() -> None:
        nonlocal capacity, threshold, bins
        old = capacity
        capacity *= 2
        threshold = threshold * 2 if old >= 16 else int(capacity * 0.75)
        ordered = [i for b in bins for i in b]
        bins = [[] for _ in range(capacity)]
        for i in ordered:
            bins[spread[i] & (capacity - 1)].append(i)

    for size, i in enumerate(range(len(items)), start=1):
        target = bins[spread[i] & (capacity - 1)]
        target.append(i)
        if len(target) > 8 and capacity < 64:  # treeifyBin on a small table resizes it
            resize()
        if size > threshold:
            resize()
    return [items[i] for b in bins for i in b]


def _table_size_for(n: int) -> int:
    """``HashMap.tableSizeFor``: the power of two at least ``n`` (at least 1)."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


# -------------------------------------------------------------------- floating point
def java_double(value: float) -> str:
    """Java's ``Double.toString``: plain notation in ``[1e-3, 1e7)``, else ``d.dddE±n``."""
    return _java_floating(value, repr(float(value)))


def java_float(value: float) -> str:
    """Java's ``Float.toString`` of the float32 nearest ``value`` (the shortest digits that
    read back as that float32), formatted as :func:`java_double`."""
    return _java_floating(value, str(np.float32(value)))


def _java_floating(value: float, shortest: str) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign, digits, exp = decimal.Decimal(shortest).as_tuple()
    kept = list(digits)
    exponent = int(exp)
    while len(kept) > 1 and kept[-1] == 0:
        kept.pop()
        exponent += 1
    text = "".join(map(str, kept))
    minus = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        point = len(kept) + exponent  # digits before the decimal point
        if point <= 0:
            return f"{minus}0.{'0' * -point}{text}"
        if point >= len(kept):
            return f"{minus}{text}{'0' * (point - len(kept))}.0"
        return f"{minus}{text[:point]}.{text[point:]}"
    scientific = len(kept) - 1 + exponent
    return f"{minus}{text[0]}.{text[1:] or '0'}E{scientific}"


__all__ = [
    "element_shaper",
    "flink_string",
    "hash_map_order",
    "java_double",
    "java_float",
    "java_hash_code",
    "java_string",
    "printer",
    "python_string",
]
