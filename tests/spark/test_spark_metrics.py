"""The window stage's metrics in Spark's own progress: ``query.lastProgress["observedMetrics"]``
(late elements dropped or sent to the side output, windows fired, elements processed, changes
of the keys, windows and bytes held in state), and never a row in any output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spark_scenarios import watermark, write_batches

from flinkwin import OutputTag, ProcessWindowFunction, Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink

SCHEMA = "k string, ts long, v long"
LATE = OutputTag("late")


def ev(k: str, ts: int, v: int) -> dict[str, Any]:
    return {"k": k, "ts": ts, "v": v}


BATCHES = [
    [ev("a", 1000, 1), ev("a", 2000, 2), ev("b", 3000, 4)],
    [ev("a", 15000, 8)],
    # the watermark is now ~15 s: [0, 10 s) fires for a and b; a@4000 is late
    [ev("a", 4000, 16), ev("b", 16000, 32)],
]


class Echo(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield from elements


def _run(spark: Any, tmp_path: Path, build: Any) -> tuple[list[dict[str, Any]], Any]:
    write_batches(tmp_path / "in", BATCHES)
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in")
    )
    result = build(
        DataStream(stream).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
    )
    main = MemorySink("metrics_main")
    query = result.start(
        main, checkpoint_location=str(tmp_path / "ck"), trigger={"availableNow": True}
    )
    query.awaitTermination()
    by_batch = {
        p["batchId"]: p["observedMetrics"]["flinkwin"].asDict()
        for p in query.recentProgress
        if "flinkwin" in p.get("observedMetrics", {})
    }
    assert query.lastProgress["observedMetrics"]["flinkwin"]["keyGroupCalls"] >= 0
    return [r.asDict() for r in main.rows()], by_batch


def _total(by_batch: dict[int, dict[str, int]], name: str) -> int:
    return sum(m[name] for m in by_batch.values())


def test_late_drops_fired_windows_and_state_sizes_are_in_last_progress(
    spark: Any, tmp_path: Path
) -> None:
    rows, metrics = _run(spark, tmp_path, lambda w: w.sum("v"))
    assert sorted((r["k"], r["v"]) for r in rows) == [("a", 3), ("b", 4)]  # nothing else
    assert metrics[0]["numRecordsIn"] == 3
    assert (metrics[0]["keysInStateChange"], metrics[0]["windowsInStateChange"]) == (2, 2)
    assert metrics[0]["stateBytesChange"] > 0
    assert (metrics[1]["numRecordsIn"], metrics[1]["windowsInStateChange"]) == (1, 1)
    assert metrics[2] | {"stateBytesChange": 0, "keyGroupCalls": 0} == {
        "numRecordsIn": 2,
        "numLateRecordsDropped": 1,  # Flink's numLateRecordsDropped
        "numLateRecordsToSideOutput": 0,
        "numWindowsFired": 2,
        "numSideOutputRecordsDiscarded": 0,
        "keysInStateChange": 0,
        "windowsInStateChange": -1,  # a [0, 10 s), b [0, 10 s) gone; b [10 s, 20 s) new
        "stateBytesChange": 0,
        "keyGroupCalls": 0,
    }
    assert _total(metrics, "numRecordsIn") == 6
    assert _total(metrics, "numLateRecordsDropped") == 1
    assert _total(metrics, "keysInStateChange") == 2  # a and b still hold [10 s, 20 s)
    assert _total(metrics, "stateBytesChange") > 0


def test_unrequested_side_output_is_discarded_and_counted(spark: Any, tmp_path: Path) -> None:
    rows, metrics = _run(
        spark, tmp_path,
        lambda w: w.sideOutputLateData(LATE).process(Echo(), output_schema=SCHEMA),
    )
    assert sorted((r["k"], r["ts"]) for r in rows) == [("a", 1000), ("a", 2000), ("b", 3000)]
    assert metrics[2]["numLateRecordsToSideOutput"] == 1
    assert metrics[2]["numSideOutputRecordsDiscarded"] == 1  # nobody reads the late output
    assert metrics[2]["numLateRecordsDropped"] == 0
    assert metrics[2]["numWindowsFired"] == 2
    assert _total(metrics, "numRecordsIn") == 6


def test_chained_window_stages_publish_under_distinct_names(spark: Any) -> None:
    stream = spark.readStream.format("rate").load().selectExpr(
        "cast(value % 3 as string) as k", "cast(timestamp as long) * 1000 as ts", "value as v"
    )
    names = []
    for size in (5, 10, 20):
        result = (
            DataStream(stream).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
            .window(TumblingEventTimeWindows.of(Time.seconds(size))).sum("v")
        )
        names.append(result._stage([]).summary["metrics"])
        stream = result.toDF()
    assert names == [
        f"query.lastProgress['observedMetrics'][{n!r}]"
        for n in ("flinkwin", "flinkwin_2", "flinkwin_3")
    ]
