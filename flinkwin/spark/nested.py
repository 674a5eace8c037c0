"""Nested column values inside elements, in the shape PyFlink and PySpark hand them over.

Spark's Arrow-to-pandas conversions give a nested column's values as plain containers: a
``struct`` as a ``dict``, an ``array`` as a list or numpy array, a ``map`` as a ``dict`` or a
list of pairs. The elements user functions see hold them as PyFlink does for the stream's type
(and as a ``pyspark.sql.Row`` does for an untyped DataFrame):

- a ``struct`` field is a tuple when its PyFlink type is ``Types.TUPLE``, else a ``Row`` with
  the struct's field names (``Types.ROW``/``ROW_NAMED``, or no declared type), nested alike;
- an ``array`` is a Python ``list`` (of Python values, not numpy scalars), a ``map`` a
  ``dict``, their values converted alike.

:func:`element_converters` gives, per nested column of a schema, the function doing this; flat
columns need none, so streams without nested columns pay nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from pyspark.sql.types import ArrayType, DataType, MapType, StructType

from flinkwin.record import element_class

Converter = Callable[[Any], Any]


def element_converters(schema: StructType, type_info: Any = None) -> dict[str, Converter]:
    """The converters of ``schema``'s nested columns (see module docstring); ``type_info`` is
    the stream's PyFlink type (``Types.TUPLE([...])``, ``Types.ROW([...])``...), or None."""
    fields = _field_types(type_info, len(schema.fields))
    converters = {}
    for field, sub_type in zip(schema.fields, fields):
        convert = value_converter(field.dataType, sub_type)
        if convert is not None:
            converters[field.name] = convert
    return converters


def value_converter(dtype: DataType, type_info: Any = None) -> Converter | None:
    """The function shaping one value of ``dtype``; None for a flat type (values stay)."""
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
