"""``ProcessingTimeTrigger``: fires once when the clock passes the end of the window."""

from __future__ import annotations

from typing import Any

from flinkwin.triggers.base import OnMergeContext, Trigger, TriggerContext, TriggerResult


class ProcessingTimeTrigger(Trigger):
    """Registers a processing-time timer at ``window.max_timestamp()``; FIREs when it goes off.
    Default trigger of the processing-time assigners."""

    @staticmethod
    def create() -> ProcessingTimeTrigger:
        return ProcessingTimeTrigger()

    def on_element(
        self, element: Any, timestamp: int, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        ctx.register_processing_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        ctx.delete_processing_time_timer(window.max_timestamp())

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        # Only register if the clock is not yet past the merged window's end.
        if window.max_timestamp() > ctx.get_current_processing_time():
            ctx.register_processing_time_timer(window.max_timestamp())

    def __repr__(self) -> str:
        return "ProcessingTimeTrigger()"
