"""Combining before the shuffle (flinkwin.spark.combine) changes no result: the same stream
with it on and off, over micro-batches of several input partitions, gives the same outputs
in the same order, the same late-element counts and the same errors."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
from pathlib import Path
from typing import Any

import pytest

from flinkwin import Duration, Time, TumblingEventTimeWindows
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink
from flinkwin.spark.combine import CONF
from flinkwin.watermark import WatermarkStrategy

# long streaming scenarios in the shared session: `make test` runs them in its second process,
# beside the rest, so that its two processes end together
pytestmark = pytest.mark.beside

SCHEMA = "user string, amount long, n int, ts long"
_counter = iter(range(10**6))


def _write(directory: Path, batches: list[list[list[dict[str, Any]]]]) -> None:
    """Batch i is files (i, j): one input partition each (see ``_session``)."""
    directory.mkdir(parents=True)
    for i, files in enumerate(batches):
        for j, rows in enumerate(files):
            path = directory / f"b{i:03d}-{j}.json"
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
            stamp = 1_000_000 + 10 * i
            os.utime(path, (stamp, stamp))


def _start(spark: Any, directory: Path, tmp: Path, build: Any, files: int, combine: bool):
    """Start the stream with combining on or off. Spark clones the session's settings when a
    query starts, so the settings are restored at once and the query runs on while another
    starts (the tests run the two variants as concurrent queries)."""
    name = f"combine_{next(_counter)}"
    before = {k: spark.conf.get(k, None) for k in (CONF, "spark.sql.files.openCostInBytes")}
    spark.conf.set(CONF, str(combine).lower())
    # every file its own input partition, so a batch's elements come from several partitions
    spark.conf.set("spark.sql.files.openCostInBytes", str(1 << 40))
    try:
        df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", files).json(
            str(directory))
        result = build(DataStream(df))
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            result.explain()
        sink = MemorySink(name)
        query = result.start(main=sink, checkpoint_location=str(tmp / name),
                             trigger={"availableNow": True})
    finally:
        for key, value in before.items():
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)
    return query, sink, out.getvalue()


def _finish(started: tuple[Any, MemorySink, str]):
    query, sink, plan = started
    query.awaitTermination()
    progress = sorted(query.recentProgress, key=lambda p: p["batchId"])
    metrics = [
        {k: p["observedMetrics"]["flinkwin"][k]
         for k in ("numRecordsIn", "numLateRecordsDropped", "numWindowsFired")}
        for p in progress if "flinkwin" in p.get("observedMetrics", {})
    ]
    rows = {b: [r.asDict() for r in batch] for b, batch in sink.batches.items()}
    return rows, metrics, plan


def _on_and_off(spark: Any, directory: Path, tmp: Path, build: Any, files: int):
    """The stream with combining on and off, run as two concurrent queries."""
    started = [_start(spark, directory, tmp, build, files, combine) for combine in (True, False)]
    return [_finish(s) for s in started]


def _batches(seed: int, big: bool = False) -> list[list[list[dict[str, Any]]]]:
    rng = random.Random(seed)
    out = []
    clock = 0
    for _ in range(3):
        files = []
        for _ in range(3):
            rows = []
            for _ in range(rng.randint(0, 40)):
                ts = clock + rng.randint(-30_000, 60_000)  # out of order: some elements late
                amount = rng.choice([2**61, -(2**61), 2**62]) if big else rng.randint(-50, 50)
                n = None if rng.random() < 0.3 else rng.randint(0, 9)  # nulls kept as nulls
                rows.append({"user": rng.choice("abcde"), "amount": amount, "n": n, "ts": ts})
            files.append(rows)
        out.append(files)
        clock += 60_000
    return out


def _strategy() -> WatermarkStrategy:
    return WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_seconds(5)).with_timestamp_assigner("ts")


@pytest.mark.parametrize("aggregation", ["sum", "max"])
def test_combined_stream_equals_element_by_element(spark: Any, tmp_path: Path, aggregation: str):
    directory = tmp_path / "in"
    _write(directory, _batches(7))

    def build(ds: DataStream) -> Any:
        windowed = (ds.assign_timestamps_and_watermarks(_strategy()).key_by("user")
                    .window(TumblingEventTimeWindows.of(Time.seconds(20))))
        return getattr(windowed, aggregation)("amount")

    on, off = _on_and_off(spark, directory, tmp_path, build, 3)
    assert "elements combined per key and window" in on[2]
    assert "every element" in off[2]
    assert on[0] == off[0]
    assert on[1] == off[1]
    assert sum(m["numLateRecordsDropped"] for m in on[1]) > 0  # the late path was exercised
    assert sum(len(v) for v in on[0].values()) > 10
    assert any(r["n"] is None for v in on[0].values() for r in v)  # a first element's null


def test_combined_sums_overflow_exactly_as_element_by_element(spark: Any, tmp_path: Path):
    """Under ANSI (overflow='error') the running sum of elements 2**61, 2**62... leaves the
    long range inside a partition's partial: the error is raised with and without combining;
    with wrap-around (ANSI off) both give Java's wrapped sums."""
    directory = tmp_path / "in"
    _write(directory, _batches(3, big=True))

    def build(ds: DataStream) -> Any:
        return (ds.assign_timestamps_and_watermarks(_strategy()).key_by("user")
                .window(TumblingEventTimeWindows.of(Time.seconds(20))).sum("amount"))

    ansi = spark.conf.get("spark.sql.ansi.enabled")
    try:
        spark.conf.set("spark.sql.ansi.enabled", "false")
        on, off = _on_and_off(spark, directory, tmp_path, build, 3)
        assert on[0] == off[0] and on[1] == off[1]
        spark.conf.set("spark.sql.ansi.enabled", "true")
        errors = []
        started = [_start(spark, directory, tmp_path, build, 3, combine)
                   for combine in (True, False)]
        for run in started:
            with pytest.raises(Exception) as info:
                _finish(run)
            errors.append(str(info.value))
        assert all("long overflow" in e for e in errors)
    finally:
        spark.conf.set("spark.sql.ansi.enabled", ansi)


def test_combined_stream_sends_a_null_field_element_alone(spark: Any, tmp_path: Path):
    """An element whose summed field is null is not folded into a partial: alone in its
    window it comes out with its null (as element by element); its partition's other
    elements are still combined."""
    directory = tmp_path / "in"
    rows = [{"user": "a", "amount": 1, "n": 1, "ts": 1_000},
            {"user": "b", "amount": None, "n": 2, "ts": 2_000},
            {"user": "a", "amount": 2, "n": None, "ts": 3_000},
            {"user": "c", "amount": 5, "n": 3, "ts": 30_000}]
    _write(directory, [[rows]])

    def build(ds: DataStream) -> Any:
        return (ds.assign_timestamps_and_watermarks(_strategy()).key_by("user")
                .window(TumblingEventTimeWindows.of(Time.seconds(20))).sum("amount"))

    on, off = _on_and_off(spark, directory, tmp_path, build, 1)
    assert on[0] == off[0]
    fired = sorted((r["user"], r["amount"], r["n"]) for v in on[0].values() for r in v)
    assert fired == [("a", 3, 1), ("b", None, 2)]


KEYED_SCHEMA = "user string, k int, flag boolean, day date, amount long, ts long"


def _keyed_rows(rng: random.Random, low: int, high: int) -> list[dict[str, Any]]:
    return [
        {"user": f"user_{rng.randint(0, 40)}", "k": rng.randint(-5, 5), "flag": rng.random() < 0.5,
         "day": f"2024-01-0{rng.randint(1, 3)}", "amount": rng.randint(1, 9),
         "ts": rng.randint(low, high)}
        for _ in range(60)
    ]


def _start_keyed(spark: Any, directory: Path, checkpoint: Path, keys: list[str], combine: bool,
                 sink: MemorySink) -> Any:
    before = spark.conf.get(CONF, None)
    spark.conf.set(CONF, str(combine).lower())
    try:
        df = spark.readStream.schema(KEYED_SCHEMA).option("maxFilesPerTrigger", 1).json(
            str(directory))
        result = (DataStream(df).assign_timestamps_and_watermarks(_strategy()).key_by(*keys)
                  .window(TumblingEventTimeWindows.of(Time.seconds(20))).sum("amount"))
        return result.start(main=sink, checkpoint_location=str(checkpoint),
                            trigger={"availableNow": True})
    finally:
        if before is None:
            spark.conf.unset(CONF)
        else:
            spark.conf.set(CONF, before)


@pytest.mark.parametrize("keys", [["user"], ["k"], ["flag", "day"]])
def test_a_checkpoint_restarts_with_combining_switched_on_or_off(
    spark: Any, tmp_path: Path, keys: list[str]
):
    """Combined rows reach the key group of their key whether combining is on or off (the
    label is computed after the combining pass): a query restarted from a checkpoint with
    combining switched continues every key's open windows, the results are those of one
    uninterrupted run."""
    rng = random.Random(11)
    # batch 0 opens the windows [0, 20 s), batch 1 adds to them (after the restart), batch 2
    # fires them
    batches = [_keyed_rows(rng, 0, 10_000), _keyed_rows(rng, 8_000, 19_000),
               _keyed_rows(rng, 60_000, 61_000)]

    def write(directory: Path, upto: int) -> None:
        directory.mkdir(exist_ok=True)
        for i in range(upto):
            path = directory / f"b{i:03d}.json"
            if not path.exists():
                path.write_text("".join(json.dumps(r) + "\n" for r in batches[i]))
                os.utime(path, (1_000_000 + 10 * i, 1_000_000 + 10 * i))

    def rows(sink: MemorySink) -> list[tuple[Any, ...]]:
        return sorted(tuple(r) for r in sink.rows())

    # the uninterrupted run and both first runs are concurrent queries, then both restarts
    whole = MemorySink(f"combine_{next(_counter)}")
    write(tmp_path / "all", 3)
    queries = [_start_keyed(spark, tmp_path / "all", tmp_path / "all_ckpt", keys, True, whole)]
    switches = ((False, True), (True, False))
    runs = {}
    for first, _ in switches:
        directory, checkpoint = tmp_path / f"in_{first}", tmp_path / f"ckpt_{first}"
        sink = MemorySink(f"combine_{next(_counter)}")
        write(directory, 1)
        queries.append(_start_keyed(spark, directory, checkpoint, keys, first, sink))
        runs[first] = directory, checkpoint, sink
    for query in queries:
        query.awaitTermination()
    assert len(rows(whole)) > 3
    restarts = []
    for first, then in switches:
        directory, checkpoint, sink = runs[first]
        write(directory, 3)
        restarts.append(_start_keyed(spark, directory, checkpoint, keys, then, sink))
    for query in restarts:
        query.awaitTermination()
    for first, (_, _, sink) in runs.items():
        assert rows(sink) == rows(whole), f"combining {first} then {not first}"


def test_a_null_key_fails_naming_the_row_with_combining_on_and_off(spark: Any, tmp_path: Path):
    directory = tmp_path / "in"
    rows = [{"user": "a", "amount": 1, "n": 1, "ts": 1_000},
            {"user": None, "amount": 7, "n": 2, "ts": 2_000},
            {"user": "a", "amount": 2, "n": None, "ts": 3_000}]
    _write(directory, [[rows]])

    def build(ds: DataStream) -> Any:
        return (ds.assign_timestamps_and_watermarks(_strategy()).key_by("user")
                .window(TumblingEventTimeWindows.of(Time.seconds(20))).sum("amount"))

    started = [_start(spark, directory, tmp_path, build, 1, combine) for combine in (True, False)]
    for run in started:
        with pytest.raises(Exception, match=r"null key in row \{\"user\":null,\"amount\":7,"
                                             r"\"n\":2,\"ts\":2000\}"):
            _finish(run)
