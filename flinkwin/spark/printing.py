"""PyFlink's element shapes and ``print()`` format for a stream's rows.

A stream's rows reach a PyFlink program in the shape its type information gives them:
``Types.TUPLE`` output is a Python ``tuple``, a basic type (``Types.STRING()``...) is the value
itself, and rows (``Types.ROW``, ``Types.ROW_NAMED`` or a DataFrame's own rows) are Rows.
:func:`flink_string` prints a value as Flink's ``print()`` sink does, with Java's ``toString``:
a tuple as ``(a,1)``, a Row as ``+I[a, 1]``, ``None`` as ``null``, booleans as ``true``/``false``
and floats as Java's ``Double.toString``.
"""

from __future__ import annotations

import datetime
import decimal
import math
from collections.abc import Mapping
from typing import Any

from flinkwin.record import Record, is_tuple_element, to_record
from flinkwin.spark.schema import unpickle
from flinkwin.types import TypeInformation

_BASIC = frozenset(
    "STRING BYTE BOOLEAN SHORT INT LONG FLOAT DOUBLE CHAR BIG_INT BIG_DEC INSTANT SQL_DATE "
    "SQL_TIME SQL_TIMESTAMP PICKLED_BYTE_ARRAY".split()
)


def python_value(row: Any, type_info: TypeInformation | None, pickled: bool = False) -> Any:
    """A Spark row (``pyspark.sql.Row``) as the value a PyFlink program sees; ``pickled``: the
    row is the one ``value binary`` column of pickled values (an output without a declared
    type, see :func:`flinkwin.spark.schema.pickled_schema`), which holds the value itself."""
    if pickled:
        return unpickle(row[0])
    if type_info is not None and type_info.name in _BASIC:
        return row[0]
    if type_info is not None and type_info.name == "TUPLE":
        return _tuple(tuple(row), type_info)
    return to_record(row)


def _tuple(values: tuple[Any, ...], info: TypeInformation) -> tuple[Any, ...]:
    types = info.args[0] if info.args else []
    out = []
    for value, item in zip(values, types):
        if isinstance(item, TypeInformation) and item.name == "TUPLE" and value is not None:
            value = _tuple(tuple(value), item)
        out.append(value)
    return tuple(out)


def flink_string(value: Any) -> str:
    """``value`` as Flink's ``print()`` writes it (see module docstring)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    if is_tuple_element(value):
        return "(" + ",".join(flink_string(v) for v in value) + ")"
    if isinstance(value, Record) or hasattr(value, "__fields__"):
        return "+I[" + ", ".join(flink_string(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ",".join(flink_string(v) for v in value) + ")"
    if isinstance(value, list):
        return "[" + ", ".join(flink_string(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = (f"{flink_string(k)}={flink_string(v)}" for k, v in value.items())
        return "{" + ", ".join(items) + "}"
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S.") + (
            f"{value.microsecond:06d}".rstrip("0") or "0"
        )
    return str(value)


def python_string(value: Any) -> str:
    """A pickled value (no declared type) as PyFlink's ``print()`` writes it: ``str(value)``
    (PyFlink maps such values through ``str`` before Flink's print sink)."""
    return value if isinstance(value, str) else str(value)


def java_double(value: float) -> str:
    """Java's ``Double.toString``: plain notation in ``[1e-3, 1e7)``, else ``d.dddE±n``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        return repr(value)  # Python's shortest repr is plain notation in this range
    sign, digits, exp = decimal.Decimal(repr(value)).as_tuple()
    kept = list(digits)
    while len(kept) > 1 and kept[-1] == 0:
        kept.pop()
        exp = int(exp) + 1
    exponent = len(kept) - 1 + int(exp)
    mantissa = f"{kept[0]}." + ("".join(map(str, kept[1:])) or "0")
    return f"{'-' if sign else ''}{mantissa}E{exponent}"


__all__ = ["flink_string", "java_double", "python_string", "python_value"]
