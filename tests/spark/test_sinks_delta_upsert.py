"""DeltaUpsertSink with delta-rs: one row per key and window, each window's latest firing,
exactly once (a replayed batch changes nothing); the outputs it refuses, naming the fix; and a
stream of early, on-time and late firings over several micro-batches (docs/sinks.md)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from deltalake import DeltaTable
from spark_scenarios import run_stream, watermark, write_batches

from flinkwin import (
    ContinuousEventTimeTrigger,
    EventTimeSessionWindows,
    PurgingTrigger,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.datastream import DataStream
from flinkwin.sinks import DeltaSink, DeltaUpsertSink, SinkContext, UpsertRefusedError, as_sink
from flinkwin.sinks.base import WindowOutput
from flinkwin.triggers import EventTimeTrigger, Trigger, TriggerResult

RESULT = ("k STRING, v BIGINT, window_start TIMESTAMP, window_end TIMESTAMP, "
          "firing_timing STRING, firing_index BIGINT, firing_is_last BOOLEAN")
FACTS = WindowOutput(("k",), True, True, "ContinuousEventTimeTrigger(5)", False)


def _t(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def row(k: str | None, v: int, start: int, timing: str, index: int, last: bool = False) -> tuple:
    return (k, v, _t(start), _t(start + 10), timing, index, last)


def table_rows(path: Path, version: int | None = None) -> list[tuple]:
    rows = DeltaTable(str(path), version=version).to_pyarrow_table().to_pylist()
    return sorted(
        ((r["k"], r["v"], int(r["window_start"].timestamp() * 1000), r["firing_timing"],
          r["firing_index"]) for r in rows),
        key=lambda r: (r[0] or "", r[2]),
    )


def opened(spark: Any, path: Path, checkpoint: Path | None = None,
           facts: WindowOutput | None = FACTS, schema: str = RESULT, **kw: Any) -> Any:
    sink = DeltaUpsertSink(str(path), engine="deltalake", **kw)
    sink.open(SinkContext(spark, spark.createDataFrame([], schema).schema, "main",
                          None if checkpoint is None else str(checkpoint), facts))
    return sink


def test_each_window_keeps_its_latest_firing_across_batches(spark: Any, tmp_path: Path) -> None:
    sink = opened(spark, tmp_path / "t", tmp_path / "ck")
    batches = [
        [row("a", 3, 0, "EARLY", 0), row("b", 4, 0, "EARLY", 0)],
        [row("a", 11, 0, "ON_TIME", 1), row(None, 1, 0, "ON_TIME", 0)],   # a null key too
        [row("a", 27, 0, "LATE", 2), row("a", 5, 10, "EARLY", 0), row(None, 2, 0, "LATE", 1)],
    ]
    for batch_id, rows in enumerate(batches):
        sink.write_batch(spark.createDataFrame(rows, RESULT), batch_id)
    assert table_rows(tmp_path / "t") == [
        (None, 2, 0, "LATE", 1), ("a", 27, 0, "LATE", 2), ("a", 5, 10, "EARLY", 0),
        ("b", 4, 0, "EARLY", 0),
    ]
    table = DeltaTable(str(tmp_path / "t"))
    assert table.transaction_version(sink.resolved_app_id) == 2
    assert [h["operation"] for h in table.history()][:3] == ["MERGE"] * 3


def test_a_replayed_batch_changes_nothing(spark: Any, tmp_path: Path) -> None:
    sink = opened(spark, tmp_path / "t", tmp_path / "ck")
    first = [row("a", 3, 0, "EARLY", 0)]
    second = [row("a", 11, 0, "ON_TIME", 1)]
    sink.write_batch(spark.createDataFrame(first, RESULT), 0)
    sink.write_batch(spark.createDataFrame(second, RESULT), 1)
    version = DeltaTable(str(tmp_path / "t")).version()
    # Spark re-runs batch 1 after a crash (same id, same rows): skipped, no commit
    sink.write_batch(spark.createDataFrame(second, RESULT), 1)
    # a restart from the same checkpoint writes under the same app id: batch 0 is skipped too
    again = opened(spark, tmp_path / "t", tmp_path / "ck")
    assert again.resolved_app_id == sink.resolved_app_id
    again.write_batch(spark.createDataFrame(first, RESULT), 0)
    assert DeltaTable(str(tmp_path / "t")).version() == version
    assert table_rows(tmp_path / "t") == [("a", 11, 0, "ON_TIME", 1)]
    # the merge alone is idempotent and never goes back: under another app id (no
    # transaction to skip), older firings and the same firing again leave the row as it is
    other = opened(spark, tmp_path / "t", tmp_path / "ck", app_id=None)
    other._app_id = "another-writer"
    other.write_batch(spark.createDataFrame(first + second, RESULT), 0)
    assert table_rows(tmp_path / "t") == [("a", 11, 0, "ON_TIME", 1)]
    # a new query (new checkpoint, or none) on a table with rows would start its firing
    # indexes at 0 under the old rows: refused
    for checkpoint in (tmp_path / "ck2", None):
        with pytest.raises(UpsertRefusedError, match="already holds rows and this query"):
            opened(spark, tmp_path / "t", checkpoint)
    assert not (tmp_path / "ck2" / "flinkwin" / "sinks.json").exists()


def test_several_firings_of_one_window_in_one_batch_keep_the_greatest_index(
    spark: Any, tmp_path: Path
) -> None:
    sink = opened(spark, tmp_path / "t")
    rows = [row("a", 27, 0, "LATE", 2), row("a", 3, 0, "EARLY", 0),
            row("a", 11, 0, "ON_TIME", 1), row("b", 1, 0, "EARLY", 0)]
    sink.write_batch(spark.createDataFrame(rows, RESULT), 0)
    assert table_rows(tmp_path / "t") == [("a", 27, 0, "LATE", 2), ("b", 1, 0, "EARLY", 0)]
    sink.write_batch(spark.createDataFrame([row("a", 30, 0, "LATE", 3),
                                            row("a", 28, 0, "LATE", 4)], RESULT), 1)
    assert table_rows(tmp_path / "t") == [("a", 28, 0, "LATE", 4), ("b", 1, 0, "EARLY", 0)]


def test_one_firing_with_two_rows_is_refused(spark: Any, tmp_path: Path) -> None:
    sink = opened(spark, tmp_path / "t")
    rows = [row("a", 1, 0, "EARLY", 0), row("a", 2, 0, "EARLY", 0)]
    with pytest.raises(UpsertRefusedError, match="one firing emitted 2 rows"):
        sink.write_batch(spark.createDataFrame(rows, RESULT), 0)
    assert DeltaTable(str(tmp_path / "t")).to_pyarrow_table().num_rows == 0


def test_quoted_key_names_and_declared_keys(spark: Any, tmp_path: Path) -> None:
    schema = RESULT.replace("k STRING", "`User Id` STRING")
    facts = WindowOutput(None, True, True, "EventTimeTrigger()", False)  # a key selector
    with pytest.raises(UpsertRefusedError, match=r"keyed by a function.*keys=\['<column>'"):
        opened(spark, tmp_path / "t", facts=facts, schema=schema)
    sink = opened(spark, tmp_path / "t", facts=facts, schema=schema, keys="User Id")
    sink.write_batch(spark.createDataFrame([row("a", 1, 0, "EARLY", 0)], schema), 0)
    sink.write_batch(spark.createDataFrame([row("a", 2, 0, "LATE", 1)], schema), 1)
    got = DeltaTable(str(tmp_path / "t")).to_pyarrow_table().to_pylist()
    assert [(r["User Id"], r["v"], r["firing_index"]) for r in got] == [("a", 2, 1)]


def test_outputs_it_cannot_follow_are_refused_naming_the_fix(spark: Any, tmp_path: Path) -> None:
    def refused(facts: WindowOutput | None, match: str, schema: str = RESULT, **kw: Any) -> None:
        with pytest.raises(UpsertRefusedError, match=match):
            opened(spark, tmp_path / "t", facts=facts, schema=schema, **kw)

    refused(None, "not one .a side output, or a stream graph.: use DeltaSink")
    no_firing = WindowOutput(("k",), True, False, "EventTimeTrigger()", False)
    refused(no_firing, r"missing \['firing_index'\].*with_window=True, with_firing=True",
            schema="k STRING, v BIGINT, window_start TIMESTAMP, window_end TIMESTAMP")
    refused(WindowOutput(("k",), True, True, "PurgingTrigger(...)", True),
            "purges the window .* an increment .* drop PurgingTrigger")
    refused(WindowOutput(("k",), True, True, "Mine()", None), "replacing_trigger=True")
    opened(spark, tmp_path / "t", facts=WindowOutput(("k",), True, True, "Mine()", None),
           replacing_trigger=True)
    refused(WindowOutput(("k",), True, True, "EventTimeTrigger()", False, "Sessions(5)"),
            "merges windows, and a merged-away window's row would stay")
    refused(WindowOutput(("user",), True, True, "EventTimeTrigger()", False),
            r"key column\(s\) \['user'\] are not in the output.*keys=\[")


def test_sink_strings_and_job_specs(tmp_path: Path) -> None:
    from flinkwin.job.config import sink_from_spec

    for make in (as_sink, sink_from_spec):
        sink = make(f"delta-upsert:{tmp_path / 't'}")
        assert isinstance(sink, DeltaUpsertSink) and sink.path == str(tmp_path / "t")
        table = make("delta-upsert-table:cat.db.t")
        assert isinstance(table, DeltaUpsertSink) and table.table == "cat.db.t"
    spec = sink_from_spec({"format": "delta-upsert", "path": "/t", "keys": ["k"],
                           "engine": "deltalake"})
    assert isinstance(spec, DeltaUpsertSink) and spec.keys == ["k"]
    assert spec.engine == "deltalake"


# ------------------------------------------------------------------ a stream, end to end
SCHEMA = "k STRING, v LONG, ts LONG"
# [0, 10) windows with an early firing every 5 ms of event time and 20 ms allowed lateness; the
# watermark (no delay) of a batch is the max ts of the batches before it
# (b's [40, 50) never fires: its first timer, at 45, stays ahead of the watermark)
BATCHES = [
    [{"k": "a", "v": 1, "ts": 1}, {"k": "b", "v": 2, "ts": 2}],
    [{"k": "a", "v": 4, "ts": 6}],                      # wm 2: nothing fires
    [{"k": "a", "v": 8, "ts": 7}, {"k": "b", "v": 16, "ts": 9}],  # wm 6: a, b [0, 10) EARLY
    [{"k": "a", "v": 32, "ts": 13}],                    # wm 9: a, b [0, 10) ON_TIME at 9
    [{"k": "c", "v": 64, "ts": 14}],                    # wm 13
    [{"k": "a", "v": 128, "ts": 3}],                    # wm 14: a [0, 10) LATE (141)
    [{"k": "b", "v": 256, "ts": 40}],                   # wm 14
    [{"k": "b", "v": 512, "ts": 41}],                   # wm 40: a, c [10, 20) EARLY, ON_TIME
]


def _early_and_late(stream: DataStream) -> Any:
    return (
        stream.assign_timestamps_and_watermarks(watermark(0)).key_by("k")
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .trigger(ContinuousEventTimeTrigger.of(Time.milliseconds(5)))
        .allowed_lateness(Time.milliseconds(20))
        .sum("v", with_window=True, with_firing=True)
    )


def test_a_stream_of_early_on_time_and_late_firings_keeps_each_windows_last(
    spark: Any, tmp_path: Path
) -> None:
    write_batches(tmp_path / "in", BATCHES)
    stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(
        str(tmp_path / "in"))
    # Spark's writeStream idiom, the key columns as an option
    query = (_early_and_late(DataStream(stream)).writeStream.format("delta-upsert")
             .option("keys", "k").option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(availableNow=True).start(str(tmp_path / "t")))
    query.awaitTermination()
    # every firing, from the same pipeline into memory
    every = run_stream(spark, tmp_path / "in", tmp_path / "ck-all", SCHEMA, _early_and_late)
    firings = [r for rows in every.main.values() for r in rows]
    last: dict[tuple, dict] = {}
    for f in sorted(firings, key=lambda f: f["firing_index"]):
        last[(f["k"], f["window_start"])] = f
    expected = sorted(
        ((f["k"], f["v"], int(f["window_start"].timestamp() * 1000), f["firing_timing"],
          f["firing_index"]) for f in last.values()), key=lambda r: (r[0], r[2]))
    got = table_rows(tmp_path / "t")
    assert got == expected
    # the final sums by hand; a's [0, 10) was corrected in place by its late firing
    assert [(k, v, start) for k, v, start, _, _ in got] == [
        ("a", 141, 0), ("a", 32, 10), ("b", 18, 0), ("c", 64, 10)]
    assert got[0][:4] == ("a", 141, 0, "LATE") and got[0][4] >= 2
    # the firings the table went through: an early row of an open window was visible before
    # its on-time one, and no version ever held two rows of one key and window
    table = DeltaTable(str(tmp_path / "t"))
    seen = set()
    for version in range(table.version() + 1):
        rows = table_rows(tmp_path / "t", version)
        assert len({(r[0], r[2]) for r in rows}) == len(rows), version
        seen |= {(r[0], r[2], r[3]) for r in rows}
    assert {("a", 0, "EARLY"), ("a", 0, "ON_TIME"), ("a", 0, "LATE")} <= seen
    assert len(firings) == 9  # a, b [0, 10) early; a's late; a, c [10, 20) early and on time


def test_a_pipeline_it_cannot_follow_fails_at_start(spark: Any, tmp_path: Path) -> None:
    df = spark.createDataFrame([("a", 1, 1)], SCHEMA)
    keyed = DataStream(df).assign_timestamps_and_watermarks(watermark(0)).key_by("k")
    purging = keyed.window(TumblingEventTimeWindows.of(Time.milliseconds(10))).trigger(
        PurgingTrigger.of(ContinuousEventTimeTrigger.of(Time.milliseconds(5))))
    with pytest.raises(UpsertRefusedError, match="purges the window"):
        purging.sum("v", with_window=True, with_firing=True).start(
            main=DeltaUpsertSink(str(tmp_path / "p"), engine="deltalake"))
    sessions = keyed.window(EventTimeSessionWindows.with_gap(Time.milliseconds(5)))
    with pytest.raises(UpsertRefusedError, match="merges windows"):
        sessions.sum("v", with_window=True, with_firing=True).start(
            main=f"delta-upsert:{tmp_path / 's'}")
    plain = keyed.window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
    with pytest.raises(UpsertRefusedError, match="with_window=True, with_firing=True"):
        plain.sum("v", with_window=True).start(main=f"delta-upsert:{tmp_path / 'w'}")

    class Mine(Trigger):
        def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> Any:
            return TriggerResult.FIRE

        def on_event_time(self, time: int, window: Any, ctx: Any) -> Any:
            return TriggerResult.CONTINUE

        def on_processing_time(self, time: int, window: Any, ctx: Any) -> Any:
            return TriggerResult.CONTINUE

        def clear(self, window: Any, ctx: Any) -> None:
            return None

    with pytest.raises(UpsertRefusedError, match="replacing_trigger=True"):
        plain.trigger(Mine()).sum("v", with_window=True, with_firing=True).start(
            main=f"delta-upsert:{tmp_path / 'm'}")
    # a purging trigger that fires each window once is a replacement: accepted (static input)
    once = plain.trigger(PurgingTrigger.of(EventTimeTrigger.create()))
    once.sum("v", with_window=True, with_firing=True).start(
        main=DeltaUpsertSink(str(tmp_path / "o"), engine="deltalake"))
    assert table_rows(tmp_path / "o") == [("a", 1, 0, "ON_TIME", 0)]
    assert isinstance(as_sink(f"delta:{tmp_path}"), DeltaSink)
