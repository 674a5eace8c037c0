"""map/flat_map/filter, print() and add_sink, and windows after windows (Flink's consecutive
windowed operations: results carry their window's max_timestamp())."""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.errors import PythonException

from flinkwin import (
    DataStream,
    FilterFunction,
    FlatMapFunction,
    KeySelector,
    MapFunction,
    ProcessAllWindowFunction,
    Time,
    TimestampAssigner,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.functions import SinkFunction
from flinkwin.spark.printing import flink_string, java_double

SCHEMA = "k string, ts long, v long"
ROWS = [("a", 1, 1), ("b", 2, 10), ("a", 6, 100), ("a", 12, 1000), ("b", 14, 10000)]


class Split(FlatMapFunction):
    def flat_map(self, value: Any) -> Any:
        for _ in range(value.v % 3):
            yield value.k, value.v


class Collect(SinkFunction):
    def __init__(self) -> None:
        self.got: list[tuple[Any, Any]] = []

    def invoke(self, value: Any, context: Any) -> None:
        self.got.append((value, context.timestamp()))


def _stream(spark: Any) -> DataStream:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
    return DataStream(spark.createDataFrame(ROWS, SCHEMA)).assign_timestamps_and_watermarks(
        strategy
    )


def test_map_flat_map_filter_and_print(spark: Any, capsys: Any) -> None:
    stream = _stream(spark)
    stream.filter(lambda r: r.v < 1000).map(
        lambda r: (r.k, r.v * 2), output_type=Types.TUPLE([Types.STRING(), Types.LONG()])
    ).print()
    stream.flat_map(Split(), output_type="k string, v long").print("split")
    stream.map(lambda r: r.v / 4, output_type=Types.DOUBLE()).print()
    printed = capsys.readouterr().out.splitlines()
    assert sorted(printed) == sorted(
        ["(a,2)", "(b,20)", "(a,200)",
         "split> +I[a, 1]", "split> +I[b, 10]", "split> +I[a, 100]", "split> +I[a, 1000]",
         "split> +I[b, 10000]",
         "0.25", "2.5", "25.0", "250.0", "2500.0"]
    )
    # a DataFrame's float column prints as Java's Float.toString (the Row's field is a Float)
    DataStream(spark.createDataFrame([("a", -73.9947)], "k string, lon float")).print()
    assert capsys.readouterr().out.splitlines() == ["+I[a, -73.9947]"]
    # without output_type (as PyFlink allows) the values travel pickled
    assert sorted(stream.map(lambda r: r.v).execute_and_collect()) == [1, 10, 100, 1000, 10000]
    with pytest.raises(PythonException, match="map output"):
        stream.map(lambda r: r.k, output_type=Types.LONG()).execute_and_collect()


def test_start_on_a_stream_without_a_flinkwin_operator_says_what_to_use(spark: Any) -> None:
    stream = _stream(spark).filter(lambda r: r.v < 1000)
    with pytest.raises(AttributeError, match=r"this stream has none .*writeStream"):
        stream.start()


class Totals(ProcessAllWindowFunction):
    def process(self, context: Any, elements: Any) -> Any:
        window = context.window()
        yield (window.start, window.end, sorted(e[2] for e in elements))


class Stamp(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return record_timestamp + 1


def test_window_after_window_uses_the_results_timestamps(spark: Any) -> None:
    per_key = _stream(spark).key_by(lambda r: r.k).window(
        TumblingEventTimeWindows.of(Time.milliseconds(5))
    ).reduce(lambda a, b: (a[0], a[1], a[2] + b[2]), output_type=Types.TUPLE(
        [Types.STRING(), Types.LONG(), Types.LONG()]))
    sink = Collect()
    per_key.add_sink(sink)
    # each result carries its window's max_timestamp()
    assert sorted(sink.got) == [
        (("a", 1, 1), 4), (("a", 6, 100), 9), (("a", 12, 1000), 14), (("b", 2, 10), 4),
        (("b", 14, 10000), 14),
    ]
    out = Types.TUPLE([Types.LONG(), Types.LONG(), Types.LIST(Types.LONG())])
    second = per_key.window_all(TumblingEventTimeWindows.of(Time.milliseconds(10))).process(
        Totals(), out)
    assert sorted(second.execute_and_collect()) == [
        (0, 10, [1, 10, 100]), (10, 20, [1000, 10000])
    ]
    # a TimestampAssigner downstream sees those timestamps as record_timestamp
    shifted = per_key.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Stamp())
    ).window_all(TumblingEventTimeWindows.of(Time.milliseconds(10))).process(Totals(), out)
    assert sorted(shifted.execute_and_collect()) == [
        (0, 10, [1, 10]), (10, 20, [100, 1000, 10000])
    ]


def test_flink_string_formats_as_java_to_string() -> None:
    from flinkwin import Row

    assert flink_string(("a", 1, None, True, 2.0)) == "(a,1,null,true,2.0)"
    assert flink_string(Row("x", "y")("a", 4)) == "+I[a, 4]"
    assert flink_string(Row("a", 4)) == "+I[a, 4]"
    assert flink_string("text") == "text"
    assert [java_double(v) for v in (1e7, 1.5e-5, 0.001, 123.25, -2e20)] == [
        "1.0E7", "1.5E-5", "0.001", "123.25", "-2.0E20"
    ]


class _Logged:
    """Records open/close in a file (the functions run in Spark's Python workers)."""

    def __init__(self, log: str) -> None:
        self.log = log
        self.task: str | None = None

    def open(self, runtime_context: Any) -> None:
        self.task = (
            f"{runtime_context.get_task_name()} {runtime_context.get_index_of_this_subtask()}/"
            f"{runtime_context.get_number_of_parallel_subtasks()}"
        )

    def close(self) -> None:
        with open(self.log, "a") as f:
            f.write(f"{type(self).__name__} closed\n")

    def checked(self) -> str:
        if self.task is None:
            raise AssertionError(f"{type(self).__name__} called before open()")
        return self.task


class LoggedMap(_Logged, MapFunction):
    def map(self, value: Any) -> Any:
        return value.k, self.checked()


class LoggedFlatMap(_Logged, FlatMapFunction):
    def flat_map(self, value: Any) -> Any:
        self.checked()
        yield value


class LoggedFilter(_Logged, FilterFunction):
    def filter(self, value: Any) -> bool:
        self.checked()
        return True


class LoggedKey(_Logged, KeySelector):
    def get_key(self, value: Any) -> Any:
        self.checked()
        return value[0]


def test_rich_functions_are_opened_before_and_closed_after_each_task(
    spark: Any, tmp_path: Any
) -> None:
    """PyFlink's MapFunction, FlatMapFunction, FilterFunction and KeySelector are rich
    functions: ``open(runtime_context)`` before the first element of each subtask (a Spark
    task: a partition), ``close()`` after its last."""
    log = str(tmp_path / "log")
    df = spark.createDataFrame(ROWS, SCHEMA).repartition(2)
    stream = DataStream(df).filter(LoggedFilter(log)).flat_map(LoggedFlatMap(log), SCHEMA)
    mapped = stream.map(LoggedMap(log), output_type="k string, task string")
    tasks = {task for _, task in mapped.execute_and_collect()}
    assert tasks <= {"map 0/2", "map 1/2"} and tasks
    closed = sorted((tmp_path / "log").read_text().splitlines())
    assert closed == sorted(
        ["LoggedFilter closed"] * 2 + ["LoggedFlatMap closed"] * 2 + ["LoggedMap closed"] * 2
    )

    (tmp_path / "log").write_text("")
    windows = (
        _stream(spark).key_by(LoggedKey(log))
        .window(TumblingEventTimeWindows.of(Time.milliseconds(5)))
        .reduce(lambda a, b: (a[0], a[1], a[2] + b[2]))
    )
    assert sorted(windows.execute_and_collect()) == [
        ("a", 1, 1), ("a", 6, 100), ("a", 12, 1000), ("b", 2, 10), ("b", 14, 10000)
    ]
    # opened and closed in each task before the shuffle; the window stage opens its own copy
    # (get_key raises if called before open)
    assert "LoggedKey closed" in (tmp_path / "log").read_text()


class SecondField(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[1])


def test_map_after_assign_timestamps_keeps_the_element_timestamps(spark: Any) -> None:
    """Flink assigns timestamps once, at ``assign_timestamps_and_watermarks``; a map's outputs
    keep their element's timestamp, even when the map drops (or moves) the field the
    ``TimestampAssigner`` read: the assigner is not run again on the map's outputs."""
    df = spark.createDataFrame(ROWS, SCHEMA)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        SecondField()
    )
    pairs = (
        DataStream(df, type_info=Types.TUPLE([Types.STRING(), Types.LONG(), Types.LONG()]))
        .assign_timestamps_and_watermarks(strategy)
        .map(lambda e: (e[0], e[2]), output_type=Types.TUPLE([Types.STRING(), Types.LONG()]))
    )
    sums = (
        pairs.key_by(lambda p: p[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    )
    # the timestamps the map dropped: a at 1, 6 | 12 ms, b at 2 | 14 ms (the values now in
    # their place, 1, 100, 1000..., would put every element of a in a window of its own)
    assert sorted(sums.execute_and_collect()) == [
        ("a", 101), ("a", 1000), ("b", 10), ("b", 10000)
    ]


def test_env_execute_runs_a_streaming_print_until_its_query_ends(
    spark: Any, fresh_env: Any, tmp_path: Any, capsys: Any
) -> None:
    # a ported Flink program ends with env.execute(): on a stream it must run the job (Flink's
    # blocks while the job runs), not return and let the script end before any micro-batch
    import threading

    from batch_files import write_batches

    write_batches(tmp_path, [[{"k": "a", "ts": 1, "v": 1}, {"k": "a", "ts": 6, "v": 2}],
                             [{"k": "a", "ts": 12, "v": 4}]])
    source = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(tmp_path))
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
    query = (DataStream(source).assign_timestamps_and_watermarks(strategy).key_by("k")
             .window(TumblingEventTimeWindows.of(Time.milliseconds(5))).sum("v").print())
    ended: list[bool] = []

    def operator() -> None:  # whoever stops the job (here: once the input is processed)
        query.processAllAvailable()
        ended.append(True)
        query.stop()

    threading.Thread(target=operator, daemon=True).start()
    fresh_env.execute("sums")
    assert ended and not query.isActive
    assert sorted(capsys.readouterr().out.splitlines()) == ["+I[a, 1, 1]", "+I[a, 6, 2]"]
    fresh_env.execute("nothing left")  # the query it waited for is done: returns at once
