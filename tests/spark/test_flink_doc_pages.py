"""The examples of Flink's DataStream documentation pages beyond the windows page, ported
(apache/flink ``docs/content/docs/dev/datastream/...``; Apache License 2.0): joining,
process function, side output, generating watermarks, working with state, operators.

Each page's Python tab is taken as written (the imports, the source and the sink changed);
where a page has only Java it is written as a PyFlink user would, with PyFlink's names. Each
test asserts what Flink prints for its input, derived from the page (its figures, for the
joins) and Flink's source where the page does not say.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any

import pytest
from batch_files import write_batches
from pyspark.errors import PythonException

from flinkwin.common import Duration, Row, Types, WatermarkStrategy
from flinkwin.common.serializer import TypeSerializer
from flinkwin.common.watermark_strategy import TimestampAssigner
from flinkwin.datastream import (
    DataStream,
    FlatMapFunction,
    KeyedProcessFunction,
    MapFunction,
    OutputTag,
    ProcessFunction,
    ProcessWindowFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
    Trigger,
    WindowAssigner,
)
from flinkwin.datastream.functions import (
    AggregateFunction,
    AllWindowFunction,
    CoFlatMapFunction,
    CoGroupFunction,
    CoMapFunction,
    JoinFunction,
    ProcessJoinFunction,
    WindowFunction,
)
from flinkwin.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flinkwin.datastream.window import (
    EventTimeSessionWindows,
    EventTimeTrigger,
    SlidingEventTimeWindows,
    Time,
    TimeWindow,
    TimeWindowSerializer,
    TumblingEventTimeWindows,
)
from flinkwin.errors import UnsupportedOperationError
from flinkwin.spark import MemorySink


def printed(capsys: Any) -> list[str]:
    return sorted(capsys.readouterr().out.splitlines())


class ValueIsTimestamp(TimestampAssigner):
    """The joins' figures: an element's value is its timestamp in milliseconds."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value


def figure_stream(values: list[int]) -> DataStream:
    """One coloured stream of a join figure: ``Integer`` elements, each its own timestamp."""
    env = StreamExecutionEnvironment.get_execution_environment()
    return env.from_collection(values, type_info=Types.INT()).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ValueIsTimestamp()))


class CommaJoin(JoinFunction):
    """The page's ``JoinFunction<Integer, Integer, String>``: ``first + "," + second``."""

    def join(self, first: Any, second: Any) -> str:
        return str(first) + "," + str(second)


# ------------------------------------------------------------------------- joining.md
@pytest.mark.parametrize(
    ("assigner", "orange", "green", "pairs"),
    [
        pytest.param(
            # tumbling-window-join.svg: nothing in [6, 7], no green element there
            TumblingEventTimeWindows.of(Duration.of_millis(2)),
            [0, 1, 2, 3, 4, 5, 6, 7], [0, 1, 3, 4],
            ["0,0", "0,1", "1,0", "1,1", "2,3", "3,3", "4,4", "5,4"],
            id="tumbling"),
        pytest.param(
            # sliding-window-join.svg, window by window: [-1,1) 0,0; [0,2) 0,0 1,0; [1,3) -;
            # [2,4) 2,3 3,3; [3,5) 3,3 3,4 4,3 4,4; [4,6) 4,4
            SlidingEventTimeWindows.of(Duration.of_millis(2), Duration.of_millis(1)),
            [0, 1, 2, 3, 4], [0, 3, 4],
            ["0,0", "0,0", "1,0", "2,3", "3,3", "3,3", "3,4", "4,3", "4,4", "4,4"],
            id="sliding"),
        pytest.param(
            # session-window-join.svg: sessions {g0, o1, o2}, {g4, g5, o5, o6}, {o8, o9} (a
            # session window [t, t+1) merges with one it touches, TimeWindow#intersects)
            EventTimeSessionWindows.with_gap(Duration.of_millis(1)),
            [1, 2, 5, 6, 8, 9], [0, 4, 5],
            ["1,0", "2,0", "5,4", "5,5", "6,4", "6,5"],
            id="session"),
    ],
)
def test_joining_window_joins_give_the_figures_pairs(
    spark: Any, capsys: Any, assigner: Any, orange: list[int], green: list[int],
    pairs: list[str],
) -> None:
    """Joining, Tumbling/Sliding/Session Window Join: the pairs the page's figures show. The
    page leaves ``<KeySelector>`` open: one key for all (the figures have one)."""
    orange_stream = figure_stream(orange)
    green_stream = figure_stream(green)

    orange_stream.join(green_stream) \
        .where(lambda elem: 0) \
        .equal_to(lambda elem: 0) \
        .window(assigner) \
        .apply(CommaJoin(), output_type=Types.STRING()) \
        .print()
    assert printed(capsys) == sorted(pairs)


@pytest.mark.parametrize(("lateness", "again"), [
    (None, []),
    # the late 1 arrives at watermark 3, before [0, 2)'s cleanup at 1 + 3: the window fires
    # again at once (EventTimeTrigger#onElement) with all it holds, old pairs included
    (3, ["0,0", "0,1", "0,1", "1,0", "1,1", "1,1"]),
])
def test_joining_tumbling_window_join_over_micro_batches(
    spark: Any, tmp_path: Path, lateness: int | None, again: list[str]
) -> None:
    """Tumbling Window Join, the figure's elements arriving over micro-batches, each input with
    its own monotonous watermark (the join runs at the smaller): orange 0-3 | 4-7, green
    0, 1, 3 | 4 | 9 and a late 1. The pairs are the figure's; without allowed lateness the
    late green 1 (its window [0, 2) fired at watermark 2 before it arrived) joins nothing and
    is dropped, as Flink's window operator drops a late element; with an allowed lateness of
    3 ms (Java's ``allowedLateness``) it re-fires its window."""
    def source(name: str, batches: list[list[int]]) -> DataStream:
        write_batches(tmp_path / name, [[{"v": v} for v in batch] for batch in batches])
        df = spark.readStream.schema("v int").option("maxFilesPerTrigger", 1) \
            .json(str(tmp_path / name))
        return DataStream(df, type_info=Types.INT()).assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                ValueIsTimestamp()))

    orange_stream = source("orange", [[0, 1, 2, 3], [4, 5, 6, 7]])
    green_stream = source("green", [[0, 1, 3], [4], [1, 9]])
    sink = MemorySink(f"tumbling_join_batches_{lateness}")
    windowed = orange_stream.join(green_stream) \
        .where(lambda elem: 0) \
        .equal_to(lambda elem: 0) \
        .window(TumblingEventTimeWindows.of(Duration.of_millis(2)))
    if lateness is not None:
        windowed = windowed.allowed_lateness(lateness)
    windowed.apply(CommaJoin(), output_type=Types.STRING()) \
        .start(main=sink, checkpoint_location=str(tmp_path / "cp"),
               trigger={"availableNow": True}).awaitTermination()
    batches = {b: sorted(r[0] for r in rows) for b, rows in sink.batches.items() if rows}
    assert sorted(p for pairs in batches.values() for p in pairs) == sorted(
        ["0,0", "0,1", "1,0", "1,1", "2,3", "3,3", "4,4", "5,4"] + again)
    assert 0 not in batches  # batch 0 runs at no watermark yet


class CommaProcessJoin(ProcessJoinFunction):
    """The page's ``ProcessJoinFunction<Integer, Integer, String>``."""

    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield str(left) + "," + str(right)


def test_joining_interval_join_gives_the_figures_pairs(spark: Any, capsys: Any) -> None:
    """Joining, Interval Join: interval-join.svg's pairs, bounds [-2, +1] inclusive; with
    ``lower_bound_exclusive()`` the pairs at ``green == orange - 2`` go (2,0 and 3,1), with
    ``upper_bound_exclusive()`` those at ``green == orange + 1`` (0,1 and 5,6). The page's
    hint: the interval join only supports event time."""
    orange = [0, 2, 3, 4, 5, 7]
    green = [0, 1, 6, 7]

    def joined(*exclusive: str) -> list[str]:
        interval = figure_stream(orange).key_by(lambda elem: 0) \
            .interval_join(figure_stream(green).key_by(lambda elem: 0)) \
            .between(Duration.of_millis(-2), Duration.of_millis(1))
        for bound in exclusive:
            interval = getattr(interval, bound)()
        interval.process(CommaProcessJoin(), output_type=Types.STRING()).print()
        return printed(capsys)

    figure = ["0,0", "0,1", "2,0", "2,1", "3,1", "5,6", "7,6", "7,7"]
    assert joined() == sorted(figure)
    assert joined("lower_bound_exclusive") == sorted(set(figure) - {"2,0", "3,1"})
    assert joined("upper_bound_exclusive") == sorted(set(figure) - {"0,1", "5,6"})
    with pytest.raises(Exception, match="processing time|event time"):
        figure_stream(orange).key_by(lambda elem: 0) \
            .interval_join(figure_stream(green).key_by(lambda elem: 0)) \
            .in_processing_time() \
            .between(Duration.of_millis(-2), Duration.of_millis(1))


# ----------------------------------------------------------------- process_function.md
class CountWithTimeoutFunction(KeyedProcessFunction):
    """The page's Python ``CountWithTimeoutFunction``, as written."""

    def __init__(self):
        self.state = None

    def open(self, runtime_context: RuntimeContext):
        self.state = runtime_context.get_state(ValueStateDescriptor(
            "my_state", Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value, ctx: KeyedProcessFunction.Context):
        # retrieve the current count
        current = self.state.value()
        if current is None:
            current = Row(value.f1, 0, 0)

        # update the state's count
        current[1] += 1

        # set the state's timestamp to the record's assigned event time timestamp
        current[2] = ctx.timestamp()

        # write the state back
        self.state.update(current)

        # schedule the next timer 60 seconds from the current event time
        ctx.timer_service().register_event_time_timer(current[2] + 60000)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext):
        # get the state for the key that scheduled the timer
        result = self.state.value()

        # check if this is an outdated timer or the latest timer
        if timestamp == result[2] + 60000:
            # emit the state on timeout
            yield result[0], result[1]


class MyTimestampAssigner(TimestampAssigner):
    """The page's, as written."""

    def __init__(self):
        self.epoch = datetime.datetime.utcfromtimestamp(0)

    def extract_timestamp(self, value, record_timestamp) -> int:
        return int((value[0] - self.epoch).total_seconds() * 1000)


#: the page's source table ``(a TIMESTAMP(3), b VARCHAR, c VARCHAR)`` as the stream of
#: ``Types.ROW([SQL_TIMESTAMP, STRING, STRING])`` it becomes: fields f0, f1, f2
ROW3 = "f0 timestamp, f1 string, f2 string"


def at(seconds: int) -> datetime.datetime:
    return datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)


def test_process_function_count_with_timeout(spark: Any, capsys: Any, tmp_path: Path) -> None:
    """Process Function, Example: the Python tab's program, its ``datagen`` table replaced by
    rows of ``Types.ROW([SQL_TIMESTAMP, STRING, STRING])`` in micro-batches. Batch 0: a@0s,
    a@30s, b@10s; batch 1: c@100s (watermark 29999: no timer due); batch 2: d@200s
    (watermark 99999): a's timer at 60000 is outdated (a was modified at 30000) and emits
    nothing, b's at 70000 emits (b, 1), a's at 90000 emits (a, 2); Spark's no-data batch 3
    runs at watermark 199999 (batch 2's input): c's timer at 160000 emits (c, 1); d's at
    260000 waits for more input (the stream has not ended)."""
    write_batches(tmp_path / "in", [
        [{"f0": "1970-01-01T00:00:00Z", "f1": "a", "f2": "x"},
         {"f0": "1970-01-01T00:00:30Z", "f1": "a", "f2": "y"},
         {"f0": "1970-01-01T00:00:10Z", "f1": "b", "f2": "z"}],
        [{"f0": "1970-01-01T00:01:40Z", "f1": "c", "f2": "x"}],
        [{"f0": "1970-01-01T00:03:20Z", "f1": "d", "f2": "x"}],
    ])
    df = spark.readStream.schema(ROW3) \
        .option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
    stream = DataStream(df, type_info=Types.ROW(
        [Types.SQL_TIMESTAMP(), Types.STRING(), Types.STRING()]))
    watermarked_stream = stream.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps()
                         .with_timestamp_assigner(MyTimestampAssigner()))

    # the page's function as written mutates a Row: flinkwin's Rows are immutable and say so
    static = DataStream(spark.createDataFrame([(at(0), "a", "x")], ROW3),
                        type_info=stream.get_type())
    with pytest.raises(PythonException, match="Rows are immutable"):
        static.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps()
                             .with_timestamp_assigner(MyTimestampAssigner())) \
            .key_by(lambda value: value[1]) \
            .process(CountWithTimeoutFunction()) \
            .print()

    # apply the process function onto a keyed stream
    result = watermarked_stream.key_by(lambda value: value[1]) \
                               .process(CountWithTimeoutRebuilt(),
                                        output_type=Types.TUPLE([Types.STRING(), Types.LONG()]))
    main = MemorySink("count_with_timeout")
    result.start(main=main, checkpoint_location=str(tmp_path / "cp"),
                 trigger={"availableNow": True}).awaitTermination()
    assert {b: sorted(tuple(r) for r in rows) for b, rows in main.batches.items() if rows} == {
        2: [("a", 2), ("b", 1)], 3: [("c", 1)]}


class CountWithTimeoutRebuilt(CountWithTimeoutFunction):
    """The page's function with its two Row assignments written as one new Row (flinkwin's
    Rows are immutable, docs/api-contract.md): nothing else changed."""

    def process_element(self, value, ctx: KeyedProcessFunction.Context):
        current = self.state.value()
        if current is None:
            current = Row(value.f1, 0, 0)
        current = Row(current[0], current[1] + 1, ctx.timestamp())
        self.state.update(current)
        ctx.timer_service().register_event_time_timer(current[2] + 60000)


def test_process_function_timers_coalesce_and_stop(spark: Any, capsys: Any) -> None:
    """Process Function, Timers: one timer per key and timestamp (``on_timer`` once however
    often it is registered), Timer Coalescing (``((ctx.timestamp() + timeout) // 1000) *
    1000``, and ``current_watermark() + 1``, here a watermark of Long.MIN_VALUE in the first
    batch: the timer at ``-2**63 + 1`` fires with the end of input) and Stopping an event-time
    timer (deleting one not registered has no effect). Key a's elements at 100, 700 and 900
    ms (timeout 200): coalesced timers at 0, 0 and 1000 ms; the element at 900 also deletes
    the timer at 0; so on_timer runs for 1000 and for the watermark timer only."""
    timeout = 200

    class Coalescing(KeyedProcessFunction):
        def process_element(self, value, ctx: KeyedProcessFunction.Context):
            coalesced_time = ((ctx.timestamp() + timeout) // 1000) * 1000
            ctx.timer_service().register_event_time_timer(coalesced_time)
            if value[1] == 900:
                timestamp_of_timer_to_stop = 0
                ctx.timer_service().delete_event_time_timer(timestamp_of_timer_to_stop)
                ctx.timer_service().delete_event_time_timer(12345)  # none: no effect
            coalesced_time = ctx.timer_service().current_watermark() + 1
            ctx.timer_service().register_event_time_timer(coalesced_time)

        def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext):
            key = ctx.get_current_key()
            yield f"{key}@{timestamp}"

    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([("a", 100), ("a", 700), ("a", 900)],
                        type_info=Types.TUPLE([Types.STRING(), Types.LONG()])) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                SecondField())) \
        .key_by(lambda value: value[0]) \
        .process(Coalescing(), output_type=Types.STRING()) \
        .print()
    assert printed(capsys) == [f"a@{-2**63 + 1}", "a@1000"]


class SecondField(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value[1]


# ---------------------------------------------------------------------- side_output.md
def test_side_output_from_a_process_function(spark: Any, capsys: Any) -> None:
    """Side Outputs: the Python tab's ``MyProcessFunction`` as written, on ``Integer``
    elements; the main output and ``get_side_output(output_tag)``."""
    env = StreamExecutionEnvironment.get_execution_environment()
    input = env.from_collection([1, 2, 3], type_info=Types.INT())  # noqa: A001
    output_tag = OutputTag("side-output", Types.STRING())

    class MyProcessFunction(ProcessFunction):

        def process_element(self, value: int, ctx: ProcessFunction.Context):
            # emit data to regular output
            yield value

            # emit data to side output
            yield output_tag, "sideout-" + str(value)

    main_data_stream = input \
        .process(MyProcessFunction(), Types.INT())
    side_output_stream = main_data_stream.get_side_output(output_tag)  # type: DataStream
    main_data_stream.print()
    assert printed(capsys) == ["1", "2", "3"]
    side_output_stream.print()
    assert printed(capsys) == ["sideout-1", "sideout-2", "sideout-3"]


# ------------------------------------------------------------ fault-tolerance/state.md
class CountWindowAverage(FlatMapFunction):
    """Working with State, Using Keyed State: the Python tab's function, as written."""

    def __init__(self):
        self.sum = None

    def open(self, runtime_context: RuntimeContext):
        descriptor = ValueStateDescriptor(
            "average",  # the state name
            Types.PICKLED_BYTE_ARRAY()  # type information
        )
        self.sum = runtime_context.get_state(descriptor)

    def flat_map(self, value):
        # access the state value
        current_sum = self.sum.value()
        if current_sum is None:
            current_sum = (0, 0)

        # update the count
        current_sum = (current_sum[0] + 1, current_sum[1] + value[1])

        # update the state
        self.sum.update(current_sum)

        # if the count reaches 2, emit the average and clear the state
        if current_sum[0] >= 2:
            self.sum.clear()
            yield value[0], int(current_sum[1] / current_sum[0])


def test_state_count_window_average(spark: Any, capsys: Any) -> None:
    """The Python tab's program as written (its ``print()``: the results travel pickled, no
    ``output_type``, and print as Python's ``str``; the page's comment "(1,4) and (1,5)" is the
    Java tab's ``Tuple2`` printing). The fifth element (1, 2) waits in the state."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([(1, 3), (1, 5), (1, 7), (1, 4), (1, 2)]) \
        .key_by(lambda row: row[0]) \
        .flat_map(CountWindowAverage()) \
        .print()
    assert capsys.readouterr().out.splitlines() == ["(1, 4)", "(1, 5)"]


def test_state_count_window_average_restarts_from_its_checkpoint(
    spark: Any, tmp_path: Path
) -> None:
    """The same function on a stream stopped after (1, 3), and started again from its
    checkpoint with (1, 5), (1, 7), (1, 4): the restored ``ValueState`` holds (1, 3), so the
    second run emits (1, 4) and (1, 5), as Flink restoring the function's keyed state."""
    def run(batches: list[list[dict[str, Any]]], first: int) -> list[tuple[Any, ...]]:
        write_batches(tmp_path / "in", batches, first=first)
        df = spark.readStream.schema("f0 long, f1 long").option("maxFilesPerTrigger", 1) \
            .json(str(tmp_path / "in"))
        sink = MemorySink(f"average_{first}")
        DataStream(df, type_info=Types.TUPLE([Types.LONG(), Types.LONG()])) \
            .key_by(lambda row: row[0]) \
            .flat_map(CountWindowAverage(),
                      output_type=Types.TUPLE([Types.LONG(), Types.LONG()])) \
            .start(main=sink, checkpoint_location=str(tmp_path / "cp"),
                   trigger={"availableNow": True}).awaitTermination()
        return [tuple(r) for r in sink.rows()]

    assert run([[{"f0": 1, "f1": 3}]], 0) == []
    assert run([[{"f0": 1, "f1": 5}], [{"f0": 1, "f1": 7}, {"f0": 1, "f1": 4}]], 1) == [
        (1, 4), (1, 5)]


class EveryState(KeyedProcessFunction):
    """Working with State: ``ListState``, ``MapState``, ``ReducingState`` and
    ``AggregatingState``, as PyFlink's API reaches them from the ``RuntimeContext``."""

    def open(self, runtime_context: RuntimeContext):
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.LONG()))
        self.per_word = runtime_context.get_map_state(
            MapStateDescriptor("per_word", Types.STRING(), Types.LONG()))
        self.total = runtime_context.get_reducing_state(
            ReducingStateDescriptor("total", lambda a, b: a + b, Types.LONG()))
        self.average = runtime_context.get_aggregating_state(
            AggregatingStateDescriptor("average", Average(), Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value, ctx: KeyedProcessFunction.Context):
        word, n = value
        self.seen.add(n)
        self.per_word.put(word, (self.per_word.get(word) or 0) + n)
        self.total.add(n)
        self.average.add(n)
        yield (f"{ctx.get_current_key()}: seen={list(self.seen.get())} "
               f"per_word={sorted(self.per_word.items())} total={self.total.get()} "
               f"average={self.average.get()}")


class Average(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + value, accumulator[1] + 1

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, acc_a, acc_b):
        return acc_a[0] + acc_b[0], acc_a[1] + acc_b[1]


def test_state_list_map_reducing_and_aggregating_state(spark: Any, capsys: Any) -> None:
    """Each keyed state type of the page, read back after each update (key: the word's first
    letter); and State Time-To-Live: ``StateTtlConfig`` is refused with a clear message."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.from_collection([("ab", 1), ("ac", 2), ("ab", 3), ("b", 4)],
                        type_info=Types.TUPLE([Types.STRING(), Types.LONG()])) \
        .key_by(lambda value: value[0][0]) \
        .process(EveryState(), output_type=Types.STRING()) \
        .print()
    assert capsys.readouterr().out.splitlines() == [
        "a: seen=[1] per_word=[('ab', 1)] total=1 average=1.0",
        "a: seen=[1, 2] per_word=[('ab', 1), ('ac', 2)] total=3 average=1.5",
        "a: seen=[1, 2, 3] per_word=[('ab', 4), ('ac', 2)] total=6 average=2.0",
        "b: seen=[4] per_word=[('b', 4)] total=4 average=4.0",
    ]
    with pytest.raises(ImportError, match="state TTL is not supported"):
        from flinkwin.datastream.state import StateTtlConfig  # noqa: F401


# ------------------------------------- event-time/generating_watermarks.md, built_in.md
class MyEvent(TimestampAssigner):
    """The pages' ``MyEvent`` timestamps: the tuple's second field, in seconds."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value[1] * 1000


#: ``(group, seconds, severity)``: a's batches; b stays at 0 s (its window is the first).
WATERMARK_BATCHES = [
    [{"f0": "a", "f1": 1, "f2": "WARN"}, {"f0": "a", "f1": 12, "f2": "WARN"},
     {"f0": "b", "f1": 0, "f2": "INFO"}],
    [{"f0": "a", "f1": 3, "f2": "WARN"}, {"f0": "a", "f1": 20, "f2": "WARN"}],
    [{"f0": "a", "f1": 5, "f2": "WARN"}, {"f0": "a", "f1": 26, "f2": "WARN"}],
]


def test_generating_watermarks_bounded_out_of_orderness_and_monotonous(
    spark: Any, tmp_path: Path
) -> None:
    """Generating Watermarks, Using Watermark Strategies: the Python tab's pipeline (``filter``,
    then ``assign_timestamps_and_watermarks``, ``key_by``, a 10 s tumbling window, ``reduce``),
    over micro-batches, with Builtin Watermark Generators' two strategies. A micro-batch runs at
    the watermark of the input before it (``max ts - bound - 1``). Out-of-orderness 5 s:
    batch 1 at 6999 ms keeps [0, 10) open for a@3 s; batch 2 at 14999 ms fires it (1 + 3 = 4)
    and drops a@5 s as late; the no-data batch 3 at 20999 ms fires [10, 20) (12). Monotonous:
    batch 1 at 11999 ms already fires [0, 10) with a@1 s alone and drops a@3 s and a@5 s; batch
    2 at 19999 ms fires [10, 20); batch 3 at 25999 ms [20, 30) waits. b's INFO is filtered
    out before the timestamps, as on the page."""
    write_batches(tmp_path / "in", WATERMARK_BATCHES)

    def run(strategy: Any, name: str) -> dict[int, list[tuple[Any, ...]]]:
        stream = DataStream(
            spark.readStream.schema("f0 string, f1 long, f2 string")
            .option("maxFilesPerTrigger", 1).json(str(tmp_path / "in")),
            type_info=Types.TUPLE([Types.STRING(), Types.LONG(), Types.STRING()]))
        with_timestamps_and_watermarks = stream \
            .filter(lambda e: e[2] == "WARN") \
            .assign_timestamps_and_watermarks(strategy)
        sink = MemorySink(name)
        with_timestamps_and_watermarks \
            .key_by(lambda e: e[0]) \
            .window(TumblingEventTimeWindows.of(Duration.of_seconds(10))) \
            .reduce(lambda a, b: (a[0], a[1] + b[1], a[2])) \
            .start(main=sink, checkpoint_location=str(tmp_path / name),
                   trigger={"availableNow": True}).awaitTermination()
        return {b: [tuple(r) for r in rows] for b, rows in sink.batches.items() if rows}

    bounded = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(5)) \
        .with_timestamp_assigner(MyEvent())
    assert run(bounded, "bounded") == {2: [("a", 4, "WARN")], 3: [("a", 12, "WARN")]}
    # Dealing With Idle Sources: on one input, idleness holds nothing back: the same output
    assert run(bounded.with_idleness(Duration.of_minutes(1)), "idle") == {
        2: [("a", 4, "WARN")], 3: [("a", 12, "WARN")]}
    # the page's Java lambda assigner ``(event, timestamp) -> ...``, as a Python lambda
    monotonous = WatermarkStrategy.for_monotonous_timestamps() \
        .with_timestamp_assigner(lambda event, timestamp: event[1] * 1000)
    assert run(monotonous, "monotonous") == {1: [("a", 1, "WARN")], 2: [("a", 12, "WARN")]}


def test_generating_watermarks_alignment_is_refused_naming_it() -> None:
    """Watermark alignment (the page's ``with_watermark_alignment("alignment-group-1",
    Duration.of_seconds(20), Duration.of_seconds(1))``) is refused with an error naming it."""
    with pytest.raises(Exception, match="with_watermark_alignment is not supported"):
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(20)) \
            .with_watermark_alignment("alignment-group-1", Duration.of_seconds(20),
                                      Duration.of_seconds(1))


# ------------------------------------------------------------------ operators/overview.md
class MyWindowFunction(WindowFunction):
    """Window Apply, the Python tab's (its ``Iterable[tuple]`` inputs)."""

    def apply(self, key: str, window: TimeWindow, inputs: Iterable[tuple]):
        sum = 0  # noqa: A001 (the page's name)
        for input in inputs:  # noqa: A001
            sum += input[1]
        yield key, sum


class MyAllWindowFunction(AllWindowFunction):
    def apply(self, window: TimeWindow, inputs: Iterable[tuple]):
        sum = 0  # noqa: A001
        for input in inputs:  # noqa: A001
            sum += input[1]
        yield sum


class MyCoGroup(CoGroupFunction):
    """Window CoGroup (a Java-only example): both sides' elements of a key and window."""

    def co_group(self, first: Iterable[Any], second: Iterable[Any]) -> Any:
        yield f"{sorted(v for _, v in first)}|{sorted(v for _, v in second)}"


def test_operators_overview_transformations(spark: Any, capsys: Any) -> None:
    """Operators, DataStream Transformations: each Python example as written (the windowed
    ones on ``(key, n)`` tuples whose event time is ``n`` seconds, which the page leaves
    open), printed."""
    env = StreamExecutionEnvironment.get_execution_environment()

    data_stream = env.from_collection(collection=[1, 2, 3, 4, 5])
    data_stream.map(lambda x: 2 * x, output_type=Types.INT()).print()
    assert printed(capsys) == ["10", "2", "4", "6", "8"]

    data_stream = env.from_collection(collection=['hello apache flink', 'streaming compute'])
    data_stream.flat_map(lambda x: x.split(' '), output_type=Types.STRING()).print()
    assert printed(capsys) == ["apache", "compute", "flink", "hello", "streaming"]

    data_stream = env.from_collection(collection=[0, 1, 2, 3, 4, 5])
    data_stream.filter(lambda x: x != 0).print()
    assert printed(capsys) == ["1", "2", "3", "4", "5"]

    data_stream = env.from_collection(collection=[(1, 'a'), (2, 'a'), (3, 'b')])
    data_stream.key_by(lambda x: x[1], key_type=Types.STRING()).print()
    assert printed(capsys) == ["(1, 'a')", "(2, 'a')", "(3, 'b')"]

    data_stream = env.from_collection(collection=[(1, 'a'), (2, 'a'), (3, 'a'), (4, 'b')],
                                      type_info=Types.TUPLE([Types.INT(), Types.STRING()]))
    data_stream.key_by(lambda x: x[1]).reduce(lambda a, b: (a[0] + b[0], b[1])).print()
    # a rolling reduce: each element's running value, in its key's arrival order
    assert capsys.readouterr().out.splitlines() in (
        ["(1,a)", "(3,a)", "(6,a)", "(4,b)"], ["(1,a)", "(3,a)", "(4,b)", "(6,a)"],
        ["(1,a)", "(4,b)", "(3,a)", "(6,a)"], ["(4,b)", "(1,a)", "(3,a)", "(6,a)"])

    pairs = Types.TUPLE([Types.STRING(), Types.LONG()])
    data_stream = env.from_collection([("a", 1), ("b", 2), ("a", 4), ("a", 6), ("b", 7)],
                                      type_info=pairs) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                SecondsField()))
    windowed_stream = data_stream.key_by(lambda x: x[0]) \
        .window(TumblingEventTimeWindows.of(Time.seconds(5)))
    all_windowed_stream = data_stream.window_all(TumblingEventTimeWindows.of(Time.seconds(5)))

    windowed_stream.apply(MyWindowFunction()).print()
    assert printed(capsys) == ["('a', 5)", "('a', 6)", "('b', 2)", "('b', 7)"]
    all_windowed_stream.apply(MyAllWindowFunction()).print()
    assert printed(capsys) == ["13", "7"]
    windowed_stream.reduce(lambda a, b: (a[0], a[1] + b[1])).print()
    assert printed(capsys) == ["(a,5)", "(a,6)", "(b,2)", "(b,7)"]

    other_stream = env.from_collection([("a", 3), ("c", 8)], type_info=pairs) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                SecondsField()))
    data_stream.union(other_stream).map(lambda x: x[1], output_type=Types.LONG()).print()
    assert printed(capsys) == ["1", "2", "3", "4", "6", "7", "8"]

    # Window Join and Window CoGroup (Java only): a's [0, 5) holds 1 and 4 here, 3 there
    data_stream.join(other_stream) \
        .where(lambda x: x[0]).equal_to(lambda x: x[0]) \
        .window(TumblingEventTimeWindows.of(Time.seconds(5))) \
        .apply(lambda first, second: first[1] * 10 + second[1], output_type=Types.LONG()) \
        .print()
    assert printed(capsys) == ["13", "43"]
    data_stream.co_group(other_stream) \
        .where(lambda x: x[0]).equal_to(lambda x: x[0]) \
        .window(TumblingEventTimeWindows.of(Time.seconds(5))) \
        .apply(MyCoGroup(), output_type=Types.STRING()) \
        .print()
    assert printed(capsys) == ["[1, 4]|[3]", "[2]|[]", "[6]|[]", "[7]|[]", "[]|[8]"]


class SecondsField(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value[1] * 1000


def test_operators_overview_partitioning_chaining_and_refusals(spark: Any, capsys: Any) -> None:
    """Operators, Physical Partitioning and Task Chaining, the Python tabs: ``shuffle()``,
    ``rebalance()``, ``rescale()`` return the stream and change no result (flinkwin's
    operators keep no per-instance state), as do ``start_new_chain()``, ``disable_chaining()``
    and ``slot_sharing_group("name")``; on a keyed stream partitioning is refused with Flink's
    message; ``partition_custom``, ``broadcast()`` and ``iterate`` are refused, each named;
    ``connect(...).map`` takes a ``CoMapFunction`` only, as PyFlink's (the page's CoMap and
    CoFlatMap: ``test_operators_overview_connect_co_map_and_co_flat_map``)."""
    env = StreamExecutionEnvironment.get_execution_environment()
    data_stream = env.from_collection(collection=[(2, 'a'), (2, 'a'), (3, 'b')],
                                      type_info=Types.TUPLE([Types.INT(), Types.STRING()]))
    data_stream.shuffle().rebalance().rescale() \
        .filter(lambda x: x[0] > 2) \
        .map(lambda x: x[1], output_type=Types.STRING()).start_new_chain() \
        .map(lambda x: x.upper(), output_type=Types.STRING()).disable_chaining() \
        .slot_sharing_group("name") \
        .print()
    assert printed(capsys) == ["B"]

    with pytest.raises(UnsupportedOperationError,
                       match="Cannot override partitioning for KeyedStream"):
        data_stream.key_by(lambda x: x[1]).rebalance()
    partition = 3
    with pytest.raises(UnsupportedOperationError, match=r"partition_custom\(\)"):
        data_stream.partition_custom(lambda key, num_partition: key % partition, lambda x: x[0])
    with pytest.raises(UnsupportedOperationError, match=r"broadcast\(\)"):
        data_stream.broadcast()
    with pytest.raises(TypeError, match="The input function must be a CoMapFunction!"):
        data_stream.connect(data_stream).map(lambda x: x)
    with pytest.raises(UnsupportedOperationError, match=r"iterate\(\)"):
        data_stream.iterate()


class MyCoMapFunction(CoMapFunction):
    """Operators overview, Connect / CoMap, the Python tab."""

    def map1(self, value):
        return value[0] + 1

    def map2(self, value):
        return value[1]


class MyCoFlatMapFunction(CoFlatMapFunction):
    """Operators overview, CoFlatMap, the Python tab."""

    def flat_map1(self, value):
        for i in range(value[0]):  # noqa: UP028 (the page's code as written)
            yield i

    def flat_map2(self, value):
        yield value[0] + 1


def test_operators_overview_connect_co_map_and_co_flat_map(spark: Any) -> None:
    """Operators overview, DataStream,DataStream -> ConnectedStream and ConnectedStream ->
    DataStream: ``connect`` two streams (of different types here), ``map`` with a
    ``CoMapFunction`` (one output per element of either input), ``flat_map`` with a
    ``CoFlatMapFunction`` (any number)."""
    env = StreamExecutionEnvironment.get_execution_environment()
    stream_1 = env.from_collection(collection=[(1, 'a'), (2, 'b')],
                                   type_info=Types.TUPLE([Types.INT(), Types.STRING()]))
    stream_2 = env.from_collection(collection=[(3, 'c')],
                                   type_info=Types.TUPLE([Types.INT(), Types.STRING()]))
    connected_streams = stream_1.connect(stream_2)
    mapped = connected_streams.map(MyCoMapFunction(), output_type=Types.PICKLED_BYTE_ARRAY())
    assert sorted(mapped.execute_and_collect(), key=str) == [2, 3, 'c']
    flat = connected_streams.flat_map(MyCoFlatMapFunction(), output_type=Types.INT())
    assert sorted(flat.execute_and_collect()) == [0, 0, 1, 4]


class CountWithProcessingTimeout(KeyedProcessFunction):
    """Process Function, Example, in processing time (the page's hint: "event time and
    processing time"): the Python ``CountWithTimeoutFunction`` with the record's timestamp
    replaced by ``current_processing_time()`` and the event-time timer by a processing-time
    one of 1 s (and its one Row built whole, flinkwin's Rows being immutable)."""

    def open(self, runtime_context: RuntimeContext):
        self.state = runtime_context.get_state(ValueStateDescriptor(
            "my_state", Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value, ctx: KeyedProcessFunction.Context):
        current = self.state.value()
        if current is None:
            current = Row(value.f1, 0, 0)
        current = Row(current[0], current[1] + 1,
                      ctx.timer_service().current_processing_time())
        self.state.update(current)
        ctx.timer_service().register_processing_time_timer(current[2] + 1000)

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext):
        result = self.state.value()
        if timestamp == result[2] + 1000:
            yield result[0], result[1]


def test_process_function_count_with_processing_timeout(spark: Any, tmp_path: Path) -> None:
    """Every key's count once its 1 s of processing time has passed without an update: a's
    two elements (one batch, one processing time: two registrations, one timer) and b's one,
    emitted by later micro-batches (Spark runs batches without data for the timers)."""
    write_batches(tmp_path / "in", [[
        {"f0": "1970-01-01T00:00:00Z", "f1": "a", "f2": "x"},
        {"f0": "1970-01-01T00:00:01Z", "f1": "a", "f2": "y"},
        {"f0": "1970-01-01T00:00:02Z", "f1": "b", "f2": "z"},
    ]])
    df = spark.readStream.schema(ROW3).json(str(tmp_path / "in"))
    result = DataStream(df, type_info=Types.ROW(
        [Types.SQL_TIMESTAMP(), Types.STRING(), Types.STRING()])) \
        .key_by(lambda value: value[1]) \
        .process(CountWithProcessingTimeout(),
                 output_type=Types.TUPLE([Types.STRING(), Types.LONG()]))
    sink = MemorySink("count_with_processing_timeout")
    query = result.start(main=sink, checkpoint_location=str(tmp_path / "cp"),
                         trigger={"processingTime": "500 milliseconds"})
    try:
        deadline = time.monotonic() + 60
        while len([r for rows in sink.batches.values() for r in rows]) < 2 and (
                time.monotonic() < deadline):
            time.sleep(0.5)
    finally:
        query.stop()
    batches = {b: sorted(tuple(r) for r in rows) for b, rows in sink.batches.items() if rows}
    assert sorted(r for rows in batches.values() for r in rows) == [("a", 2), ("b", 1)]
    assert 0 not in batches  # the elements' batch: no timer is due yet


# ------------------------------------------------------ python/datastream/operators/*.md
class MyMapFunction(MapFunction):
    """Python Operators, Implementing Function Interfaces: the page's, as written."""

    def map(self, value):
        return value + 1


def my_map_func(value):
    return value + 1


def test_python_operators_three_ways_to_define_a_function(spark: Any, capsys: Any) -> None:
    """Python Operators, Functions: a ``MapFunction``, a lambda and a Python function, each as
    the page writes it, give the same stream."""
    env = StreamExecutionEnvironment.get_execution_environment()
    data_stream = env.from_collection([1, 2, 3, 4, 5], type_info=Types.INT())
    for func in (MyMapFunction(), lambda x: x + 1, my_map_func):
        mapped_stream = data_stream.map(func, output_type=Types.INT())
        mapped_stream.print()
        assert printed(capsys) == ["2", "3", "4", "5", "6"]


class TumblingEventWindowAssigner(WindowAssigner[tuple, TimeWindow]):
    """Python Windows, Window Assigners: the page's custom assigner, with two slips of the
    page fixed (it would not run on PyFlink either): ``is_event_time`` returns the
    constructor's flag (the page returns False, making the window operator clean windows up
    by processing time), and ``EventTimeTrigger`` is imported."""

    def __init__(self, size: int, offset: int, is_event_time: bool):
        self._size = size
        self._offset = offset
        self._is_event_time = is_event_time

    def assign_windows(self,
                       element: tuple,
                       timestamp: int,
                       context: WindowAssigner.WindowAssignerContext) -> Collection[TimeWindow]:
        start = TimeWindow.get_window_start_with_offset(timestamp, self._offset, self._size)
        return [TimeWindow(start, start + self._size)]

    def get_default_trigger(self, env) -> Trigger[tuple, TimeWindow]:
        return EventTimeTrigger()

    def get_window_serializer(self) -> TypeSerializer[TimeWindow]:
        return TimeWindowSerializer()

    def is_event_time(self) -> bool:
        return self._is_event_time


class SumWindowProcessFunction(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
    """Python Windows, ProcessWindowFunction: the page's, as written."""

    def process(self,
                key: str,
                content: ProcessWindowFunction.Context,
                elements: Iterable[tuple]) -> Iterable[tuple]:
        result = 0
        for i in elements:
            result += i[0]
        return [(key, result)]

    def clear(self, context: ProcessWindowFunction.Context) -> None:
        pass


class SumWindowFunction(WindowFunction[tuple, tuple, str, TimeWindow]):
    """Python Windows, WindowFunction: the page's, as written."""

    def apply(self, key: str, window: TimeWindow, inputs: Iterable[tuple]):
        result = 0
        for i in inputs:
            result += i[0]
        return [(key, result)]


def test_python_windows_custom_assigner_with_process_and_apply(spark: Any, capsys: Any) -> None:
    """Python Windows: the page's program. It leaves the assigner's arguments out
    (``TumblingEventWindowAssigner()``) and the stream without timestamps; here windows of
    4 ms, offset 0, event time, on timestamps of ``i[0]`` ms: hi 1, 3 | 5 and hello 2 | 4, 6."""
    env = StreamExecutionEnvironment.get_execution_environment()
    data_stream = env.from_collection([
        (1, 'hi'), (2, 'hello'), (3, 'hi'), (4, 'hello'), (5, 'hi'), (6, 'hello')],
        type_info=Types.TUPLE([Types.INT(), Types.STRING()])) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
                FirstFieldMillis()))
    data_stream.key_by(lambda x: x[1], key_type=Types.STRING()) \
        .window(TumblingEventWindowAssigner(4, 0, True)) \
        .process(SumWindowProcessFunction(), Types.TUPLE([Types.STRING(), Types.INT()])) \
        .print()
    expected = ["(hello,10)", "(hello,2)", "(hi,4)", "(hi,5)"]
    assert printed(capsys) == expected
    data_stream.key_by(lambda x: x[1], key_type=Types.STRING()) \
        .window(TumblingEventWindowAssigner(4, 0, True)) \
        .apply(SumWindowFunction(), Types.TUPLE([Types.STRING(), Types.INT()])) \
        .print()
    assert printed(capsys) == expected


class FirstFieldMillis(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value[0]


def test_sql_timestamp_values_pass_through_a_function_exactly_in_any_session_zone(
    spark: Any,
) -> None:
    """The process function page's ``Types.SQL_TIMESTAMP()`` field, handed to functions as
    PyFlink does (naive UTC wall-clock time), comes back as the same instant through a
    ``map`` declaring it, also under a session time zone other than UTC (Spark reads a naive
    datetime in the session zone; PyFlink's coder as UTC)."""
    row3 = Types.ROW([Types.SQL_TIMESTAMP(), Types.STRING(), Types.STRING()])
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        utc = datetime.timezone.utc
        df = spark.createDataFrame([(at(90).replace(tzinfo=utc), "a", "x")], ROW3)
        result = DataStream(df, type_info=row3).map(lambda value: value, output_type=row3)
        [row] = result.execute_and_collect()
        assert row[0] == datetime.datetime(1970, 1, 1, 0, 1, 30)  # naive UTC, as PyFlink's
        instants = result.toDF().selectExpr("unix_millis(f0)").collect()
        assert [r[0] for r in instants] == [90_000]
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
