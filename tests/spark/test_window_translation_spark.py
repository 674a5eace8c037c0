"""End-to-end checks of the window translation ported in
``tests/core/test_window_translation_flink.py`` and ``test_all_window_translation_flink.py``, for
what the operator-level ports cannot reach: the state form the Spark stage is compiled to
(``explain()``), the rich reduce and aggregate functions opened in Spark's workers (flinkwin's
documented difference from Flink, which refuses them), and processing-time windows run by Spark
on a bounded input; and that the Spark stage of each translated configuration, in whatever
state form it compiles to, gives the results of the operator the core ports test.

The source is Flink's: ``env.fromData(Tuple2.of("hello", 1), Tuple2.of("hello", 2))``, both
elements at timestamp 0 (the timestamp Flink's ``processElementAndEnsureOutput`` gives).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from flinkwin import (
    AggregateFunction,
    CountEvictor,
    CountTrigger,
    DataStream,
    EventTimeSessionWindows,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeExecutionMode,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    Time,
    TimeEvictor,
    TimestampAssigner,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
    WindowFunction,
)
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MAX_LONG, MIN_LONG

TUPLE2 = Types.TUPLE([Types.STRING(), Types.INT()])


class AtZero(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return 0


def source(spark: Any, mode: RuntimeExecutionMode = RuntimeExecutionMode.STREAMING) -> Any:
    df = spark.createDataFrame([("hello", 1), ("hello", 2)], "f0 string, f1 int")
    return DataStream(df, type_info=TUPLE2, runtime_mode=mode)


def timed(spark: Any) -> Any:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(AtZero())
    return source(spark).assign_timestamps_and_watermarks(strategy)


def key_f0(value: Any) -> Any:
    return value[0]


def sliding() -> SlidingEventTimeWindows:
    return SlidingEventTimeWindows.of(Time.seconds(1), Time.milliseconds(100))


class DummyReducer(ReduceFunction):
    def reduce(self, value1: Any, value2: Any) -> Any:
        return value1


class LastValue(AggregateFunction):
    def create_accumulator(self) -> Any:
        return None

    def add(self, value: Any, accumulator: Any) -> Any:
        return value

    def get_result(self, accumulator: Any) -> Any:
        return accumulator

    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        return acc_a


class PassThrough(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        return list(elements)


def test_translated_window_state_in_explain(spark: Any, capsys: Any) -> None:
    """The state form each window function compiles to on Spark, as ``explain()`` states it:
    Flink's ``getStateDescriptor() instanceof Reducing/Aggregating/ListStateDescriptor`` in
    WindowTranslationTest#testReduceEventTime, #testAggregateEventTime, #testProcessEventTime,
    #testReduceWithEvictor and #testReduceWithCustomTrigger (keyed), and
    AllWindowTranslationTest#testAggregateWithEvictor (non-keyed)."""
    keyed = timed(spark).key_by(key_f0)
    cases = [
        (keyed.window(sliding()).reduce(DummyReducer()), "reducing", "EventTimeTrigger()"),
        (keyed.window(sliding()).aggregate(LastValue()), "aggregating", "EventTimeTrigger()"),
        (keyed.window(sliding()).process(PassThrough()), "list", "EventTimeTrigger()"),
        (
            keyed.window(sliding()).evictor(CountEvictor.of(100)).reduce(DummyReducer()),
            "list (evictor)", "EventTimeTrigger()",
        ),
        (
            keyed.window(sliding()).trigger(CountTrigger.of(1)).reduce(DummyReducer()),
            "reducing", "CountTrigger(1)",
        ),
        (
            timed(spark).window_all(sliding()).evictor(CountEvictor.of(100))
            .aggregate(LastValue()),
            "list (evictor)", "EventTimeTrigger()",
        ),
    ]
    for result, state, trigger in cases:
        capsys.readouterr()
        result.explain()
        printed = capsys.readouterr().out
        assert re.search(rf"^window state\s+: {re.escape(state)}$", printed, re.M), printed
        assert re.search(rf"^trigger\s+: {re.escape(trigger)}", printed, re.M), printed


class OpenedReducer(ReduceFunction):
    """Flink's ``RichReduceFunction``: its reduce needs what ``open`` set up."""

    def open(self, runtime_context: Any) -> None:
        self.bonus = 100

    def reduce(self, value1: Any, value2: Any) -> Any:
        return (value1[0], value1[1] + value2[1] + self.bonus)


class OpenedAggregate(AggregateFunction):
    """Flink's ``RichAggregateFunction``: its result needs what ``open`` set up."""

    def open(self, runtime_context: Any) -> None:
        self.scale = 10

    def create_accumulator(self) -> Any:
        return 0

    def add(self, value: Any, accumulator: Any) -> Any:
        return accumulator + value[1]

    def get_result(self, accumulator: Any) -> Any:
        return accumulator * self.scale

    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        return acc_a + acc_b


def test_rich_reduce_and_aggregate_functions_are_opened_on_spark(spark: Any) -> None:
    """WindowTranslationTest#testReduceWithRichReducerFails and
    #testAggregateWithRichFunctionFails (and AllWindowTranslationTest's): Flink refuses them;
    flinkwin, as PyFlink, has only rich functions and opens them in the worker before the
    window state calls them (docs/porting.md, "Rich functions")."""
    window = TumblingEventTimeWindows.of(Time.seconds(1))
    reduced = timed(spark).key_by(key_f0).window(window).reduce(OpenedReducer())
    assert reduced.execute_and_collect() == [("hello", 103)]
    aggregated = timed(spark).window_all(window).aggregate(
        OpenedAggregate(), output_type=Types.INT()
    )
    assert aggregated.execute_and_collect() == [30]


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (RuntimeExecutionMode.BATCH, [("hello", 1)] * 10),
        (RuntimeExecutionMode.STREAMING, []),
    ],
    ids=["batch", "streaming"],
)
def test_reduce_processing_time_on_spark(
    spark: Any, mode: RuntimeExecutionMode, expected: list[Any]
) -> None:
    """WindowTranslationTest#testReduceProcessingTime end to end on a static DataFrame: both
    elements land in the same ten sliding processing-time windows (a key group reads the clock
    once). In BATCH mode the pending processing-time windows fire at the end of the input, as
    the ``setProcessingTime(Long.MAX_VALUE)`` of Flink's test makes them; in STREAMING mode
    they never fire, as Flink quiesces processing time at the end of a bounded input
    (docs/spark-semantics.md)."""
    result = (
        source(spark, mode)
        .key_by(key_f0)
        .window(SlidingProcessingTimeWindows.of(Time.seconds(1), Time.milliseconds(100)))
        .reduce(DummyReducer())
    )
    assert result.execute_and_collect() == expected


TUPLE3 = Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG()])
#: (key, value, timestamp), out of timestamp order, two keys, two windows for "hello"
ROWS = [("hello", 1, 500), ("hello", 2, 100), ("x", 4, 700), ("hello", 3, 1500), ("hello", 5, 50)]


class ThirdField(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[2])


class Values(WindowFunction):
    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        return [(key, window.start, [value[1] for value in inputs])]


def _tumbling() -> TumblingEventTimeWindows:
    return TumblingEventTimeWindows.of(Time.seconds(1))


def _sliding() -> SlidingEventTimeWindows:
    return SlidingEventTimeWindows.of(Time.seconds(1), Time.milliseconds(500))


#: Flink's translation-test configurations (process, apply, reduce, custom trigger, evictors,
#: merging windows with an evictor), on the windowed stream
CONFIGURATIONS = {
    "process": lambda w: w.window(_tumbling()).process(PassThrough(), output_type=TUPLE3),
    "apply": lambda w: w.window(_sliding()).apply(Values()),
    "reduce": lambda w: w.window(_sliding()).reduce(DummyReducer()),
    "reduce_custom_trigger": lambda w: w.window(_sliding()).trigger(CountTrigger.of(1))
    .reduce(DummyReducer()),
    "process_custom_trigger": lambda w: w.window(_tumbling()).trigger(CountTrigger.of(1))
    .process(PassThrough(), output_type=TUPLE3),
    "aggregate_evictor": lambda w: w.window(_sliding()).evictor(CountEvictor.of(1))
    .aggregate(LastValue(), output_type=TUPLE3),
    "apply_evictor": lambda w: w.window(_tumbling()).trigger(CountTrigger.of(1))
    .evictor(TimeEvictor.of(Time.milliseconds(100))).apply(Values()),
    "merging_evictor": lambda w: w.window(EventTimeSessionWindows.withGap(Time.milliseconds(300)))
    .evictor(CountEvictor.of(5)).process(PassThrough(), output_type=TUPLE3),
}


def operator_results(result: Any) -> list[str]:
    """What the operator of ``result``'s window stage (its assigner, trigger, evictor and
    function, as the core ports build it) emits for ``ROWS``, watermark MIN then MAX."""
    pipeline = result._pipeline
    h = WindowOperatorHarness(
        pipeline.assigner, pipeline.function, key_field=key_f0, trigger=pipeline.trigger,
        evictor=pipeline.evictor, tuple_elements=pipeline.tuple_elements,
    )
    h.process_watermark(MIN_LONG)
    for row in ROWS:
        h.process_element(row, row[2])
    h.process_watermark(MAX_LONG)
    return sorted(repr(value) for value, _ in h.output_with_timestamps())


def test_spark_stage_gives_the_translated_operators_results(spark: Any) -> None:
    """Each configuration keyed by a column (which lets Spark pick a columnar state form) gives
    on a static DataFrame, in arrival order, what its operator gives for the same elements."""
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ThirdField())
    for name, configure in CONFIGURATIONS.items():
        df = spark.createDataFrame(ROWS, "f0 string, f1 int, f2 long")
        keyed = DataStream(df, type_info=TUPLE3).assign_timestamps_and_watermarks(strategy)
        result = configure(keyed.key_by("f0"))
        got = sorted(map(repr, result.execute_and_collect()))
        assert got, name
        assert got == operator_results(result), name
