"""Port of Flink's ``WindowOperatorTest`` (non-merging windows, triggers, lateness, cleanup).

Source: apache/flink,
flink-streaming-java/src/test/java/org/apache/flink/streaming/runtime/operators/windowing/
WindowOperatorTest.java (JUnit 5 version, ``WindowOperatorFactory`` / ``lateOutputTag``).
The session-window tests of the same class live in ``test_window_operator_flink_sessions.py``.

Translation rules
-----------------
* ``Tuple2<String, Integer>`` elements keyed by ``f0`` become ``{"key": k, "value": v}`` records
  with ``key_field="key"``; expected ``StreamRecord(Tuple2(k, v), ts)`` become ``((k, v), ts)``.
* Flink's harness output interleaves watermarks; ours does not. ``assertOutputEqualsSorted`` checks
  the *position* of every watermark, i.e. which records were emitted before each watermark. We
  keep that information by asserting the (sorted) output after every ``process_watermark`` whose
  watermark appears in Flink's expected queue.
* Snapshot/restore: ``snap = h.snapshot()``; a fresh harness built with the same arguments
  ``restore(snap)``s; like Flink's new harness it starts with empty output.

Partially ported (the observable part is kept, the rest is not expressible here)
------------------------------------------------------------------------------
* testSlidingEventTimeWindowsApply, testTumblingEventTimeWindowsApply: the
  ``RichWindowFunction`` open()/close() call counting (``closeCalled``) has no meaning here; the
  window output assertions are ported in full.
* testCleanupTimerWithEmptyStateNoResultForTumblingWindows: Flink inspects the operator's
  internal window ListState after every watermark. We assert the output (empty) in full and
  observe the window contents through the (still output-less) window function instead: the
  contents must still be ``[(test_key, 1)]`` when the cleanup timer fires at 2000.

Skipped Flink test methods
--------------------------
* None of the JUnit 5 version. Older versions' ``testDropDueToLateness*`` tests were renamed to
  ``testSideOutputDueToLateness*`` / ``testNotSideOutputDueToLateness*`` (ported), and the
  ``*Fold*`` tests (FoldingState, removed from Flink) and migration/snapshot-from-file tests
  (``WindowOperatorMigrationTest``) are out of scope.
"""

from __future__ import annotations

from typing import Any

from flink_window_helpers import (
    LATE_OUTPUT_TAG,
    PassThroughFunction,
    SumReducer,
    el,
    expect,
    norm,
    out_sorted,
    side_sorted,
)

from flinkwin import (
    ContinuousEventTimeTrigger,
    CountTrigger,
    EventTimeTrigger,
    GlobalWindows,
    ProcessingTimeTrigger,
    PurgingTrigger,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    Time,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowFunction,
)
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MAX_LONG, MIN_LONG


def tuple2_str(r: Any) -> str:
    """Java's ``Tuple2.toString()``: ``(f0,f1)``."""
    return f"({r['key']},{r['value']})"


def java_long(x: int) -> int:
    """Wrap a Python int to a Java ``long`` (two's complement overflow)."""
    return (x + 2**63) % 2**64 - 2**63


# ---------------------------------------------------------------------------------------------
#  UDFs (Flink's test UDFs)
# ---------------------------------------------------------------------------------------------


class RichSumReducer(WindowFunction):
    """Sums the window's values into ``(key, sum)`` (open/close bookkeeping not ported)."""

    def apply(self, key: Any, window: Any, inputs: Any) -> list[Any]:
        return [(key, sum(t["value"] for t in inputs))]


class PassThroughFunction2(WindowFunction):
    """``out.collect("GOT: " + Joiner.on(",").join(input))``."""

    def apply(self, key: Any, window: Any, inputs: Any) -> list[Any]:
        return ["GOT: " + ",".join(tuple2_str(t) for t in inputs)]


class EmptyReturnFunction(WindowFunction):
    """Emits nothing; records the contents it was called with (our view of the window state)."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[Any, ...]]] = []

    def apply(self, key: Any, window: Any, inputs: Any) -> list[Any]:
        self.calls.append([norm(t) for t in inputs])
        return []


class EventTimeTriggerAccumGC(Trigger):
    """Fires at the end of the window but does not purge; FIRE_AND_PURGE at end + cleanup_time."""

    def __init__(self, cleanup_time: int) -> None:
        self.cleanup_time = cleanup_time

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            # if the watermark is already past the window fire immediately
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        if time in (window.max_timestamp(), window.max_timestamp() + self.cleanup_time):
            return TriggerResult.FIRE_AND_PURGE
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: Any) -> None:
        ctx.delete_event_time_timer(window.max_timestamp())

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Any, ctx: Any) -> None:
        ctx.register_event_time_timer(window.max_timestamp())

    def __repr__(self) -> str:
        return "EventTimeTrigger()"


class FireEverytimeOnElementAndEventTimeTrigger(Trigger):
    """FIRE on every element, every event-time and processing-time timer; clear() does nothing."""

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.FIRE

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.FIRE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> TriggerResult:
        return TriggerResult.FIRE

    def clear(self, window: Any, ctx: Any) -> None:
        pass


# ---------------------------------------------------------------------------------------------
#  Sliding / tumbling event-time windows (with snapshot & restore)
# ---------------------------------------------------------------------------------------------

_OUT_OF_ORDER_INPUT = [
    ("key2", 1, 3999),
    ("key2", 1, 3000),
    ("key1", 1, 20),
    ("key1", 1, 0),
    ("key1", 1, 999),
    ("key2", 1, 1998),
    ("key2", 1, 1999),
    ("key2", 1, 1000),
]


def _feed(h: WindowOperatorHarness, elements: list[tuple[str, int, int]]) -> None:
    for key, value, ts in elements:
        el(h, key, value, ts)


def _run_sliding_event_time_windows(make) -> None:
    """Flink's private ``testSlidingEventTimeWindows(operator)``."""
    h = make()
    expected: list[tuple[Any, int]] = []

    # add elements out-of-order
    _feed(h, _OUT_OF_ORDER_INPUT)

    h.process_watermark(999)
    expected.append((("key1", 3), 999))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(1999)
    expected += [(("key1", 3), 1999), (("key2", 3), 1999)]
    assert out_sorted(h) == expect(expected)

    h.process_watermark(2999)
    expected += [(("key1", 3), 2999), (("key2", 3), 2999)]
    assert out_sorted(h) == expect(expected)

    # do a snapshot, close and restore again
    snapshot = h.snapshot()
    expected = []
    h = make()
    h.restore(snapshot)

    h.process_watermark(3999)
    expected.append((("key2", 5), 3999))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(4999)
    expected.append((("key2", 2), 4999))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(5999)
    expected.append((("key2", 2), 5999))
    assert out_sorted(h) == expect(expected)

    # those don't have any effect...
    h.process_watermark(6999)
    h.process_watermark(7999)
    assert out_sorted(h) == expect(expected)


def test_sliding_event_time_windows_reduce() -> None:
    """Port of WindowOperatorTest#testSlidingEventTimeWindowsReduce."""

    def make() -> WindowOperatorHarness:
        return WindowOperatorHarness(
            SlidingEventTimeWindows.of(Time.seconds(3), Time.seconds(1)),
            SumReducer(),
            key_field="key",
            trigger=EventTimeTrigger.create(),
            allowed_lateness=0,
        )

    _run_sliding_event_time_windows(make)


def test_sliding_event_time_windows_apply() -> None:
    """Port of WindowOperatorTest#testSlidingEventTimeWindowsApply."""

    def make() -> WindowOperatorHarness:
        return WindowOperatorHarness(
            SlidingEventTimeWindows.of(Time.seconds(3), Time.seconds(1)),
            RichSumReducer(),
            key_field="key",
            trigger=EventTimeTrigger.create(),
            allowed_lateness=0,
        )

    _run_sliding_event_time_windows(make)


def _run_tumbling_event_time_windows(make) -> None:
    """Flink's private ``testTumblingEventTimeWindows(operator)``."""
    h = make()
    expected: list[tuple[Any, int]] = []

    # add elements out-of-order
    _feed(h, _OUT_OF_ORDER_INPUT)

    h.process_watermark(999)
    assert out_sorted(h) == expect(expected)

    h.process_watermark(1999)
    assert out_sorted(h) == expect(expected)

    # do a snapshot, close and restore again
    snapshot = h.snapshot()
    assert out_sorted(h) == expect(expected)

    h = make()
    expected = []
    h.restore(snapshot)

    h.process_watermark(2999)
    expected += [(("key1", 3), 2999), (("key2", 3), 2999)]
    assert out_sorted(h) == expect(expected)

    h.process_watermark(3999)
    assert out_sorted(h) == expect(expected)

    h.process_watermark(4999)
    assert out_sorted(h) == expect(expected)

    h.process_watermark(5999)
    expected.append((("key2", 2), 5999))
    assert out_sorted(h) == expect(expected)

    # those don't have any effect...
    h.process_watermark(6999)
    h.process_watermark(7999)
    assert out_sorted(h) == expect(expected)


def test_tumbling_event_time_windows_reduce() -> None:
    """Port of WindowOperatorTest#testTumblingEventTimeWindowsReduce."""

    def make() -> WindowOperatorHarness:
        return WindowOperatorHarness(
            TumblingEventTimeWindows.of(Time.seconds(3)),
            SumReducer(),
            key_field="key",
            trigger=EventTimeTrigger.create(),
            allowed_lateness=0,
        )

    _run_tumbling_event_time_windows(make)


def test_tumbling_event_time_windows_apply() -> None:
    """Port of WindowOperatorTest#testTumblingEventTimeWindowsApply."""

    def make() -> WindowOperatorHarness:
        return WindowOperatorHarness(
            TumblingEventTimeWindows.of(Time.seconds(3)),
            RichSumReducer(),
            key_field="key",
            trigger=EventTimeTrigger.create(),
            allowed_lateness=0,
        )

    _run_tumbling_event_time_windows(make)


# ---------------------------------------------------------------------------------------------
#  Global windows with custom triggers
# ---------------------------------------------------------------------------------------------


def test_continuous_watermark_trigger() -> None:
    """Port of WindowOperatorTest#testContinuousWatermarkTrigger."""
    h = WindowOperatorHarness(
        GlobalWindows.create(),
        SumReducer(),
        key_field="key",
        trigger=ContinuousEventTimeTrigger.of(Time.seconds(3)),
        allowed_lateness=0,
    )
    expected: list[tuple[Any, int]] = []

    # The global window actually ignores these timestamps...
    el(h, "key1", 1, 0)

    # add elements out-of-order
    el(h, "key2", 1, 3000)
    el(h, "key2", 1, 3999)

    el(h, "key1", 1, 20)
    el(h, "key1", 1, 999)

    el(h, "key2", 1, 1998)
    el(h, "key2", 1, 1999)
    el(h, "key2", 1, 1000)

    h.process_watermark(1000)
    assert out_sorted(h) == expect(expected)

    h.process_watermark(2000)
    assert out_sorted(h) == expect(expected)

    h.process_watermark(3000)
    expected.append((("key1", 3), MAX_LONG))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(4000)
    assert out_sorted(h) == expect(expected)

    h.process_watermark(5000)
    assert out_sorted(h) == expect(expected)

    h.process_watermark(6000)
    expected.append((("key1", 3), MAX_LONG))
    expected.append((("key2", 5), MAX_LONG))
    assert out_sorted(h) == expect(expected)

    # those don't have any effect...
    h.process_watermark(7000)
    h.process_watermark(8000)
    assert out_sorted(h) == expect(expected)


def test_count_trigger() -> None:
    """Port of WindowOperatorTest#testCountTrigger."""

    def make() -> WindowOperatorHarness:
        return WindowOperatorHarness(
            GlobalWindows.create(),
            SumReducer(),
            key_field="key",
            trigger=PurgingTrigger.of(CountTrigger.of(4)),
            allowed_lateness=0,
        )

    h = make()
    expected: list[tuple[Any, int]] = []

    # The global window actually ignores these timestamps...

    # add elements out-of-order
    el(h, "key2", 1, 3000)
    el(h, "key2", 1, 3999)

    el(h, "key1", 1, 20)
    el(h, "key1", 1, 0)
    el(h, "key1", 1, 999)

    el(h, "key2", 1, 1998)
    el(h, "key2", 1, 1999)

    # do a snapshot, close and restore again
    snapshot = h.snapshot()
    output_before_close = list(h.output_with_timestamps())

    h = make()
    h.restore(snapshot)

    el(h, "key2", 1, 1000)

    expected.append((("key2", 4), MAX_LONG))
    assert expect(output_before_close + list(h.output_with_timestamps())) == expect(expected)

    el(h, "key1", 1, 10999)

    el(h, "key2", 1, 1000)
    el(h, "key2", 1, 1000)
    el(h, "key2", 1, 1000)

    expected.append((("key1", 4), MAX_LONG))
    expected.append((("key2", 4), MAX_LONG))
    assert expect(output_before_close + list(h.output_with_timestamps())) == expect(expected)


def test_end_of_stream_trigger() -> None:
    """Port of WindowOperatorTest#testEndOfStreamTrigger."""
    h = WindowOperatorHarness(
        GlobalWindows.createWithEndOfStreamTrigger(),
        SumReducer(),
        key_field="key",
        trigger=GlobalWindows.createWithEndOfStreamTrigger().get_default_trigger(),
        allowed_lateness=0,
    )

    # add elements out-of-order
    el(h, "key2", 1, 3000)
    el(h, "key2", 1, 3999)
    el(h, "key1", 1, 20)
    el(h, "key1", 1, 0)
    el(h, "key1", 1, 999)
    el(h, "key2", 1, 1998)
    el(h, "key2", 1, 1999)
    el(h, "key2", 1, 1000)

    assert out_sorted(h) == []

    h.process_watermark(MAX_LONG)  # Watermark.MAX_WATERMARK

    expected = [(("key1", 3), MAX_LONG), (("key2", 5), MAX_LONG)]
    assert out_sorted(h) == expect(expected)


# ---------------------------------------------------------------------------------------------
#  Processing-time windows
# ---------------------------------------------------------------------------------------------


def test_processing_time_tumbling_windows() -> None:
    """Port of WindowOperatorTest#testProcessingTimeTumblingWindows."""
    h = WindowOperatorHarness(
        TumblingProcessingTimeWindows.of(Time.seconds(3)),
        SumReducer(),
        key_field="key",
        trigger=ProcessingTimeTrigger.create(),
        allowed_lateness=0,
    )
    expected: list[tuple[Any, int]] = []

    h.set_processing_time(3)

    # timestamp is ignored in processing time
    el(h, "key2", 1, MAX_LONG)
    el(h, "key2", 1, 7000)
    el(h, "key2", 1, 7000)

    el(h, "key1", 1, 7000)
    el(h, "key1", 1, 7000)

    h.set_processing_time(5000)

    expected.append((("key2", 3), 2999))
    expected.append((("key1", 2), 2999))
    assert out_sorted(h) == expect(expected)

    el(h, "key1", 1, 7000)
    el(h, "key1", 1, 7000)
    el(h, "key1", 1, 7000)

    h.set_processing_time(7000)

    expected.append((("key1", 3), 5999))
    assert out_sorted(h) == expect(expected)


def test_processing_time_sliding_windows() -> None:
    """Port of WindowOperatorTest#testProcessingTimeSlidingWindows."""
    h = WindowOperatorHarness(
        SlidingProcessingTimeWindows.of(Time.seconds(3), Time.seconds(1)),
        SumReducer(),
        key_field="key",
        trigger=ProcessingTimeTrigger.create(),
        allowed_lateness=0,
    )
    expected: list[tuple[Any, int]] = []

    # timestamp is ignored in processing time
    h.set_processing_time(3)
    el(h, "key2", 1, MAX_LONG)

    h.set_processing_time(1000)

    expected.append((("key2", 1), 999))
    assert out_sorted(h) == expect(expected)

    el(h, "key2", 1, MAX_LONG)
    el(h, "key2", 1, MAX_LONG)

    h.set_processing_time(2000)

    expected.append((("key2", 3), 1999))
    assert out_sorted(h) == expect(expected)

    el(h, "key1", 1, MAX_LONG)
    el(h, "key1", 1, MAX_LONG)

    h.set_processing_time(3000)

    expected.append((("key2", 3), 2999))
    expected.append((("key1", 2), 2999))
    assert out_sorted(h) == expect(expected)

    el(h, "key1", 1, MAX_LONG)
    el(h, "key1", 1, MAX_LONG)
    el(h, "key1", 1, MAX_LONG)

    h.set_processing_time(7000)

    expected.append((("key2", 2), 3999))
    expected.append((("key1", 5), 3999))
    expected.append((("key1", 5), 4999))
    expected.append((("key1", 3), 5999))
    assert out_sorted(h) == expect(expected)


# ---------------------------------------------------------------------------------------------
#  Lateness, side output and cleanup (non-merging windows)
# ---------------------------------------------------------------------------------------------


def test_lateness() -> None:
    """Port of WindowOperatorTest#testLateness."""
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(2)),
        SumReducer(),
        key_field="key",
        trigger=PurgingTrigger.of(EventTimeTrigger.create()),
        allowed_lateness=500,
        late_output_tag=LATE_OUTPUT_TAG,
    )
    expected: list[tuple[Any, int]] = []
    late_expected: list[tuple[Any, int]] = []

    el(h, "key2", 1, 500)
    h.process_watermark(1500)
    assert out_sorted(h) == expect(expected)

    el(h, "key2", 1, 1300)
    h.process_watermark(2300)

    expected.append((("key2", 2), 1999))
    assert out_sorted(h) == expect(expected)

    # this will not be sideoutput because window.maxTimestamp() + allowedLateness >
    # currentWatermark
    el(h, "key2", 1, 1997)
    h.process_watermark(6000)

    # this is 1 and not 3 because the trigger fires and purges
    expected.append((("key2", 1), 1999))
    assert out_sorted(h) == expect(expected)

    # this will be side output because window.maxTimestamp() + allowedLateness <
    # currentWatermark
    el(h, "key2", 1, 1998)
    h.process_watermark(7000)

    late_expected.append((("key2", 1), 1998))

    assert out_sorted(h) == expect(expected)
    assert side_sorted(h, LATE_OUTPUT_TAG) == expect(late_expected)


class _Ctx:
    """A WindowAssignerContext for calling an assigner directly (as Flink's test does)."""

    def get_current_processing_time(self) -> int:
        return MIN_LONG

    getCurrentProcessingTime = get_current_processing_time  # noqa: N815


def test_cleanup_time_overflow() -> None:
    """Port of WindowOperatorTest#testCleanupTimeOverflow."""
    window_size = 1000
    lateness = 2000

    window_assigner = TumblingEventTimeWindows.of(Time.milliseconds(window_size))
    h = WindowOperatorHarness(
        window_assigner,
        SumReducer(),
        key_field="key",
        trigger=EventTimeTrigger.create(),
        allowed_lateness=lateness,
    )
    expected: list[tuple[Any, int]] = []

    timestamp = MAX_LONG - 1750
    windows = list(window_assigner.assign_windows({"key": "key2", "value": 1}, timestamp, _Ctx()))
    assert len(windows) == 1
    window = windows[0]

    el(h, "key2", 1, timestamp)

    # the garbage collection timer would wrap-around (in Java long arithmetic)
    assert java_long(window.max_timestamp() + lateness) < window.max_timestamp()

    # and it would prematurely fire with watermark (Long.MAX_VALUE - 1500)
    assert java_long(window.max_timestamp() + lateness) < MAX_LONG - 1500

    # if we don't correctly prevent wrap-around in the garbage collection
    # timers this watermark will clean our window state for the just-added
    # element/window
    h.process_watermark(MAX_LONG - 1500)
    assert out_sorted(h) == expect(expected)

    # this watermark is before the end timestamp of our only window
    assert MAX_LONG - 1500 < window.max_timestamp() < MAX_LONG

    # push in a watermark that will trigger computation of our window
    h.process_watermark(window.max_timestamp())

    expected.append((("key2", 1), window.max_timestamp()))
    assert out_sorted(h) == expect(expected)


def test_side_output_due_to_lateness_tumbling() -> None:
    """Port of WindowOperatorTest#testSideOutputDueToLatenessTumbling."""
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(2)),
        SumReducer(),
        key_field="key",
        trigger=EventTimeTrigger.create(),
        allowed_lateness=0,
        late_output_tag=LATE_OUTPUT_TAG,
    )
    expected: list[tuple[Any, int]] = []
    side_expected: list[tuple[Any, int]] = []

    # normal element
    el(h, "key2", 1, 1000)
    h.process_watermark(1985)
    assert out_sorted(h) == expect(expected)

    # this will not be dropped because window.maxTimestamp() + allowedLateness >
    # currentWatermark
    el(h, "key2", 1, 1980)
    h.process_watermark(1999)

    expected.append((("key2", 2), 1999))
    assert out_sorted(h) == expect(expected)

    # sideoutput as late, will reuse previous timestamp since only input tuple is sideoutputed
    el(h, "key2", 1, 1998)
    side_expected.append((("key2", 1), 1998))

    el(h, "key2", 1, 2001)
    h.process_watermark(2999)
    assert out_sorted(h) == expect(expected)

    h.process_watermark(3999)

    expected.append((("key2", 1), 3999))

    assert out_sorted(h) == expect(expected)
    assert side_sorted(h, LATE_OUTPUT_TAG) == expect(side_expected)


def test_side_output_due_to_lateness_sliding() -> None:
    """Port of WindowOperatorTest#testSideOutputDueToLatenessSliding."""
    h = WindowOperatorHarness(
        SlidingEventTimeWindows.of(Time.seconds(3), Time.seconds(1)),
        SumReducer(),
        key_field="key",
        trigger=EventTimeTrigger.create(),
        allowed_lateness=0,
        late_output_tag=LATE_OUTPUT_TAG,
    )
    expected: list[tuple[Any, int]] = []
    side_expected: list[tuple[Any, int]] = []

    el(h, "key2", 1, 1000)
    h.process_watermark(1999)

    expected.append((("key2", 1), 1999))
    assert out_sorted(h) == expect(expected)

    el(h, "key2", 1, 2000)
    h.process_watermark(3000)

    expected.append((("key2", 2), 2999))
    assert out_sorted(h) == expect(expected)

    el(h, "key1", 1, 3001)

    # lateness is set to 0 and window size = 3 sec and slide 1, the following 2 elements (2400)
    # are assigned to windows ending at 2999, 3999, 4999.
    # The 2999 is dropped because it is already late (WM = 2999) but the rest are kept.

    el(h, "key2", 1, 2400)
    el(h, "key2", 1, 2400)
    el(h, "key1", 1, 3001)
    el(h, "key2", 1, 3900)
    h.process_watermark(6000)

    expected.append((("key2", 5), 3999))
    expected.append((("key1", 2), 3999))

    expected.append((("key2", 4), 4999))
    expected.append((("key1", 2), 4999))

    expected.append((("key2", 1), 5999))
    expected.append((("key1", 2), 5999))
    assert out_sorted(h) == expect(expected)

    # sideoutput element due to lateness
    el(h, "key1", 1, 3001)
    side_expected.append((("key1", 1), 3001))

    h.process_watermark(25000)

    assert out_sorted(h) == expect(expected)
    assert side_sorted(h, LATE_OUTPUT_TAG) == expect(side_expected)


def test_cleanup_timer_with_empty_list_state_for_tumbling_windows2() -> None:
    """Port of WindowOperatorTest#testCleanupTimerWithEmptyListStateForTumblingWindows2."""
    lateness = 100
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(2)),
        PassThroughFunction2(),
        key_field="key",
        trigger=EventTimeTriggerAccumGC(lateness),
        allowed_lateness=lateness,
    )
    expected: list[tuple[Any, int]] = []

    # normal element
    el(h, "key2", 1, 1000)
    h.process_watermark(1599)
    assert out_sorted(h) == expect(expected)

    h.process_watermark(1999)  # here it fires and purges
    expected.append(("GOT: (key2,1)", 1999))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(2100)  # here is the cleanup timer
    assert out_sorted(h) == expect(expected)

    h.process_watermark(5000)
    assert out_sorted(h) == expect(expected)


def test_cleanup_timer_with_empty_list_state_for_tumbling_windows() -> None:
    """Port of WindowOperatorTest#testCleanupTimerWithEmptyListStateForTumblingWindows."""
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(2)),
        PassThroughFunction(),
        key_field="key",
        trigger=EventTimeTrigger.create(),
        allowed_lateness=1,
    )
    expected: list[tuple[Any, int]] = []

    # normal element
    el(h, "key2", 1, 1000)
    h.process_watermark(1599)
    assert out_sorted(h) == expect(expected)

    h.process_watermark(1999)  # here it fires and purges
    expected.append((("key2", 1), 1999))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(2000)  # here is the cleanup timer
    assert out_sorted(h) == expect(expected)

    h.process_watermark(5000)
    assert out_sorted(h) == expect(expected)


def test_cleanup_timer_with_empty_reduce_state_for_tumbling_windows() -> None:
    """Port of WindowOperatorTest#testCleanupTimerWithEmptyReduceStateForTumblingWindows."""
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(2)),
        SumReducer(),
        key_field="key",
        trigger=EventTimeTrigger.create(),
        allowed_lateness=1,
    )
    expected: list[tuple[Any, int]] = []

    # normal element
    el(h, "key2", 1, 1000)
    h.process_watermark(1599)
    assert out_sorted(h) == expect(expected)

    h.process_watermark(1999)  # here it fires and purges
    expected.append((("key2", 1), 1999))
    assert out_sorted(h) == expect(expected)

    h.process_watermark(2000)  # here is the cleanup timer
    assert out_sorted(h) == expect(expected)

    h.process_watermark(5000)
    assert out_sorted(h) == expect(expected)


def test_cleanup_timer_with_empty_state_no_result_for_tumbling_windows() -> None:
    """Port of WindowOperatorTest#testCleanupTimerWithEmptyStateNoResultForTumblingWindows."""
    function = EmptyReturnFunction()
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(2)),
        function,
        key_field="key",
        trigger=FireEverytimeOnElementAndEventTimeTrigger(),
        allowed_lateness=1,
    )
    contents = [("test_key", 1)]

    # normal element: the trigger FIREs on the element, the window holds [(test_key,1)]
    el(h, "test_key", 1, 1000)
    assert function.calls == [contents]

    # no trigger timers: nothing happens until the cleanup timer (1999 + 1 = 2000)
    for wm in (1599, 1699, 1799, 1999):
        h.process_watermark(wm)
        assert function.calls == [contents]

    # here is the cleanup timer: the trigger FIREs once more on the (still full) window,
    # then the window state is cleared
    h.process_watermark(2000)
    assert function.calls == [contents, contents]

    h.process_watermark(5000)
    assert function.calls == [contents, contents]

    assert out_sorted(h) == []
