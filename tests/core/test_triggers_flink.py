"""Ports of Flink's trigger unit tests.

Sources (apache/flink flink-streaming-java/src/test/java/org/apache/flink/streaming/runtime/
operators/windowing/): EventTimeTriggerTest, ProcessingTimeTriggerTest,
ContinuousEventTimeTriggerTest, ContinuousProcessingTimeTriggerTest, CountTriggerTest,
PurgingTriggerTest.

Translation notes:
- Flink's ``TriggerTestHarness`` -> ``flinkwin.testing.TriggerTestHarness``. Flink's
  ``new StreamRecord<>(1)`` carries no timestamp, so ``element.getTimestamp()`` is
  ``Long.MIN_VALUE``; the ports pass ``MIN_LONG`` explicitly.
- Flink's ``advanceWatermark(time, window)`` / ``advanceProcessingTime(time, window)`` overloads
  (which require exactly one firing, for ``window``) are re-implemented on top of the list-returning
  harness methods by ``_single_firing``, with the same checks as Flink's harness.
- ``ContinuousProcessingTimeTriggerTest`` drives a ``WindowOperator`` in Flink; ported through
  ``flinkwin.testing.WindowOperatorHarness`` (non-keyed, like Flink's ``NullByteKeySelector``).
  ``WindowedInteger(window, value)`` -> the tuple ``(window, value)``.
- ``PurgingTriggerTest`` uses a Mockito mock of the nested trigger; ported with
  ``ConfigurableTrigger``, a Python ``Trigger`` whose results/actions are set per step and which
  records ``on_merge``/``clear`` calls (for Flink's ``verify``).

Skipped tests: none (every test method of the six classes is ported).
"""

import signal

import pytest

from flinkwin import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    EventTimeTrigger,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Time,
    TimeWindow,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowFunction,
)
from flinkwin.testing import TriggerTestHarness, WindowOperatorHarness
from flinkwin.time import MIN_LONG

NO_TIMESTAMP = MIN_LONG  # StreamRecord without timestamp / Watermark.UNINITIALIZED

RUNAWAY_SECONDS = 10


@pytest.fixture(autouse=True)
def _runaway_guard():
    """Turn a non-terminating harness call into a test failure instead of a hung suite."""

    def _timeout(signum, frame):
        raise TimeoutError(f"test did not finish within {RUNAWAY_SECONDS}s (runaway loop)")

    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(RUNAWAY_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _single_firing(firings, window):
    """Flink's TriggerTestHarness.advanceWatermark/advanceProcessingTime(time, window)."""
    firings = list(firings)
    assert len(firings) == 1, f"Must have exactly one timer firing. Fired timers: {firings}"
    fired_window, result = firings[0]
    assert fired_window == window, "Trigger fired for another window."
    return result


def advance_watermark(harness, time, window):
    return _single_firing(harness.advance_watermark(time), window)


def advance_processing_time(harness, time, window):
    return _single_firing(harness.advance_processing_time(time), window)


def element(harness, window):
    """``testHarness.processElement(new StreamRecord<>(1), window)``."""
    return harness.process_element(1, NO_TIMESTAMP, window)


# ---------------------------------------------------------------------------------------------
# EventTimeTriggerTest
# ---------------------------------------------------------------------------------------------


def test_event_time_trigger_window_separation_and_firing():
    """Port of EventTimeTriggerTest#testWindowSeparationAndFiring."""
    h = TriggerTestHarness(EventTimeTrigger.create())

    # inject several elements
    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 2
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 1
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 1

    assert advance_watermark(h, 2, TimeWindow(0, 2)) == TriggerResult.FIRE

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 1
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 0
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 1

    assert advance_watermark(h, 4, TimeWindow(2, 4)) == TriggerResult.FIRE

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0


def test_event_time_trigger_late_element_triggers_immediately():
    """Port of EventTimeTriggerTest#testLateElementTriggersImmediately."""
    h = TriggerTestHarness(EventTimeTrigger.create())

    h.advance_watermark(2)

    assert element(h, TimeWindow(0, 2)) == TriggerResult.FIRE

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0


def test_event_time_trigger_clear():
    """Port of EventTimeTriggerTest#testClear."""
    h = TriggerTestHarness(EventTimeTrigger.create())

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 2
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 1
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 1

    h.clear_trigger_state(TimeWindow(2, 4))

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 1
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 1
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 0

    h.clear_trigger_state(TimeWindow(0, 2))

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0


def test_event_time_trigger_merging_windows():
    """Port of EventTimeTriggerTest#testMergingWindows."""
    h = TriggerTestHarness(EventTimeTrigger.create())

    assert EventTimeTrigger.create().can_merge()

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 2
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 1
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 1

    h.merge_windows(TimeWindow(0, 4), [TimeWindow(0, 2), TimeWindow(2, 4)])

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 1
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 0
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 0
    assert h.num_event_time_timers(TimeWindow(0, 4)) == 1

    assert advance_watermark(h, 4, TimeWindow(0, 4)) == TriggerResult.FIRE

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0


def test_event_time_trigger_merging_late_windows():
    """Port of EventTimeTriggerTest#testMergingLateWindows."""
    h = TriggerTestHarness(EventTimeTrigger.create())

    assert EventTimeTrigger.create().can_merge()

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 2
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 1
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 1

    h.advance_watermark(10)

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 0
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 0

    h.merge_windows(TimeWindow(0, 4), [TimeWindow(0, 2), TimeWindow(2, 4)])

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 0
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 0
    assert h.num_event_time_timers(TimeWindow(0, 4)) == 0


# ---------------------------------------------------------------------------------------------
# ProcessingTimeTriggerTest
# ---------------------------------------------------------------------------------------------


def test_processing_time_trigger_window_separation_and_firing():
    """Port of ProcessingTimeTriggerTest#testWindowSeparationAndFiring."""
    h = TriggerTestHarness(ProcessingTimeTrigger.create())

    # inject several elements
    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    assert h.num_state_entries() == 0
    assert h.num_event_time_timers() == 0
    assert h.num_processing_time_timers() == 2
    assert h.num_processing_time_timers(TimeWindow(0, 2)) == 1
    assert h.num_processing_time_timers(TimeWindow(2, 4)) == 1

    assert advance_processing_time(h, 2, TimeWindow(0, 2)) == TriggerResult.FIRE

    assert h.num_state_entries() == 0
    assert h.num_event_time_timers() == 0
    assert h.num_processing_time_timers() == 1
    assert h.num_processing_time_timers(TimeWindow(0, 2)) == 0
    assert h.num_processing_time_timers(TimeWindow(2, 4)) == 1

    assert advance_processing_time(h, 4, TimeWindow(2, 4)) == TriggerResult.FIRE

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0


def test_processing_time_trigger_clear():
    """Port of ProcessingTimeTriggerTest#testClear."""
    h = TriggerTestHarness(ProcessingTimeTrigger.create())

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    assert h.num_state_entries() == 0
    assert h.num_event_time_timers() == 0
    assert h.num_processing_time_timers() == 2
    assert h.num_processing_time_timers(TimeWindow(0, 2)) == 1
    assert h.num_processing_time_timers(TimeWindow(2, 4)) == 1

    h.clear_trigger_state(TimeWindow(2, 4))

    assert h.num_state_entries() == 0
    assert h.num_event_time_timers() == 0
    assert h.num_processing_time_timers() == 1
    assert h.num_processing_time_timers(TimeWindow(0, 2)) == 1
    assert h.num_processing_time_timers(TimeWindow(2, 4)) == 0

    h.clear_trigger_state(TimeWindow(0, 2))

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_processing_time_timers() == 0


def test_processing_time_trigger_merging_windows():
    """Port of ProcessingTimeTriggerTest#testMergingWindows."""
    h = TriggerTestHarness(ProcessingTimeTrigger.create())

    assert ProcessingTimeTrigger.create().can_merge()

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    assert h.num_state_entries() == 0
    assert h.num_event_time_timers() == 0
    assert h.num_processing_time_timers() == 2
    assert h.num_processing_time_timers(TimeWindow(0, 2)) == 1
    assert h.num_processing_time_timers(TimeWindow(2, 4)) == 1

    h.merge_windows(TimeWindow(0, 4), [TimeWindow(0, 2), TimeWindow(2, 4)])

    assert h.num_state_entries() == 0
    assert h.num_event_time_timers() == 0
    assert h.num_processing_time_timers() == 1
    assert h.num_processing_time_timers(TimeWindow(0, 2)) == 0
    assert h.num_processing_time_timers(TimeWindow(2, 4)) == 0
    assert h.num_processing_time_timers(TimeWindow(0, 4)) == 1

    assert advance_processing_time(h, 4, TimeWindow(0, 4)) == TriggerResult.FIRE

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0


def test_processing_time_trigger_merging_late_windows():
    """Port of ProcessingTimeTriggerTest#testMergingLateWindows."""
    h = TriggerTestHarness(ProcessingTimeTrigger.create())

    assert ProcessingTimeTrigger.create().can_merge()

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    assert h.num_state_entries() == 0
    assert h.num_event_time_timers() == 0
    assert h.num_processing_time_timers() == 2
    assert h.num_processing_time_timers(TimeWindow(0, 2)) == 1
    assert h.num_processing_time_timers(TimeWindow(2, 4)) == 1

    h.advance_processing_time(10)

    assert h.num_state_entries() == 0
    assert h.num_event_time_timers() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_processing_time_timers(TimeWindow(0, 2)) == 0
    assert h.num_processing_time_timers(TimeWindow(2, 4)) == 0

    h.merge_windows(TimeWindow(0, 4), [TimeWindow(0, 2), TimeWindow(2, 4)])

    assert h.num_state_entries() == 0
    assert h.num_event_time_timers() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_processing_time_timers(TimeWindow(0, 2)) == 0
    assert h.num_processing_time_timers(TimeWindow(2, 4)) == 0
    assert h.num_processing_time_timers(TimeWindow(0, 4)) == 0


# ---------------------------------------------------------------------------------------------
# ContinuousEventTimeTriggerTest
# ---------------------------------------------------------------------------------------------


def test_continuous_event_time_trigger_trigger_handles_all_on_timer_calls():
    """Port of ContinuousEventTimeTriggerTest#testTriggerHandlesAllOnTimerCalls."""
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(Time.milliseconds(5)))

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0

    # this will make the elements we now process fall into late windows, i.e. no trigger state
    # will be created
    h.advance_watermark(10)

    # late fires immediately
    assert element(h, TimeWindow(0, 2)) == TriggerResult.FIRE

    # simulate a GC timer firing (Flink only checks that this does not throw)
    result = h.invoke_on_event_time(20, TimeWindow(0, 2))
    assert isinstance(result, TriggerResult)


def test_continuous_event_time_trigger_window_separation_and_firing():
    """Port of ContinuousEventTimeTriggerTest#testWindowSeparationAndFiring."""
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(Time.hours(1)))

    # inject several elements
    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    assert h.num_state_entries() == 2
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 4
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 2
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 2

    trigger_results = h.advance_watermark(2)
    saw_firing = False
    for window, result in trigger_results:
        if window == TimeWindow(0, 2):
            saw_firing = True
            assert result == TriggerResult.FIRE
    assert saw_firing

    assert h.num_state_entries() == 2
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 3
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 1
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 2

    trigger_results = h.advance_watermark(4)
    saw_firing = False
    for window, result in trigger_results:
        if window == TimeWindow(2, 4):
            saw_firing = True
            assert result == TriggerResult.FIRE
    assert saw_firing

    assert h.num_state_entries() == 2
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 2


def test_continuous_event_time_trigger_late_element_triggers_immediately():
    """Port of ContinuousEventTimeTriggerTest#testLateElementTriggersImmediately."""
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(Time.hours(1)))

    h.advance_watermark(2)

    assert element(h, TimeWindow(0, 2)) == TriggerResult.FIRE

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0


def test_continuous_event_time_trigger_clear():
    """Port of ContinuousEventTimeTriggerTest#testClear."""
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(Time.hours(1)))

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    assert h.num_state_entries() == 2
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 4
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 2
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 2

    h.clear_trigger_state(TimeWindow(2, 4))

    assert h.num_state_entries() == 1
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 3
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 2
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 1

    h.clear_trigger_state(TimeWindow(0, 2))

    assert h.num_state_entries() == 0
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 2  # doesn't clean up timers


def test_continuous_event_time_trigger_merging_windows():
    """Port of ContinuousEventTimeTriggerTest#testMergingWindows."""
    h = TriggerTestHarness(ContinuousEventTimeTrigger.of(Time.hours(1)))

    assert ContinuousEventTimeTrigger.of(Time.hours(1)).can_merge()

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    assert h.num_state_entries() == 2
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 4
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 2
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 2

    h.merge_windows(TimeWindow(0, 4), [TimeWindow(0, 2), TimeWindow(2, 4)])

    assert h.num_state_entries() == 1
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 5  # on merging, timers are not cleaned up
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 2
    assert h.num_event_time_timers(TimeWindow(2, 4)) == 2
    assert h.num_event_time_timers(TimeWindow(0, 4)) == 1

    trigger_results = h.advance_watermark(4)
    saw_firing = False
    for window, result in trigger_results:
        if window == TimeWindow(0, 4):
            saw_firing = True
            assert result == TriggerResult.FIRE

    assert saw_firing

    assert h.num_state_entries() == 1
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 1


# ---------------------------------------------------------------------------------------------
# ContinuousProcessingTimeTriggerTest
# ---------------------------------------------------------------------------------------------


class IntegerSumWindowFunction(WindowFunction):
    """Emits ``(window, sum)`` -- Flink's ``WindowedInteger(window, value)``."""

    def apply(self, key, window, inputs):
        return [(window, sum(inputs))]


def _windowed_output(harness):
    return [(tuple(v), ts) for v, ts in harness.output_with_timestamps()]


def test_continuous_processing_time_trigger_window_firing():
    """Port of ContinuousProcessingTimeTriggerTest#testWindowFiring."""
    trigger = ContinuousProcessingTimeTrigger.of(Time.milliseconds(5))

    assert trigger.can_merge()

    h = WindowOperatorHarness(
        TumblingProcessingTimeWindows.of(Time.milliseconds(10)),
        IntegerSumWindowFunction(),
        trigger=trigger,
    )

    expected = []

    # window [0, 10)
    h.set_processing_time(0)
    h.process_element(1, NO_TIMESTAMP)

    # window [0, 10)
    h.set_processing_time(2)
    h.process_element(2, NO_TIMESTAMP)

    # Fire window [0, 10), value is 1+2=3.
    h.set_processing_time(5)
    expected.append(((TimeWindow(0, 10), 3), 9))
    assert _windowed_output(h) == expected, "Output mismatch"

    # window [0, 10)
    h.set_processing_time(7)
    h.process_element(3, NO_TIMESTAMP)

    # Fire window [0, 10), value is 3+3=6.
    h.set_processing_time(9)
    expected.append(((TimeWindow(0, 10), 6), 9))
    assert _windowed_output(h) == expected, "Output mismatch"

    # window [10, 20)
    h.set_processing_time(10)
    h.process_element(3, NO_TIMESTAMP)

    # Fire window [10, 20), value is 3.
    h.set_processing_time(15)
    expected.append(((TimeWindow(10, 20), 3), 19))
    assert _windowed_output(h) == expected, "Output mismatch"

    # window [10, 20)
    h.set_processing_time(18)
    h.process_element(3, NO_TIMESTAMP)

    # Fire window [10, 20), value is 3+3=6.
    h.set_processing_time(20)
    expected.append(((TimeWindow(10, 20), 6), 19))
    assert _windowed_output(h) == expected, "Output mismatch"


def test_continuous_processing_time_trigger_merging_windows():
    """Port of ContinuousProcessingTimeTriggerTest#testMergingWindows."""
    trigger = ContinuousProcessingTimeTrigger.of(Time.milliseconds(5))

    assert trigger.can_merge()

    h = WindowOperatorHarness(
        ProcessingTimeSessionWindows.withGap(Time.milliseconds(10)),
        IntegerSumWindowFunction(),
        trigger=trigger,
    )

    expected = []

    # window [0, 10)
    h.set_processing_time(0)
    h.process_element(1, NO_TIMESTAMP)

    # window [2, 12) ==> [0, 12)
    h.set_processing_time(2)
    h.process_element(2, NO_TIMESTAMP)

    # Merged timer should still fire.
    h.set_processing_time(5)
    expected.append(((TimeWindow(0, 12), 3), 11))
    assert _windowed_output(h) == expected, "Output mismatch"

    # Merged window should work as normal.
    h.set_processing_time(9)
    assert _windowed_output(h) == expected, "Output mismatch"

    h.set_processing_time(10)
    expected.append(((TimeWindow(0, 12), 3), 11))
    assert _windowed_output(h) == expected, "Output mismatch"

    # Firing on time.
    h.set_processing_time(15)
    expected.append(((TimeWindow(0, 12), 3), 11))
    assert _windowed_output(h) == expected, "Output mismatch"

    # Window is dropped already.
    h.set_processing_time(100)
    assert _windowed_output(h) == expected, "Output mismatch"


# ---------------------------------------------------------------------------------------------
# CountTriggerTest
# ---------------------------------------------------------------------------------------------


def test_count_trigger_window_separation_and_firing():
    """Port of CountTriggerTest#testWindowSeparationAndFiring."""
    h = TriggerTestHarness(CountTrigger.of(3))

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    # shouldn't have any timers
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0

    assert h.num_state_entries() == 2
    assert h.num_state_entries(TimeWindow(0, 2)) == 1
    assert h.num_state_entries(TimeWindow(2, 4)) == 1

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(0, 2)) == TriggerResult.FIRE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    # right now, CountTrigger will clear it's state in onElement when firing
    # ideally, this should be moved to onFire()
    assert h.num_state_entries() == 1
    assert h.num_state_entries(TimeWindow(0, 2)) == 0
    assert h.num_state_entries(TimeWindow(2, 4)) == 1

    assert element(h, TimeWindow(2, 4)) == TriggerResult.FIRE

    # now all state should be gone
    assert h.num_state_entries() == 0


def test_count_trigger_clear():
    """Port of CountTriggerTest#testClear."""
    h = TriggerTestHarness(CountTrigger.of(3))

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE

    # shouldn't have any timers
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0

    assert h.num_state_entries() == 2
    assert h.num_state_entries(TimeWindow(0, 2)) == 1
    assert h.num_state_entries(TimeWindow(2, 4)) == 1

    h.clear_trigger_state(TimeWindow(2, 4))

    assert h.num_state_entries() == 1
    assert h.num_state_entries(TimeWindow(0, 2)) == 1
    assert h.num_state_entries(TimeWindow(2, 4)) == 0

    h.clear_trigger_state(TimeWindow(0, 2))

    assert h.num_state_entries() == 0
    assert h.num_state_entries(TimeWindow(0, 2)) == 0
    assert h.num_state_entries(TimeWindow(2, 4)) == 0


def test_count_trigger_merging_windows():
    """Port of CountTriggerTest#testMergingWindows."""
    h = TriggerTestHarness(CountTrigger.of(3))

    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(4, 6)) == TriggerResult.CONTINUE

    # shouldn't have any timers
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0

    assert h.num_state_entries() == 3
    assert h.num_state_entries(TimeWindow(0, 2)) == 1
    assert h.num_state_entries(TimeWindow(2, 4)) == 1
    assert h.num_state_entries(TimeWindow(4, 6)) == 1

    h.merge_windows(TimeWindow(0, 4), [TimeWindow(0, 2), TimeWindow(2, 4)])

    assert h.num_state_entries() == 2
    assert h.num_state_entries(TimeWindow(0, 2)) == 0
    assert h.num_state_entries(TimeWindow(2, 4)) == 0
    assert h.num_state_entries(TimeWindow(0, 4)) == 1
    assert h.num_state_entries(TimeWindow(4, 6)) == 1

    assert element(h, TimeWindow(0, 4)) == TriggerResult.FIRE

    assert h.num_state_entries() == 1
    assert h.num_state_entries(TimeWindow(0, 4)) == 0
    assert h.num_state_entries(TimeWindow(4, 6)) == 1

    assert element(h, TimeWindow(4, 6)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(4, 6)) == TriggerResult.FIRE

    assert h.num_state_entries() == 0


def test_count_trigger_merge_subsuming_window():
    """Port of CountTriggerTest#testMergeSubsumingWindow."""
    h = TriggerTestHarness(CountTrigger.of(3))

    assert element(h, TimeWindow(2, 4)) == TriggerResult.CONTINUE
    assert element(h, TimeWindow(4, 6)) == TriggerResult.CONTINUE

    # shouldn't have any timers
    assert h.num_processing_time_timers() == 0
    assert h.num_event_time_timers() == 0

    assert h.num_state_entries() == 2
    assert h.num_state_entries(TimeWindow(2, 4)) == 1
    assert h.num_state_entries(TimeWindow(4, 6)) == 1

    h.merge_windows(TimeWindow(0, 8), [TimeWindow(2, 4), TimeWindow(4, 6)])

    assert h.num_state_entries() == 1
    assert h.num_state_entries(TimeWindow(2, 4)) == 0
    assert h.num_state_entries(TimeWindow(4, 6)) == 0
    assert h.num_state_entries(TimeWindow(0, 8)) == 1

    assert element(h, TimeWindow(0, 8)) == TriggerResult.FIRE

    assert h.num_state_entries() == 0


# ---------------------------------------------------------------------------------------------
# PurgingTriggerTest
# ---------------------------------------------------------------------------------------------

# The methods of Flink's Trigger class (Trigger.class.getDeclaredMethods()), in flinkwin naming.
TRIGGER_METHODS = (
    "on_element",
    "on_processing_time",
    "on_event_time",
    "can_merge",
    "on_merge",
    "clear",
)


class ConfigurableTrigger(Trigger):
    """Stand-in for Flink's ``mock(Trigger.class)``: results are configurable per step and the
    ``on_merge`` / ``clear`` calls are recorded. ``can_merge`` is inherited (a Mockito mock would
    answer ``false``, which is also Flink's ``Trigger#canMerge`` default)."""

    def __init__(self):
        self.on_element_result = TriggerResult.CONTINUE
        self.on_element_action = None
        self.on_event_time_result = TriggerResult.CONTINUE
        self.on_processing_time_result = TriggerResult.CONTINUE
        self.on_merge_calls = []
        self.clear_calls = []

    def on_element(self, element, timestamp, window, ctx):
        if self.on_element_action is not None:
            self.on_element_action(ctx)
        return self.on_element_result

    def on_event_time(self, time, window, ctx):
        return self.on_event_time_result

    def on_processing_time(self, time, window, ctx):
        return self.on_processing_time_result

    def on_merge(self, window, ctx):
        self.on_merge_calls.append(window)

    def clear(self, window, ctx):
        self.clear_calls.append(window)


def test_purging_trigger_all_methods_implemented():
    """Port of PurgingTriggerTest#testAllMethodsImplemented."""
    for name in TRIGGER_METHODS:
        assert callable(getattr(Trigger, name, None)), f"Trigger has no method {name}"
        # Flink: PurgingTrigger.class.getDeclaredMethod(...) throws if not declared on the class
        # itself, i.e. inherited defaults do not count.
        assert name in vars(PurgingTrigger), f"PurgingTrigger does not implement {name}"


def test_purging_trigger_forwarding():
    """Port of PurgingTriggerTest#testForwarding."""
    mock_trigger = ConfigurableTrigger()

    h = TriggerTestHarness(PurgingTrigger.of(mock_trigger))

    mock_trigger.on_element_result = TriggerResult.CONTINUE
    assert element(h, TimeWindow(0, 2)) == TriggerResult.CONTINUE

    mock_trigger.on_element_result = TriggerResult.FIRE
    assert element(h, TimeWindow(0, 2)) == TriggerResult.FIRE_AND_PURGE

    mock_trigger.on_element_result = TriggerResult.FIRE_AND_PURGE
    assert element(h, TimeWindow(0, 2)) == TriggerResult.FIRE_AND_PURGE

    mock_trigger.on_element_result = TriggerResult.PURGE
    assert element(h, TimeWindow(0, 2)) == TriggerResult.PURGE

    def register_event_timers(ctx):
        # register some timers that we can step through to call onEventTime several
        # times in a row
        ctx.register_event_time_timer(1)
        ctx.register_event_time_timer(2)
        ctx.register_event_time_timer(3)
        ctx.register_event_time_timer(4)

    mock_trigger.on_element_action = register_event_timers
    mock_trigger.on_element_result = TriggerResult.CONTINUE

    # set up our timers
    element(h, TimeWindow(0, 2))

    assert h.num_event_time_timers(TimeWindow(0, 2)) == 4

    mock_trigger.on_event_time_result = TriggerResult.CONTINUE
    assert advance_watermark(h, 1, TimeWindow(0, 2)) == TriggerResult.CONTINUE

    mock_trigger.on_event_time_result = TriggerResult.FIRE
    assert advance_watermark(h, 2, TimeWindow(0, 2)) == TriggerResult.FIRE_AND_PURGE

    mock_trigger.on_event_time_result = TriggerResult.FIRE_AND_PURGE
    assert advance_watermark(h, 3, TimeWindow(0, 2)) == TriggerResult.FIRE_AND_PURGE

    mock_trigger.on_event_time_result = TriggerResult.PURGE
    assert advance_watermark(h, 4, TimeWindow(0, 2)) == TriggerResult.PURGE

    def register_processing_timers(ctx):
        # register some timers that we can step through to call onProcessingTime several
        # times in a row
        ctx.register_processing_time_timer(1)
        ctx.register_processing_time_timer(2)
        ctx.register_processing_time_timer(3)
        ctx.register_processing_time_timer(4)

    mock_trigger.on_element_action = register_processing_timers

    # set up our timers
    element(h, TimeWindow(0, 2))

    assert h.num_processing_time_timers(TimeWindow(0, 2)) == 4
    assert h.num_event_time_timers(TimeWindow(0, 2)) == 0

    mock_trigger.on_processing_time_result = TriggerResult.CONTINUE
    assert advance_processing_time(h, 1, TimeWindow(0, 2)) == TriggerResult.CONTINUE

    mock_trigger.on_processing_time_result = TriggerResult.FIRE
    assert advance_processing_time(h, 2, TimeWindow(0, 2)) == TriggerResult.FIRE_AND_PURGE

    mock_trigger.on_processing_time_result = TriggerResult.FIRE_AND_PURGE
    assert advance_processing_time(h, 3, TimeWindow(0, 2)) == TriggerResult.FIRE_AND_PURGE

    mock_trigger.on_processing_time_result = TriggerResult.PURGE
    assert advance_processing_time(h, 4, TimeWindow(0, 2)) == TriggerResult.PURGE

    h.merge_windows(TimeWindow(0, 2), [TimeWindow(0, 1)])
    # verify(mockTrigger, times(1)).onMerge(anyTimeWindow(), anyOnMergeContext())
    assert len(mock_trigger.on_merge_calls) == 1

    h.clear_trigger_state(TimeWindow(0, 2))
    # verify(mockTrigger, times(1)).clear(eq(new TimeWindow(0, 2)), anyTriggerContext())
    assert mock_trigger.clear_calls.count(TimeWindow(0, 2)) == 1


def test_continuous_processing_time_trigger_event_time_window_fires_once_at_its_end():
    """FLINK-35069 (the test of apache/flink#24647, ``testEventTimeWindowFiring``): with an
    event-time window, processing time passing the window's end fires it at its interval
    boundaries and once at ``max_timestamp``, then registers no timer again (Flink 2.3 loops
    there forever); an element arriving later fires the window once more at the next advance."""
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.milliseconds(10)),
        IntegerSumWindowFunction(),
        trigger=ContinuousProcessingTimeTrigger.of(Time.milliseconds(5)),
    )
    h.set_processing_time(0)
    h.process_element(1, 3)
    h.set_processing_time(100)
    expected = [((TimeWindow(0, 10), 1), 9), ((TimeWindow(0, 10), 1), 9)]  # at 5, then at 9
    assert _windowed_output(h) == expected
    assert h.num_processing_time_timers() == 0

    h.process_element(2, 4)  # the window is still open in event time
    assert h.num_processing_time_timers() == 1
    h.set_processing_time(101)
    expected.append(((TimeWindow(0, 10), 3), 9))
    assert _windowed_output(h) == expected
    assert h.num_processing_time_timers() == 0
