"""Stream graphs on Spark: union, window join and coGroup, windows after windows, each run as
one stage, on static input and over several micro-batches (late data and restarts included).

Expected values follow Flink: a union's operator sees the minimum of its inputs' watermarks
(StatusWatermarkValve), a window's results reach the next window before the watermark that
fired them, and a late re-firing upstream arrives late downstream.
"""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path
from typing import Any

import pytest
from spark_scenarios import write_batches

from flinkwin import (
    CoGroupFunction,
    Duration,
    KeyedProcessFunction,
    OutputTag,
    ProcessAllWindowFunction,
    ProcessFunction,
    ProcessJoinFunction,
    Time,
    TumblingEventTimeWindows,
    Types,
    ValueStateDescriptor,
    WatermarkStrategy,
)
from flinkwin.datastream import DataStream
from flinkwin.errors import PickledElementsError
from flinkwin.spark import MemorySink

SCHEMA = "k string, v long, ts long"
LATE = OutputTag("late")


def ev(k: str, v: int, ts: int) -> dict[str, Any]:
    return {"k": k, "v": v, "ts": ts}


def stamped(df: Any, delay_ms: int = 0) -> DataStream:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(delay_ms)
    ).with_timestamp_assigner("ts")
    return DataStream(df).assign_timestamps_and_watermarks(strategy)


def source(spark: Any, directory: Path) -> Any:
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(directory))


def run(result: Any, checkpoint: Path, name: str, sides: tuple[OutputTag, ...] = ()
        ) -> tuple[dict[int, list[Any]], dict[str, dict[int, list[Any]]]]:
    main = MemorySink(f"{name}_main")
    side_sinks = {tag: MemorySink(f"{name}_{tag.tag_id}") for tag in sides}
    query = result.start(main=main, side_outputs=side_sinks,
                         checkpoint_location=str(checkpoint), trigger={"availableNow": True})
    query.awaitTermination()
    LAST_PROGRESS[:] = list(query.recentProgress)
    return (
        {b: [tuple(r) for r in rows] for b, rows in main.batches.items()},
        {t.tag_id: dict(s.batches) for t, s in side_sinks.items()},
    )


#: the progress of the last query ``run`` ran
LAST_PROGRESS: list[Any] = []


def metric_total(name: str) -> int:
    rows = [p["observedMetrics"].get("flinkwin") for p in LAST_PROGRESS
            if p.get("observedMetrics")]
    return sum((row.asDict().get(name) or 0) for row in rows if row is not None)


def flat(batches: dict[int, list[Any]]) -> list[Any]:
    return [r for b in sorted(batches) for r in batches[b]]


TUMBLING_5S = TumblingEventTimeWindows.of(Time.seconds(5))

A_BATCHES = [[ev("a", 1, 1000), ev("b", 2, 2000)], [ev("a", 3, 6000)], [ev("a", 4, 12000)]]
B_BATCHES = [[ev("a", 10, 1500)], [ev("b", 20, 7000)], [ev("b", 30, 13000)]]


# ------------------------------------------------------------------------------ union
def test_union_fires_at_the_minimum_of_its_inputs_watermarks(spark: Any, tmp_path: Path) -> None:
    """After batch 1, input a is at 6000 and b at 7000: the union's watermark is 5999, so
    window [0, 5 s) fires (with both inputs' elements) before the query stops; the restarted
    query fires [5, 10 s) once the third files arrive."""
    write_batches(tmp_path / "a", A_BATCHES[:2])
    write_batches(tmp_path / "b", B_BATCHES[:2])

    def build() -> Any:
        a, b = stamped(source(spark, tmp_path / "a")), stamped(source(spark, tmp_path / "b"))
        return a.union(b).key_by("k").window(TUMBLING_5S).sum("v")

    first, _ = run(build(), tmp_path / "cp", "union_min_1")
    assert flat(first) == [("a", 11, 1000), ("b", 2, 2000)]
    assert not first[0] and not first[1]
    write_batches(tmp_path / "a", A_BATCHES[2:], first=2)
    write_batches(tmp_path / "b", B_BATCHES[2:], first=2)
    second, _ = run(build(), tmp_path / "cp", "union_min_2")
    assert flat(second) == [("a", 3, 6000), ("b", 20, 7000)]


def test_union_watermark_waits_for_an_input_without_new_data(
    spark: Any, tmp_path: Path
) -> None:
    """Input b stops at 1500: the union's watermark stays at 1499 (Flink without idleness),
    so no window of a fires however far a advances."""
    write_batches(tmp_path / "a", A_BATCHES)
    write_batches(tmp_path / "b", B_BATCHES[:1])
    a, b = stamped(source(spark, tmp_path / "a")), stamped(source(spark, tmp_path / "b"))
    result = a.union(b).key_by("k").window(TUMBLING_5S).sum("v")
    main, _ = run(result, tmp_path / "cp", "union_wait")
    assert flat(main) == []


def test_an_idle_input_stops_holding_the_union_back(spark: Any, tmp_path: Path) -> None:
    """b with withIdleness(1 ms): once b has no element in a micro-batch it is idle and the
    union follows a alone (Flink's idle input); a's watermark 5999 fires [0, 5 s) in batch 2
    with b's earlier element, and a's last one, 11999, fires [5, 10 s) in the batch without
    data that Spark runs after batch 2 (the stage's wake-up clock, docs/spark-semantics.md,
    "When the stage runs"), as Flink's union follows its active input's last watermark."""
    write_batches(tmp_path / "a", A_BATCHES)
    write_batches(tmp_path / "b", B_BATCHES[:1])
    a = stamped(source(spark, tmp_path / "a"))
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)) \
        .with_timestamp_assigner("ts").with_idleness(Duration.of_millis(1))
    b = DataStream(source(spark, tmp_path / "b")).assign_timestamps_and_watermarks(strategy)
    result = a.union(b).key_by("k").window(TUMBLING_5S).sum("v")
    main, _ = run(result, tmp_path / "cp", "union_idle")
    assert main[2] == [("a", 11, 1000), ("b", 2, 2000)]
    assert main[3] == [("a", 3, 6000)]
    assert flat(main) == main[2] + main[3]


def test_an_idle_input_without_watermarks_stops_holding_the_union_back(
    spark: Any, tmp_path: Path
) -> None:
    """b with ``no_watermarks().with_idleness(1 ms)``: Flink's ``WatermarksWithIdleness``
    wraps any generator, ``NoWatermarksGenerator`` too, so once b has had no element for the
    timeout it is idle and the union follows a, as with a watermarked b (the test above:
    the same results). flinkwin dropped the idleness of a source without watermarks, which
    then held the union at Long.MIN_VALUE for ever: no window fired."""
    write_batches(tmp_path / "a", A_BATCHES)
    write_batches(tmp_path / "b", B_BATCHES[:1])
    a = stamped(source(spark, tmp_path / "a"))
    strategy = WatermarkStrategy.no_watermarks().with_timestamp_assigner("ts") \
        .with_idleness(Duration.of_millis(1))
    b = DataStream(source(spark, tmp_path / "b")).assign_timestamps_and_watermarks(strategy)
    result = a.union(b).key_by("k").window(TUMBLING_5S).sum("v")
    main, _ = run(result, tmp_path / "cp", "union_idle_no_watermarks")
    assert main[2] == [("a", 11, 1000), ("b", 2, 2000)]
    assert main[3] == [("a", 3, 6000)]
    assert flat(main) == main[2] + main[3]


class PassesOn(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        yield value


@pytest.mark.parametrize("plan", ["keyed", "distributed"])
def test_an_input_resuming_behind_the_unions_watermark_is_left_out_until_it_catches_up(
    spark: Any, tmp_path: Path, plan: str
) -> None:
    """R (withIdleness(5 s)) is idle after a pause longer than that, and resumes in batch 4
    at 5000, far behind the union's 24999. As in Flink's StatusWatermarkValve it is unaligned
    and left out of the union's minimum until it catches up, so L's 39999 fires
    [20 s, 30 s) with 4 in batch 5 and R's a@26000 there is late (flinkwin held the union
    back at R's watermark 4999: a@26000 went into that window, which fired 25, a sum Flink
    never emits). After a restart R is still unaligned: L's 49999 fires [40 s, 50 s). (On a
    machine so slow that batches 4 and 5 are 5 s apart, R is idle in batch 5 and the
    results are the same.) Both plans of several key groups, at parallelism 2: the window's
    key groups by its key column, and, with a re-keying process function after it, the
    distributed one: each key group is told which sources had elements."""
    left = [[ev("a", 1, 1000)], [ev("a", 2, 3000)], [ev("a", 3, 12000)], [ev("a", 4, 25000)],
            [ev("a", 5, 40000)], [], [ev("a", 6, 50000)]]
    right = [[ev("a", 10, 2000)], [], [], [], [ev("a", 20, 5000)], [ev("a", 21, 26000)], []]
    idle = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(0)) \
        .with_timestamp_assigner("ts").with_idleness(Duration.of_seconds(5))
    sums, late = [], []
    cuts = [0, 1, 6, 7]
    for run_number, (lo, hi) in enumerate(zip(cuts, cuts[1:])):
        if run_number == 1:
            time.sleep(5.5)  # R idle from batch 1 on
        write_batches(tmp_path / "l", left[lo:hi], first=lo)
        write_batches(tmp_path / "r", right[lo:hi], first=lo)
        l_stream = stamped(source(spark, tmp_path / "l"))
        r_stream = DataStream(source(spark, tmp_path / "r")).assign_timestamps_and_watermarks(
            idle)
        result = (l_stream.union(r_stream).key_by("k")
                  .window(TumblingEventTimeWindows.of(Time.seconds(10)))
                  .side_output_late_data(LATE).sum("v"))
        if plan == "keyed":
            result = result.set_parallelism(2)
        else:
            result = (result.key_by(lambda r: r.v).process(PassesOn(), output_type=SCHEMA)
                      .set_parallelism(2))
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                result.explain()
            assert "distributed : yes" in out.getvalue()
        main, sides = run(result, tmp_path / "cp", f"resume_behind_{plan}{run_number}",
                          (LATE,))
        sums += [r[1] for r in flat(main)]
        late += flat(sides["late"])
    assert sums == [13, 3, 4, 5]
    assert [tuple(r) for r in late] == [("a", 20, 5000), ("a", 21, 26000)]


def test_union_of_streams_of_different_types_is_refused(spark: Any) -> None:
    a = DataStream(spark.createDataFrame([("a", 1, 0)], SCHEMA))
    b = DataStream(spark.createDataFrame([("a", 1)], "k string, v long"))
    with pytest.raises(TypeError, match="Cannot union streams of different types"):
        a.union(b)


def test_union_of_three_static_streams_keeps_every_element(spark: Any) -> None:
    frames = [spark.createDataFrame([(k, i, 1000 * i)], SCHEMA) for i, k in enumerate("abc")]
    streams = [stamped(f) for f in frames]
    union = streams[0].union(streams[1], streams[2])
    assert sorted(union.execute_and_collect()) == [("a", 0, 0), ("b", 1, 1000), ("c", 2, 2000)]
    result = union.key_by(lambda r: "all").window(TUMBLING_5S).sum("v")
    assert [tuple(r) for r in result.execute_and_collect()] == [("a", 3, 0)]


# ------------------------------------------------------------------ windows after windows
class TopOfWindow(ProcessAllWindowFunction):
    def process(self, context: Any, elements: Any) -> Any:
        best = max(elements, key=lambda r: r.v)
        yield (context.window().start, best.k, best.v)


def test_window_after_window_on_a_stream_with_a_late_refiring(
    spark: Any, tmp_path: Path
) -> None:
    """Per-key sums per 5 s feed a windowAll top-1 of the same windows, in one query, over a
    restart. A late element re-fires the upstream window (allowed lateness 10 s); its new
    result reaches the downstream window after that window fired and was purged: it is late
    there and goes to the downstream window's late output, as in Flink."""
    batches = [
        [ev("a", 1, 1000), ev("b", 2, 2000)],
        [ev("a", 3, 6000)],
        [ev("a", 10, 3000), ev("a", 5, 12000)],
        [ev("b", 1, 16000)],
    ]
    write_batches(tmp_path / "in", batches[:2])

    def build() -> Any:
        sums = (
            stamped(source(spark, tmp_path / "in")).key_by("k").window(TUMBLING_5S)
            .allowed_lateness(Time.seconds(10)).sum("v")
        )
        return (
            sums.window_all(TUMBLING_5S).side_output_late_data(LATE)
            .process(TopOfWindow(), output_type="start long, k string, v long")
        )

    first, _ = run(build(), tmp_path / "cp", "cascade_1", (LATE,))
    assert flat(first) == [(0, "b", 2)]  # the upstream results reached it before 5999
    write_batches(tmp_path / "in", batches[2:], first=2)
    second, sides = run(build(), tmp_path / "cp", "cascade_2", (LATE,))
    assert [tuple(r) for r in flat(sides["late"])] == [("a", 11, 1000)]
    assert flat(second) == [(5000, "a", 3), (10000, "a", 5)]


class EmitsLate(KeyedProcessFunction):
    """Sends each sum to side output ``late`` too (the tag the window before it declares)."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        ctx.output(LATE, value)
        yield value


def test_get_side_output_is_the_side_output_of_this_operator_only(
    spark: Any, tmp_path: Path
) -> None:
    """Flink's getSideOutput(tag) is the side output of the operator it is called on: a map's
    or a process function's, never the late data of the window before them. Asked of a stream
    whose own operator does not declare the tag, flinkwin refuses, naming both operators (it
    gave the window's late data, silently); start(side_outputs=...) on the downstream stream
    still writes the window's late data in the same query."""
    def sums() -> Any:
        df = spark.createDataFrame([("a", 1, 1000), ("a", 2, 12000)], SCHEMA)
        return (stamped(df).key_by("k").window(TUMBLING_5S).side_output_late_data(LATE)
                .sum("v"))

    mapped = sums().map(lambda r: (r.k, r.v), output_type="k string, v long")
    with pytest.raises(Exception, match=r"getSideOutput\(.*'late'.*\): that tag is the side "
                       r"output of an earlier operator \(Window.*\), not of this stream's "
                       r"\(map"):
        mapped.get_side_output(LATE)
    processed = sums().key_by("k").process(EmitsLate(), output_type="k string, v long, ts long")
    with pytest.raises(Exception, match=r"not of this stream's \(.*[Pp]rocess"):
        processed.get_side_output(LATE)
    # the window's own late data, from its own result
    assert sums().get_side_output(LATE).toDF().collect() == []
    write_batches(tmp_path / "in", [[ev("a", 1, 1000)], [ev("a", 2, 12000)],
                                    [ev("a", 4, 3000)]])
    windowed = (stamped(source(spark, tmp_path / "in")).key_by("k").window(TUMBLING_5S)
                .side_output_late_data(LATE).sum("v"))
    _, sides = run(windowed.map(lambda r: (r.k, r.v), output_type="k string, v long"),
                   tmp_path / "cp", "own_side", (LATE,))
    assert [tuple(r) for b in sorted(sides["late"]) for r in sides["late"][b]] == [
        ("a", 4, 3000)]


def test_a_query_side_output_takes_a_tag_from_every_operator_sending_it(
    spark: Any, tmp_path: Path
) -> None:
    """start(side_outputs={tag: sink}) writes everything the graph sends under ``tag``: the
    late data of the window declaring it and what a later process function sends with
    ctx.output under the same tag (the function's rows were dropped, silently: the sink took
    the declaring window's alone). A tag declared for rows of two different types is
    refused, naming the operator."""
    write_batches(tmp_path / "in", [[ev("a", 1, 1000)], [ev("a", 2, 12000)],
                                    [ev("a", 4, 3000)]])
    sums = (stamped(source(spark, tmp_path / "in")).key_by("k").window(TUMBLING_5S)
            .side_output_late_data(LATE).sum("v"))
    processed = sums.key_by("k").process(EmitsLate(), output_type=SCHEMA)
    main, sides = run(processed, tmp_path / "cp", "every_sender", (LATE,))
    assert flat(main) == [("a", 1, 1000)]
    assert sorted(tuple(r) for b in sides["late"] for r in sides["late"][b]) == [
        ("a", 1, 1000), ("a", 4, 3000)]

    df = spark.createDataFrame([("a", 1, 1000)], SCHEMA)
    pairs = (stamped(df).key_by("k").window(TUMBLING_5S).side_output_late_data(LATE).sum("v")
             .map(lambda r: (r.k, r.v), output_type="k string, v long"))
    again = pairs.key_by("k").window(TUMBLING_5S).side_output_late_data(LATE).sum("v")
    with pytest.raises(Exception, match=r"side output .*'late'.*: Window.* declares it for "
                       r"rows of struct<k:string,v:bigint,ts:bigint>.*own OutputTag"):
        again.start(main=MemorySink("two_types_main"),
                    side_outputs={LATE: MemorySink("two_types_late")})


SENT = OutputTag("sent", "k string, v long, ts long")


class Sends(KeyedProcessFunction):
    """Sends each sum, times 10, to side output ``sent`` (a tag no operator declares)."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        ctx.output(SENT, (value.k, value.v * 10, ctx.timestamp()))
        yield value.k, value.v


def test_a_query_writes_the_side_output_an_earlier_function_sends(
    spark: Any, tmp_path: Path
) -> None:
    """start(side_outputs={tag: sink}) on a graph's result writes what an earlier operator's
    function sends with ctx.output under that tag (it wrote nothing: the tag went to the
    result's own operator, which sends none), in the same query as the result, as a Flink
    job writing both streams does; the result's own get_side_output of that tag is its own
    (a filter's: empty)."""
    write_batches(tmp_path / "in", [[ev("a", 1, 1000)], [ev("a", 2, 12000)],
                                    [ev("b", 3, 13000)], [ev("a", 4, 30000)]])
    sums = stamped(source(spark, tmp_path / "in")).key_by("k").window(TUMBLING_5S).sum("v")
    result = (sums.key_by("k").process(Sends(), output_type="k string, v long")
              .filter(lambda r: True))
    main, sides = run(result, tmp_path / "cp", "function_side", (SENT,))
    assert sorted(flat(main)) == [("a", 1), ("a", 2), ("b", 3)]
    assert sorted(tuple(r) for b in sides["sent"] for r in sides["sent"][b]) == [
        ("a", 10, 4999), ("a", 20, 14999), ("b", 30, 14999)]


def test_window_after_window_static_matches_streaming_results(spark: Any) -> None:
    df = spark.createDataFrame(
        [("a", 1, 1000), ("b", 2, 2000), ("a", 3, 6000), ("b", 7, 7000)], SCHEMA
    )
    sums = stamped(df).key_by("k").window(TUMBLING_5S).sum("v")
    top = sums.window_all(TUMBLING_5S).process(
        TopOfWindow(), output_type="start long, k string, v long"
    )
    assert [tuple(r) for r in top.execute_and_collect()] == [(0, "b", 2), (5000, "b", 7)]


# ------------------------------------------------------------------------ window joins
JOIN_SOURCE1 = [
    ("a", "x", 0), ("a", "y", 1), ("a", "z", 2),
    ("b", "u", 3), ("b", "w", 5),
    ("a", "i", 6), ("a", "j", 7), ("a", "k", 8),
]
JOIN_SOURCE2 = [
    ("a", "u", 0), ("a", "w", 1),
    ("b", "i", 3), ("b", "k", 5),
    ("a", "x", 6), ("a", "z", 8),
]
JOIN_EXPECTED = sorted([
    "(a,x,0):(a,u,0)", "(a,x,0):(a,w,1)", "(a,y,1):(a,u,0)", "(a,y,1):(a,w,1)",
    "(a,z,2):(a,u,0)", "(a,z,2):(a,w,1)", "(b,u,3):(b,i,3)", "(b,u,3):(b,k,5)",
    "(b,w,5):(b,i,3)", "(b,w,5):(b,k,5)", "(a,i,6):(a,x,6)", "(a,i,6):(a,z,8)",
    "(a,j,7):(a,x,6)", "(a,j,7):(a,z,8)", "(a,k,8):(a,x,6)", "(a,k,8):(a,z,8)",
])


def _java(t: Any) -> str:
    return "(" + ",".join(str(v) for v in t) + ")"


def _join_streams(spark: Any) -> tuple[DataStream, DataStream]:
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner("ts")
    s1 = DataStream(spark.createDataFrame(JOIN_SOURCE1, "k string, s string, ts long"))
    s2 = DataStream(spark.createDataFrame(JOIN_SOURCE2, "k string, s string, ts long"))
    return (s1.assign_timestamps_and_watermarks(strategy),
            s2.assign_timestamps_and_watermarks(strategy))


def test_join_coGroupJoinITCase_testJoin_on_spark(spark: Any) -> None:  # noqa: N802
    """CoGroupJoinITCase.testJoin: tumbling 3 ms windows, inner join on f0."""
    s1, s2 = _join_streams(spark)
    result = (
        s1.join(s2).where("k").equal_to("k")
        .window(TumblingEventTimeWindows.of(Time.milliseconds(3)))
        .apply(lambda a, b: _java(a) + ":" + _java(b), output_type="s string")
    )
    assert sorted(r[0] for r in result.execute_and_collect()) == JOIN_EXPECTED


def test_self_join_coGroupJoinITCase_testSelfJoin_on_spark(spark: Any) -> None:  # noqa: N802
    s1, _ = _join_streams(spark)
    result = (
        s1.join(s1).where("k").equal_to("k")
        .window(TumblingEventTimeWindows.of(Time.milliseconds(3)))
        .apply(lambda a, b: _java(a) + ":" + _java(b), output_type="s string")
    )
    got = sorted(r[0] for r in result.execute_and_collect())
    windows = [[r for r in JOIN_SOURCE1 if r[2] // 3 == w] for w in range(3)]
    expected = sorted(
        _java(a) + ":" + _java(b) for rows in windows for a in rows for b in rows if a[0] == b[0]
    )
    assert got == expected


class Counts(CoGroupFunction):
    def co_group(self, first: Any, second: Any) -> Any:
        key = (first or second)[0].k
        yield (key, len(first), len(second))


def test_co_group_streaming_with_late_data_and_a_restart(spark: Any, tmp_path: Path) -> None:
    """coGroup over 10 s windows in two runs of the same checkpoint; elements too late for
    their window reach the late output as TaggedUnions of their input (beyond Flink)."""
    write_batches(tmp_path / "a", A_BATCHES[:2])
    write_batches(tmp_path / "b", B_BATCHES[:2])

    def build() -> Any:
        a = stamped(source(spark, tmp_path / "a"))
        b = stamped(source(spark, tmp_path / "b"))
        return (
            a.co_group(b).where("k").equal_to("k")
            .window(TumblingEventTimeWindows.of(Time.seconds(10)))
            .side_output_late_data(LATE)
            .apply(Counts(), output_type="k string, n1 int, n2 int")
        )

    first, _ = run(build(), tmp_path / "cp", "cogroup_1")
    assert flat(first) == []
    # the second run: a reaches 12 s and b 13 s (window [0, 10 s) fires), then late elements
    write_batches(tmp_path / "a", [A_BATCHES[2], [ev("a", 99, 500)]], first=2)
    write_batches(tmp_path / "b", [B_BATCHES[2], [ev("b", 98, 700)]], first=2)
    # the late TaggedUnions are Python objects: a Spark sink for them is refused, a Python
    # sink gets them (below)
    with pytest.raises(PickledElementsError, match="the side output 'late'"):
        run(build(), tmp_path / "cp", "cogroup_refused", (LATE,))
    second, _ = run(build(), tmp_path / "cp", "cogroup_2")
    assert sorted(flat(second)) == [("a", 2, 1), ("b", 1, 1)]
    late: list[Any] = []
    query = build().get_side_output(LATE).add_sink(lambda value, _ctx: late.append(value))
    assert query is not None
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert sorted((t.is_one(), tuple(t.get_one() if t.is_one() else t.get_two()))
                  for t in late) == [(False, ("b", 98, 700)), (True, ("a", 99, 500))]


def test_a_joins_late_tagged_unions_are_refused_by_spark_naming_the_map_that_types_them(
    spark: Any, tmp_path: Path
) -> None:
    """The late side output of a coGroup holds TaggedUnions of both inputs, which have no
    Spark type: toDF() and a Spark sink in start() are refused with an error naming what to
    do (map them to typed values), a type on the OutputTag is refused where it is given, and
    the map the error suggests writes every late element (none is lost)."""
    write_batches(tmp_path / "a", [*A_BATCHES, [ev("a", 99, 500)]])
    write_batches(tmp_path / "b", [*B_BATCHES, [ev("b", 98, 700)]])

    def build() -> Any:
        a = stamped(source(spark, tmp_path / "a"))
        b = stamped(source(spark, tmp_path / "b"))
        return (
            a.co_group(b).where("k").equal_to("k")
            .window(TumblingEventTimeWindows.of(Time.seconds(10)))
            .side_output_late_data(LATE)
            .apply(Counts(), output_type="k string, n1 int, n2 int")
        )

    result = build()
    with pytest.raises(PickledElementsError, match="TaggedUnions of both inputs.*map"):
        result.get_side_output(LATE).toDF()
    with pytest.raises(PickledElementsError, match="TaggedUnions of both inputs.*map"):
        result.start(side_outputs={LATE: MemorySink("late_unions")})
    a = stamped(source(spark, tmp_path / "a"))
    with pytest.raises(TypeError, match="TaggedUnions of both inputs"):
        a.co_group(a).where("k").equal_to("k").window(
            TumblingEventTimeWindows.of(Time.seconds(10))
        ).side_output_late_data(OutputTag("late", Types.STRING()))

    def typed(u: Any) -> tuple[int, str, int, int]:
        element = u.get_one() if u.is_one() else u.get_two()
        return (1 if u.is_one() else 2, element.k, element.v, element.ts)

    late = result.get_side_output(LATE).map(typed, output_type=Types.ROW_NAMED(
        ["input", "k", "v", "ts"], [Types.INT(), Types.STRING(), Types.LONG(), Types.LONG()]))
    query = (late.toDF().writeStream.format("memory").queryName("late_typed")
             .option("checkpointLocation", str(tmp_path / "cp_late"))
             .trigger(availableNow=True).start())
    query.awaitTermination()
    rows = sorted(tuple(r) for r in spark.sql("select * from late_typed").collect())
    assert rows == [(1, "a", 99, 500), (2, "b", 98, 700)]


def test_an_operator_reading_one_source_sees_that_sources_watermark(
    spark: Any, tmp_path: Path
) -> None:
    """A window on input a (feeding a join with b) has a's watermark, not the minimum of a's
    and b's: a's element at 4000 after a reached 9000 is late for that window (Flink: the
    window operator's input is a alone), although b holds the join's watermark at 1499."""
    write_batches(tmp_path / "a", [[ev("a", 1, 1000)], [ev("a", 2, 9000)], [ev("a", 5, 4000)]])
    write_batches(tmp_path / "b", [[ev("a", 10, 1500)]])
    sums = (
        stamped(source(spark, tmp_path / "a")).key_by("k").window(TUMBLING_5S)
        .side_output_late_data(LATE).sum("v")
    )
    joined = (
        sums.join(stamped(source(spark, tmp_path / "b"))).where("k").equal_to("k")
        .window(TumblingEventTimeWindows.of(Time.seconds(10)))
        .apply(lambda x, y: (x.v, y.v), output_type="x long, y long")
    )
    main, sides = run(joined, tmp_path / "cp", "own_watermark", (LATE,))
    assert flat(main) == []  # b holds the join back
    assert [tuple(r) for r in flat(sides["late"])] == [("a", 5, 4000)]
    assert metric_total("numLateRecordsToSideOutput") == 1


def test_a_filtered_out_element_still_advances_a_windows_watermark(
    spark: Any, tmp_path: Path
) -> None:
    """assign_timestamps_and_watermarks(...).filter(...) before a single window: Flink's
    watermark generator sees b@20000 before the filter drops it, so window [0, 5 s) of a
    fires (in the batch without data after the input)."""
    write_batches(tmp_path / "in", [[ev("a", 1, 1000), ev("b", 2, 20000)]])
    result = (
        stamped(source(spark, tmp_path / "in")).filter(lambda r: r.k == "a")
        .key_by("k").window(TUMBLING_5S).sum("v")
    )
    main, _ = run(result, tmp_path / "cp", "filtered_watermark")
    assert flat(main) == [("a", 1, 1000)]


# ------------------------------------------ clocks survive a graph that holds no state
MIN_LONG = -(2**63)
SPY_TYPE = "v long, ts long, wm long"


class WatermarkSpy(ProcessFunction):
    """Each element's value, timestamp and the operator's watermark when it arrives."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        ts = ctx.timestamp()
        yield (value.v, MIN_LONG if ts is None else ts, ctx.timer_service().current_watermark())


class CountingWatermarkSpy(KeyedProcessFunction):
    """WatermarkSpy that also counts its elements in keyed state (the graph holds state)."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.count.update((self.count.value() or 0) + 1)
        ts = ctx.timestamp()
        yield (value.v, MIN_LONG if ts is None else ts, ctx.timer_service().current_watermark())


def test_a_process_function_sees_the_watermarks_of_earlier_micro_batches(
    spark: Any, tmp_path: Path
) -> None:
    """A stateless ProcessFunction over three micro-batches with timestamps 1000, 2000 and
    500 (monotonous watermarks), the third in a restarted query: Flink's watermarks are
    MIN, 999 and 1999, and the third element is behind the watermark (late), although the
    function keeps no state."""
    batches = [[ev("a", 1, 1000)], [ev("a", 2, 2000)], [ev("a", 3, 500)]]
    write_batches(tmp_path / "in", batches[:2])

    def build() -> Any:
        return stamped(source(spark, tmp_path / "in")).process(WatermarkSpy(), SPY_TYPE)

    first, _ = run(build(), tmp_path / "cp", "spy_1")
    write_batches(tmp_path / "in", batches[2:], first=2)
    second, _ = run(build(), tmp_path / "cp", "spy_2")
    assert flat(first) + flat(second) == [(1, 1000, MIN_LONG), (2, 2000, 999), (3, 500, 1999)]


def test_a_late_element_after_a_graph_window_fired_and_held_nothing_is_late(
    spark: Any, tmp_path: Path
) -> None:
    """A window after a process function (one graph): [0, 5 s) fires at 11999 (the third
    micro-batch, whose element the function drops) and the graph then holds nothing; the
    element at 3000 in the next micro-batch is late (side output), as in Flink."""

    class Positive(ProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            if value.v > 0:
                yield value

    write_batches(tmp_path / "in", [
        [ev("a", 1, 1000)], [ev("a", 0, 12000)], [ev("a", 0, 12001)], [ev("a", 7, 3000)]
    ])
    result = (
        stamped(source(spark, tmp_path / "in")).process(Positive(), SCHEMA)
        .window_all(TUMBLING_5S).side_output_late_data(LATE)
        .process(TopOfWindow(), output_type="start long, k string, v long")
    )
    main, sides = run(result, tmp_path / "cp", "held_nothing", (LATE,))
    assert flat(main) == [(0, "a", 1)]
    assert [tuple(r) for r in flat(sides["late"])] == [("a", 7, 3000)]


# ------------------------------------------------------ inputs without a WatermarkStrategy
def test_a_union_with_a_stream_without_watermarks_stays_at_min(
    spark: Any, tmp_path: Path
) -> None:
    """b has no WatermarkStrategy: in Flink it never emits a watermark, so the union's
    operator stays at Long.MIN_VALUE however far a advances (b's elements carry no
    timestamp)."""
    write_batches(tmp_path / "a", [[ev("a", 1, 1000)], [ev("a", 2, 6000)], [ev("a", 3, 9000)]])
    write_batches(tmp_path / "b", [[ev("a", 10, 0)], [ev("a", 20, 0)]])
    a = stamped(source(spark, tmp_path / "a"))
    b = DataStream(source(spark, tmp_path / "b"))
    result = a.union(b).key_by(lambda r: r.k, key_type=Types.STRING()) \
        .process(CountingWatermarkSpy(), SPY_TYPE)
    main, _ = run(result, tmp_path / "cp", "union_no_wm")
    assert sorted(flat(main)) == [
        (1, 1000, MIN_LONG), (2, 6000, MIN_LONG), (3, 9000, MIN_LONG),
        (10, MIN_LONG, MIN_LONG), (20, MIN_LONG, MIN_LONG),
    ]


def test_a_union_with_a_stream_without_watermarks_holds_its_windows_unfired(
    spark: Any, tmp_path: Path
) -> None:
    """The same with a window keyed by a column (the stage's key groups, whose watermark is
    Spark's over the watermarked inputs only): no window fires on a stream; on static
    input the end of input fires them all."""
    write_batches(tmp_path / "a", A_BATCHES)
    (tmp_path / "b").mkdir()
    a = stamped(source(spark, tmp_path / "a"))
    b = DataStream(source(spark, tmp_path / "b"))
    main, _ = run(a.union(b).key_by("k").window(TUMBLING_5S).sum("v"), tmp_path / "cp",
                  "union_no_wm_window")
    assert flat(main) == []
    static_a = stamped(spark.createDataFrame([("a", 1, 1000), ("a", 2, 9000)], SCHEMA))
    static_b = DataStream(spark.createDataFrame([], SCHEMA))
    fired = static_a.union(static_b).key_by("k").window(TUMBLING_5S).sum("v")
    assert sorted(tuple(r) for r in fired.execute_and_collect()) == [
        ("a", 1, 1000), ("a", 2, 9000)
    ]


def test_a_co_group_with_a_stream_without_watermarks_fires_no_window(
    spark: Any, tmp_path: Path
) -> None:
    """A two-input operator (coGroup) whose second input has no WatermarkStrategy: its
    watermark is the minimum of both inputs', Long.MIN_VALUE, so no window fires."""
    write_batches(tmp_path / "a", A_BATCHES)
    (tmp_path / "b").mkdir()
    a = stamped(source(spark, tmp_path / "a"))
    b = DataStream(source(spark, tmp_path / "b"))
    result = (
        a.co_group(b).where("k").equal_to("k").window(TUMBLING_5S)
        .apply(Counts(), output_type="k string, n1 int, n2 int")
    )
    main, _ = run(result, tmp_path / "cp", "cogroup_no_wm")
    assert flat(main) == []


def test_a_window_stage_that_held_nothing_still_side_outputs_a_late_element(
    spark: Any, tmp_path: Path
) -> None:
    """The single window stage's counterpart: its watermark is Spark's, given back on every
    call, so dropping the state of a key group that holds nothing loses no clock."""
    write_batches(tmp_path / "in", [
        [ev("a", 1, 1000)], [ev("a", 0, 12000)], [ev("a", 0, 12001)], [ev("a", 7, 3000)]
    ])
    result = (
        stamped(source(spark, tmp_path / "in")).filter(lambda r: r.v > 0)
        .key_by("k").window(TUMBLING_5S).side_output_late_data(LATE).sum("v")
    )
    main, sides = run(result, tmp_path / "cp", "window_held_nothing", (LATE,))
    assert flat(main) == [("a", 1, 1000)]
    assert [tuple(r) for r in flat(sides["late"])] == [("a", 7, 3000)]


# -------------------------------------------------------------------------- null keys
#: Flink's KeyGroupRangeAssignment message for a null key
NULL_KEY = "Assigned key must not be null!"
NULL_ROWS = [[ev("a", 1, 1000)], [{"k": None, "v": 2, "ts": 2000}]]


class Both(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield left.v, right.v


def _null_key_graph(kind: str, a: DataStream, b: DataStream, key: Any) -> Any:
    if kind == "interval join":
        return (a.key_by(key).interval_join(b.key_by(key))
                .between(Time.seconds(-1), Time.seconds(1))
                .process(Both(), output_type="x long, y long"))
    return (a.join(b).where(key).equal_to(key).window(TUMBLING_5S)
            .apply(lambda x, y: (x.v, y.v), output_type="x long, y long"))


@pytest.mark.parametrize("kind", ["interval join", "window join"])
def test_a_null_key_fails_a_join_on_static_input_with_flinks_message(
    spark: Any, kind: str
) -> None:
    """A key selector returning None (the operator's check, one key group) and a null key
    column (Spark's check before the shuffle) fail as Flink's KeyGroupRangeAssignment does;
    a None key is never paired with another None."""
    rows = [("a", 1, 1000), (None, 2, 1000)]
    a = stamped(spark.createDataFrame(rows, SCHEMA))
    b = stamped(spark.createDataFrame(rows, SCHEMA))
    with pytest.raises(Exception, match=NULL_KEY) as by_selector:
        _null_key_graph(kind, a, b, lambda r: r.k).execute_and_collect()
    assert "null key for element" in str(by_selector.value)
    with pytest.raises(Exception, match=NULL_KEY) as by_column:
        _null_key_graph(kind, a, b, "k").execute_and_collect()
    assert "null key in row" in str(by_column.value)


@pytest.mark.parametrize("kind", ["interval join", "window join"])
def test_a_null_key_fails_a_streaming_join_with_flinks_message(
    spark: Any, tmp_path: Path, kind: str
) -> None:
    write_batches(tmp_path / "a", NULL_ROWS)
    write_batches(tmp_path / "b", NULL_ROWS)
    a = stamped(source(spark, tmp_path / "a"))
    b = stamped(source(spark, tmp_path / "b"))
    name = kind.replace(" ", "_")
    with pytest.raises(Exception, match=NULL_KEY) as failure:
        run(_null_key_graph(kind, a, b, lambda r: r.k), tmp_path / "cp", f"null_{name}")
    assert "null key for element" in str(failure.value)
