"""``CountEvictor``: keeps only the newest ``max_count`` elements."""

from __future__ import annotations

from flinkwin.evictors.base import BeforeOrAfterEvictor, TimestampedValue


class CountEvictor(BeforeOrAfterEvictor):
    """Keeps the last ``max_count`` elements (by insertion order), before the window function
    or, with ``do_evict_after``, after it. ``countWindow(size, slide)`` uses it (seed 003)."""

    def __init__(self, max_count: int, do_evict_after: bool = False) -> None:
        self.max_count = int(max_count)
        self.do_evict_after = do_evict_after

    @staticmethod
    def of(max_count: int, do_evict_after: bool = False) -> CountEvictor:
        return CountEvictor(max_count, do_evict_after)

    def evict(self, elements: list[TimestampedValue], size: int) -> None:
        if size > self.max_count:
            del elements[: size - self.max_count]

    def __repr__(self) -> str:
        return f"CountEvictor({self.max_count})"
