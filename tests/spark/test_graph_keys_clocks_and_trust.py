"""Graph stages (union, window join, KeyedProcessFunction, window after window) as a Flink user
meets them: null keys fail with Flink's message, keys of mixed types are the keys PyFlink makes
of them, a restart from a checkpoint keeps every operator's watermark (late data after it is
late exactly as without it), and a tampered snapshot in the checkpoint is refused."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import write_batches

from flinkwin import (
    Duration,
    KeyedProcessFunction,
    OutputTag,
    Time,
    TumblingEventTimeWindows,
    Types,
    ValueStateDescriptor,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink

SCHEMA = "k string, v long, ts long"
LATE = OutputTag("late")
TUMBLING_5S = TumblingEventTimeWindows.of(Time.seconds(5))
#: Flink's KeyGroupRangeAssignment message for a null key
NULL_KEY = "Assigned key must not be null!"
MIN_LONG = -(2**63)


def ev(k: str | None, v: int, ts: int) -> dict[str, Any]:
    return {"k": k, "v": v, "ts": ts}


def stamped(df: Any) -> DataStream:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(0)
    ).with_timestamp_assigner("ts")
    return DataStream(df).assign_timestamps_and_watermarks(strategy)


def static(spark: Any, rows: list[tuple[Any, ...]]) -> DataStream:
    return stamped(spark.createDataFrame(rows, SCHEMA))


def source(spark: Any, directory: Path) -> Any:
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(directory))


def run(
    result: Any, checkpoint: Path, name: str, late_output: bool = True
) -> tuple[list[Any], list[Any]]:
    """Main and late outputs of ``result`` run to the end of its input."""
    return started(result, checkpoint, name, late_output)()


def started(
    result: Any, checkpoint: Path, name: str, late_output: bool = True
) -> Callable[[], tuple[list[Any], list[Any]]]:
    """``result`` started as :func:`run` runs it; call the returned function for its outputs
    once it ends (so that independent queries run side by side)."""
    main, late = MemorySink(f"{name}_main"), MemorySink(f"{name}_late")
    query = result.start(main=main, side_outputs={LATE: late} if late_output else {},
                         checkpoint_location=str(checkpoint), trigger={"availableNow": True})

    def outputs() -> tuple[list[Any], list[Any]]:
        query.awaitTermination()
        return (
            [tuple(r) for b in sorted(main.batches) for r in main.batches[b]],
            [tuple(r) for b in sorted(late.batches) for r in late.batches[b]],
        )

    return outputs


class Count(KeyedProcessFunction):
    """The key (as ``repr``) and how many elements it has had, kept in keyed state."""

    def open(self, runtime_context: Any) -> None:
        self.n = runtime_context.get_state(ValueStateDescriptor("n", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.n.update((self.n.value() or 0) + 1)
        yield repr(ctx.get_current_key()), self.n.value()


COUNT_TYPE = "key string, n long"


class Clock(KeyedProcessFunction):
    """Stateless: each element with the operator's watermark when it arrives."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value.k, value.v, ctx.timestamp(), ctx.timer_service().current_watermark()


CLOCK_TYPE = "k string, v long, ts long, wm long"


# -------------------------------------------------------------------------- null keys
def _null_key_graphs(spark: Any) -> dict[str, Any]:
    a = static(spark, [("a", 1, 1000), ("b", 2, 2000)])
    b = static(spark, [("a", 3, 1500), (None, 4, 2500)])
    sums = a.union(b.filter(lambda r: r.k is not None)).key_by("k").window(TUMBLING_5S).sum("v")
    return {
        "union, KeyedProcessFunction keyed by a function": a.union(b).key_by(
            lambda r: r.k).process(Count(), output_type=COUNT_TYPE),
        "union, KeyedProcessFunction keyed by a column": a.union(b).key_by("k").process(
            Count(), output_type=COUNT_TYPE),
        "window after window, the second keyed by a function": sums.key_by(
            lambda r: None if r.k == "b" else r.k).window(TUMBLING_5S).sum("v"),
        "window join keyed by a function": a.join(b).where(lambda r: r.k).equal_to(
            lambda r: r.k).window(TUMBLING_5S).apply(
                lambda x, y: (x.v, y.v), output_type="x long, y long"),
    }


def test_a_null_key_fails_every_graph_with_flinks_message(spark: Any) -> None:
    """Flink's KeyGroupRangeAssignment throws on a null key wherever it meets one; a graph
    never drops such an element nor makes one key of every null."""
    for name, graph in _null_key_graphs(spark).items():
        with pytest.raises(Exception, match=NULL_KEY) as failure:
            graph.execute_and_collect()
        assert "null key" in str(failure.value), name


# ------------------------------------------------------------------- mixed-type keys
KINDS = {"int": 1, "float": 1.0, "bool": True, "str": "1"}


def test_mixed_type_keys_in_a_graph_are_the_keys_pyflink_makes(spark: Any) -> None:
    """Without key_type PyFlink pickles keys: 1, 1.0, True and "1" are four keys through a
    union into a KeyedProcessFunction, and a window join pairs 1 with 1 only; with a declared
    Types.DOUBLE() the coder makes 1 and 1.0 one key (True is no DOUBLE: an error)."""
    a = static(spark, [("int", 1, 1000), ("float", 2, 1001), ("bool", 3, 1002)])
    b = static(spark, [("str", 4, 1003), ("int", 5, 1004), ("float", 6, 1005)])
    counted = a.union(b).key_by(lambda r: KINDS[r.k]).process(Count(), output_type=COUNT_TYPE)
    got = sorted(tuple(r) for r in counted.execute_and_collect())
    assert got == [("'1'", 1), ("1", 1), ("1", 2), ("1.0", 1), ("1.0", 2), ("True", 1)]

    numbers_a = static(spark, [("int", 1, 1000), ("float", 2, 1001)])
    numbers_b = static(spark, [("int", 10, 1500), ("float", 20, 1501)])

    def joined(key_type: Any) -> list[Any]:
        result = (
            numbers_a.join(numbers_b).where(lambda r: KINDS[r.k], key_type)
            .equal_to(lambda r: KINDS[r.k], key_type).window(TUMBLING_5S)
            .apply(lambda x, y: (x.v, y.v), output_type="x long, y long")
        )
        return sorted(tuple(r) for r in result.execute_and_collect())

    assert joined(None) == [(1, 10), (2, 20)]
    assert joined(Types.DOUBLE()) == [(1, 10), (1, 20), (2, 10), (2, 20)]


# ---------------------------------------------------------- clocks across a restart
def test_a_restart_keeps_each_operators_watermark(spark: Any, tmp_path: Path) -> None:
    """A window on input a alone (its watermark is a's) feeding, with input b, a stateless
    KeyedProcessFunction (its watermark the minimum of both, held back by b). Key c's window
    fires and its key group then holds nothing; after a restart, c@4000 is late for the window
    (a's watermark is 9000), exactly as in one uninterrupted run: to the late output, no
    second firing of [0, 5 s)."""
    a_batches = [[ev("c", 1, 1000)], [ev("a", 2, 9000)], [ev("a", 3, 9001)],
                 [ev("c", 7, 4000), ev("c", 8, 6000)]]
    b_batches = [[ev("x", 10, 1500)]]

    def build(directory: Path) -> Any:
        sums = (stamped(source(spark, directory / "a")).key_by("k").window(TUMBLING_5S)
                .side_output_late_data(LATE).sum("v"))
        return sums.union(stamped(source(spark, directory / "b"))).key_by("k").process(
            Clock(), output_type=CLOCK_TYPE)

    # the uninterrupted run and the first run before the restart side by side
    once = tmp_path / "once"
    write_batches(once / "a", a_batches)
    write_batches(once / "b", b_batches)
    uninterrupted = started(build(once), once / "cp", "clock_once")
    twice = tmp_path / "twice"
    write_batches(twice / "a", a_batches[:3])
    write_batches(twice / "b", b_batches)
    main_1, late_1 = run(build(twice), twice / "cp", "clock_before")
    main, late = uninterrupted()
    write_batches(twice / "a", a_batches[3:], first=3)
    main_2, late_2 = run(build(twice), twice / "cp", "clock_after")

    assert late == late_1 + late_2 == [("c", 7, 4000)]
    assert sorted(main) == sorted(main_1 + main_2)
    # c's window [0, 5 s) fired once, reaching the function at its watermark then (999)
    assert [r for r in main if r[0] == "c"] == [("c", 1, 4999, 999)]
    assert ("x", 10, 1500, MIN_LONG) in main


# ------------------------------------------------------------ a tampered checkpoint
CODEC = "spark.sql.streaming.stateStore.compression.codec"


class OpensAFile:
    """Unpickling this creates the file: proof that a snapshot's bytes were unpickled."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (open, (self.path, "w"))


def _tamper(checkpoint: Path, evil: bytes) -> int:
    """Overwrite the start of every sealed snapshot in the checkpoint's state files with
    ``evil`` (same length: the files stay well-formed for Spark); how many were changed."""
    import zstandard

    changed = 0
    for delta in sorted(checkpoint.glob("state/*/*/*.delta")):
        raw = delta.read_bytes()
        data = bytearray(zstandard.ZstdDecompressor().stream_reader(
            raw, read_across_frames=True).read())
        at = data.find(b"FWSEAL1:")
        while at >= 0:
            start = at + 8 + 32  # the seal's magic and HMAC, then the snapshot
            data[start:start + len(evil)] = evil
            changed += 1
            at = data.find(b"FWSEAL1:", start)
        if changed:
            delta.write_bytes(zstandard.ZstdCompressor().compress(bytes(data)))
            (delta.parent / f".{delta.name}.crc").unlink(missing_ok=True)
    return changed


def test_a_tampered_graph_snapshot_in_the_checkpoint_is_refused_unread(
    spark: Any, tmp_path: Path
) -> None:
    """A KeyedProcessFunction's graph stage keeps its state sealed in Spark's state store:
    a snapshot whose bytes were replaced by a pickle that would open a file fails the restart
    with the HMAC check, and the pickle is never loaded."""
    marker = tmp_path / "unpickled"
    evil = pickle.dumps(OpensAFile(str(marker)), protocol=4)
    evil += b"." * (64 - len(evil) % 64)
    write_batches(tmp_path / "a", [[ev("a", 1, 1000), ev("b", 2, 1000)]])
    write_batches(tmp_path / "b", [[ev("a", 3, 1500)]])

    def build() -> Any:
        a = stamped(source(spark, tmp_path / "a"))
        b = stamped(source(spark, tmp_path / "b"))
        return a.union(b).key_by("k").process(Count(), output_type=COUNT_TYPE)

    previous = spark.conf.get(CODEC)
    spark.conf.set(CODEC, "zstd")  # a codec the test can read and write back
    try:
        first, _ = run(build(), tmp_path / "cp", "tamper_before", False)
        assert sorted(first) == [("'a'", 1), ("'a'", 2), ("'b'", 1)]
        assert _tamper(tmp_path / "cp", evil) > 0
        write_batches(tmp_path / "a", [[ev("a", 4, 2000), ev("b", 5, 2000)]], first=1)
        with pytest.raises(Exception, match="HMAC-SHA256 check of the stored state failed"):
            run(build(), tmp_path / "cp", "tamper_after", False)
    finally:
        spark.conf.set(CODEC, previous)
    assert not marker.exists()
    pickle.loads(evil)  # the same bytes, unpickled, would have opened it
    assert marker.exists()
