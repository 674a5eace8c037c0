"""Window functions for ``test_bad_input_spark.py``, in a module of their own so the Python
workers import them by reference (as a user's own modules are)."""

from __future__ import annotations

from typing import Any

from flinkwin import ReduceFunction, Trigger, TriggerResult


class PoisonedSum(ReduceFunction):
    """Sums ``v``, but fails on the element with ``v == 13``."""

    def reduce(self, a: Any, b: Any) -> Any:
        if b["v"] == 13 or a["v"] == 13:
            raise ZeroDivisionError("poisoned element 13")
        return {"k": a["k"], "ts": a["ts"], "v": a["v"] + b["v"]}


class FixedSum(ReduceFunction):
    """``PoisonedSum`` fixed."""

    def reduce(self, a: Any, b: Any) -> Any:
        return {"k": a["k"], "ts": a["ts"], "v": a["v"] + b["v"]}


class ProcessingTimeoutTrigger(Trigger):
    """Fires a pane one second (processing time) after its first element: a processing-time
    timer, whatever the assigner's domain."""

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> Any:
        ctx.register_processing_time_timer(ctx.get_current_processing_time() + 1000)
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> Any:
        return TriggerResult.FIRE_AND_PURGE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> Any:
        return TriggerResult.CONTINUE
