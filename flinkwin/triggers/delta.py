"""``DeltaTrigger``: fires when an element moved more than a threshold from the last firing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flinkwin.state.descriptors import ValueStateDescriptor
from flinkwin.triggers.base import Trigger, TriggerContext, TriggerResult


def delta_callable(delta_function: Any) -> Callable[[Any, Any], float]:
    """A ``(old, new) -> float`` callable from a callable or an object with ``get_delta``."""
    if hasattr(delta_function, "get_delta"):
        return delta_function.get_delta
    if hasattr(delta_function, "getDelta"):
        return delta_function.getDelta
    if callable(delta_function):
        return delta_function
    raise TypeError("delta_function must be callable(old, new) -> float or have get_delta()")


class DeltaTrigger(Trigger):
    """The first element of a pane is remembered (``last-element`` state) without firing; each
    later element FIREs when ``delta_function(last, element) > threshold`` and becomes the new
    reference. Seed 004's car example: sections of 10 km."""

    def __init__(self, threshold: float, delta_function: Any) -> None:
        self.threshold = threshold
        self.delta_function = delta_callable(delta_function)
        self.state_desc = ValueStateDescriptor("last-element")

    @staticmethod
    def of(threshold: float, delta_function: Any, *_serializer: Any) -> DeltaTrigger:
        return DeltaTrigger(threshold, delta_function)

    def on_element(
        self, element: Any, timestamp: int, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        last_element = ctx.get_partitioned_state(self.state_desc)
        if last_element.value() is None:
            last_element.update(element)
            return TriggerResult.CONTINUE
        if self.delta_function(last_element.value(), element) > self.threshold:
            last_element.update(element)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        ctx.get_partitioned_state(self.state_desc).clear()

    def __repr__(self) -> str:
        return f"DeltaTrigger({self.threshold})"
