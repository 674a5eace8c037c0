"""Keys compare as Flink compares them: with Java's ``equals``.

For ``double``/``float`` keys ``Double.equals`` differs from Python's ``==``: NaN equals NaN (so
every NaN element is one key, whatever batch or worker it arrives in) and ``0.0`` does not
equal ``-0.0`` (two keys). :func:`flink_key` gives such keys (also inside tuple keys) a float
subclass with Java's equality and a matching hash; the value itself is unchanged (a NaN key is
still NaN, ``-0.0`` still ``-0.0``), so user functions and outputs see the key's own value.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np


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


def float_codes(values: np.ndarray) -> np.ndarray:
    """A float column as int64 codes with ``Double.equals``'s identity: every NaN the same
    code, ``0.0`` and ``-0.0`` different (the bits of each value, NaN made canonical)."""
    canonical = np.where(np.isnan(values), np.nan, values).astype(np.float64)
    return canonical.view(np.int64)


__all__ = ["JavaDouble", "JavaList", "JavaMap", "flink_key", "float_codes"]
