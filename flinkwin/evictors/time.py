"""``TimeEvictor``: keeps elements within ``window_size`` of the newest element's timestamp."""

from __future__ import annotations

from typing import Any

from flinkwin.evictors.base import BeforeOrAfterEvictor, TimestampedValue
from flinkwin.longs import WRAP, sub
from flinkwin.time import TimeLike, to_millis


class TimeEvictor(BeforeOrAfterEvictor):
    """Removes every element with ``timestamp <= max_timestamp - window_size`` where
    ``max_timestamp`` is the largest timestamp in the window. Does nothing for elements without
    timestamps."""

    def __init__(self, window_size: int, do_evict_after: bool = False) -> None:
        self.window_size = window_size
        self.do_evict_after = do_evict_after

    @staticmethod
    def of(window_size: TimeLike, do_evict_after: bool = False) -> TimeEvictor:
        return TimeEvictor(to_millis(window_size, "window size"), do_evict_after)

    def evict_before(
        self, elements: list[TimestampedValue], size: int, window: Any, evictor_context: Any
    ) -> None:
        if not self.do_evict_after:
            self.evict(elements, size, getattr(evictor_context, "overflow", WRAP))

    def evict_after(
        self, elements: list[TimestampedValue], size: int, window: Any, evictor_context: Any
    ) -> None:
        if self.do_evict_after:
            self.evict(elements, size, getattr(evictor_context, "overflow", WRAP))

    def evict(self, elements: list[TimestampedValue], size: int, overflow: str = WRAP) -> None:
        """Flink's ``evictCutoff = maxTimestamp - windowSize`` in long arithmetic (wrapped as
        Java does, or a :class:`~flinkwin.longs.LongOverflowError` under ``overflow="error"``)."""
        if not elements or not elements[0].has_timestamp():
            return
        newest = max(e.get_timestamp() for e in elements)
        cutoff = sub(newest, self.window_size, overflow,
                     f"TimeEvictor cutoff {newest} - window size {self.window_size}")
        elements[:] = [e for e in elements if e.get_timestamp() > cutoff]

    def __repr__(self) -> str:
        return f"TimeEvictor({self.window_size})"
