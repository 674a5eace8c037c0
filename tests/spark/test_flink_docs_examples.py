"""The Python examples of Flink's window documentation, ported (apache/flink
``docs/content/docs/dev/datastream/operators/windows.md``, the ``Python`` tabs; Apache License
2.0).

What changed, and nothing else: the imports; the source (the doc's ``input = ...  # type:
DataStream`` becomes a small DataFrame, chosen here since the doc has none, with its
timestamps assigned); the sink (``print()``, or a ``MemorySink`` for the streaming example).
The doc leaves ``<key selector>``, ``<window assigner>`` and ``<windowed transformation>``
open: each test says what it fills in. Each asserts what PyFlink prints for that input.

The input, unless a test says otherwise: ``(user, n)`` tuples (``Types.TUPLE([Types.STRING(),
Types.LONG()])``, the doc's ``Tuple2<String, Long>``) whose event time is ``n`` seconds.
"""

from __future__ import annotations

import ast
from typing import Any, Iterable, Tuple

import pytest
from pyspark.errors import PythonException
from spark_scenarios import write_batches

from flinkwin import (
    AggregateFunction,
    DataStream,
    Duration,
    RuntimeExecutionMode,
    EventTimeSessionWindows,
    GlobalWindows,
    OutputTag,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    ReduceFunction,
    SessionWindowTimeGapExtractor,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimestampAssigner,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.spark import MemorySink

TUPLE2 = Types.TUPLE([Types.STRING(), Types.LONG()])
DATA = [("alice", 1), ("bob", 2), ("alice", 4), ("alice", 6), ("bob", 9), ("bob", 12)]


class SecondsAssigner(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value[1] * 1000


def source(spark: Any, data: list[Any] = DATA, mode: Any = None) -> DataStream:
    """The doc's ``input``: the source, with timestamps (the doc assumes them); ``mode``: the
    runtime mode (None: the environment's)."""
    df = spark.createDataFrame(data, "f0 string, f1 long")
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        SecondsAssigner()
    )
    stream = DataStream(df, type_info=TUPLE2, runtime_mode=mode) if mode else DataStream(
        df, type_info=TUPLE2)
    return stream.assign_timestamps_and_watermarks(strategy)


def printed(capsys: Any) -> list[str]:
    return sorted(capsys.readouterr().out.splitlines())


# ---------------------------------------------------------------- window assigners
def test_tumbling_windows(spark: Any, capsys: Any) -> None:
    """Tumbling Windows. ``<key selector>``: the user; ``<windowed transformation>``: the
    ReduceFunction section's sum of the second fields (its Java, as a Python lambda)."""
    input = source(spark)  # noqa: A001 (the doc's name)

    # tumbling event-time windows
    input \
        .key_by(lambda v: v[0]) \
        .window(TumblingEventTimeWindows.of(Duration.ofSeconds(5))) \
        .reduce(lambda v1, v2: (v1[0], v1[1] + v2[1])) \
        .print()
    assert printed(capsys) == ["(alice,5)", "(alice,6)", "(bob,12)", "(bob,2)", "(bob,9)"]

    # daily tumbling event-time windows offset by -8 hours: [-8h, 16h) holds the input
    input \
        .key_by(lambda v: v[0]) \
        .window(TumblingEventTimeWindows.of(Duration.ofDays(1), Duration.ofHours(-8))) \
        .process(MyProcessWindowFunction()) \
        .print()
    assert printed(capsys) == [
        "Window: TimeWindow(start=-28800000, end=57600000) count: 3",
        "Window: TimeWindow(start=-28800000, end=57600000) count: 3",
    ]


def test_sliding_windows(spark: Any, capsys: Any) -> None:
    """Sliding Windows, with the same reduce. The doc's processing-time example with an offset
    of -8 hours and a slide of 1 hour fails in Flink (``abs(offset) < slide``), as here."""
    input = source(spark)  # noqa: A001

    # sliding event-time windows
    input \
        .key_by(lambda v: v[0]) \
        .window(SlidingEventTimeWindows.of(Duration.ofSeconds(10), Duration.ofSeconds(5))) \
        .reduce(lambda v1, v2: (v1[0], v1[1] + v2[1])) \
        .print()
    # alice: [-5,5) 1+4, [0,10) 1+4+6, [5,15) 6; bob: [-5,5) 2, [0,10) 2+9, [5,15) 9+12, [10,20) 12
    assert printed(capsys) == sorted(
        ["(alice,5)", "(alice,11)", "(alice,6)", "(bob,2)", "(bob,11)", "(bob,21)", "(bob,12)"]
    )

    with pytest.raises(ValueError, match=r"abs\(offset\) < slide"):
        # sliding processing-time windows offset by -8 hours
        input \
            .key_by(lambda v: v[0]) \
            .window(SlidingProcessingTimeWindows.of(
                Duration.ofHours(12), Duration.ofHours(1), Duration.ofHours(-8)))


class MySessionWindowTimeGapExtractor(SessionWindowTimeGapExtractor):

    def extract(self, element: tuple) -> int:
        # determine and return session gap (chosen here: 3 s for alice, 2 s for others)
        return 3000 if element[0] == "alice" else 2000


def test_session_windows(spark: Any, capsys: Any) -> None:
    """Session Windows (event time), with the same reduce."""
    input = source(spark)  # noqa: A001

    # event-time session windows with static gap: one session per user
    input \
        .key_by(lambda v: v[0]) \
        .window(EventTimeSessionWindows.with_gap(Duration.ofMinutes(10))) \
        .reduce(lambda v1, v2: (v1[0], v1[1] + v2[1])) \
        .print()
    assert printed(capsys) == ["(alice,11)", "(bob,23)"]

    # event-time session windows with dynamic gap: alice's 1, 4, 6 s touch within 3 s
    # ([1,4) and [4,7) merge: Flink's windows intersect when one ends where the other starts);
    # bob's 2, 9, 12 s are three sessions of 2 s
    input \
        .key_by(lambda v: v[0]) \
        .window(EventTimeSessionWindows.with_dynamic_gap(MySessionWindowTimeGapExtractor())) \
        .reduce(lambda v1, v2: (v1[0], v1[1] + v2[1])) \
        .print()
    assert printed(capsys) == ["(alice,11)", "(bob,12)", "(bob,2)", "(bob,9)"]


def test_global_windows(spark: Any, capsys: Any) -> None:
    """Global Windows: without a custom trigger the default ``NeverTrigger`` never fires, even
    at the end of the input ("no computation will be performed")."""
    input = source(spark)  # noqa: A001

    input \
        .key_by(lambda v: v[0]) \
        .window(GlobalWindows.create()) \
        .reduce(lambda v1, v2: (v1[0], v1[1] + v2[1])) \
        .print()
    assert printed(capsys) == []


# ---------------------------------------------------------------- window functions
class AverageAggregate(AggregateFunction):
    """
    The accumulator is used to keep a running sum and a count. The :func:`get_result` method
    computes the average.
    """

    def create_accumulator(self) -> Tuple[int, int]:
        return 0, 0

    def add(self, value: Tuple[str, int], accumulator: Tuple[int, int]) -> Tuple[int, int]:
        return accumulator[0] + value[1], accumulator[1] + 1

    def get_result(self, accumulator: Tuple[int, int]) -> float:
        return accumulator[0] / accumulator[1]

    def merge(self, a: Tuple[int, int], b: Tuple[int, int]) -> Tuple[int, int]:
        return a[0] + b[0], a[1] + b[1]


def test_aggregate_function(spark: Any, capsys: Any) -> None:
    """AggregateFunction. ``<window assigner>``: 5 s tumbling event-time windows."""
    input = source(spark)  # noqa: A001

    input \
        .key_by(lambda v: v[0]) \
        .window(TumblingEventTimeWindows.of(Duration.ofSeconds(5))) \
        .aggregate(AverageAggregate(),
                   accumulator_type=Types.TUPLE([Types.LONG(), Types.LONG()]),
                   output_type=Types.DOUBLE()) \
        .print()
    assert printed(capsys) == ["12.0", "2.0", "2.5", "6.0", "9.0"]


class MyProcessWindowFunction(ProcessWindowFunction):

    def process(self, key: str, context: ProcessWindowFunction.Context,
                elements: Iterable[Tuple[str, int]]) -> Iterable[str]:
        count = 0
        for _ in elements:
            count += 1
        yield "Window: {} count: {}".format(context.window(), count)


def test_process_window_function(spark: Any, capsys: Any) -> None:
    """ProcessWindowFunction, as the doc writes it: no ``output_type``, so the strings travel
    pickled (as in PyFlink) and print as themselves."""
    input = source(spark)  # noqa: A001

    input \
        .key_by(lambda v: v[0]) \
        .window(TumblingEventTimeWindows.of(Duration.ofMinutes(5))) \
        .process(MyProcessWindowFunction()) \
        .print()
    assert printed(capsys) == [
        "Window: TimeWindow(start=0, end=300000) count: 3",
        "Window: TimeWindow(start=0, end=300000) count: 3",
    ]


SENSOR_READING = Types.ROW_NAMED(["id", "timestamp", "value"],
                                 [Types.STRING(), Types.LONG(), Types.LONG()])


class MinReadingWindowFunction(ProcessWindowFunction):
    """The doc's ``MyProcessWindowFunction`` of "Incremental Window Aggregation with
    ReduceFunction" (renamed: this module has the other one)."""

    def process(self, key: str, context: ProcessWindowFunction.Context,
                min_readings: Iterable[Any]) -> Iterable[Tuple[int, Any]]:
        min = next(iter(min_readings))  # noqa: A001 (the doc's name)
        yield context.window().start, min


def test_incremental_aggregation_with_reduce_function(spark: Any, capsys: Any) -> None:
    """Incremental Window Aggregation with ReduceFunction. ``input``: SensorReadings, a
    ``Types.ROW_NAMED`` stream (``r.value`` reads a field, as on PyFlink's Row), event time
    their ``timestamp``; ``<key selector>``: the sensor id; ``<window assigner>``: 5 s tumbling
    event-time windows.

    The doc declares ``output_type=Types.TUPLE([Types.STRING(), Types.LONG()])`` for what the
    function yields, ``(int, SensorReading)``: PyFlink fails to encode that, and so does
    flinkwin, naming the value. Declared as what it yields, the example prints each window's
    smallest reading."""
    readings = [("s1", 1000, 7), ("s1", 2000, 3), ("s2", 3000, 5), ("s1", 6000, 4)]
    df = spark.createDataFrame(readings, "id string, timestamp long, value long")
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        "timestamp"
    )
    input = DataStream(df, type_info=SENSOR_READING).assign_timestamps_and_watermarks(  # noqa: A001
        strategy
    )

    with pytest.raises(PythonException, match="SchemaMismatchError"):
        input \
            .key_by(lambda r: r.id) \
            .window(TumblingEventTimeWindows.of(Duration.ofSeconds(5))) \
            .reduce(lambda r1, r2: r2 if r1.value > r2.value else r1,
                    window_function=MinReadingWindowFunction(),
                    output_type=Types.TUPLE([Types.STRING(), Types.LONG()])) \
            .print()
    capsys.readouterr()

    input \
        .key_by(lambda r: r.id) \
        .window(TumblingEventTimeWindows.of(Duration.ofSeconds(5))) \
        .reduce(lambda r1, r2: r2 if r1.value > r2.value else r1,
                window_function=MinReadingWindowFunction(),
                output_type=Types.TUPLE([Types.LONG(), SENSOR_READING])) \
        .print()
    assert printed(capsys) == ["(0,+I[s1, 2000, 3])", "(0,+I[s2, 3000, 5])",
                               "(5000,+I[s1, 6000, 4])"]


class AverageWindowFunction(ProcessWindowFunction):
    """The doc's ``MyProcessWindowFunction`` of "Incremental Window Aggregation with
    AggregateFunction"."""

    def process(self, key: str, context: ProcessWindowFunction.Context,
                averages: Iterable[float]) -> Iterable[Tuple[str, float]]:
        average = next(iter(averages))
        yield key, average


def test_incremental_aggregation_with_aggregate_function(spark: Any, capsys: Any) -> None:
    """Incremental Window Aggregation with AggregateFunction. ``<window assigner>``: 5 s
    tumbling event-time windows."""
    input = source(spark)  # noqa: A001

    input \
        .key_by(lambda v: v[0]) \
        .window(TumblingEventTimeWindows.of(Duration.ofSeconds(5))) \
        .aggregate(AverageAggregate(),
                   window_function=AverageWindowFunction(),
                   accumulator_type=Types.TUPLE([Types.LONG(), Types.LONG()]),
                   output_type=Types.TUPLE([Types.STRING(), Types.DOUBLE()])) \
        .print()
    assert printed(capsys) == sorted(
        ["(alice,2.5)", "(alice,6.0)", "(bob,2.0)", "(bob,9.0)", "(bob,12.0)"]
    )


# ------------------------------------------------------------------ late data
def test_allowed_lateness_and_late_data_side_output(spark: Any, tmp_path: Any) -> None:
    """Allowed Lateness and Getting late data as a side output. A streaming source (one file
    per micro-batch) makes elements late, as a watermark passing them in PyFlink does;
    ``<window assigner>``: 5 s tumbling event-time windows, ``<time>``: 3 s, the windowed
    transformation: the reduce above.

    Batch 1 moves the watermark to about 12 s: ``[0, 5)`` fires and, 5 + 3 s having passed,
    is gone; in batch 2, 3 s is late data and 9 s joins ``[5, 10)``, still within its
    lateness, which fires at once. ``[10, 15)`` is still open when the stream is stopped."""
    write_batches(tmp_path / "in", [
        [{"f0": "alice", "f1": 1}, {"f0": "bob", "f1": 2}],
        [{"f0": "alice", "f1": 12}],
        [{"f0": "alice", "f1": 3}, {"f0": "alice", "f1": 9}],
    ])
    df = spark.readStream.schema("f0 string, f1 long").option("maxFilesPerTrigger", 1) \
        .json(str(tmp_path / "in"))
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        SecondsAssigner()
    )
    input = DataStream(df, type_info=TUPLE2).assign_timestamps_and_watermarks(strategy)  # noqa: A001

    late_output_tag = OutputTag("late-data", TUPLE2)

    result = input \
        .key_by(lambda v: v[0]) \
        .window(TumblingEventTimeWindows.of(Duration.ofSeconds(5))) \
        .allowed_lateness(Duration.ofSeconds(3).to_millis()) \
        .side_output_late_data(late_output_tag) \
        .reduce(lambda v1, v2: (v1[0], v1[1] + v2[1]))

    main, late = MemorySink("docs_main"), MemorySink("docs_late")
    query = result.start(main=main, side_outputs={late_output_tag: late},
                         checkpoint_location=str(tmp_path / "cp"),
                         trigger={"availableNow": True})
    query.awaitTermination()
    assert sorted(tuple(r) for r in main.rows()) == [("alice", 1), ("alice", 9), ("bob", 2)]
    assert [tuple(r) for r in late.rows()] == [("alice", 3)]


# ------------------------------------------------------ working with window results
class TopKWindowFunction(ProcessAllWindowFunction):
    """The doc's ``TopKWindowFunction`` (it leaves it open): the window's per-key sums, the
    largest first (k = 10, more than this input has)."""

    def process(self, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        yield sorted(elements, key=lambda e: -e[1])[:10]


class Summer(ReduceFunction):
    """The doc's ``Summer`` (it leaves it open): sums the second fields."""

    def reduce(self, a: Any, b: Any) -> Any:
        return a[0], a[1] + b[1]


def test_consecutive_windowed_operations(spark: Any, capsys: Any) -> None:
    """Consecutive windowed operations, as the Python tab writes them (its second window is a
    processing-time one, the Java tab's an event-time one). The lists travel pickled (no
    ``output_type``) and print as Python prints them, as PyFlink's ``print()`` does. Processing
    time is wall time, so the per-key sums may straddle two second-stage windows: together the
    firings hold every per-key sum once (alice 5 and 6, bob 2, 9 and 12), each largest first.
    The input is bounded, so the program runs in BATCH mode: in STREAMING mode, as in Flink, a
    processing-time window still open at the end of a bounded input never fires."""
    input = source(spark, mode=RuntimeExecutionMode.BATCH)  # noqa: A001

    results_per_key = input \
        .key_by(lambda v: v[0]) \
        .window(TumblingEventTimeWindows.of(Duration.ofSeconds(5))) \
        .reduce(Summer())

    global_results = results_per_key \
        .window_all(TumblingProcessingTimeWindows.of(Duration.ofSeconds(5))) \
        .process(TopKWindowFunction())

    global_results.print()
    firings = [ast.literal_eval(line) for line in capsys.readouterr().out.splitlines()]
    assert 1 <= len(firings) <= 2
    for top in firings:
        assert [n for _, n in top] == sorted((n for _, n in top), reverse=True)
    assert sorted(e for top in firings for e in top) == sorted(
        [("alice", 5), ("alice", 6), ("bob", 2), ("bob", 9), ("bob", 12)]
    )
