"""Column types through the window stage: a day-time interval round-trips exactly in every
role (pass-through, key, reduce/maxBy value, late data), beyond 292 years and null too; the
types Arrow cannot carry (year-month and calendar intervals) and variants fail when the
pipeline is built, naming the column and its type (see the bad-input table in
``docs/reliability.md``); a window sum keeps an ``int``/``smallint``/``tinyint`` column's type
and overflows as Flink's does on every path."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import run_stream, watermark, write_batches

from flinkwin import (
    OutputTag,
    ProcessWindowFunction,
    Time,
    TimestampAssigner,
    TumblingEventTimeWindows,
    WatermarkStrategy,
    WindowFunction,
)
from flinkwin.datastream import DataStream

# a long shared-session file: `make test` runs it beside the rest to keep its two lanes even
pytestmark = pytest.mark.beside

LATE = OutputTag("late_intervals")
# 1 day 2:03:04.5 and a negative one: exact microseconds
D1 = datetime.timedelta(days=1, hours=2, minutes=3, seconds=4, microseconds=500_000)
D2 = -datetime.timedelta(microseconds=7)


def _intervals(df: Any) -> Any:
    return df.selectExpr(
        "k", "ts", "v",
        "make_dt_interval(0, 0, 0, cast(cast(us as decimal(38, 6)) / 1000000 as decimal(18, 6)))"
        " as d",
    )


def _windowed(stream: DataStream, key: str = "k") -> Any:
    return (
        DataStream(_intervals(stream.toDF())).assignTimestampsAndWatermarks(watermark(0))
        .keyBy(key).window(TumblingEventTimeWindows.of(Time.seconds(10)))
    )


def _us(d: datetime.timedelta) -> int:
    return (d.days * 86_400 + d.seconds) * 1_000_000 + d.microseconds


def test_day_time_intervals_round_trip_in_every_role(spark: Any, tmp_path: Path) -> None:
    batches = [
        [{"k": "a", "ts": 1000, "v": 1, "us": _us(D1)},
         {"k": "a", "ts": 2000, "v": 2, "us": _us(D2)}],
        [{"k": "b", "ts": 15000, "v": 3, "us": _us(D1)}],
        [{"k": "a", "ts": 3000, "v": 4, "us": _us(D2)}],  # late: the watermark is 14999
    ]
    write_batches(tmp_path / "in", batches)
    schema = "k string, ts long, v long, us long"
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", schema,
        lambda s: _windowed(s).sideOutputLateData(LATE).maxBy("v"), [LATE],
    )
    fired = [r for rows in run.main.values() for r in rows]
    assert [(r["k"], r["v"], r["d"]) for r in fired] == [("a", 2, D2)]
    late = [r for rows in run.sides[LATE.tag_id].values() for r in rows]
    assert [(r["k"], r["d"]) for r in late] == [("a", D2)]

    static = spark.createDataFrame([r for b in batches[:2] for r in b], schema)
    by_interval = _windowed(DataStream(static), key="d").sum("v").toDF().collect()
    assert sorted((r["d"], r["v"]) for r in by_interval) == [(D2, 2), (D1, 1), (D1, 3)]
    reduced = _windowed(DataStream(static)).reduce(lambda a, b: b).toDF().collect()
    assert sorted((r["k"], r["d"]) for r in reduced) == [("a", D2), ("b", D1)]


#: beyond pandas' nanosecond range (about 292 years), either sign
BIG = datetime.timedelta(days=200_000, microseconds=7)


class Seen(ProcessWindowFunction):
    """Each element's interval as the function sees it: its text and whether it is None."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        for e in elements:
            yield key, str(e.d), e.d is None, type(e.d).__name__


def test_day_time_intervals_beyond_292_years_and_nulls_reach_functions_exactly(
    spark: Any, tmp_path: Path
) -> None:
    """A top-level interval column travels as microseconds (PySpark's pandas conversion took
    it through nanoseconds: 200000 days became -13504 days, silently) and a null one arrives
    as None, not pandas' NaT (which failed the batch when passed on, and which min/max
    skipped where Flink fails): functions see datetime.timedelta and None, late data keeps
    the value, a null in a maxBy field fails naming the row."""
    batches = [
        [{"k": "a", "ts": 1000, "v": 1, "us": _us(BIG)}],
        [{"k": "a", "ts": 2000, "v": 2, "us": None}],
        [{"k": "b", "ts": 15000, "v": 3, "us": _us(-BIG)}],
        [{"k": "a", "ts": 3000, "v": 4, "us": _us(-BIG)}],  # late: the watermark is 14999
    ]
    write_batches(tmp_path / "in", batches)
    schema = "k string, ts long, v long, us long"
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", schema,
        lambda s: _windowed(s).sideOutputLateData(LATE).process(
            Seen(), output_schema="k string, d string, absent boolean, kind string"), [LATE],
    )
    fired = [(r["k"], r["d"], r["absent"], r["kind"]) for rows in run.main.values() for r in rows]
    assert fired == [("a", str(BIG), False, "timedelta"), ("a", "None", True, "NoneType")]
    late = [r for rows in run.sides[LATE.tag_id].values() for r in rows]
    assert [(r["k"], r["d"]) for r in late] == [("a", -BIG)]

    static = spark.createDataFrame([r for b in batches[:2] for r in b], schema)
    reduced = _windowed(DataStream(static)).reduce(lambda a, b: a).toDF().collect()
    assert [(r["k"], r["d"]) for r in reduced] == [("a", BIG)]
    with pytest.raises(Exception, match=r"max_by\('d'\): field 'd' is null in Row\("):
        _windowed(DataStream(static)).maxBy("d").toDF().collect()


@pytest.mark.parametrize(
    ("expression", "type_name"),
    [
        ("make_ym_interval(1, 2)", "interval year to month"),
        ("make_interval(1, 2, 3, 4, 5, 6, 7.5)", "interval"),
        ("parse_json('{\"a\": 1}')", "variant"),
        ("array(make_ym_interval(0, 3))", "array<interval year to month>"),
    ],
)
def test_a_column_flinkwin_cannot_carry_fails_at_build_naming_it(
    spark: Any, expression: str, type_name: str
) -> None:
    df = spark.range(1).selectExpr("'a' as k", "id as ts", f"{expression} as x")
    windowed = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
    )
    with pytest.raises(TypeError, match=f"the input: column 'x' has type {type_name}, "
                       "which flinkwin cannot carry"):
        windowed.reduce(lambda a, b: a)


class Nothing(WindowFunction):
    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        return []


def test_a_declared_output_column_flinkwin_cannot_carry_fails_at_build(spark: Any) -> None:
    df = spark.range(1).selectExpr("'a' as k", "id as ts")
    windowed = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
    )
    with pytest.raises(TypeError, match="column 'span' has type interval year to month"):
        windowed.apply(Nothing(), output_schema="k string, span interval year to month")


B = 2_000_000_000
INT_SCHEMA = "k string, ts long, v int"
#: Flink's IntSum overflowing (ANSI off) and the error naming it (ANSI on)
WRAPPED = -294_967_296  # 2,000,000,000 + 2,000,000,000 in Java int arithmetic
INT_OVERFLOW = (r"key 'a', window TimeWindow\(start=0, end=10000\): int overflow: sum of "
                r"field 'v': 2000000000 \+ 2000000000 = 4000000000")


def _int_sums(stream: DataStream, lateness: int = 0) -> Any:
    return (
        stream.assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .allowedLateness(Time.seconds(lateness)).sum("v")
    )


@pytest.mark.parametrize(("column", "value", "wrapped", "overflow"), [
    ("int", B, WRAPPED, "int overflow: .* = 4000000000"),
    ("smallint", 30_000, -5_536, r"short overflow: .* = 60000 is outside \[-32768, 32767\]"),
    ("tinyint", 100, -56, r"byte overflow: .* = 200 is outside \[-128, 127\]"),
])
def test_a_narrow_int_window_sum_on_a_static_dataframe_wraps_as_flinks_or_fails_under_ansi(
    spark: Any, ansi: Any, column: str, value: int, wrapped: int, overflow: str
) -> None:
    """Flink's SumFunction adds an Integer (Short, Byte) field in its own type: the sum keeps
    the column's type and wraps around, or fails under the "error" policy."""
    df = spark.createDataFrame([("a", 1, value), ("a", 2, value)], f"k string, ts long, v {column}")
    ansi(False)
    result = _int_sums(DataStream(df)).toDF()
    assert result.schema["v"].dataType.simpleString() == column
    assert [(r.k, r.v) for r in result.collect()] == [("a", wrapped)]
    ansi(True)
    failing = _int_sums(DataStream(df)).toDF()
    with pytest.raises(Exception, match=f"key 'a', window TimeWindow.*{overflow}"):
        failing.collect()


def test_an_int_window_sum_fired_by_the_watermark_wraps_as_flinks_or_fails_under_ansi(
    spark: Any, tmp_path: Path, ansi: Any
) -> None:
    write_batches(tmp_path / "in", [
        [{"k": "a", "ts": 1000, "v": B}, {"k": "a", "ts": 2000, "v": B}],
        [{"k": "b", "ts": 15000, "v": 1}],  # watermark 14999: fires [0, 10 s)
    ])
    ansi(False)
    run = run_stream(spark, tmp_path / "in", tmp_path / "ck", INT_SCHEMA, _int_sums)
    fired = [(r["k"], r["v"]) for rows in run.main.values() for r in rows]
    assert fired == [("a", WRAPPED)]
    ansi(True)
    with pytest.raises(Exception, match=INT_OVERFLOW):
        run_stream(spark, tmp_path / "in", tmp_path / "ck-error", INT_SCHEMA, _int_sums)


def test_an_int_window_sum_fired_by_a_late_element_wraps_as_flinks_or_fails_under_ansi(
    spark: Any, tmp_path: Path, ansi: Any
) -> None:
    write_batches(tmp_path / "in", [
        [{"k": "a", "ts": 1000, "v": B}],
        [{"k": "b", "ts": 15000, "v": 1}],  # watermark 14999: fires [0, 10 s) with B
        [{"k": "a", "ts": 2000, "v": B}],  # late, within the lateness: fires it on arrival
    ])
    ansi(False)
    run = run_stream(spark, tmp_path / "in", tmp_path / "ck", INT_SCHEMA,
                     lambda s: _int_sums(s, lateness=10))
    fired = [(r["k"], r["v"]) for rows in run.main.values() for r in rows]
    assert fired == [("a", B), ("a", WRAPPED)]
    ansi(True)
    with pytest.raises(Exception, match=INT_OVERFLOW):
        run_stream(spark, tmp_path / "in", tmp_path / "ck-error", INT_SCHEMA,
                   lambda s: _int_sums(s, lateness=10))


def test_an_int_sum_of_a_window_after_a_window_wraps_as_flinks_or_fails_under_ansi(
    spark: Any, ansi: Any
) -> None:
    """In a stream graph, the second window's sum of the first's int sums adds in int too."""
    df = spark.createDataFrame([("a", 1000, B), ("a", 11000, B)], INT_SCHEMA)

    def graph() -> Any:
        return (
            _int_sums(DataStream(df)).key_by("k")
            .window(TumblingEventTimeWindows.of(Time.seconds(20))).sum("v").toDF()
        )

    ansi(False)
    assert [(r.k, r.v) for r in graph().collect()] == [("a", WRAPPED)]
    ansi(True)
    failing = graph()
    with pytest.raises(Exception, match=r"key 'a', window TimeWindow\(start=0, end=20000\): "
                       "int overflow: sum of field 'v'"):
        failing.collect()


#: Spark's least day-time interval: -2^63 microseconds, numpy's NaT
LEAST = datetime.timedelta(microseconds=-(2**63))


class Described(ProcessWindowFunction):
    """Each element's interval as the function sees it (repr), and whether it is None."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        for e in elements:
            yield key, repr(e.d), e.d is None


def test_the_least_day_time_interval_reaches_functions_exactly_not_as_null(spark: Any) -> None:
    """-2^63 microseconds is Spark's least interval and numpy's NaT: it reaches the function
    as that timedelta, beside a null that reaches it as None (it read as null before)."""
    df = spark.createDataFrame(
        [("a", 1000, 1, 0), ("a", 2000, 2, 1), ("a", 3000, 3, 2)],
        "k string, ts long, v long, n int",
    ).selectExpr(
        "k", "ts", "v",
        "case n when 0 then make_dt_interval(-106751991, -4, 0, -54.775808) "
        "when 1 then cast(null as interval day to second) "
        "else make_dt_interval(0, 0, 0, 1.5) end as d",
    )
    out = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .process(Described(), output_schema="k string, d string, absent boolean")
        .toDF().collect()
    )
    assert [(r["d"], r["absent"]) for r in out] == [
        (repr(LEAST), False), ("None", True), (repr(datetime.timedelta(seconds=1.5)), False),
    ]


class SecondsOfT2(TimestampAssigner):
    """Reads the timestamp column itself: it must never see the wire's null marker."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return int(value[2].timestamp() * 1000)


@pytest.mark.parametrize(
    "graph,assigner", [(False, False), (True, False), (False, True), (True, True)],
    ids=["chain", "graph", "chain-python-assigner", "graph-python-assigner"],
)
def test_a_timestamp_of_the_least_long_fails_naming_the_column_instead_of_reading_as_null(
    spark: Any, graph: bool, assigner: bool
) -> None:
    """A top-level timestamp of -2^63 microseconds (outside what a Python datetime holds)
    is the wire's null marker: it fails the query naming the column and the row, on a chain
    and in a graph, where it reached the functions as None before; a Python
    TimestampAssigner never sees it (it saw None in a graph before)."""
    df = spark.createDataFrame([("a", 1000, 0), ("a", 2000, 1)], "k string, ts long, n int")
    df = df.selectExpr(
        "k", "ts", "case n when 0 then timestamp_micros(-9223372036854775808) "
        "else timestamp_micros(5) end as t2",
    )
    strategy = (
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(SecondsOfT2())
        if assigner else watermark(0)
    )
    stream = DataStream(df).assignTimestampsAndWatermarks(strategy)
    if graph:
        stream = stream.union(DataStream(df.limit(0)).assignTimestampsAndWatermarks(strategy))
    result = (
        stream.keyBy("k").window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .reduce(lambda a, b: a)
    )
    with pytest.raises(Exception, match=r"column 't2' holds the TIMESTAMP value of "
                       r"-9223372036854775808 microseconds since the epoch .* in row \{"):
        result.toDF().collect()


def test_a_timestamp_ntz_of_the_least_long_fails_in_a_session_outside_utc_too(
    spark: Any, tmp_path: Path
) -> None:
    """A TIMESTAMP_NTZ is checked on its own wall-clock microseconds, not shifted by the
    session's zone (New York's offset would move -2^63 off the marker and past the check)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({
        "k": ["a", "a"], "ts": pa.array([1000, 2000], pa.int64()),
        "t2": pa.array([-(2**63), 5], pa.timestamp("us")),
    }), str(tmp_path / "ntz.parquet"))
    previous = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        df = spark.read.parquet(str(tmp_path))
        assert df.schema["t2"].dataType.simpleString() == "timestamp_ntz"
        _windowing_fails(df, r"column 't2' holds the TIMESTAMP_NTZ value of "
                         r"-9223372036854775808 microseconds since the epoch")
    finally:
        spark.conf.set("spark.sql.session.timeZone", previous)


def test_a_nested_timestamp_of_the_least_long_fails_instead_of_reaching_functions_as_nat(
    spark: Any,
) -> None:
    """Inside an array, -2^63 microseconds reached the function as pandas' NaT (neither a
    datetime nor None); it fails naming the value, and a null element stays None."""
    df = spark.createDataFrame([("a", 1000, 0)], "k string, ts long, n int").selectExpr(
        "k", "ts", "array(timestamp_micros(-9223372036854775808), cast(null as timestamp)) "
        "as t2",
    )
    _windowing_fails(df, r"a TIMESTAMP of -9223372036854775808 microseconds since the epoch "
                     r".* inside an array, map or struct")


def _windowing_fails(df: Any, message: str) -> None:
    """A 10 s tumbling reduce keyed by ``k`` over ``df`` fails with ``message``."""
    result = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).reduce(lambda a, b: a)
    )
    with pytest.raises(Exception, match=message):
        result.toDF().collect()
