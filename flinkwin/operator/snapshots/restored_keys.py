"""The keys a snapshot holds, read back as this flinkwin holds them: one check for every operator.

Under a declared key type a key is the value PyFlink's coder of that type round-trips it to
(:func:`flinkwin.declared_keys.declared_key`). An earlier flinkwin held some keys in another
form (an ``IntEnum`` member under ``Types.INT()``, a float a float32 does not hold under
``Types.FLOAT()``, a ``Row`` under ``Types.TUPLE``, a zoned datetime under
``Types.SQL_TIMESTAMP()``...; docs/operations.md lists them). Such a key's new elements are
hashed into their key group by the converted form, maybe another group than the one holding the
key's state: its windows would lose their earlier elements and the restored key fire apart,
without an error. So a snapshot holding such a key is refused when it is restored
(:class:`IncompatibleKeyError`, failing the micro-batch); keys already in their type's form
restore as stored, most at the cost of one pass over their classes (:func:`restore_keys`).
"""

from __future__ import annotations

import datetime
import decimal
import operator
from typing import Any

import numpy as np
import pandas as pd

from flinkwin.declared_keys import _HELD_AS, JavaBigDecimal, declared_key, key_type_mismatch
from flinkwin.keys import plain_key, restored_key
from flinkwin.operator.snapshots import SnapshotRestoreError
from flinkwin.record import Row, record_class

#: How many refused keys an :class:`IncompatibleKeyError` shows.
SHOWN = 3
#: What :func:`declared_form` returns for a key its type holds as another key.
REFUSED: Any = object()


class IncompatibleKeyError(SnapshotRestoreError):
    """A snapshot holds keys in a form this flinkwin keys differently under their declared key
    type (see module docstring): start the pipeline from a new checkpoint location."""


def restore_keys(keys: list[Any], by_value: bool, key_type: Any, where: str) -> list[Any]:
    """``keys`` read back from a snapshot of the operator ``where`` as this flinkwin holds them:
    without a declared ``key_type`` :func:`flinkwin.keys.restored_key` of each; with one, each
    as :func:`declared_form` finds it (most often the stored keys themselves, after one pass
    over their classes), else :class:`IncompatibleKeyError` naming the keys it refuses."""
    if by_value and key_type is None:
        return _plain_durations(keys)
    if key_type is None or not by_value:
        return [restored_key(k, by_value) for k in keys]
    if _kept_as_stored(keys, key_type):
        return keys
    restored = [_checked(k, key_type) for k in keys]
    refused = [_refusal(k, key_type) for k, r in zip(keys, restored) if r is REFUSED]
    if refused:
        raise IncompatibleKeyError(_message(refused, key_type, where))
    return restored


def _plain_durations(keys: list[Any]) -> list[Any]:
    """Column keys as this flinkwin builds them: a day-time interval as ``datetime.timedelta``,
    which flinkwin up to a49b90f held as the ``pandas.Timedelta`` PySpark handed it (equal,
    same hash and key group: the key is unchanged, only the class functions see). The list
    itself when no key is, or holds, one."""
    classes = set(map(type, keys))
    if not any(c is pd.Timedelta or issubclass(c, tuple) for c in classes):
        return keys
    return [_plain_duration(k) for k in keys]


def _plain_duration(key: Any) -> Any:
    if type(key) is pd.Timedelta:
        return key.to_pytimedelta()  # exact: Spark's intervals are whole microseconds
    if isinstance(key, tuple) and any(type(k) is pd.Timedelta for k in key):
        return tuple.__new__(type(key), [_plain_duration(k) for k in key])
    return key


def declared_form(key: Any, key_type: Any) -> Any:
    """``key`` (from a snapshot) as ``key_type`` holds it, when that is the same key: one state
    key, hashed by the same bytes into the same key group (else :data:`REFUSED`). That is the
    key itself when it is of the class the type decodes to (a ``Row`` by its field names)
    holding the converted value (same zone, fold, decimal scale and sign; a ``SQL_TIMESTAMP``
    naive and to the millisecond, whose conversion is not idempotent before 1970); numpy
    scalars count as the Python values they stand for (as key groups hash them) and a
    ``Decimal`` as its :class:`~flinkwin.declared_keys.JavaBigDecimal`, which they become.
    ``key`` must pass :func:`~flinkwin.declared_keys.key_type_mismatch`."""
    name = key_type.name
    if name == "SQL_TIMESTAMP":
        canonical = type(key) is datetime.datetime and key.tzinfo is None and not key.fold
        return key if canonical and key.microsecond % 1000 == 0 else REFUSED
    if name in _RECORDS:
        if type(key) is not _record_class(key_type):
            return REFUSED
        record: tuple[Any, ...] = key
        fields = key_type.args[1] if name == "ROW_NAMED" else key_type.args[0]
        items = [v if v is None and name != "TUPLE" else declared_form(v, t)
                 for v, t in zip(record, fields)]
        if any(i is REFUSED for i in items):
            return REFUSED
        if all(map(operator.is_, items, record)):
            return key
        return tuple.__new__(type(record), items)
    held = declared_key(key, key_type)
    return held if held is key or _same(key, held) else REFUSED


def _same(stored: Any, held: Any) -> bool:
    """``stored`` and ``held``, a declared type's value, are one key of the same bytes."""
    if isinstance(stored, np.generic):
        stored = plain_key(stored)
    kind = type(held)
    if kind is JavaBigDecimal:  # hashed as the Decimal it is: its str() holds scale and sign
        return type(stored) in (decimal.Decimal, JavaBigDecimal) and str(stored) == str(held)
    if type(stored) is not kind:
        return False
    if getattr(held, "fold", 0) != getattr(stored, "fold", 0):  # pickled with the time
        return False
    return bool(stored == held)


def _checked(key: Any, key_type: Any) -> Any:
    """:func:`declared_form` of a key its type holds, else :data:`REFUSED`."""
    try:
        if key_type_mismatch(key, key_type) is not None:
            return REFUSED
        return declared_form(key, key_type)
    except Exception:  # noqa: BLE001 - a stored value its type cannot convert: refused by name
        return REFUSED


def _refusal(key: Any, key_type: Any) -> str:
    """What ``key`` is now, for the error."""
    stored = f"{key!r} ({_class_name(key)})"
    problem = key_type_mismatch(key, key_type)
    if problem is not None:
        return f"{stored}, not a key of that type: {problem}"
    try:
        held = declared_key(key, key_type)
    except Exception as exc:  # noqa: BLE001 - named in the error
        return f"{stored}, which this flinkwin cannot convert ({type(exc).__name__}: {exc})"
    return f"{stored}, now the key {held!r} ({_class_name(held)})"


def _record_class(key_type: Any) -> type[tuple[Any, ...]]:
    """The class of a ``TUPLE``/``ROW``/``ROW_NAMED`` type's keys."""
    if key_type.name == "TUPLE":
        return tuple
    if key_type.name == "ROW":
        return Row
    return record_class(tuple(key_type.args[0]))


def _kept_as_stored(keys: list[Any], key_type: Any) -> bool:
    """True when every key is surely already as ``key_type`` holds it (one pass over their
    classes): each of the class its type decodes to (an ``int`` under ``INT``...; a record of
    its type's class holding such fields), or a plain float, neither NaN nor ``-0.0``, under
    ``DOUBLE`` (held by ``FLOAT`` exactly: one vectorized test). False: look at each key."""
    name = key_type.name
    kinds = set(map(type, keys))
    held = _HELD_AS.get(name)
    if held is not None:
        return kinds <= {held}
    if name == "BIG_DEC":  # as declared_key makes them (an earlier flinkwin's are Decimals)
        return kinds <= {JavaBigDecimal}
    if name in ("FLOAT", "DOUBLE"):  # NaN and -0.0 are JavaDouble keys
        if not kinds <= {float}:
            return False
        values = np.fromiter(keys, np.float64, len(keys))
        kept = ~np.isnan(values) & ~((values == 0.0) & np.signbit(values))
        if name == "FLOAT":
            with np.errstate(over="ignore"):
                kept &= values.astype(np.float32).astype(np.float64) == values
        return bool(kept.all())
    if name in _RECORDS and kinds <= {_record_class(key_type)}:
        types = key_type.args[1] if name == "ROW_NAMED" else key_type.args[0]
        fields = tuple(_HELD_AS.get(t.name) for t in types)
        return None not in fields and {tuple(map(type, k)) for k in keys} <= {fields}
    return False


_RECORDS = frozenset(("TUPLE", "ROW", "ROW_NAMED"))


def _message(refused: list[str], key_type: Any, where: str) -> str:
    shown = "; ".join(refused[:SHOWN])
    more = f" (and {len(refused) - SHOWN} more)" if len(refused) > SHOWN else ""
    return (
        f"{where}: cannot restore the state in this checkpoint under the declared key type "
        f"{type_text(key_type)}: it holds the key {shown}{more}. This flinkwin version keys "
        f"{key_type.name} keys differently from the flinkwin that wrote the checkpoint (a key is "
        "now the value PyFlink's coder of its type round-trips it to): such a key's new "
        "elements are hashed by the new form, maybe into another key group than its state, so "
        "its windows, keyed state and timers would be split without an error. Start the "
        "pipeline from a new checkpoint location (see docs/operations.md, \"Compatible and "
        "incompatible changes\")."
    )


def _class_name(value: Any) -> str:
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def type_text(key_type: Any) -> str:
    """``key_type`` as written in code, with its fields (``Types.TUPLE([Types.INT(), ...])``;
    a ``TypeInformation``'s ``repr`` omits them)."""
    args = getattr(key_type, "args", ())
    if not args:
        return repr(key_type)
    parts = [
        "[" + ", ".join(type_text(a) if hasattr(a, "args") else repr(a) for a in arg) + "]"
        if isinstance(arg, (list, tuple)) else repr(arg)
        for arg in args
    ]
    return f"Types.{key_type.name}({', '.join(parts)})"


__all__ = [
    "REFUSED",
    "SHOWN",
    "IncompatibleKeyError",
    "declared_form",
    "restore_keys",
    "type_text",
]
