"""The bytes a key selector's key is hashed by into its key group: its pickle, made independent
of which of its values happen to be the same Python object.

Pickle's memo writes an object met a second time as a reference to the first: the key
``(s, s)`` (one string object twice, e.g. ``(e.user, e.user)``) pickles differently from
``(s, t)`` with ``t == s`` another object (``(e.user, e.peer)`` with equal values). Hashing those
bytes would put one key in two key groups, so two states, and silently wrong windows.

:func:`key_bytes` hashes every key by the pickle of its *canonical form*: each string, bytes,
tuple (``Row``), decimal and date/time value a distinct object, except those CPython always
shares (the empty string, one-character Latin-1 strings, ``b""`` and one-byte bytes: one object
per value, as every conversion from Arrow or a slice returns them) and the NaN and ``-0.0``
keys of :func:`flinkwin.keys.flink_key`. Keys that already have that form (no value object
met twice: nearly every key, and every key without a repeated value) pickle exactly as before,
so a checkpoint's keys stay in their key groups; only a key whose pickle referred back to a
value it had already written moves (such a key could already be split between two groups).
Classes, Row field names and time zones are written as pickle writes them. A ``BIG_DEC`` key
(:class:`flinkwin.declared_keys.JavaBigDecimal`) is written as the ``Decimal`` it is (its key
group is the one it had before keys of that type compared as Java's ``BigDecimal``).
"""

from __future__ import annotations

import copy
import datetime
import decimal
import pickle
from typing import Any

from flinkwin.declared_keys import JavaBigDecimal

#: The pickle protocol of key bytes (fixed: the bytes decide key groups kept in checkpoints).
PROTOCOL = 4
_DATES = (datetime.date, datetime.time, datetime.timedelta)  # datetime is a date
_NUMBERS = frozenset((int, float, bool, type(None)))  # never memoized
_REDUCED = (decimal.Decimal, *_DATES)  # value objects pickled by reduce, memoized


def key_bytes(key: Any) -> bytes:
    """The pickle of ``key``'s canonical form (see module docstring)."""
    if isinstance(key, tuple) and _not_canonical(key):
        key = _canonical(key)
    elif type(key) is JavaBigDecimal:
        key = decimal.Decimal(key)
    return pickle.dumps(key, protocol=PROTOCOL)


def _not_canonical(key: tuple[Any, ...]) -> bool:
    """True when pickling ``key`` would refer back to a value object (one met twice, or met
    besides a Row's field names), or it holds another object than CPython's shared one for a
    shared value."""
    if type(key) is tuple:  # the common key: numbers and strings of 2 chars or more
        strings = 0
        ids = set()
        for value in key:
            kind = type(value)
            if kind is str and len(value) > 1:
                strings += 1
                ids.add(id(value))
            elif kind not in _NUMBERS:
                break
        else:
            return len(ids) != strings
    seen: set[int] = set()  # value objects pickle memoizes
    fixed: set[int] = set()  # objects shared by construction (Row field names)
    stack: list[Any] = [key]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in _NUMBERS:
            continue
        if kind is str or kind is bytes:
            if len(value) <= 1 and _shared_atom(value):
                if _copy_atom(value) is not value:
                    return True
                continue
        elif isinstance(value, tuple):
            if not value:
                continue  # () is written without the memo
            fields = getattr(kind, "__fields__", None)
            if fields is not None:
                for name in (fields, *fields):
                    if id(name) in seen:
                        return True
                    fixed.add(id(name))
            stack.extend(value)
        elif type(value) is JavaBigDecimal:
            return True
        elif not isinstance(value, _REDUCED):
            continue  # as it is: numbers, classes, the one JavaDouble object per NaN / -0.0
        if id(value) in seen or id(value) in fixed:
            return True
        seen.add(id(value))
    return False


def _shared_atom(value: str | bytes) -> bool:
    """True for a str or bytes CPython keeps one object of (empty, one Latin-1 char, one byte)."""
    return type(value) is bytes or not value or ord(value) < 256


def _copy_atom(value: str | bytes) -> str | bytes:
    """A new object equal to ``value``, or CPython's shared one for a :func:`_shared_atom`."""
    if type(value) is str:
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
    return value.decode("latin-1").encode("latin-1")  # type: ignore[union-attr]


def _canonical(value: Any) -> Any:
    """``value`` with every value object distinct (see module docstring)."""
    kind = type(value)
    if kind is str or kind is bytes:
        return _copy_atom(value)
    if isinstance(value, tuple):
        if not value:
            return value
        return tuple.__new__(kind, [_canonical(v) for v in value])
    if isinstance(value, decimal.Decimal):
        return decimal.Decimal(str(value))
    if isinstance(value, _DATES):
        return copy.copy(value)
    return value


__all__ = ["PROTOCOL", "key_bytes"]
