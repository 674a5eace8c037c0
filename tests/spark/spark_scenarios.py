"""Helpers for multi-batch streaming scenarios and their replay through the core harness.

A scenario's input is a list of micro-batches (lists of dict rows). Each batch is written as one
JSON file with an increasing modification time; the stream reads them with
``maxFilesPerTrigger=1`` under ``trigger(availableNow=True)``, so Spark batch ``i`` holds file
``i`` (Spark may append no-data batches at the end, to advance the watermark).

The replay feeds the same batches to ``WindowOperatorHarness`` as the runtime does:
for each Spark batch, Flink's watermark (recovered from Spark's; ``MIN_LONG`` before the
first), then the batch's elements in arrival order (the file's row order: Flink's STREAMING
mode).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from batch_files import write_batches as write_batches

from flinkwin import AggregateFunction, OutputTag
from flinkwin.datastream import DataStream
from flinkwin.datastream.window_result_stream import WindowResultStream
from flinkwin.spark import MemorySink
from flinkwin.spark.watermarks import progress_watermark
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MIN_LONG
from flinkwin.watermark import WatermarkStrategy


@dataclass
class StreamRun:
    """What one streaming query produced, batch by batch."""

    main: dict[int, list[dict[str, Any]]]
    sides: dict[str, dict[int, list[dict[str, Any]]]]
    #: Flink's watermark per batch, from Spark's progress (``MIN_LONG``: none yet, or, unless
    #: the stream declares times before 1970, at or before the epoch)
    watermarks: list[int]
    input_rows: list[int]
    times_before_1970: bool = False


def run_stream(
    spark: Any,
    source_dir: Path,
    checkpoint: Path,
    schema: str,
    build: Callable[[DataStream], WindowResultStream],
    side_tags: Sequence[OutputTag] = (),
    type_info: Any = None,
    times_before_1970: bool = False,
) -> StreamRun:
    """Run ``build(DataStream(stream of source_dir, type_info=type_info, times_before_1970=
    times_before_1970))`` to completion under availableNow."""
    return _finish(*_start(spark, source_dir, checkpoint, schema, build, side_tags, type_info,
                           "scenario", times_before_1970), times_before_1970)


def run_streams(
    spark: Any,
    inputs: dict[str, tuple[Path, Path]],
    schema: str,
    build: Callable[[DataStream], WindowResultStream],
) -> dict[str, StreamRun]:
    """:func:`run_stream` of ``build`` over each of ``inputs`` (``{name: (source_dir,
    checkpoint)}``), as concurrent queries of the one session: independent queries, their
    small micro-batches overlap instead of waiting for one another."""
    started = {
        key: _start(spark, source, checkpoint, schema, build, (), None, f"inputs{i}")
        for i, (key, (source, checkpoint)) in enumerate(inputs.items())
    }
    return finish_streams(started)


def start_streams(
    spark: Any,
    source_dir: Path,
    checkpoints: Path,
    schema: str,
    builds: dict[str, Callable[[DataStream], WindowResultStream]],
    name: str = "scenario",
) -> dict[str, tuple[Any, MemorySink, dict[OutputTag, MemorySink]]]:
    """Start each of ``builds`` as :func:`run_stream` runs it, over the same input, as
    concurrent queries of the one session (a checkpoint each under ``checkpoints``; ``name``
    prefixes their sinks' views): independent queries, their small micro-batches overlap
    instead of waiting for one another. :func:`finish_streams` awaits them."""
    return {
        key: _start(spark, source_dir, checkpoints / f"cp-{i}", schema, build, (), None,
                    f"{name}{i}")
        for i, (key, build) in enumerate(builds.items())
    }


def finish_streams(
    started: dict[str, tuple[Any, MemorySink, dict[OutputTag, MemorySink]]]
) -> dict[str, StreamRun]:
    """Await the queries of :func:`start_streams`; what each produced."""
    return {key: _finish(*parts) for key, parts in started.items()}


def _start(
    spark: Any,
    source_dir: Path,
    checkpoint: Path,
    schema: str,
    build: Callable[[DataStream], WindowResultStream],
    side_tags: Sequence[OutputTag],
    type_info: Any,
    name: str,
    times_before_1970: bool = False,
) -> tuple[Any, MemorySink, dict[OutputTag, MemorySink]]:
    df = (
        spark.readStream.schema(schema)
        .option("maxFilesPerTrigger", 1)
        .json(str(source_dir))
    )
    result = build(DataStream(df, type_info=type_info, times_before_1970=times_before_1970))
    main = MemorySink(f"{name}_main")
    sides = {tag: MemorySink(f"{name}_{tag.tag_id}") for tag in side_tags}
    query = result.start(
        main=main,
        side_outputs=sides,
        checkpoint_location=str(checkpoint),
        trigger={"availableNow": True},
    )
    return query, main, sides


def _finish(
    query: Any, main: MemorySink, sides: dict[OutputTag, MemorySink],
    times_before_1970: bool = False,
) -> StreamRun:
    query.awaitTermination()
    progress = sorted(query.recentProgress, key=lambda p: p["batchId"])
    return StreamRun(
        main={b: [r.asDict() for r in rows] for b, rows in main.batches.items()},
        sides={
            tag.tag_id: {b: [r.asDict() for r in rows] for b, rows in sink.batches.items()}
            for tag, sink in sides.items()
        },
        watermarks=[progress_watermark(p, times_before_1970) for p in progress],
        input_rows=[p["numInputRows"] for p in progress],
        times_before_1970=times_before_1970,
    )


def expected_watermarks(
    batches: Sequence[Sequence[dict[str, Any]]], ts: str, delay_ms: int, n: int
) -> list[int]:
    """Spark's watermark at each of ``n`` batches: Flink's ``BoundedOutOfOrdernessWatermarks``
    value ``max(event time of earlier batches) - delay - 1`` (``MIN_LONG`` before any), never
    decreasing."""
    marks, current, seen = [], MIN_LONG, None
    for i in range(n):
        marks.append(current)
        rows = batches[i] if i < len(batches) else []
        for r in rows:
            seen = r[ts] if seen is None else max(seen, r[ts])
        if seen is not None:
            current = max(current, seen - delay_ms - 1)
    return marks


@dataclass
class Replay:
    main: dict[int, list[Any]] = field(default_factory=dict)
    sides: dict[str, dict[int, list[Any]]] = field(default_factory=dict)


def replay(
    harness: WindowOperatorHarness,
    batches: Sequence[Sequence[dict[str, Any]]],
    watermarks: Sequence[int] | None,
    ts: str | None,
    side_tags: Sequence[OutputTag] = (),
    n: int | None = None,
) -> Replay:
    """Per Spark batch: the watermark (if any), then the batch's elements in arrival order;
    collects each batch's main and side outputs."""
    out = Replay(sides={t.tag_id: {} for t in side_tags})
    count = n if n is not None else len(watermarks or batches)
    for i in range(count):
        harness.clear_output()
        if watermarks is not None and watermarks[i] > MIN_LONG:
            harness.process_watermark(watermarks[i])
        rows = list(batches[i]) if i < len(batches) else []
        for r in rows:
            harness.process_element(r, r[ts] if ts is not None else MIN_LONG)
        out.main[i] = harness.output()
        for tag in side_tags:
            out.sides[tag.tag_id][i] = harness.side_output(tag)
    return out


def reported(watermark: int, times_before_1970: bool) -> int:
    """Flink's ``watermark`` as Spark's progress shows it: exactly, except that without the
    ``times_before_1970`` declaration Spark's watermark stops at the epoch, where it reads as
    none yet (``MIN_LONG``; flinkwin.spark.watermarks)."""
    return watermark if times_before_1970 or watermark > 0 else MIN_LONG


def canon(values: Sequence[Any], names: Sequence[str] | None = None) -> list[Any]:
    """Order-insensitive comparable form of a batch's outputs (Records, Rows, dicts; plain
    tuples are named by ``names``)."""

    def one(v: Any) -> Any:
        if hasattr(v, "asDict"):
            v = v.asDict()
        elif names is not None and type(v) in (tuple, list):
            v = dict(zip(names, v))
        if isinstance(v, dict):
            return tuple(sorted(v.items()))
        return v

    return sorted((one(v) for v in values), key=repr)


def watermark(delay_ms: int, ts: Any = "ts") -> WatermarkStrategy:
    return WatermarkStrategy.forBoundedOutOfOrderness(delay_ms).withTimestampAssigner(ts)


def assert_matches_harness(
    run: StreamRun,
    batches: Sequence[Sequence[dict[str, Any]]],
    harness: WindowOperatorHarness,
    *,
    ts: str | None,
    delay_ms: int | None,
    side_tags: Sequence[OutputTag] = (),
    names: Sequence[str] | None = None,
) -> None:
    """Spark batch i read file i; Spark's watermarks are max(ts) - delay - 1 of earlier batches
    (as its progress shows them: see :func:`reported`); every batch's main and side outputs
    equal the harness replay's under Flink's watermarks."""
    n = len(run.watermarks)
    assert run.input_rows == [len(b) for b in batches] + [0] * (n - len(batches))
    marks = None
    if delay_ms is not None:
        assert ts is not None
        marks = expected_watermarks(batches, ts, delay_ms, n)
        assert run.watermarks == [reported(m, run.times_before_1970) for m in marks]
    expected = replay(harness, batches, marks, ts, side_tags, n)
    for i in range(n):
        assert canon(run.main[i]) == canon(expected.main[i], names), f"main, batch {i}"
        for tag in side_tags:
            got = run.sides[tag.tag_id][i]
            want = expected.sides[tag.tag_id][i]
            assert canon(got) == canon(want), f"side {tag.tag_id}, batch {i}"


class SumCount(AggregateFunction):
    """``(sum of v, count)`` of a window's elements: the AggregateFunction several scenario
    modules share."""

    def create_accumulator(self) -> Any:
        return (0, 0)

    def add(self, value: Any, accumulator: Any) -> Any:
        return (accumulator[0] + value.v, accumulator[1] + 1)

    def get_result(self, accumulator: Any) -> Any:
        return accumulator

    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        return (acc_a[0] + acc_b[0], acc_a[1] + acc_b[1])
