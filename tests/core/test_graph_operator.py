"""GraphOperator: a stream graph's operators run as one (no Spark).

The watermark rules are those of Flink's ``StatusWatermarkValveTest`` that apply without
stream status (idleness): an operator's watermark is the minimum of its inputs', it only
advances, and an input that has not advanced holds it back.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from flinkwin import OutputTag, Time, TumblingEventTimeWindows
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


def source(i: int, delay: int | None = 0) -> SourceSpec:
    return SourceSpec((f"_fw_i{i}_0", f"_fw_i{i}_1"), ("k", "v"), delay_ms=delay)


def frame(rows: list[tuple[int, str, int]]) -> pd.DataFrame:
    """Rows of (source, k, v) in the stage's column layout (two sources)."""
    data: dict[str, list[Any]] = {"_fw_in": [], "_fw_i0_0": [], "_fw_i0_1": [],
                                  "_fw_i1_0": [], "_fw_i1_1": []}
    for src, k, v in rows:
        data["_fw_in"].append(src)
        for i in (0, 1):
            data[f"_fw_i{i}_0"].append(k if i == src else None)
            data[f"_fw_i{i}_1"].append(v if i == src else None)
    return pd.DataFrame(data)


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
