"""Firing metadata: what each firing of a (key, window) was, as Beam's ``PaneInfo`` describes a
pane (see ``docs/firings.md`` for the exact definitions).

A :class:`FiringTracker` keeps one record per (key, window) that has received an element:
``(next index, non-early firings so far, on-time firing pending)``. The record is created by the
window's first element (the on-time firing is pending if that element arrived before the
window's clock reached its max timestamp, as Beam's end-of-window hold), advanced by each firing
and dropped with the rest of the window's state at its cleanup time, or when the window is merged
away (the merge result starts afresh, as Beam's ``ReduceFnRunner`` clears merged panes).
Purging the window's contents leaves the record alone: the index keeps counting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

EARLY, ON_TIME, LATE = "EARLY", "ON_TIME", "LATE"

#: a (key, window) pair
Slot = tuple[Any, Any]
#: (next index, non-early firings so far, on-time firing pending)
Record = tuple[int, int, bool]


@dataclass(frozen=True)
class Firing:
    """What one firing of a window was (Beam's ``PaneInfo``).

    :ivar timing: ``"EARLY"`` (the window's clock had not reached its max timestamp),
        ``"ON_TIME"`` (the first firing after it did, for a window that had elements before),
        or ``"LATE"`` (any later firing, or every firing of a window whose first element came
        after its end).
    :ivar index: 0 for the window's first firing, then 1, 2, ... (per key and window).
    :ivar nonspeculative_index: -1 for an EARLY firing; else 0 for the first non-early firing,
        then 1, 2, ...
    :ivar is_first: ``index == 0``.
    :ivar is_last: the window's state is cleared right after this firing (its cleanup time):
        no later firing of this key and window can follow.
    """

    timing: str
    index: int
    nonspeculative_index: int
    is_first: bool
    is_last: bool

    # Beam's Java names
    def getTiming(self) -> str:  # noqa: N802
        return self.timing

    def getIndex(self) -> int:  # noqa: N802
        return self.index

    def getNonSpeculativeIndex(self) -> int:  # noqa: N802
        return self.nonspeculative_index

    def isFirst(self) -> bool:  # noqa: N802
        return self.is_first

    def isLast(self) -> bool:  # noqa: N802
        return self.is_last


class Fired:
    """A main output paired with the firing that produced it (for firing columns)."""

    __slots__ = ("firing", "value")

    def __init__(self, value: Any, firing: Firing) -> None:
        self.value = value
        self.firing = firing


class FiringTracker:
    """The firing records of one operator's (key, window)s (see module docstring)."""

    def __init__(self) -> None:
        self.records: dict[Slot, Record] = {}

    def on_element(self, slot: Slot, max_timestamp: int, clock: int) -> None:
        """An element entered the window: create its record on the first one."""
        if slot not in self.records:
            self.records[slot] = (0, 0, clock < max_timestamp)

    def fire(self, slot: Slot, max_timestamp: int, clock: int, is_last: bool) -> Firing:
        """The firing of ``slot`` at ``clock`` (the window's clock as the firing saw it),
        recorded."""
        index, non_early, pending = self.records.get(slot, (0, 0, clock < max_timestamp))
        if clock < max_timestamp:
            timing, nonspeculative = EARLY, -1
        else:
            timing = ON_TIME if pending else LATE
            nonspeculative, non_early, pending = non_early, non_early + 1, False
        self.records[slot] = (index + 1, non_early, pending)
        return Firing(timing, index, nonspeculative, index == 0, is_last)

    def merge(self, key: Any, result: Any, merged: list[Any], clock: int) -> None:
        """``merged`` windows of ``key`` became ``result``: the merged-away windows' records are
        dropped; a new result window starts at index 0, its on-time firing pending if one of
        theirs was or its end is still ahead of ``clock``."""
        pending = clock < result.max_timestamp()
        for window in merged:
            if window != result:
                record = self.records.pop((key, window), None)
                pending = pending or (record is not None and record[2])
        old = self.records.get((key, result))
        if old is None:
            self.records[(key, result)] = (0, 0, pending)
        elif pending and old[1] == 0:
            self.records[(key, result)] = (old[0], 0, True)

    def clear(self, slot: Slot) -> None:
        self.records.pop(slot, None)


__all__ = ["EARLY", "LATE", "ON_TIME", "Fired", "Firing", "FiringTracker"]
