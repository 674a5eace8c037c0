"""Values are exact end to end, static and streaming: integers never pass through float (a
``bigint`` above 2^53 with a null in the same column and batch keeps every digit), NaN is not
NULL in either direction, float keys are Flink's (``Double.equals``: one NaN key, ``0.0`` and
``-0.0`` two), built-in ``min``/``max``/``minBy``/``maxBy`` compare as Java's ``compareTo``,
and a built-in aggregation of a type Flink cannot aggregate fails when it is built (see the
bad-input table in ``docs/reliability.md``)."""

from __future__ import annotations

import decimal
import math
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import finish_streams, run_stream, start_streams, watermark, write_batches

from flinkwin import (
    CountEvictor,
    OutputTag,
    ProcessWindowFunction,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.datastream import DataStream

BIG = 9007199254740993  # 2^53 + 1: float64 rounds it to 2^53
HUGE = 2**62 + 1
LATE = OutputTag("late_values")


def _windowed(stream: DataStream, key: str = "k") -> Any:
    return (
        stream.assignTimestampsAndWatermarks(watermark(0))
        .keyBy(key).window(TumblingEventTimeWindows.of(Time.seconds(10)))
    )


def _rows(run: Any, side: str | None = None) -> list[dict[str, Any]]:
    batches = run.main if side is None else run.sides[side]
    return [r for b in sorted(batches) for r in batches[b]]


class Seen(ProcessWindowFunction):
    """Emits, per window, what the function received for field ``d``: 'None', 'nan' or the
    number, in arrival order."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (str(key), ",".join("None" if e.d is None else repr(e.d) for e in elements))


# ------------------------------------------------------------------------- big integers
def test_big_longs_next_to_nulls_in_the_same_column_keep_every_digit_static(
    spark: Any,
) -> None:
    rows = [("a", 1000, BIG), ("a", 2000, None), ("b", 1000, HUGE), ("b", 2000, None)]
    df = spark.createDataFrame(rows, "k string, ts long, v long")
    reduced = _windowed(DataStream(df)).reduce(lambda a, b: a).toDF().collect()
    assert sorted((r.k, r.v) for r in reduced) == [("a", BIG), ("b", HUGE)]
    by_ts = _windowed(DataStream(df)).max("ts").toDF().collect()
    assert sorted((r.k, r.ts, r.v) for r in by_ts) == [("a", 2000, BIG), ("b", 2000, HUGE)]
    mapped = DataStream(df).map(lambda e: (e.k, e.v), output_type="k string, v bigint")
    assert sorted((r.k, str(r.v)) for r in mapped.toDF().collect()) == sorted(
        [("a", "None"), ("a", str(BIG)), ("b", "None"), ("b", str(HUGE))]
    )


def test_int_short_and_byte_columns_with_nulls_stay_integers(spark: Any) -> None:
    df = spark.createDataFrame(
        [("a", 1000, 2**31 - 1, 32767, 127, 1), ("a", 2000, None, None, None, 2)],
        "k string, ts long, i int, s smallint, b tinyint, v long",
    )

    def types(a: Any, b: Any) -> Any:
        assert type(a.i) is int and type(a.s) is int and type(a.b) is int, a
        assert b.i is None and b.s is None and b.b is None, b
        return a

    out = _windowed(DataStream(df)).reduce(types).toDF().collect()
    assert [(r.i, r.s, r.b) for r in out] == [(2**31 - 1, 32767, 127)]


def test_big_longs_next_to_nulls_keep_every_digit_streaming(
    spark: Any, tmp_path: Path
) -> None:
    batches = [
        [{"k": "a", "ts": 1000, "v": BIG}, {"k": "a", "ts": 2000, "v": None}],
        [{"k": "b", "ts": 15000, "v": HUGE}, {"k": "b", "ts": 15001, "v": None}],
        # late (watermark 14999): to the side output, a null beside it
        [{"k": "a", "ts": 3000, "v": BIG}, {"k": "a", "ts": 3001, "v": None}],
        [{"k": "z", "ts": 40000, "v": 1}],
    ]
    write_batches(tmp_path / "in", batches)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", "k string, ts long, v long",
        lambda s: _windowed(s).sideOutputLateData(LATE).reduce(lambda a, b: a), [LATE],
    )
    assert [(r["k"], r["v"]) for r in _rows(run)] == [("a", BIG), ("b", HUGE)]
    assert [(r["k"], r["v"]) for r in _rows(run, LATE.tag_id)] == [("a", BIG), ("a", None)]


def test_big_longs_survive_the_columnar_state_between_batches(
    spark: Any, tmp_path: Path
) -> None:
    # sum("v") keeps the first element's other fields (x) in the columnar panes' snapshot;
    # one key, two windows: the same key group's chunk holds the big value and the null
    batches = [
        [{"k": "a", "ts": 1000, "v": 1, "x": HUGE}, {"k": "a", "ts": 11000, "v": 1, "x": None}],
        [{"k": "a", "ts": 2000, "v": 2, "x": None}, {"k": "a", "ts": 12000, "v": 2, "x": BIG}],
        [{"k": "z", "ts": 60000, "v": 1, "x": 1}],
    ]
    write_batches(tmp_path / "in", batches)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", "k string, ts long, v long, x long",
        lambda s: s.assignTimestampsAndWatermarks(watermark(20000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v"),
    )
    assert [(r["ts"], r["v"], str(r["x"])) for r in _rows(run)] == [
        (1000, 3, str(HUGE)), (11000, 3, "None")
    ]


def test_decimals_and_booleans_with_nulls_pass_through_exactly(spark: Any) -> None:
    big = decimal.Decimal("12345678901234567890.123456789012345678")
    df = spark.createDataFrame(
        [("a", 1000, big, True, 1), ("a", 2000, None, None, 2), ("b", 1000, None, None, 3)],
        "k string, ts long, m decimal(38,18), f boolean, v long",
    )
    out = _windowed(DataStream(df)).sum("v").toDF().collect()
    assert sorted((r.k, str(r.m), str(r.f), r.v) for r in out) == [
        ("a", str(big), "True", 3), ("b", "None", "None", 3)
    ]


# ---------------------------------------------------------------------------- NaN, NULL
def test_nan_and_null_stay_distinct_static(spark: Any) -> None:
    nan = float("nan")
    df = spark.createDataFrame(
        [("a", 1000, 1.0), ("a", 2000, nan), ("a", 3000, None), ("b", 1000, None)],
        "k string, ts long, d double",
    )
    seen = _windowed(DataStream(df)).process(Seen(), output_schema="k string, seen string")
    assert sorted(tuple(r) for r in seen.toDF().collect()) == [
        ("a", "1.0,nan,None"), ("b", "None")
    ]
    passed = _windowed(DataStream(df)).reduce(lambda a, b: b).toDF().collect()
    assert sorted((r.k, str(r.d)) for r in passed) == [("a", "None"), ("b", "None")]
    nan_last = _windowed(DataStream(df.where("k = 'a' and ts < 3000"))).reduce(lambda a, b: b)
    assert [math.isnan(r.d) for r in nan_last.toDF().collect()] == [True]
    mapped = DataStream(df).map(lambda e: (e.k, e.d), output_type="k string, d double")
    values = sorted(("None" if r.d is None else repr(r.d)) for r in mapped.toDF().collect())
    assert values == ["1.0", "None", "None", "nan"]


@pytest.mark.parametrize("order", [(1.0, float("nan")), (float("nan"), 1.0)])
def test_builtin_aggregations_over_nan_follow_java(spark: Any, order: tuple) -> None:
    df = spark.createDataFrame(
        [("a", 1000, order[0]), ("a", 2000, order[1])], "k string, ts long, d double"
    )
    windowed = _windowed(DataStream(df))
    assert math.isnan(windowed.sum("d").toDF().collect()[0].d)  # NaN, not NULL
    assert windowed.min("d").toDF().collect()[0].d == 1.0
    assert math.isnan(windowed.max("d").toDF().collect()[0].d)
    assert windowed.minBy("d").toDF().collect()[0].d == 1.0
    assert math.isnan(windowed.maxBy("d").toDF().collect()[0].d)


def test_negative_zero_is_less_than_zero_in_min_and_max(spark: Any) -> None:
    df = spark.createDataFrame(
        [("a", 1000, 0.0), ("a", 2000, -0.0)], "k string, ts long, d double"
    )
    windowed = _windowed(DataStream(df))
    assert math.copysign(1.0, windowed.min("d").toDF().collect()[0].d) == -1.0
    assert math.copysign(1.0, windowed.max("d").toDF().collect()[0].d) == 1.0


def test_nan_and_null_stay_distinct_streaming(spark: Any, tmp_path: Path) -> None:
    nan = float("nan")
    batches = [
        [{"k": "a", "ts": 1000, "d": 1.0}, {"k": "a", "ts": 2000, "d": None}],
        [{"k": "a", "ts": 3000, "d": nan}, {"k": "b", "ts": 15000, "d": None}],
        [{"k": "a", "ts": 4000, "d": nan}, {"k": "a", "ts": 4001, "d": None}],  # late
        [{"k": "z", "ts": 40000, "d": 2.0}],
    ]
    write_batches(tmp_path / "in", batches)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", "k string, ts long, d double",
        lambda s: _windowed(s).sideOutputLateData(LATE).process(
            Seen(), output_schema="k string, seen string"
        ), [LATE],
    )
    assert sorted((r["k"], r["seen"]) for r in _rows(run)) == [
        ("a", "1.0,None,nan"), ("b", "None")
    ]
    late = [("None" if r["d"] is None else repr(r["d"])) for r in _rows(run, LATE.tag_id)]
    assert late == ["nan", "None"]


def test_a_nan_sum_is_written_as_nan_streaming(spark: Any, tmp_path: Path) -> None:
    batches = [
        [{"k": "a", "ts": 1000, "d": 1.0}],
        [{"k": "a", "ts": 2000, "d": float("nan")}, {"k": "b", "ts": 2000, "d": 2.5}],
        [{"k": "z", "ts": 40000, "d": 2.0}],
    ]
    write_batches(tmp_path / "in", batches)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", "k string, ts long, d double",
        lambda s: _windowed(s).sum("d"),
    )
    out = {r["k"]: r["d"] for r in _rows(run)}
    assert math.isnan(out["a"]) and out["b"] == 2.5


# --------------------------------------------------------------------------- float keys
def test_nan_keys_are_one_key_and_signed_zeros_two_static(spark: Any) -> None:
    nan = float("nan")
    df = spark.createDataFrame(
        [(nan, 1000, 1), (nan, 2000, 2), (0.0, 1000, 4), (-0.0, 2000, 8), (nan, 3000, 16)],
        "k double, ts long, v long",
    )
    for windowed in (
        _windowed(DataStream(df)), _windowed(DataStream(df)).evictor(CountEvictor.of(10))
    ):
        out = windowed.sum("v").toDF().collect()
        assert sorted((repr(r.k), r.v) for r in out) == [("-0.0", 8), ("0.0", 4), ("nan", 19)]


def test_nan_keys_are_one_key_across_batches_streaming(spark: Any, tmp_path: Path) -> None:
    nan = float("nan")
    batches = [
        [{"k": nan, "ts": 1000, "v": 1}, {"k": 0.0, "ts": 1000, "v": 4}],
        [{"k": nan, "ts": 2000, "v": 2}, {"k": -0.0, "ts": 2000, "v": 8}],
        [{"k": nan, "ts": 3000, "v": 16}],
        [{"k": 1.0, "ts": 40000, "v": 1}],
    ]
    write_batches(tmp_path / "in", batches)
    builds = {
        "columnar": lambda s: _windowed(s).sum("v"),
        "evictor": lambda s: _windowed(s).evictor(CountEvictor.of(10)).sum("v"),
        "reduce": lambda s: _windowed(s).reduce(lambda a, b: (a[0], a[1], a[2] + b[2])),
    }
    runs = finish_streams(start_streams(spark, tmp_path / "in", tmp_path,
                                        "k double, ts long, v long", builds, name="nan_keys"))
    for name, run in runs.items():
        assert sorted((repr(r["k"]), r["v"]) for r in _rows(run)) == [
            ("-0.0", 8), ("0.0", 4), ("nan", 19)
        ], name


def test_nan_keys_from_a_key_selector_are_one_key(spark: Any) -> None:
    nan = float("nan")
    df = spark.createDataFrame(
        [(nan, 1000, 1), (-nan, 2000, 2), (0.0, 1000, 4), (-0.0, 2000, 8)],
        "k double, ts long, v long",
    )
    out = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0))
        .key_by(lambda e: e.k).window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .sum("v").toDF().collect()
    )
    assert sorted((repr(r.k), r.v) for r in out) == [("-0.0", 8), ("0.0", 4), ("nan", 3)]


# ------------------------------------------------------------ aggregations Flink refuses
def test_sum_of_a_string_field_fails_at_build_with_flinks_message(spark: Any) -> None:
    df = spark.createDataFrame([("a", 1000, "x")], "k string, ts long, s string")
    windowed = _windowed(DataStream(df))
    message = (
        r"sum\('s'\): DataStream cannot be summed because the class String does not "
        r"support the \+ operator"
    )
    with pytest.raises(TypeError, match=message):
        windowed.sum("s")
    with pytest.raises(TypeError, match=r"class String does not support the \+ operator"):
        windowed.sum("k")  # the key field too
    with pytest.raises(TypeError, match=r"class BigDecimal does not support"):
        _windowed(DataStream(df.selectExpr("k", "ts", "1.5bd as m"))).sum("m")
    # strings are Comparable in Java: min/max/minBy/maxBy work on them
    assert windowed.max("s").toDF().collect()[0].s == "x"


def test_min_and_max_of_a_non_comparable_field_fail_at_build(spark: Any) -> None:
    df = spark.createDataFrame(
        [("a", 1000, bytearray(b"x"), [1])], "k string, ts long, b binary, l array<int>"
    )
    windowed = _windowed(DataStream(df))
    for call in (windowed.min, windowed.max, windowed.minBy, windowed.maxBy):
        with pytest.raises(TypeError, match=r"'b' has type binary.*byte\[\] is not Comparable"):
            call("b")
    with pytest.raises(TypeError, match=r"'l' has type array<int>.*not Comparable"):
        windowed.maxBy("l")


class Emit(ProcessWindowFunction):
    def __init__(self, output: Any) -> None:
        self.output = output

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield self.output


def test_a_nan_in_an_integer_output_field_fails_naming_it(spark: Any) -> None:
    df = spark.createDataFrame([("a", 1000, 1)], "k string, ts long, v long")
    windowed = _windowed(DataStream(df))
    failing = windowed.process(Emit(("a", float("nan"))), output_schema="k string, n bigint")
    with pytest.raises(Exception, match=r"field 'n' is declared bigint but got nan.*NaN is not"):
        failing.toDF().collect()
    written = windowed.process(Emit(("a", float("nan"))), output_schema="k string, d double")
    assert math.isnan(written.toDF().collect()[0].d)


def test_a_float_column_sums_in_single_precision_like_java(spark: Any) -> None:
    df = spark.createDataFrame(
        [("a", 1000, 16777216.0), ("a", 2000, 1.0), ("a", 3000, 1.0)],
        "k string, ts long, f float",
    )
    assert _windowed(DataStream(df)).sum("f").toDF().collect()[0].f == 16777216.0



def test_a_nan_inside_a_nested_output_value_stays_nan(spark: Any) -> None:
    """PySpark turns a NaN inside an array/map/struct into null on its way to Spark; such
    fields leave the stage as text and are cast back, so NaN stays NaN and null null."""
    df = spark.createDataFrame([("a", 1000, 1)], "k string, ts long, v long")
    windowed = _windowed(DataStream(df))
    out = windowed.process(
        Emit(("a", [1.0, float("nan"), None, -0.0], {"m": float("nan")}, (float("nan"),))),
        output_schema="k string, xs array<double>, m map<string,float>, s struct<f: double>",
    ).toDF().collect()[0]
    assert _same(out.xs, [1.0, float("nan"), None, -0.0])
    assert math.isnan(out.m["m"]) and math.isnan(out.s.f)


TRICKY = [1.0, None, float("nan"), -0.0, 5e-324, 1.7976931348623157e308, 0.1, 1 / 3,
          float("inf"), float("-inf"), 2.0 ** 60 + 0.5]


def _same(a: list[Any], b: list[Any]) -> bool:
    """Equal element by element, NaN equal to NaN, -0.0 told from 0.0, None from NaN."""
    def key(x: Any) -> Any:
        return None if x is None else ("nan" if math.isnan(x) else (x, math.copysign(1, x)))
    return [key(x) for x in a] == [key(x) for x in b]


class Elements(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        for e in elements:
            yield (key, repr((list(e.xs), dict(e.m), list(e.s.f), list(e.fs))))


def test_null_and_nan_inside_nested_float_values_stay_distinct(spark: Any) -> None:
    """A null element of an ``array<double>`` (or a map's, a struct's) reaches user functions
    as None and a NaN as nan, every double exactly; a ``float`` element is the single-precision
    value; in the window stage and in ``map`` alike, and back out to Spark."""
    schema = ("k string, ts long, xs array<double>, m map<string,double>, "
              "s struct<f: array<double>>, fs array<float>")
    df = spark.createDataFrame(
        [("a", 1000, TRICKY, {"x": None, "y": float("nan")}, (TRICKY,), [0.1, None])], schema)
    seen = _windowed(DataStream(df)).process(Elements(), output_schema="k string, r string")
    xs, m, f, fs = eval(seen.toDF().collect()[0].r, {"nan": math.nan, "inf": math.inf})
    assert _same(xs, TRICKY) and _same(f, TRICKY)
    assert m["x"] is None and math.isnan(m["y"])
    assert fs == [0.10000000149011612, None]  # float32(0.1), as PyFlink hands a FLOAT
    mapped = DataStream(df).map(lambda e: (e.k, [x is None for x in e.xs]),
                                output_type="k string, nulls array<boolean>")
    assert mapped.toDF().collect()[0].nulls == [x is None for x in TRICKY]
    # pass-through fields written back to Spark: every value exact, NaN and null apart
    passed = _windowed(DataStream(df)).max("ts").toDF().collect()[0]
    assert _same(passed.xs, TRICKY) and _same(passed.s.f, TRICKY)
    assert passed.m["x"] is None and math.isnan(passed.m["y"])
    assert passed.fs == [0.10000000149011612, None]
