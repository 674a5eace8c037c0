"""Bad input on Spark: each row of the table in ``docs/reliability.md`` ("Bad input") that
only shows on Spark, one test each. Build-time errors are checked without running anything."""

from __future__ import annotations

import datetime
import time
from pathlib import Path
from typing import Any

import pytest
from bad_input_functions import FixedSum, PoisonedSum, ProcessingTimeoutTrigger
from pyspark.errors import StreamingQueryException
from pyspark.sql import functions as F
from spark_scenarios import run_stream, watermark, write_batches
from test_spark_streaming import SCHEMA, ev

from flinkwin import (
    AggregateFunction,
    AllWindowFunction,
    CountTrigger,
    DeltaTrigger,
    Duration,
    EventTimeSessionWindows,
    OutputTag,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    Time,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WatermarkStrategy,
    WindowFunction,
)
from flinkwin.datastream import DataStream, RuntimeExecutionMode
from flinkwin.errors import UnsupportedOperationError
from flinkwin.functions.builtin import sum_of
from flinkwin.spark import MemorySink, PipelineError

# a long shared-session file: `make test` runs it beside the rest to keep its two lanes even
pytestmark = pytest.mark.beside

BASE = datetime.datetime(2024, 5, 1, 12, 0, 0)


@pytest.fixture(scope="module")
def events(spark: Any) -> DataStream:
    rows = [("a", 1000, 1), ("b", 2000, 2), ("a", 12000, 3)]
    return DataStream(spark.createDataFrame(rows, SCHEMA))


def _windowed(stream: DataStream, ts: str = "ts") -> Any:
    return (
        stream.assignTimestampsAndWatermarks(watermark(0, ts=ts)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
    )


# --------------------------------------------------------------------------- null key
def test_a_null_key_fails_naming_the_row(spark: Any) -> None:
    df = spark.createDataFrame([("a", 1000, 1), (None, 2000, 7)], SCHEMA)
    result = _windowed(DataStream(df)).sum("v")
    with pytest.raises(Exception, match=r"null key in row \{\"k\":null,\"ts\":2000,\"v\":7\}"):
        result.toDF().collect()
    # a composite key with one null field is a null key too
    composite = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0)).keyBy("v", "k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("ts")
    )
    with pytest.raises(Exception, match="Assigned key must not be null!"):
        composite.toDF().collect()


# ------------------------------------------------------------------ null event timestamp
def _with_a_null_timestamp(spark: Any) -> Any:
    rows = [("u1", BASE, 1), ("u2", None, 2), ("u1", BASE + datetime.timedelta(seconds=1), 3)]
    return spark.createDataFrame(rows, "user string, at timestamp, n long")


def test_a_null_timestamp_fails_by_default_naming_the_row(spark: Any) -> None:
    result = (
        DataStream(_with_a_null_timestamp(spark))
        .assignTimestampsAndWatermarks(watermark(0, ts="at")).keyBy("user")
        .window(TumblingEventTimeWindows.of(Time.minutes(1))).sum("n")
    )
    with pytest.raises(Exception, match=r"timestamp is null for row \{'user': 'u2', 'at': None"):
        result.toDF().collect()


def test_null_timestamps_can_be_routed_to_a_side_output(spark: Any) -> None:
    untimed = OutputTag("untimed")
    strategy = watermark(0, ts="at").withNullTimestamps(untimed)
    result = (
        DataStream(_with_a_null_timestamp(spark)).assignTimestampsAndWatermarks(strategy)
        .keyBy("user").window(TumblingEventTimeWindows.of(Time.minutes(1))).sum("n")
    )
    assert [tuple(r) for r in result.toDF().collect()] == [("u1", BASE, 4)]
    side = result.getSideOutput(untimed).toDF()
    assert side.columns == ["user", "at", "n"]
    assert [tuple(r) for r in side.collect()] == [("u2", None, 2)]
    assert result._stage([]).summary["null timestamps"] == "OutputTag('untimed')"
    with pytest.raises(TypeError, match="withNullTimestamps takes \"fail\" or an OutputTag"):
        watermark(0).withNullTimestamps("drop")


def test_null_timestamps_routed_in_a_streaming_query(spark: Any, tmp_path: Path) -> None:
    untimed = OutputTag("untimed")
    batches = [
        [ev("a", 1000, 1), {"k": "b", "ts": None, "v": 5}],
        [ev("a", 12000, 2), {"k": "a", "ts": None, "v": 6}],
    ]
    write_batches(tmp_path / "in", batches)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
        lambda s: s.assignTimestampsAndWatermarks(watermark(0).withNullTimestamps(untimed))
        .keyBy("k").window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v"),
        side_tags=[untimed],
    )
    assert [r for rows in run.main.values() for r in rows] == [ev("a", 1000, 1)]
    routed = sorted(
        (r["k"], r["v"]) for rows in run.sides["untimed"].values() for r in rows
    )
    assert routed == [("a", 6), ("b", 5)]


# ------------------------------------------------------ null values in an aggregated field
def test_a_null_in_an_aggregated_field_fails_naming_the_row(spark: Any) -> None:
    rows = [("a", 1000, 1, 1.5), ("a", 2000, None, None), ("a", 3000, 2, float("nan"))]
    df = spark.createDataFrame(rows, "k string, ts long, n long, x double")
    with pytest.raises(Exception, match=r"field 'n' is null in Row\(k='a', ts=2000"):
        _windowed(DataStream(df)).sum("n").toDF().collect()
    # a null double is null, not NaN: it fails when combined, as a null long does
    with pytest.raises(Exception, match=r"max\('x'\): field 'x' is null in Row\(k='a', ts=2000"):
        _windowed(DataStream(df)).max("x").toDF().collect()
    # a window whose only element has the null emits it, as Flink does (no reduce call)
    alone = df.where(F.col("ts") == 2000)
    assert [tuple(r) for r in _windowed(DataStream(alone)).max("x").toDF().collect()] == [
        ("a", 2000, None, None)
    ]
    # without the null row both aggregate
    valid = df.where(F.col("n").isNotNull() & (F.col("ts") < 3000))
    assert [tuple(r) for r in _windowed(DataStream(valid)).sum("x").toDF().collect()] == [
        ("a", 1000, 1, 1.5)
    ]


# ------------------------------------------------------------- columns: types and names
def test_a_timestamp_column_of_a_wrong_type_fails_at_build(spark: Any) -> None:
    df = spark.createDataFrame([("a", "2024-05-01", 1)], "k string, ts string, v long")
    with pytest.raises(PipelineError, match="timestamp column 'ts' has type string; it must be"):
        _windowed(DataStream(df)).sum("v")


def test_missing_key_timestamp_and_value_columns_fail_at_build(events: DataStream) -> None:
    with pytest.raises(ValueError, match=r"keyBy column\(s\) \['user'\] not in the input"):
        events.keyBy("user")
    with pytest.raises(PipelineError, match="timestamp column 'at' is not a column of the input"):
        _windowed(events, ts="at").sum("v")
    with pytest.raises(ValueError, match=r"sum\('clicks'\): no such column"):
        _windowed(events).sum("clicks")
    with pytest.raises(ValueError, match=r"maxBy\(7\): no column at position 7"):
        _windowed(events).maxBy(7)


def test_duplicate_column_names_fail_at_build(spark: Any, events: DataStream) -> None:
    class Echo(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            return [(key, 1)]

    with pytest.raises(PipelineError, match="the process output has duplicate column names: n"):
        _windowed(events).process(Echo(), output_schema="n string, n bigint")
    with pytest.raises(PipelineError, match=r"duplicate column names: N/n \(Spark compares"):
        _windowed(events).process(Echo(), output_schema="N string, n bigint")
    with pytest.raises(PipelineError, match=r"with_window=True adds \['window_end'\]"):
        _windowed(events).process(
            Echo(), output_schema="k string, window_end bigint", with_window=True
        )
    with pytest.raises(PipelineError, match="duplicate column names: Window_Start/window_start"):
        _windowed(events).process(
            Echo(), output_schema="k string, Window_Start bigint", with_window=True
        )
    twice = events.toDF().select("k", "ts", F.col("v").alias("k"))
    with pytest.raises(PipelineError, match="the input has duplicate column names: k"):
        _windowed(DataStream(twice)).sum("ts")
    tagged = OutputTag("alerts", "a string, a string")
    with pytest.raises(PipelineError, match="side output 'alerts' has duplicate column names"):
        _windowed(events).sum("v").getSideOutput(tagged)


def test_input_column_names_with_a_dot_or_a_backtick_fail_at_build(events: DataStream) -> None:
    # pyspark's applyInPandas(WithState) would read 'v.x' as field 'x' of a column 'v'
    dotted = events.toDF().withColumnRenamed("v", "v.x")
    with pytest.raises(PipelineError, match=r"\['v\.x'\] contain '\.' or '`'.*"
                       r"withColumnRenamed\('v\.x', 'v_x'\)"):
        _windowed(DataStream(dotted)).sum("ts")
    ticked = events.toDF().withColumnRenamed("v", "v`x")
    with pytest.raises(PipelineError, match=r"\['v`x'\] contain"):
        _windowed(DataStream(ticked)).sum("ts")


def test_names_of_flinkwins_own_columns_are_refused_in_inputs_and_declared_types(
    spark: Any, events: DataStream
) -> None:
    # A user's `_fw_rts` was taken for the hidden record timestamps (dropped from toDF(), used
    # as event time without a WatermarkStrategy); a `_fw_ts` in a graph was overwritten by the
    # event time: both silently. Any case, as Spark matches names ignoring case by default.
    for name in ("_fw_rts", "_fw_ts", "_FW_Seq"):
        df = events.toDF().withColumn(name, F.lit(42))
        with pytest.raises(ValueError, match=rf"the DataFrame: names starting with '_fw_' are "
                           rf"reserved for flinkwin's own columns, got \['{name}'\]"):
            DataStream(df)
    with pytest.raises(ValueError, match=r"map output_type: .*reserved.*got \['_fw_ts'\]"):
        events.map(lambda r: (r.k, r.v), output_type="k string, _fw_ts bigint")
    with pytest.raises(ValueError, match=r"reserved.*got \['_fw_n'\]"):
        _windowed(events).process(_Process(), output_schema="k string, _fw_n bigint")
    # the same programs with other names run
    renamed = events.toDF().withColumn("fw_ts", F.lit(42))
    assert DataStream(renamed).map(
        lambda r: (r.k, r.fw_ts), output_type="k string, fw_ts bigint"
    ).toDF().collect()[0]["fw_ts"] == 42


def test_a_second_watermark_strategy_after_a_filter_of_a_stream_is_refused_at_build(
    spark: Any, tmp_path: Path
) -> None:
    # It failed the query at its first batch with Spark's "Redefining watermark is disallowed"
    write_batches(tmp_path / "in", [[ev("a", 1, 1000)]])
    df = spark.readStream.schema(SCHEMA).json(str(tmp_path / "in"))
    first = DataStream(df).assign_timestamps_and_watermarks(watermark(0))
    for between in (lambda s: s.filter(lambda r: r.v > 0),
                    lambda s: s.flat_map(lambda r: [r], output_type=SCHEMA),
                    lambda s: s.map(lambda r: r, output_type=SCHEMA).filter(lambda r: True)):
        with pytest.raises(UnsupportedOperationError,
                           match=r"after a filter or flat_map of a stream that already "
                                 r"has a WatermarkStrategy"):
            between(first).assign_timestamps_and_watermarks(watermark(5000))
    # directly on the source's stream the new strategy replaces the first, as in Flink
    assert first.assign_timestamps_and_watermarks(watermark(5000)) is not None


def test_a_second_watermark_strategy_after_a_map_of_a_stream_replaces_the_first(
    spark: Any, tmp_path: Path
) -> None:
    """Flink's second ``TimestampsAndWatermarksOperator`` ignores the watermarks from upstream:
    after a ``map`` (which keeps every element and its timestamp) the new strategy's watermark
    alone decides what fires, and its default assigner keeps the elements' timestamps."""
    write_batches(tmp_path / "in", [[ev("a", 1000, 1)], [ev("a", 12000, 2)],
                                    [ev("a", 30000, 4)]])

    def build(second: bool) -> Any:
        def program(stream: DataStream) -> Any:
            mapped = stream.assign_timestamps_and_watermarks(watermark(0)).map(
                lambda r: (r.k, r.ts, r.v * 10), output_type=SCHEMA)
            if second:
                mapped = mapped.assign_timestamps_and_watermarks(
                    WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(25)))
            return mapped.key_by("k").window(TumblingEventTimeWindows.of(Time.seconds(10))) \
                .sum("v")
        return program

    first = run_stream(spark, tmp_path / "in", tmp_path / "ck0", SCHEMA, build(False))
    assert sorted(r["v"] for rows in first.main.values() for r in rows) == [10, 20]
    replaced = run_stream(spark, tmp_path / "in", tmp_path / "ck1", SCHEMA, build(True))
    # 30000 - 25000 - 1: no window has ended
    assert [r for rows in replaced.main.values() for r in rows] == []
    assert replaced.watermarks[-1] == 4999


# ------------------------------------------------------- functions of the wrong kind
class _Agg(AggregateFunction):
    def create_accumulator(self) -> Any:
        return 0

    def add(self, value: Any, acc: Any) -> Any:
        return acc + value["v"]

    def get_result(self, acc: Any) -> Any:
        return acc

    def merge(self, a: Any, b: Any) -> Any:
        return a + b


class _Process(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        return [(key, len(list(elements)))]


class _Apply(WindowFunction):
    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        return [(key, len(list(inputs)))]


class _ProcessAll(ProcessAllWindowFunction):
    def process(self, context: Any, elements: Any) -> Any:
        return [("all", len(list(elements)))]


class _ApplyAll(AllWindowFunction):
    def apply(self, window: Any, inputs: Any) -> Any:
        return [("all", len(list(inputs)))]


def test_functions_of_the_wrong_kind_fail_at_build(events: DataStream) -> None:
    keyed = _windowed(events)
    out = "k string, n bigint"
    cases = [
        (lambda: keyed.process(sum_of("v"), output_schema=out),
         r"WindowedStream.process\(\) takes a ProcessWindowFunction, got BuiltinAggregation, "
         r"a ReduceFunction .* \(that goes to reduce\(\)\)"),
        (lambda: keyed.process(lambda a, b: a, output_schema=out),
         r"process\(\) takes a ProcessWindowFunction, got function"),
        (lambda: keyed.process(_Apply(), output_schema=out),
         r"got _Apply, a WindowFunction \(that goes to apply\(\) on a keyed stream\)"),
        (lambda: keyed.process(_ProcessAll(), output_schema=out),
         r"got _ProcessAll, a ProcessAllWindowFunction \(that goes to process\(\) after "
         r"windowAll\)"),
        (lambda: keyed.apply(_Process(), output_schema=out),
         r"apply\(\) takes a WindowFunction, got _Process, a ProcessWindowFunction"),
        (lambda: keyed.aggregate(lambda a, b: a, output_schema=out),
         r"aggregate\(\) takes an AggregateFunction, got function"),
        (lambda: keyed.reduce(_Agg()),
         r"reduce\(\) takes a ReduceFunction \(or a callable\(a, b\)\), got _Agg, an "
         r"AggregateFunction \(that goes to aggregate\(\)\)"),
        (lambda: keyed.reduce(_Process()), r"reduce\(\) takes a ReduceFunction"),
        (lambda: keyed.reduce(lambda a, b: a, _Agg(), output_schema=out),
         r"reduce\(\): the window function must be a ProcessWindowFunction or WindowFunction, "
         r"got _Agg"),
        (lambda: keyed.aggregate(_Agg(), _ProcessAll(), output_schema=out),
         r"aggregate\(\): the window function must be a ProcessWindowFunction or "
         r"WindowFunction, got _ProcessAll"),
        (lambda: keyed.reduce(42), r"got int 42, which is no window function"),
    ]
    everything = (
        events.assignTimestampsAndWatermarks(watermark(0))
        .windowAll(TumblingEventTimeWindows.of(Time.seconds(10)))
    )
    cases += [
        (lambda: everything.process(_Process(), output_schema=out),
         r"AllWindowedStream.process\(\) takes a ProcessAllWindowFunction, got _Process"),
        (lambda: everything.apply(_Apply(), output_schema=out),
         r"AllWindowedStream.apply\(\) takes an AllWindowFunction, got _Apply"),
        (lambda: everything.aggregate(_Agg(), _Process(), output_schema=out),
         r"must be a ProcessAllWindowFunction or AllWindowFunction, got _Process"),
    ]
    for build, message in cases:
        with pytest.raises(TypeError, match=message):
            build()
    # the right kinds build
    keyed.process(_Process(), output_schema=out)
    keyed.apply(_Apply(), output_schema=out)
    keyed.aggregate(_Agg(), _Process(), output_schema=out)
    keyed.reduce(lambda a, b: a, _Apply(), output_schema=out)
    everything.process(_ProcessAll(), output_schema=out)
    everything.apply(_ApplyAll(), output_schema=out)


def test_session_windows_refuse_a_trigger_that_cannot_merge_when_it_is_set(
    events: DataStream,
) -> None:
    sessions = (
        events.assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(EventTimeSessionWindows.withGap(Time.seconds(5)))
    )
    with pytest.raises(UnsupportedOperationError) as info:
        sessions.trigger(DeltaTrigger.of(1.0, lambda old, new: new["v"] - old["v"]))
    assert str(info.value).startswith(  # Flink's message, then what to add
        "A merging window assigner cannot be used with a trigger that does not support merging."
        " To use it with session windows, give the trigger can_merge() returning True"
    )
    sessions.trigger(CountTrigger.of(2))  # CountTrigger can merge


# --------------------------------------------------------------- a user function raising
POISON_BATCHES = [
    [ev("a", 1000, 1), ev("b", 2000, 10)],
    [ev("a", 3000, 13), ev("b", 4000, 2)],
    [ev("a", 12000, 4), ev("b", 15000, 1)],
    [ev("a", 30000, 1)],
]


def _summed(reduce_function: Any) -> Any:
    return (
        lambda s: s.assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).reduce(reduce_function)
    )


def test_a_failing_function_names_key_and_window_and_a_fixed_restart_loses_nothing(
    spark: Any, tmp_path: Path
) -> None:
    write_batches(tmp_path / "in", POISON_BATCHES)
    clean = run_stream(spark, tmp_path / "in", tmp_path / "clean", SCHEMA, _summed(FixedSum()))
    with pytest.raises(StreamingQueryException) as info:
        run_stream(spark, tmp_path / "in", tmp_path / "ck", SCHEMA, _summed(PoisonedSum()))
    message = str(info.value)
    assert "user function failed on key 'a', window TimeWindow(start=0, end=10000)" in message
    assert "ZeroDivisionError: poisoned element 13" in message
    assert "User traceback (most recent call last):" in message
    assert 'raise ZeroDivisionError("poisoned element 13")' in message  # the user's own line
    # fixed and restarted on the same checkpoint: the failed batch runs again, nothing lost
    fixed = run_stream(spark, tmp_path / "in", tmp_path / "ck", SCHEMA, _summed(FixedSum()))
    assert min(fixed.main) >= 1  # batch 0 was committed before the failure
    got = sorted(tuple(r.values()) for rows in fixed.main.values() for r in rows)
    want = sorted(tuple(r.values()) for rows in clean.main.values() for r in rows)
    assert got == want == [("a", 1000, 14), ("a", 12000, 4), ("b", 2000, 12), ("b", 15000, 1)]


# ----------------------------------------------------------------------- time domains
def test_a_trigger_timer_outside_the_stages_time_domain_fails_clearly(
    spark: Any, tmp_path: Path
) -> None:
    write_batches(tmp_path / "in", [[ev("a", 1000, 1)]])
    with pytest.raises(StreamingQueryException) as info:
        run_stream(
            spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
            lambda s: s.assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
            .window(TumblingEventTimeWindows.of(Time.seconds(10)))
            .trigger(ProcessingTimeoutTrigger()).sum("v"),
        )
    message = str(info.value)
    assert "called registerProcessingTimeTimer(" in message
    assert "for key 'a', window TimeWindow(start=0, end=10000)" in message
    assert "this streaming stage runs only event time timers" in message


def test_processing_time_windows_are_refused_under_available_now(
    spark: Any, tmp_path: Path
) -> None:
    (tmp_path / "in").mkdir()
    stream = DataStream(spark.readStream.schema(SCHEMA).json(str(tmp_path / "in")))
    processing = stream.keyBy("k").window(TumblingProcessingTimeWindows.of(Time.seconds(1)))
    with pytest.raises(ValueError, match="never finishes under availableNow"):
        processing.sum("v").start(main=MemorySink("never"), trigger={"availableNow": True})


def test_static_processing_time_is_the_time_the_pipeline_runs(events: DataStream) -> None:
    """A window's end is after the run started, which is over one window size after the
    pipeline was built: a time taken at build time could not give that end. (BATCH mode fires
    the open windows at the end of input; STREAMING mode, as Flink, never does.)"""
    built_at = time.time_ns() // 1_000_000
    result = (
        DataStream(events.toDF(), runtime_mode=RuntimeExecutionMode.BATCH).keyBy("k")
        .window(TumblingProcessingTimeWindows.of(Time.milliseconds(200)))
        .sum("v", with_window=True)
    )
    time.sleep(0.3)
    runs_at = time.time_ns() // 1_000_000
    ends = {r.window_end for r in result.toDF().collect()}
    assert len(ends) >= 1
    for end in ends:
        end_ms = int(end.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)
        assert end_ms > runs_at >= built_at + 300


# ------------------------------------------------------------ tuple keys with None fields
def test_tuple_keys_with_a_none_field_follow_flinks_serializers() -> None:
    from flinkwin.spark.elements import check_key
    from flinkwin.types import Types

    element = ("a", 1)
    check_key(("a", None), None, element)  # pickled, as PyFlink ships keys without key_type
    check_key(("a", None), Types.ROW([Types.STRING(), Types.STRING()]), element)  # Row: nullable
    with pytest.raises(ValueError, match="Assigned key must not be null"):
        check_key(None, None, element)
    # Flink's TupleSerializer throws NullFieldException for a null field of a Tuple key
    with pytest.raises(TypeError, match=r"does not match key_type.*Field 1 is null, but "
                       r"expected to hold a value\."):
        check_key(("a", None), Types.TUPLE([Types.STRING(), Types.STRING()]), element)
