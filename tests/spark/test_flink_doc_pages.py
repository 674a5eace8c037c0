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
from pathlib import Path
from typing import Any

import pytest
from batch_files import write_batches
from pyspark.errors import PythonException

from flinkwin.common import Duration, Row, Types, WatermarkStrategy
from flinkwin.common.watermark_strategy import TimestampAssigner
from flinkwin.datastream import (
    DataStream,
    FlatMapFunction,
    KeyedProcessFunction,
    OutputTag,
    ProcessFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
)
from flinkwin.datastream.functions import AggregateFunction, JoinFunction, ProcessJoinFunction
from flinkwin.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    ValueStateDescriptor,
)
from flinkwin.datastream.window import (
    EventTimeSessionWindows,
    SlidingEventTimeWindows,
    TumblingEventTimeWindows,
)
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

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
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

    def on_timer(self, timestamp: int, ctx: 'KeyedProcessFunction.OnTimerContext'):
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

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
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
        def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
            coalesced_time = ((ctx.timestamp() + timeout) // 1000) * 1000
            ctx.timer_service().register_event_time_timer(coalesced_time)
            if value[1] == 900:
                timestamp_of_timer_to_stop = 0
                ctx.timer_service().delete_event_time_timer(timestamp_of_timer_to_stop)
                ctx.timer_service().delete_event_time_timer(12345)  # none: no effect
            coalesced_time = ctx.timer_service().current_watermark() + 1
            ctx.timer_service().register_event_time_timer(coalesced_time)

        def on_timer(self, timestamp: int, ctx: 'KeyedProcessFunction.OnTimerContext'):
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

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
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
