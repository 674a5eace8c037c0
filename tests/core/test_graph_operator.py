"""GraphOperator: a stream graph's operators run as one (no Spark).

The watermark rules are those of Flink's ``StatusWatermarkValveTest`` that apply without
stream status (idleness): an operator's watermark is the minimum of its inputs', it only
advances, and an input that has not advanced holds it back.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from graph_frames import frame, source

from flinkwin import (
    OutputTag,
    ProcessFunction,
    ProcessJoinFunction,
    ProcessWindowFunction,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.functions.builtin import sum_of
from flinkwin.operator import WindowOperator
from flinkwin.operator.graph import (
    MAP,
    OPERATOR,
    UNION,
    GraphOperator,
    GraphPlan,
    NodeSpec,
    SourceSpec,
)
from flinkwin.operator.interval_join_operator import IntervalJoinOperator
from flinkwin.operator.keyed_process_operator import ProcessOperator
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.time import MAX_LONG, MIN_LONG

INFO = TaskInfo("Graph", 0, 1, 1)
LATE = OutputTag("late")


def window_builder(size_ms: int, key: Any, late: OutputTag | None = None) -> Any:
    def build(task_info: TaskInfo) -> WindowOperator:
        return WindowOperator(
            TumblingEventTimeWindows.of(Time.milliseconds(size_ms)), sum_of("v"),
            key_selector=key, late_output_tag=late, task_info=task_info,
        )

    return build






def union_window_plan(late: OutputTag | None = None) -> GraphPlan:
    nodes = (
        NodeSpec("union", UNION, ((("source", 0), 0), (("source", 1), 0))),
        NodeSpec("window", OPERATOR, ((("node", 0), 0),), build=window_builder(10, "k", late)),
    )
    return GraphPlan((source(0), source(1)), nodes, ("node", 1))


def test_union_operator_watermark_is_the_minimum_of_its_inputs() -> None:
    """StatusWatermarkValveTest: the output watermark is the minimum over all inputs."""
    op = GraphOperator(union_window_plan(), INFO)
    op.process_batch(frame([(0, "a", 1), (1, "a", 2)]), [1, 5])
    op.process_batch(frame([(0, "a", 3)]), [25])  # source 0 at 24, source 1 still at 4
    op.advance_watermark(4)
    assert op.drain_output() == []
    op.process_batch(frame([(1, "a", 4)]), [30])  # source 1 at 29 from the next batch on
    assert op.drain_output() == []
    op.advance_watermark(24)  # the next batch: min(24, 29)
    out = op.drain_output()
    assert [(tuple(v), ts) for v, ts in out] == [(("a", 3), 9)]


def test_an_input_without_new_data_holds_the_watermark_back() -> None:
    op = GraphOperator(union_window_plan(), INFO)
    op.process_batch(frame([(0, "a", 1), (1, "a", 2)]), [1, 2])
    for ts in (100, 200, 300):
        op.process_batch(frame([(0, "a", 1)]), [ts])
    assert op.drain_output() == []
    assert op.next_event_time_timer() == 9


def test_watermarks_only_advance_and_end_of_input_fires_everything() -> None:
    op = GraphOperator(union_window_plan(), INFO)
    op.process_batch(frame([(0, "a", 1), (1, "b", 2)]), [1, 2])
    op.advance_watermark(MAX_LONG)
    assert sorted((tuple(v), ts) for v, ts in op.drain_output()) == [
        (("a", 1), 9), (("b", 2), 9)
    ]
    op.advance_watermark(5)  # ignored: not above the current one
    assert op.current_watermark == MAX_LONG


def test_an_operator_on_one_source_has_that_sources_watermark() -> None:
    """A window on source 0 only is late-checked against source 0's watermark, not the
    minimum over both sources (Flink: an operator's watermark comes from its inputs)."""
    nodes = (
        NodeSpec("window", OPERATOR, ((("source", 0), 0),),
                 build=window_builder(10, "k", LATE)),
        NodeSpec("union", UNION, ((("node", 0), 0), (("source", 1), 0))),
    )
    plan = GraphPlan((source(0), source(1)), nodes, ("node", 1), {LATE: ("side", 0, LATE)})
    op = GraphOperator(plan, INFO)
    op.process_batch(frame([(0, "a", 1), (1, "z", 0)]), [1, 1])
    op.process_batch(frame([(0, "a", 2)]), [40])   # source 0 at 39, source 1 at 0
    op.process_batch(frame([(0, "a", 3)]), [5])    # late for source 0's window [0, 10)
    late = op.drain_side_outputs()[LATE]
    assert [(tuple(v), ts) for v, ts in late] == [(("a", 3), 5)]


def test_results_reach_the_next_operator_before_the_watermark_that_fired_them() -> None:
    """A window after a window: the first window's result (timestamp 9) is on time in the
    second, although both see watermark 20 in the same advance."""
    nodes = (
        NodeSpec("w1", OPERATOR, ((("source", 0), 0),), build=window_builder(10, "k")),
        NodeSpec("w2", OPERATOR, ((("node", 0), 0),), build=window_builder(10, "k")),
    )
    plan = GraphPlan((source(0), source(1, None)), nodes, ("node", 1))
    op = GraphOperator(plan, INFO)
    op.process_batch(frame([(0, "a", 1), (0, "a", 2)]), [1, 3])
    op.process_batch(frame([(0, "a", 5)]), [21])
    op.advance_watermark(MAX_LONG)
    assert [(tuple(v), ts) for v, ts in op.drain_output()] == [(("a", 3), 9), (("a", 5), 29)]


def test_steps_map_between_operators_and_keep_timestamps() -> None:
    nodes = (
        NodeSpec("double", MAP, ((("source", 0), 0),),
                 function=lambda r: r.replace("v", r.v * 2)),
        NodeSpec("window", OPERATOR, ((("node", 0), 0),), build=window_builder(10, "k")),
    )
    op = GraphOperator(GraphPlan((source(0),), nodes, ("node", 1)), INFO)
    op.process_batch(frame([(0, "a", 1), (0, "a", 2)]), [1, 2])
    op.advance_watermark(MAX_LONG)
    assert [(tuple(v), ts) for v, ts in op.drain_output()] == [(("a", 6), 9)]


class _OddsAside(ProcessFunction):
    """Odd values to the side output ``odd`` as ``(k, v)`` tuples, every value to the main."""

    def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Any:
        if value.v % 2:
            ctx.output(ODD, (value.k, value.v))
        yield value.v


ODD = OutputTag("odd")


def test_a_side_output_reaches_the_nodes_reading_it_shaped_as_its_type() -> None:
    """Flink: a side output is a stream of the job (SideOutputITCase): node 1 reads node 0's
    side output ``odd``, whose values it sees through the shape its type gives (here: the
    pair as a dict), and the union after both gets node 0's main output and node 1's in the
    order the function emitted them (its side output first for an odd value)."""
    seen: list[Any] = []
    nodes = (
        NodeSpec("split", OPERATOR, ((("source", 0), 0),),
                 build=lambda info, subtask=None: ProcessOperator(_OddsAside(), task_info=info),
                 side_shapes=(("odd", lambda pair: {"key": pair[0], "odd": pair[1]}),)),
        NodeSpec("spy", MAP, ((("side", 0, "odd"), 0),),
                 function=lambda d: seen.append(d) or d["odd"] * 100),
        NodeSpec("union", UNION, ((("node", 0), 0), (("node", 1), 0))),
    )
    op = GraphOperator(GraphPlan((source(0),), nodes, ("node", 2)), INFO)
    op.process_batch(frame([(0, "a", 1), (0, "b", 2), (0, "c", 3)]), [1, 2, 3])
    assert seen == [{"key": "a", "odd": 1}, {"key": "c", "odd": 3}]
    assert [v for v, _ in op.drain_output()] == [100, 1, 2, 300, 3]


def test_snapshot_and_restore_keep_operators_and_source_watermarks() -> None:
    plan = union_window_plan()
    op = GraphOperator(plan, INFO)
    op.process_batch(frame([(0, "a", 1), (1, "a", 2)]), [1, 5])
    restored = GraphOperator(plan, INFO)
    restored.restore(op.snapshot())
    assert restored.source_max == [1, 5]
    restored.process_batch(frame([(0, "a", 3), (1, "a", 4)]), [30, 30])
    restored.process_batch(frame([(0, "a", 0)]), [31])
    assert [(tuple(v), ts) for v, ts in restored.drain_output()] == [(("a", 3), 9)]


def test_restore_into_a_graph_of_another_shape_is_refused() -> None:
    op = GraphOperator(union_window_plan(), INFO)
    op.process_batch(frame([(0, "a", 1)]), [1])
    nodes = (NodeSpec("window", OPERATOR, ((("source", 0), 0),), build=window_builder(10, "k")),)
    other = GraphOperator(GraphPlan((source(0), source(1)), nodes, ("node", 0)), INFO)
    with pytest.raises(ValueError, match="a graph's shape cannot change on restart"):
        other.restore(op.snapshot())


def test_elements_without_timestamps_reach_operators_as_none() -> None:
    seen: list[Any] = []
    nodes = (NodeSpec("spy", MAP, ((("source", 0), 0),), function=lambda r: seen.append(r)),)
    op = GraphOperator(GraphPlan((source(0, None),), nodes, ("node", 0)), INFO)
    op.process_batch(frame([(0, "a", 1)]), [MIN_LONG])
    assert [ts for _, ts in op.drain_output()] == [None]
    assert op.holds_nothing()


# ------------------------------------------------ clocks kept when the operators hold nothing
def run_batches(plan: GraphPlan, batches: list[tuple[pd.DataFrame | None, list[int], int]]
                ) -> tuple[list[Any], dict[OutputTag, list[Any]], list[bytes | None]]:
    """The runtime's cycle per micro-batch (``KeyGroupRuntime.process_stream``): restore the
    key group's snapshot (or build a new graph when there is none), advance it to the
    stage's watermark and the batch time, process the rows, then drop the state when the
    graph holds nothing, else snapshot it. ``batches``: (rows or None, their timestamps,
    Spark's watermark for the batch)."""
    stored: bytes | None = None
    out: list[Any] = []
    sides: dict[OutputTag, list[Any]] = {}
    states: list[bytes | None] = []
    for now, (rows, stamps, watermark) in enumerate(batches, start=1):
        op = GraphOperator(plan, INFO)
        if stored is not None:
            op.restore(stored)
        op.advance_watermark(watermark)
        op.advance_processing_time(now)
        if rows is not None:
            op.process_batch(rows, stamps)
        out.extend(op.drain_output())
        for tag, items in op.drain_side_outputs().items():
            sides.setdefault(tag, []).extend(items)
        stored = None if op.holds_nothing() else op.snapshot()
        states.append(stored)
    return out, sides, states


class WatermarkSpy(ProcessFunction):
    """Emits each element's value, timestamp and the operator's current watermark."""

    def process_element(self, value: Any, ctx: ProcessFunction.Context) -> Any:
        yield (value.v, ctx.timestamp(), ctx.timer_service().current_watermark())


def spy_builder(task_info: TaskInfo) -> ProcessOperator:
    return ProcessOperator(WatermarkSpy(), task_info=task_info)


def test_a_stateless_process_function_keeps_its_watermark_across_micro_batches() -> None:
    """Timestamps 1000, 2000, 500 in three micro-batches (monotonous watermarks): Flink's
    ProcessFunction sees watermarks MIN, 999 and 1999, and the third element is behind the
    watermark (late), although the function keeps no state and the runtime snapshots and
    restores the graph between the batches."""
    nodes = (NodeSpec("spy", OPERATOR, ((("source", 0), 0),), build=spy_builder),)
    plan = GraphPlan((source(0),), nodes, ("node", 0))
    out, _, states = run_batches(plan, [
        (frame([(0, "a", 1)]), [1000], MIN_LONG),
        (frame([(0, "a", 2)]), [2000], 999),
        (frame([(0, "a", 3)]), [500], 1999),
    ])
    assert [value for value, _ in out] == [(1, 1000, MIN_LONG), (2, 2000, 999), (3, 500, 1999)]
    assert all(state is not None for state in states)  # the clocks are kept


def test_a_late_element_stays_late_after_the_graph_held_nothing() -> None:
    """A window behind a filter: window [0, 10) fires at watermark 29 and the graph then
    holds no window; an element at 7 arriving after that is late (side output), as in
    Flink, not a new window nobody fires."""
    nodes = (
        NodeSpec("positive", "filter", ((("source", 0), 0),), function=lambda r: r.v > 0),
        NodeSpec("window", OPERATOR, ((("node", 0), 0),),
                 build=window_builder(10, "k", LATE)),
    )
    plan = GraphPlan((source(0),), nodes, ("node", 1), {LATE: ("side", 1, LATE)})
    out, sides, _ = run_batches(plan, [
        (frame([(0, "a", 1)]), [5], MIN_LONG),
        (frame([(0, "a", 0)]), [30], 4),   # filtered out: it only moves the watermark
        (None, [], 29),                    # fires [0, 10)
        (frame([(0, "a", 9)]), [7], 29),
    ])
    assert [(tuple(v), ts) for v, ts in out] == [(("a", 1), 9)]
    assert [(tuple(v), ts) for v, ts in sides[LATE]] == [(("a", 9), 7)]


def test_a_graph_without_clocks_moved_holds_nothing() -> None:
    """Elements without timestamps move no watermark: nothing to keep, the state goes."""
    nodes = (NodeSpec("spy", OPERATOR, ((("source", 0), 0),), build=spy_builder),)
    op = GraphOperator(GraphPlan((source(0, None),), nodes, ("node", 0)), INFO)
    op.advance_processing_time(5)
    op.process_batch(frame([(0, "a", 1)]), [MIN_LONG])
    assert op.holds_nothing()


def test_several_key_groups_take_their_clocks_from_the_stage() -> None:
    """Without own watermarks (several key groups) each operator's watermark is the stage's,
    which Spark gives back on the next call: a graph holding nothing may go."""
    nodes = (NodeSpec("spy", OPERATOR, ((("source", 0), 0),), build=spy_builder),)
    plan = GraphPlan((source(0),), nodes, ("node", 0), own_watermarks=False)
    out, _, states = run_batches(plan, [
        (frame([(0, "a", 1)]), [1000], MIN_LONG),
        (frame([(0, "a", 2)]), [2000], 999),
    ])
    assert [value for value, _ in out] == [(1, 1000, MIN_LONG), (2, 2000, 999)]
    assert states == [None, None]


# ------------------------------------------------------------- inputs without watermarks
def test_a_union_with_a_source_without_watermarks_holds_its_windows_unfired() -> None:
    """Flink: an input that never emits a watermark stays at Long.MIN_VALUE in the union's
    minimum (StatusWatermarkValve); the window fires only at the end of input."""
    nodes = (
        NodeSpec("union", UNION, ((("source", 0), 0), (("source", 1), 0))),
        NodeSpec("window", OPERATOR, ((("node", 0), 0),), build=window_builder(10, "k")),
    )
    plan = GraphPlan((source(0), source(1, None)), nodes, ("node", 1))
    op = GraphOperator(plan, INFO)
    op.process_batch(frame([(0, "a", 1)]), [1])
    for ts in (100, 200):
        op.process_batch(frame([(0, "a", 3)]), [ts])
        op.advance_watermark(ts - 1)
    assert op.drain_output() == []
    assert op.operators[1] is not None and op.operators[1].current_watermark == MIN_LONG
    op.advance_watermark(MAX_LONG)
    assert sorted((tuple(v), ts) for v, ts in op.drain_output()) == [
        (("a", 1), 9), (("a", 3), 109), (("a", 3), 209)
    ]


def test_several_key_groups_with_a_source_without_watermarks_hold_the_minimum() -> None:
    """The stage's watermark (Spark's, over the watermarked sources only) does not advance
    an operator that also reads a source without watermarks."""
    nodes = (
        NodeSpec("union", UNION, ((("source", 0), 0), (("source", 1), 0))),
        NodeSpec("window", OPERATOR, ((("node", 0), 0),), build=window_builder(10, "k")),
    )
    plan = GraphPlan((source(0), source(1, None)), nodes, ("node", 1), own_watermarks=False)
    op = GraphOperator(plan, INFO)
    op.process_batch(frame([(0, "a", 1)]), [1])
    op.advance_watermark(99)
    assert op.drain_output() == []
    op.advance_watermark(MAX_LONG)
    assert [(tuple(v), ts) for v, ts in op.drain_output()] == [(("a", 1), 9)]


class Pairs(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield (left.v, right.v)


def interval_join_builder(task_info: TaskInfo) -> IntervalJoinOperator:
    return IntervalJoinOperator(
        -5, 5, True, True, LATE, None, Pairs(), "k", "k", task_info=task_info,
    )


def test_a_two_input_operator_with_an_input_without_watermarks_has_none() -> None:
    """AbstractStreamOperator.processWatermark1/2: the combined watermark is the minimum of
    both inputs', each starting at Long.MIN_VALUE; an input that never emits one holds it
    there, so a left element far behind the left input's timestamps is not late."""
    nodes = (NodeSpec("join", OPERATOR, ((("source", 0), 0), (("source", 1), 1)),
                      build=interval_join_builder),)
    plan = GraphPlan((source(0), source(1, None)), nodes, ("node", 0),
                     {LATE: ("side", 0, LATE)})
    op = GraphOperator(plan, INFO)
    op.process_batch(frame([(0, "a", 1)]), [100])
    op.process_batch(frame([(0, "a", 2)]), [2])
    assert op.drain_side_outputs() == {}
    join = op.operators[0]
    assert join is not None and join.current_watermark == MIN_LONG


def whole_and_in_key_groups(
    plan: GraphPlan, batches: list[tuple[int | None, list[tuple[int, str, int, int]]]]
) -> tuple[list[Any], list[Any], list[GraphOperator]]:
    """Each batch (its processing time, None: not advanced; rows of (source, k, v,
    timestamp)) through one graph seeing every row and through key groups "a" and "b" of the
    keyed plan, each seeing its key's rows and every row's source and timestamp (the
    heartbeats, flinkwin.spark.source_clocks): what the one and the key groups emitted, and
    the three graphs."""
    whole = GraphOperator(plan, INFO)
    groups = {k: GraphOperator(plan, INFO) for k in "ab"}
    got: dict[str, list[Any]] = {"whole": [], "groups": []}

    def drain(op: GraphOperator, into: str) -> None:
        got[into] += [("main", tuple(v), ts) for v, ts in op.drain_output()]
        got[into] += [("late", tuple(v), ts) for v, ts in op.drain_side_outputs().get(LATE, [])]

    for now, rows in batches:
        if now is not None:
            whole.advance_processing_time(now)
        whole.process_batch(frame([r[:3] for r in rows]), [r[3] for r in rows])
        drain(whole, "whole")
        for key, op in groups.items():
            mine = [r for r in rows if r[1] == key]
            if now is not None:
                op.advance_processing_time(now)
            if mine:
                op.process_batch(frame([r[:3] for r in mine]), [r[3] for r in mine])
            op.see_source_clocks([r[0] for r in rows], [r[3] for r in rows], advance=not mine)
            drain(op, "groups")
    return got["whole"], got["groups"], [whole, *groups.values()]


def test_key_groups_seeing_the_sources_clocks_fire_as_one_that_sees_every_row() -> None:
    """The keyed plan (flinkwin.spark.source_clocks): a key group sees only its keys' rows
    and, from the heartbeats, each source's greatest timestamp of the batch; its windows fire
    and drop late elements exactly as a graph seeing every row, one batch after the
    timestamps arrive (not in the batch that brings them)."""
    batches = [
        [(0, "a", 1, 1), (0, "b", 2, 20)],  # source 1 has no rows yet: the minimum is MIN
        [(1, "a", 10, 2)],  # on time (Flink: source 1 held the watermark at MIN)
        [(1, "b", 20, 30), (0, "a", 3, 31)],  # watermark min(20, 2) - 1 = 1 in this batch
        # watermark min(31, 30) - 1 = 29, which key group "a" knows of source 1 only from
        # b's row: a's [0, 10) and b's [20, 30) fire, b@3 is late
        [(0, "b", 4, 3)],
    ]
    plan = replace(union_window_plan(LATE), sides={LATE: ("side", 1, LATE)})
    whole, groups, ops = whole_and_in_key_groups(plan, [(None, rows) for rows in batches])
    assert sorted(groups) == sorted(whole) == [
        ("late", ("b", 4), 3), ("main", ("a", 11), 9), ("main", ("b", 2), 29)]
    for op in ops:
        assert op.source_max == [31, 30]


# ------------------------------------------------------------------ idleness
def idle_source(i: int, timeout: int = 3) -> SourceSpec:
    return replace(source(i), idle_timeout_ms=timeout)


def run_timed(plan: GraphPlan, batches: list[tuple[int, list[tuple[int, str, int]], list[int]]],
              restore: bool) -> tuple[list[Any], list[Any], GraphOperator]:
    """Each batch at its processing time: (time, rows, their timestamps); with ``restore``
    the graph goes through its snapshot between batches, as a key group's state does."""
    op = GraphOperator(plan, INFO)
    out: list[Any] = []
    late: list[Any] = []
    for now, rows, stamps in batches:
        if restore:
            again = GraphOperator(plan, INFO)
            again.restore(op.snapshot())
            op = again
        op.advance_processing_time(now)
        op.process_batch(frame(rows), stamps)
        out += [(tuple(v), ts) for v, ts in op.drain_output()]
        late += [tuple(v) for v, _ in op.drain_side_outputs().get(LATE, [])]
    return out, late, op


@pytest.mark.parametrize("restore", [False, True], ids=["kept", "restored every batch"])
def test_a_source_resuming_behind_the_unions_watermark_holds_nothing_back_until_it_catches_up(
    restore: bool,
) -> None:
    """StatusWatermarkValve: a channel turning active again below the valve's last output is
    unaligned, left out of the minimum until its watermark catches up (Flink's
    testMultipleInputWatermarkRealignmentAfterResumeActive, through a union's window)."""
    plan = replace(union_window_plan(LATE), sources=(source(0), idle_source(1)),
                   sides={LATE: ("side", 1, LATE)})
    out, late, _ = run_timed(plan, [
        (1, [(0, "a", 1), (1, "a", 10)], [1, 2]),
        (2, [(0, "a", 2)], [3]),
        (10, [(0, "a", 3)], [12]),  # source 1 idle: the union follows source 0
        (11, [(0, "a", 4)], [25]),
        (12, [(0, "a", 5), (1, "a", 20)], [40, 5]),  # source 1 back, far behind
        (13, [(1, "a", 21)], [26]),  # source 1's watermark 4 < 24: it holds nothing back
    ], restore)
    # [20, 30) fires on source 0's 39 alone; source 1's 26 is then late, as its 5 was
    assert out == [(("a", 13), 9), (("a", 3), 19), (("a", 4), 29)]
    assert late == [("a", 20), ("a", 21)]


def test_key_groups_seeing_the_sources_clocks_turn_a_source_idle_as_one_that_sees_every_row(
) -> None:
    """The keyed plan with withIdleness: a key group learns from the heartbeats which sources
    had elements in a batch (and their greatest timestamps), so it turns a source idle, and
    leaves one resuming behind out, exactly as a graph seeing every row; key group "b" has
    no rows of its own until the end."""
    plan = replace(union_window_plan(LATE), sources=(source(0), idle_source(1)),
                   sides={LATE: ("side", 1, LATE)})
    batches = [
        (1, [(0, "a", 1, 1), (1, "a", 10, 2)]),
        (2, [(0, "a", 2, 3)]),
        (10, [(0, "a", 3, 12)]),  # source 1 idle: the union follows source 0
        (11, [(0, "a", 4, 25)]),
        (12, [(0, "a", 5, 40), (1, "a", 20, 5)]),  # source 1 back, far behind
        (13, [(1, "a", 21, 26), (1, "b", 7, 27)]),  # it holds nothing back
        (14, [(0, "b", 8, 28)]),
    ]
    whole, groups, _ = whole_and_in_key_groups(plan, batches)
    assert sorted(groups) == sorted(whole) == sorted([
        ("main", ("a", 13), 9), ("main", ("a", 3), 19), ("main", ("a", 4), 29),
        ("late", ("a", 20), 5), ("late", ("a", 21), 26), ("late", ("b", 7), 27),
        ("late", ("b", 8), 28)])


@pytest.mark.parametrize("restore", [False, True], ids=["kept", "restored every batch"])
def test_a_union_whose_inputs_all_turn_idle_flushes_their_greatest_watermark(
    restore: bool,
) -> None:
    """StatusWatermarkValve: when the last active channel turns idle holding the minimum, the
    valve emits the greatest watermark of all (Flink's
    testMultipleInputFlushMaxWatermarkAndWatermarkStatusOnceAllInputsBecomeIdle)."""
    plan = replace(union_window_plan(), sources=(idle_source(0), idle_source(1)))
    out, _, _ = run_timed(plan, [
        (1, [(0, "a", 1), (0, "b", 100), (1, "a", 10)], [5, 10, 2]),
        (2, [], []),  # source 0 at 9, source 1 at 1: the union at 1
    ], restore)
    assert out == []
    out, _, _ = run_timed(plan, [
        (1, [(0, "a", 1), (0, "b", 100), (1, "a", 10)], [5, 10, 2]),
        (2, [], []),
        (10, [], []),  # both idle: the union goes on to 9
    ], restore)
    assert out == [(("a", 11), 9)]


def test_an_interval_join_whose_inputs_all_turn_idle_keeps_its_watermark() -> None:
    """A two-input operator combines its inputs as CombinedWatermarkStatus does: the minimum
    over the active ones (one idle: the other's), and with both idle it stays."""
    nodes = (NodeSpec("join", OPERATOR, ((("source", 0), 0), (("source", 1), 1)),
                      build=interval_join_builder, two_input=True),)
    both = GraphPlan((idle_source(0), idle_source(1)), nodes, ("node", 0),
                     {LATE: ("side", 0, LATE)})
    _, _, op = run_timed(both, [(1, [(0, "a", 1), (1, "a", 2)], [10, 2]), (2, [], []),
                                (10, [], [])], restore=False)
    join = op.operators[0]
    assert join is not None and join.current_watermark == 1
    one = replace(both, sources=(source(0), idle_source(1)))
    _, _, op = run_timed(one, [(1, [(0, "a", 1), (1, "a", 2)], [10, 2]), (2, [], []),
                               (10, [(0, "a", 3)], [11])], restore=True)
    join = op.operators[0]
    assert join is not None and join.current_watermark == 9


def test_a_snapshot_written_before_the_valves_were_kept_restores_and_goes_on() -> None:
    """A graph snapshot of an earlier flinkwin has no valves: each channel is taken as it is at
    the next advance (active ones aligned, the node at its own watermark), as that flinkwin
    computed the watermark."""
    op = GraphOperator(union_window_plan(), INFO)
    op.process_batch(frame([(0, "a", 1), (1, "a", 2)]), [1, 5])
    table = pa.ipc.open_stream(pa.py_buffer(op.snapshot())).read_all()
    metadata = {k: v for k, v in (table.schema.metadata or {}).items() if k != b"valves"}
    sink = pa.BufferOutputStream()
    old = table.replace_schema_metadata(metadata)
    with pa.ipc.new_stream(sink, old.schema) as writer:
        writer.write_table(old)
    again = GraphOperator(union_window_plan(), INFO)
    again.restore(sink.getvalue().to_pybytes())
    again.process_batch(frame([(0, "a", 3), (1, "a", 4)]), [25, 30])
    again.process_batch(frame([]), [])  # the next batch: the sources at 24 and 29
    assert [(tuple(v), ts) for v, ts in again.drain_output()] == [(("a", 3), 9)]


def test_ordered_emissions_keep_the_order_across_main_and_side_outputs() -> None:
    """OrderedEmissions (process functions, interval joins): drain_in_order gives what was
    emitted in order; draining the main output alone leaves the side outputs in order."""
    from flinkwin.operator.emissions import OrderedEmissions

    class Op(OrderedEmissions):
        def __init__(self) -> None:
            self._reset_emissions()

    op = Op()
    other = OutputTag("other")
    op.emit_side(ODD, "s1", 1)
    op.emit_main("m1", 2)
    op.emit_side(other, "o1", 3)
    op.emit_main("m2", 4)
    assert op.drain_in_order() == [(ODD, "s1", 1), (None, "m1", 2), (other, "o1", 3),
                                   (None, "m2", 4)]
    assert op.drain_in_order() == []
    op.emit_main("m3", 5)
    op.emit_side(ODD, "s2", 6)
    op.emit_main("m4", 7)
    assert op.drain_output() == [("m3", 5), ("m4", 7)]
    op.emit_side(other, "o2", 8)
    assert op.drain_in_order() == [(ODD, "s2", 6), (other, "o2", 8)]


class _Announce(ProcessWindowFunction):
    """The window's sum, with a note to the side output ``odd`` between two results."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        total = sum(e.v for e in elements)
        yield total
        context.output(ODD, f"{key} fired")
        yield -total


def test_a_window_functions_side_output_reaches_the_nodes_after_it_in_emission_order() -> None:
    """A ProcessWindowFunction's ``context.output`` between two results reaches the union after
    the window between them, as Flink's operator hands each record on when it is emitted."""
    def build(info: TaskInfo, subtask: Any = None) -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), _Announce(),
                              key_selector="k", task_info=info)

    nodes = (
        NodeSpec("window", OPERATOR, ((("source", 0), 0),), build=build),
        NodeSpec("union", UNION, ((("node", 0), 0), (("side", 0, "odd"), 0))),
    )
    op = GraphOperator(GraphPlan((source(0),), nodes, ("node", 1)), INFO)
    op.process_batch(frame([(0, "a", 1), (0, "a", 2)]), [1, 2])
    op.advance_watermark(MAX_LONG)
    assert [v for v, _ in op.drain_output()] == [3, "a fired", -3]
