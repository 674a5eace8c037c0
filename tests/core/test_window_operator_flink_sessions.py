"""Port of Flink's ``WindowOperatorTest``: the merging (session) window tests.

Source: apache/flink,
flink-streaming-java/src/test/java/org/apache/flink/streaming/runtime/operators/windowing/
WindowOperatorTest.java (JUnit 5 version). The non-merging tests of the same class live in
``test_window_operator_flink.py``, whose module docstring explains the translation rules:

* ``Tuple2<String, Integer>`` elements keyed by ``f0`` -> ``{"key": k, "value": v}`` records,
  ``key_field="key"``; ``Tuple3<String, Long, Long>`` results -> ``(s, start, end)`` tuples.
* Watermarks are not part of our output; instead of checking their positions in the output queue
  we assert the (sorted) output after every watermark that Flink's expected queue contains.
* Snapshot/restore: a fresh harness with the same arguments ``restore()``s the snapshot and starts
  with empty output, like Flink's new test harness.

Skipped Flink test methods: none (see ``test_window_operator_flink.py`` for the full list).
"""

from __future__ import annotations

from typing import Any

from flink_window_helpers import (
    LATE_OUTPUT_TAG,
    PassThroughFunction,
    SumReducer,
    el,
    expect,
    out_sorted,
    side_sorted,
)

from flinkwin import (
    ContinuousEventTimeTrigger,
    CountTrigger,
    EventTimeSessionWindows,
    EventTimeTrigger,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    ProcessWindowFunction,
    PurgingTrigger,
    Time,
    TimeWindow,
    WindowFunction,
)
from flinkwin.testing import WindowOperatorHarness

# ---------------------------------------------------------------------------------------------
#  UDFs (Flink's test UDFs)
# ---------------------------------------------------------------------------------------------


class SessionWindowFunction(WindowFunction):
    """``(key + "-" + sum, window.start, window.end)``."""

    def apply(self, key: Any, window: Any, inputs: Any) -> list[Any]:
        total = sum(t["value"] for t in inputs)
        return [(f"{key}-{total}", window.start, window.end)]


class ReducedSessionWindowFunction(WindowFunction):
    """``(key + "-" + val.f1, window.start, window.end)`` for each (pre-reduced) value."""

    def apply(self, key: Any, window: Any, inputs: Any) -> list[Any]:
        return [(f"{key}-{val['value']}", window.start, window.end) for val in inputs]


class SessionProcessWindowFunction(ProcessWindowFunction):
    """``SessionWindowFunction`` as a ProcessWindowFunction (window from the context)."""

    def process(self, key: Any, context: Any, elements: Any) -> list[Any]:
        total = sum(t["value"] for t in elements)
        window = context.window()
        return [(f"{key}-{total}", window.start, window.end)]


class ReducedProcessSessionWindowFunction(ProcessWindowFunction):
    """``ReducedSessionWindowFunction`` as a ProcessWindowFunction."""

    def process(self, key: Any, context: Any, elements: Any) -> list[Any]:
        window = context.window()
        return [(f"{key}-{val['value']}", window.start, window.end) for val in elements]


class PointSessionWindows(EventTimeSessionWindows):
    """Sessions where elements with value 33 get a "point window" ``[ts, ts)``."""

    def __init__(self, session_timeout: int) -> None:
        super().__init__(session_timeout)

    def assign_windows(self, element: Any, timestamp: int, context: Any) -> list[TimeWindow]:
        if element["value"] == 33:
            return [TimeWindow(timestamp, timestamp)]
        return [TimeWindow(timestamp, timestamp + self.session_timeout)]


class GapExtractor:
    """Flink's mocked ``SessionWindowTimeGapExtractor`` (usable as object or callable)."""

    def extract(self, element: Any) -> int:
        if element["key"] == "key1":
            return 3000
        if element["key"] == "key2":
            return 1000 if element["value"] == 10 else 2000
        return 0

    def __call__(self, element: Any) -> int:
        return self.extract(element)


def _session_harness(function: Any, **kwargs: Any) -> WindowOperatorHarness:
    return WindowOperatorHarness(
        EventTimeSessionWindows.withGap(Time.seconds(3)), function, key_field="key", **kwargs
    )


# ---------------------------------------------------------------------------------------------
#  Session windows with snapshot & restore
# ---------------------------------------------------------------------------------------------


def _run_session_windows_restore_after_key1(make) -> None:
    """Shared body of testSessionWindows / testSessionWindowsWithProcessFunction."""
    h = make()
    expected: list[tuple[Any, int]] = []

    # add elements out-of-order
    el(h, "key2", 1, 0)
    el(h, "key2", 2, 1000)
    el(h, "key2", 3, 2500)

    el(h, "key1", 1, 10)
    el(h, "key1", 2, 1000)

    # do a snapshot, close and restore again
    snapshot = h.snapshot()
    assert out_sorted(h) == expect(expected)

    h = make()
    h.restore(snapshot)

    el(h, "key1", 3, 2500)

    el(h, "key2", 4, 5501)
    el(h, "key2", 5, 6000)
    el(h, "key2", 5, 6000)
    el(h, "key2", 6, 6050)

    h.process_watermark(12000)

    expected.append((("key1-6", 10, 5500), 5499))
    expected.append((("key2-6", 0, 5500), 5499))
    expected.append((("key2-20", 5501, 9050), 9049))
    assert out_sorted(h) == expect(expected)

    el(h, "key2", 10, 15000)
    el(h, "key2", 20, 15000)

    h.process_watermark(17999)

    expected.append((("key2-30", 15000, 18000), 17999))
    assert out_sorted(h) == expect(expected)


def test_session_windows() -> None:
    """Port of WindowOperatorTest#testSessionWindows."""
    _run_session_windows_restore_after_key1(
        lambda: _session_harness(
            SessionWindowFunction(), trigger=EventTimeTrigger.create(), allowed_lateness=0
        )
    )


def test_session_windows_with_process_function() -> None:
    """Port of WindowOperatorTest#testSessionWindowsWithProcessFunction."""
    _run_session_windows_restore_after_key1(
        lambda: _session_harness(
            SessionProcessWindowFunction(), trigger=EventTimeTrigger.create(), allowed_lateness=0
        )
    )


def _run_reduce_session_windows(make) -> None:
    """Shared body of testReduceSessionWindows / testReduceSessionWindowsWithProcessFunction."""
    h = make()
    expected: list[tuple[Any, int]] = []

    # add elements out-of-order
    el(h, "key2", 1, 0)
    el(h, "key2", 2, 1000)
    el(h, "key2", 3, 2500)

    # do a snapshot, close and restore again
    snapshot = h.snapshot()
    h = make()
    h.restore(snapshot)

    el(h, "key1", 1, 10)
    el(h, "key1", 2, 1000)
    el(h, "key1", 3, 2500)

    el(h, "key2", 4, 5501)
    el(h, "key2", 5, 6000)
    el(h, "key2", 5, 6000)
    el(h, "key2", 6, 6050)

    h.process_watermark(12000)

    expected.append((("key1-6", 10, 5500), 5499))
    expected.append((("key2-6", 0, 5500), 5499))
    expected.append((("key2-20", 5501, 9050), 9049))
    assert out_sorted(h) == expect(expected)

    el(h, "key2", 10, 15000)
    el(h, "key2", 20, 15000)

    h.process_watermark(17999)

    expected.append((("key2-30", 15000, 18000), 17999))
    assert out_sorted(h) == expect(expected)


def test_reduce_session_windows() -> None:
    """Port of WindowOperatorTest#testReduceSessionWindows."""
    _run_reduce_session_windows(
        lambda: _session_harness(
            (SumReducer(), ReducedSessionWindowFunction()),
            trigger=EventTimeTrigger.create(),
            allowed_lateness=0,
        )
    )


def test_reduce_session_windows_with_process_function() -> None:
    """Port of WindowOperatorTest#testReduceSessionWindowsWithProcessFunction."""
    _run_reduce_session_windows(
        lambda: _session_harness(
            (SumReducer(), ReducedProcessSessionWindowFunction()),
            trigger=EventTimeTrigger.create(),
            allowed_lateness=0,
        )
    )


def test_session_windows_with_count_trigger() -> None:
    """Port of WindowOperatorTest#testSessionWindowsWithCountTrigger.

    This tests whether merging works correctly with the CountTrigger.
    """

    def make() -> WindowOperatorHarness:
        return _session_harness(
            SessionWindowFunction(),
            trigger=PurgingTrigger.of(CountTrigger.of(4)),
            allowed_lateness=0,
        )

    h = make()
    expected: list[tuple[Any, int]] = []

    # add elements out-of-order
    el(h, "key2", 1, 0)
    el(h, "key2", 2, 1000)
    el(h, "key2", 3, 2500)
    el(h, "key2", 4, 3500)

    el(h, "key1", 1, 10)
    el(h, "key1", 2, 1000)

    # do a snapshot, close and restore again
    snapshot = h.snapshot()

    expected.append((("key2-10", 0, 6500), 6499))
    assert out_sorted(h) == expect(expected)
    expected = []

    h = make()
    h.restore(snapshot)

    el(h, "key1", 3, 2500)

    el(h, "key1", 1, 6000)
    el(h, "key1", 2, 6500)
    el(h, "key1", 3, 7000)

    assert out_sorted(h) == expect(expected)

    # add an element that merges the two "key1" sessions, they should now have count 6, and
    # therefore fire
    el(h, "key1", 10, 4500)

    expected.append((("key1-22", 10, 10000), 9999))
    assert out_sorted(h) == expect(expected)


def test_session_windows_with_continuous_event_time_trigger() -> None:
    """Port of WindowOperatorTest#testSessionWindowsWithContinuousEventTimeTrigger.

    This tests whether merging works correctly with the ContinuousEventTimeTrigger.
    """

    def make() -> WindowOperatorHarness:
        return _session_harness(
            SessionWindowFunction(),
            trigger=ContinuousEventTimeTrigger.of(Time.seconds(2)),
            allowed_lateness=0,
        )

    h = make()
    expected: list[tuple[Any, int]] = []

    # add elements out-of-order and first trigger time is 2000
    el(h, "key1", 1, 1500)
    el(h, "key2", 1, 0)
    el(h, "key2", 3, 2500)
    el(h, "key2", 2, 1000)

    # triggers emit and next trigger time is 4000
    h.process_watermark(2500)

    expected.append((("key1-1", 1500, 4500), 4499))
    expected.append((("key2-6", 0, 5500), 5499))
    assert out_sorted(h) == expect(expected)

    el(h, "key2", 5, 4000)
    h.process_watermark(3000)

    # do a snapshot, close and restore again
    snapshot = h.snapshot()
    assert out_sorted(h) == expect(expected)

    expected = []
    h = make()
    h.restore(snapshot)

    el(h, "key1", 2, 4000)
    el(h, "key2", 4, 3500)
    # triggers emit and next trigger time is 6000
    h.process_watermark(4000)

    expected.append((("key1-3", 1500, 7000), 6999))
    expected.append((("key2-15", 0, 7000), 6999))
    assert out_sorted(h) == expect(expected)


def test_point_sessions() -> None:
    """Port of WindowOperatorTest#testPointSessions.

    A custom session assigner puts elements with value 33 into "point windows" (start == end).
    """

    def make() -> WindowOperatorHarness:
        return WindowOperatorHarness(
            PointSessionWindows(3000),
            SessionWindowFunction(),
            key_field="key",
            trigger=EventTimeTrigger.create(),
            allowed_lateness=0,
        )

    expected: list[tuple[Any, int]] = []

    h = make()
    # add elements out-of-order
    el(h, "key2", 1, 0)
    el(h, "key2", 33, 1000)

    # do a snapshot, close and restore again
    snapshot = h.snapshot()

    h = make()
    h.restore(snapshot)

    el(h, "key2", 33, 2500)

    el(h, "key1", 1, 10)
    el(h, "key1", 2, 1000)
    el(h, "key1", 33, 2500)

    h.process_watermark(12000)

    expected.append((("key1-36", 10, 4000), 3999))
    expected.append((("key2-67", 0, 3000), 2999))
    assert out_sorted(h) == expect(expected)


# ---------------------------------------------------------------------------------------------
#  Processing-time and dynamic-gap sessions
# ---------------------------------------------------------------------------------------------


def test_processing_time_session_windows() -> None:
    """Port of WindowOperatorTest#testProcessingTimeSessionWindows."""
    h = WindowOperatorHarness(
        ProcessingTimeSessionWindows.withGap(Time.seconds(3)),
        SumReducer(),
        key_field="key",
        trigger=ProcessingTimeTrigger.create(),
        allowed_lateness=0,
    )
    expected: list[tuple[Any, int]] = []

    # timestamp is ignored in processing time
    h.set_processing_time(3)
    el(h, "key2", 1, 1)

    h.set_processing_time(1000)
    el(h, "key2", 1, 1002)

    h.set_processing_time(5000)

    expected.append((("key2", 2), 3999))
    assert out_sorted(h) == expect(expected)

    el(h, "key2", 1, 5000)
    el(h, "key2", 1, 5000)
    el(h, "key1", 1, 5000)
    el(h, "key1", 1, 5000)
    el(h, "key1", 1, 5000)

    h.set_processing_time(10000)

    expected.append((("key2", 2), 7999))
    expected.append((("key1", 3), 7999))
    assert out_sorted(h) == expect(expected)
    assert len(h.output_with_timestamps()) == len(expected)


def test_dynamic_event_time_session_windows() -> None:
    """Port of WindowOperatorTest#testDynamicEventTimeSessionWindows."""
    h = WindowOperatorHarness(
        EventTimeSessionWindows.withDynamicGap(GapExtractor()),
        SessionWindowFunction(),
        key_field="key",
        trigger=EventTimeTrigger.create(),
        allowed_lateness=0,
    )
    expected: list[tuple[Any, int]] = []

    # test different gaps for different keys
    el(h, "key1", 3, 10)

    el(h, "key2", 4, 5000)
    el(h, "key2", 5, 6000)

    h.process_watermark(8999)

    expected.append((("key1-3", 10, 3010), 3009))
    expected.append((("key2-9", 5000, 8000), 7999))
    assert out_sorted(h) == expect(expected)

    # test gap when it produces an end time before current timeout
    # the furthest timeout is respected
    el(h, "key2", 1, 9000)
    el(h, "key2", 2, 10000)
    el(h, "key2", 10, 10500)

    h.process_watermark(12999)

    expected.append((("key2-13", 9000, 12000), 11999))
    assert out_sorted(h) == expect(expected)

    # test gap when it produces an end time after current timeout
    el(h, "key2", 10, 13000)
    el(h, "key2", 10, 13500)
    el(h, "key2", 1, 14000)

    h.process_watermark(16999)

    expected.append((("key2-21", 13000, 16000), 15999))
    assert out_sorted(h) == expect(expected)


def test_dynamic_processing_time_session_windows() -> None:
    """Port of WindowOperatorTest#testDynamicProcessingTimeSessionWindows."""
    h = WindowOperatorHarness(
        ProcessingTimeSessionWindows.withDynamicGap(GapExtractor()),
        SessionWindowFunction(),
        key_field="key",
        trigger=ProcessingTimeTrigger.create(),
        allowed_lateness=0,
    )
    expected: list[tuple[Any, int]] = []

    # test different gaps for different keys
    h.set_processing_time(10)
    el(h, "key1", 3, 10)

    h.set_processing_time(5000)
    el(h, "key2", 4, 5000)
    h.set_processing_time(6000)
    el(h, "key2", 5, 6000)
    h.set_processing_time(8999)

    expected.append((("key1-3", 10, 3010), 3009))
    expected.append((("key2-9", 5000, 8000), 7999))

    # test gap when it produces an end time before current timeout
    # the furthest timeout is respected
    h.set_processing_time(9000)
    el(h, "key2", 1, 9000)
    h.set_processing_time(10000)
    el(h, "key2", 2, 10000)
    h.set_processing_time(10500)
    el(h, "key2", 10, 10500)
    h.set_processing_time(10500)

    expected.append((("key2-13", 9000, 12000), 11999))

    # test gap when it produces an end time after current timeout
    h.set_processing_time(13000)
    el(h, "key2", 10, 13000)
    h.set_processing_time(13500)
    el(h, "key2", 10, 13500)
    h.set_processing_time(14000)
    el(h, "key2", 1, 14000)
    h.set_processing_time(16999)

    expected.append((("key2-21", 13000, 16000), 15999))

    assert out_sorted(h) == expect(expected)


# ---------------------------------------------------------------------------------------------
#  Session windows: lateness and side output
# ---------------------------------------------------------------------------------------------


def _feed_until_second_session_fired(h: WindowOperatorHarness, expected: list) -> None:
    """The common prefix of the session lateness tests (gap 3s), up to watermark 14600."""
    el(h, "key2", 1, 1000)
    h.process_watermark(1999)
    assert out_sorted(h) == expect(expected)

    el(h, "key2", 1, 2000)
    h.process_watermark(4998)
    assert out_sorted(h) == expect(expected)

    # this will not be dropped because the session we're adding two has maxTimestamp
    # after the current watermark
    el(h, "key2", 1, 4500)

    # new session
    el(h, "key2", 1, 8500)
    h.process_watermark(7400)
    assert out_sorted(h) == expect(expected)

    # this will merge the two sessions into one
    el(h, "key2", 1, 7000)
    h.process_watermark(11501)

    expected.append((("key2-5", 1000, 11500), 11499))
    assert out_sorted(h) == expect(expected)

    # new session
    el(h, "key2", 1, 11600)
    h.process_watermark(14600)

    expected.append((("key2-1", 11600, 14600), 14599))
    assert out_sorted(h) == expect(expected)


def test_side_output_due_to_lateness_session_zero_lateness_purging_trigger() -> None:
    """Port of WindowOperatorTest#testSideOutputDueToLatenessSessionZeroLatenessPurgingTrigger."""
    h = _session_harness(
        (SumReducer(), ReducedSessionWindowFunction()),
        trigger=PurgingTrigger.of(EventTimeTrigger.create()),
        allowed_lateness=0,
        late_output_tag=LATE_OUTPUT_TAG,
    )
    expected: list[tuple[Any, int]] = []
    side_expected: list[tuple[Any, int]] = []

    _feed_until_second_session_fired(h, expected)

    # this is side output as late
    el(h, "key2", 1, 10000)
    side_expected.append((("key2", 1), 10000))

    # this is also side output as late (we test that they are not accidentally merged)
    el(h, "key2", 1, 10100)
    side_expected.append((("key2", 1), 10100))

    el(h, "key2", 1, 14500)
    h.process_watermark(20000)

    expected.append((("key2-1", 14500, 17500), 17499))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(100000)

    assert out_sorted(h) == expect(expected)
    assert side_sorted(h, LATE_OUTPUT_TAG) == expect(side_expected)


def test_side_output_due_to_lateness_session_zero_lateness() -> None:
    """Port of WindowOperatorTest#testSideOutputDueToLatenessSessionZeroLateness."""
    h = _session_harness(
        (SumReducer(), ReducedSessionWindowFunction()),
        trigger=EventTimeTrigger.create(),
        allowed_lateness=0,
        late_output_tag=LATE_OUTPUT_TAG,
    )
    expected: list[tuple[Any, int]] = []
    side_expected: list[tuple[Any, int]] = []

    _feed_until_second_session_fired(h, expected)

    # this is sideoutput as late, reuse last timestamp
    el(h, "key2", 1, 10000)
    side_expected.append((("key2", 1), 10000))

    el(h, "key2", 1, 14500)
    h.process_watermark(20000)

    expected.append((("key2-1", 14500, 17500), 17499))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(100000)

    assert out_sorted(h) == expect(expected)
    assert side_sorted(h, LATE_OUTPUT_TAG) == expect(side_expected)


def test_drop_due_to_lateness_session_with_lateness_purging_trigger() -> None:
    """Port of WindowOperatorTest#testDropDueToLatenessSessionWithLatenessPurgingTrigger."""
    # this has the same output as testSideOutputDueToLatenessSessionZeroLateness() because
    # the allowed lateness is too small to make a difference
    h = _session_harness(
        (SumReducer(), ReducedSessionWindowFunction()),
        trigger=PurgingTrigger.of(EventTimeTrigger.create()),
        allowed_lateness=10,
        late_output_tag=LATE_OUTPUT_TAG,
    )
    expected: list[tuple[Any, int]] = []

    _feed_until_second_session_fired(h, expected)

    el(h, "key2", 1, 10000)

    expected.append((("key2-1", 10000, 14600), 14599))

    el(h, "key2", 1, 14500)
    h.process_watermark(20000)

    expected.append((("key2-1", 10000, 17500), 17499))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(100000)

    assert out_sorted(h) == expect(expected)


def test_not_side_output_due_to_lateness_session_with_lateness() -> None:
    """Port of WindowOperatorTest#testNotSideOutputDueToLatenessSessionWithLateness."""
    # same as testSideOutputDueToLatenessSessionWithLateness() but with an accumulating
    # trigger, i.e. one that does not return FIRE_AND_PURGE when firing but just FIRE. The
    # expected results are therefore slightly different.
    h = _session_harness(
        (SumReducer(), ReducedSessionWindowFunction()),
        trigger=EventTimeTrigger.create(),
        allowed_lateness=10,
        late_output_tag=LATE_OUTPUT_TAG,
    )
    expected: list[tuple[Any, int]] = []

    _feed_until_second_session_fired(h, expected)

    # because of the small allowed lateness and because the trigger is accumulating
    # this will be merged into the session (11600-14600) and therefore will not
    # be sideoutput as late
    el(h, "key2", 1, 10000)

    el(h, "key2", 1, 14500)

    # adding ("key2", 1) extended the session to (10000-146000) for which
    # maxTimestamp <= currentWatermark. Therefore, we immediately get a firing
    # with the current version of EventTimeTrigger/EventTimeTriggerAccum
    expected.append((("key2-2", 10000, 14600), 14599))

    assert out_sorted(h) == expect(expected)
    assert h.side_output(LATE_OUTPUT_TAG) == []

    h.process_watermark(20000)

    expected.append((("key2-3", 10000, 17500), 17499))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(100000)

    assert out_sorted(h) == expect(expected)
    assert h.side_output(LATE_OUTPUT_TAG) == []


def test_not_side_output_due_to_lateness_session_with_huge_lateness_purging_trigger() -> None:
    """Port of WindowOperatorTest#testNotSideOutputDueToLatenessSessionWithHugeLatenessPurgingTrigger."""  # noqa: E501
    h = _session_harness(
        (SumReducer(), ReducedSessionWindowFunction()),
        trigger=PurgingTrigger.of(EventTimeTrigger.create()),
        allowed_lateness=10000,
        late_output_tag=LATE_OUTPUT_TAG,
    )
    expected: list[tuple[Any, int]] = []

    _feed_until_second_session_fired(h, expected)

    el(h, "key2", 1, 10000)

    expected.append((("key2-1", 1000, 14600), 14599))

    assert out_sorted(h) == expect(expected)
    assert h.side_output(LATE_OUTPUT_TAG) == []

    el(h, "key2", 1, 14500)
    h.process_watermark(20000)

    expected.append((("key2-1", 1000, 17500), 17499))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(100000)

    assert out_sorted(h) == expect(expected)
    assert h.side_output(LATE_OUTPUT_TAG) == []


def test_not_side_output_due_to_lateness_session_with_huge_lateness() -> None:
    """Port of WindowOperatorTest#testNotSideOutputDueToLatenessSessionWithHugeLateness."""
    h = _session_harness(
        (SumReducer(), ReducedSessionWindowFunction()),
        trigger=EventTimeTrigger.create(),
        allowed_lateness=10000,
        late_output_tag=LATE_OUTPUT_TAG,
    )
    expected: list[tuple[Any, int]] = []

    _feed_until_second_session_fired(h, expected)

    el(h, "key2", 1, 10000)

    # the maxTimestamp of the merged session is already late,
    # so we get an immediate firing
    expected.append((("key2-7", 1000, 14600), 14599))

    assert out_sorted(h) == expect(expected)
    assert h.side_output(LATE_OUTPUT_TAG) == []

    el(h, "key2", 1, 14500)
    h.process_watermark(20000)

    expected.append((("key2-8", 1000, 17500), 17499))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(100000)

    assert out_sorted(h) == expect(expected)
    assert h.side_output(LATE_OUTPUT_TAG) == []


# ---------------------------------------------------------------------------------------------
#  Session windows: cleanup timers
# ---------------------------------------------------------------------------------------------


def test_cleanup_timer_with_empty_list_state_for_session_windows() -> None:
    """Port of WindowOperatorTest#testCleanupTimerWithEmptyListStateForSessionWindows."""
    h = _session_harness(
        PassThroughFunction(), trigger=EventTimeTrigger.create(), allowed_lateness=10
    )
    expected: list[tuple[Any, int]] = []

    el(h, "key2", 1, 1000)
    h.process_watermark(4998)

    expected.append((("key2", 1), 3999))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(14600)
    assert out_sorted(h) == expect(expected)


def test_cleanup_timer_with_empty_reduce_state_for_session_windows() -> None:
    """Port of WindowOperatorTest#testCleanupTimerWithEmptyReduceStateForSessionWindows."""
    h = _session_harness(
        (SumReducer(), ReducedSessionWindowFunction()),
        trigger=EventTimeTrigger.create(),
        allowed_lateness=10,
    )
    expected: list[tuple[Any, int]] = []

    el(h, "key2", 1, 1000)
    h.process_watermark(4998)

    expected.append((("key2-1", 1000, 4000), 3999))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(14600)
    assert out_sorted(h) == expect(expected)
