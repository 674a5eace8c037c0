"""Multi-batch streaming scenarios: out-of-order and late data, timeouts waking idle keys, main
and side outputs checked batch by batch and against the core harness replay."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyspark.sql import functions as F
from spark_scenarios import assert_matches_harness, run_stream, watermark, write_batches

from flinkwin import (
    AggregateFunction,
    ContinuousEventTimeTrigger,
    EventTimeSessionWindows,
    OutputTag,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.datastream import DataStream
from flinkwin.functions.builtin import sum_of
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MIN_LONG

SCHEMA = "k string, ts long, v long"
LATE = OutputTag("late")


def key_group(spark: Any, key: str, groups: int = 16) -> int:
    row = spark.range(1).select(F.pmod(F.hash(F.lit(key)), F.lit(groups)).alias("g")).first()
    return row.g


def ev(k: str, ts: int, v: int) -> dict[str, Any]:
    return {"k": k, "ts": ts, "v": v}


# batch 2's watermark (12 s - 2 s - 1 ms = 9999, Flink's arithmetic) closes window [0, 10 s)
# (max timestamp 9999) for a, b and c; only "a" has data in that
# batch, so "b" and "c" (other key groups) are woken by Spark's event-time timeout alone.
TUMBLING_BATCHES = [
    [ev("a", 1000, 1), ev("b", 2000, 10), ev("a", 3000, 2), ev("c", 4000, 7)],
    [ev("a", 12000, 4), ev("a", 9000, 3)],
    [ev("a", 500, 100), ev("a", 21000, 5)],
    [ev("b", 25000, 1)],
]


def test_tumbling_sum_late_data_and_timeouts(spark: Any, tmp_path: Path) -> None:
    assert key_group(spark, "c") != key_group(spark, "a")
    write_batches(tmp_path / "in", TUMBLING_BATCHES)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
        lambda s: s.assignTimestampsAndWatermarks(watermark(2000))
        .keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .sideOutputLateData(LATE)
        .sum("v"),
        side_tags=[LATE],
    )
    assert run.watermarks == [MIN_LONG, 1999, 9999, 18999, 22999]  # max(ts) - 2000 - 1
    assert sorted(run.main[2], key=lambda r: r["k"]) == [
        ev("a", 1000, 6), ev("b", 2000, 10), ev("c", 4000, 7)
    ]
    assert {b: rows for b, rows in run.main.items() if b != 2} == {
        0: [], 1: [], 3: [], 4: [ev("a", 12000, 4)],   # [10 s, 20 s) closes at watermark 22999
    }
    assert run.sides["late"] == {0: [], 1: [], 2: [ev("a", 500, 100)], 3: [], 4: []}
    harness = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(10)), sum_of("v"), key_field="k",
        late_output_tag=LATE,
    )
    assert_matches_harness(
        run, TUMBLING_BATCHES, harness, ts="ts", delay_ms=2000, side_tags=[LATE]
    )


class Average(AggregateFunction):
    def create_accumulator(self) -> tuple[int, int]:
        return (0, 0)

    def add(self, value: Any, acc: tuple[int, int]) -> tuple[int, int]:
        return (acc[0] + value["v"], acc[1] + 1)

    def get_result(self, acc: tuple[int, int]) -> float:
        return acc[0] / acc[1]

    def merge(self, a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
        return (a[0] + b[0], a[1] + b[1])


class KeyedAverage(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        for avg in elements:
            yield (key, avg, context.window().start, context.window().end)


# sliding 10 s / 5 s, lateness 5 s: late elements within lateness re-fire their windows
LATENESS_BATCHES = [
    [ev("a", 1000, 2), ev("b", 3000, 4), ev("a", 7000, 6)],
    [ev("a", 16000, 1)],            # watermark 16 s: fires [-5,5) and [0,10)
    [ev("a", 4000, 10), ev("b", 2000, 8), ev("a", 300, 1)],   # re-fire / late
    [ev("b", 30000, 1)],
    [ev("a", 8000, 3)],             # beyond lateness for every window: late
]


def test_sliding_aggregate_with_allowed_lateness(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", LATENESS_BATCHES)
    assigner = SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
        lambda s: s.assign_timestamps_and_watermarks(watermark(0))
        .key_by("k")
        .window(assigner)
        .allowed_lateness(Time.seconds(5))
        .side_output_late_data(LATE)
        .aggregate(
            Average(), KeyedAverage(),
            output_schema="k string, avg double, start bigint, end bigint",
        ),
        side_tags=[LATE],
    )
    assert run.sides["late"][4] == [ev("a", 8000, 3)]
    assert any(r["start"] == 0 and r["k"] == "a" for r in run.main[2])  # a re-fired window
    harness = WindowOperatorHarness(
        assigner, (Average(), KeyedAverage()), key_field="k",
        allowed_lateness=Time.seconds(5), late_output_tag=LATE,
    )
    assert_matches_harness(
        run, LATENESS_BATCHES, harness, ts="ts", delay_ms=0, side_tags=[LATE],
        names=["k", "avg", "start", "end"],
    )


class SessionSummary(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        values = [e["v"] for e in elements]
        yield {"k": key, "n": len(values), "total": sum(values),
               "start": context.window().start, "end": context.window().end}


SESSION_BATCHES = [
    [ev("a", 1000, 1), ev("b", 1500, 1), ev("a", 4000, 2)],
    [ev("a", 2500, 3), ev("a", 12000, 4), ev("b", 9000, 1)],   # a: 1s-4s session; b: 2 sessions
    [ev("a", 30000, 5)],
    [ev("a", 31000, 6), ev("b", 3000, 9)],                     # b@3 s is late
]


def test_session_windows_process_function(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", SESSION_BATCHES)
    assigner = EventTimeSessionWindows.withGap(Time.seconds(3))
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
        lambda s: s.assignTimestampsAndWatermarks(watermark(1000))
        .keyBy("k")
        .window(assigner)
        .sideOutputLateData(LATE)
        .process(SessionSummary(), output_schema="k string, n int, total bigint, start bigint, "
                 "end bigint", with_window=True),
        side_tags=[LATE],
    )
    sessions = sorted(
        (r["k"], r["start"], r["end"], r["n"], r["total"])
        for rows in run.main.values() for r in rows
    )
    assert ("a", 1000, 7000, 3, 6) in sessions
    assert ("b", 1500, 4500, 1, 1) in sessions
    for rows in run.main.values():
        for r in rows:  # with_window adds the same window as timestamps
            assert r["window_start"].timestamp() * 1000 == r["start"]
            assert r["window_end"].timestamp() * 1000 == r["end"]
            del r["window_start"], r["window_end"]
    harness = WindowOperatorHarness(
        assigner, SessionSummary(), key_field="k", late_output_tag=LATE
    )
    assert_matches_harness(
        run, SESSION_BATCHES, harness, ts="ts", delay_ms=1000, side_tags=[LATE]
    )


# early firings every 4 s of event time, timers registered while firing
EARLY_BATCHES = [
    [ev("a", 1000, 1), ev("b", 2000, 2)],
    [ev("a", 5000, 3)],
    [ev("a", 9500, 4), ev("b", 13000, 5)],
    [ev("b", 26000, 6)],
]


def test_early_firing_trigger_reduce(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", EARLY_BATCHES)
    assigner = TumblingEventTimeWindows.of(Time.seconds(10))

    def add(x: Any, y: Any) -> Any:
        return {"k": x["k"], "ts": max(x["ts"], y["ts"]), "v": x["v"] + y["v"]}

    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
        lambda s: s.assignTimestampsAndWatermarks(watermark(0))
        .keyBy("k")
        .window(assigner)
        .trigger(ContinuousEventTimeTrigger.of(Time.seconds(4)))
        .reduce(add),
    )
    fired_a = [r["v"] for rows in run.main.values() for r in rows if r["k"] == "a"]
    assert fired_a[-1] == 8 and len(fired_a) >= 3  # early firings, then the final one
    harness = WindowOperatorHarness(
        assigner, add, key_field="k",
        trigger=ContinuousEventTimeTrigger.of(Time.seconds(4)),
    )
    assert_matches_harness(run, EARLY_BATCHES, harness, ts="ts", delay_ms=0)


# A timestamp column (not epoch millis) in a non-UTC session zone, across the spring-forward
# change in Los Angeles, with microseconds: the column travels as epoch microseconds and is
# rebuilt in the workers, so the windows follow the instants and outputs keep every microsecond.
TS_BATCHES = [
    [{"k": "a", "ts": "2024-03-10T01:59:59.000001-08:00", "v": 1},
     {"k": "a", "ts": "2024-03-10T03:00:00.000002-07:00", "v": 2},
     {"k": "a", "ts": "2024-03-10T01:10:00.000003-08:00", "v": 4}],
    [{"k": "a", "ts": "2024-03-10T05:00:00.5-07:00", "v": 8}],
    [{"k": "a", "ts": "2024-03-10T01:30:00.000004-08:00", "v": 16}],   # late
]


def _local(iso: str) -> Any:
    """How PySpark returns a timestamp to this process: a naive local datetime."""
    import datetime

    instant = datetime.datetime.fromisoformat(iso)
    return datetime.datetime.fromtimestamp(instant.timestamp()).replace(
        microsecond=instant.microsecond
    )


def test_timestamp_column_in_a_non_utc_session_zone(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", TS_BATCHES)
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/Los_Angeles")
    try:
        run = run_stream(
            spark, tmp_path / "in", tmp_path / "ck", "k string, ts timestamp, v long",
            lambda s: s.assignTimestampsAndWatermarks(watermark(1000))
            .keyBy("k")
            .window(TumblingEventTimeWindows.of(Time.minutes(30)))
            .sideOutputLateData(LATE)
            .sum("v"),
            side_tags=[LATE],
        )
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)
    # batch 1's watermark, 03:00:00.000002 PDT (10:00 UTC) - 1 s, closes [01:00, 01:30) PST
    # only; [01:30, 02:00) PST and [03:00, 03:30) PDT close at batch 2's.
    assert run.main[1] == [{"k": "a", "ts": _local(TS_BATCHES[0][2]["ts"]), "v": 4}]
    assert sorted(run.main[2], key=lambda r: r["ts"]) == [
        {"k": "a", "ts": _local(TS_BATCHES[0][0]["ts"]), "v": 1},
        {"k": "a", "ts": _local(TS_BATCHES[0][1]["ts"]), "v": 2},
    ]
    assert run.sides["late"][2] == [{"k": "a", "ts": _local(TS_BATCHES[2][0]["ts"]), "v": 16}]


# Built-in sum with allowed lateness: the key group's columnar panes hand over to the object
# operator in batch 2, where late elements within the lateness fire their window on arrival.
LATE_SUM_BATCHES = [
    [ev("a", 1000, 1), ev("a", 4000, 2), ev("b", 3000, 5)],
    [ev("a", 15000, 4)],
    [ev("a", 2000, 10), ev("a", 3000, 20), ev("b", 16000, 1)],   # watermark 15 s: [0, 10 s)
    # fires (a: 3, b: 5), then a's late elements re-fire it twice
    [ev("a", 40000, 1)],
    [ev("a", 5000, 7)],                                  # beyond the lateness: late
]


def test_builtin_sum_with_allowed_lateness_fires_on_arrival(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", LATE_SUM_BATCHES)
    assigner = TumblingEventTimeWindows.of(Time.seconds(10))
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
        lambda s: s.assignTimestampsAndWatermarks(watermark(0))
        .keyBy("k")
        .window(assigner)
        .allowedLateness(Time.seconds(8))
        .sideOutputLateData(LATE)
        .sum("v"),
        side_tags=[LATE],
    )
    a_outputs = [r for r in run.main[2] if r["k"] == "a"]
    assert a_outputs == [ev("a", 1000, 3), ev("a", 1000, 13), ev("a", 1000, 33)]
    assert run.sides["late"][4] == [ev("a", 5000, 7)]
    harness = WindowOperatorHarness(
        assigner, sum_of("v"), key_field="k", allowed_lateness=Time.seconds(8),
        late_output_tag=LATE,
    )
    assert_matches_harness(
        run, LATE_SUM_BATCHES, harness, ts="ts", delay_ms=0, side_tags=[LATE]
    )


def test_sliding_builtin_sum_runs_on_panes_with_lateness(spark: Any, tmp_path: Path) -> None:
    """Sliding 10 s / 5 s sum: the key groups keep 5 s panes; late elements within the
    lateness re-fire their window on arrival, later ones go to the side output."""
    write_batches(tmp_path / "in", LATE_SUM_BATCHES)
    assigner = SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))

    def pipeline(s: Any) -> Any:
        return (
            s.assignTimestampsAndWatermarks(watermark(0))
            .keyBy("k")
            .window(assigner)
            .allowedLateness(Time.seconds(8))
            .sideOutputLateData(LATE)
            .sum("v")
        )

    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA, pipeline, side_tags=[LATE]
    )
    assert run.sides["late"][4] == [ev("a", 5000, 7)]
    a_outputs = [r for r in run.main[2] if r["k"] == "a"]
    assert a_outputs[-2:] == [ev("a", 1000, 13), ev("a", 1000, 33)]  # [0, 10 s) re-fired
    harness = WindowOperatorHarness(
        assigner, sum_of("v"), key_field="k", allowed_lateness=Time.seconds(8),
        late_output_tag=LATE,
    )
    assert_matches_harness(
        run, LATE_SUM_BATCHES, harness, ts="ts", delay_ms=0, side_tags=[LATE]
    )


def test_continuous_trigger_builtin_sum_with_lateness_matches_flink(
    spark: Any, tmp_path: Path
) -> None:
    """Built-in sum under ContinuousEventTimeTrigger(4 s) with allowed lateness: the key groups
    keep columnar panes with their fire times (early firings every 4 s, in timer order, across
    micro-batches), hand over to the object operator when late elements within the lateness
    fire on arrival and take the state back after it; every batch's outputs are Flink's."""
    write_batches(tmp_path / "in", LATE_SUM_BATCHES)
    assigner = TumblingEventTimeWindows.of(Time.seconds(10))
    trigger = ContinuousEventTimeTrigger.of(Time.seconds(4))

    def pipeline(s: Any) -> Any:
        return (
            s.assignTimestampsAndWatermarks(watermark(0))
            .keyBy("k")
            .window(assigner)
            .trigger(trigger)
            .allowedLateness(Time.seconds(8))
            .sideOutputLateData(LATE)
            .sum("v")
        )

    (tmp_path / "probe").mkdir()
    probe = pipeline(DataStream(spark.readStream.schema(SCHEMA).json(str(tmp_path / "probe"))))
    assert "fire times" in probe._stage([]).summary["window state"]
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA, pipeline, side_tags=[LATE]
    )
    # batch 2 (watermark 15 s) fires [0, 10 s) early at 4 s and 8 s, then at its end, then
    # twice more as a's late elements arrive
    a_outputs = [r["v"] for r in run.main[2] if r["k"] == "a"]
    assert a_outputs == [3, 3, 3, 13, 33]
    assert run.sides["late"][4] == [ev("a", 5000, 7)]
    harness = WindowOperatorHarness(
        assigner, sum_of("v"), key_field="k", trigger=trigger,
        allowed_lateness=Time.seconds(8), late_output_tag=LATE,
    )
    assert_matches_harness(
        run, LATE_SUM_BATCHES, harness, ts="ts", delay_ms=0, side_tags=[LATE]
    )


class ElementList(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield {"k": key, "start": context.window().start,
               "vs": ",".join(str(e["v"]) for e in elements)}


def test_process_function_on_columnar_element_lists_with_lateness(
    spark: Any, tmp_path: Path
) -> None:
    """Tumbling ProcessWindowFunction: the key groups keep columnar element lists; late
    elements within the lateness re-fire the window with all its elements, in arrival order."""
    write_batches(tmp_path / "in", LATE_SUM_BATCHES)
    assigner = TumblingEventTimeWindows.of(Time.seconds(10))

    def pipeline(s: Any) -> Any:
        return (
            s.assignTimestampsAndWatermarks(watermark(0))
            .keyBy("k")
            .window(assigner)
            .allowedLateness(Time.seconds(8))
            .sideOutputLateData(LATE)
            .process(ElementList(), output_schema="k string, start bigint, vs string")
        )

    source = DataStream(spark.readStream.schema(SCHEMA).json(str(tmp_path / "in")))
    summary = pipeline(source)._stage([LATE]).summary["window state"]
    assert "columnar element lists" in summary
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA, pipeline, side_tags=[LATE]
    )
    a_outputs = [r["vs"] for r in run.main[2] if r["k"] == "a"]
    assert a_outputs == ["1,2", "1,2,10", "1,2,10,20"]
    harness = WindowOperatorHarness(
        assigner, ElementList(), key_field="k", allowed_lateness=Time.seconds(8),
        late_output_tag=LATE,
    )
    assert_matches_harness(
        run, LATE_SUM_BATCHES, harness, ts="ts", delay_ms=0, side_tags=[LATE]
    )


# Session sum (gap 3 s, lateness 2 s, watermark = max ts - 1 ms). Batch 1's watermark 4999 fires
# a's [1, 4 s) (1) and b's [2, 5 s) (10); then a's 3.5 s bridges a's fired session and its
# session [5, 8 s) (the key group hands over to the object operator for that batch, and
# back); in batch 2 (watermark 7999) b's 5 s is within the lateness: its session fires on
# arrival; batch 4's watermark fires a's merged session (1 + 2 + 4 + 1 + 8) and c's, and a's
# 1 s is late for every session: side output.
SESSION_SUM_BATCHES = [
    [ev("a", 1000, 1), ev("a", 5000, 2), ev("b", 2000, 10)],
    [ev("a", 3500, 4), ev("a", 8000, 1)],
    [ev("a", 4500, 8), ev("b", 5000, 20), ev("c", 9000, 3)],
    [ev("a", 30000, 1)],
    [ev("a", 1000, 7)],
]


def test_session_builtin_sum_runs_on_columnar_sessions(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", SESSION_SUM_BATCHES)
    assigner = EventTimeSessionWindows.withGap(Time.seconds(3))

    def pipeline(s: Any) -> Any:
        return (
            s.assignTimestampsAndWatermarks(watermark(0))
            .keyBy("k")
            .window(assigner)
            .allowedLateness(Time.seconds(2))
            .sideOutputLateData(LATE)
            .sum("v")
        )

    source = spark.readStream.schema(SCHEMA).json(str(tmp_path / "in"))
    assert "columnar sessions" in pipeline(DataStream(source))._stage([]).summary["window state"]
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA, pipeline, side_tags=[LATE]
    )
    # rows of different key groups arrive in no fixed order within a batch
    def batch(b: int) -> list[dict[str, Any]]:
        return sorted(run.main[b], key=lambda r: (r["k"], r["ts"]))

    assert batch(1) == [ev("a", 1000, 1), ev("b", 2000, 10)]
    assert batch(2) == [ev("b", 5000, 20)]
    assert batch(4) == [ev("a", 1000, 16), ev("c", 9000, 3)]
    assert run.sides["late"][4] == [ev("a", 1000, 7)]
    harness = WindowOperatorHarness(
        assigner, sum_of("v"), key_field="k", allowed_lateness=Time.seconds(2),
        late_output_tag=LATE,
    )
    assert_matches_harness(
        run, SESSION_SUM_BATCHES, harness, ts="ts", delay_ms=0, side_tags=[LATE]
    )
