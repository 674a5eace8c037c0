"""Static DataFrames (Flink batch mode), schemas, build-time errors, explain and the builder
names; all on small static inputs, so fast."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from pyspark.sql import Row
from pyspark.sql import functions as F
from spark_scenarios import canon, watermark
from test_spark_streaming import (
    LATE,
    SCHEMA,
    SESSION_BATCHES,
    TUMBLING_BATCHES,
    Average,
    KeyedAverage,
    SessionSummary,
)

from flinkwin import (
    AllWindowFunction,
    CountTrigger,
    EventTimeSessionWindows,
    EventTimeTrigger,
    OutputTag,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    Types,
)
from flinkwin.datastream import DataStream
from flinkwin.errors import PickledElementsError
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.spark import MemorySink, PipelineError
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MAX_LONG

ALL_EVENTS = [r for batch in TUMBLING_BATCHES for r in batch]


@pytest.fixture(scope="module")
def events(spark: Any) -> DataStream:
    """BATCH mode: the harness's batch results process each key's elements in event-time
    order (STREAMING mode is tested in test_runtime_modes.py)."""
    return DataStream(
        spark.createDataFrame(ALL_EVENTS, SCHEMA), runtime_mode=RuntimeExecutionMode.BATCH
    )


def add_v(a: Any, b: Any) -> dict[str, Any]:
    return {"k": a["k"], "ts": a["ts"], "v": a["v"] + b["v"]}


def batch_results(harness: WindowOperatorHarness, rows: list[dict[str, Any]]) -> list[Any]:
    """Flink batch mode: every element in event-time order, then the end-of-input watermark."""
    for r in sorted(rows, key=lambda r: r["ts"]):
        harness.process_element(r, r["ts"])
    harness.process_watermark(MAX_LONG)
    return harness.output()


def test_static_sum_is_final_result(events: DataStream) -> None:
    result = (
        events.assignTimestampsAndWatermarks(watermark(2000))
        .keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .sideOutputLateData(LATE)
        .sum("v")
    )
    assert not result.toDF().isStreaming
    expected = batch_results(
        WindowOperatorHarness(
            TumblingEventTimeWindows.of(Time.seconds(10)), add_v, key_field="k",
        ),
        ALL_EVENTS,
    )
    got = result.toDF().collect()
    assert canon(got) == canon(expected)
    # a@500 is not late in batch mode: nothing is, the watermark only moves at the end
    assert Row(k="a", ts=500, v=106) in got
    assert result.getSideOutput(LATE).toDF().collect() == []


def test_the_main_and_side_outputs_stages_read_one_input_stage_built_once(
    events: DataStream, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stages of a result's main output and of its side outputs differ only in their
    outputs: the input's part of the plan (event time, key groups, wire columns...) is built
    once per result, and each output's stage reads that same DataFrame."""
    import flinkwin.datastream.window_result_stream as results

    built: list[Any] = []
    original = results.input_stage

    def counting(pipeline: Any) -> Any:
        built.append(original(pipeline))
        return built[-1]

    monkeypatch.setattr(results, "input_stage", counting)
    result = (
        events.assignTimestampsAndWatermarks(watermark(2000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).sideOutputLateData(LATE)
        .sum("v")
    )
    late = result.getSideOutput(LATE)
    both = result._stage([LATE])
    assert len(built) == 1
    assert result._stage([]).combined is not both.combined  # its own output schema
    assert late.toDF().collect() == []
    assert canon(result.toDF().collect()) == canon(both.main_timed().drop("_fw_rts").collect())


def test_streams_can_be_used_as_dataframes(events: DataStream) -> None:
    """getSideOutput's stream (and any DataStream) answers DataFrame methods itself."""
    result = (
        events.assignTimestampsAndWatermarks(watermark(2000))
        .keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .sideOutputLateData(LATE)
        .sum("v")
    )
    late = result.getSideOutput(LATE)
    assert late.columns == result.toDF().columns == ["k", "ts", "v"]
    assert late.collect() == []
    assert sorted(result.collect()) == sorted(result.toDF().collect())
    assert late.isStreaming is False


def test_static_sessions_and_sliding(spark: Any) -> None:
    rows = [r for batch in SESSION_BATCHES for r in batch]
    stream = DataStream(
        spark.createDataFrame(rows, SCHEMA), runtime_mode=RuntimeExecutionMode.BATCH
    ).assignTimestampsAndWatermarks(watermark(1000))
    sessions = (
        stream.keyBy("k").window(EventTimeSessionWindows.withGap(Time.seconds(3)))
        .process(SessionSummary(), output_schema="k string, n int, total bigint, start bigint, "
                 "end bigint")
    )
    expected = batch_results(
        WindowOperatorHarness(
            EventTimeSessionWindows.withGap(Time.seconds(3)), SessionSummary(), key_field="k"
        ),
        rows,
    )
    assert canon(sessions.toDF().collect()) == canon(expected)

    sliding = SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))
    averages = stream.keyBy("k").window(sliding).aggregate(
        Average(), KeyedAverage(), output_schema="k string, avg double, start bigint, end bigint"
    )
    expected = batch_results(
        WindowOperatorHarness(sliding, (Average(), KeyedAverage()), key_field="k"), rows
    )
    names = ["k", "avg", "start", "end"]
    assert canon(averages.toDF().collect()) == canon(expected, names)


def test_camel_case_and_snake_case_builders_agree(events: DataStream) -> None:
    camel = (
        events.assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .allowedLateness(Time.seconds(1)).sideOutputLateData(LATE).maxBy("v")
    )
    snake = (
        events.assign_timestamps_and_watermarks(watermark(0)).key_by("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .allowed_lateness(Time.seconds(1)).side_output_late_data(LATE).max_by("v")
    )
    assert sorted(camel.toDF().collect()) == sorted(snake.to_df().collect())
    assert sorted(camel.toDF().collect()) == sorted(
        [Row(k="a", ts=500, v=100), Row(k="b", ts=2000, v=10), Row(k="c", ts=4000, v=7),
         Row(k="a", ts=12000, v=4), Row(k="a", ts=21000, v=5), Row(k="b", ts=25000, v=1)]
    )
    assert camel.getSideOutput(LATE).toDF().schema == snake.get_side_output(LATE).to_df().schema


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("sum", [("a", 6), ("b", 10)]),
        ("min", [("a", 1), ("b", 10)]),
        ("max", [("a", 3), ("b", 10)]),
        ("min_by", [("a", 1), ("b", 10)]),
        ("maxBy", [("a", 3), ("b", 10)]),
    ],
)
def test_builtin_aggregations(spark: Any, method: str, expected: list[tuple[str, int]]) -> None:
    rows = [{"k": "a", "ts": 1, "v": 1}, {"k": "a", "ts": 2, "v": 3}, {"k": "a", "ts": 3, "v": 2},
            {"k": "b", "ts": 1, "v": 10}]
    windowed = (
        DataStream(spark.createDataFrame(rows, SCHEMA))
        .assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
    )
    got = sorted((r.k, r.v) for r in getattr(windowed, method)("v").toDF().collect())
    assert got == expected


def test_count_windows_and_window_all(spark: Any) -> None:
    rows = [{"k": k, "ts": i, "v": i} for i, k in enumerate("abababa")]
    stream = DataStream(spark.createDataFrame(rows, SCHEMA))
    tumbling = stream.keyBy("k").countWindow(2).sum("v", with_window=True).toDF().collect()
    assert sorted((r.k, r.v) for r in tumbling) == [("a", 2), ("a", 10), ("b", 4)]
    assert all(r.window_start is None and r.window_end is None for r in tumbling)
    sliding = stream.countWindowAll(3, 2).reduce(add_v)
    assert sorted(r.v for r in sliding.toDF().collect()) == [1, 6, 12]  # 0+1, 1+2+3, 3+4+5

    class Span(AllWindowFunction):
        def apply(self, window: Any, inputs: Any) -> Any:
            values = [e["v"] for e in inputs]
            yield (window.start, len(values), sum(values))

    spans = (
        stream.assignTimestampsAndWatermarks(watermark(0))
        .windowAll(TumblingEventTimeWindows.of(Time.milliseconds(4)))
        .apply(Span(), output_schema="start bigint, n int, total bigint")
    )
    assert sorted(spans.toDF().collect()) == [Row(start=0, n=4, total=6),
                                              Row(start=4, n=3, total=15)]


def test_timestamp_column_and_pyflink_output_type(spark: Any) -> None:
    base = datetime.datetime(2024, 5, 1, 12, 0, 0)
    rows = [("u1", base + datetime.timedelta(seconds=s), s) for s in (1, 2, 61, 125)]
    df = spark.createDataFrame(rows, "user string, at timestamp, n long")

    class Count(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            yield (key, len(list(elements)))

    result = (
        DataStream(df)
        .assignTimestampsAndWatermarks(watermark(0, ts="at"))
        .keyBy("user")
        .window(TumblingEventTimeWindows.of(Time.minutes(1)))
        .process(Count(), Types.ROW_NAMED(["user", "n"], [Types.STRING(), Types.LONG()]),
                 with_window=True)
    )
    got = sorted(result.toDF().collect(), key=lambda r: r.window_start)
    assert [(r.user, r.n, r.window_start) for r in got] == [
        ("u1", 2, base), ("u1", 1, base + datetime.timedelta(minutes=1)),
        ("u1", 1, base + datetime.timedelta(minutes=2)),
    ]
    reduced = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0, ts="at")).keyBy("user")
        .window(TumblingEventTimeWindows.of(Time.minutes(1))).sum("n")
    )
    first = sorted(reduced.toDF().collect())[0]
    assert first == Row(user="u1", at=base + datetime.timedelta(seconds=1), n=3)
    by_expression = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0, ts=F.unix_millis("at")))
        .keyBy("user").window(TumblingEventTimeWindows.of(Time.minutes(1))).sum("n")
    )
    assert sorted(by_expression.toDF().collect()) == sorted(reduced.toDF().collect())


def test_nulls_and_big_longs_round_trip(spark: Any) -> None:
    big = 2**62 + 1
    rows = [("a", 1, big, None), ("a", 2, 1, None), ("b", 1, 5, 7)]
    df = spark.createDataFrame(rows, "k string, ts long, v long, extra long")
    result = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(1))).sum("v")
    )
    assert sorted(result.toDF().collect()) == [
        Row(k="a", ts=1, v=big + 1, extra=None), Row(k="b", ts=1, v=5, extra=7)
    ]


# ------------------------------------------------------------------------ errors
class Pair(ProcessWindowFunction):
    def __init__(self, output: Any) -> None:
        self.output = output

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield self.output


def _windowed(events: DataStream) -> Any:
    return (
        events.assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
    )


def test_output_schema_is_checked(events: DataStream) -> None:
    with pytest.raises(ValueError, match="cannot parse DDL"):
        _windowed(events).process(Pair(("x", 1)), output_schema="k strin g,")
    wrong_arity = _windowed(events).process(Pair(("x", 1, 2)), output_schema="k string, n bigint")
    with pytest.raises(Exception, match=r"has 2 field\(s\) but the output \('x', 1, 2\)"):
        wrong_arity.toDF().collect()
    wrong_type = _windowed(events).process(Pair(("x", "many")), output_schema="k string, n bigint")
    with pytest.raises(Exception, match="field 'n' is declared bigint but got 'many'"):
        wrong_type.toDF().collect()
    missing = _windowed(events).process(Pair({"k": "x"}), output_schema="k string, n bigint")
    with pytest.raises(Exception, match=r"missing field\(s\) \['n'\]"):
        missing.toDF().collect()
    truncated = _windowed(events).process(Pair(("x", 1.5)), output_schema="k string, n bigint")
    with pytest.raises(Exception, match="float 1.5 would be truncated"):
        truncated.toDF().collect()


def test_build_time_errors(events: DataStream) -> None:
    with pytest.raises(PipelineError, match="works on event time"):
        events.keyBy("k").window(TumblingEventTimeWindows.of(Time.seconds(1))).sum("v")
    with pytest.raises(ValueError, match="not in the input"):
        events.keyBy("nope")
    with pytest.raises(TypeError, match="or one key selector"):
        events.keyBy(3)
    with pytest.raises(TypeError, match="key_type is for a key selector"):
        events.keyBy("k", key_type=Types.STRING())
    with pytest.raises(ValueError, match="no such column"):
        _windowed(events).sum("nope")
    with pytest.raises(TypeError, match=r"process\(\) takes a ProcessWindowFunction, got All"):

        class All(ProcessAllWindowFunction):
            def process(self, context: Any, elements: Any) -> Any:
                return []

        _windowed(events).process(All(), output_schema="n int")
    with pytest.raises(TypeError, match="withTimestampAssigner takes a column name"):
        watermark(0).withTimestampAssigner(42)
    result = _windowed(events).sum("v")
    # a tag without a type carries pickled values (PyFlink's PICKLED_BYTE_ARRAY default)
    notes = result.getSideOutput(OutputTag("notes"))
    assert notes.get_type() == Types.PICKLED_BYTE_ARRAY()
    with pytest.raises(PickledElementsError, match="the side output OutputTag"):
        notes.toDF()  # Spark would see pickle bytes: declare the tag's type
    with pytest.raises(PipelineError, match=r"its type must be PyFlink type information"):
        result.getSideOutput(OutputTag("bad", 42))
    typed = OutputTag("alerts", "k string, n bigint")
    assert result.getSideOutput(typed).toDF().columns == ["k", "n"]


def test_streaming_only_errors(spark: Any, tmp_path: Any) -> None:
    (tmp_path / "in").mkdir()
    stream = DataStream(spark.readStream.schema(SCHEMA).json(str(tmp_path / "in")))
    with pytest.raises(PipelineError, match="both event-time and processing-time timers"):
        (stream.keyBy("k").window(TumblingProcessingTimeWindows.of(Time.seconds(1)))
         .trigger(EventTimeTrigger.create()).sum("v"))
    processing = stream.keyBy("k").window(TumblingProcessingTimeWindows.of(Time.seconds(1)))
    with pytest.raises(ValueError, match="never finishes under availableNow"):
        processing.sum("v").start(main=MemorySink("never"), trigger={"availableNow": True})
    with pytest.raises(ValueError, match="only 'append'"):
        processing.sum("v").start(main="console", output_mode="update")
    # count windows need no timers at all
    counted = stream.keyBy("k").window(TumblingProcessingTimeWindows.of(Time.seconds(1)))
    assert counted.trigger(CountTrigger.of(2)).sum("v").toDF().isStreaming


def test_explain_shows_the_stateful_stage(spark: Any, tmp_path: Any, capsys: Any) -> None:
    (tmp_path / "in").mkdir()
    stream = DataStream(spark.readStream.schema(SCHEMA).json(str(tmp_path / "in")), key_groups=8)
    result = (
        stream.assignTimestampsAndWatermarks(watermark(5000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.minutes(1))).sideOutputLateData(LATE)
        .reduce(lambda a, b: a)
    )
    result.explain()
    printed = capsys.readouterr().out
    assert "FlatMapGroupsInPandasWithState" in printed
    assert "EventTimeTimeout" in printed
    for line in ("key groups       : 8", "window state     : reducing",
                 "trigger          : EventTimeTrigger", "timers           : event time"):
        assert line in printed
    assert result.setMaxParallelism(4)._stage([]).summary["key groups"] == "4"
    assert "columnar" not in result._stage([]).summary["window state"]  # a user reduce


def test_builtin_aggregations_use_columnar_panes(spark: Any, tmp_path: Any) -> None:
    (tmp_path / "in").mkdir()
    stream = DataStream(spark.readStream.schema(SCHEMA).json(str(tmp_path / "in")))
    windowed = (
        stream.assignTimestampsAndWatermarks(watermark(5000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.minutes(1)))
    )
    assert "columnar panes" in windowed.sum("v")._stage([]).summary["window state"]
    assert "columnar panes" in windowed.max("v")._stage([]).summary["window state"]
    assert "columnar" not in windowed.maxBy("v")._stage([]).summary["window state"]


def test_event_time_travels_once(spark: Any, tmp_path: Any) -> None:
    (tmp_path / "in").mkdir()
    source = spark.readStream.schema("k string, at timestamp, v long").json(str(tmp_path / "in"))

    def summary() -> dict[str, str]:
        return (
            DataStream(source).assignTimestampsAndWatermarks(watermark(0, ts="at")).keyBy("k")
            .window(TumblingEventTimeWindows.of(Time.minutes(1))).sum("v")._stage([]).summary
        )

    expected = "shipped as _fw_ts (epoch us); 'at' rebuilt in the workers"
    assert summary()["event time"] == expected
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "Europe/Paris")
    try:
        assert summary()["event time"] == expected
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


def test_process_function_side_output_and_static_start(
    spark: Any, events: DataStream, capsys: Any
) -> None:
    alerts = OutputTag("alerts", "k string, total bigint")

    class Alerting(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            total = sum(e["v"] for e in elements)
            if total > 8:
                context.output(alerts, (key, total))
            yield {"k": key, "total": total}

    result = _windowed(events).process(Alerting(), output_schema="k string, total bigint")
    main = MemorySink("fw_static_main")
    assert result.start(main=main, side_outputs={alerts: "console"}) is None
    assert sorted(main.rows()) == sorted(
        [Row(k="a", total=106), Row(k="b", total=10), Row(k="c", total=7),
         Row(k="a", total=4), Row(k="a", total=5), Row(k="b", total=1)]
    )
    assert spark.table("fw_static_main").count() == 6
    printed = capsys.readouterr().out
    assert "Batch: 0 (alerts)" in printed and "|a  |106  |" in printed
    assert sorted(result.getSideOutput(alerts).toDF().collect()) == [
        Row(k="a", total=106), Row(k="b", total=10)
    ]


def test_a_null_event_timestamp_fails_naming_the_row(spark: Any) -> None:
    base = datetime.datetime(2024, 5, 1, 12, 0, 0)
    rows = [("u1", base, 1), ("u2", None, 2)]
    df = spark.createDataFrame(rows, "user string, at timestamp, n long")
    result = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0, ts="at")).keyBy("user")
        .window(TumblingEventTimeWindows.of(Time.minutes(1))).sum("n")
    )
    with pytest.raises(Exception, match=r"timestamp is null for row \{'user': 'u2', 'at': None"):
        result.toDF().collect()


def test_sliding_builtin_aggregations_use_panes(spark: Any, tmp_path: Any) -> None:
    (tmp_path / "in").mkdir()
    stream = DataStream(spark.readStream.schema(SCHEMA).json(str(tmp_path / "in")))
    windowed = (
        stream.assignTimestampsAndWatermarks(watermark(5000)).keyBy("k")
        .window(SlidingEventTimeWindows.of(Time.minutes(60), Time.minutes(1)))
    )
    assert "panes of gcd(size, slide)" in windowed.sum("v")._stage([]).summary["window state"]
    assert "panes of gcd(size, slide)" in windowed.min("v")._stage([]).summary["window state"]
    assert "panes" not in windowed.maxBy("v")._stage([]).summary["window state"]


def test_no_watermarks_fires_event_time_windows_at_the_end_of_static_input(spark: Any) -> None:
    """``WatermarkStrategy.no_watermarks()`` (PyFlink's): the watermark stays at Long.MIN_VALUE
    until the end of bounded input, whose MAX_LONG watermark Flink forwards whatever the
    strategy: every window fires then, nothing is late (arrival order, STREAMING mode)."""
    from flinkwin import WatermarkStrategy

    stream = DataStream(spark.createDataFrame(ALL_EVENTS, SCHEMA),
                        runtime_mode=RuntimeExecutionMode.STREAMING)
    strategy = WatermarkStrategy.no_watermarks().with_timestamp_assigner("ts")
    result = (
        stream.assign_timestamps_and_watermarks(strategy)
        .key_by("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .side_output_late_data(LATE)
        .sum("v")
    )
    harness = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(10)), add_v, key_field="k"
    )
    for r in ALL_EVENTS:  # arrival order, no watermark until the end
        harness.process_element(r, r["ts"])
    harness.process_watermark(MAX_LONG)
    assert canon(result.toDF().collect()) == canon(harness.output())
    assert result.get_side_output(LATE).toDF().collect() == []
    summary = result._stage([LATE]).summary
    assert summary["watermark"] == "none until the end of input (noWatermarks)"
