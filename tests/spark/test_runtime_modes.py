"""Flink's two execution modes. STREAMING, the default, on streams and static input: each key's
elements reach the window in arrival order (rows of each input partition in order, partitions in
index order, micro-batches in order), whatever the micro-batch boundaries or partitioning, as a
PyFlink program sees them. BATCH (static input only): event-time order."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from pyspark.sql import functions as F
from spark_scenarios import finish_streams, start_streams, write_batches

from flinkwin import (
    CountEvictor,
    DataStream,
    Duration,
    KeyedProcessFunction,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    RuntimeExecutionMode,
    Time,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    Types,
)
from flinkwin.spark import MemorySink
from flinkwin.spark.arrival import _partition_sequence
from flinkwin.watermark import WatermarkStrategy

SCHEMA = "k string, ts long, label string"
# one window [0, 10 s) per key; rows are out of event-time order
ROWS = [("a", 5000, "first"), ("a", 1000, "second"), ("b", 7000, "b1"), ("a", 3000, "third"),
        ("a", 9000, "fourth")]


class Labels(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (key, ",".join(e.label for e in elements))


def _stream(spark: Any, mode: RuntimeExecutionMode | None, slices: int = 3) -> DataStream:
    rdd = spark.sparkContext.parallelize(ROWS, slices)  # several partitions, order kept
    df = spark.createDataFrame(rdd, SCHEMA)
    stream = DataStream(df) if mode is None else DataStream(df, runtime_mode=mode)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
    return stream.assign_timestamps_and_watermarks(strategy)


def _windowed(stream: DataStream) -> Any:
    return stream.key_by(lambda r: r.k, key_type=Types.STRING()).window(
        TumblingEventTimeWindows.of(Time.seconds(10))
    )


def _run(spark: Any, mode: RuntimeExecutionMode | None) -> dict[str, Any]:
    windowed = _windowed(_stream(spark, mode))
    first = windowed.reduce(lambda a, b: a)
    evicted = _windowed(_stream(spark, mode)).evictor(CountEvictor.of(2)).process(
        Labels(), Types.TUPLE([Types.STRING(), Types.STRING()])
    )
    return {
        "first": sorted(r.label for r in first.collect()),
        "labels": sorted(evicted.execute_and_collect()),
    }


def test_streaming_mode_is_the_default_and_keeps_row_order(spark: Any) -> None:
    expected = {
        "first": ["b1", "first"],
        "labels": [("a", "third,fourth"), ("b", "b1")],
    }
    assert _run(spark, None) == expected
    assert _run(spark, RuntimeExecutionMode.STREAMING) == expected


def test_batch_mode_sorts_each_key_by_event_time(spark: Any) -> None:
    expected = {
        "first": ["b1", "second"],
        "labels": [("a", "first,fourth"), ("b", "b1")],
    }
    assert _run(spark, RuntimeExecutionMode.BATCH) == expected
    assert _run(spark, RuntimeExecutionMode.AUTOMATIC) == expected


def test_batch_mode_needs_bounded_input(spark: Any, tmp_path: Any) -> None:
    (tmp_path / "in").mkdir()
    df = spark.readStream.schema(SCHEMA).json(str(tmp_path / "in"))
    stream = DataStream(df, runtime_mode=RuntimeExecutionMode.BATCH)
    with pytest.raises(ValueError, match="BATCH needs bounded input"):
        _windowed(stream.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
        )).reduce(lambda a, b: a)
    with pytest.raises(TypeError, match="runtime_mode must be a RuntimeExecutionMode"):
        DataStream(df, runtime_mode="BATCH")  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------
# Arrival order, whatever the micro-batch boundaries or input partitions
# ------------------------------------------------------------------------------------------
SPLIT_SCHEMA = "k string, ts long, label string, v long"
# arrival order, out of event-time order; every element is in window [0, 10 s) of its key
ARRIVALS = [
    ("a", 5000, "a1"), ("a", 1000, "a2"), ("b", 7000, "b1"), ("a", 3000, "a3"),
    ("b", 2000, "b2"), ("a", 9000, "a4"), ("b", 8000, "b3"), ("a", 4000, "a5"),
]
# the same input over different micro-batch boundaries (or static partitions): sizes in order
SPLITS = {
    "one batch": [8],
    "per element": [1] * 8,
    "3+5": [3, 5],
    "2+1+5": [2, 1, 5],
}
# a last batch whose watermark (60 s - 10 s - 1 ms) closes every window of ARRIVALS
CLOSING = ("z", 60_000, "close")
# out-of-orderness 10 s: no element of ARRIVALS is late, whichever batch it arrives in, and
# no window fires before the closing batch; so Flink's STREAMING mode gives every window its
# key's elements in arrival order, however the input is cut
DELAY_MS = 10_000


def _rows(elements: list[tuple[str, int, str]]) -> list[dict[str, Any]]:
    return [
        {"k": k, "ts": ts, "label": label, "v": i + 1}
        for i, (k, ts, label) in enumerate(elements)
    ]


def _cut(rows: list[Any], sizes: list[int]) -> list[list[Any]]:
    out, start = [], 0
    for size in sizes:
        out.append(rows[start:start + size])
        start += size
    assert start == len(rows)
    return out


class KeyedLabels(ProcessWindowFunction):
    """Records the elements a window function gets, in the order it gets them."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (key, ",".join(e.label for e in elements))


class AllLabels(ProcessAllWindowFunction):
    def process(self, context: Any, elements: Any) -> Any:
        yield ("*", ",".join(e.label for e in elements))


LABELS = Types.TUPLE([Types.STRING(), Types.STRING()])


def _order_pipelines(stream: DataStream) -> dict[str, Any]:
    """The order-sensitive window pipelines of the arrival-order tests, each on another state
    and input path: element lists (column key, heartbeats), columnar panes of a built-in sum
    (the first element's other fields), count windows (key selector: the element stage), a
    CountEvictor on the object operator (windowAll: one key group, no heartbeats)."""
    timed = stream.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(DELAY_MS))
        .with_timestamp_assigner("ts")
    )
    tumbling = TumblingEventTimeWindows.of(Time.seconds(10))
    return {
        "process": timed.key_by("k").window(tumbling).process(KeyedLabels(), LABELS),
        "sum": timed.key_by("k").window(tumbling).sum("v"),
        "count window": timed.key_by(lambda r: r.k, key_type=Types.STRING())
        .count_window(2).process(KeyedLabels(), LABELS),
        "count evictor": timed.window_all(tumbling).evictor(CountEvictor.of(2))
        .process(AllLabels(), LABELS),
    }


def _canon(name: str, rows: list[Any]) -> list[Any]:
    if name == "sum":
        return sorted((r["k"], r["label"], r["v"]) for r in rows)
    return sorted(tuple(r) for r in rows)


# Flink's STREAMING mode: each key's elements in arrival order (a1 a2 a3 a4 a5, b1 b2 b3)
FLINK_STREAMING = {
    "process": [("a", "a1,a2,a3,a4,a5"), ("b", "b1,b2,b3")],
    # the first element's other fields (label a1, not a2 with the earliest timestamp)
    "sum": [("a", "a1", 1 + 2 + 4 + 6 + 8), ("b", "b1", 3 + 5 + 7)],
    "count window": [("a", "a1,a2"), ("a", "a3,a4"), ("b", "b1,b2")],
    "count evictor": [("*", "b3,a5")],
}


@pytest.fixture(scope="module")
def split_runs(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The order pipelines over every split of SPLITS, all started at once as concurrent
    queries of the one session (their small micro-batches overlap instead of waiting for one
    another); each split's test awaits and checks its own."""
    started: dict[str, Any] = {}
    try:
        for n, (split, sizes) in enumerate(SPLITS.items()):
            tmp = tmp_path_factory.mktemp(f"split{n}")
            batches = [*_cut(_rows(ARRIVALS), sizes), _rows([CLOSING])]
            batches[-1][0]["v"] = 0
            write_batches(tmp / "in", batches)
            builds = {name: (lambda s, name=name: _order_pipelines(s)[name])
                      for name in FLINK_STREAMING}
            started[split] = start_streams(spark, tmp / "in", tmp, SPLIT_SCHEMA, builds,
                                           name=f"split{n}_")
        yield started
    finally:
        for queries in started.values():
            for query, _, _ in queries.values():
                query.stop()


@pytest.mark.parametrize("split", list(SPLITS))
def test_window_function_sees_arrival_order_whatever_the_micro_batch_split(
    split_runs: dict[str, Any], split: str
) -> None:
    runs = finish_streams(split_runs[split])
    for name, run in runs.items():
        rows = [r for batch in run.main.values() for r in batch]
        if name != "sum":
            rows = [(r["f0"], r["f1"]) for r in rows]
        assert _canon(name, rows) == FLINK_STREAMING[name], (split, name)


@pytest.mark.parametrize("split", list(SPLITS))
def test_static_input_in_streaming_mode_sees_arrival_order_whatever_the_partitioning(
    spark: Any, split: str
) -> None:
    chunks = _cut(_rows(ARRIVALS), SPLITS[split])
    # one input partition per chunk, in order
    rdd = spark.sparkContext.parallelize(chunks, len(chunks)).flatMap(lambda chunk: chunk)
    assert rdd.glom().map(len).collect() == SPLITS[split]
    df = spark.createDataFrame(rdd.map(lambda r: (r["k"], r["ts"], r["label"], r["v"])),
                               SPLIT_SCHEMA)
    for name, result in _order_pipelines(DataStream(df)).items():
        rows = [r.asDict() for r in result.toDF().collect()]
        if name != "sum":
            rows = [(r["f0"], r["f1"]) for r in rows]
        assert _canon(name, rows) == FLINK_STREAMING[name], (split, name)


def test_arrival_order_within_a_micro_batch_is_partition_by_partition(
    spark: Any, tmp_path: Path
) -> None:
    """One micro-batch reads two files, each its own input partition: a window sees each
    partition's rows in their order there (timestamps decreasing, so not event-time order),
    partitions in index order, exactly as monotonically_increasing_id() orders the same files
    read as a static DataFrame. The rows cross Spark's shuffle from two map partitions."""
    def rows(file: str, n: int) -> list[dict[str, Any]]:
        return [
            {"k": "ab"[i % 2], "ts": 9_000 - i * 10, "label": f"{file}{i}", "v": i}
            for i in range(n)
        ]

    files = {"x": rows("x", 40), "y": rows("y", 25)}
    source = tmp_path / "in"
    source.mkdir()
    for name, content in files.items():
        (source / f"{name}.json").write_text("".join(json.dumps(r) + "\n" for r in content))
    # arrival order as defined: the static read's row order (partition by partition)
    static = spark.read.schema(SPLIT_SCHEMA).json(str(source))
    assert static.rdd.getNumPartitions() == 2
    ordered = static.withColumn("seq", F.monotonically_increasing_id()).orderBy("seq").collect()
    expected = sorted(
        (k, ",".join(r.label for r in ordered if r.k == k)) for k in ("a", "b")
    )
    firsts = [ordered[0].label[0], ordered[-1].label[0]]
    assert sorted(firsts) == ["x", "y"]  # one file after the other
    # the closing row arrives in a later batch and closes the window
    sink = MemorySink("partition_order")
    stream = DataStream(spark.readStream.schema(SPLIT_SCHEMA).json(str(source)))
    timed = stream.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(DELAY_MS))
        .with_timestamp_assigner("ts")
    )
    result = timed.key_by("k").window(TumblingEventTimeWindows.of(Time.seconds(10))).process(
        KeyedLabels(), LABELS
    )
    query = result.start(main=sink, checkpoint_location=str(tmp_path / "cp"),
                         trigger={"availableNow": True})
    query.awaitTermination()
    k, ts, label = CLOSING
    (source / "z.json").write_text(json.dumps({"k": k, "ts": ts, "label": label, "v": 0}))
    os.utime(source / "z.json", (2_000_000_000, 2_000_000_000))
    query = result.start(main=sink, checkpoint_location=str(tmp_path / "cp"),
                         trigger={"availableNow": True})
    query.awaitTermination()
    got = sorted((r.f0, r.f1) for r in sink.rows())
    assert got == expected


def test_arrival_sequence_is_monotonically_increasing_ids_value_across_arrow_batches() -> None:
    """A stream's arrival sequence (the pandas UDF over ``spark_partition_id()``) counts a
    partition's rows across its Arrow batches: ``partition << 33 | position``."""
    batches = [pd.Series([3] * 4), pd.Series([], dtype="int32"), pd.Series([3] * 2)]
    got = np.concatenate([s.to_numpy() for s in _partition_sequence(iter(batches))])
    assert got.tolist() == [(3 << 33) + i for i in range(6)]


class _Periodic(KeyedProcessFunction):
    """A timer 100 ms after each element; every timer registers the next one 1 ms later."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        ctx.timer_service().register_event_time_timer(value.ts + 100)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        if timestamp < 1_000_105:  # (a bound for STREAMING mode, where the timers fire on)
            ctx.timer_service().register_event_time_timer(timestamp + 1)
        yield ctx.get_current_key(), timestamp


class _Downstream(KeyedProcessFunction):
    """A timer 1 ms after each element's timestamp; every timer registers the next one."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        if timestamp < 1_000_105:
            ctx.timer_service().register_event_time_timer(timestamp + 1)
        yield ctx.get_current_key(), -timestamp


def test_batch_mode_ignores_timers_registered_by_timer_callbacks(spark: Any) -> None:
    """Flink's BATCH mode fires a key's timers at the end of its input with its timer service
    quiesced (BatchExecutionInternalTimeService): a timer registered in ``on_timer`` is
    ignored, where STREAMING mode fires it at the end-of-input watermark. In a graph each
    operator ends after all of its input: the downstream timers its elements register fire."""
    df = spark.createDataFrame([("a", 1_000_000), ("b", 1_000_000)], "k string, ts long")
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")

    def run(mode: RuntimeExecutionMode, downstream: bool) -> list[tuple[Any, ...]]:
        stream = DataStream(df, runtime_mode=mode).assign_timestamps_and_watermarks(strategy)
        out = stream.key_by("k").process(_Periodic(), output_type="k string, t long")
        if downstream:
            out = out.key_by("k").process(_Downstream(), output_type="k string, t long")
        return sorted(tuple(r) for r in out.toDF().collect())

    assert run(RuntimeExecutionMode.BATCH, False) == [("a", 1_000_100), ("b", 1_000_100)]
    assert run(RuntimeExecutionMode.BATCH, True) == [("a", -1_000_101), ("b", -1_000_101)]
    assert run(RuntimeExecutionMode.STREAMING, False) == [
        (k, t) for k in "ab" for t in range(1_000_100, 1_000_106)]


class _InAnHour(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        service = ctx.timer_service()
        service.register_processing_time_timer(service.current_processing_time() + 3_600_000)
        yield value.k, "element"

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield ctx.get_current_key(), "timer"


def test_pending_processing_time_timers_fire_at_the_end_of_input_in_batch_mode_only(
    spark: Any,
) -> None:
    """At the end of a bounded input Flink's STREAMING mode quiesces the processing-time
    service (FLINK-14231, StreamOperatorWrapper): a timer or window not yet due never fires.
    BATCH mode fires every timer of a key when its input ends."""
    df = spark.createDataFrame([("a", 1), ("b", 1), ("a", 2)], "k string, v long")

    def run(mode: RuntimeExecutionMode) -> tuple[list[Any], list[Any]]:
        stream = DataStream(df, runtime_mode=mode)
        timers = stream.key_by("k").process(_InAnHour(), output_type="k string, what string")
        windows = stream.key_by("k").window(
            TumblingProcessingTimeWindows.of(Time.hours(24))).sum("v")
        return (sorted(tuple(r) for r in timers.toDF().collect()),
                sorted(tuple(r) for r in windows.toDF().collect()))

    elements = [("a", "element"), ("a", "element"), ("b", "element")]
    assert run(RuntimeExecutionMode.STREAMING) == (elements, [])
    assert run(RuntimeExecutionMode.BATCH) == (
        sorted(elements + [("a", "timer"), ("b", "timer")]), [("a", 3), ("b", 1)])
