"""Nested column values inside elements, in the shape PyFlink and PySpark hand them over.

Spark's Arrow-to-pandas conversions give a nested column's values as plain containers: a
``struct`` as a ``dict``, an ``array`` as a list or numpy array, a ``map`` as a ``dict`` or a
list of pairs. The elements user functions see hold them as PyFlink does for the stream's type
(and as a ``pyspark.sql.Row`` does for an untyped DataFrame):

- a ``struct`` field is a tuple when its PyFlink type is ``Types.TUPLE``, else a ``Row`` with
  the struct's field names (``Types.ROW``/``ROW_NAMED``, or no declared type), nested alike;
- an ``array`` is a Python ``list`` (of Python values, not numpy scalars), a ``map`` a
  ``dict``, their values converted alike;
- a ``Types.PICKLED_BYTE_ARRAY()`` field of a row type that flinkwin wrote (an output
  field, marked in the schema) is the value it holds (bytes from input data are never
  unpickled);
- a field (or a whole-value stream) typed ``Types.SQL_TIMESTAMP()`` (a ``timestamp``
  column, which Spark hands over as an instant in UTC) is the naive UTC wall-clock time, as
  PyFlink's ``TimestampCoderImpl`` decodes it (``datetime.utcfromtimestamp``), so
  ``value - datetime.utcfromtimestamp(0)`` works as on PyFlink; an output field so declared
  reads a naive datetime as UTC again (:mod:`flinkwin.spark.row_encoder`), so values pass
  through exactly whatever the session time zone (nested deeper, a timestamp stays Spark's
  instant, which the encoder also keeps);
- a value typed ``Types.BIG_INT()`` (a ``decimal(38,0)`` column) is an ``int``, and
  ``Types.PRIMITIVE_ARRAY(Types.BYTE())`` is ``bytes`` (from a ``binary`` column, or from an
  ``array<tinyint>`` of Java's signed bytes), as PyFlink's coders hand them over.

A stream of a whole-value type (``Types.MAP``, ``Types.LIST``, an array or a basic type, see
:func:`flinkwin.types.is_atomic_type`) has one column whose values are shaped by the stream's
type itself. :func:`element_converters` gives, per column of a schema that needs one, the
function doing this; other columns need none, so flat streams pay nothing.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    DecimalType,
    MapType,
    StructType,
    TimestampType,
)

from flinkwin.record import element_class
from flinkwin.types import is_atomic_type

from .schema import is_pickled_field, unpickle

Converter = Callable[[Any], Any]


def element_converters(schema: StructType, type_info: Any = None) -> dict[str, Converter]:
    """The converters of ``schema``'s nested columns (see module docstring); ``type_info`` is
    the stream's PyFlink type (``Types.TUPLE([...])``, ``Types.ROW([...])``...), or None."""
    if is_atomic_type(type_info) and len(schema.fields) == 1:
        fields = [type_info]  # the one column holds the elements themselves
    else:
        fields = _field_types(type_info, len(schema.fields))
    converters = {}
    for field, sub_type in zip(schema.fields, fields):
        # a field flinkwin pickled (PICKLED_BYTE_ARRAY inside a row type) holds the value
        if is_pickled_field(field):
            convert: Converter | None = unpickle
        elif getattr(sub_type, "name", None) == "SQL_TIMESTAMP" and isinstance(
            field.dataType, TimestampType
        ):
            convert = _utc_wall_clock
        else:
            convert = value_converter(field.dataType, sub_type)
        if convert is not None:
            converters[field.name] = convert
    return converters


def value_converter(dtype: DataType, type_info: Any = None) -> Converter | None:
    """The function shaping one value of ``dtype`` declared ``type_info`` (PyFlink type
    information or None); None where values stay as they are."""
    name = getattr(type_info, "name", None)
    if name == "BIG_INT" and isinstance(dtype, DecimalType):
        return _big_int
    if name == "PRIMITIVE_ARRAY" and _args(type_info, 0) is not None and getattr(
        _args(type_info, 0), "name", None
    ) == "BYTE":
        if isinstance(dtype, BinaryType):
            return _bytes
        if isinstance(dtype, ArrayType):
            return _signed_bytes
    if isinstance(dtype, BinaryType):
        return _bytes
    if isinstance(dtype, StructType):
        names = tuple(dtype.fieldNames())
        klass = element_class(names, getattr(type_info, "name", None) == "TUPLE")
        inner = [
            value_converter(f.dataType, t)
            for f, t in zip(dtype.fields, _field_types(type_info, len(names)))
        ]

        def struct(value: Any) -> Any:
            if value is None:
                return None
            items = [value.get(n) for n in names] if isinstance(value, Mapping) else list(value)
            return tuple.__new__(
                klass, [v if c is None else c(v) for c, v in zip(inner, items)]
            )

        return struct
    if isinstance(dtype, ArrayType):
        element = value_converter(dtype.elementType, _args(type_info, 0))

        def array(value: Any) -> Any:
            if value is None:
                return None
            values = value.tolist() if isinstance(value, np.ndarray) else list(value)
            return values if element is None else [element(v) for v in values]

        return array
    if isinstance(dtype, MapType):
        key = value_converter(dtype.keyType, _args(type_info, 0))
        val = value_converter(dtype.valueType, _args(type_info, 1))

        def mapping(value: Any) -> Any:
            if value is None:
                return None
            pairs = value.items() if isinstance(value, Mapping) else value
            return {
                (k if key is None else key(k)): (v if val is None else val(v)) for k, v in pairs
            }

        return mapping
    return None


def _big_int(value: Any) -> Any:
    return None if value is None else int(value)


def _utc_wall_clock(value: Any) -> Any:
    if value is None or value.tzinfo is None:
        return value
    return value.astimezone(datetime.timezone.utc).replace(tzinfo=None)


def _bytes(value: Any) -> Any:
    return value if value is None or type(value) is bytes else bytes(value)


def _signed_bytes(value: Any) -> Any:
    """Java's signed bytes (``array<tinyint>``) as Python ``bytes``, as PyFlink hands a
    ``byte[]`` over."""
    return None if value is None else bytes(int(b) & 0xFF for b in value)


def _field_types(type_info: Any, n: int) -> list[Any]:
    """The PyFlink types of a row/tuple type's ``n`` fields (None where not declared)."""
    name = getattr(type_info, "name", None)
    args: tuple[Any, ...] = tuple(getattr(type_info, "args", ()))
    declared: Any = None
    if name in ("TUPLE", "ROW") and args:
        declared = args[0]
    elif name == "ROW_NAMED" and len(args) > 1:
        declared = args[1]
    if not isinstance(declared, (list, tuple)) or len(declared) != n:
        return [None] * n
    return list(declared)


def _args(type_info: Any, i: int) -> Any:
    args: tuple[Any, ...] = tuple(getattr(type_info, "args", ()))
    return args[i] if len(args) > i else None


__all__ = ["Converter", "element_converters", "value_converter"]
