"""Port of Flink's ``EvictingWindowOperatorTest``.

Source: apache/flink flink-streaming-java/src/test/java/org/apache/flink/streaming/runtime/
operators/windowing/EvictingWindowOperatorTest.java

Translation notes:
- ``EvictingWindowOperator`` + ``KeyedOneInputStreamOperatorTestHarness`` ->
  ``flinkwin.testing.WindowOperatorHarness(..., evictor=...)``, keyed by ``key_field="key"``
  (Flink's ``TupleKeySelector`` selects field 0).
- ``Tuple2<String, Integer>`` elements -> ``{"key": ..., "value": ...}`` records; the expected
  ``StreamRecord(Tuple2("key2", 3), 2999)`` -> ``(("key2", 3), 2999)``.
- ``TestHarnessUtil.assertOutputEqualsSorted(..., ResultSortComparator)`` -> equality of the
  outputs sorted by (timestamp, key, value); ``Watermark`` entries are dropped (the harness does
  not emit watermarks). Flink's harness output accumulates, so each check compares the full
  output so far, as Flink does.
- ``RichSumReducer`` -> ``SumWindowFunction`` (a ``WindowFunction`` emitting ``(key, sum)``);
  ``ReduceApplyWindowFunction(SumReducer, PassThroughWindowFunction)`` -> the
  ``(reduce_function, window_function)`` pair accepted by the harness.
- ``new StreamRecord<>(value)`` without a timestamp (testTimeEvictorNoTimestamp) -> timestamp
  ``None``.

Skipped assertions (the rest of each test is ported):
- ``Assert.assertEquals("Close was not called.", 1, closeCalled.get())`` (and RichSumReducer's
  "Open was not called" guard): the flinkwin harness contract has no open()/close() lifecycle
  for user functions, so there is nothing to observe.
Skipped tests: none.
"""

from flinkwin import (
    CountEvictor,
    CountTrigger,
    DeltaEvictor,
    EventTimeTrigger,
    GlobalWindows,
    Time,
    TimeEvictor,
    TumblingEventTimeWindows,
    WindowFunction,
)
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MAX_LONG


class SumWindowFunction(WindowFunction):
    """Port of EvictingWindowOperatorTest.RichSumReducer: emits ``(key, sum of field 1)``."""

    def apply(self, key, window, inputs):
        return [(key, sum(t[1] for t in inputs))]


class PassThroughWindowFunction(WindowFunction):
    """Flink's ``PassThroughWindowFunction``: emits every input unchanged."""

    def apply(self, key, window, inputs):
        return list(inputs)


def sum_reducer(value1, value2):
    """Port of EvictingWindowOperatorTest.SumReducer: ``(value2.f0, value1.f1 + value2.f1)``."""
    return (value2[0], value1[1] + value2[1])


def delta_fn(old_data_point, new_data_point):
    """The test's ``DeltaFunction``: ``newDataPoint.f1 - oldDataPoint.f1``."""
    return new_data_point[1] - old_data_point[1]


def rec(key, value):
    return {"key": key, "value": value}


def _sort_key(item):
    (key, value), timestamp = item
    return (timestamp, key, value)


def assert_output_equals_sorted(expected, harness):
    actual = [(tuple(v), ts) for v, ts in harness.output_with_timestamps()]
    assert sorted(actual, key=_sort_key) == sorted(expected, key=_sort_key), (
        "Output was not correct."
    )


def _harness(assigner, function, trigger, evictor):
    return WindowOperatorHarness(
        assigner, function, key_field="key", trigger=trigger, evictor=evictor
    )


def test_count_evictor_evict_after():
    """Port of EvictingWindowOperatorTest#testCountEvictorEvictAfter."""
    window_size = 4
    trigger_count = 2
    evict_after = True

    h = _harness(
        GlobalWindows.create(),
        SumWindowFunction(),
        CountTrigger.of(trigger_count),
        CountEvictor.of(window_size, evict_after),
    )

    initial_time = 0
    expected = []

    h.process_element(rec("key2", 1), initial_time + 3000)
    h.process_element(rec("key2", 1), initial_time + 3999)

    h.process_element(rec("key1", 1), initial_time + 20)
    h.process_element(rec("key1", 1), initial_time)
    h.process_element(rec("key1", 1), initial_time + 999)

    h.process_element(rec("key2", 1), initial_time + 1998)
    h.process_element(rec("key2", 1), initial_time + 1999)
    h.process_element(rec("key2", 1), initial_time + 1000)

    expected.append((("key2", 2), MAX_LONG))
    expected.append((("key2", 4), MAX_LONG))
    expected.append((("key1", 2), MAX_LONG))

    assert_output_equals_sorted(expected, h)

    h.process_element(rec("key1", 1), initial_time + 10999)
    h.process_element(rec("key2", 1), initial_time + 1000)

    expected.append((("key1", 4), MAX_LONG))
    expected.append((("key2", 6), MAX_LONG))

    assert_output_equals_sorted(expected, h)

    h.process_element(rec("key2", 1), initial_time + 1000)
    h.process_element(rec("key2", 1), initial_time + 1000)
    expected.append((("key2", 6), MAX_LONG))

    assert_output_equals_sorted(expected, h)


def test_time_evictor_evict_after():
    """Port of EvictingWindowOperatorTest#testTimeEvictorEvictAfter."""
    trigger_count = 2
    evict_after = True

    h = _harness(
        GlobalWindows.create(),
        SumWindowFunction(),
        CountTrigger.of(trigger_count),
        TimeEvictor.of(Time.seconds(2), evict_after),
    )

    initial_time = 0
    expected = []

    h.process_element(rec("key2", 1), initial_time + 1000)
    h.process_element(rec("key2", 1), initial_time + 4000)

    h.process_element(rec("key1", 1), initial_time + 20)
    h.process_element(rec("key1", 1), initial_time)
    h.process_element(rec("key1", 1), initial_time + 999)

    h.process_element(rec("key2", 1), initial_time + 3500)
    h.process_element(rec("key2", 1), initial_time + 2001)
    h.process_element(rec("key2", 1), initial_time + 1001)

    expected.append((("key2", 2), MAX_LONG))
    expected.append((("key1", 2), MAX_LONG))
    expected.append((("key2", 3), MAX_LONG))

    assert_output_equals_sorted(expected, h)

    h.process_element(rec("key1", 1), initial_time + 10999)
    h.process_element(rec("key2", 1), initial_time + 1002)

    expected.append((("key1", 4), MAX_LONG))
    expected.append((("key2", 5), MAX_LONG))

    assert_output_equals_sorted(expected, h)


def test_time_evictor_evict_before():
    """Port of EvictingWindowOperatorTest#testTimeEvictorEvictBefore."""
    trigger_count = 2
    window_size = 4

    h = _harness(
        TumblingEventTimeWindows.of(Time.seconds(window_size)),
        SumWindowFunction(),
        CountTrigger.of(trigger_count),
        TimeEvictor.of(Time.seconds(2)),
    )

    initial_time = 0
    expected = []

    h.process_element(rec("key2", 1), initial_time + 1000)
    h.process_element(rec("key2", 1), initial_time + 3999)

    h.process_element(rec("key1", 1), initial_time + 20)
    h.process_element(rec("key1", 1), initial_time)
    h.process_element(rec("key1", 1), initial_time + 999)
    h.process_element(rec("key1", 1), initial_time + 5999)

    h.process_element(rec("key2", 1), initial_time + 3500)
    h.process_element(rec("key2", 1), initial_time + 2001)
    h.process_element(rec("key2", 1), initial_time + 1001)

    expected.append((("key2", 1), 3999))
    expected.append((("key1", 2), 3999))
    expected.append((("key2", 3), 3999))

    assert_output_equals_sorted(expected, h)

    h.process_element(rec("key1", 1), initial_time + 6500)
    h.process_element(rec("key2", 1), initial_time + 1002)

    expected.append((("key1", 2), 7999))
    expected.append((("key2", 3), 3999))

    assert_output_equals_sorted(expected, h)


def test_time_evictor_no_timestamp():
    """Port of EvictingWindowOperatorTest#testTimeEvictorNoTimestamp."""
    trigger_count = 2
    evict_after = True

    h = _harness(
        GlobalWindows.create(),
        SumWindowFunction(),
        CountTrigger.of(trigger_count),
        TimeEvictor.of(Time.seconds(2), evict_after),
    )

    expected = []

    h.process_element(rec("key2", 1), None)
    h.process_element(rec("key2", 1), None)

    h.process_element(rec("key1", 1), None)
    h.process_element(rec("key1", 1), None)
    h.process_element(rec("key1", 1), None)

    h.process_element(rec("key2", 1), None)
    h.process_element(rec("key2", 1), None)
    h.process_element(rec("key2", 1), None)

    expected.append((("key2", 2), MAX_LONG))
    expected.append((("key1", 2), MAX_LONG))
    expected.append((("key2", 4), MAX_LONG))

    assert_output_equals_sorted(expected, h)

    h.process_element(rec("key1", 1), None)
    h.process_element(rec("key2", 1), None)

    expected.append((("key1", 4), MAX_LONG))
    expected.append((("key2", 6), MAX_LONG))

    assert_output_equals_sorted(expected, h)


def test_delta_evictor_evict_before():
    """Port of EvictingWindowOperatorTest#testDeltaEvictorEvictBefore."""
    trigger_count = 2
    evict_after = False
    threshold = 2

    h = _harness(
        GlobalWindows.create(),
        SumWindowFunction(),
        CountTrigger.of(trigger_count),
        DeltaEvictor.of(threshold, delta_fn, evict_after),
    )

    initial_time = 0
    expected = []

    h.process_element(rec("key2", 1), initial_time + 3000)
    h.process_element(rec("key2", 4), initial_time + 3999)

    h.process_element(rec("key1", 1), initial_time + 20)
    h.process_element(rec("key1", 1), initial_time)
    h.process_element(rec("key1", 5), initial_time + 999)

    h.process_element(rec("key2", 5), initial_time + 1998)
    h.process_element(rec("key2", 6), initial_time + 1999)
    h.process_element(rec("key2", 1), initial_time + 1000)

    expected.append((("key2", 4), MAX_LONG))
    expected.append((("key2", 11), MAX_LONG))
    expected.append((("key1", 2), MAX_LONG))

    assert_output_equals_sorted(expected, h)

    h.process_element(rec("key1", 3), initial_time + 10999)
    h.process_element(rec("key2", 10), initial_time + 1000)

    expected.append((("key1", 8), MAX_LONG))
    expected.append((("key2", 10), MAX_LONG))

    assert_output_equals_sorted(expected, h)


def test_delta_evictor_evict_after():
    """Port of EvictingWindowOperatorTest#testDeltaEvictorEvictAfter."""
    trigger_count = 2
    evict_after = True
    threshold = 2

    h = _harness(
        GlobalWindows.create(),
        SumWindowFunction(),
        CountTrigger.of(trigger_count),
        DeltaEvictor.of(threshold, delta_fn, evict_after),
    )

    initial_time = 0
    expected = []

    h.process_element(rec("key2", 1), initial_time + 3000)
    h.process_element(rec("key2", 4), initial_time + 3999)

    h.process_element(rec("key1", 1), initial_time + 20)
    h.process_element(rec("key1", 1), initial_time)
    h.process_element(rec("key1", 5), initial_time + 999)

    h.process_element(rec("key2", 5), initial_time + 1998)
    h.process_element(rec("key2", 6), initial_time + 1999)
    h.process_element(rec("key2", 1), initial_time + 1000)

    expected.append((("key2", 5), MAX_LONG))
    expected.append((("key2", 15), MAX_LONG))
    expected.append((("key1", 2), MAX_LONG))

    assert_output_equals_sorted(expected, h)

    h.process_element(rec("key1", 9), initial_time + 10999)
    h.process_element(rec("key2", 10), initial_time + 1000)

    expected.append((("key1", 16), MAX_LONG))
    expected.append((("key2", 22), MAX_LONG))

    assert_output_equals_sorted(expected, h)


def test_count_trigger():
    """Port of EvictingWindowOperatorTest#testCountTrigger."""
    window_size = 4
    window_slide = 2

    h = _harness(
        GlobalWindows.create(),
        (sum_reducer, PassThroughWindowFunction()),
        CountTrigger.of(window_slide),
        CountEvictor.of(window_size),
    )

    initial_time = 0
    expected = []

    # The global window actually ignores these timestamps...

    # add elements out-of-order
    h.process_element(rec("key2", 1), initial_time + 3000)
    h.process_element(rec("key2", 1), initial_time + 3999)

    h.process_element(rec("key1", 1), initial_time + 20)
    h.process_element(rec("key1", 1), initial_time)
    h.process_element(rec("key1", 1), initial_time + 999)

    h.process_element(rec("key2", 1), initial_time + 1998)
    h.process_element(rec("key2", 1), initial_time + 1999)
    h.process_element(rec("key2", 1), initial_time + 1000)

    expected.append((("key2", 2), MAX_LONG))
    expected.append((("key2", 4), MAX_LONG))
    expected.append((("key1", 2), MAX_LONG))

    assert_output_equals_sorted(expected, h)

    h.process_element(rec("key1", 1), initial_time + 10999)
    h.process_element(rec("key2", 1), initial_time + 1000)

    expected.append((("key1", 4), MAX_LONG))
    expected.append((("key2", 4), MAX_LONG))

    assert_output_equals_sorted(expected, h)


def test_count_trigger_with_apply():
    """Port of EvictingWindowOperatorTest#testCountTriggerWithApply."""
    window_size = 4
    window_slide = 2

    h = _harness(
        GlobalWindows.create(),
        SumWindowFunction(),
        CountTrigger.of(window_slide),
        CountEvictor.of(window_size),
    )

    initial_time = 0
    expected = []

    # The global window actually ignores these timestamps...

    # add elements out-of-order
    h.process_element(rec("key2", 1), initial_time + 3000)
    h.process_element(rec("key2", 1), initial_time + 3999)

    h.process_element(rec("key1", 1), initial_time + 20)
    h.process_element(rec("key1", 1), initial_time)
    h.process_element(rec("key1", 1), initial_time + 999)

    h.process_element(rec("key2", 1), initial_time + 1998)
    h.process_element(rec("key2", 1), initial_time + 1999)
    h.process_element(rec("key2", 1), initial_time + 1000)

    expected.append((("key2", 2), MAX_LONG))
    expected.append((("key2", 4), MAX_LONG))
    expected.append((("key1", 2), MAX_LONG))

    assert_output_equals_sorted(expected, h)

    h.process_element(rec("key1", 1), initial_time + 10999)
    h.process_element(rec("key2", 1), initial_time + 1000)

    expected.append((("key1", 4), MAX_LONG))
    expected.append((("key2", 4), MAX_LONG))

    assert_output_equals_sorted(expected, h)


def test_tumbling_window_with_apply():
    """Port of EvictingWindowOperatorTest#testTumblingWindowWithApply."""
    window_size = 4

    h = _harness(
        TumblingEventTimeWindows.of(Time.seconds(window_size)),
        SumWindowFunction(),
        EventTimeTrigger.create(),
        CountEvictor.of(window_size),
    )

    initial_time = 0

    h.process_element(rec("key1", 1), initial_time + 10)
    h.process_element(rec("key1", 1), initial_time + 100)

    h.process_watermark(1999)

    h.process_element(rec("key1", 1), initial_time + 1997)
    h.process_element(rec("key1", 1), initial_time + 1998)

    h.process_element(rec("key1", 1), initial_time + 2310)  # not late but more than 4
    h.process_element(rec("key1", 1), initial_time + 2310)

    h.process_element(rec("key2", 1), initial_time + 2310)
    h.process_element(rec("key2", 1), initial_time + 2310)

    h.process_watermark(3999)  # now is the evictor

    expected = [
        # Watermark(1999) dropped
        (("key1", 4), 3999),
        (("key2", 2), 3999),
        # Watermark(3999) dropped
    ]

    assert_output_equals_sorted(expected, h)
