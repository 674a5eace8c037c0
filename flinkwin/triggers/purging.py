"""``PurgingTrigger``: turns any trigger's FIRE into FIRE_AND_PURGE."""

from __future__ import annotations

from typing import Any

from flinkwin.triggers.base import OnMergeContext, Trigger, TriggerContext, TriggerResult


def _purging(result: TriggerResult) -> TriggerResult:
    return TriggerResult.FIRE_AND_PURGE if result.is_fire() else result


class PurgingTrigger(Trigger):
    """Delegates to ``nested_trigger``; whenever it fires, the window contents are purged too."""

    def __init__(self, nested_trigger: Trigger) -> None:
        if not isinstance(nested_trigger, Trigger):
            raise TypeError(f"PurgingTrigger needs a Trigger, got {type(nested_trigger).__name__}")
        self.nested_trigger = nested_trigger

    @staticmethod
    def of(nested_trigger: Trigger) -> PurgingTrigger:
        return PurgingTrigger(nested_trigger)

    def on_element(
        self, element: Any, timestamp: int, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        return _purging(self.nested_trigger.on_element(element, timestamp, window, ctx))

    def on_event_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return _purging(self.nested_trigger.on_event_time(time, window, ctx))

    def on_processing_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return _purging(self.nested_trigger.on_processing_time(time, window, ctx))

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        self.nested_trigger.clear(window, ctx)

    def can_merge(self) -> bool:
        return self.nested_trigger.can_merge()

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        self.nested_trigger.on_merge(window, ctx)

    def __repr__(self) -> str:
        return f"PurgingTrigger({self.nested_trigger!r})"
