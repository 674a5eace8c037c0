"""The window stage's metrics in Spark's own progress: ``query.lastProgress["observedMetrics"]``
(late elements dropped or sent to the side output, windows fired, elements processed, and the
keys, windows and bytes held in state after each batch), and never a row in any output."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from spark_scenarios import watermark, write_batches

from flinkwin import OutputTag, ProcessWindowFunction, Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink
from flinkwin.spark.metrics import HEARTBEAT_LIMIT

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


def _query(spark: Any, tmp_path: Path, build: Any, name: str = "metrics_main") -> Any:
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in")
    )
    result = build(
        DataStream(stream).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
    )
    main = MemorySink(name)
    query = result.start(
        main, checkpoint_location=str(tmp_path / "ck"), trigger={"availableNow": True}
    )
    query.awaitTermination()
    return query, main


def _by_batch(query: Any) -> dict[int, dict[str, int]]:
    return {
        p["batchId"]: p["observedMetrics"]["flinkwin"].asDict()
        for p in query.recentProgress
        if "flinkwin" in p.get("observedMetrics", {})
    }


def _run(spark: Any, tmp_path: Path, build: Any) -> tuple[list[dict[str, Any]], Any]:
    write_batches(tmp_path / "in", BATCHES)
    query, main = _query(spark, tmp_path, build)
    return [r.asDict() for r in main.rows()], _by_batch(query)


def _total(by_batch: dict[int, dict[str, int]], name: str) -> int:
    return sum(m[name] for m in by_batch.values())


def _held(by_batch: dict[int, dict[str, int]]) -> list[tuple[int, int]]:
    return [(m["keysInState"], m["windowsInState"]) for _, m in sorted(by_batch.items())]


def _state_store_bytes(spark: Any, checkpoint: Path) -> int:
    """The bytes of the snapshots in Spark's state store now, read with Spark's own state
    data source."""
    state = spark.read.format("statestore").load(str(checkpoint))
    return sum(len(r["value"]["groupState"]["snapshot"]) for r in state.collect())


def test_late_drops_fired_windows_and_state_totals_are_in_last_progress(
    spark: Any, tmp_path: Path
) -> None:
    rows, metrics = _run(spark, tmp_path, lambda w: w.sum("v"))
    assert sorted((r["k"], r["v"]) for r in rows) == [("a", 3), ("b", 4)]  # nothing else
    assert metrics[0]["numRecordsIn"] == 3
    assert metrics[1]["numRecordsIn"] == 1
    assert metrics[2] | {"stateBytes": 0} == {
        "numRecordsIn": 2,
        "numLateRecordsDropped": 1,  # Flink's numLateRecordsDropped
        "numLateRecordsToSideOutput": 0,
        "numWindowsFired": 2,
        "numSideOutputRecordsDiscarded": 0,
        "keysInState": 2,  # a [0, 10 s), b [0, 10 s) gone; a and b [10 s, 20 s) held
        "windowsInState": 2,
        "stateBytes": 0,
        "keyGroupCalls": 16,  # every key group, in every batch with input
    }
    # totals held after each batch, also in the batches that leave some keys untouched
    assert _held(metrics)[:3] == [(2, 2), (2, 3), (2, 2)]
    assert all(m["stateBytes"] > 0 for m in metrics.values())
    assert _total(metrics, "numRecordsIn") == 6
    assert _total(metrics, "numLateRecordsDropped") == 1


def test_above_the_heartbeat_limit_state_totals_are_null_and_the_results_the_same(
    spark: Any, tmp_path: Path
) -> None:
    """With more key groups than HEARTBEAT_LIMIT (here Flink's largest max parallelism,
    ``1 << 15``) the stage sends no heartbeats: Spark calls only the key groups with rows or a
    timer due, the state totals are null, the counts and the results as with 16."""
    write_batches(tmp_path / "in", BATCHES)
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in"))
    result = (DataStream(stream, key_groups=HEARTBEAT_LIMIT * 128)
              .assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
              .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v"))
    assert "concat(array(" not in result.toDF()._jdf.queryExecution().analyzed().toString()
    main = MemorySink("metrics_many_key_groups")
    query = result.start(main, checkpoint_location=str(tmp_path / "ck"),
                         trigger={"availableNow": True})
    query.awaitTermination()
    assert sorted((r["k"], r["v"]) for r in main.rows()) == [("a", 3), ("b", 4)]
    metrics = _by_batch(query)
    assert metrics[2]["numLateRecordsDropped"] == 1 and metrics[2]["numWindowsFired"] == 2
    assert metrics[0]["keyGroupCalls"] == 2  # a's and b's key groups only
    assert all(m[name] is None for m in metrics.values()
               for name in ("keysInState", "windowsInState", "stateBytes"))


def test_state_totals_are_exact_across_a_restart(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", BATCHES)
    first, _ = _query(spark, tmp_path, lambda w: w.sum("v"), "metrics_restart_1")
    before = _by_batch(first)
    assert _held(before)[-1] == (2, 2)  # a and b hold [10 s, 20 s)
    last = before[max(before)]
    assert last["stateBytes"] == _state_store_bytes(spark, tmp_path / "ck")

    # the restarted query touches only key c at first: a and b are still counted
    write_batches(tmp_path / "in", [[ev("c", 25000, 64)]], first=len(BATCHES))
    second, main = _query(spark, tmp_path, lambda w: w.sum("v"), "metrics_restart_2")
    after = _by_batch(second)
    assert min(after) == max(before) + 1
    held = _held(after)
    assert held[0] == (3, 3)  # a, b [10 s, 20 s) and c [20 s, 30 s)
    assert held[-1] == (1, 1)  # the watermark 24999 fired a and b: c alone is left
    assert sorted((r["k"], r["v"]) for r in main.rows()) == [("a", 8), ("b", 32)]
    assert after[max(after)]["stateBytes"] == _state_store_bytes(spark, tmp_path / "ck")


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


def test_static_pipeline_publishes_metrics_after_an_action(spark: Any) -> None:
    rows = [r for batch in BATCHES for r in batch]  # a@4000 is on time in one static batch
    df = spark.createDataFrame(rows, SCHEMA)
    result = (
        DataStream(df).assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v")
    )
    try:
        result.metrics()
    except RuntimeError as e:
        assert "no action has computed this window result yet" in str(e)
    else:
        raise AssertionError("metrics() before any action must fail")
    assert sorted((r["k"], r["v"]) for r in result.toDF().collect()) == [
        ("a", 8), ("a", 19), ("b", 4), ("b", 32),
    ]
    metrics = result.metrics()
    assert metrics["numRecordsIn"] == 6
    assert metrics["numWindowsFired"] == 4
    assert metrics["numLateRecordsDropped"] == 0
    assert (metrics["keysInState"], metrics["windowsInState"]) == (0, 0)  # end of input
    assert metrics["keyGroupCalls"] in (1, 2)  # the key groups of a and b


def test_heartbeat_copies_are_marked_in_the_arrival_sequence_not_an_extra_column(
    spark: Any,
) -> None:
    """The first row of each input partition is copied once per key group; the copies carry
    ``HEARTBEAT_SEQUENCE`` as arrival sequence (the runtime skips them by it), the rows
    themselves keep theirs, and no marker column goes through the shuffle."""
    from flinkwin.spark.arrival import ARRIVAL_COLUMN, POSITION_BITS
    from flinkwin.spark.key_groups import key_group_labels
    from flinkwin.spark.metrics import with_heartbeats
    from flinkwin.spark.runtime import HEARTBEAT_SEQUENCE, KEY_GROUP_COLUMN

    labels = key_group_labels(4)
    second = 1 << POSITION_BITS  # partition 1, position 0: a first row too
    rows = [("a", 0, labels[0]), ("b", 1, labels[2]), ("c", second, labels[3])]
    df = spark.createDataFrame(rows, f"v string, {ARRIVAL_COLUMN} long, {KEY_GROUP_COLUMN} int")
    out = with_heartbeats(df, 4)
    assert out.columns == ["v", ARRIVAL_COLUMN, KEY_GROUP_COLUMN]
    got = sorted(tuple(r) for r in out.collect())
    beats = sorted(
        (v, HEARTBEAT_SEQUENCE, label) for v in ("a", "c") for label in labels
    )
    assert got == sorted([*rows, *beats])
