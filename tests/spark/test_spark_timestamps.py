"""Timestamps, dates, decimals and nested values come back exactly as they went in, in UTC and
non-UTC session time zones (instants in a repeated daylight-saving hour, wall times in a
skipped one)."""

from __future__ import annotations

import datetime
import decimal
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import DataFrame

from flinkwin import (
    OutputTag,
    ProcessWindowFunction,
    Time,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink

UTC = datetime.timezone.utc
SCHEMA = (
    "k string, n long, ts timestamp, ntz timestamp_ntz, d date, dec decimal(38,18), "
    "big decimal(38,0), arr array<timestamp>, "
    "st struct<a: timestamp, b: timestamp_ntz, c: array<timestamp_ntz>>, m map<string,timestamp>"
)
ZONES = ["UTC", "America/New_York", "Asia/Kolkata"]
# New York: 01:30 EDT and 01:30 EST on 2021-11-07 are one hour apart; 02:30 on 2021-03-14
# does not exist as a New York wall time (a TIMESTAMP_NTZ still holds it).
FALL_EDT = datetime.datetime(2021, 11, 7, 5, 30, 0, 1, tzinfo=UTC)
FALL_EST = datetime.datetime(2021, 11, 7, 6, 30, 0, 2, tzinfo=UTC)
SPRING_GAP = datetime.datetime(2021, 3, 14, 2, 30, 0, 3)
HOUR = 3_600_000


def _row(k: str, n: int, ts: datetime.datetime, **over: Any) -> dict[str, Any]:
    row = {
        "k": k, "n": n, "ts": ts, "ntz": SPRING_GAP + datetime.timedelta(minutes=n),
        "d": datetime.date(2021, 3, 14),
        "dec": decimal.Decimal("12345678901234567890.123456789012345678"),
        "big": decimal.Decimal("9" * 38), "arr": [FALL_EDT, None, FALL_EST],
        "st": {"a": FALL_EST, "b": SPRING_GAP, "c": [SPRING_GAP, None]},
        "m": {"edt": FALL_EDT, "est": FALL_EST, "none": None},
    }
    row.update(over)
    return row


ROWS = [
    _row("a", 1, FALL_EDT),
    _row("a", 2, FALL_EST, d=datetime.date(1, 1, 1), dec=decimal.Decimal("-0.000000000000000001")),
    _row("b", 3, FALL_EST, ntz=datetime.datetime(1, 1, 1), arr=None, st=None, m=None),
    _row("b", 4, FALL_EDT + datetime.timedelta(hours=2), ntz=None, dec=None, d=None,
         st={"a": None, "b": None, "c": None}),
]


@pytest.fixture
def utc_driver() -> Iterator[None]:
    """``collect()`` turns timestamps into this process's local wall time: make that UTC, so
    comparing collected rows compares instants."""
    previous = os.environ.get("TZ")
    os.environ["TZ"] = "UTC"
    time.tzset()
    yield
    if previous is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = previous
    time.tzset()


class Echo(ProcessWindowFunction):
    """Every element back as it came, plus what the function saw of ``ts``."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        for e in elements:
            assert e.ts.tzinfo is not None, "a TIMESTAMP reaches user code time-zone aware"
            assert e.ntz is None or e.ntz.tzinfo is None, "a TIMESTAMP_NTZ stays naive"
            yield e


def _in_zone(spark: Any, zone: str) -> str:
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", zone)
    return str(previous)


def _sorted(df: DataFrame) -> list[Any]:
    return sorted(df.collect(), key=lambda r: r.n)


def _hour_start(ts: datetime.datetime) -> datetime.datetime:
    return ts.replace(minute=0, second=0, microsecond=0, tzinfo=None)


@pytest.mark.parametrize("zone", ZONES)
def test_every_type_round_trips_exactly_on_static_input(
    spark: Any, zone: str, utc_driver: None
) -> None:
    previous = _in_zone(spark, zone)
    try:
        df = spark.createDataFrame(ROWS, SCHEMA)
        keyed = DataStream(df).assignTimestampsAndWatermarks(
            WatermarkStrategy.forMonotonousTimestamps().withTimestampAssigner("ts")
        ).keyBy("k").window(TumblingEventTimeWindows.of(Time.hours(1)))
        echoed = keyed.process(Echo(), output_schema=df.schema, with_window=True).toDF()
        reduced = keyed.reduce(lambda a, b: a if a.n >= b.n else b).toDF()
        max_by = keyed.maxBy("n").toDF()
        got_echo = _sorted(echoed)
        want = _sorted(df)
        plain = _sorted(echoed.drop("window_start", "window_end"))
        assert [r.asDict(recursive=True) for r in plain] == [
            r.asDict(recursive=True) for r in want
        ]
        assert [(r.window_start, r.window_end) for r in got_echo] == [
            (_hour_start(r["ts"]), _hour_start(r["ts"]) + datetime.timedelta(hours=1))
            for r in ROWS
        ]
        # per (key, hour) the element with the largest n: each row is its own window but a's
        # two rows, an hour apart, and b's, two hours apart
        assert _sorted(reduced) == want
        assert _sorted(max_by) == want
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


LATE = OutputTag("late")


def _write_batch(spark: Any, directory: Path, i: int, rows: list[dict[str, Any]]) -> None:
    """Batch ``i`` as one parquet file in ``directory``, older than batch ``i + 1``'s."""
    staging = directory.parent / f"staging-{i}"
    spark.createDataFrame(rows, SCHEMA).coalesce(1).write.parquet(str(staging))
    directory.mkdir(exist_ok=True)
    (part,) = staging.glob("part-*.parquet")
    target = directory / f"batch-{i}.parquet"
    part.rename(target)
    os.utime(target, (1_000_000_000 + i, 1_000_000_000 + i))


@pytest.mark.parametrize("zone", ["UTC", "America/New_York"])
def test_every_type_round_trips_exactly_through_a_stream_and_late_data(
    spark: Any, zone: str, tmp_path: Path, utc_driver: None
) -> None:
    source = tmp_path / "in"
    early, later = ROWS[:2], [_row("a", 5, FALL_EDT + datetime.timedelta(hours=3))]
    late = [dict(ROWS[2], k="a", n=6)]  # an hour ago: its window has closed
    previous = _in_zone(spark, zone)
    try:
        for i, batch in enumerate([early, later, late]):
            _write_batch(spark, source, i, batch)
        stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(
            str(source)
        )
        result = (
            DataStream(stream)
            .assignTimestampsAndWatermarks(
                WatermarkStrategy.forMonotonousTimestamps().withTimestampAssigner("ts")
            )
            .keyBy("k")
            .window(TumblingEventTimeWindows.of(Time.hours(1)))
            .sideOutputLateData(LATE)
            .process(Echo(), output_schema=stream.schema)
        )
        main, side = MemorySink("ts_main"), MemorySink("ts_late")
        query = result.start(
            main, {LATE: side}, checkpoint_location=str(tmp_path / "ck"),
            trigger={"availableNow": True},
        )
        assert query is not None
        query.awaitTermination()
        want = spark.createDataFrame(early + later + late, SCHEMA)
        by_n = {r.n: r.asDict(recursive=True) for r in want.collect()}
        assert sorted(r.n for r in main.rows()) == [1, 2]
        for r in main.rows() + side.rows():
            assert r.asDict(recursive=True) == by_n[r.n]
        assert [r.n for r in side.rows()] == [6]
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


def test_a_naive_timestamp_output_the_session_zone_skips_or_repeats_is_an_error() -> None:
    from pyspark.sql.types import StructField, StructType, TimestampNTZType, TimestampType

    from flinkwin.spark.row_encoder import RowEncoder, SchemaMismatchError

    schema = StructType([StructField("ts", TimestampType()), StructField("w", TimestampNTZType())])
    encoder = RowEncoder(schema, "America/New_York", "test output")
    repeated = datetime.datetime(2021, 11, 7, 1, 30)
    for naive in (repeated, SPRING_GAP):
        with pytest.raises(SchemaMismatchError, match="skips or repeats") as error:
            encoder.arrays([(naive, None)])
        assert repr(naive) in str(error.value)
    ts, wall = encoder.arrays([(FALL_EST, FALL_EST), (datetime.datetime(2021, 11, 7, 3), None)])
    assert ts.to_pylist() == [FALL_EST, datetime.datetime(2021, 11, 7, 8, tzinfo=UTC)]
    # an aware value in a TIMESTAMP_NTZ field is its wall time in the session zone (Spark's cast)
    assert wall.to_pylist() == [datetime.datetime(2021, 11, 7, 1, 30, 0, 2), None]
