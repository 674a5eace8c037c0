"""Query-level behaviour: one query feeding several sinks, restarts from a checkpoint, the key
group check, windows without event time, processing-time windows."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException
from spark_scenarios import assert_matches_harness, run_stream, watermark, write_batches
from test_spark_streaming import LATE, LATE_SUM_BATCHES, SCHEMA, TUMBLING_BATCHES, ev

from flinkwin import (
    CountEvictor,
    CountSlidingWindowAssigner,
    CountTrigger,
    GlobalWindows,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from flinkwin.datastream import DataStream
from flinkwin.functions.builtin import sum_of
from flinkwin.spark import FileSink, MemorySink
from flinkwin.testing import WindowOperatorHarness


def _tumbling(stream: DataStream) -> Any:
    return (
        stream.assignTimestampsAndWatermarks(watermark(2000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .sideOutputLateData(LATE).sum("v")
    )


def _source(spark: Any, path: Path) -> Any:
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(path))


def test_one_query_writes_main_and_late_sinks(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", TUMBLING_BATCHES)
    main = MemorySink("fw_main_view")
    query = _tumbling(DataStream(_source(spark, tmp_path / "in"))).start(
        main=main,
        side_outputs={LATE: FileSink(str(tmp_path / "late"), format="parquet")},
        checkpoint_location=str(tmp_path / "ck"),
        trigger={"availableNow": True},
        query_name="fw_two_sinks",
    )
    query.awaitTermination()
    assert len(spark.streams.active) == 0
    assert spark.table("fw_main_view").count() == 4  # the view over the memory sink
    late = spark.read.parquet(str(tmp_path / "late")).collect()
    assert [r.asDict() for r in late] == [ev("a", 500, 100)]


def test_a_lone_foreach_batch_sink_gets_the_batch_directly(spark: Any, tmp_path: Path) -> None:
    """As with Spark's foreachBatch, each action recomputes the stage; the results and the
    state stay right (every recomputation starts from the batch's input state)."""
    write_batches(tmp_path / "in", TUMBLING_BATCHES)
    seen: dict[int, tuple[int, list[Any]]] = {}

    def twice(df: Any, batch_id: int) -> None:
        seen[batch_id] = (df.count(), sorted(tuple(r) for r in df.collect()))

    stream = DataStream(_source(spark, tmp_path / "in"))
    query = (
        stream.assignTimestampsAndWatermarks(watermark(2000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v")
        .start(main=twice, checkpoint_location=str(tmp_path / "ck"),
               trigger={"availableNow": True})
    )
    query.awaitTermination()
    assert seen == {
        0: (0, []), 1: (0, []),
        2: (3, [("a", 1000, 6), ("b", 2000, 10), ("c", 4000, 7)]),
        3: (0, []), 4: (1, [("a", 12000, 4)]),
    }


def test_restart_from_checkpoint_continues_state(spark: Any, tmp_path: Path) -> None:
    """Two queries over one checkpoint (files arriving in between) give what one query gives."""
    first, rest = TUMBLING_BATCHES[:2], TUMBLING_BATCHES[2:]
    write_batches(tmp_path / "in", first)

    def build(s: DataStream) -> Any:
        return _tumbling(s)

    one = run_stream(spark, tmp_path / "in", tmp_path / "ck", SCHEMA, build, [LATE])
    write_batches(tmp_path / "in", rest, first=len(first))
    two = run_stream(spark, tmp_path / "in", tmp_path / "ck", SCHEMA, build, [LATE])
    got = sorted(
        (r["k"], r["ts"], r["v"]) for run in (one, two) for rows in run.main.values() for r in rows
    )
    assert got == [("a", 1000, 6), ("a", 12000, 4), ("b", 2000, 10), ("c", 4000, 7)]
    assert [r for rows in two.sides["late"].values() for r in rows] == [ev("a", 500, 100)]

    # another number of key groups fails at start() (see test_restart_safety.py); without
    # flinkwin's pipeline.json the runtime still refuses the state, as a second line of defence
    (tmp_path / "ck" / "flinkwin" / "pipeline.json").unlink()
    write_batches(tmp_path / "in", [[ev("a", 40000, 1), ev("b", 40000, 1)]], first=4)
    query = _tumbling(DataStream(_source(spark, tmp_path / "in"), key_groups=7)).start(
        main=MemorySink("fw_restart"), checkpoint_location=str(tmp_path / "ck"),
        trigger={"availableNow": True},
    )
    with pytest.raises(StreamingQueryException, match="written with key_groups=16 but the "
                       "pipeline now uses key_groups=7"):
        query.awaitTermination()


def test_restart_restores_sliding_panes(spark: Any, tmp_path: Path) -> None:
    """Sliding windows' pane state restored from the checkpoint (a new query: no cached
    operator) gives what one query gives, late re-firings included."""

    def build(s: DataStream) -> Any:
        return (
            s.assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
            .window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5)))
            .allowedLateness(Time.seconds(8)).sideOutputLateData(LATE).sum("v")
        )

    def rows(*runs: Any) -> list[Any]:
        return sorted(
            (r["k"], r["ts"], r["v"]) for run in runs for rows in run.main.values() for r in rows
        )

    write_batches(tmp_path / "all", LATE_SUM_BATCHES)
    whole = run_stream(spark, tmp_path / "all", tmp_path / "ck1", SCHEMA, build, [LATE])
    write_batches(tmp_path / "in", LATE_SUM_BATCHES[:2])
    one = run_stream(spark, tmp_path / "in", tmp_path / "ck2", SCHEMA, build, [LATE])
    write_batches(tmp_path / "in", LATE_SUM_BATCHES[2:], first=2)
    two = run_stream(spark, tmp_path / "in", tmp_path / "ck2", SCHEMA, build, [LATE])
    assert rows(one, two) == rows(whole)
    assert ("a", 1000, 33) in rows(two)  # a re-firing after the restore


COUNT_BATCHES = [
    [ev("a", 0, 1), ev("b", 0, 2), ev("a", 0, 3)],
    [ev("a", 0, 4), ev("b", 0, 5)],
    [ev("a", 0, 6), ev("b", 0, 7), ev("b", 0, 8), ev("a", 0, 9)],
]


def test_count_windows_without_event_time(spark: Any, tmp_path: Path) -> None:
    write_batches(tmp_path / "in", COUNT_BATCHES)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
        lambda s: s.keyBy("k").countWindow(3, 2).sum("v"),
    )
    assert len(run.watermarks) == 3  # no watermark: no trailing no-data batch
    harness = WindowOperatorHarness(
        GlobalWindows.create(), sum_of("v"), key_field="k",
        trigger=CountTrigger.of(2), evictor=CountEvictor.of(3),
    )
    assert_matches_harness(run, COUNT_BATCHES, harness, ts=None, delay_ms=None)


def test_pyflink_count_window_keeps_its_counts_across_micro_batches(
    spark: Any, tmp_path: Path
) -> None:
    """PyFlink's ``count_window(3, 2)``: the assigner's per-key count (keyed state of the
    runtime context) is snapshotted between batches; only full windows fire."""
    write_batches(tmp_path / "in", COUNT_BATCHES)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
        lambda s: s.key_by("k").count_window(3, 2).sum("v"),
    )
    harness = WindowOperatorHarness(
        CountSlidingWindowAssigner.of(3, 2), sum_of("v"), key_field="k"
    )
    assert_matches_harness(run, COUNT_BATCHES, harness, ts=None, delay_ms=None)
    fired = sorted((r["k"], r["v"]) for rows in run.main.values() for r in rows)
    assert fired == [("a", 8), ("a", 19), ("b", 14)]  # a: 1+3+4, 4+6+9; b: 2+5+7


def test_processing_time_windows_fire_on_idle_keys(spark: Any, tmp_path: Path) -> None:
    """Processing-time timers wake key groups without data (ProcessingTimeTimeout)."""
    write_batches(tmp_path / "in", [[ev("a", 0, 1), ev("b", 0, 2)], [ev("a", 0, 3)]])
    sink = MemorySink("fw_processing")
    result = (
        DataStream(_source(spark, tmp_path / "in")).keyBy("k")
        .window(TumblingProcessingTimeWindows.of(Time.milliseconds(500))).sum("v")
    )
    query = result.start(
        main=sink, checkpoint_location=str(tmp_path / "ck"),
        trigger={"processingTime": "200 milliseconds"},
    )
    try:
        deadline = time.time() + 60
        while sum(r.v for r in sink.rows()) < 6 and time.time() < deadline:
            time.sleep(0.2)
    finally:
        query.stop()
    assert sum(r.v for r in sink.rows()) == 6
    assert {r.k for r in sink.rows()} == {"a", "b"}


def test_no_watermarks_on_a_stream_runs_processing_time_windows_and_refuses_event_time(
    spark: Any, tmp_path: Path
) -> None:
    """PyFlink's ``no_watermarks()`` on an unbounded source: a processing-time window runs
    (the watermark stays Long.MIN_VALUE); an event-time window, which would never fire while
    its state grew (as in Flink), is refused when it is built, naming the fix."""
    from flinkwin import WatermarkStrategy
    from flinkwin.errors import UnsupportedOperationError

    write_batches(tmp_path / "in", [[ev("a", 0, 1), ev("b", 0, 2)], [ev("a", 0, 3)]])
    strategy = WatermarkStrategy.no_watermarks().with_timestamp_assigner("ts")
    keyed = DataStream(_source(spark, tmp_path / "in")).assign_timestamps_and_watermarks(
        strategy).key_by("k")
    with pytest.raises(UnsupportedOperationError, match="for_bounded_out_of_orderness"):
        keyed.window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v").toDF()
    result = keyed.window(TumblingProcessingTimeWindows.of(Time.milliseconds(500))).sum("v")
    summary = result._stage([]).summary
    assert summary["watermark"] == "none (noWatermarks): Long.MIN_VALUE"
    assert summary["timers"] == "processing time"
    sink = MemorySink("fw_no_watermarks")
    query = result.start(main=sink, checkpoint_location=str(tmp_path / "ck"),
                         trigger={"processingTime": "200 milliseconds"})
    try:
        deadline = time.time() + 300  # returns as soon as the windows fired
        while sum(r.v for r in sink.rows()) < 6 and time.time() < deadline:
            time.sleep(0.2)
    finally:
        query.stop()
    assert sum(r.v for r in sink.rows()) == 6
    assert {r.k for r in sink.rows()} == {"a", "b"}
