"""``CountTrigger``: fires each time a pane has collected ``max_count`` more elements."""

from __future__ import annotations

import operator
from typing import Any

from flinkwin.state.descriptors import ReducingStateDescriptor
from flinkwin.triggers.base import OnMergeContext, Trigger, TriggerContext, TriggerResult


class CountTrigger(Trigger):
    """Counts elements per pane in the ``count`` state; at ``max_count`` it resets the count
    and FIREs (without purging: wrap in ``PurgingTrigger`` for tumbling count windows).
    As in Flink, any count is accepted: one of 1 or less fires on every element."""

    def __init__(self, max_count: int) -> None:
        self.max_count = int(max_count)
        self.state_desc = ReducingStateDescriptor("count", operator.add)

    @staticmethod
    def of(max_count: int) -> CountTrigger:
        return CountTrigger(int(max_count))

    def on_element(
        self, element: Any, timestamp: int, window: Any, ctx: TriggerContext
    ) -> TriggerResult:
        count = ctx.get_partitioned_state(self.state_desc)
        count.add(1)
        if count.get() >= self.max_count:
            count.clear()
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: TriggerContext) -> None:
        ctx.get_partitioned_state(self.state_desc).clear()

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Any, ctx: OnMergeContext) -> None:
        ctx.merge_partitioned_state(self.state_desc)

    def __repr__(self) -> str:
        return f"CountTrigger({self.max_count})"
