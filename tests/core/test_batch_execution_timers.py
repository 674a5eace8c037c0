"""BATCH mode's end of input quiesces the timer services: a timer registered by a timer callback
is ignored, as in Flink's ``BatchExecutionInternalTimeService`` (ported from its tests
``testIgnoringEventTimeTimersFromWithinCallback`` and
``testIgnoringProcessingTimeTimersFromWithinCallback``), for a window trigger, a keyed process
function and the nodes of a graph, each after all of its input."""

from __future__ import annotations

from typing import Any

from flinkwin import ContinuousEventTimeTrigger, Time, TumblingEventTimeWindows
from flinkwin.functions.builtin import sum_of
from flinkwin.operator import TimerQueue, WindowOperator
from flinkwin.operator.timer_service import quiesce_timers
from flinkwin.time import MAX_LONG


class _Callbacks:
    """An operator whose every fired timer registers another one a second later."""

    def __init__(self) -> None:
        self.event_timers = TimerQueue()
        self.processing_timers = TimerQueue()
        self.fired: list[tuple[str, int]] = []

    def advance(self, queue: TimerQueue, domain: str) -> None:
        while (timer := queue.pop_due(MAX_LONG)) is not None:
            self.fired.append((domain, timer[0]))
            queue.register(timer[0] + 1_000, "k", None)


def test_ignoring_event_time_timers_from_within_callback() -> None:
    op = _Callbacks()
    op.event_timers.register(10, "k", None)
    quiesce_timers(op)
    op.advance(op.event_timers, "event")
    assert op.fired == [("event", 10)]
    assert len(op.event_timers) == 0


def test_ignoring_processing_time_timers_from_within_callback() -> None:
    op = _Callbacks()
    op.processing_timers.register(10, "k", None)
    quiesce_timers(op)
    op.advance(op.processing_timers, "processing")
    assert op.fired == [("processing", 10)]
    assert len(op.processing_timers) == 0


def test_a_quiesced_queue_still_deletes_timers() -> None:
    queue = TimerQueue()
    queue.register(10, "k", None)
    queue.quiesce()
    queue.delete(10, "k", None)
    assert queue.pop_due(MAX_LONG) is None


def _continuous(batch: bool) -> list[Any]:
    op = WindowOperator(
        TumblingEventTimeWindows.of(Time.minutes(1)), sum_of("v"), key_selector="k",
        trigger=ContinuousEventTimeTrigger.of(Time.seconds(10)),
    )
    op.process_element({"k": "a", "v": 1}, 5_000)
    if batch:
        quiesce_timers(op)
    op.advance_watermark(MAX_LONG)
    return op.drain_output()


def test_a_continuous_trigger_fires_twice_at_the_end_of_batch_input_and_on_in_streaming() -> None:
    """One element at 5 s in [0, 60 s): its first fire timer (10 s) and the window's end
    timer fire; the next fire timers, registered by ``on_event_time``, are ignored in BATCH
    mode (2 firings) and fire on a bounded stream in STREAMING mode (6)."""
    assert len(_continuous(batch=True)) == 2
    assert len(_continuous(batch=False)) == 6
