"""The uncertain watermark (``flinkwin.operator.watermark_guard``): while a runtime knows
Flink's watermark only as "``MIN_LONG`` or at/before the epoch", user code reading it and
event-time timers at or before the epoch fail naming the remedy; built-in triggers, exact
watermarks and timers after the epoch run as always."""

from __future__ import annotations

from typing import Any

import pytest

from flinkwin import (
    CountTrigger,
    EventTimeTrigger,
    ProcessWindowFunction,
    PurgingTrigger,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.functions.builtin import sum_of
from flinkwin.operator.watermark_guard import (
    Uncertainty,
    UncertainWatermarkError,
    check_event_timer,
    read_watermark,
    uncertain_watermark,
)
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MIN_LONG

UNCERTAIN = Uncertainty("Declare it.")


def test_a_read_of_min_long_fails_only_while_the_watermark_is_uncertain() -> None:
    assert read_watermark(MIN_LONG) == MIN_LONG
    with uncertain_watermark(UNCERTAIN):
        assert read_watermark(-1_501) == -1_501  # an exact watermark of the operator's own
        with pytest.raises(UncertainWatermarkError, match="uncertain.*Declare it"):
            read_watermark(MIN_LONG)
    with uncertain_watermark(None):
        assert read_watermark(MIN_LONG) == MIN_LONG  # e.g. micro-batch 0: none yet, exactly


def test_an_event_time_timer_at_or_before_the_epoch_fails_while_uncertain() -> None:
    with uncertain_watermark(UNCERTAIN):
        check_event_timer(1)
        with pytest.raises(UncertainWatermarkError, match="timer at 0.*Declare it"):
            check_event_timer(0)
    check_event_timer(-5)


class WatermarkTrigger(EventTimeTrigger):
    """A user trigger that reads the watermark (as one copied from EventTimeTrigger would)."""


class ReadsWatermark(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield key, context.current_watermark()


def _harness(trigger: Any, function: Any = None) -> WindowOperatorHarness:
    return WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(10)), function or sum_of("v"), key_field="k",
        trigger=trigger,
    )


@pytest.mark.parametrize("trigger", [WatermarkTrigger(), PurgingTrigger.of(WatermarkTrigger())])
def test_a_user_trigger_reading_the_uncertain_watermark_fails(trigger: Any) -> None:
    harness = _harness(trigger)
    with uncertain_watermark(UNCERTAIN), pytest.raises(Exception, match="uncertain"):
        harness.process_element({"k": "a", "v": 1}, 500)


@pytest.mark.parametrize("trigger", [None, EventTimeTrigger.create(), PurgingTrigger.of(
    EventTimeTrigger.create())])
def test_built_in_triggers_run_under_the_uncertain_watermark(trigger: Any) -> None:
    harness = _harness(trigger)
    with uncertain_watermark(UNCERTAIN):
        harness.process_element({"k": "a", "v": 1}, 500)
    harness.process_watermark(9_999)
    assert [tuple(r) for r in harness.output()] == [("a", 1)]


def test_a_window_function_reading_the_uncertain_watermark_fails() -> None:
    harness = _harness(CountTrigger.of(1), ReadsWatermark())
    with uncertain_watermark(UNCERTAIN), pytest.raises(Exception, match="uncertain"):
        harness.process_element({"k": "a", "v": 1}, 500)


def test_a_window_before_the_epoch_fails_at_its_timer_while_uncertain() -> None:
    """An element before the epoch would need its window's timers at or before it."""
    harness = _harness(None)
    with uncertain_watermark(UNCERTAIN), pytest.raises(Exception, match="timer at -1"):
        harness.process_element({"k": "a", "v": 1}, -500)
