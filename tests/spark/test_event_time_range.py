"""Event time over the whole range a stage supports, on streaming and static input alike:
timestamps before 1970 (negative watermarks), rows any number of years late, events after
pandas' year 2262, and a clear error beyond ``±MAX_EVENT_TIME_MS``
(``docs/reliability.md``, "Bad input"; ``docs/spark-semantics.md``)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException
from pyspark.sql import functions as F
from spark_scenarios import assert_matches_harness, run_stream, watermark, write_batches
from test_spark_streaming import SCHEMA, ev

from flinkwin import (
    ContinuousEventTimeTrigger,
    EventTimeSessionWindows,
    OutputTag,
    SlidingEventTimeWindows,
    Time,
    TimestampAssigner,
    TumblingEventTimeWindows,
)
from flinkwin.datastream import DataStream
from flinkwin.functions.builtin import sum_of
from flinkwin.spark import MemorySink
from flinkwin.spark.watermarks import MAX_EVENT_TIME_MS, progress_watermark
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MIN_LONG

LATE = OutputTag("late")
YEAR_MS = 365 * 86_400_000

#: A keyed stream entirely before 1970: every watermark Flink emits is negative.
BEFORE_1970 = [
    [ev("a", -30_500, 1), ev("b", -29_000, 2)],
    [ev("a", -21_000, 3), ev("a", -25_000, 4)],
    [ev("b", -12_000, 5), ev("a", -28_000, 6)],
    [ev("a", -2_500, 7), ev("a", -35_000, 8)],  # [-40 s, -30 s) closed at -30001: late
]


def _flatten(batches: dict[int, list[dict[str, Any]]]) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for rows in batches.values() for r in rows)


# ------------------------------------------------------------ negative watermarks (1 of 3)
def test_a_stream_before_1970_fires_its_windows_as_flink_does(
    spark: Any, tmp_path: Path
) -> None:
    write_batches(tmp_path / "in", BEFORE_1970)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
        lambda s: s.assignTimestampsAndWatermarks(watermark(1000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .sideOutputLateData(LATE).sum("v"),
        side_tags=[LATE], times_before_1970=True,
    )
    # Flink's watermarks, all negative, then the trailing no-data batch's
    assert run.watermarks == [MIN_LONG, -30_001, -22_001, -13_001, -3_501]
    assert _flatten(run.main) == [
        # sum keeps the window's first element in arrival order (-21000 came first)
        ("a", -30_500, 1), ("a", -21_000, 13), ("b", -29_000, 2), ("b", -12_000, 5),
    ]
    assert _flatten(run.sides["late"]) == [("a", -35_000, 8)]
    harness = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(10)), sum_of("v"), key_field="k",
        late_output_tag=LATE,
    )
    assert_matches_harness(run, BEFORE_1970, harness, ts="ts", delay_ms=1000, side_tags=[LATE])


def test_static_input_before_1970_fires_every_window(spark: Any) -> None:
    rows = [tuple(r.values()) for batch in BEFORE_1970 for r in batch]
    result = (
        DataStream(spark.createDataFrame(rows, SCHEMA))
        .assignTimestampsAndWatermarks(watermark(1000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v")
    )
    # nothing is late on a bounded input, and every window fires at its end
    assert sorted(tuple(r) for r in result.toDF().collect()) == [
        ("a", -30_500, 9), ("a", -21_000, 13), ("a", -2_500, 7),
        ("b", -29_000, 2), ("b", -12_000, 5),
    ]


SESSIONS_BEFORE_1970 = [
    [ev("a", -50_000, 1), ev("a", -48_000, 2)],
    [ev("a", -20_000, 3)],  # the watermark -21001 closes the session [-50000, -43000)
    [ev("a", -17_000, 4)],
]


@pytest.mark.parametrize(
    "assigner, trigger",
    [
        (EventTimeSessionWindows.withGap(Time.seconds(5)), None),
        (SlidingEventTimeWindows.of(Time.seconds(20), Time.seconds(7)), None),
        (TumblingEventTimeWindows.of(Time.minutes(1)), ContinuousEventTimeTrigger.of(
            Time.seconds(15))),
    ],
    ids=["sessions", "sliding", "continuous-trigger"],
)
def test_sessions_sliding_windows_and_continuous_triggers_before_1970_match_flink(
    spark: Any, tmp_path: Path, assigner: Any, trigger: Any
) -> None:
    def build(s: DataStream) -> Any:
        windowed = s.assignTimestampsAndWatermarks(watermark(1000)).keyBy("k").window(assigner)
        if trigger is not None:
            windowed = windowed.trigger(trigger)
        return windowed.sum("v")

    write_batches(tmp_path / "in", SESSIONS_BEFORE_1970)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA, build, times_before_1970=True
    )
    assert any(run.main.values())  # windows fire before 1970
    harness = WindowOperatorHarness(assigner, sum_of("v"), key_field="k", trigger=trigger)
    assert_matches_harness(run, SESSIONS_BEFORE_1970, harness, ts="ts", delay_ms=1000)


# ------------------------------------------------------------- rows centuries late (2 of 3)
def _run_with_progress(
    spark: Any, tmp_path: Path, batches: list[list[dict[str, Any]]], late: bool
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[dict[str, Any]]]:
    write_batches(tmp_path / "in", batches)
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in")
    )
    windowed = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
    )
    if late:
        windowed = windowed.sideOutputLateData(LATE)
    result = windowed.sum("v")
    main, side = MemorySink("late_main"), MemorySink("late_side")
    query = result.start(
        main=main, side_outputs={LATE: side} if late else {},
        checkpoint_location=str(tmp_path / "ck"), trigger={"availableNow": True},
    )
    query.awaitTermination()
    progress = sorted(query.recentProgress, key=lambda p: p["batchId"])

    def rows(sink: MemorySink) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for batch in sink.batches.values() for r in batch)

    return rows(main), rows(side) if late else [], progress


NOW_MS = 1_714_564_800_000  # 2024-05-01
CENTURIES_LATE = [
    [ev("a", NOW_MS, 1), ev("b", NOW_MS, 2)],
    # 1824 and 1024: more than 100 years behind the watermark
    [ev("a", NOW_MS - 200 * YEAR_MS, 3), ev("b", NOW_MS - 1000 * YEAR_MS, 4),
     ev("a", NOW_MS + 20_000, 5)],
]


def test_rows_centuries_late_reach_the_late_side_output(spark: Any, tmp_path: Path) -> None:
    main, late, progress = _run_with_progress(spark, tmp_path, CENTURIES_LATE, late=True)
    assert main == [("a", NOW_MS, 1), ("b", NOW_MS, 2)]
    assert late == [("a", NOW_MS - 200 * YEAR_MS, 3), ("b", NOW_MS - 1000 * YEAR_MS, 4)]
    metrics = [p["observedMetrics"]["flinkwin"] for p in progress]
    assert sum(m["numRecordsIn"] for m in metrics) == 5
    assert sum(m["numLateRecordsToSideOutput"] for m in metrics) == 2
    # Spark itself drops no row (its counter would also count heartbeat copies)
    assert all(
        op["numRowsDroppedByWatermark"] == 0 for p in progress for op in p["stateOperators"]
    )
    assert progress_watermark(progress[-1]) == NOW_MS + 19_999


def test_rows_centuries_late_are_counted_when_dropped(spark: Any, tmp_path: Path) -> None:
    main, _, progress = _run_with_progress(spark, tmp_path, CENTURIES_LATE, late=False)
    assert main == [("a", NOW_MS, 1), ("b", NOW_MS, 2)]
    metrics = [p["observedMetrics"]["flinkwin"] for p in progress]
    assert sum(m["numLateRecordsDropped"] for m in metrics) == 2
    assert all(
        op["numRowsDroppedByWatermark"] == 0 for p in progress for op in p["stateOperators"]
    )


# -------------------------------------------------- far-future events, range limit (3 of 3)
YEAR_2500 = datetime.datetime(2500, 1, 1, 0, 0, 10)
YEAR_9000 = datetime.datetime(9000, 6, 1, 12, 0, 30)
FAR_FUTURE = [
    [{"k": "a", "at": "2500-01-01T00:00:10Z", "v": 1}],
    [{"k": "a", "at": "2500-01-01T00:00:40Z", "v": 2},
     {"k": "b", "at": "9000-06-01T12:00:30Z", "v": 3}],
    [{"k": "a", "at": "9000-06-01T12:05:00Z", "v": 4}],
]
FAR_FUTURE_SUMS = [
    ("a", YEAR_2500, 3), ("b", YEAR_9000, 3),
]


def _far_future(stream: DataStream) -> Any:
    return (
        stream.assignTimestampsAndWatermarks(watermark(0, ts="at")).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.minutes(1))).sum("v")
    )


def test_events_after_2262_are_windowed_in_a_stream(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", FAR_FUTURE)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", "k string, at timestamp, v long", _far_future
    )
    got = sorted(
        (r["k"], r["at"].replace(tzinfo=None), r["v"]) for rows in run.main.values() for r in rows
    )
    assert got == FAR_FUTURE_SUMS


def test_events_after_2262_are_windowed_on_static_input(spark: Any) -> None:
    rows = [
        (r["k"], datetime.datetime.fromisoformat(r["at"].replace("Z", "")), r["v"])
        for batch in FAR_FUTURE for r in batch
    ]
    df = spark.createDataFrame(rows, "k string, at timestamp, v long")
    got = sorted(tuple(r) for r in _far_future(DataStream(df)).toDF().collect())
    assert got == sorted([*FAR_FUTURE_SUMS, ("a", datetime.datetime(9000, 6, 1, 12, 5), 4)])


def _millis_windows(stream: DataStream, ts: Any = "ts") -> Any:
    return (
        stream.assignTimestampsAndWatermarks(watermark(0, ts=ts)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v")
    )


def test_epoch_millis_up_to_the_range_limit_are_windowed_in_both_modes(
    spark: Any, tmp_path: Path
) -> None:
    edge = MAX_EVENT_TIME_MS
    batches = [[ev("a", -edge, 1)], [ev("a", edge - 5, 2)], [ev("a", edge, 3)]]
    static = DataStream(spark.createDataFrame(
        [tuple(r.values()) for b in batches for r in b], SCHEMA
    ))
    expected = [("a", -edge, 1), ("a", edge - 5, 2), ("a", edge, 3)]
    assert sorted(tuple(r) for r in _millis_windows(static).toDF().collect()) == expected
    write_batches(tmp_path / "in", batches)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA, _millis_windows, times_before_1970=True
    )
    # the last window stays open: the stream's watermark stops at edge - 1
    assert _flatten(run.main) == expected[:2]
    assert run.watermarks[-1] == edge - 1


class FarTimestamps(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return 2**62 if value["v"] == 9 else value["ts"]


OUT_OF_RANGE = (
    r"event time {value} ms is outside the range flinkwin supports, "
    r"\[-4000000000000000, 4000000000000000\] ms"
)


@pytest.mark.parametrize(
    "value, ts, message",
    [
        (MAX_EVENT_TIME_MS + 1, "ts", "timestamp column 'ts'"),
        (-MAX_EVENT_TIME_MS - 1, "ts", "timestamp column 'ts'"),
        (0, FarTimestamps(), "the timestamp returned by"),
    ],
    ids=["above", "below", "timestamp-assigner"],
)
def test_event_time_outside_the_range_fails_naming_column_value_and_range_in_both_modes(
    spark: Any, tmp_path: Path, value: int, ts: Any, message: str
) -> None:
    bad = ev("a", value, 9)
    shown = 2**62 if isinstance(ts, TimestampAssigner) else value
    expected = f"{message}.*{OUT_OF_RANGE.format(value=shown)}.*\"v\":9"
    static = DataStream(spark.createDataFrame([("a", 1000, 1), tuple(bad.values())], SCHEMA))
    with pytest.raises(Exception, match=expected):
        _millis_windows(static, ts).toDF().collect()
    write_batches(tmp_path / "in", [[ev("a", 1000, 1)], [bad]])
    with pytest.raises(StreamingQueryException, match=expected):
        run_stream(
            spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
            lambda s: _millis_windows(s, ts),
        )


def test_a_timestamp_beyond_the_range_fails_naming_the_column(spark: Any) -> None:
    df = spark.createDataFrame([("a", 1, 1)], SCHEMA).withColumn(
        "at", F.timestamp_micros(F.lit((MAX_EVENT_TIME_MS + 1) * 1000))
    )
    with pytest.raises(Exception, match=r"timestamp column 'at': event time 4000000000000001 ms"):
        _millis_windows(DataStream(df), "at").toDF().collect()
