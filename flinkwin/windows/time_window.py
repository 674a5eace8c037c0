"""``TimeWindow``: the interval ``[start, end)``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flinkwin.longs import WRAP, to_long
from flinkwin.time import MAX_LONG, MIN_LONG, java_mod
from flinkwin.windows.window import Window


class TimeWindow(tuple, Window):
    """A window covering ``[start, end)``; ``max_timestamp() == end - 1``.

    Implemented as a ``(start, end)`` tuple so that windows hash and compare at C speed; two
    TimeWindows are equal when start and end are equal.
    """

    __slots__ = ()

    def __new__(cls, start: int, end: int) -> TimeWindow:
        return tuple.__new__(cls, (int(start), int(end)))

    @classmethod
    def of(cls, start: int, end: int) -> TimeWindow:
        """Construct from Python ints without conversion (hot paths)."""
        return tuple.__new__(cls, (start, end))

    @property
    def start(self) -> int:
        return tuple.__getitem__(self, 0)

    @property
    def end(self) -> int:
        return tuple.__getitem__(self, 1)

    def get_start(self) -> int:
        return self[0]

    def get_end(self) -> int:
        return self[1]

    getStart = get_start  # noqa: N815
    getEnd = get_end  # noqa: N815

    def max_timestamp(self) -> int:
        """``end - 1`` in Java long arithmetic (an end wrapped to ``MIN_LONG`` gives
        ``MAX_LONG``, as in Flink)."""
        end = self[1]
        return end - 1 if end != MIN_LONG else MAX_LONG

    maxTimestamp = max_timestamp  # noqa: N815

    def intersects(self, other: TimeWindow) -> bool:
        """True if the windows overlap or touch (Flink treats adjacent windows as intersecting)."""
        return self[0] <= other[1] and self[1] >= other[0]

    def cover(self, other: TimeWindow) -> TimeWindow:
        """The smallest window that contains both windows."""
        return TimeWindow(min(self[0], other[0]), max(self[1], other[1]))

    @staticmethod
    def get_window_start_with_offset(
        timestamp: int, offset: int, window_size: int, overflow: str = WRAP
    ) -> int:
        """Start of the window of ``window_size`` (shifted by ``offset``) containing ``timestamp``.

        Flink's code in Java long arithmetic (see :mod:`flinkwin.longs` for ``overflow``): Java's
        remainder, so negative timestamps land exactly where Flink puts them.
        """
        shifted = timestamp - offset
        if not MIN_LONG <= shifted <= MAX_LONG:
            shifted = to_long(shifted, overflow, f"timestamp {timestamp} - window offset {offset}")
        remainder = java_mod(shifted, window_size)
        start = timestamp - (remainder + window_size) if remainder < 0 else timestamp - remainder
        if not MIN_LONG <= start <= MAX_LONG:
            start = to_long(start, overflow, f"start of the window of timestamp {timestamp}")
        return start

    getWindowStartWithOffset = get_window_start_with_offset  # noqa: N815

    @staticmethod
    def merge_windows(windows: Iterable[TimeWindow], callback: Any) -> None:
        """Merge overlapping windows: sort by start, fold intersecting runs, report runs of > 1.

        ``callback`` is a ``MergeCallback`` (``merge(to_be_merged, merge_result)``) or a callable
        with the same arguments. ``to_be_merged`` lists the windows in order of start.
        """
        merge = callback.merge if hasattr(callback, "merge") else callback
        current: TimeWindow | None = None
        members: list[TimeWindow] = []
        merged: list[tuple[TimeWindow, list[TimeWindow]]] = []
        for candidate in sorted(windows, key=lambda w: w[0]):
            if current is None:
                current, members = candidate, [candidate]
            elif current.intersects(candidate):
                current = current.cover(candidate)
                if candidate not in members:
                    members.append(candidate)
            else:
                merged.append((current, members))
                current, members = candidate, [candidate]
        if current is not None:
            merged.append((current, members))
        for result, group in merged:
            if len(group) > 1:
                merge(group, result)

    mergeWindows = merge_windows  # noqa: N815

    def __repr__(self) -> str:
        return f"TimeWindow(start={self[0]}, end={self[1]})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (TimeWindow, (self[0], self[1]))
