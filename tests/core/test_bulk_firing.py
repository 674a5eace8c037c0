"""Bulk firing of EventTimeTrigger and ContinuousEventTimeTrigger timers gives exactly what
per-timer firing gives: outputs, late outputs, pending timers in order, trigger state."""

from __future__ import annotations

import random
from typing import Any

import pytest

from flinkwin import (
    AggregateFunction,
    ContinuousEventTimeTrigger,
    EventTimeTrigger,
    OutputTag,
    ProcessWindowFunction,
    PurgingTrigger,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
)
from flinkwin.functions.builtin import sum_of
from flinkwin.testing import WindowOperatorHarness

LATE = OutputTag("late")


class CountAgg(AggregateFunction):
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, acc: int) -> int:
        return acc + 1

    def get_result(self, acc: int) -> int:
        return acc

    def merge(self, a: int, b: int) -> int:
        return a + b


SIDE = OutputTag("odd counts")


class SideAgg(CountAgg):
    """Odd counts go to a side output as ``(OutputTag, value)`` results; a count of 5 fails."""

    def get_result(self, acc: int) -> Any:
        if acc == 5:
            raise RuntimeError("seven")
        return (SIDE, acc) if acc % 2 else acc


class Listing(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield key, context.window().start, [e["v"] for e in elements]

    def clear(self, context: Any) -> None:
        context.global_state()  # reachable at cleanup


CONFIGS = {
    "tumbling-sum": lambda: (TumblingEventTimeWindows.of(10), sum_of("v"), None),
    "sliding-aggregate": lambda: (SlidingEventTimeWindows.of(10, 4), CountAgg(), None),
    "tumbling-aggregate-side-output": lambda: (TumblingEventTimeWindows.of(40), SideAgg(), None),
    "tumbling-process": lambda: (TumblingEventTimeWindows.of(10), Listing(), None),
    "purging-event-time": lambda: (
        TumblingEventTimeWindows.of(10),
        sum_of("v"),
        PurgingTrigger.of(EventTimeTrigger.create()),
    ),
    "continuous-sum": lambda: (
        TumblingEventTimeWindows.of(20), sum_of("v"), ContinuousEventTimeTrigger.of(3)
    ),
    "continuous-sliding-aggregate": lambda: (
        SlidingEventTimeWindows.of(20, 8), CountAgg(), ContinuousEventTimeTrigger.of(5)
    ),
    "purging-continuous": lambda: (
        TumblingEventTimeWindows.of(20), sum_of("v"),
        PurgingTrigger.of(ContinuousEventTimeTrigger.of(3)),
    ),
    "continuous-process": lambda: (
        TumblingEventTimeWindows.of(20), Listing(), ContinuousEventTimeTrigger.of(4)
    ),
}


def run(config: str, script: list[tuple[str, Any]], lateness: int, bulk: bool) -> Any:
    assigner, function, trigger = CONFIGS[config]()
    h = WindowOperatorHarness(
        assigner, function, key_field="k", trigger=trigger, allowed_lateness=lateness,
        late_output_tag=LATE,
    )
    assert h.operator._bulk_firing  # the configuration qualifies for bulk firing
    h.operator._bulk_firing = bulk
    error = None
    try:
        for kind, payload in script:
            if kind == "element":
                h.process_element(*payload)
            else:
                h.process_watermark(payload)
    except Exception as exc:  # the same error after the same outputs (the job then fails)
        error = (type(exc), str(exc))
    op = h.operator
    outputs = (
        h.output_with_timestamps(), h.side_output_with_timestamps(LATE),
        h.side_output_with_timestamps(SIDE), error,
    )
    if error is not None:
        return outputs
    return (
        *outputs, op.num_windows_fired, op.event_timers.buckets(), op.window_contents,
        op.partitioned_state.tables,
    )


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_bulk_firing_matches_per_timer_firing(config: str) -> None:
    rnd = random.Random(config)
    for _ in range(60):
        script: list[tuple[str, Any]] = []
        watermark = -5
        for _ in range(rnd.randint(1, 30)):
            if rnd.random() < 0.7:
                record = {"k": rnd.choice("abc"), "v": rnd.randint(0, 9)}
                script.append(("element", (record, rnd.randint(0, 80))))
            else:
                watermark += rnd.randint(0, 20)
                script.append(("watermark", watermark))
        script.append(("watermark", rnd.choice([watermark + 7, 10_000])))
        lateness = rnd.choice([0, 0, 5, 25])
        assert run(config, script, lateness, bulk=True) == run(config, script, lateness, False)
