"""``DeltaEvictor``: keeps elements close (by a delta function) to the newest element."""

from __future__ import annotations

from typing import Any

from flinkwin.evictors.base import BeforeOrAfterEvictor, TimestampedValue
from flinkwin.triggers.delta import delta_callable


class DeltaEvictor(BeforeOrAfterEvictor):
    """Removes every element whose ``delta_function(element, last) >= threshold``, where
    ``last`` is the newest element in the window."""

    def __init__(self, threshold: float, delta_function: Any, do_evict_after: bool = False):
        self.threshold = threshold
        self.delta_function = delta_callable(delta_function)
        self.do_evict_after = do_evict_after

    @staticmethod
    def of(threshold: float, delta_function: Any, do_evict_after: bool = False) -> DeltaEvictor:
        return DeltaEvictor(threshold, delta_function, do_evict_after)

    def evict(self, elements: list[TimestampedValue], size: int) -> None:
        if not elements:
            return
        last = elements[-1].get_value()
        elements[:] = [
            e for e in elements if self.delta_function(e.get_value(), last) < self.threshold
        ]

    def __repr__(self) -> str:
        return f"DeltaEvictor({self.threshold})"
