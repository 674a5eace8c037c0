"""Spark's own view of the watermark (``docs/spark-semantics.md``, "Watermarks"): Spark's
progress (what its UI and every ``StreamingQueryListener`` show) reads Flink's watermark as a
normal timestamp for window and graph stages; a stream declaring ``times_before_1970`` stays
exact before 1970; times at or before the epoch met undeclared, or a watermark Spark cannot
tell apart from "none yet", fail naming the declaration; a checkpoint whose Spark watermark is
shifted only continues declared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import StreamingQueryException
from spark_scenarios import assert_matches_harness, run_stream, watermark, write_batches
from test_event_time_range import BEFORE_1970, LATE
from test_spark_streaming import SCHEMA, ev

from flinkwin import (
    IncompatibleRestartError,
    KeyedProcessFunction,
    Time,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    Types,
    ValueStateDescriptor,
)
from flinkwin.datastream import DataStream
from flinkwin.functions.builtin import sum_of
from flinkwin.spark import MemorySink
from flinkwin.spark.restart import DOCUMENT
from flinkwin.spark.watermarks import WATERMARK_SHIFT_MS, progress_watermark
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MIN_LONG

NOW_MS = 1_714_564_800_000  # 2024-05-01T12:00:00Z
NOW_BATCHES = [
    [ev("a", NOW_MS + 1_000, 1), ev("b", NOW_MS + 4_000, 2)],
    [ev("a", NOW_MS + 12_500, 3)],
]
#: Flink's watermark after the last batch: max(ts) - 2000 - 1
LAST_WATERMARK_ISO = "2024-05-01T12:00:10.499Z"


def _tumbling(stream: DataStream) -> Any:
    return (
        stream.assignTimestampsAndWatermarks(watermark(2000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v")
    )


class Watermarks(KeyedProcessFunction):
    """Emits what ``current_watermark()`` reads for every element."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value.k, value.ts, ctx.timer_service().current_watermark()


def _watermarks(stream: DataStream, delay_ms: int = 2000) -> Any:
    return (
        stream.assignTimestampsAndWatermarks(watermark(delay_ms)).keyBy("k")
        .process(Watermarks(), output_type="k string, ts long, watermark long")
    )


def _run(spark: Any, tmp_path: Path, batches: list[list[dict[str, Any]]], build: Any,
         name: str, before_1970: bool = False) -> tuple[list[tuple[Any, ...]], list[Any]]:
    write_batches(tmp_path / "in", batches)
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in")
    )
    sink = MemorySink(name)
    query = build(DataStream(df, times_before_1970=before_1970)).start(
        main=sink, checkpoint_location=str(tmp_path / "ck"), trigger={"availableNow": True}
    )
    query.awaitTermination()
    rows = sorted(tuple(r) for b in sink.batches.values() for r in b)
    return rows, sorted(query.recentProgress, key=lambda p: p["batchId"])


# ------------------------------------------------------------------- Spark's progress
def test_progress_shows_flinks_watermark_as_a_timestamp_for_a_window_stage(
    spark: Any, tmp_path: Path
) -> None:
    _, progress = _run(spark, tmp_path, NOW_BATCHES, _tumbling, "view_window")
    assert progress[0]["eventTime"]["watermark"] == "1970-01-01T00:00:00.000Z"  # none yet
    assert progress[-1]["eventTime"]["watermark"] == LAST_WATERMARK_ISO
    assert progress_watermark(progress[-1]) == NOW_MS + 10_499
    assert progress_watermark(progress[0]) == MIN_LONG


def test_progress_shows_flinks_watermark_as_a_timestamp_for_a_graph_stage(
    spark: Any, tmp_path: Path
) -> None:
    rows, progress = _run(spark, tmp_path, NOW_BATCHES, _watermarks, "view_graph")
    assert progress[-1]["eventTime"]["watermark"] == LAST_WATERMARK_ISO
    # and the process function reads the same watermark, MIN_LONG before any
    assert rows == [
        ("a", NOW_MS + 1_000, MIN_LONG), ("a", NOW_MS + 12_500, NOW_MS + 1_999),
        ("b", NOW_MS + 4_000, MIN_LONG),
    ]


def test_the_declared_mode_keeps_sparks_watermark_shifted(spark: Any, tmp_path: Path) -> None:
    _, progress = _run(spark, tmp_path, NOW_BATCHES, _tumbling, "view_shifted", True)
    assert progress[-1]["eventTime"]["watermark"].startswith("+128")  # year 128,000 or so
    assert progress_watermark(progress[-1], times_before_1970=True) == NOW_MS + 10_499
    with pytest.raises(Exception, match="times_before_1970=True"):
        progress_watermark(progress[-1])


# --------------------------------------------------------------------- before 1970
def test_a_stream_before_1970_fails_undeclared_naming_the_declaration(
    spark: Any, tmp_path: Path
) -> None:
    write_batches(tmp_path / "in", BEFORE_1970)
    with pytest.raises(
        StreamingQueryException,
        # the element (before the epoch) or its window's pending timer (at or before it),
        # whichever a key group meets first
        match=r"before 1970-01-01T00:00:00Z.*uncertain.*"
        r"DataStream\(df, times_before_1970=True\)",
    ):
        run_stream(
            spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
            lambda s: s.assignTimestampsAndWatermarks(watermark(1000)).keyBy("k")
            .window(TumblingEventTimeWindows.of(Time.seconds(10)))
            .sideOutputLateData(LATE).sum("v"),
        )


def test_an_element_before_1970_behind_a_watermark_past_the_epoch_is_late(
    spark: Any, tmp_path: Path
) -> None:
    """Once Spark's watermark is past the epoch it is Flink's exactly: an element at or before
    the epoch is then simply late, declared or not."""
    batches = [[ev("a", NOW_MS, 1)], [ev("a", -86_400_000, 2), ev("a", NOW_MS + 1, 4)]]
    write_batches(tmp_path / "in", batches)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
        lambda s: s.assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .sideOutputLateData(LATE).sum("v"),
        side_tags=[LATE],
    )
    assert [r for rows in run.sides["late"].values() for r in rows] == [ev("a", -86_400_000, 2)]


# ------------------------------------------------------- the uncertain watermark
SMALL_BATCHES = [[ev("a", 500, 1)], [ev("a", 1_200, 2)], [ev("a", 9_000, 3)]]


def test_reading_the_watermark_spark_cannot_tell_apart_from_none_fails(
    spark: Any, tmp_path: Path
) -> None:
    """Every event time so far within the delay of the epoch: Flink's watermark in batch 1 is
    500 - 2000 - 1 = -1501, Spark's stays at 0; a process function reading it fails (batch 0's
    MIN_LONG is exact and read fine)."""
    with pytest.raises(StreamingQueryException, match=r"uncertain.*times_before_1970=True"):
        _run(spark, tmp_path, SMALL_BATCHES, _watermarks, "view_uncertain")


def test_reading_the_watermark_near_the_epoch_is_exact_when_declared(
    spark: Any, tmp_path: Path
) -> None:
    rows, _ = _run(spark, tmp_path, SMALL_BATCHES, _watermarks, "view_uncertain_declared", True)
    assert rows == [("a", 500, MIN_LONG), ("a", 1_200, -1_501), ("a", 9_000, -801)]


def test_windows_near_the_epoch_need_no_declaration(spark: Any, tmp_path: Path) -> None:
    """Built-in triggers and windows after the epoch do not depend on the uncertain watermark
    (-1501 and -801 here): Flink's results without the declaration."""
    batches = [*SMALL_BATCHES, [ev("a", 12_500, 4)]]
    rows, progress = _run(spark, tmp_path, batches, _tumbling, "view_small_windows")
    assert rows == [("a", 500, 6)]  # [0, 10 s) closes at the watermark 12500 - 2001
    assert [progress_watermark(p) for p in progress] == [MIN_LONG, MIN_LONG, MIN_LONG, 6_999,
                                                        10_499]


def test_an_element_at_the_epoch_under_the_uncertain_watermark_is_exact(
    spark: Any, tmp_path: Path
) -> None:
    """a@0 in micro-batch 1 meets the uncertain watermark (-2001 or MIN_LONG): its window
    [0, 10 s) ends after the epoch, so neither value makes it late: Flink's results, no error
    (the random scenarios of the crash test meet such elements)."""
    batches = [[ev("a", 1_000, 1)], [ev("a", 0, 2), ev("b", 500, 3)], [ev("a", 12_500, 4)]]
    rows, _ = _run(spark, tmp_path, batches, _tumbling, "view_epoch_element")
    assert rows == [("a", 1_000, 3), ("b", 500, 3)]


def _k(row: Any) -> str:
    return row.k


def test_a_graph_in_one_task_reads_its_own_certain_watermark_after_an_empty_first_batch(
    spark: Any, tmp_path: Path
) -> None:
    """Keyed by a function, the process function's graph runs in one task, which computes its
    source's watermark from the rows it saw: after an empty micro-batch 0 Flink's watermark is
    MIN_LONG for sure (Spark's 0 decides nothing there), then max - 2000 - 1 (it failed as
    uncertain; found by bench/probes/fuzz_graphs.py)."""
    batches = [[], [ev("a", NOW_MS + 1_000, 1)], [ev("a", NOW_MS + 5_000, 2)]]
    rows, _ = _run(spark, tmp_path, batches, lambda s: (
        s.assignTimestampsAndWatermarks(watermark(2000)).key_by(_k, key_type=Types.STRING())
        .process(Watermarks(), output_type="k string, ts long, watermark long")
    ), "view_one_task_empty_first")
    assert rows == [("a", NOW_MS + 1_000, MIN_LONG), ("a", NOW_MS + 5_000, NOW_MS - 1_001)]


def test_a_timer_at_1_ms_waits_undeclared_for_sparks_watermark_to_pass_1(
    spark: Any, tmp_path: Path
) -> None:
    """The difference Spark forces on a timer at 1 ms (docs/spark-semantics.md, "Watermarks"):
    a's window [0, 2) times out at 1; the batch without data after b@2 has Flink's watermark
    1, where Flink fires it, but Spark's timeouts are positive and fire above them, so a key
    group holding it under Spark's watermark 0 wakes only at a watermark above 1 (or with its
    next rows). Declared, Spark's watermark is Flink's shifted, and the window fires then."""
    batches = [[ev("a", 0, 1)], [ev("b", 2, 2)]]

    def build(stream: DataStream) -> Any:
        return (stream.assignTimestampsAndWatermarks(watermark(0)).keyBy("k")
                .window(TumblingEventTimeWindows.of(Time.milliseconds(2))).sum("v"))

    rows, progress = _run(spark, tmp_path / "undeclared", batches, build, "view_timer_at_1")
    assert [progress_watermark(p) for p in progress] == [MIN_LONG, MIN_LONG, 1]
    assert rows == []
    rows, _ = _run(spark, tmp_path / "declared", batches, build, "view_timer_at_1_d", True)
    assert rows == [("a", 0, 1)]


class TimerBeforeElement(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> None:
        ctx.timer_service().register_event_time_timer(value.ts - 1_000)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield ctx.get_current_key(), timestamp, 0


def test_a_timer_before_the_epoch_under_the_uncertain_watermark_fails(
    spark: Any, tmp_path: Path
) -> None:
    """a@500 sets a timer at -500 in micro-batch 0; in batch 1 Flink's watermark -1501 or
    MIN_LONG, which Spark's 0 cannot tell apart, decides whether it is due."""
    with pytest.raises(StreamingQueryException, match=r"timer at -500 .*times_before_1970=True"):
        _run(spark, tmp_path, SMALL_BATCHES, lambda s: (
            s.assignTimestampsAndWatermarks(watermark(2000)).keyBy("k")
            .process(TimerBeforeElement(), output_type="k string, ts long, watermark long")
        ), "view_uncertain_timer")


class EverySecond(Trigger):
    """The docs' OneSecondIntervalTrigger: fires each second of event time from the watermark
    the window's first element meets (Long.MIN_VALUE in micro-batch 0: a timer near it)."""

    first = ValueStateDescriptor("first", Types.BOOLEAN())

    def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> Any:
        if ctx.get_partitioned_state(self.first).value() is None:
            wm = ctx.get_current_watermark()
            ctx.register_event_time_timer(wm + (1000 - wm % 1000))
            ctx.register_event_time_timer(window.max_timestamp())
            ctx.get_partitioned_state(self.first).update(True)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any, ctx: Any) -> Any:
        if time == window.max_timestamp():
            return TriggerResult.FIRE_AND_PURGE
        wm = ctx.get_current_watermark()
        if wm + (1000 - wm % 1000) < window.max_timestamp():
            ctx.register_event_time_timer(wm + (1000 - wm % 1000))
        return TriggerResult.FIRE

    def on_processing_time(self, time: int, window: Any, ctx: Any) -> Any:
        return TriggerResult.CONTINUE

    def clear(self, window: Any, ctx: Any) -> None:
        ctx.get_partitioned_state(self.first).clear()


def test_a_user_trigger_reading_no_watermark_yet_runs_as_in_flink(
    spark: Any, tmp_path: Path
) -> None:
    """Micro-batch 0's watermark is exactly Long.MIN_VALUE: a user trigger reads it and sets
    a timer near it, which the next watermark (after the epoch) fires, as Flink's would."""
    trigger = EverySecond()
    write_batches(tmp_path / "in", NOW_BATCHES)
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", SCHEMA,
        lambda s: s.assignTimestampsAndWatermarks(watermark(2000)).keyBy("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10))).trigger(trigger).sum("v"),
    )
    harness = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(10)), sum_of("v"), key_field="k",
        trigger=trigger,
    )
    assert_matches_harness(run, NOW_BATCHES, harness, ts="ts", delay_ms=2000)
    assert any(run.main.values())


# --------------------------------------------------- checkpoints with a shifted watermark
def _restart(spark: Any, tmp_path: Path, before_1970: bool, name: str) -> list[Any]:
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in")
    )
    sink = MemorySink(name)
    query = _tumbling(DataStream(df, times_before_1970=before_1970)).start(
        main=sink, checkpoint_location=str(tmp_path / "ck"), trigger={"availableNow": True}
    )
    query.awaitTermination()
    return sorted(tuple(r) for b in sink.batches.values() for r in b)


def _shifted_checkpoint(spark: Any, tmp_path: Path) -> None:
    """A checkpoint written declared (its watermark closes [0, 10 s) after the epoch of now),
    then one more batch of input."""
    assert _restart(spark, tmp_path, True, "shifted_first") == [
        ("a", NOW_MS + 1_000, 1), ("b", NOW_MS + 4_000, 2),
    ]
    write_batches(tmp_path / "in", [[ev("a", NOW_MS + 30_000, 8)]], first=len(NOW_BATCHES))


def test_a_shifted_checkpoint_continues_declared_and_is_refused_undeclared(
    spark: Any, tmp_path: Path
) -> None:
    write_batches(tmp_path / "in", NOW_BATCHES)
    _shifted_checkpoint(spark, tmp_path)
    with pytest.raises(IncompatibleRestartError, match=r"times_before_1970: True -> False"):
        _restart(spark, tmp_path, False, "shifted_undeclared")
    # declared as written, it continues: the watermark 28 s - 1 closes [10 s, 20 s)
    assert _restart(spark, tmp_path, True, "shifted_declared") == [("a", NOW_MS + 12_500, 3)]


def test_a_checkpoint_of_an_earlier_flinkwin_is_refused_undeclared(
    spark: Any, tmp_path: Path
) -> None:
    """An earlier flinkwin always shifted the watermark and recorded no declaration."""
    write_batches(tmp_path / "in", NOW_BATCHES)
    _shifted_checkpoint(spark, tmp_path)
    document = tmp_path / "ck" / "flinkwin" / DOCUMENT
    recorded = json.loads(document.read_text())
    del recorded["fingerprint"]["watermark"]["times_before_1970"]
    document.write_text(json.dumps(recorded))
    with pytest.raises(IncompatibleRestartError, match=r"times_before_1970: True -> False"):
        _restart(spark, tmp_path, False, "earlier_undeclared")


def test_a_shifted_watermark_met_undeclared_fails_in_the_stage(
    spark: Any, tmp_path: Path
) -> None:
    """Without the recorded document (a query started otherwise), the stage itself refuses
    Spark's shifted watermark: no event time can make it that large."""
    write_batches(tmp_path / "in", NOW_BATCHES)
    _shifted_checkpoint(spark, tmp_path)
    (tmp_path / "ck" / "flinkwin" / DOCUMENT).unlink()
    shifted = NOW_MS + 10_499 + WATERMARK_SHIFT_MS  # Spark's watermark in the checkpoint
    with pytest.raises(
        StreamingQueryException,
        match=rf"Spark's watermark is {shifted} ms.*shifted for event times before 1970.*Declare",
    ):
        _restart(spark, tmp_path, False, "shifted_no_document")
