"""A stage whose windows fire more than once, or over sliding windows, hands its results to
Spark packed (one Arrow IPC stream per key-group call, unpacked by a ``mapInArrow``:
``flinkwin.spark.outputs.unpack``). The packed and the unpacked stage give the same rows,
micro-batch by micro-batch, in the main and the late output, for every column type flinkwin
carries (exact big longs next to nulls, NaN apart from null and -0.0 from 0.0, nested floats,
decimals, timestamps with and without time zone, dates, bytes, day-time intervals), through
``start()`` and through ``toDF().writeStream``, for a window chain and for a graph whose
output is such a window."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import run_stream, watermark, write_batches

import flinkwin.spark.compiler as compiler
import flinkwin.spark.graph_compiler as graph_compiler
from flinkwin import (
    CountTrigger,
    OutputTag,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.datastream import DataStream

LATE = OutputTag("late_packed")
NAN = float("nan")
SCHEMA = "k string, ts long, v long, x double, n long"
BATCHES = [
    [{"k": "a", "ts": 1000, "v": 1, "x": 1.5, "n": 1},
     {"k": "a", "ts": 2000, "v": 5, "x": NAN, "n": None},
     {"k": "b", "ts": 3000, "v": 2, "x": None, "n": 2}],
    [{"k": "a", "ts": 12000, "v": 3, "x": -0.0, "n": 3},
     {"k": "b", "ts": 4000, "v": 6, "x": 0.0, "n": None}],
    [{"k": "a", "ts": 5000, "v": 9, "x": 2.5, "n": 4},  # late: the watermark is 11999
     {"k": "b", "ts": 25000, "v": 4, "x": NAN, "n": 5}],
]


def _typed(df: Any) -> Any:
    """Every column kind the stage carries, nulls and NaN included, from the JSON input."""
    return df.selectExpr(
        "k", "ts", "v", "x",
        "CASE WHEN n IS NULL THEN NULL ELSE 9007199254740993 + n END AS big",
        "CAST(v AS int) AS i",
        "CASE WHEN n IS NULL THEN NULL ELSE v % 2 = 0 END AS flag",
        "CASE WHEN n IS NULL THEN NULL ELSE CAST(v AS decimal(20, 6)) / 7 END AS dec",
        "timestamp_millis(ts) AS t",
        "CAST(timestamp_millis(ts) AS timestamp_ntz) AS ntz",
        "to_date(timestamp_millis(ts + 86400000 * v)) AS day",
        "CASE WHEN n IS NULL THEN NULL ELSE unhex('00ff10') END AS b",
        "array(x, CAST(NULL AS double), -0.0D) AS xs",
        "map('x', x) AS m",
        "named_struct('f', x, 'g', k) AS s",
        "make_dt_interval(0, 0, 0, CAST(v AS decimal(18, 6)) / 1000) AS d",
    )


def _fired_each_element(stream: DataStream) -> Any:
    return (
        DataStream(_typed(stream.toDF())).assignTimestampsAndWatermarks(watermark(0))
        .keyBy("k").window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .trigger(CountTrigger.of(1)).sideOutputLateData(LATE).maxBy("v")
    )


def _sliding(stream: DataStream) -> Any:
    return (
        DataStream(_typed(stream.toDF())).assignTimestampsAndWatermarks(watermark(0))
        .keyBy("k").window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5)))
        .sideOutputLateData(LATE).maxBy("v")
    )


def _canon(batches: dict[int, list[dict[str, Any]]]) -> dict[int, list[str]]:
    """Each batch's rows as text: ``repr`` tells NaN from None and -0.0 from 0.0 and keeps
    every digit; rows sorted within a batch (their order across key groups is Spark's)."""
    return {b: sorted(repr(sorted(r.items())) for r in rows) for b, rows in batches.items()}


@pytest.mark.parametrize("build", [_fired_each_element, _sliding], ids=["count-1", "sliding"])
def test_packed_results_equal_the_unpacked_stages_batch_by_batch(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, build: Any
) -> None:
    write_batches(tmp_path / "in", BATCHES)
    packed = run_stream(spark, tmp_path / "in", tmp_path / "ck1", SCHEMA, build, [LATE])
    monkeypatch.setattr(compiler, "many_results", lambda *window: False)
    plain = run_stream(spark, tmp_path / "in", tmp_path / "ck2", SCHEMA, build, [LATE])
    assert _canon(packed.main) == _canon(plain.main)
    assert _canon(packed.sides[LATE.tag_id]) == _canon(plain.sides[LATE.tag_id])
    fired = [r for rows in packed.main.values() for r in rows]
    late = [(r["k"], r["v"]) for rows in packed.sides[LATE.tag_id].values() for r in rows]
    # a@5000 is late for [0, 10 s) but on time in the sliding [5 s, 15 s): no late output then
    assert late == ([("a", 9)] if build is _fired_each_element else [])
    # the values themselves: exact, NaN and null apart
    nan_row = next(r for r in fired if r["k"] == "a" and r["v"] == 5)
    assert nan_row["x"] != nan_row["x"] and nan_row["big"] is None
    assert repr(nan_row["xs"]) == "[nan, None, -0.0]" and nan_row["flag"] is None
    if build is _fired_each_element:
        b_first = next(r for r in fired if r["k"] == "b" and r["v"] == 2)
        assert b_first["x"] is None and b_first["big"] == 9007199254740995


def test_a_window_firing_more_than_once_packs_its_stage_and_explain_says_so(
    spark: Any, tmp_path: Path
) -> None:
    write_batches(tmp_path / "in", BATCHES[:1])
    stream = DataStream(spark.readStream.schema(SCHEMA).json(str(tmp_path / "in")))
    summary = _fired_each_element(stream)._stage([]).summary
    assert summary["outputs"].startswith("packed")
    plain = (
        DataStream(_typed(stream.toDF())).assignTimestampsAndWatermarks(watermark(0))
        .keyBy("k").window(TumblingEventTimeWindows.of(Time.seconds(10))).maxBy("v")
    )
    assert "outputs" not in plain._stage([]).summary


def test_packed_results_through_to_df_write_stream(spark: Any, tmp_path: Path) -> None:
    """Spark's own writer after ``toDF()`` reads the unpacked rows, metrics included."""
    write_batches(tmp_path / "in", BATCHES)
    stream = DataStream(
        spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(tmp_path / "in"))
    )
    result = _fired_each_element(stream)
    query = (
        result.toDF().writeStream.format("memory").queryName("packed_to_df")
        .option("checkpointLocation", str(tmp_path / "ck"))
        .trigger(availableNow=True).start()
    )
    query.awaitTermination()
    rows = spark.sql("SELECT k, v, big FROM packed_to_df").collect()
    assert sorted((r.k, r.v, r.big) for r in rows) == [
        ("a", 1, 9007199254740994), ("a", 3, 9007199254740996), ("a", 5, None),
        ("b", 2, 9007199254740995), ("b", 4, 9007199254740998), ("b", 6, None),
    ]
    metrics = [p["observedMetrics"]["flinkwin"] for p in query.recentProgress
               if "flinkwin" in p["observedMetrics"]]
    assert sum(m["numWindowsFired"] for m in metrics) == 6
    assert sum(m["numRecordsIn"] for m in metrics) == 7


def _union_sliding(stream: DataStream) -> Any:
    """A graph: the stream and a copy of it with other values, unioned, then sliding windows
    over the union (the graph's output). Both sources carry all 16 columns of ``_typed``: a
    union of sources this wide once ran out of the default 1 GB driver heap while Spark
    optimized the stage's plan (2^n constraints for sources of n columns)."""
    typed = _typed(stream.toDF())
    first = DataStream(typed).assignTimestampsAndWatermarks(watermark(0))
    other = DataStream(typed.withColumn("v", typed["v"] + 100)).assignTimestampsAndWatermarks(
        watermark(0))
    return (
        first.union(other).keyBy("k")
        .window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5)))
        .sideOutputLateData(LATE).maxBy("v")
    )


def test_a_graph_ending_in_sliding_windows_packs_with_the_same_rows(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_batches(tmp_path / "in", BATCHES)
    packed = run_stream(spark, tmp_path / "in", tmp_path / "ck1", SCHEMA, _union_sliding,
                        [LATE])
    monkeypatch.setattr(graph_compiler, "many_results", lambda *window: False)
    plain = run_stream(spark, tmp_path / "in", tmp_path / "ck2", SCHEMA, _union_sliding,
                       [LATE])
    assert _canon(packed.main) == _canon(plain.main)
    assert _canon(packed.sides[LATE.tag_id]) == _canon(plain.sides[LATE.tag_id])
    fired = [(r["k"], r["v"]) for rows in packed.main.values() for r in rows]
    assert ("a", 105) in fired and ("b", 106) in fired  # the copies' values win the max
    monkeypatch.undo()
    stream = DataStream(spark.readStream.schema(SCHEMA).json(str(tmp_path / "in")))
    assert _union_sliding(stream)._stage([]).summary["outputs"].startswith("packed")
