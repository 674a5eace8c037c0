"""``NeverTrigger`` (GlobalWindows' default) and ``EndOfStreamTrigger`` (fires at end of input)."""

from __future__ import annotations

from typing import Any

from flinkwin.time import MAX_LONG
from flinkwin.triggers.base import OnMergeContext, Trigger, TriggerContext, TriggerResult


class NeverTrigger(Trigger):
    """Never fires; the default of ``GlobalWindows.create()``."""

    @staticmethod
    def create() -> NeverTrigger:
        return NeverTrigger()

    def on_element(
        self, element: Any, timestamp: int, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        return None

    def __repr__(self) -> str:
        return "NeverTrigger()"


class EndOfStreamTrigger(Trigger):
    """Registers an event-time timer at ``Long.MAX_VALUE`` and FIREs when the end-of-input
    watermark reaches it; the default of ``GlobalWindows.createWithEndOfStreamTrigger()``."""

    def on_element(
        self, element: Any, timestamp: int, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == MAX_LONG else TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        return None

    def __repr__(self) -> str:
        return "EndOfStreamTrigger()"
