"""``ContinuousProcessingTimeTrigger``: fires every ``interval`` of processing time."""

from __future__ import annotations

from typing import Any

from flinkwin.longs import WRAP
from flinkwin.state.descriptors import ReducingStateDescriptor
from flinkwin.time import TimeLike, java_mod, to_millis
from flinkwin.triggers.base import OnMergeContext, Trigger, TriggerContext, TriggerResult
from flinkwin.triggers.continuous_event_time import next_fire_time


class ContinuousProcessingTimeTrigger(Trigger):
    """The first element of a pane registers a processing-time timer at the next interval
    boundary after the current processing time (capped at the window end); each firing
    registers the next one, except the firing at the window's end (``max_timestamp``). Fires but
    never purges.

    At the window's end Flink 2.3 registers the same timestamp again, and once processing time
    has passed an event-time window's end that timer fires again at once, in a loop that never
    ends (FLINK-35069). flinkwin takes the fix proposed there (apache/flink#24647): the firing at
    ``max_timestamp`` registers nothing; an element arriving later registers a timer at the
    window's end again, which fires at the next processing-time advance."""

    def __init__(self, interval: int) -> None:
        if interval <= 0:
            raise ValueError("ContinuousProcessingTimeTrigger interval must be positive")
        self.interval = interval
        self.state_desc = ReducingStateDescriptor("fire-time", min)

    @staticmethod
    def of(interval: TimeLike) -> ContinuousProcessingTimeTrigger:
        return ContinuousProcessingTimeTrigger(to_millis(interval, "interval"))

    def on_element(
        self, element: Any, timestamp: int, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        fire_timestamp = ctx.get_partitioned_state(self.state_desc)
        now = ctx.get_current_processing_time()
        if fire_timestamp.get() is None:
            start = now - java_mod(now, self.interval)
            self._register_next_fire_timestamp(start, window, ctx, fire_timestamp)
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        fire_timestamp = ctx.get_partitioned_state(self.state_desc)
        if fire_timestamp.get() == time:
            fire_timestamp.clear()
            if time != window.max_timestamp():  # FLINK-35069: no timer loop at the window's end
                self._register_next_fire_timestamp(time, window, ctx, fire_timestamp)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        fire_timestamp = ctx.get_partitioned_state(self.state_desc)
        timestamp = fire_timestamp.get()
        if timestamp is not None:
            ctx.delete_processing_time_timer(timestamp)
            fire_timestamp.clear()

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        ctx.merge_partitioned_state(self.state_desc)
        next_fire_timestamp = ctx.get_partitioned_state(self.state_desc).get()
        if next_fire_timestamp is not None:
            ctx.register_processing_time_timer(next_fire_timestamp)

    def _register_next_fire_timestamp(
        self, time: int, window: Any, ctx: TriggerContext, state: Any
    ) -> None:
        next_fire_timestamp = next_fire_time(
            time, self.interval, window.max_timestamp(), getattr(ctx, "overflow", WRAP)
        )
        state.add(next_fire_timestamp)
        ctx.register_processing_time_timer(next_fire_timestamp)

    def __repr__(self) -> str:
        return f"ContinuousProcessingTimeTrigger({self.interval})"
