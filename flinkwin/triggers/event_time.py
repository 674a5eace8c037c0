"""``EventTimeTrigger``: fires once when the watermark passes the end of the window."""

from __future__ import annotations

from typing import Any

from flinkwin.triggers.base import OnMergeContext, Trigger, TriggerContext, TriggerResult


class EventTimeTrigger(Trigger):
    """Registers a timer at ``window.max_timestamp()`` and FIREs when it goes off.

    An element added to a window the watermark has already passed (allowed lateness) FIREs
    immediately. Default trigger of the event-time assigners.
    """

    @staticmethod
    def create() -> EventTimeTrigger:
        return EventTimeTrigger()

    def on_element(
        self, element: Any, timestamp: int, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        ctx.delete_event_time_timer(window.max_timestamp())

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        # Only register if the watermark is not yet past the merged window's end; otherwise
        # on_element fires and a timer here would fire the window twice.
        if window.max_timestamp() > ctx.get_current_watermark():
            ctx.register_event_time_timer(window.max_timestamp())

    def __repr__(self) -> str:
        return "EventTimeTrigger()"
