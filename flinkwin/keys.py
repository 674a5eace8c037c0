"""Keys compare as Flink compares them: with Java's ``equals``.

Which ``equals`` depends on how the key is typed, as in PyFlink:

- a key of **declared type** (``key_by(selector, Types.INT())``, or column keys, typed by their
  Spark column) compares by value, as the type's Java class does (:func:`flink_key`), once
  checked against the type and made the value PyFlink's coder of that type round-trips it to
  (:mod:`flinkwin.declared_keys`: an ``int`` declared ``DOUBLE`` is a float, an ``IntEnum``
  declared ``INT`` its int, a ``Row`` declared ``TUPLE`` a tuple...), which is also the key user
  functions get;
- a key from a key selector **without** a declared type is pickled by PyFlink and compared as
  those bytes, so its type is part of its identity: ``1``, ``1.0``, ``True`` and
  ``Decimal("1")`` are four keys, ``Decimal("1.0")`` and ``Decimal("1.00")`` two. Such a key is
  held as a :class:`PickledKey` (its value's type and value, as the pickled bytes would tell
  them apart: a subclass such as a ``Row`` or an ``IntEnum`` is not its base, an instant in
  two zones is two keys; numpy scalars count as the Python values they stand for, so a key
  never splits because one path produced ``numpy.int64`` and another ``int``), unless no value
  of another type can equal it (strings, bytes, naive dates... and plain tuples of those stay
  as they are; see :func:`pickled_key`). User code always sees the value itself (:func:`user_key`).

A key that is None (a key selector returning None, a null key column) fails, as Flink's
``KeyGroupRangeAssignment.assignToKeyGroup`` does ("Assigned key must not be null!"); a tuple
key holding a None is a key (only the key object itself is checked), except for column keys,
where a null in any key column makes the key None (``FieldKeySelector``), as the window stage's
Spark check does (:func:`~flinkwin.declared_keys.state_key`).

For ``double``/``float`` keys ``Double.equals`` differs from Python's ``==``: NaN equals NaN (so
every NaN element is one key, whatever batch or worker it arrives in) and ``0.0`` does not
equal ``-0.0`` (two keys). :func:`flink_key` gives such keys (also inside tuple keys) a float
subclass with Java's equality and a matching hash; the value itself is unchanged (a NaN key is
still NaN, ``-0.0`` still ``-0.0``), so user functions and outputs see the key's own value.
"""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Any

import numpy as np

from flinkwin.record import Row

#: Flink's message for a null key (``KeyGroupRangeAssignment.assignToKeyGroup``), word for word.
NULL_KEY_MESSAGE = "Assigned key must not be null!"


class JavaDouble(float):
    """A float key with ``Double.equals``/``hashCode`` semantics (see module docstring)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, float):
            return False
        if math.isnan(self):
            return math.isnan(other)
        return float.__eq__(self, other) and math.copysign(1.0, self) == math.copysign(1.0, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(("JavaDouble", "NaN" if math.isnan(self) else math.copysign(1.0, self)))

    def __reduce__(self) -> tuple[Any, tuple[float]]:
        return (JavaDouble, (float(self),))


class JavaList(list):  # type: ignore[type-arg]
    """A list key (PyFlink accepts them): compared as Java's ``List.equals``, element by
    element, with a matching hash; still a list to user code."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(("JavaList", *self))

    def __reduce__(self) -> tuple[Any, tuple[list[Any]]]:
        return (JavaList, (list(self),))


class JavaMap(dict):  # type: ignore[type-arg]
    """A dict key: compared as Java's ``Map.equals`` (same entries), with a matching hash;
    still a dict to user code."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(("JavaMap", frozenset(self.items())))

    def __reduce__(self) -> tuple[Any, tuple[dict[Any, Any]]]:
        return (JavaMap, (dict(self),))


_NAN = JavaDouble(float("nan"))
_NEGATIVE_ZERO = JavaDouble(-0.0)


def flink_key(key: Any) -> Any:
    """``key`` with its NaN and ``-0.0`` floats (also in tuples) as :class:`JavaDouble`, and
    list and dict keys hashable (:class:`JavaList`, :class:`JavaMap`)."""
    kind = type(key)
    if kind is float:
        if math.isnan(key):
            return _NAN
        if key == 0.0 and math.copysign(1.0, key) < 0:
            return _NEGATIVE_ZERO
        return key
    if kind is str or kind is int:
        return key
    if isinstance(key, tuple):
        items = [flink_key(k) for k in key]
        if all(a is b for a, b in zip(items, key)):
            return key
        return tuple.__new__(kind, items)
    if kind is list:
        return JavaList(flink_key(k) for k in key)
    if kind is dict:
        return JavaMap((flink_key(k), flink_key(v)) for k, v in key.items())
    return key


class PickledKey:
    """A key without a declared type, compared as PyFlink compares its pickled bytes: by its
    type and value (see module docstring). ``value`` is the key as the key selector returned
    it; ``repr`` shows it. Pickles as itself, so a restored snapshot holds the same keys."""

    __slots__ = ("_hash", "_identity", "value")

    def __init__(self, value: Any, identity: Any = None) -> None:
        self.value = value
        self._identity = _identity(value) if identity is None else identity
        self._hash = hash(self._identity)

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is PickledKey
            and self._hash == other._hash
            and self._identity == other._identity
        )

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return repr(self.value)

    def __reduce__(self) -> tuple[Any, tuple[Any]]:
        return (PickledKey, (self.value,))


class _Tag(tuple):  # type: ignore[type-arg]
    """``(kind, value)``: a value whose type is part of its identity; equal only to another
    tag (never to a user's tuple of the same items)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is _Tag and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__  # a tuple's hash, in C


def _identity(value: Any) -> Any:
    """What tells ``value`` apart as its pickled bytes would: numbers tagged with their kind
    (``bool``, ``int``, ``float``, ``decimal``; floats with ``Double.equals``: NaN one key,
    ``-0.0`` another), containers item by item, a subclass (a ``Row``, an ``IntEnum``...) and
    a time with a zone or a ``fold`` with what their pickle holds besides the value; a value no
    other type's value equals is its own identity (``value`` itself, numpy strings as
    ``str``)."""
    if isinstance(value, np.generic):  # numpy scalars as the Python values they stand for
        value = str(value) if isinstance(value, str) else value.item()
    kind = type(value)
    if kind is str or value is None:
        return value
    if kind is bool:
        return _Tag(("bool", value))
    if kind is tuple:
        items = tuple(_identity(v) for v in value)
        if any(type(i) is _Tag for i in items):
            return _Tag(("tuple", items))
        # no item needs its type: the tuple itself
        return value if all(a is b for a, b in zip(items, value)) else items
    if kind in _PLAIN_NUMBERS or kind is decimal.Decimal:
        return _Tag(_number(value))
    if isinstance(value, (datetime.date, datetime.time)):
        if kind in _PLAIN_TIMES and getattr(value, "tzinfo", None) is None and not getattr(
            value, "fold", 0
        ):
            return value
        # equal instants in two zones, or a fold, pickle (so key) apart
        return _Tag(("time", _own_type(kind), value.__reduce_ex__(4)[1]))
    if isinstance(value, list):
        return _Tag(("list", tuple(_identity(v) for v in value)))
    if isinstance(value, dict):
        return _Tag(("map", frozenset((_identity(k), _identity(v)) for k, v in value.items())))
    own = _own_type(kind)  # a subclass pickles as its own type, so keys apart from its base's
    if isinstance(value, tuple):
        return _Tag(("tuple", own, tuple(_identity(v) for v in value)))
    if isinstance(value, (int, float, decimal.Decimal)):
        return _Tag((*_number(value), own))
    if isinstance(value, str):
        return _Tag(("str", own, str(value)))
    return value


_PLAIN_NUMBERS = frozenset((int, float, JavaDouble))
_PLAIN_TIMES = frozenset((datetime.date, datetime.datetime, datetime.time))


def _number(value: Any) -> tuple[str, Any]:
    """A number's kind and value as its identity holds them."""
    if isinstance(value, float):
        return ("float", flink_key(float(value)))
    if isinstance(value, int):
        return ("int", int(value))
    return ("decimal", str(value))  # Decimal pickles as its string: 1.0 is not 1.00


def _own_type(kind: type) -> Any:
    """What a value's pickle names its type by: a ``Row``'s field names (and whether it is a
    ``Types.TUPLE`` element), any other class itself."""
    if issubclass(kind, Row):
        return ("Row", kind.__fields__, kind._is_tuple)
    return kind


def user_key(key: Any) -> Any:
    """The key as user code sees it: a :class:`PickledKey`'s value, any other key itself."""
    return key.value if type(key) is PickledKey else key


def compares_by_value(selector: Any, key_type: Any) -> bool:
    """True when an operator's keys compare by value (a declared key type other than
    ``PICKLED_BYTE_ARRAY``, or column keys: ``selector.column_keys``), False when by their type
    too (:class:`PickledKey`)."""
    if key_type is not None:
        return getattr(key_type, "name", None) != "PICKLED_BYTE_ARRAY"
    return bool(getattr(selector, "column_keys", False))


def plain_key(key: Any) -> Any:
    """``key`` with numpy scalars (also in tuples) as the Python values they stand for, as
    :class:`PickledKey` counts them (the bytes Spark hashes a key by must agree)."""
    if isinstance(key, np.generic):
        return str(key) if isinstance(key, str) else key.item()
    if isinstance(key, tuple) and any(isinstance(k, (np.generic, tuple)) for k in key):
        items = [plain_key(k) for k in key]
        if any(a is not b for a, b in zip(items, key)):
            return tuple(items) if type(key) is tuple else type(key)(*items)
    return key


def pickled_key(value: Any) -> Any:
    """``value`` as a key without a declared type: a :class:`PickledKey` when its type tells
    it apart from equal values of other types (numbers, containers holding them), else the
    value itself (a ``str``, ``bytes``, a naive date... and plain tuples of those, which no
    value of another type equals)."""
    if type(value) is int:  # the commonest key, its identity without the general path
        return PickledKey(value, _Tag(("int", value)))
    identity = _identity(value)
    return PickledKey(value, identity) if type(identity) is _Tag else identity


def restored_key(key: Any, by_value: bool) -> Any:
    """A key read back from a snapshot as this flinkwin holds it: where keys compare by their
    type too, a key written before they did (a plain number: 1, 1.0 and True were one key then)
    becomes its :class:`PickledKey`, so the state it keys is found again; any other key as
    stored (idempotent)."""
    return key if by_value or type(key) is PickledKey else pickled_key(key)


def float_codes(values: np.ndarray) -> np.ndarray:
    """A float column as int64 codes with ``Double.equals``'s identity: every NaN the same
    code, ``0.0`` and ``-0.0`` different (the bits of each value, NaN made canonical)."""
    canonical = np.where(np.isnan(values), np.nan, values).astype(np.float64)
    return canonical.view(np.int64)


__all__ = [
    "NULL_KEY_MESSAGE",
    "JavaDouble",
    "JavaList",
    "JavaMap",
    "PickledKey",
    "compares_by_value",
    "flink_key",
    "float_codes",
    "pickled_key",
    "plain_key",
    "restored_key",
    "user_key",
]
