"""Edge scenarios of stream graphs, written as a Flink user would, each checked micro-batch by
micro-batch against the outputs Flink gives (derived from Flink's source, cited per scenario),
on the default one-task plan and under ``set_parallelism(2)``, some over a restart.

The model (docs/spark-semantics.md): batch *N* reads file *N* of every source; a source's
watermark in batch *N* is ``max(ts of its files before N) - delay - 1`` and an operator sees
the minimum over the sources it reads (Flink's ``StatusWatermarkValve``); in a batch the
watermark comes first (timers fire, their results reach the next operators), then the
elements in arrival order. Flink's rules used below:

- ``WindowOperator.isWindowLate``: a window is late iff ``maxTimestamp + allowedLateness <=
  watermark``; ``isElementLate``: ``ts + allowedLateness <= watermark``; a late element goes
  to ``sideOutputLateData`` (or is dropped).
- ``EventTimeTrigger.onElement``: ``FIRE`` at once when ``maxTimestamp <= watermark``, so a
  late-but-allowed element re-fires the window with all its contents (a join re-emits every
  pair of the window, old ones included).
- A window's results carry ``window.maxTimestamp()`` (``TimestampedCollector``).
- ``IntervalJoinOperator``: late iff ``ts < watermark``; a left element's buffer bucket is
  removed by the timer at ``ts + upper`` (``upper > 0``), a right one's at ``ts - lower``
  (``lower < 0``): a pair whose later element arrives exactly at that watermark is missed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import SumCount, write_batches

from flinkwin import (
    CoGroupFunction,
    CountTrigger,
    Duration,
    EventTimeSessionWindows,
    KeyedProcessFunction,
    OutputTag,
    ProcessJoinFunction,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.spark import MemorySink

pytestmark = pytest.mark.beside

SCHEMA = "k string, v long, ts long"
INT_SCHEMA = "k long, v long, ts long"
LATE = OutputTag("late")
RIGHT_LATE = OutputTag("right_late")
TUMBLING_5S = TumblingEventTimeWindows.of(Time.seconds(5))
TUMBLING_10S = TumblingEventTimeWindows.of(Time.seconds(10))
PLANS = [1, 2]


def ev(k: Any, v: int, ts: int) -> dict[str, Any]:
    return {"k": k, "v": v, "ts": ts}


Files = dict[str, list[list[dict[str, Any]]]]
Batches = dict[int, Counter[tuple[Any, ...]]]


class Scenario:
    """Sources as directories of one file per micro-batch, a graph over them, and its run."""

    def __init__(self, spark: Any, root: Path, name: str, schema: str = SCHEMA) -> None:
        self.spark, self.root, self.name, self.schema = spark, root, name, schema

    def source(self, name: str, delay_ms: int = 0, ts: str = "ts") -> DataStream:
        df = (self.spark.readStream.schema(self.schema).option("maxFilesPerTrigger", 1)
              .json(str(self.root / name)))
        strategy = WatermarkStrategy.for_bounded_out_of_orderness(
            Duration.of_millis(delay_ms)).with_timestamp_assigner(ts)
        return DataStream(df).assign_timestamps_and_watermarks(strategy)

    def run(self, files: Files, build: Callable[[Scenario], Any], parallelism: int,
            sides: Sequence[OutputTag] = (), restart_after: int | None = None,
            plans: Sequence[int] = PLANS) -> tuple[Batches, dict[str, Batches]]:
        """Every batch's main and side outputs (as multisets) under ``parallelism``; with
        ``restart_after``, the query stops after that many files and a new query continues
        its checkpoint with the rest (batch ids go on). The first call of a scenario runs it
        under every parallelism of PLANS at once (concurrent queries, each with its own files
        and checkpoint); the tests of the other plans take their results from _RUNS."""
        if self.name not in _RUNS:
            _RUNS[self.name] = self._run_plans(files, build, sides, restart_after, plans)
        outcome = _RUNS[self.name][parallelism]
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    def _run_plans(self, files: Files, build: Callable[[Scenario], Any],
                   sides: Sequence[OutputTag], restart_after: int | None,
                   parallelisms: Sequence[int]) -> dict[int, Any]:
        cuts = [0, len(next(iter(files.values())))]
        if restart_after is not None:
            cuts.insert(1, restart_after)
        plans = {p: Scenario(self.spark, self.root / f"p{p}", f"{self.name}_p{p}", self.schema)
                 for p in parallelisms}
        outcomes: dict[int, Any] = {
            p: ({}, {t.tag_id: {} for t in sides}) for p in parallelisms}
        for run, (lo, hi) in enumerate(zip(cuts, cuts[1:])):
            started = {}
            for p, plan in plans.items():
                if isinstance(outcomes[p], BaseException):
                    continue
                for src, batches in files.items():
                    write_batches(plan.root / src, batches[lo:hi], first=lo)
                result = build(plan)
                if p > 1:
                    result = result.set_parallelism(p)
                label = f"edge_{plan.name}_{run}"
                sink = MemorySink(label)
                side_sinks = {t: MemorySink(f"{label}_{t.tag_id}") for t in sides}
                query = result.start(main=sink, side_outputs=side_sinks,
                                     checkpoint_location=str(plan.root / "cp"),
                                     trigger={"availableNow": True})
                started[p] = (query, sink, side_sinks)
            for p, (query, sink, side_sinks) in started.items():
                try:
                    query.awaitTermination()
                except Exception as failure:  # noqa: BLE001 (the test of plan p re-raises it)
                    outcomes[p] = failure
                    continue
                main, side = outcomes[p]
                main.update(
                    {b: Counter(tuple(r) for r in rows) for b, rows in sink.batches.items()})
                for t, s in side_sinks.items():
                    side[t.tag_id].update(
                        {b: Counter(tuple(r) for r in rows) for b, rows in s.batches.items()})
        return outcomes


#: each scenario's outcome per parallelism: its outputs, or the exception its query raised
_RUNS: dict[str, dict[int, Any]] = {}


def non_empty(batches: Batches) -> dict[int, Counter[tuple[Any, ...]]]:
    return {b: c for b, c in sorted(batches.items()) if c}


def expect(batches: dict[int, list[tuple[Any, ...]]]) -> dict[int, Counter[tuple[Any, ...]]]:
    return {b: Counter(rows) for b, rows in batches.items()}


def in_order(batches: Batches) -> list[Counter[tuple[Any, ...]]]:
    """The non-empty batches' outputs in batch order (a restart may add a batch without data
    at the end of its first run, which moves later batch ids by one)."""
    return list(non_empty(batches).values())


def pairs(a: Any, b: Any) -> tuple[int, int]:
    return (a.v, b.v)


# ------------------------------------------------------- window join at the window's edges
JOIN_EDGES: Files = {
    # monotonous: watermark max - 1; the join's is the minimum of both inputs'
    "left": [[ev("a", 1, 0), ev("a", 2, 9999)], [ev("a", 3, 10000)], [ev("a", 5, 9998)],
             [ev("a", 7, 9999), ev("a", 6, 30000)]],
    "right": [[ev("a", 10, 5000)], [ev("a", 20, 9999)], [ev("a", 30, 10001)],
              [ev("a", 40, 30000)]],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_window_join_fires_when_both_watermarks_pass_and_drops_an_element_at_the_watermark(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """Join watermarks per batch: MIN, 4999 (right), 9998 (right), 9999, 29999. a@9998 in
    batch 2 is on time (cleanup 9999 > 9998); [0, 10 s) fires at the start of batch 3 with
    every pair; a@9999 then meets a window whose cleanup time 9999 <= watermark 9999: late,
    dropped (a join has no late output). [10 s, 20 s) fires in the batch without data."""
    main, _ = Scenario(spark, tmp_path, "join_edges").run(
        JOIN_EDGES,
        lambda s: s.source("left").join(s.source("right")).where("k").equal_to("k")
        .window(TUMBLING_10S).apply(pairs, output_type="l long, r long"),
        parallelism)
    assert non_empty(main) == expect({
        3: [(1, 10), (1, 20), (2, 10), (2, 20), (5, 10), (5, 20)],
        4: [(3, 30)],
    })


# --------------------------------------------- window join: allowed lateness re-emits pairs
JOIN_LATENESS: Files = {
    "left": [[ev("a", 1, 1000)], [ev("a", 2, 12000)], [ev("a", 3, 2000)], [ev("a", 4, 13000)],
             [ev("a", 5, 30000)], [ev("a", 6, 5000)]],
    "right": [[ev("a", 10, 3000)], [ev("a", 20, 12000)], [ev("a", 21, 13000)],
              [ev("a", 30, 4000)], [ev("a", 40, 30000)], [ev("a", 50, 30001)]],
}
JOIN_LATENESS_EXPECTED = expect({
    # watermark 11999 fires [0, 10 s); a@2000 (left) is within the lateness (cleanup 14999):
    # the window fires again with both left elements
    2: [(1, 10), (1, 10), (3, 10)],
    # right a@4000, watermark still 11999: fires again, every pair of the window
    3: [(1, 10), (1, 30), (3, 10), (3, 30)],
    # watermark 29999: [10 s, 20 s); left a@5000 is past the cleanup time 14999: dropped
    5: [(2, 20), (2, 21), (4, 20), (4, 21)],
})


def _join_with_lateness(s: Scenario) -> Any:
    return (s.source("left").join(s.source("right")).where("k").equal_to("k")
            .window(TUMBLING_10S).allowed_lateness(Time.seconds(5))
            .apply(pairs, output_type="l long, r long"))


@pytest.mark.parametrize("parallelism", PLANS)
def test_window_join_late_elements_within_the_lateness_re_emit_every_pair_of_the_window(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    main, _ = Scenario(spark, tmp_path, "join_lateness").run(
        JOIN_LATENESS, _join_with_lateness, parallelism)
    assert non_empty(main) == JOIN_LATENESS_EXPECTED


@pytest.mark.parametrize("parallelism", PLANS)
def test_window_join_with_lateness_restarted_after_the_late_refiring_equals_the_whole_run(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    main, _ = Scenario(spark, tmp_path, "join_lateness_restart").run(
        JOIN_LATENESS, _join_with_lateness, parallelism, restart_after=4)
    assert in_order(main) == list(JOIN_LATENESS_EXPECTED.values())


# ------------------------------------------- interval join: the cleanup timer's exact edge
class Values(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield (left.v, right.v, ctx.get_timestamp())


INTERVAL_EDGE: Files = {
    "left": [[ev("a", 1, 5000)], [ev("a", 2, 8000)], [ev("a", 3, 9000)]],
    "right": [[ev("a", 10, 4500)], [ev("a", 11, 6001)], [ev("a", 20, 6000), ev("a", 21, 5999)]],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_interval_join_misses_a_pair_whose_element_arrives_at_the_cleanup_watermark(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """between(-1 s, +1 s). Batch 0: right a@4500 joins left a@5000 (timestamp 5000). Batch 1
    (watermark 4499): right a@6001 is 1001 ms after a@5000: no pair. Batch 2: watermark
    min(7999, 6000) = 6000 fires the left cleanup timer 5000 + 1000 first, so right a@6000
    (not late: 6000 < 6000 is false) finds a@5000 gone, as in Flink's IntervalJoinOperator
    (timers before elements); right a@5999 is late (5999 < 6000)."""
    main, sides = Scenario(spark, tmp_path, "interval_edge").run(
        INTERVAL_EDGE,
        lambda s: s.source("left").key_by("k").interval_join(s.source("right").key_by("k"))
        .between(Time.milliseconds(-1000), Time.milliseconds(1000))
        .side_output_right_late_data(RIGHT_LATE)
        .process(Values(), output_type="l long, r long, ts long"),
        parallelism, sides=(RIGHT_LATE,))
    assert non_empty(main) == expect({0: [(1, 10, 5000)]})
    assert non_empty(sides["right_late"]) == expect({2: [("a", 21, 5999)]})


# ------------------------------------- a window after a window: a late re-firing upstream
CASCADE: Files = {"in": [
    [ev("a", 1, 1000), ev("b", 2, 2000)],
    [ev("a", 3, 5000)],
    [ev("a", 4, 3000)],      # watermark 4999: within the upstream lateness, re-fires
    [ev("a", 5, 10000)],
    [ev("a", 7, 4000), ev("a", 8, 20000)],  # watermark 9999: too late upstream
]}
CASCADE_EXPECTED = expect({
    # downstream [0, 10 s) for a holds both upstream firings of [0, 5 s) (1, then 1 + 4) and
    # [5 s, 10 s)'s 3: Flink adds a re-firing to what the downstream window holds
    4: [("a", 9, 1000), ("b", 2, 2000)],
    5: [("a", 5, 10000)],
})


def _cascade(s: Scenario) -> Any:
    sums = (s.source("in").key_by("k").window(TUMBLING_5S).allowed_lateness(Time.seconds(5))
            .side_output_late_data(LATE).sum("v"))
    return sums.key_by("k").window(TUMBLING_10S).sum("v")


@pytest.mark.parametrize("parallelism", PLANS)
def test_window_after_window_counts_an_upstream_late_refiring_in_the_open_downstream_window(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    main, sides = Scenario(spark, tmp_path, "cascade").run(
        CASCADE, _cascade, parallelism, sides=(LATE,))
    assert non_empty(main) == CASCADE_EXPECTED
    assert non_empty(sides["late"]) == expect({4: [("a", 7, 4000)]})


@pytest.mark.parametrize("parallelism", PLANS)
def test_window_after_window_restarted_after_the_refiring_equals_the_whole_run(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    main, sides = Scenario(spark, tmp_path, "cascade_restart").run(
        CASCADE, _cascade, parallelism, sides=(LATE,), restart_after=3)
    assert in_order(main) == list(CASCADE_EXPECTED.values())
    assert in_order(sides["late"]) == [Counter([("a", 7, 4000)])]


# --------------------------------------------- union: an empty file holds the watermark
UNION_EMPTY: Files = {
    "a": [[ev("a", 1, 1000)], [ev("a", 2, 20000)], [ev("a", 3, 21000)]],
    "b": [[ev("b", 10, 2000)], [], [ev("b", 20, 9000)]],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_union_does_not_fire_while_one_input_reads_an_empty_file(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """Union watermarks per batch: MIN, 999, 1999 (b read nothing in batch 1), 8999 (the
    batch without data): [0, 5 s) fires only then; a far ahead at 20999 fires nothing
    else."""
    main, _ = Scenario(spark, tmp_path, "union_empty").run(
        UNION_EMPTY,
        lambda s: s.source("a").union(s.source("b")).key_by("k").window(TUMBLING_5S).sum("v"),
        parallelism)
    assert non_empty(main) == expect({3: [("a", 1, 1000), ("b", 10, 2000)]})


# ------------------------------- union: one millisecond of allowed lateness at the edge
UNION_LATENESS_1MS: Files = {
    "a": [[ev("a", 1, 1000)], [ev("a", 2, 5000)], [ev("a", 3, 4999), ev("a", 4, 4000)],
          [ev("a", 5, 5002)], [ev("a", 6, 4999)]],
    "b": [[ev("b", 1, 2000)], [ev("b", 2, 5000)], [ev("b", 3, 4999)], [ev("b", 5, 5002)], []],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_union_window_with_one_ms_lateness_refires_at_the_watermark_and_drops_after_it(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """allowedLateness(1 ms): [0, 5 s) fires at watermark 4999 (batch 2) and is cleaned at
    5000. In batch 2 a@4999, a@4000, b@4999 are within the lateness (4999 + 1 > 4999): each
    fires the window again at once. In batch 4 (watermark 5001) a@4999 is late."""
    main, sides = Scenario(spark, tmp_path, "union_1ms").run(
        UNION_LATENESS_1MS,
        lambda s: s.source("a").union(s.source("b")).key_by("k").window(TUMBLING_5S)
        .allowed_lateness(Time.milliseconds(1)).side_output_late_data(LATE).sum("v"),
        parallelism, sides=(LATE,))
    assert non_empty(main) == expect({
        2: [("a", 1, 1000), ("b", 1, 2000), ("a", 4, 1000), ("a", 8, 1000), ("b", 4, 2000)],
    })
    assert non_empty(sides["late"]) == expect({4: [("a", 6, 4999)]})


# -------------------- coGroup of int keys, inputs with very different out-of-orderness
class Counts(CoGroupFunction):
    def co_group(self, first: Any, second: Any) -> Any:
        key = (first or second)[0].k
        yield (key, len(first), len(second), sum(r.v for r in first) + sum(r.v for r in second))


COGROUP_DELAYS: Files = {
    "slow": [[ev(1, 1, 1000)], [ev(1, 2, 11000)], [ev(1, 3, 16000)]],   # bound 5 s
    "fast": [[ev(1, 10, 2000)], [ev(1, 20, 30000)], [ev(2, 30, 9000)]],  # bound 0
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_co_group_waits_for_the_slower_watermark_and_emits_one_sided_keys(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """Watermarks: slow -4001, 5999, 10999; fast 1999, 29999, 29999. The coGroup's is the
    minimum: 5999 in batch 2, so key 2's element at 9000 (fast is at 29999) is on time;
    [0, 10 s) fires in the batch without data (10999), with key 2 from one side only."""
    main, _ = Scenario(spark, tmp_path, "cogroup_delays", INT_SCHEMA).run(
        COGROUP_DELAYS,
        lambda s: s.source("slow", 5000).co_group(s.source("fast")).where("k").equal_to("k")
        .window(TUMBLING_10S)
        .apply(Counts(), output_type="k long, n1 int, n2 int, total long"),
        parallelism)
    assert non_empty(main) == expect({3: [(1, 1, 1, 11), (2, 0, 1, 30)]})


# ---------------------------------------------------------------- null keys are refused
@pytest.mark.parametrize("parallelism", PLANS)
def test_a_null_join_key_fails_the_query_naming_flinks_message(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """Flink: KeyGroupRangeAssignment.assignToKeyGroup checks ``key != null`` ("Assigned key
    must not be null!"); a null key never silently vanishes."""
    files: Files = {"left": [[ev("a", 1, 1000), ev(None, 2, 1500)]],
                    "right": [[ev("a", 10, 2000)]]}
    with pytest.raises(Exception, match="Assigned key must not be null"):
        Scenario(spark, tmp_path, "null_key").run(
            files,
            lambda s: s.source("left").join(s.source("right")).where("k").equal_to("k")
            .window(TUMBLING_10S).apply(pairs, output_type="l long, r long"),
            parallelism)


# ------------- a window after a window keyed otherwise: the downstream key group is new
class WithStart(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        total, n = next(iter(elements))
        yield (context.window().start, total, n)


def _everything(row: Any) -> str:
    return "all"


CASCADE_EDGE: Files = {"in": [
    [ev("a", 1, 1000), ev("b", 2, 2000)],
    [ev("a", 3, 6000)],
    [ev("a", 5, 4000), ev("c", 4, 12000)],
]}


@pytest.mark.parametrize("parallelism", PLANS)
def test_window_after_window_of_the_same_size_fires_in_the_batch_of_the_upstream_firing(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """Per-key sums per 5 s (2 s lateness) feed one 5 s aggregate keyed by a function.
    Batch 2, watermark 5999: the upstream fires [0, 5 s) (timestamp 4999), its results reach
    the downstream window before the watermark does (the downstream key group sees them for
    the first time), which then fires [0, 5 s) in the same batch. a@4000 re-fires the
    upstream (cleanup 6999 > 5999): its new sum (timestamp 4999) is late downstream (cleanup
    4999 <= 5999) and goes to the downstream late output. The batch without data (11999)
    fires [5 s, 10 s) through both windows."""
    def build(s: Scenario) -> Any:
        sums = (s.source("in").key_by("k").window(TUMBLING_5S)
                .allowed_lateness(Time.seconds(2)).sum("v"))
        return (sums.key_by(_everything).window(TUMBLING_5S).side_output_late_data(LATE)
                .aggregate(SumCount(), WithStart(), output_type="start long, total long, n long"))

    main, sides = Scenario(spark, tmp_path, "cascade_edge").run(
        CASCADE_EDGE, build, parallelism, sides=(LATE,))
    assert non_empty(main) == expect({2: [(0, 3, 2)], 3: [(5000, 3, 1)]})
    assert non_empty(sides["late"]) == expect({2: [("a", 6, 1000)]})


# ------------------------- an interval join's pair at the watermark, late in a window after
class Pair(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield (left.k, left.v, right.v)


class PairsOfWindow(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (context.window().start, ",".join(sorted(f"{e.l}:{e.r}" for e in elements)))


INTERVAL_THEN_WINDOW: Files = {
    "left": [[ev("a", 1, 1000)], [ev("a", 2, 10000)], [ev("a", 3, 9999)], [ev("a", 4, 30000)]],
    "right": [[ev("a", 10, 1500)], [ev("a", 20, 10000)], [ev("a", 30, 9999), ev("a", 31, 9998)],
              [ev("a", 40, 30000)]],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_an_interval_join_pair_stamped_at_the_watermark_is_late_in_the_window_after_it(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """between(-1 s, +1 s), then 10 s windows of the pairs. Batch 2 (watermark 9999): [0,
    10 s) fires with 1:10; then left a@9999 and right a@9999 are on time for the join (not
    < 9999): pairs 3:20 (10000), 2:30 (10000) and 3:30 stamped max(9999, 9999) = 9999, which
    the window receives after the watermark 9999: late there (cleanup 9999 <= 9999). Right
    a@9998 is late for the join. The batch without data (29999) fires [10 s, 20 s)."""
    def build(s: Scenario) -> Any:
        pairs_ = (s.source("left").key_by("k").interval_join(s.source("right").key_by("k"))
                  .between(Time.milliseconds(-1000), Time.milliseconds(1000))
                  .side_output_right_late_data(RIGHT_LATE)
                  .process(Pair(), output_type="k string, l long, r long"))
        return (pairs_.key_by("k").window(TUMBLING_10S).side_output_late_data(LATE)
                .process(PairsOfWindow(), output_type="start long, pairs string"))

    main, sides = Scenario(spark, tmp_path, "interval_window").run(
        INTERVAL_THEN_WINDOW, build, parallelism, sides=(LATE, RIGHT_LATE))
    assert non_empty(main) == expect({2: [(0, "1:10")], 4: [(10000, "2:20,2:30,3:20")]})
    assert non_empty(sides["late"]) == expect({2: [("a", 3, 30)]})
    assert non_empty(sides["right_late"]) == expect({2: [("a", 31, 9998)]})


# ------------------------------------- coGroup over session windows merged across inputs
SESSIONS: Files = {
    "left": [[ev("a", 1, 1000)], [ev("a", 2, 7000)], [ev("a", 9, 20000), ev("a", 5, 500)]],
    "right": [[ev("a", 10, 3000)], [ev("a", 20, 5999)], [ev("a", 30, 20000)]],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_co_group_session_windows_merge_across_both_inputs_and_take_an_element_of_the_merge(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """Gap 3 s. [1000, 4000) and [3000, 6000) merge; right a@5999 bridges them with left
    a@7000's [7000, 10 s): one session [1000, 10 s). In batch 2 (watermark 5998) left a@500
    extends it to [500, 10 s), whose maxTimestamp 9999 is not late (WindowOperator checks
    the merged window). It fires in the batch without data (19999) with 3 left, 2 right."""
    main, _ = Scenario(spark, tmp_path, "sessions").run(
        SESSIONS,
        lambda s: s.source("left").co_group(s.source("right")).where("k").equal_to("k")
        .window(EventTimeSessionWindows.with_gap(Time.seconds(3)))
        .apply(Counts(), output_type="k string, n1 int, n2 int, total long"),
        parallelism)
    assert non_empty(main) == expect({3: [("a", 3, 2, 38)]})


# ---------------------------------- a source without data yet has no watermark: it holds
LATE_STARTER: Files = {
    "a": [[ev("a", 1, 1000)], [ev("a", 2, 9000)], [ev("a", 3, 20000)], [ev("a", 4, 21000)]],
    "b": [[], [], [ev("b", 1, 2000)], [ev("b", 2, 7000)]],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_union_waits_for_an_input_that_has_delivered_nothing_yet(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """b reads empty files first: it has no watermark (Long.MIN_VALUE in the valve), so the
    union stays at MIN while a reaches 19999; b@2000 in batch 2 is on time. Watermarks:
    MIN, MIN, MIN, 1999, then 6999 (batch without data): [0, 5 s) fires with both."""
    main, _ = Scenario(spark, tmp_path, "late_starter").run(
        LATE_STARTER,
        lambda s: s.source("a").union(s.source("b")).key_by("k").window(TUMBLING_5S).sum("v"),
        parallelism)
    assert non_empty(main) == expect({4: [("a", 1, 1000), ("b", 1, 2000)]})


# ------------------- interval join with negative, exclusive bounds over a restart
NEGATIVE_BOUNDS: Files = {
    "left": [[ev("a", 1, 3000)], [ev("a", 2, 5000)], [ev("a", 3, 6400)], [ev("a", 4, 9000)]],
    "right": [[ev("a", 10, 1000), ev("a", 11, 1001)], [ev("a", 20, 4500)], [ev("a", 30, 4000)],
              [ev("a", 40, 9000)]],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_interval_join_with_negative_exclusive_lower_bound_restarted_keeps_its_buffers(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """between(-2 s, -0.5 s).lower_bound_exclusive(): right in (l - 2000, l - 500]. a@1000 is
    2000 before a@3000: excluded; a@1001 pairs. The query stops after two files; the
    restarted one pairs left a@6400 with right a@4500 from the state (cleanup at 4500 + 1999
    is not due at watermark 4499) and sends right a@4000 (< 4499) to the late output."""
    main, sides = Scenario(spark, tmp_path, "negative_bounds").run(
        NEGATIVE_BOUNDS,
        lambda s: s.source("left").key_by("k").interval_join(s.source("right").key_by("k"))
        .between(Time.milliseconds(-2000), Time.milliseconds(-500)).lower_bound_exclusive()
        .side_output_right_late_data(RIGHT_LATE)
        .process(Values(), output_type="l long, r long, ts long"),
        parallelism, sides=(RIGHT_LATE,), restart_after=2)
    assert in_order(main) == [Counter([(1, 11, 3000)]), Counter([(2, 20, 5000)]),
                              Counter([(3, 20, 6400)])]
    assert in_order(sides["right_late"]) == [Counter([("a", 30, 4000)])]


# ------------------------- a window after a window: sliding downstream, negative start
CASCADE_SLIDING: Files = {"in": [
    [ev("a", 1, 1000), ev("b", 2, 3000)], [ev("a", 3, 6000)], [ev("b", 4, 11000)],
    [ev("a", 9, 30000)],
]}


@pytest.mark.parametrize("parallelism", PLANS)
def test_window_after_window_into_sliding_windows_fires_each_as_the_watermark_passes_it(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """5 s sums per key feed 10 s windows sliding by 5 s keyed by a function. Each upstream
    result (timestamp end - 1) is in two downstream windows; the one ending with it fires in
    the same batch: watermark 5999 fires [-5 s, 5 s), 10999 fires [0, 10 s), 29999 fires
    [5 s, 15 s) and [10 s, 20 s)."""
    def build(s: Scenario) -> Any:
        sums = s.source("in").key_by("k").window(TUMBLING_5S).sum("v")
        return (sums.key_by(_everything)
                .window(SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5)))
                .aggregate(SumCount(), WithStart(), output_type="start long, total long, n long"))

    main, _ = Scenario(spark, tmp_path, "cascade_sliding").run(
        CASCADE_SLIDING, build, parallelism)
    assert non_empty(main) == expect({
        2: [(-5000, 3, 2)], 3: [(0, 6, 3)], 4: [(5000, 7, 2), (10000, 4, 1)]})


# --------------------- microsecond TIMESTAMPs at the window's edge: floored to milliseconds
def at(seconds: float) -> str:
    return (datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=seconds)).isoformat()


def utc(seconds: float) -> datetime:
    """As Spark's collect() gives a TIMESTAMP: naive, in the session's zone (UTC here)."""
    return datetime(1970, 1, 1) + timedelta(seconds=seconds)


def tev(k: str, v: int, seconds: float) -> dict[str, Any]:
    return {"k": k, "v": v, "t": at(seconds)}


MICROS: Files = {
    "a": [[tev("a", 1, 1)], [tev("a", 2, 4.999999)], [tev("a", 3, 5.000999)],
          [tev("a", 4, 4.9995), tev("a", 5, 20)]],
    "b": [[tev("b", 1, 2)], [tev("b", 2, 5)], [tev("b", 3, 5.0009)], [tev("b", 4, 20)]],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_union_of_microsecond_timestamps_floors_them_at_the_window_edge(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """a at 4.999999 s is 4999 ms: the union's watermark in batch 2 is min(4998, 4999) and
    [0, 5 s) waits; it fires at 4999 (batch 3), where a at 4.9995 s (4999 ms) is late and
    reaches the late output with its microseconds. The batch without data fires [5 s, 10 s)."""
    main, sides = Scenario(spark, tmp_path, "micros", "k string, v long, t timestamp").run(
        MICROS,
        lambda s: s.source("a", ts="t").union(s.source("b", ts="t")).key_by("k")
        .window(TUMBLING_5S).side_output_late_data(LATE).sum("v"),
        parallelism, sides=(LATE,))
    assert non_empty(main) == expect({
        3: [("a", 3, utc(1)), ("b", 1, utc(2))],
        4: [("a", 3, utc(5.000999)), ("b", 5, utc(5))],
    })
    assert non_empty(sides["late"]) == expect({3: [("a", 4, utc(4.9995))]})


# ------------------- a new key's first element, late, through the sources' step (p = 2)
def _k(row: Any) -> str:
    return row.k


NEW_KEY_LATE: Files = {"in": [
    [ev("a", 1, 1000)], [ev("a", 2, 12000)], [ev("c", 3, 2000), ev("d", 4, 11000)],
    [ev("e", 5, 30000)],
]}


@pytest.mark.parametrize("parallelism", PLANS)
def test_a_new_keys_first_element_is_judged_at_the_current_watermark(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """Windows keyed by a function (distributed: through the sources' step). c and d are
    new in batch 2 (watermark 11999): c@2000 is late for [0, 5 s) although its key never
    had state; d@11000 is on time. The downstream 5 s aggregate keyed by a function fires
    [0, 5 s) in batch 2 and [10 s, 15 s) in the batch without data (29999)."""
    def build(s: Scenario) -> Any:
        sums = (s.source("in").key_by(_k, key_type=Types.STRING()).window(TUMBLING_5S)
                .side_output_late_data(LATE).sum("v"))
        return (sums.key_by(_everything).window(TUMBLING_5S)
                .aggregate(SumCount(), WithStart(), output_type="start long, total long, n long"))

    main, sides = Scenario(spark, tmp_path, "new_key_late").run(
        NEW_KEY_LATE, build, parallelism, sides=(LATE,))
    assert non_empty(main) == expect({2: [(0, 1, 1)], 4: [(10000, 6, 2)]})
    assert non_empty(sides["late"]) == expect({2: [("c", 3, 2000)]})


# ------------------------ a join's late re-firings all reach the window after the join
def _sum_of_pair(a: Any, b: Any) -> tuple[str, int]:
    return (a.k, a.v + b.v)


@pytest.mark.parametrize("parallelism", PLANS)
def test_window_after_a_join_receives_every_late_refiring_of_the_join(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """The join of JOIN_LATENESS (pairs summed), then one 20 s window: the join emits
    3 + 4 pairs for [0, 10 s) (two late re-firings, stamped 9999) and 4 for [10 s, 20 s)
    (19999), all before the watermark 29999 reaches the window, which then holds 11 pairs."""
    def build(s: Scenario) -> Any:
        joined = (s.source("left").join(s.source("right")).where("k").equal_to("k")
                  .window(TUMBLING_10S).allowed_lateness(Time.seconds(5))
                  .apply(_sum_of_pair, output_type="k string, v long"))
        return (joined.key_by(_everything).window(TumblingEventTimeWindows.of(Time.seconds(20)))
                .aggregate(SumCount(), WithStart(), output_type="start long, total long, n long"))

    main, _ = Scenario(spark, tmp_path, "join_then_window").run(
        JOIN_LATENESS, build, parallelism)
    assert non_empty(main) == expect({5: [(0, 217, 11)]})


# ---------------------------------------------- a join under a count trigger
COUNTED: Files = {
    "left": [[ev("a", 1, 1000)], [ev("a", 2, 3000)], [], [], [ev("a", 3, 6000)],
             [ev("a", 4, 20000)], [ev("a", 5, 7000)]],
    "right": [[ev("a", 10, 2000)], [], [ev("a", 20, 4000)], [ev("a", 30, 5000)], [],
              [ev("a", 40, 20000)], []],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_window_join_with_a_count_trigger_fires_on_every_third_element_of_either_input(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """JoinedStreams.WithWindow.trigger(CountTrigger.of(3)): the join's window counts the
    union of both inputs' elements; it fires (without purging) at the 3rd and 6th. The
    watermark 19999 (batch 6) only cleans the window up (CountTrigger.onEventTime is
    CONTINUE), so nothing more is emitted and a@7000 is late."""
    main, _ = Scenario(spark, tmp_path, "count_trigger").run(
        COUNTED,
        lambda s: s.source("left").join(s.source("right")).where("k").equal_to("k")
        .window(TUMBLING_10S).trigger(CountTrigger.of(3))
        .apply(pairs, output_type="l long, r long"),
        parallelism)
    assert non_empty(main) == expect({
        1: [(1, 10), (2, 10)],
        4: [(l_, r) for l_ in (1, 2, 3) for r in (10, 20, 30)],
    })


# ------------------ downstream allowed lateness: an upstream re-firing re-fires downstream
CASCADE_BOTH_LATE: Files = {"in": [
    [ev("a", 1, 1000), ev("b", 2, 2000)], [ev("a", 3, 6000)], [ev("a", 4, 3000)],
    [ev("a", 5, 12000)], [ev("a", 6, 2500)],
]}


@pytest.mark.parametrize("parallelism", PLANS)
def test_window_after_window_both_with_lateness_refire_downstream_with_every_element(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """5 s windows with 5 s lateness at both levels. Batch 2 (watermark 5999): the
    downstream fires [0, 5 s) with a=1, b=2; a@3000 re-fires the upstream (a=5, stamped
    4999), on time downstream (cleanup 9999): the downstream window fires again with all
    three results (1 + 2 + 5). Batch 4 (11999): [5 s, 10 s); a@2500 is too late upstream."""
    def build(s: Scenario) -> Any:
        sums = (s.source("in").key_by("k").window(TUMBLING_5S)
                .allowed_lateness(Time.seconds(5)).sum("v"))
        return (sums.key_by(_everything).window(TUMBLING_5S).allowed_lateness(Time.seconds(5))
                .aggregate(SumCount(), WithStart(), output_type="start long, total long, n long"))

    main, _ = Scenario(spark, tmp_path, "cascade_both_late").run(
        CASCADE_BOTH_LATE, build, parallelism)
    assert non_empty(main) == expect({2: [(0, 3, 2), (0, 8, 3)], 4: [(5000, 3, 1)]})


# -------------- a timer registered behind the watermark waits for the next increase
class TimerAtOwnTimestamp(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        ctx.timer_service().register_event_time_timer(ctx.timestamp())
        return []

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield (ctx.get_current_key(), timestamp, ctx.timer_service().current_watermark())


BEHIND: Files = {
    "a": [[ev("a", 1, 1000)], [ev("a", 2, 3000)], [ev("a", 3, 5000)], []],
    "b": [[ev("b", 1, 500)], [ev("b", 2, 400)], [], [ev("b", 3, 2000)]],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_a_timer_behind_the_union_watermark_fires_at_its_next_increase(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """A KeyedProcessFunction on the union registers a timer at each element's timestamp.
    b holds the union at 499 for batches 1 to 3 (a runs ahead): b@400's timer (behind the
    watermark) fires at no repeated 499, only when the watermark increases to 1999 (the
    batch without data), with b@500's and a@1000's, seeing that watermark."""
    main, _ = Scenario(spark, tmp_path, "behind").run(
        BEHIND,
        lambda s: s.source("a").union(s.source("b")).key_by("k")
        .process(TimerAtOwnTimestamp(), output_type="k string, t long, wm long"),
        parallelism)
    assert non_empty(main) == expect({4: [("b", 400, 1999), ("b", 500, 1999), ("a", 1000, 1999)]})


# ------------------------------------------------------------- more restarts mid-scenario
@pytest.mark.parametrize("parallelism", PLANS)
def test_window_join_restarted_before_its_firing_fires_once_with_every_pair(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """JOIN_EDGES stopped after three files: the first run's batch without data (watermark
    9999) fires [0, 10 s); the second run drops a@9999 as late and fires [10 s, 20 s)."""
    main, _ = Scenario(spark, tmp_path, "join_edges_restart").run(
        JOIN_EDGES,
        lambda s: s.source("left").join(s.source("right")).where("k").equal_to("k")
        .window(TUMBLING_10S).apply(pairs, output_type="l long, r long"),
        parallelism, restart_after=3)
    assert in_order(main) == [
        Counter([(1, 10), (1, 20), (2, 10), (2, 20), (5, 10), (5, 20)]), Counter([(3, 30)])]


@pytest.mark.parametrize("parallelism", PLANS)
def test_window_after_window_restarted_before_the_downstream_key_group_exists(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """CASCADE_EDGE stopped after its first file: the downstream key group first receives
    the upstream's firing (watermark 5999) in the second run, and still takes it before
    that watermark, fires [0, 5 s) once, and sends the late re-firing to the late output."""
    def build(s: Scenario) -> Any:
        sums = (s.source("in").key_by("k").window(TUMBLING_5S)
                .allowed_lateness(Time.seconds(2)).sum("v"))
        return (sums.key_by(_everything).window(TUMBLING_5S).side_output_late_data(LATE)
                .aggregate(SumCount(), WithStart(), output_type="start long, total long, n long"))

    main, sides = Scenario(spark, tmp_path, "cascade_edge_restart").run(
        CASCADE_EDGE, build, parallelism, sides=(LATE,), restart_after=1)
    assert in_order(main) == [Counter([(0, 3, 2)]), Counter([(5000, 3, 1)])]
    assert in_order(sides["late"]) == [Counter([("a", 6, 1000)])]


# ------------------- sessions with lateness: a late element bridges a fired session
SESSIONS_LATE: Files = {
    "a": [[ev("a", 1, 1000)], [ev("a", 2, 20000)], [ev("a", 3, 6000)], [],
          [ev("a", 4, 60000)]],
    "b": [[ev("a", 10, 2000)], [ev("b", 1, 20000)], [], [ev("a", 20, 4000)],
          [ev("b", 2, 60000)]],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_union_session_window_with_lateness_merges_a_late_element_and_fires_again(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """Gap 3 s, lateness 30 s. Watermark 19999 (batch 2) fires a's [1000, 5000); a@6000
    starts [6000, 9000), fired at once (behind the watermark, within the lateness); in batch
    3 a@4000 bridges both into [1000, 9000), which fires at once with all four elements.
    Batch 5 (59999) fires the sessions at 20 s."""
    main, _ = Scenario(spark, tmp_path, "sessions_late").run(
        SESSIONS_LATE,
        lambda s: s.source("a").union(s.source("b")).key_by("k")
        .window(EventTimeSessionWindows.with_gap(Time.seconds(3)))
        .allowed_lateness(Time.seconds(30))
        .aggregate(SumCount(), WithStart(), output_type="start long, total long, n long"),
        parallelism)
    assert non_empty(main) == expect({
        2: [(1000, 11, 2), (6000, 3, 1)], 3: [(1000, 34, 4)], 5: [(20000, 2, 1), (20000, 1, 1)],
    })


# ------------- an operator reading one source, when the stage's global watermark stays
# (a one-task stage's Spark watermark is a wake-up clock, docs/spark-semantics.md, "When the
# stage runs": Spark runs a batch without data after every batch with rows)
OWN_CLOCK: Files = {
    "a": [[ev("a", 1, 1000)], [ev("a", 2, 20000)], []],
    "b": [[ev("b", 10, 500)], [], []],
}


@pytest.mark.parametrize("parallelism", [1])  # a node not reading every source: one task
def test_a_window_on_one_source_fires_on_its_own_watermark_when_the_others_stay(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """Windowed sums of a, unioned with b's raw elements into one output. a's watermark
    reaches 19999 after batch 1, and Flink fires a's window [0, 5 s) then, whatever b does
    (WindowOperator reads a alone: its input's watermark is a's); b's 499 only holds the
    operators reading b. In flinkwin's model that firing belongs to batch 2 (two empty
    files): Spark's minimum over the sources stays at b's 499, but the stage's wake-up clock
    moved after batch 1's rows, so Spark calls the key group in batch 2 and a's window
    advances to a's own watermark there."""
    main, _ = Scenario(spark, tmp_path, "own_clock").run(
        OWN_CLOCK,
        lambda s: s.source("a").key_by("k").window(TUMBLING_5S).sum("v").union(s.source("b")),
        parallelism, plans=[1])
    assert non_empty(main) == expect({0: [("b", 10, 500)], 2: [("a", 1, 1000)]})


@pytest.mark.parametrize("parallelism", [1])
def test_a_window_on_one_source_fires_in_the_next_batch_with_rows(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """The same program with a row in a's third file: the stage runs in batch 2, a's window
    advances to a's watermark 19999 first and fires [0, 5 s), as Flink does."""
    files = {"a": [*OWN_CLOCK["a"][:2], [ev("a", 3, 21000)]], "b": OWN_CLOCK["b"]}
    main, _ = Scenario(spark, tmp_path, "own_clock_next").run(
        files,
        lambda s: s.source("a").key_by("k").window(TUMBLING_5S).sum("v").union(s.source("b")),
        parallelism, plans=[1])
    assert non_empty(main) == expect({0: [("b", 10, 500)], 2: [("a", 1, 1000)]})


@pytest.mark.parametrize("parallelism", PLANS)
def test_a_union_with_an_idle_input_fires_on_the_active_inputs_last_watermark(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """b with_idleness(1 ms) is idle from batch 1; the union then follows a, whose watermark
    is 19999 after batch 1: Flink fires [0, 5 s) for a@1000 and b@500 (batch 2 in the
    model: two empty files; Spark's minimum, which knows nothing of idleness, stays at b's
    499, the wake-up clock calls the stage)."""
    def build(s: Scenario) -> Any:
        df = (s.spark.readStream.schema(s.schema).option("maxFilesPerTrigger", 1)
              .json(str(s.root / "b")))
        idle = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)) \
            .with_timestamp_assigner("ts").with_idleness(Duration.of_millis(1))
        b = DataStream(df).assign_timestamps_and_watermarks(idle)
        return s.source("a").union(b).key_by("k").window(TUMBLING_5S).sum("v")

    main, _ = Scenario(spark, tmp_path, "idle_last").run(
        {"a": OWN_CLOCK["a"], "b": [[ev("b", 10, 500)], [], []]}, build, parallelism)
    assert non_empty(main) == expect({2: [("a", 1, 1000), ("b", 10, 500)]})


# ---- three sources: two advance, one stays; a checkpoint of per-source watermarks goes on
THREE: Files = {
    "a": [[ev("a", 1, 1000), ev("a", 3, 30000)], [], [], []],
    "b": [[ev("b", 2, 2000)], [ev("b", 4, 20000)], [], [ev("b", 5, 40000)]],
    "c": [[ev("c", 10, 500)], [], [ev("c", 11, 600)], []],
}
#: Flink's outputs: c's elements at once; the window over a and b at min(a, b): 1999 in batch
#: 1, 19999 in batch 2 (fires [0, 5 s) for a and b), 29999 in batch 4 (fires b's [20, 25 s))
THREE_OUT = {0: [("c", 10, 500)], 2: [("a", 1, 1000), ("b", 2, 2000), ("c", 11, 600)],
             4: [("b", 4, 20000)]}


def _three(s: Scenario) -> Any:
    return (s.source("a").union(s.source("b")).key_by("k").window(TUMBLING_5S).sum("v")
            .union(s.source("c")))


@pytest.mark.parametrize("parallelism", [1])  # a node not reading every source: one task
def test_a_window_on_two_of_three_sources_fires_when_the_slower_of_the_two_advances(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """The window reads a and b; c stays at 499 (Spark's minimum over the sources) and a is
    ahead from batch 0 (Spark's maximum over them would stay at a's 29999 after batch 1): b's
    rows move the window's own watermark after batches 1 and 3, and it fires in batch 2 (empty
    files) and in batch 4, a batch without data that Spark runs after batch 3 for the stage's
    wake-up clock. Neither Spark's minimum nor its maximum would call the stage in batch 2."""
    files = {**THREE, "c": [[ev("c", 10, 500)], [], [], []]}
    main, _ = Scenario(spark, tmp_path, "three").run(files, _three, parallelism, plans=[1])
    assert non_empty(main) == expect({
        0: [("c", 10, 500)], 2: [("a", 1, 1000), ("b", 2, 2000)], 4: [("b", 4, 20000)]})


def test_a_checkpoint_written_with_per_source_spark_watermarks_goes_on_with_the_wake_clock(
    spark: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Files 0-1 run as flinkwin before the wake-up clock ran them (a withWatermark per
    source: Spark's minimum, 499, stays and the window stays pending after batch 1); the
    restart under the wake-up clock continues that checkpoint (Spark's offset log keeps one
    watermark for the query, whatever the number of withWatermark nodes): batch 2's rows
    call the stage, which fires [0, 5 s), and the batch without data after batch 3 fires
    b's [20, 25 s), as the uninterrupted run does."""
    from flinkwin.spark import graph_compiler

    scenario = Scenario(spark, tmp_path, "three_upgrade")
    outputs: dict[int, Counter[tuple[Any, ...]]] = {}
    for run, (lo, hi) in enumerate([(0, 2), (2, 4)]):
        with monkeypatch.context() as patched:
            if run == 0:
                patched.setattr(graph_compiler, "_wake_clock", lambda sources: False)
            for src, batches in THREE.items():
                write_batches(tmp_path / src, batches[lo:hi], first=lo)
            sink = MemorySink(f"edge_three_upgrade_{run}")
            query = _three(scenario).start(main=sink, checkpoint_location=str(tmp_path / "cp"),
                                           trigger={"availableNow": True})
            query.awaitTermination()
        outputs.update({b: Counter(tuple(r) for r in rows) for b, rows in sink.batches.items()})
        if run == 0:
            assert non_empty(outputs) == expect({0: [("c", 10, 500)]})  # the window waits
    assert non_empty(outputs) == expect(THREE_OUT)


@pytest.mark.parametrize("parallelism", [1])  # a node not reading every source: one task
def test_the_wake_clock_leaves_a_source_without_watermarks_holding_its_readers_back(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """a and b have watermarks (the stage runs on the wake-up clock); the window reads a and
    c, which has no WatermarkStrategy and so holds it at Long.MIN_VALUE however far a and b
    go (Flink's StatusWatermarkValve: an input that never emits a watermark), while b's
    elements pass at once."""
    def build(s: Scenario) -> Any:
        c = DataStream(s.spark.readStream.schema(s.schema).option("maxFilesPerTrigger", 1)
                       .json(str(s.root / "c")))
        return (s.source("a").union(c).key_by("k").window(TUMBLING_5S).sum("v")
                .union(s.source("b")))

    files = {"a": [[ev("a", 1, 1000)], [ev("a", 2, 20000)], []],
             "b": [[ev("b", 10, 500)], [ev("b", 11, 30000)], []], "c": [[], [], []]}
    main, _ = Scenario(spark, tmp_path, "wake_no_watermarks").run(
        files, build, parallelism, plans=[1])
    assert non_empty(main) == expect({0: [("b", 10, 500)], 1: [("b", 11, 30000)]})


@pytest.mark.parametrize("parallelism", [1])  # a node not reading every source: one task
def test_the_wake_clock_fires_a_window_on_one_source_before_1970_when_declared(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """The first scenario of this section 10^12 ms before the epoch (1938), the sources
    declaring times_before_1970: the wake-up clock is the batch timestamp plus the shift,
    and a's window fires on a's own watermark in batch 2 as after 1970."""
    base = -1_000_000_000_000

    def declared(s: Scenario, name: str) -> DataStream:
        df = (s.spark.readStream.schema(s.schema).option("maxFilesPerTrigger", 1)
              .json(str(s.root / name)))
        strategy = WatermarkStrategy.for_bounded_out_of_orderness(
            Duration.of_millis(0)).with_timestamp_assigner("ts")
        return DataStream(df, times_before_1970=True).assign_timestamps_and_watermarks(strategy)

    files = {name: [[{**e, "ts": base + e["ts"]} for e in batch] for batch in batches]
             for name, batches in OWN_CLOCK.items()}
    main, _ = Scenario(spark, tmp_path, "own_clock_1938").run(
        files,
        lambda s: declared(s, "a").key_by("k").window(TUMBLING_5S).sum("v")
        .union(declared(s, "b")),
        parallelism, plans=[1])
    assert non_empty(main) == expect({0: [("b", 10, base + 500)], 2: [("a", 1, base + 1000)]})


# ------------------------------------------------- side outputs read by operators after them
SIDE_FILES: Files = {
    # watermark max - 1: 11999 in batch 1, where a@2000's window [0, 10 s) is already past
    "in": [[ev("a", 1, 1000), ev("a", 2, 12000)], [ev("a", 3, 2000), ev("a", 4, 25000)],
           [ev("b", 5, 40000)]],
}


@pytest.mark.parametrize("parallelism", PLANS)
def test_a_window_unioned_with_its_own_late_data_side_output_runs_the_window_once(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """Flink: a side output is one more stream of the job (``SideOutputITCase``,
    ``testSideOutputWithMultipleConsumers``): ``w.union(w.get_side_output(LATE))`` reads the
    one window's results and its late elements in one query. [0, 10 s) fires at batch 1's
    watermark 11999, before a@2000 arrives late there; [10 s, 20 s) at 24999 in batch 2;
    [20 s, 30 s) at the end of input (the sums keep their first element's fields)."""
    def build(s: Scenario) -> Any:
        window = (s.source("in").key_by("k").window(TUMBLING_10S)
                  .side_output_late_data(LATE).sum("v"))
        return window.union(window.get_side_output(LATE))

    main, _ = Scenario(spark, tmp_path, "window_and_its_late_data").run(
        SIDE_FILES, build, parallelism)
    assert in_order(main) == [Counter({("a", 1, 1000): 1, ("a", 3, 2000): 1}),
                              Counter({("a", 2, 12000): 1}), Counter({("a", 4, 25000): 1})]


class _SplitByParity(KeyedProcessFunction):
    """Odd values to the side output ``odd``, even ones to ``even``; nothing to the main."""

    def process_element(self, value: Any, ctx: KeyedProcessFunction.Context) -> Any:
        ctx.output(ODD if value.v % 2 else EVEN, value)
        return iter(())


ODD = OutputTag("odd", Types.ROW_NAMED(["k", "v", "ts"], [Types.STRING(), Types.LONG(),
                                                           Types.LONG()]))
EVEN = OutputTag("even", ODD.type_info)


@pytest.mark.parametrize("parallelism", PLANS)
def test_two_side_outputs_of_one_operator_unioned_feed_a_window_in_one_query(
    spark: Any, tmp_path: Path, parallelism: int
) -> None:
    """Flink: ``SideOutputITCase#testUnionOfTwoSideOutputs`` on a stream, with a window after
    the union: every element reaches the window once, through one of the two side outputs of
    the one process function, as the Rows its tags declare (``key_by("k")`` reads them). The
    window sees the process function's watermark: a@2000 comes after 11999 passed its window
    and is dropped there, as in the window before; [40 s, 50 s) waits for a later watermark."""
    def build(s: Scenario) -> Any:
        split = s.source("in").key_by("k").process(_SplitByParity())
        union = split.get_side_output(ODD).union(split.get_side_output(EVEN))
        return union.key_by("k").window(TUMBLING_10S).sum("v")

    main, _ = Scenario(spark, tmp_path, "two_sides_unioned").run(SIDE_FILES, build, parallelism)
    assert in_order(main) == [Counter({("a", 1, 1000): 1}), Counter({("a", 2, 12000): 1}),
                              Counter({("a", 4, 25000): 1})]
