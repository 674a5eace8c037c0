"""``ContinuousEventTimeTrigger``: fires every ``interval`` of event time, and at the window end."""

from __future__ import annotations

from typing import Any

from flinkwin.longs import ERROR, WRAP, to_long
from flinkwin.state.descriptors import ReducingStateDescriptor
from flinkwin.time import MAX_LONG, TimeLike, java_mod, to_millis
from flinkwin.triggers.base import OnMergeContext, Trigger, TriggerContext, TriggerResult


def next_fire_time(time: int, interval: int, max_timestamp: int, overflow: str) -> int:
    """``min(time + interval, max_timestamp)``. A ``time + interval`` beyond ``MAX_LONG``
    raises :class:`~flinkwin.longs.LongOverflowError` under either policy: Java's wrapped
    value lies in the past, and Flink's trigger would then fire every ``interval`` from there,
    about 2^64 / interval times, at the next watermark."""
    after = time + interval
    if after > MAX_LONG:
        to_long(after, ERROR, f"next firing {time} + interval {interval}")
    return min(after, max_timestamp)


class ContinuousEventTimeTrigger(Trigger):
    """Fires at the window end (like ``EventTimeTrigger``) and every ``interval`` before it.

    The first element of a pane registers a timer at the next interval boundary after its
    timestamp (``ts - ts % interval + interval``, capped at the window end), kept in the
    ``fire-time`` state; each firing registers the next one. Fires but never purges: wrap it in
    ``PurgingTrigger`` for deltas (seed 004: 3 then 8; purging: 3 then 5).
    """

    def __init__(self, interval: int) -> None:
        if interval <= 0:
            raise ValueError("ContinuousEventTimeTrigger interval must be positive")
        self.interval = interval
        self.state_desc = ReducingStateDescriptor("fire-time", min)

    @staticmethod
    def of(interval: TimeLike) -> ContinuousEventTimeTrigger:
        return ContinuousEventTimeTrigger(to_millis(interval, "interval"))

    def on_element(
        self, element: Any, timestamp: int, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        fire_timestamp = ctx.get_partitioned_state(self.state_desc)
        if fire_timestamp.get() is None:
            start = timestamp - java_mod(timestamp, self.interval)
            self._register_next_fire_timestamp(start, window, ctx, fire_timestamp)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        if time == window.max_timestamp():
            return TriggerResult.FIRE
        fire_timestamp_state = ctx.get_partitioned_state(self.state_desc)
        fire_timestamp = fire_timestamp_state.get()
        if fire_timestamp is not None and fire_timestamp == time:
            fire_timestamp_state.clear()
            self._register_next_fire_timestamp(time, window, ctx, fire_timestamp_state)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        fire_timestamp = ctx.get_partitioned_state(self.state_desc)
        timestamp = fire_timestamp.get()
        if timestamp is not None:
            ctx.delete_event_time_timer(timestamp)
            fire_timestamp.clear()

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        ctx.merge_partitioned_state(self.state_desc)
        next_fire_timestamp = ctx.get_partitioned_state(self.state_desc).get()
        if next_fire_timestamp is not None:
            ctx.register_event_time_timer(next_fire_timestamp)

    def _register_next_fire_timestamp(
        self, time: int, window: Any, ctx: TriggerContext, state: Any
    ) -> None:
        next_fire_timestamp = next_fire_time(
            time, self.interval, window.max_timestamp(), getattr(ctx, "overflow", WRAP)
        )
        state.add(next_fire_timestamp)
        ctx.register_event_time_timer(next_fire_timestamp)

    def __repr__(self) -> str:
        return f"ContinuousEventTimeTrigger({self.interval})"
