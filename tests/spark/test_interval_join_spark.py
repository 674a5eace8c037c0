"""Interval joins on Spark, end to end: Flink's ``IntervalJoinITCase`` on static DataFrames (test
names as in Flink, results compared sorted as Flink's ``expectInAnyOrder`` does), then streams
over several micro-batches: late elements of either input to their side outputs, the result
timestamp ``max(left, right)``, state cleanup once the watermark passes ``ts + upper`` /
``ts - lower`` (the stage's ``windowsInState`` total), and a restart from the checkpoint.

Each input keeps its own ``WatermarkStrategy``; the join sees the minimum of the two
watermarks (Flink's two-input operator, Spark's global watermark). A micro-batch's watermark is
``max(ts of earlier batches) - delay - 1`` per input.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import write_batches

from flinkwin import (
    Duration,
    KeyedProcessFunction,
    OutputTag,
    ProcessJoinFunction,
    Time,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.errors import UnsupportedOperationError, UnsupportedTimeCharacteristicError
from flinkwin.spark import MemorySink

TUPLE2 = "f0 string, f1 long"


class CombineToStringJoinFunction(ProcessJoinFunction):
    """Flink's ``CombineToStringJoinFunction``: ``left + ":" + right`` of two ``Tuple2``."""

    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield f"({left.f0},{left.f1}):({right.f0},{right.f1})"


def ascending(spark: Any, rows: list[tuple[str, int]]) -> DataStream:
    """``env.fromElements(...).assignTimestampsAndWatermarks(AscendingTuple2TimestampExtractor)``
    (timestamp ``f1``)."""
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("f1")
    return DataStream(spark.createDataFrame(rows, TUPLE2)).assign_timestamps_and_watermarks(
        strategy)


def joined(result: Any) -> list[str]:
    return sorted(r[0] for r in result.execute_and_collect())


# ------------------------------------------------------------- IntervalJoinITCase, static
def test_can_join_over_same_key(spark: Any) -> None:  # testCanJoinOverSameKey
    rows = [("key", i) for i in range(6)]
    one, two = ascending(spark, rows).key_by("f0"), ascending(spark, rows).key_by("f0")
    result = (one.interval_join(two).between(Time.milliseconds(0), Time.milliseconds(0))
              .process(CombineToStringJoinFunction(), output_type="s string"))
    assert joined(result) == sorted(f"(key,{i}):(key,{i})" for i in range(6))


def test_joins_correctly_with_multiple_keys(spark: Any) -> None:
    """testJoinsCorrectlyWithMultipleKeys: bounds [0, 1] unkeyed would pair (1, 2),
    (2, 3)...; keyed, only equal keys pair."""
    rows = [("key1", 0), ("key2", 1), ("key1", 2), ("key2", 3), ("key1", 4), ("key2", 5)]
    one, two = ascending(spark, rows).key_by("f0"), ascending(spark, rows).key_by("f0")
    result = (one.intervalJoin(two).between(Time.milliseconds(0), Time.milliseconds(1))
              .process(CombineToStringJoinFunction(), output_type="s string"))
    assert joined(result) == sorted(f"({k},{t}):({k},{t})" for k, t in rows)


#: IntervalJoinITCase.testBoundedUnorderedStreamsStillJoinCorrectly: (left, right) with |l - r| <= 1
BOUNDED_UNORDERED_PAIRS = [
    (left, right) for left in range(1, 10) for right in range(1, 10) if abs(left - right) <= 1
]
BOUNDED_UNORDERED_EXPECTED = sorted(f"(key,{a}):(key,{b})" for a, b in BOUNDED_UNORDERED_PAIRS)


def test_bounded_unordered_streams_still_join_correctly(spark: Any) -> None:
    # testBoundedUnorderedStreamsStillJoinCorrectly (the watermark 5 between the halves is
    # the micro-batch boundary of the streaming version below)
    order_one, order_two = [5, 1, 4, 3, 2, 9, 8, 7, 6], [2, 1, 3, 4, 5, 8, 7, 9, 6]
    one = ascending(spark, [("key", t) for t in order_one])
    two = ascending(spark, [("key", t) for t in order_two])
    result = (one.key_by("f0").interval_join(two.key_by("f0"))
              .between(Time.milliseconds(-1), Time.milliseconds(1))
              .process(CombineToStringJoinFunction(), output_type="s string"))
    assert joined(result) == BOUNDED_UNORDERED_EXPECTED


def _three(spark: Any) -> tuple[Any, Any]:
    rows = [("key", 0), ("key", 1), ("key", 2)]
    return ascending(spark, rows).key_by("f0"), ascending(spark, rows).key_by("f0")


def test_bounds_can_be_exclusive(spark: Any) -> None:  # testBoundsCanBeExclusive
    one, two = _three(spark)
    result = (one.intervalJoin(two).between(Time.milliseconds(0), Time.milliseconds(2))
              .upperBoundExclusive().lowerBoundExclusive()
              .process(CombineToStringJoinFunction(), output_type="s string"))
    assert joined(result) == ["(key,0):(key,1)", "(key,1):(key,2)"]


def test_bounds_can_be_inclusive(spark: Any) -> None:
    """testBoundsCanBeInclusive and testBoundsAreInclusiveByDefault (the same program in
    Flink's test: no ``...Exclusive()`` call)."""
    one, two = _three(spark)
    result = (one.interval_join(two).between(Time.milliseconds(0), Time.milliseconds(2))
              .process(CombineToStringJoinFunction(), output_type="s string"))
    assert joined(result) == sorted([
        "(key,0):(key,0)", "(key,0):(key,1)", "(key,0):(key,2)",
        "(key,1):(key,1)", "(key,1):(key,2)",
        "(key,2):(key,2)",
    ])


def test_fails_without_upper_or_lower_bound_and_in_processing_time(spark: Any) -> None:
    # testFailsWithoutUpperBound, testFailsWithoutLowerBound, testExecutionFailsInProcessingTime
    one, two = _three(spark)
    with pytest.raises(TypeError, match="An upper bound needs to be provided"):
        one.interval_join(two).between(Time.milliseconds(0), None)
    with pytest.raises(TypeError, match="A lower bound needs to be provided"):
        one.interval_join(two).between(None, Time.milliseconds(1))
    with pytest.raises(UnsupportedTimeCharacteristicError, match="only supported in event time"):
        one.interval_join(two).in_processing_time().between(0, 0)
    with pytest.raises(ValueError, match="lowerBound <= upperBound must be fulfilled"):
        one.interval_join(two).between(2, 1).process(CombineToStringJoinFunction())


class KeyPair(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield f"{left.k!r}:{right.k!r}"


def test_keyed_streams_of_other_key_types_are_refused_as_flinks_connected_streams(
    spark: Any
) -> None:
    """Flink connects the two keyed streams and refuses keys of other types ("Key types if
    input KeyedStreams don't match"), where Python's == would pair the long 1 with the
    double 1.0; keys of one type, declared or column, join."""
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
    longs, doubles = (
        DataStream(spark.createDataFrame([(one, 5)], f"k {kind}, ts long"))
        .assign_timestamps_and_watermarks(strategy) for one, kind in ((1, "long"), (1.0, "double"))
    )

    def join(left: Any, right: Any) -> Any:
        return left.interval_join(right).between(0, 0).process(
            KeyPair(), output_type="s string")

    message = "Key types if input KeyedStreams don't match: "
    with pytest.raises(UnsupportedOperationError, match=message + "bigint and double."):
        join(longs.key_by("k"), doubles.key_by("k"))
    with pytest.raises(UnsupportedOperationError,
                       match=message + r"Types.LONG\(\) and Types.DOUBLE\(\)."):
        join(longs.key_by(lambda r: r.k, key_type=Types.LONG()),
             doubles.key_by(lambda r: r.k, key_type=Types.DOUBLE()))
    with pytest.raises(UnsupportedOperationError, match=message + r"bigint and Types.DOUBLE"):
        join(longs.key_by("k"), doubles.key_by(lambda r: r.k, key_type=Types.DOUBLE()))
    same = join(longs.key_by("k"), longs.key_by(lambda r: r.k, key_type=Types.LONG()))
    assert [tuple(r) for r in same.execute_and_collect()] == [("1:1",)]


class Stamps(ProcessJoinFunction):
    """The pair with the context's three timestamps."""

    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield (left.k, left.v, right.v, ctx.get_left_timestamp(), ctx.get_right_timestamp(),
               ctx.get_timestamp())


STAMPS = "k string, l long, r long, lts long, rts long, ts long"


def test_result_timestamp_is_the_later_of_the_pair_downstream_too(spark: Any) -> None:
    """``ctx.get_timestamp()`` is ``max(left, right)`` and the results carry it as their
    timestamp: a sink after the join reads it from its context."""
    schema = "k string, v long, ts long"
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
    left = DataStream(spark.createDataFrame([("a", 1, 1000), ("a", 2, 5000)], schema))
    right = DataStream(spark.createDataFrame([("a", 10, 1500), ("a", 20, 4000)], schema))
    result = (
        left.assign_timestamps_and_watermarks(strategy).key_by("k")
        .interval_join(right.assign_timestamps_and_watermarks(strategy).key_by("k"))
        .between(Duration.of_millis(-1000), Duration.of_millis(1000))
        .process(Stamps(), output_type=STAMPS)
    )
    seen: list[tuple[Any, ...]] = []
    result.add_sink(lambda value, context: seen.append((*value, context.timestamp())))
    assert sorted(seen) == [
        ("a", 1, 10, 1000, 1500, 1500, 1500),
        ("a", 2, 20, 5000, 4000, 5000, 5000),
    ]


class SplitByOrder(ProcessJoinFunction):
    """Pairs whose right element came first go to a side output (``ctx.output``), carrying
    the pair's timestamp; the others to the main output."""

    EARLY_RIGHT = OutputTag("early_right", Types.TUPLE([Types.STRING(), Types.LONG()]))

    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        if ctx.get_right_timestamp() < ctx.get_left_timestamp():
            ctx.output(SplitByOrder.EARLY_RIGHT, (left.k, ctx.get_timestamp()))
        else:
            yield left.k, left.v + right.v


def test_join_results_feed_a_window_by_their_timestamps_and_side_outputs_work(
    spark: Any,
) -> None:
    """A tumbling 5 s window after the join, in the same stage, assigns each result by its
    timestamp max(left, right): (a, 1+10) at 4500 and (a, 2+20) at 5500 fall into different
    windows though both left elements are in [0, 5 s). ``ctx.output`` of the join function
    reaches ``get_side_output``."""
    schema = "k string, v long, ts long"
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
    left = DataStream(spark.createDataFrame(
        [("a", 1, 4000), ("a", 2, 4800), ("b", 3, 1000)], schema))
    right = DataStream(spark.createDataFrame(
        [("a", 10, 4500), ("a", 20, 5500), ("b", 30, 500)], schema))
    pairs = (
        left.assign_timestamps_and_watermarks(strategy).key_by("k")
        .interval_join(right.assign_timestamps_and_watermarks(strategy).key_by("k"))
        .between(Time.milliseconds(-600), Time.milliseconds(800))
        .process(SplitByOrder(), output_type="k string, v long")
    )
    # pairs: (a1, a10) at 4500, (a2, a20) at 5500, (a2, a10) early right at 4800,
    # (b3, b30) early right at 1000
    sums = pairs.key_by("k").window(TumblingEventTimeWindows.of(Time.seconds(5))).sum("v")
    assert sorted(tuple(r) for r in sums.execute_and_collect()) == [("a", 11), ("a", 22)]
    early = pairs.get_side_output(SplitByOrder.EARLY_RIGHT).execute_and_collect()
    assert sorted(tuple(r) for r in early) == [("a", 4800), ("b", 1000)]


# ------------------------------------------------------------------------- streaming
SCHEMA = "k string, v long, ts long"
LEFT_LATE = OutputTag("left_late")
RIGHT_LATE = OutputTag("right_late")


def ev(k: str, v: int, ts: int) -> dict[str, Any]:
    return {"k": k, "v": v, "ts": ts}


def stream(spark: Any, directory: Path, delay_ms: int = 0) -> DataStream:
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(directory))
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(delay_ms)).with_timestamp_assigner("ts")
    return DataStream(df).assign_timestamps_and_watermarks(strategy)


def run(result: Any, checkpoint: Path, name: str, sides: tuple[OutputTag, ...] = ()
        ) -> tuple[dict[int, list[Any]], dict[str, dict[int, list[Any]]], list[Any]]:
    """Run to the end of the input under availableNow: each batch's main rows and side rows,
    and the progress of each batch (in batch order)."""
    main = MemorySink(f"{name}_main")
    side_sinks = {tag: MemorySink(f"{name}_{tag.tag_id}") for tag in sides}
    query = result.start(main=main, side_outputs=side_sinks,
                         checkpoint_location=str(checkpoint), trigger={"availableNow": True})
    query.awaitTermination()
    progress = sorted(query.recentProgress, key=lambda p: p["batchId"])
    return (
        {b: [tuple(r) for r in rows] for b, rows in main.batches.items()},
        {t.tag_id: {b: [tuple(r) for r in rows] for b, rows in s.batches.items()}
         for t, s in side_sinks.items()},
        progress,
    )


def flat(batches: dict[int, list[Any]]) -> list[Any]:
    return [r for b in sorted(batches) for r in batches[b]]


def test_bounded_unordered_streams_still_join_correctly_over_micro_batches(
    spark: Any, tmp_path: Path
) -> None:
    """IntervalJoinITCase.testBoundedUnorderedStreamsStillJoinCorrectly as Flink runs it:
    unordered halves with a watermark between them (here the batch boundary: 4 after the
    first half, so nothing of the second is late); the buffers keep what the second half
    joins with (5 on both sides, cleaned only at watermark 6)."""
    halves_one = [[5, 1, 4, 3, 2], [9, 8, 7, 6]]
    halves_two = [[2, 1, 3, 4, 5], [8, 7, 9, 6]]
    write_batches(tmp_path / "one", [[ev("key", t, t) for t in h] for h in halves_one])
    write_batches(tmp_path / "two", [[ev("key", t, t) for t in h] for h in halves_two])

    class Combine(ProcessJoinFunction):
        def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
            yield f"({left.k},{left.v}):({right.k},{right.v})"

    result = (
        stream(spark, tmp_path / "one").key_by("k")
        .interval_join(stream(spark, tmp_path / "two").key_by("k"))
        .between(Time.milliseconds(-1), Time.milliseconds(1))
        .process(Combine(), output_type="s string")
    )
    main, _, progress = run(result, tmp_path / "cp", "ij_unordered")
    assert [p["numInputRows"] for p in progress[:2]] == [10, 8]
    assert sorted(r[0] for r in flat(main)) == BOUNDED_UNORDERED_EXPECTED
    # the second half's pairs (an element of 6..9 in them) came with the second batch
    assert sorted(r[0] for r in main[1]) == sorted(
        f"(key,{a}):(key,{b})" for a, b in BOUNDED_UNORDERED_PAIRS if max(a, b) >= 6
    )


#: between(-1 s, +2 s): right.ts in [left.ts - 1 s, left.ts + 2 s]; a left element is cleaned
#: at watermark ts + 2 s, a right one at ts + 1 s.
LEFT_BATCHES = [
    [ev("a", 1, 1000), ev("b", 2, 2000)],
    [ev("a", 3, 500), ev("b", 4, 4500)],     # a@500 is late (watermark 1999)
    [ev("c", 5, 10000)],
    [ev("d", 7, 11000)],
    [ev("z", 0, 100000)],
]
RIGHT_BATCHES = [
    [ev("a", 10, 1500), ev("b", 20, 5000)],
    [ev("a", 30, 900), ev("b", 40, 3000)],   # a@900 is late (watermark 1999)
    [ev("c", 50, 9000)],                     # the lower bound, inclusive
    [ev("c", 60, 12000)],                    # the upper bound, inclusive
    [ev("z", 0, 100000)],
]


def test_streaming_interval_join_late_data_timestamps_and_state_cleanup(
    spark: Any, tmp_path: Path
) -> None:
    """Five batches of both inputs, then Spark's batch without data that advances the
    watermark. Watermarks (minimum of the inputs'): -, 1999, 4499, 8999, 10999, 99999."""
    write_batches(tmp_path / "left", LEFT_BATCHES)
    write_batches(tmp_path / "right", RIGHT_BATCHES)
    result = (
        stream(spark, tmp_path / "left").key_by("k")
        .interval_join(stream(spark, tmp_path / "right").key_by("k"))
        .between(Time.seconds(-1), Time.seconds(2))
        .side_output_left_late_data(LEFT_LATE)
        .side_output_right_late_data(RIGHT_LATE)
        .process(Stamps(), output_type=STAMPS)
    )
    main, sides, progress = run(result, tmp_path / "cp", "ij_stream", (LEFT_LATE, RIGHT_LATE))
    assert [p["numInputRows"] for p in progress] == [4, 4, 2, 2, 2, 0]
    assert {b: sorted(rows) for b, rows in main.items() if rows} == {
        0: [("a", 1, 10, 1000, 1500, 1500)],
        1: [("b", 2, 40, 2000, 3000, 3000), ("b", 4, 20, 4500, 5000, 5000)],
        2: [("c", 5, 50, 10000, 9000, 10000)],
        3: [("c", 5, 60, 10000, 12000, 12000)],
        4: [("z", 0, 0, 100000, 100000, 100000)],
    }
    # late: behind the watermark of their batch; they join nothing and are not buffered
    assert {b: rows for b, rows in sides["left_late"].items() if rows} == {1: [("a", 3, 500)]}
    assert {b: rows for b, rows in sides["right_late"].items() if rows} == {1: [("a", 30, 900)]}
    metrics = [p["observedMetrics"]["flinkwin"] for p in progress]
    # buffered elements after each batch: a bucket goes when the watermark passes its timer
    # (left ts + 2000, right ts + 1000): batch 2 drops a@1000/1500, b@2000/3000; batch 3
    # b@4500/5000; batch 4 c@9000; the last batch everything but z
    assert [m["windowsInState"] for m in metrics] == [4, 6, 4, 4, 5, 2]
    assert [m["keysInState"] for m in metrics] == [2, 2, 2, 2, 3, 1]
    assert sum(m["numLateRecordsDropped"] for m in metrics) == 0  # both went to their tags


def test_streaming_interval_join_restarts_from_its_checkpoint(
    spark: Any, tmp_path: Path
) -> None:
    """Two runs of the same query on one checkpoint: elements buffered by the first run join
    elements of the second, and the watermark goes on from the restored one (1999): elements
    behind it in the second run are late. between(0, 5 s)."""

    def build() -> Any:
        return (
            stream(spark, tmp_path / "left").key_by("k")
            .intervalJoin(stream(spark, tmp_path / "right").key_by("k"))
            .between(Duration.of_millis(0), Duration.of_millis(5000))
            .sideOutputLeftLateData(LEFT_LATE)
            .process(Stamps(), output_type=STAMPS)
        )

    write_batches(tmp_path / "left", [[ev("a", 1, 1000)], [ev("a", 2, 2000)]])
    write_batches(tmp_path / "right", [[ev("x", 0, 1000)], [ev("b", 9, 3000)]])
    first, _, progress = run(build(), tmp_path / "cp", "ij_restart_1", (LEFT_LATE,))
    assert flat(first) == []
    # x@1000 was cleaned at watermark 1999; a@1000, a@2000 (left) and b@3000 (right) wait
    assert progress[-1]["observedMetrics"]["flinkwin"]["windowsInState"] == 3

    # the first run's files go: what the second run joins them with comes from the state
    for old in (*(tmp_path / "left").iterdir(), *(tmp_path / "right").iterdir()):
        old.unlink()
    write_batches(tmp_path / "left", [[ev("b", 5, 2500)], [ev("a", 6, 9000), ev("a", 99, 1500)]],
                  first=2)
    write_batches(tmp_path / "right", [[ev("a", 7, 4000)], [ev("a", 8, 7000), ev("a", 98, 1000)]],
                  first=2)
    second, sides, progress = run(build(), tmp_path / "cp", "ij_restart_2", (LEFT_LATE,))
    assert sorted(flat(second)) == [
        ("a", 1, 7, 1000, 4000, 4000),   # left of run 1, right of run 2
        ("a", 2, 7, 2000, 4000, 4000),
        ("a", 2, 8, 2000, 7000, 7000),   # a@1000 is out of [2000, 7000]
        ("b", 5, 9, 2500, 3000, 3000),   # right of run 1, left of run 2
    ]
    # late at the restored watermark: a@1500 to its tag, a@1000 of the right (no tag) dropped
    assert flat(sides["left_late"]) == [("a", 99, 1500)]
    assert [p["numInputRows"] for p in progress] == [2, 4, 0]  # only the new files
    metrics = [p["observedMetrics"]["flinkwin"] for p in progress]
    assert sum(m["numLateRecordsDropped"] for m in metrics) == 1


class _Joined(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield f"{left.k}:{left.ts}/{right.ts}"


class _PassesOn(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value


def test_an_element_before_1970_under_the_uncertain_watermark_fails_in_the_distributed_plan(
    spark: Any, tmp_path: Path
) -> None:
    """A stream joined with its own filtered elements takes Spark's watermark (computed before
    the filter), which after micro-batch 0 reads 0 where Flink's is -501 (500 ms, 1 s
    delay). An element at -3000 ms is late for Flink; under ``Long.MIN_VALUE`` it would join.
    Its cleanup timer (-3000 + 60 s) is after the epoch, so only the element decides: the
    distributed plan fails naming the declaration, as the one-task plan does (it joined the
    element, a wrong answer without an error)."""
    schema = "k string, ts long"
    write_batches(tmp_path / "in", [[{"k": "a", "ts": 500}], [{"k": "a", "ts": -3000}]])
    stream = DataStream(spark.readStream.schema(schema).option("maxFilesPerTrigger", 1)
                        .json(str(tmp_path / "in"))).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1))
        .with_timestamp_assigner("ts"))
    right = stream.filter(lambda r: r.ts >= 0)
    joined = (stream.key_by("k").interval_join(right.key_by("k"))
              .between(Time.milliseconds(-1000), Time.seconds(60))
              .process(_Joined(), Types.STRING()))
    for parallelism in (1, 2):
        result = joined.key_by(lambda s: s).process(_PassesOn(), Types.STRING())
        if parallelism > 1:
            result = result.set_parallelism(parallelism)
        query = result.start(main=MemorySink(f"uncertain_join_{parallelism}"),
                             checkpoint_location=str(tmp_path / f"ck{parallelism}"),
                             trigger={"availableNow": True})
        with pytest.raises(Exception, match=r"has event time -3000 ms, before "
                           r"1970-01-01T00:00:00Z, while the stream's watermark is uncertain"):
            query.awaitTermination()
