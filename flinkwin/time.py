"""Time values as Flink has them: integer milliseconds, Java ``long`` bounds.

Every time or lateness argument in flinkwin accepts :class:`Time`, :class:`Duration`,
:class:`datetime.timedelta` or an integer number of milliseconds; :func:`to_millis` normalises them.
"""

from __future__ import annotations

import datetime
from typing import Union

MAX_LONG = 2**63 - 1
MIN_LONG = -(2**63)


def java_mod(a: int, b: int) -> int:
    """Java's ``a % b`` on longs: the remainder takes the sign of the dividend."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


class Time:
    """Flink's (deprecated but ubiquitous) ``Time``: a span of milliseconds."""

    __slots__ = ("_ms",)

    def __init__(self, ms: int) -> None:
        self._ms = int(ms)

    @staticmethod
    def milliseconds(n: int) -> Time:
        return Time(n)

    @staticmethod
    def seconds(n: int) -> Time:
        return Time(n * 1000)

    @staticmethod
    def minutes(n: int) -> Time:
        return Time(n * 60_000)

    @staticmethod
    def hours(n: int) -> Time:
        return Time(n * 3_600_000)

    @staticmethod
    def days(n: int) -> Time:
        return Time(n * 86_400_000)

    @staticmethod
    def of(n: int, unit: str = "ms") -> Time:
        """``Time.of(3, "s")``; unit one of ms, s, min, h, d (Flink's TimeUnit in short form)."""
        factors = {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
        if unit not in factors:
            raise ValueError(f"unknown time unit {unit!r}; use one of {sorted(factors)}")
        return Time(n * factors[unit])

    def to_milliseconds(self) -> int:
        return self._ms

    toMilliseconds = to_milliseconds  # noqa: N815 (Java's name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (Time, Duration)) and to_millis(other) == self._ms

    def __hash__(self) -> int:
        return hash(self._ms)

    def __repr__(self) -> str:
        return f"Time({self._ms} ms)"


class Duration:
    """``java.time.Duration`` as Flink 1.x+/2.x APIs take it (millisecond precision)."""

    __slots__ = ("_ms",)

    def __init__(self, ms: int) -> None:
        self._ms = int(ms)

    @staticmethod
    def ofMillis(n: int) -> Duration:  # noqa: N802 (Java name)
        return Duration(n)

    @staticmethod
    def ofSeconds(n: int) -> Duration:  # noqa: N802
        return Duration(n * 1000)

    @staticmethod
    def ofMinutes(n: int) -> Duration:  # noqa: N802
        return Duration(n * 60_000)

    @staticmethod
    def ofHours(n: int) -> Duration:  # noqa: N802
        return Duration(n * 3_600_000)

    @staticmethod
    def ofDays(n: int) -> Duration:  # noqa: N802
        return Duration(n * 86_400_000)

    of_millis = ofMillis
    of_seconds = ofSeconds
    of_minutes = ofMinutes
    of_hours = ofHours
    of_days = ofDays

    def to_millis(self) -> int:
        return self._ms

    toMillis = to_millis  # noqa: N815

    def __eq__(self, other: object) -> bool:
        return isinstance(other, (Time, Duration)) and to_millis(other) == self._ms

    def __hash__(self) -> int:
        return hash(self._ms)

    def __repr__(self) -> str:
        return f"Duration({self._ms} ms)"


TimeLike = Union[Time, Duration, datetime.timedelta, int]  # noqa: UP007 (runtime alias)


def to_millis(value: TimeLike, what: str = "time") -> int:
    """Normalise a time argument to integer milliseconds, with a clear error for anything else."""
    if isinstance(value, bool):
        raise TypeError(f"{what} must be Time, Duration, timedelta or int milliseconds, got bool")
    if isinstance(value, Time):
        return value.to_milliseconds()
    if isinstance(value, Duration):
        return value.to_millis()
    if isinstance(value, datetime.timedelta):
        return (value.days * 86_400 + value.seconds) * 1000 + value.microseconds // 1000
    if isinstance(value, int) or type(value).__name__ in ("int64", "int32"):
        return int(value)
    raise TypeError(
        f"{what} must be Time, Duration, timedelta or int milliseconds, "
        f"got {type(value).__name__}: {value!r}"
    )
