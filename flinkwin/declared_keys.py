"""The key an element's state is held under (:func:`state_key`), and keys of a **declared
type** (``key_by(selector, Types.INT())``): checked against the type as PyFlink's coder of that
type checks them (:func:`key_type_mismatch`) and made the value that coder round-trips them to
(:func:`declared_key`: an ``int`` declared ``DOUBLE`` is a float, an ``IntEnum`` declared ``INT``
its int, a ``Row`` declared ``TUPLE`` a tuple, a ``Decimal`` declared ``BIG_DEC`` a
:class:`JavaBigDecimal`...), which is also the key user functions get. How keys compare once so
held (Java's ``equals``, pickled keys) is :mod:`flinkwin.keys`.
"""

from __future__ import annotations

import datetime
import decimal
import operator
from typing import Any

import numpy as np

from flinkwin.errors import KeyTypeError, NullKeyError
from flinkwin.keys import NULL_KEY_MESSAGE, flink_key, pickled_key, plain_key
from flinkwin.record import Row, is_tuple_element


def state_key(
    key: Any, by_value: bool, element: Any, where: str, key_type: Any = None
) -> Any:
    """The key ``element``'s state is held under, from what its key selector returned:
    the key as its declared ``key_type`` holds it (:func:`declared_key`; a key the type cannot
    hold fails, as PyFlink's coder does), :func:`flink_key` of a column key (``by_value``), or
    a :func:`pickled_key`; a None key fails with Flink's message, naming ``where`` (the
    operator and input) and the element."""
    if key is None:
        raise null_key_error(where, element)
    if not by_value:
        return pickled_key(key)
    if key_type is None:
        return flink_key(key)
    problem = key_type_mismatch(key, key_type)
    if problem is not None:
        raise KeyTypeError(
            f"{where}: the key selector returned {key!r} for element {element!r}, which does "
            f"not match key_type {key_type!r}: {problem}"
        )
    return declared_key(key, key_type)


def null_key_error(where: str, element: Any) -> NullKeyError:
    """The error for a null key of ``element`` in ``where``."""
    return NullKeyError(
        f"{where}: null key for element {element!r}; Flink rejects null keys "
        f"({NULL_KEY_MESSAGE}): filter such elements out, or make the key selector return "
        "a value for them"
    )


def declared_key(key: Any, key_type: Any) -> Any:
    """``key`` as its declared ``key_type`` holds it: the value PyFlink's coder of that type
    decodes from the bytes it encodes ``key`` to (``coder_impl_fast.pyx``: ``IntCoderImpl``,
    ``FloatCoderImpl``, ``RowCoderImpl``...), so keys those bytes make one key are one key here,
    and user functions see the decoded value. ``key`` must pass :func:`key_type_mismatch`.

    - ``BYTE``/``SHORT``/``INT``/``LONG``/``BIG_INT``: the plain ``int`` (an ``IntEnum`` member
      or a numpy integer is its int value);
    - ``FLOAT``: rounded to 32 bits (``write_float``), handed back as that float's double
      value (``0.1`` is ``0.10000000149011612``; beyond float32's range, infinity);
      ``DOUBLE``: the plain ``float``; NaN and ``-0.0`` as :func:`flink_key` holds them;
    - ``BOOLEAN``: the plain ``bool`` (numpy's too); ``STRING``/``CHAR``: the plain ``str``;
    - ``BIG_DEC``: a :class:`JavaBigDecimal` (``str(value)`` is written: ``1.0`` and ``1.00``
      are two keys, as for Java's ``BigDecimal.equals``);
    - ``SQL_DATE``: the date; ``SQL_TIME``: the time of day to the millisecond, zone dropped;
      ``SQL_TIMESTAMP``: the wall-clock time to the millisecond, naive (the coder writes
      ``value.replace(tzinfo=utc).timestamp()``: a zoned value's zone is dropped, so
      12:00+02:00 and 12:00 UTC are one key);
    - ``TUPLE``: the plain tuple of its fields so converted (a ``Row`` too);
    - ``ROW``/``ROW_NAMED``: a ``Row`` of the fields so converted, taken by name
      (``get_fields_by_names``: ``Row(b=2, a=1)`` declared ``ROW_NAMED(["a", "b"], ...)`` is
      ``Row(a=1, b=2)``), an unnamed ``Row`` for ``ROW`` (flinkwin's one deviation: PyFlink's
      decoded row is named ``f0``, ``f1``...); a plain tuple is taken by position;
    - any other type (``PICKLED_BYTE_ARRAY``, lists, maps...): :func:`flink_key` of the key,
      numpy scalars as Python's (:func:`plain_key`).
    """
    name = getattr(key_type, "name", "")
    if type(key) is _HELD_AS.get(name):  # already the decoded value: the key itself
        return key
    convert = _CONVERTERS.get(name)
    if convert is None:
        return flink_key(plain_key(key))
    return convert(key, key_type)


class JavaBigDecimal(decimal.Decimal):
    """A ``BIG_DEC`` key: equal as Java's ``BigDecimal.equals`` (same unscaled value and
    scale: ``1.0`` is not ``1.00``; no negative zero), hashing as its ``Decimal`` value; still a
    ``Decimal`` to user code. Pickles as itself (``Decimal.__reduce__`` keeps the class)."""

    __slots__ = ()

    def _java(self) -> tuple[int, int]:
        sign, digits, exponent = self.as_tuple()
        unscaled = int("".join(map(str, digits)) or "0")
        return (-unscaled if sign else unscaled, int(exponent))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, decimal.Decimal) or not other.is_finite():
            return False
        return self._java() == JavaBigDecimal._java(other)  # type: ignore[arg-type]

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return decimal.Decimal.__hash__(self)


def _as_int(key: Any, key_type: Any) -> int:
    return operator.index(key)


def _as_float(key: Any, key_type: Any) -> float:
    value = float(key)
    if key_type.name == "FLOAT":
        with np.errstate(over="ignore"):
            value = float(np.float32(value))
    return flink_key(value)  # type: ignore[no-any-return]


def _as_decimal(key: Any, key_type: Any) -> JavaBigDecimal:
    value = decimal.Decimal(str(key))
    return JavaBigDecimal(value.copy_abs() if value.is_zero() else value)  # no negative zero


def _as_time(key: Any, key_type: Any) -> datetime.time:
    millis = key.microsecond // 1000 * 1000
    return datetime.time(key.hour, key.minute, key.second, millis)


def _as_timestamp(key: Any, key_type: Any) -> datetime.datetime:
    # TimestampCoderImpl(3): int(replace(tzinfo=utc).timestamp()) * 1000 + microsecond // 1000
    seconds = int(key.replace(tzinfo=datetime.timezone.utc).timestamp())
    millis = seconds * 1000 + key.microsecond // 1000
    return _EPOCH + datetime.timedelta(milliseconds=millis)


def _as_record(key: Any, key_type: Any) -> Any:
    name = key_type.name
    types = key_type.args[1] if name == "ROW_NAMED" else key_type.args[0]
    values = _record_values(key, key_type)
    items = [v if v is None else declared_key(v, t) for v, t in zip(values, types)]
    if name == "TUPLE":
        plain = type(key) is tuple and all(a is b for a, b in zip(items, key))
        return key if plain else tuple(items)
    if name == "ROW":
        return tuple.__new__(Row, items)
    return Row.of(key_type.args[0], items)


def _record_values(key: Any, key_type: Any) -> tuple[Any, ...]:
    """A record key's field values in the order of ``key_type``'s fields: by name for a named
    ``Row`` of a ``ROW``/``ROW_NAMED`` type (``get_fields_by_names``), else by position."""
    fields = getattr(type(key), "__fields__", None)
    if fields is None or key_type.name == "TUPLE" or is_tuple_element(key):
        return tuple(key)
    names = _field_names(key_type)
    if tuple(fields) == names:
        return tuple(key)
    index = {f: i for i, f in enumerate(fields)}
    return tuple(tuple.__getitem__(key, index[n]) for n in names)


def _field_names(key_type: Any) -> tuple[str, ...]:
    """A ``ROW``/``ROW_NAMED`` type's field names (``ROW``'s are PyFlink's ``f0``, ``f1``...)."""
    if key_type.name == "ROW_NAMED":
        return tuple(key_type.args[0])
    return tuple(f"f{i}" for i in range(len(key_type.args[0])))


_EPOCH = datetime.datetime(1970, 1, 1)
#: the class of the value a type's coder decodes, where a key of exactly that class is kept
_HELD_AS: dict[str, type] = {
    **dict.fromkeys(("BYTE", "SHORT", "INT", "LONG", "BIG_INT"), int),
    "STRING": str, "CHAR": str, "BOOLEAN": bool, "SQL_DATE": datetime.date,
}
_CONVERTERS: dict[str, Any] = {
    **dict.fromkeys(("BYTE", "SHORT", "INT", "LONG", "BIG_INT"), _as_int),
    "FLOAT": _as_float, "DOUBLE": _as_float,
    "BOOLEAN": lambda key, _: bool(key),
    "STRING": lambda key, _: str.__str__(key), "CHAR": lambda key, _: str.__str__(key),
    "BIG_DEC": _as_decimal,
    "SQL_DATE": lambda key, _: datetime.date(key.year, key.month, key.day),
    "SQL_TIME": _as_time, "SQL_TIMESTAMP": _as_timestamp,
    **dict.fromkeys(("TUPLE", "ROW", "ROW_NAMED"), _as_record),
}


_NUMBERS = (float, int, np.floating, np.integer)
_INT_RANGES = {"BYTE": 8, "SHORT": 16, "INT": 32, "LONG": 64}
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "STRING": (str,), "CHAR": (str,), "BOOLEAN": (bool, np.bool_),
    "BIG_INT": (int, np.integer), "FLOAT": _NUMBERS, "DOUBLE": _NUMBERS,
    "BIG_DEC": (decimal.Decimal,),
    "SQL_DATE": (datetime.date,), "SQL_TIME": (datetime.time,),
    "SQL_TIMESTAMP": (datetime.datetime,), "INSTANT": (datetime.datetime,),
}


def key_type_mismatch(value: Any, info: Any) -> str | None:
    """Why ``value`` is not a key of the declared type ``info`` (None: it is), as PyFlink's
    coder of that type would refuse it (numpy scalars are taken as the coders take them)."""
    name = info.name
    if name == "PICKLED_BYTE_ARRAY":
        return None
    if value is None:
        return "a declared key type cannot hold null"
    if name in _INT_RANGES:
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            return f"expected an int, got {type(value).__name__}"
        bits = _INT_RANGES[name]
        if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            return f"{value} is out of range for {name}"
        return None
    if name in _PY_TYPES:
        expected = _PY_TYPES[name]
        if not isinstance(value, expected) or (isinstance(value, bool) and bool not in expected):
            return f"expected {expected[0].__name__}, got {type(value).__name__}"
        if isinstance(value, decimal.Decimal) and not value.is_finite():
            return f"{value} is not a number Java's BigDecimal holds"
        return None
    if name in ("TUPLE", "ROW", "ROW_NAMED"):
        types = info.args[1] if name == "ROW_NAMED" else info.args[0]
        if not isinstance(value, tuple) or len(value) != len(types):
            return f"expected a tuple of {len(types)} fields, got {value!r}"
        fields = getattr(type(value), "__fields__", None)
        if name != "TUPLE" and fields is not None and not is_tuple_element(value) and (
            set(fields) != set(_field_names(info))
        ):  # RowCoderImpl: get_fields_by_names
            return f"Field names {list(fields)} do not match {list(_field_names(info))}"
        for i, (item, item_type) in enumerate(zip(value, types)):
            if item is None:
                if name == "TUPLE":  # Flink's TupleSerializer: NullFieldException
                    return f"Field {i} is null, but expected to hold a value."
                continue  # a Row's fields may be null (RowSerializer)
            problem = key_type_mismatch(item, item_type)
            if problem is not None:
                return problem
    return None


__all__ = [
    "JavaBigDecimal",
    "declared_key",
    "key_type_mismatch",
    "null_key_error",
    "state_key",
]
