"""Firing metadata on Spark (``with_firing=True``, ``context.firing()``): static input, and
streams over several micro-batch splits (docs/firings.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import run_stream, run_streams, watermark, write_batches

from flinkwin import (
    ContinuousEventTimeTrigger,
    CountTrigger,
    EventTimeSessionWindows,
    ProcessWindowFunction,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.datastream import DataStream
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.spark import PipelineError

SCHEMA = "k STRING, v LONG, ts LONG"
TUMBLE = TumblingEventTimeWindows.of(Time.milliseconds(10))


def firings(rows: list[Any]) -> list[tuple[Any, ...]]:
    """(k, window_start ms, v, timing, index, is_last), in firing order per key and window."""
    out = []
    for r in rows:
        d = r if isinstance(r, dict) else r.asDict()
        start = d["window_start"]
        ms = None if start is None else int(start.timestamp() * 1000)
        out.append((d["k"], ms, d["v"], d["firing_timing"], d["firing_index"],
                    d["firing_is_last"]))
    return sorted(out, key=lambda f: (f[0], f[1], f[4]))


def test_static_input_early_firings_then_on_time_at_the_end_of_input(spark: Any) -> None:
    df = spark.createDataFrame(
        [("a", 1, 1), ("a", 2, 4), ("b", 4, 12), ("a", 8, 7)], SCHEMA
    )
    result = (
        DataStream(df, runtime_mode=RuntimeExecutionMode.BATCH)
        .assign_timestamps_and_watermarks(watermark(0))
        .key_by("k")
        .window(TUMBLE)
        .trigger(ContinuousEventTimeTrigger.of(Time.milliseconds(5)))
        .sum("v", with_window=True, with_firing=True)
    )
    schema = result.toDF().schema
    assert [(f.name, f.dataType.simpleString()) for f in schema.fields[-3:]] == [
        ("firing_timing", "string"), ("firing_index", "bigint"), ("firing_is_last", "boolean"),
    ]
    # BATCH mode: all elements, then the end-of-input watermark; each window's continuous
    # timer at 5 fires EARLY (it sees its own time), its end ON_TIME and last
    assert firings(result.toDF().collect()) == [
        ("a", 0, 11, "EARLY", 0, False),
        ("a", 0, 11, "ON_TIME", 1, True),
        ("b", 10, 4, "EARLY", 0, False),
        ("b", 10, 4, "ON_TIME", 1, True),
    ]


class Describe(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        f = context.firing()
        yield {"k": key, "n": len(list(elements)), "timing": f.timing, "index": f.index,
               "nonspeculative": f.nonspeculative_index, "first": f.is_first}


def test_context_firing_in_a_process_window_function_on_merging_sessions(spark: Any) -> None:
    df = spark.createDataFrame([("a", 1, 1), ("a", 1, 4), ("a", 1, 30)], SCHEMA)
    result = (
        DataStream(df, runtime_mode=RuntimeExecutionMode.BATCH)
        .assign_timestamps_and_watermarks(watermark(0))
        .key_by("k")
        .window(EventTimeSessionWindows.with_gap(Time.milliseconds(5)))
        .process(Describe(), output_schema="k STRING, n INT, timing STRING, index LONG, "
                 "nonspeculative LONG, first BOOLEAN", with_firing=True)
    )
    got = sorted(tuple(r) for r in result.toDF().collect())
    # [1, 6) and [4, 9) merged into [1, 9): one window, one on-time firing; [30, 35) another
    assert [g[:6] for g in got] == [
        ("a", 1, "ON_TIME", 0, 0, True), ("a", 2, "ON_TIME", 0, 0, True)
    ]


# A stream: a's and b's [0, 10) fire on time when batch C's watermark (11) passes them, then a's
# late elements (allowed lateness 20) re-fire it, one firing each.
A = [{"k": "a", "v": 1, "ts": 1}, {"k": "a", "v": 2, "ts": 2}, {"k": "b", "v": 4, "ts": 3}]
B = [{"k": "a", "v": 8, "ts": 12}]
C = [{"k": "a", "v": 16, "ts": 4}]
D = [{"k": "a", "v": 32, "ts": 5}]
SPLITS = {
    "one file each": [A, B, C, D],
    "a split and a merged batch": [A[:2], A[2:], B, C + D],
    "the first two merged": [A + B, C, D],
}
EXPECTED = [
    ("a", 0, 3, "ON_TIME", 0, False),
    ("a", 0, 19, "LATE", 1, False),
    ("a", 0, 51, "LATE", 2, False),
    ("b", 0, 4, "ON_TIME", 0, False),
]


def lateness_pipeline(stream: DataStream) -> Any:
    return (
        stream.assign_timestamps_and_watermarks(watermark(0))
        .key_by("k")
        .window(TUMBLE)
        .allowed_lateness(Time.milliseconds(20))
        .sum("v", with_window=True, with_firing=True)
    )


def _split_runs(spark: Any, tmp_path: Path, build: Any) -> dict[str, Any]:
    """``build`` over every split of SPLITS, as concurrent queries."""
    inputs = {}
    for i, (name, batches) in enumerate(SPLITS.items()):
        write_batches(tmp_path / f"in-{i}", batches)
        inputs[name] = (tmp_path / f"in-{i}", tmp_path / f"cp-{i}")
    return run_streams(spark, inputs, SCHEMA, build)


def test_streamed_firings_are_the_same_whatever_the_micro_batch_split(
    spark: Any, tmp_path: Path
) -> None:
    for name, run in _split_runs(spark, tmp_path, lateness_pipeline).items():
        rows = [r for batch in run.main.values() for r in batch]
        assert firings(rows) == EXPECTED, name


def test_count_trigger_firings_are_early_then_on_time_whatever_the_split(
    spark: Any, tmp_path: Path
) -> None:
    """CountTrigger.of(2) on [0, 10) with lateness 20: a's first two elements fire it while the
    watermark is before its end (EARLY, index 0); its next two arrive after the watermark
    passed 9 (batch C's watermark 11) and fire it ON_TIME, the first non-early firing of a
    window that had elements before (index 1); b's one element and a's [10, 20) never fire."""
    def counting(stream: DataStream) -> Any:
        return (
            stream.assign_timestamps_and_watermarks(watermark(0))
            .key_by("k")
            .window(TUMBLE)
            .trigger(CountTrigger.of(2))
            .allowed_lateness(Time.milliseconds(20))
            .sum("v", with_window=True, with_firing=True)
        )

    for name, run in _split_runs(spark, tmp_path, counting).items():
        rows = [r for batch in run.main.values() for r in batch]
        assert firings(rows) == [
            ("a", 0, 3, "EARLY", 0, False),
            ("a", 0, 51, "ON_TIME", 1, False),
        ], name


def test_firing_index_keeps_increasing_across_a_restart(spark: Any, tmp_path: Path) -> None:
    source, checkpoint = tmp_path / "in", tmp_path / "cp"
    write_batches(source, [A, B, C])
    first = run_stream(spark, source, checkpoint, SCHEMA, lateness_pipeline)
    write_batches(source, [D], first=3)  # the restarted query reads the new file only
    second = run_stream(spark, source, checkpoint, SCHEMA, lateness_pipeline)
    rows = [r for run in (first, second) for batch in run.main.values() for r in batch]
    assert firings(rows) == EXPECTED
    assert [f[4] for f in firings([r for b in second.main.values() for r in b])] == [2]


def test_with_firing_refuses_a_clash_and_a_stream_graph(spark: Any) -> None:
    df = spark.createDataFrame([("a", 1, 1)], "k STRING, firing_index LONG, ts LONG")
    stream = DataStream(df).assign_timestamps_and_watermarks(watermark(0)).key_by("k")
    with pytest.raises(PipelineError, match=r"with_firing=True adds \['firing_index'\]"):
        stream.window(TUMBLE).sum("firing_index", with_firing=True)
    events = DataStream(spark.createDataFrame([("a", 1, 1)], SCHEMA))
    windowed = events.assign_timestamps_and_watermarks(watermark(0)).key_by("k").window(TUMBLE)
    # a window after a window is one stream graph: neither may carry firing columns
    with pytest.raises(PipelineError, match="with_firing=True is not supported inside a stream"):
        windowed.sum("v").key_by("k").window(TUMBLE).sum("v", with_firing=True)
    with pytest.raises(PipelineError, match="with_firing=True is not supported inside a stream"):
        windowed.sum("v", with_firing=True).key_by("k").window(TUMBLE).sum("v")

