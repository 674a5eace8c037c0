"""Ports of Flink's window assigner unit tests.

Sources (apache/flink flink-streaming-java/src/test/java/org/apache/flink/streaming/runtime/
operators/windowing/): TumblingEventTimeWindowsTest, TumblingProcessingTimeWindowsTest,
SlidingEventTimeWindowsTest, SlidingProcessingTimeWindowsTest, EventTimeSessionWindowsTest,
ProcessingTimeSessionWindowsTest, DynamicEventTimeSessionWindowsTest,
DynamicProcessingTimeSessionWindowsTest, GlobalWindowsTest, WindowStaggerTest.

Translation notes:
- Mockito ``WindowAssignerContext`` mocks -> ``MockContext`` (an unstubbed Mockito mock answers
  ``getCurrentProcessingTime()`` with 0, so that is the default).
- Mockito ``MergeCallback`` mocks + ``verify`` -> ``RecordingMergeCallback``.
- Mockito ``SessionWindowTimeGapExtractor`` mocks -> ``GapExtractor`` (a lookup table).
- Flink's ``IllegalArgumentException`` -> ``ValueError`` whose message contains Flink's phrase.
- AssertJ ``containsExactly`` / Hamcrest ``contains`` -> ordered list equality;
  ``containsExactlyInAnyOrder`` / ``containsInAnyOrder`` -> sorted list equality.

Skipped (parts of) tests:
- Every ``assigner.getWindowSerializer(new ExecutionConfig())`` assertion inside the
  ``testProperties`` methods: serializers have no meaning in flinkwin (windows are pickled); the
  rest of each ``testProperties`` (isEventTime, default trigger type) is ported.
No test method is skipped entirely.
"""

import re

import pytest

from flinkwin import (
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindow,
    GlobalWindows,
    NeverTrigger,
    ProcessingTimeSessionWindows,
    ProcessingTimeTrigger,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    Time,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from flinkwin.assigners import (
    DynamicEventTimeSessionWindows,
    DynamicProcessingTimeSessionWindows,
    WindowStagger,
)
from flinkwin.time import MIN_LONG, Duration


class MockContext:
    """Stand-in for ``mock(WindowAssigner.WindowAssignerContext.class)``."""

    def __init__(self, processing_time=0):
        self.processing_time = processing_time

    def get_current_processing_time(self):
        return self.processing_time

    getCurrentProcessingTime = get_current_processing_time  # noqa: N815


class RecordingMergeCallback:
    """Stand-in for ``mock(MergingWindowAssigner.MergeCallback.class)``; records merges."""

    def __init__(self):
        self.calls = []

    def merge(self, to_be_merged, merge_result):
        self.calls.append((list(to_be_merged), merge_result))

    def times_called_with(self, windows_in_any_order, merge_result):
        """``verify(callback, times(n)).merge(argThat(containsInAnyOrder(...)), eq(result))``."""
        expected = sorted(windows_in_any_order)
        return sum(
            1 for tbm, result in self.calls if sorted(tbm) == expected and result == merge_result
        )


class GapExtractor:
    """Stand-in for a mocked ``SessionWindowTimeGapExtractor``: ``extract(element)`` looks the gap
    up in ``gaps`` (or returns ``default`` like ``when(extractor.extract(any()))``)."""

    def __init__(self, gaps=None, default=None):
        self.gaps = gaps or {}
        self.default = default

    def extract(self, element):
        if isinstance(element, str) and element in self.gaps:
            return self.gaps[element]
        return self.default

    __call__ = extract


def _raises(phrase):
    return pytest.raises(ValueError, match=re.escape(phrase))


def _any_order(windows):
    return sorted(windows)


# ---------------------------------------------------------------------------------------------
# TumblingEventTimeWindowsTest
# ---------------------------------------------------------------------------------------------


def test_tumbling_event_time_windows_window_assignment():
    """Port of TumblingEventTimeWindowsTest#testWindowAssignment."""
    ctx = MockContext()

    assigner = TumblingEventTimeWindows.of(Time.milliseconds(5000))

    assert list(assigner.assign_windows("String", 0, ctx)) == [TimeWindow(0, 5000)]
    assert list(assigner.assign_windows("String", 4999, ctx)) == [TimeWindow(0, 5000)]
    assert list(assigner.assign_windows("String", 5000, ctx)) == [TimeWindow(5000, 10000)]


def test_tumbling_event_time_windows_window_assignment_with_stagger():
    """Port of TumblingEventTimeWindowsTest#testWindowAssignmentWithStagger."""
    ctx = MockContext()

    assigner = TumblingEventTimeWindows.of(
        Time.milliseconds(5000), Time.milliseconds(0), WindowStagger.NATURAL
    )

    ctx.processing_time = 150
    assert list(assigner.assign_windows("String", 150, ctx)) == [TimeWindow(150, 5150)]
    assert list(assigner.assign_windows("String", 5099, ctx)) == [TimeWindow(150, 5150)]
    assert list(assigner.assign_windows("String", 5300, ctx)) == [TimeWindow(5150, 10150)]


def test_tumbling_event_time_windows_window_assignment_with_global_offset():
    """Port of TumblingEventTimeWindowsTest#testWindowAssignmentWithGlobalOffset."""
    ctx = MockContext()

    assigner = TumblingEventTimeWindows.of(Time.milliseconds(5000), Time.milliseconds(100))

    assert list(assigner.assign_windows("String", 100, ctx)) == [TimeWindow(100, 5100)]
    assert list(assigner.assign_windows("String", 5099, ctx)) == [TimeWindow(100, 5100)]
    assert list(assigner.assign_windows("String", 5100, ctx)) == [TimeWindow(5100, 10100)]


def test_tumbling_event_time_windows_window_assignment_with_negative_global_offset():
    """Port of TumblingEventTimeWindowsTest#testWindowAssignmentWithNegativeGlobalOffset."""
    ctx = MockContext()

    assigner = TumblingEventTimeWindows.of(Time.milliseconds(5000), Time.milliseconds(-100))

    assert list(assigner.assign_windows("String", 0, ctx)) == [TimeWindow(-100, 4900)]
    assert list(assigner.assign_windows("String", 4899, ctx)) == [TimeWindow(-100, 4900)]
    assert list(assigner.assign_windows("String", 4900, ctx)) == [TimeWindow(4900, 9900)]


def test_tumbling_event_time_windows_time_units():
    """Port of TumblingEventTimeWindowsTest#testTimeUnits."""
    # sanity check with one other time unit
    ctx = MockContext()

    assigner = TumblingEventTimeWindows.of(Time.seconds(5), Time.seconds(1))

    assert list(assigner.assign_windows("String", 1000, ctx)) == [TimeWindow(1000, 6000)]
    assert list(assigner.assign_windows("String", 5999, ctx)) == [TimeWindow(1000, 6000)]
    assert list(assigner.assign_windows("String", 6000, ctx)) == [TimeWindow(6000, 11000)]


def test_tumbling_event_time_windows_invalid_parameters():
    """Port of TumblingEventTimeWindowsTest#testInvalidParameters."""
    with _raises("abs(offset) < size"):
        TumblingEventTimeWindows.of(Time.seconds(-1))

    with _raises("abs(offset) < size"):
        TumblingEventTimeWindows.of(Time.seconds(10), Time.seconds(20))

    with _raises("abs(offset) < size"):
        TumblingEventTimeWindows.of(Time.seconds(10), Time.seconds(-11))


def test_tumbling_event_time_windows_properties():
    """Port of TumblingEventTimeWindowsTest#testProperties."""
    assigner = TumblingEventTimeWindows.of(Time.seconds(5), Time.milliseconds(100))

    assert assigner.is_event_time() is True
    assert isinstance(assigner.get_default_trigger(), EventTimeTrigger)


# ---------------------------------------------------------------------------------------------
# TumblingProcessingTimeWindowsTest
# ---------------------------------------------------------------------------------------------


def test_tumbling_processing_time_windows_window_assignment():
    """Port of TumblingProcessingTimeWindowsTest#testWindowAssignment."""
    ctx = MockContext()

    assigner = TumblingProcessingTimeWindows.of(Time.milliseconds(5000))

    ctx.processing_time = 0
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(0, 5000)]

    ctx.processing_time = 4999
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(0, 5000)]

    ctx.processing_time = 5000
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(5000, 10000)]


def test_tumbling_processing_time_windows_window_assignment_with_stagger():
    """Port of TumblingProcessingTimeWindowsTest#testWindowAssignmentWithStagger."""
    ctx = MockContext()

    assigner = TumblingProcessingTimeWindows.of(
        Time.milliseconds(5000), Time.milliseconds(0), WindowStagger.NATURAL
    )

    ctx.processing_time = 150
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(150, 5150)]

    ctx.processing_time = 5049
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(150, 5150)]

    ctx.processing_time = 5150
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(5150, 10150)]


def test_tumbling_processing_time_windows_window_assignment_with_global_offset():
    """Port of TumblingProcessingTimeWindowsTest#testWindowAssignmentWithGlobalOffset."""
    ctx = MockContext()

    assigner = TumblingProcessingTimeWindows.of(Time.milliseconds(5000), Time.milliseconds(100))

    ctx.processing_time = 100
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(100, 5100)]

    ctx.processing_time = 5099
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(100, 5100)]

    ctx.processing_time = 5100
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(5100, 10100)]


def test_tumbling_processing_time_windows_window_assignment_with_negative_global_offset():
    """Port of TumblingProcessingTimeWindowsTest#testWindowAssignmentWithNegativeGlobalOffset."""
    ctx = MockContext()

    assigner = TumblingProcessingTimeWindows.of(Time.milliseconds(5000), Time.milliseconds(-100))

    ctx.processing_time = 100
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(-100, 4900)]

    ctx.processing_time = 4899
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(-100, 4900)]

    ctx.processing_time = 4900
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(4900, 9900)]


def test_tumbling_processing_time_windows_time_units():
    """Port of TumblingProcessingTimeWindowsTest#testTimeUnits."""
    # sanity check with one other time unit
    ctx = MockContext()

    assigner = TumblingProcessingTimeWindows.of(Time.seconds(5), Time.seconds(1))

    ctx.processing_time = 1000
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(1000, 6000)]

    ctx.processing_time = 5999
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(1000, 6000)]

    ctx.processing_time = 6000
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(6000, 11000)]


def test_tumbling_processing_time_windows_invalid_parameters():
    """Port of TumblingProcessingTimeWindowsTest#testInvalidParameters."""
    with _raises("abs(offset) < size"):
        TumblingProcessingTimeWindows.of(Time.seconds(-1))

    with _raises("abs(offset) < size"):
        TumblingProcessingTimeWindows.of(Time.seconds(10), Time.seconds(20))

    with _raises("abs(offset) < size"):
        TumblingProcessingTimeWindows.of(Time.seconds(10), Time.seconds(-11))


def test_tumbling_processing_time_windows_properties():
    """Port of TumblingProcessingTimeWindowsTest#testProperties."""
    assigner = TumblingProcessingTimeWindows.of(Time.seconds(5), Time.milliseconds(100))

    assert assigner.is_event_time() is False
    assert isinstance(assigner.get_default_trigger(None), ProcessingTimeTrigger)


# ---------------------------------------------------------------------------------------------
# SlidingEventTimeWindowsTest
# ---------------------------------------------------------------------------------------------


def test_sliding_event_time_windows_window_assignment():
    """Port of SlidingEventTimeWindowsTest#testWindowAssignment."""
    ctx = MockContext()

    assigner = SlidingEventTimeWindows.of(Time.milliseconds(5000), Time.milliseconds(1000))

    assert _any_order(assigner.assign_windows("String", 0, ctx)) == _any_order(
        [
            TimeWindow(-4000, 1000),
            TimeWindow(-3000, 2000),
            TimeWindow(-2000, 3000),
            TimeWindow(-1000, 4000),
            TimeWindow(0, 5000),
        ]
    )

    assert _any_order(assigner.assign_windows("String", 4999, ctx)) == _any_order(
        [
            TimeWindow(0, 5000),
            TimeWindow(1000, 6000),
            TimeWindow(2000, 7000),
            TimeWindow(3000, 8000),
            TimeWindow(4000, 9000),
        ]
    )

    assert _any_order(assigner.assign_windows("String", 5000, ctx)) == _any_order(
        [
            TimeWindow(1000, 6000),
            TimeWindow(2000, 7000),
            TimeWindow(3000, 8000),
            TimeWindow(4000, 9000),
            TimeWindow(5000, 10000),
        ]
    )


def test_sliding_event_time_windows_window_assignment_with_offset():
    """Port of SlidingEventTimeWindowsTest#testWindowAssignmentWithOffset."""
    ctx = MockContext()

    assigner = SlidingEventTimeWindows.of(
        Time.milliseconds(5000), Time.milliseconds(1000), Time.milliseconds(100)
    )

    assert _any_order(assigner.assign_windows("String", 100, ctx)) == _any_order(
        [
            TimeWindow(-3900, 1100),
            TimeWindow(-2900, 2100),
            TimeWindow(-1900, 3100),
            TimeWindow(-900, 4100),
            TimeWindow(100, 5100),
        ]
    )

    assert _any_order(assigner.assign_windows("String", 5099, ctx)) == _any_order(
        [
            TimeWindow(100, 5100),
            TimeWindow(1100, 6100),
            TimeWindow(2100, 7100),
            TimeWindow(3100, 8100),
            TimeWindow(4100, 9100),
        ]
    )

    assert _any_order(assigner.assign_windows("String", 5100, ctx)) == _any_order(
        [
            TimeWindow(1100, 6100),
            TimeWindow(2100, 7100),
            TimeWindow(3100, 8100),
            TimeWindow(4100, 9100),
            TimeWindow(5100, 10100),
        ]
    )


def test_sliding_event_time_windows_window_assignment_with_negative_offset():
    """Port of SlidingEventTimeWindowsTest#testWindowAssignmentWithNegativeOffset."""
    ctx = MockContext()

    assigner = SlidingEventTimeWindows.of(
        Time.milliseconds(5000), Time.milliseconds(1000), Time.milliseconds(-100)
    )

    assert _any_order(assigner.assign_windows("String", 0, ctx)) == _any_order(
        [
            TimeWindow(-4100, 900),
            TimeWindow(-3100, 1900),
            TimeWindow(-2100, 2900),
            TimeWindow(-1100, 3900),
            TimeWindow(-100, 4900),
        ]
    )

    assert _any_order(assigner.assign_windows("String", 4899, ctx)) == _any_order(
        [
            TimeWindow(-100, 4900),
            TimeWindow(900, 5900),
            TimeWindow(1900, 6900),
            TimeWindow(2900, 7900),
            TimeWindow(3900, 8900),
        ]
    )

    assert _any_order(assigner.assign_windows("String", 4900, ctx)) == _any_order(
        [
            TimeWindow(900, 5900),
            TimeWindow(1900, 6900),
            TimeWindow(2900, 7900),
            TimeWindow(3900, 8900),
            TimeWindow(4900, 9900),
        ]
    )


def test_sliding_event_time_windows_time_units():
    """Port of SlidingEventTimeWindowsTest#testTimeUnits."""
    # sanity check with one other time unit
    ctx = MockContext()

    assigner = SlidingEventTimeWindows.of(Time.seconds(5), Time.seconds(1), Time.milliseconds(500))

    assert _any_order(assigner.assign_windows("String", 100, ctx)) == _any_order(
        [
            TimeWindow(-4500, 500),
            TimeWindow(-3500, 1500),
            TimeWindow(-2500, 2500),
            TimeWindow(-1500, 3500),
            TimeWindow(-500, 4500),
        ]
    )

    assert _any_order(assigner.assign_windows("String", 5499, ctx)) == _any_order(
        [
            TimeWindow(500, 5500),
            TimeWindow(1500, 6500),
            TimeWindow(2500, 7500),
            TimeWindow(3500, 8500),
            TimeWindow(4500, 9500),
        ]
    )

    assert _any_order(assigner.assign_windows("String", 5100, ctx)) == _any_order(
        [
            TimeWindow(500, 5500),
            TimeWindow(1500, 6500),
            TimeWindow(2500, 7500),
            TimeWindow(3500, 8500),
            TimeWindow(4500, 9500),
        ]
    )


def test_sliding_event_time_windows_invalid_parameters():
    """Port of SlidingEventTimeWindowsTest#testInvalidParameters."""
    with _raises("abs(offset) < slide and size > 0"):
        SlidingEventTimeWindows.of(Time.seconds(-2), Time.seconds(1))

    with _raises("abs(offset) < slide and size > 0"):
        SlidingEventTimeWindows.of(Time.seconds(2), Time.seconds(-1))

    with _raises("abs(offset) < slide and size > 0"):
        SlidingEventTimeWindows.of(Time.seconds(-20), Time.seconds(10), Time.seconds(-1))

    with _raises("abs(offset) < slide and size > 0"):
        SlidingEventTimeWindows.of(Time.seconds(20), Time.seconds(10), Time.seconds(-11))

    with _raises("abs(offset) < slide and size > 0"):
        SlidingEventTimeWindows.of(Time.seconds(20), Time.seconds(10), Time.seconds(11))


def test_sliding_event_time_windows_properties():
    """Port of SlidingEventTimeWindowsTest#testProperties."""
    assigner = SlidingEventTimeWindows.of(Time.seconds(5), Time.milliseconds(100))

    assert assigner.is_event_time() is True
    assert isinstance(assigner.get_default_trigger(), EventTimeTrigger)


# ---------------------------------------------------------------------------------------------
# SlidingProcessingTimeWindowsTest
# ---------------------------------------------------------------------------------------------


def test_sliding_processing_time_windows_window_assignment():
    """Port of SlidingProcessingTimeWindowsTest#testWindowAssignment."""
    ctx = MockContext()

    assigner = SlidingProcessingTimeWindows.of(Time.milliseconds(5000), Time.milliseconds(1000))

    ctx.processing_time = 0
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(-4000, 1000),
            TimeWindow(-3000, 2000),
            TimeWindow(-2000, 3000),
            TimeWindow(-1000, 4000),
            TimeWindow(0, 5000),
        ]
    )

    ctx.processing_time = 4999
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(0, 5000),
            TimeWindow(1000, 6000),
            TimeWindow(2000, 7000),
            TimeWindow(3000, 8000),
            TimeWindow(4000, 9000),
        ]
    )

    ctx.processing_time = 5000
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(1000, 6000),
            TimeWindow(2000, 7000),
            TimeWindow(3000, 8000),
            TimeWindow(4000, 9000),
            TimeWindow(5000, 10000),
        ]
    )


def test_sliding_processing_time_windows_window_assignment_with_offset():
    """Port of SlidingProcessingTimeWindowsTest#testWindowAssignmentWithOffset."""
    ctx = MockContext()

    assigner = SlidingProcessingTimeWindows.of(
        Time.milliseconds(5000), Time.milliseconds(1000), Time.milliseconds(100)
    )

    ctx.processing_time = 100
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(-3900, 1100),
            TimeWindow(-2900, 2100),
            TimeWindow(-1900, 3100),
            TimeWindow(-900, 4100),
            TimeWindow(100, 5100),
        ]
    )

    ctx.processing_time = 5099
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(100, 5100),
            TimeWindow(1100, 6100),
            TimeWindow(2100, 7100),
            TimeWindow(3100, 8100),
            TimeWindow(4100, 9100),
        ]
    )

    ctx.processing_time = 5100
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(1100, 6100),
            TimeWindow(2100, 7100),
            TimeWindow(3100, 8100),
            TimeWindow(4100, 9100),
            TimeWindow(5100, 10100),
        ]
    )


def test_sliding_processing_time_windows_window_assignment_with_negative_offset():
    """Port of SlidingProcessingTimeWindowsTest#testWindowAssignmentWithNegativeOffset."""
    ctx = MockContext()

    assigner = SlidingProcessingTimeWindows.of(
        Time.milliseconds(5000), Time.milliseconds(1000), Time.milliseconds(-100)
    )

    ctx.processing_time = 0
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(-4100, 900),
            TimeWindow(-3100, 1900),
            TimeWindow(-2100, 2900),
            TimeWindow(-1100, 3900),
            TimeWindow(-100, 4900),
        ]
    )

    ctx.processing_time = 4899
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(-100, 4900),
            TimeWindow(900, 5900),
            TimeWindow(1900, 6900),
            TimeWindow(2900, 7900),
            TimeWindow(3900, 8900),
        ]
    )

    ctx.processing_time = 4900
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(900, 5900),
            TimeWindow(1900, 6900),
            TimeWindow(2900, 7900),
            TimeWindow(3900, 8900),
            TimeWindow(4900, 9900),
        ]
    )


def test_sliding_processing_time_windows_time_units():
    """Port of SlidingProcessingTimeWindowsTest#testTimeUnits."""
    # sanity check with one other time unit
    ctx = MockContext()

    assigner = SlidingProcessingTimeWindows.of(
        Time.seconds(5), Time.seconds(1), Time.milliseconds(500)
    )

    ctx.processing_time = 100
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(-4500, 500),
            TimeWindow(-3500, 1500),
            TimeWindow(-2500, 2500),
            TimeWindow(-1500, 3500),
            TimeWindow(-500, 4500),
        ]
    )

    ctx.processing_time = 5499
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(500, 5500),
            TimeWindow(1500, 6500),
            TimeWindow(2500, 7500),
            TimeWindow(3500, 8500),
            TimeWindow(4500, 9500),
        ]
    )

    ctx.processing_time = 5100
    assert _any_order(assigner.assign_windows("String", MIN_LONG, ctx)) == _any_order(
        [
            TimeWindow(500, 5500),
            TimeWindow(1500, 6500),
            TimeWindow(2500, 7500),
            TimeWindow(3500, 8500),
            TimeWindow(4500, 9500),
        ]
    )


def test_sliding_processing_time_windows_invalid_parameters():
    """Port of SlidingProcessingTimeWindowsTest#testInvalidParameters."""
    with _raises("abs(offset) < slide and size > 0"):
        SlidingProcessingTimeWindows.of(Time.seconds(-2), Time.seconds(1))

    with _raises("abs(offset) < slide and size > 0"):
        SlidingProcessingTimeWindows.of(Time.seconds(2), Time.seconds(-1))

    with _raises("abs(offset) < slide and size > 0"):
        SlidingProcessingTimeWindows.of(Time.seconds(-20), Time.seconds(10), Time.seconds(-1))

    with _raises("abs(offset) < slide and size > 0"):
        SlidingProcessingTimeWindows.of(Time.seconds(20), Time.seconds(10), Time.seconds(-11))

    with _raises("abs(offset) < slide and size > 0"):
        SlidingProcessingTimeWindows.of(Time.seconds(20), Time.seconds(10), Time.seconds(11))


def test_sliding_processing_time_windows_properties():
    """Port of SlidingProcessingTimeWindowsTest#testProperties."""
    assigner = SlidingProcessingTimeWindows.of(Time.seconds(5), Time.milliseconds(100))

    assert assigner.is_event_time() is False
    assert isinstance(assigner.get_default_trigger(None), ProcessingTimeTrigger)


# ---------------------------------------------------------------------------------------------
# Session windows: shared merge scenarios (identical in the four session assigner test classes)
# ---------------------------------------------------------------------------------------------


def _check_merge_single_point_window(assigner):
    callback = RecordingMergeCallback()
    assigner.merge_windows([TimeWindow(0, 0)], callback)
    # verify(callback, never()).merge(anyCollection(), any())
    assert callback.calls == []


def _check_merge_single_window(assigner):
    callback = RecordingMergeCallback()
    assigner.merge_windows([TimeWindow(0, 1)], callback)
    # verify(callback, never()).merge(anyCollection(), any())
    assert callback.calls == []


def _check_merge_consecutive_windows(assigner):
    callback = RecordingMergeCallback()
    assigner.merge_windows(
        [
            TimeWindow(0, 1),
            TimeWindow(1, 2),
            TimeWindow(2, 3),
            TimeWindow(4, 5),
            TimeWindow(5, 6),
        ],
        callback,
    )

    assert (
        callback.times_called_with(
            [TimeWindow(0, 1), TimeWindow(1, 2), TimeWindow(2, 3)], TimeWindow(0, 3)
        )
        == 1
    )
    assert callback.times_called_with([TimeWindow(4, 5), TimeWindow(5, 6)], TimeWindow(4, 6)) == 1
    assert len(callback.calls) == 2


def _check_merge_covering_window(assigner):
    callback = RecordingMergeCallback()
    assigner.merge_windows(
        [
            TimeWindow(1, 1),
            TimeWindow(0, 2),
            TimeWindow(4, 7),
            TimeWindow(5, 6),
        ],
        callback,
    )

    assert callback.times_called_with([TimeWindow(1, 1), TimeWindow(0, 2)], TimeWindow(0, 2)) == 1
    assert callback.times_called_with([TimeWindow(5, 6), TimeWindow(4, 7)], TimeWindow(4, 7)) == 1
    assert len(callback.calls) == 2


# ---------------------------------------------------------------------------------------------
# EventTimeSessionWindowsTest
# ---------------------------------------------------------------------------------------------


def test_event_time_session_windows_window_assignment():
    """Port of EventTimeSessionWindowsTest#testWindowAssignment."""
    session_gap = 5000

    ctx = MockContext()

    assigner = EventTimeSessionWindows.withGap(Time.milliseconds(session_gap))

    assert list(assigner.assign_windows("String", 0, ctx)) == [TimeWindow(0, 0 + session_gap)]
    assert list(assigner.assign_windows("String", 4999, ctx)) == [
        TimeWindow(4999, 4999 + session_gap)
    ]
    assert list(assigner.assign_windows("String", 5000, ctx)) == [
        TimeWindow(5000, 5000 + session_gap)
    ]


def test_event_time_session_windows_merge_single_point_window():
    """Port of EventTimeSessionWindowsTest#testMergeSinglePointWindow."""
    _check_merge_single_point_window(EventTimeSessionWindows.withGap(Time.milliseconds(5000)))


def test_event_time_session_windows_merge_single_window():
    """Port of EventTimeSessionWindowsTest#testMergeSingleWindow."""
    _check_merge_single_window(EventTimeSessionWindows.withGap(Time.milliseconds(5000)))


def test_event_time_session_windows_merge_consecutive_windows():
    """Port of EventTimeSessionWindowsTest#testMergeConsecutiveWindows."""
    _check_merge_consecutive_windows(EventTimeSessionWindows.withGap(Time.milliseconds(5000)))


def test_event_time_session_windows_merge_covering_window():
    """Port of EventTimeSessionWindowsTest#testMergeCoveringWindow."""
    _check_merge_covering_window(EventTimeSessionWindows.withGap(Time.milliseconds(5000)))


def test_event_time_session_windows_time_units():
    """Port of EventTimeSessionWindowsTest#testTimeUnits."""
    # sanity check with one other time unit
    session_gap = 5000

    ctx = MockContext()

    assigner = EventTimeSessionWindows.withGap(Time.seconds(session_gap // 1000))

    assert list(assigner.assign_windows("String", 0, ctx)) == [TimeWindow(0, 0 + session_gap)]
    assert list(assigner.assign_windows("String", 4999, ctx)) == [
        TimeWindow(4999, 4999 + session_gap)
    ]
    assert list(assigner.assign_windows("String", 5000, ctx)) == [
        TimeWindow(5000, 5000 + session_gap)
    ]


def test_event_time_session_windows_invalid_parameters():
    """Port of EventTimeSessionWindowsTest#testInvalidParameters."""
    with _raises("0 < size"):
        EventTimeSessionWindows.withGap(Time.seconds(-1))

    with _raises("0 < size"):
        EventTimeSessionWindows.withGap(Time.seconds(0))


def test_event_time_session_windows_properties():
    """Port of EventTimeSessionWindowsTest#testProperties."""
    assigner = EventTimeSessionWindows.withGap(Time.seconds(5))

    assert assigner.is_event_time() is True
    assert isinstance(assigner.get_default_trigger(), EventTimeTrigger)


def test_event_time_session_windows_dynamic_gap_properties():
    """Port of EventTimeSessionWindowsTest#testDynamicGapProperties."""
    extractor = GapExtractor()
    assigner = EventTimeSessionWindows.withDynamicGap(extractor)

    assert assigner is not None
    # Flink declares the result as DynamicEventTimeSessionWindows<String>
    assert isinstance(assigner, DynamicEventTimeSessionWindows)
    assert assigner.is_event_time() is True


# ---------------------------------------------------------------------------------------------
# ProcessingTimeSessionWindowsTest
# ---------------------------------------------------------------------------------------------


def test_processing_time_session_windows_window_assignment():
    """Port of ProcessingTimeSessionWindowsTest#testWindowAssignment."""
    ctx = MockContext()

    assigner = ProcessingTimeSessionWindows.withGap(Duration.ofMillis(5000))

    ctx.processing_time = 0
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(0, 5000)]

    ctx.processing_time = 4999
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(4999, 9999)]

    ctx.processing_time = 5000
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(5000, 10000)]


def test_processing_time_session_windows_merge_single_point_window():
    """Port of ProcessingTimeSessionWindowsTest#testMergeSinglePointWindow."""
    _check_merge_single_point_window(ProcessingTimeSessionWindows.withGap(Duration.ofMillis(5000)))


def test_processing_time_session_windows_merge_single_window():
    """Port of ProcessingTimeSessionWindowsTest#testMergeSingleWindow."""
    _check_merge_single_window(ProcessingTimeSessionWindows.withGap(Duration.ofMillis(5000)))


def test_processing_time_session_windows_merge_consecutive_windows():
    """Port of ProcessingTimeSessionWindowsTest#testMergeConsecutiveWindows."""
    _check_merge_consecutive_windows(ProcessingTimeSessionWindows.withGap(Duration.ofMillis(5000)))


def test_processing_time_session_windows_merge_covering_window():
    """Port of ProcessingTimeSessionWindowsTest#testMergeCoveringWindow."""
    _check_merge_covering_window(ProcessingTimeSessionWindows.withGap(Duration.ofMillis(5000)))


def test_processing_time_session_windows_time_units():
    """Port of ProcessingTimeSessionWindowsTest#testTimeUnits."""
    # sanity check with one other time unit
    ctx = MockContext()

    assigner = ProcessingTimeSessionWindows.withGap(Duration.ofSeconds(5))

    ctx.processing_time = 0
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(0, 5000)]

    ctx.processing_time = 4999
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(4999, 9999)]

    ctx.processing_time = 5000
    assert list(assigner.assign_windows("String", MIN_LONG, ctx)) == [TimeWindow(5000, 10000)]


def test_processing_time_session_windows_invalid_parameters():
    """Port of ProcessingTimeSessionWindowsTest#testInvalidParameters."""
    with _raises("0 < size"):
        ProcessingTimeSessionWindows.withGap(Duration.ofSeconds(-1))

    with _raises("0 < size"):
        ProcessingTimeSessionWindows.withGap(Duration.ofSeconds(0))


def test_processing_time_session_windows_properties():
    """Port of ProcessingTimeSessionWindowsTest#testProperties."""
    assigner = ProcessingTimeSessionWindows.withGap(Duration.ofSeconds(5))

    assert assigner.is_event_time() is False
    assert isinstance(assigner.get_default_trigger(), ProcessingTimeTrigger)


def test_processing_time_session_windows_dynamic_gap_properties():
    """Port of ProcessingTimeSessionWindowsTest#testDynamicGapProperties."""
    extractor = GapExtractor()
    assigner = ProcessingTimeSessionWindows.withDynamicGap(extractor)

    assert assigner is not None
    # Flink declares the result as DynamicProcessingTimeSessionWindows<String>
    assert isinstance(assigner, DynamicProcessingTimeSessionWindows)
    assert assigner.is_event_time() is False


# ---------------------------------------------------------------------------------------------
# DynamicEventTimeSessionWindowsTest
# ---------------------------------------------------------------------------------------------


def _gap_table_extractor():
    return GapExtractor({"gap5000": 5000, "gap4000": 4000, "gap9000": 9000})


def test_dynamic_event_time_session_windows_window_assignment():
    """Port of DynamicEventTimeSessionWindowsTest#testWindowAssignment."""
    ctx = MockContext()
    extractor = _gap_table_extractor()

    assigner = DynamicEventTimeSessionWindows.withDynamicGap(extractor)

    assert list(assigner.assign_windows("gap5000", 0, ctx)) == [TimeWindow(0, 5000)]
    assert list(assigner.assign_windows("gap4000", 4999, ctx)) == [TimeWindow(4999, 8999)]
    assert list(assigner.assign_windows("gap9000", 5000, ctx)) == [TimeWindow(5000, 14000)]


def test_dynamic_event_time_session_windows_merge_single_point_window():
    """Port of DynamicEventTimeSessionWindowsTest#testMergeSinglePointWindow."""
    _check_merge_single_point_window(
        DynamicEventTimeSessionWindows.withDynamicGap(GapExtractor(default=5000))
    )


def test_dynamic_event_time_session_windows_merge_single_window():
    """Port of DynamicEventTimeSessionWindowsTest#testMergeSingleWindow."""
    _check_merge_single_window(
        DynamicEventTimeSessionWindows.withDynamicGap(GapExtractor(default=5000))
    )


def test_dynamic_event_time_session_windows_merge_consecutive_windows():
    """Port of DynamicEventTimeSessionWindowsTest#testMergeConsecutiveWindows."""
    _check_merge_consecutive_windows(
        DynamicEventTimeSessionWindows.withDynamicGap(GapExtractor(default=5000))
    )


def test_dynamic_event_time_session_windows_merge_covering_window():
    """Port of DynamicEventTimeSessionWindowsTest#testMergeCoveringWindow."""
    _check_merge_covering_window(
        DynamicEventTimeSessionWindows.withDynamicGap(GapExtractor(default=5000))
    )


def test_dynamic_event_time_session_windows_invalid_parameters():
    """Port of DynamicEventTimeSessionWindowsTest#testInvalidParameters."""
    ctx = MockContext()
    assigner = DynamicEventTimeSessionWindows.withDynamicGap(GapExtractor(default=-1))

    with _raises("0 < gap"):
        assigner.assign_windows([object()], 1, ctx)


def test_dynamic_event_time_session_windows_properties():
    """Port of DynamicEventTimeSessionWindowsTest#testProperties."""
    assigner = DynamicEventTimeSessionWindows.withDynamicGap(GapExtractor(default=5000))

    assert assigner.is_event_time() is True
    assert isinstance(assigner.get_default_trigger(), EventTimeTrigger)


# ---------------------------------------------------------------------------------------------
# DynamicProcessingTimeSessionWindowsTest
# ---------------------------------------------------------------------------------------------


def test_dynamic_processing_time_session_windows_window_assignment():
    """Port of DynamicProcessingTimeSessionWindowsTest#testWindowAssignment."""
    ctx = MockContext()
    extractor = _gap_table_extractor()

    assigner = DynamicProcessingTimeSessionWindows.withDynamicGap(extractor)

    ctx.processing_time = 0
    assert list(assigner.assign_windows("gap5000", MIN_LONG, ctx)) == [TimeWindow(0, 5000)]

    ctx.processing_time = 4999
    assert list(assigner.assign_windows("gap4000", MIN_LONG, ctx)) == [TimeWindow(4999, 8999)]

    ctx.processing_time = 5000
    assert list(assigner.assign_windows("gap9000", MIN_LONG, ctx)) == [TimeWindow(5000, 14000)]


def test_dynamic_processing_time_session_windows_merge_single_point_window():
    """Port of DynamicProcessingTimeSessionWindowsTest#testMergeSinglePointWindow."""
    _check_merge_single_point_window(
        DynamicProcessingTimeSessionWindows.withDynamicGap(GapExtractor(default=5000))
    )


def test_dynamic_processing_time_session_windows_merge_single_window():
    """Port of DynamicProcessingTimeSessionWindowsTest#testMergeSingleWindow."""
    _check_merge_single_window(
        DynamicProcessingTimeSessionWindows.withDynamicGap(GapExtractor(default=5000))
    )


def test_dynamic_processing_time_session_windows_merge_consecutive_windows():
    """Port of DynamicProcessingTimeSessionWindowsTest#testMergeConsecutiveWindows."""
    _check_merge_consecutive_windows(
        DynamicProcessingTimeSessionWindows.withDynamicGap(GapExtractor(default=5000))
    )


def test_dynamic_processing_time_session_windows_merge_covering_window():
    """Port of DynamicProcessingTimeSessionWindowsTest#testMergeCoveringWindow."""
    _check_merge_covering_window(
        DynamicProcessingTimeSessionWindows.withDynamicGap(GapExtractor(default=5000))
    )


def test_dynamic_processing_time_session_windows_invalid_parameters():
    """Port of DynamicProcessingTimeSessionWindowsTest#testInvalidParameters."""
    ctx = MockContext()
    assigner = DynamicProcessingTimeSessionWindows.withDynamicGap(GapExtractor(default=-1))

    with _raises("0 < gap"):
        assigner.assign_windows([object()], 1, ctx)


def test_dynamic_processing_time_session_windows_properties():
    """Port of DynamicProcessingTimeSessionWindowsTest#testProperties."""
    assigner = DynamicProcessingTimeSessionWindows.withDynamicGap(GapExtractor(default=5000))

    assert assigner.is_event_time() is False
    assert isinstance(assigner.get_default_trigger(), ProcessingTimeTrigger)


# ---------------------------------------------------------------------------------------------
# GlobalWindowsTest
# ---------------------------------------------------------------------------------------------


def test_global_windows_window_assignment():
    """Port of GlobalWindowsTest#testWindowAssignment."""
    ctx = MockContext()

    assigner = GlobalWindows.create()

    assert list(assigner.assign_windows("String", 0, ctx)) == [GlobalWindow.get()]
    assert list(assigner.assign_windows("String", 4999, ctx)) == [GlobalWindow.get()]
    assert list(assigner.assign_windows("String", 5000, ctx)) == [GlobalWindow.get()]


def test_global_windows_properties():
    """Port of GlobalWindowsTest#testProperties."""
    from flinkwin.triggers import EndOfStreamTrigger

    assigner = GlobalWindows.create()

    assert assigner.is_event_time() is False
    assert isinstance(assigner.get_default_trigger(), NeverTrigger)
    assigner = GlobalWindows.createWithEndOfStreamTrigger()
    assert isinstance(assigner.get_default_trigger(), EndOfStreamTrigger)


# ---------------------------------------------------------------------------------------------
# WindowStaggerTest
# ---------------------------------------------------------------------------------------------


def test_window_stagger():
    """Port of WindowStaggerTest#testWindowStagger."""
    size_in_milliseconds = 5000

    assert WindowStagger.ALIGNED.get_stagger_offset(500, size_in_milliseconds) == 0
    assert WindowStagger.NATURAL.get_stagger_offset(5500, size_in_milliseconds) == 500
    assert WindowStagger.RANDOM.get_stagger_offset(0, size_in_milliseconds) >= 0
    assert WindowStagger.RANDOM.get_stagger_offset(0, size_in_milliseconds) < size_in_milliseconds
