"""A graph's window node reading a source takes its quiet rows as one batch
(flinkwin.operator.graph_batches): the graph's outputs are exactly the element path's.

Each scenario runs the same micro-batches through two graphs, the one the stage runs and the
same graph with every node on the element path (each row pushed through the graph, depth
first, in arrival order), both in the runtime's cycle (restored from their own snapshot,
advanced to the stage's watermark and the batch time, then the rows), and compares after every
micro-batch: main and side outputs in order, dropped elements, state sizes, timers.
"""

from __future__ import annotations

from typing import Any

import pytest
from graph_frames import frame, source
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkwin import (
    AggregateFunction,
    KeyedProcessFunction,
    ListStateDescriptor,
    OutputTag,
    ProcessFunction,
    ProcessWindowFunction,
    Row,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    Types,
    WindowFunction,
)
from flinkwin.errors import NullKeyError
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
from flinkwin.operator.graph_batches import takes_batches
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator, ProcessOperator
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.time import MAX_LONG
from flinkwin.triggers.continuous_event_time import ContinuousEventTimeTrigger
from flinkwin.triggers.count import CountTrigger

INFO = TaskInfo("Graph", 0, 1, 1)
LATE1, LATE2 = OutputTag("late1"), OutputTag("late2")


# ----------------------------------------------------------------------- user functions
class CountAgg(AggregateFunction):
    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, accumulator: int) -> int:
        return accumulator + 1

    def get_result(self, accumulator: int) -> int:
        return accumulator

    def merge(self, a: int, b: int) -> int:
        return a + b


class WindowResult(WindowFunction):
    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        yield Row(k=key, end=window.end, v=next(iter(inputs)))


class Listing(ProcessWindowFunction):
    """The window's values in the order the window holds them."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield Row(k=key, end=context.window().end, v=sum(e.v for e in elements),
                  order=tuple(e.v for e in elements))


class TopN(KeyedProcessFunction):
    """HotItems' TopN: a window end's counts until the timer at end + 1."""

    def open(self, runtime_context: Any) -> None:
        self.items = runtime_context.get_list_state(
            ListStateDescriptor("items", Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value: Any, ctx: Any) -> None:
        self.items.add(value)
        ctx.timer_service().register_event_time_timer(value.end + 1)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        items = sorted(self.items.get(), key=lambda v: (-v.v, v.k))
        self.items.clear()
        yield (timestamp - 1, [(v.k, v.v) for v in items[:2]])


class Spy(ProcessFunction):
    """Every element as it arrives, with its timestamp and the operator's watermark."""

    def process_element(self, value: Any, ctx: Any) -> Any:
        yield (tuple(value), ctx.timestamp(), ctx.timer_service().current_watermark())


# ------------------------------------------------------------------------------ plans
def window(assigner: Any, function: Any, lateness: int, late: OutputTag | None,
           key: Any = "k", trigger: Any = None) -> Any:
    def build(task_info: TaskInfo) -> WindowOperator:
        return WindowOperator(assigner, function, key_selector=key, trigger=trigger,
                              allowed_lateness=lateness, late_output_tag=late,
                              task_info=task_info)

    return build




def hot_items(lateness: int, delays: tuple[int, int]) -> GraphPlan:
    """A sliding count per key, then a TopN keyed by window end (HotItems)."""
    nodes = (
        NodeSpec("count", OPERATOR, ((("source", 0), 0),), build=window(
            SlidingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(5)),
            (CountAgg(), WindowResult()), lateness, LATE1)),
        NodeSpec("top", OPERATOR, ((("node", 0), 0),), build=lambda info: KeyedProcessOperator(
            TopN(), "end", task_info=info)),
    )
    return GraphPlan((source(0, delays[0]), source(1, delays[1])), nodes, ("node", 1),
                     {LATE1: ("side", 0, LATE1)})


def interleaved(lateness: int, delays: tuple[int, int]) -> GraphPlan:
    """A window on source 0, a map on source 0 too, and source 1, united before a process
    function that records the order everything reaches it in."""
    nodes = (
        NodeSpec("window", OPERATOR, ((("source", 0), 0),), build=window(
            TumblingEventTimeWindows.of(Time.milliseconds(10)), sum_of("v"), lateness, LATE1)),
        NodeSpec("times ten", MAP, ((("source", 0), 0),),
                 function=lambda r: Row(k=r.k, v=r.v * 10)),
        NodeSpec("union", UNION, ((("node", 0), 0), (("node", 1), 0), (("source", 1), 0),
                                  (("side", 0, LATE1), 0))),
        NodeSpec("spy", OPERATOR, ((("node", 2), 0),),
                 build=lambda info: ProcessOperator(Spy(), task_info=info)),
    )
    return GraphPlan((source(0, delays[0]), source(1, delays[1])), nodes, ("node", 3),
                     {LATE1: ("side", 0, LATE1)})


def windows_after_windows(lateness: int, delays: tuple[int, int]) -> GraphPlan:
    """Two windows on source 0 (one listing its elements), a window on the first one's
    results, a processing-time window on source 1; the source itself is also the stage's side
    output."""
    nodes = (
        NodeSpec("w1", OPERATOR, ((("source", 0), 0),), build=window(
            TumblingEventTimeWindows.of(Time.milliseconds(10)), sum_of("v"), lateness, LATE1)),
        NodeSpec("w2", OPERATOR, ((("node", 0), 0),), build=window(
            TumblingEventTimeWindows.of(Time.milliseconds(20)), sum_of("v"), lateness, LATE2)),
        NodeSpec("list", OPERATOR, ((("source", 0), 0),), build=window(
            SlidingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(5)), Listing(),
            lateness, None)),
        NodeSpec("w3", OPERATOR, ((("source", 1), 0),), build=window(
            TumblingProcessingTimeWindows.of(Time.milliseconds(2)), sum_of("v"), 0, None)),
        NodeSpec("union", UNION, ((("node", 1), 0), (("node", 2), 0), (("node", 3), 0))),
    )
    raw = OutputTag("raw")
    return GraphPlan((source(0, delays[0]), source(1, delays[1])), nodes, ("node", 4),
                     {LATE1: ("side", 0, LATE1), LATE2: ("side", 1, LATE2),
                      raw: ("source", 0)})


def continuous(lateness: int, delays: tuple[int, int]) -> GraphPlan:
    """Windows firing early (ContinuousEventTimeTrigger) on source 0, then a process function."""
    nodes = (
        NodeSpec("early", OPERATOR, ((("source", 0), 0),), build=window(
            TumblingEventTimeWindows.of(Time.milliseconds(20)), sum_of("v"), lateness, LATE1,
            trigger=ContinuousEventTimeTrigger.of(Time.milliseconds(5)))),
        NodeSpec("union", UNION, ((("node", 0), 0), (("source", 1), 0))),
        NodeSpec("spy", OPERATOR, ((("node", 1), 0),),
                 build=lambda info: ProcessOperator(Spy(), task_info=info)),
    )
    return GraphPlan((source(0, delays[0]), source(1, delays[1])), nodes, ("node", 2),
                     {LATE1: ("side", 0, LATE1)})


PLANS = {"hot items": hot_items, "interleaved": interleaved,
         "windows after windows": windows_after_windows, "continuous": continuous}


# ----------------------------------------------------------------------------- driving


def element_path(plan: GraphPlan) -> GraphOperator:
    """The graph with every node on the element path."""
    op = GraphOperator(plan, INFO)
    op._batches.nodes = [[] for _ in plan.sources]
    return op


def cycle(op: GraphOperator, stored: bytes | None, rows: list[Any], stamps: list[int],
          watermark: int, now: int) -> tuple[GraphOperator, dict[str, Any]]:
    """One micro-batch as the runtime runs it; what the graph emitted and holds."""
    if stored is not None:
        op.restore(stored)
    op.advance_watermark(watermark)
    op.advance_processing_time(now)
    if rows:
        op.process_batch(frame(rows), stamps)
    seen = {
        "main": op.drain_output(),
        "sides": {tag.tag_id: items for tag, items in op.drain_side_outputs().items()},
        "dropped": op.num_late_records_dropped,
        "size": op.state_size(),
        "timer": op.next_event_time_timer(),
    }
    return op, seen


def run_both(plan_of: Any, lateness: int, delays: tuple[int, int],
             rows: list[tuple[int, str | None, int, int]], cuts: list[int]
             ) -> list[dict[str, Any]]:
    """Both graphs over ``rows`` (source, key, value, timestamp) cut into micro-batches at
    ``cuts``, then the end of input; asserts they agree after every micro-batch."""
    plan = plan_of(lateness, delays)
    bounds = [0, *sorted(set(c for c in cuts if 0 < c < len(rows))), len(rows)]
    stored: dict[str, bytes | None] = {"batched": None, "elements": None}
    history = []
    watermark = -(2**40)
    for now, (lo, hi) in enumerate([*zip(bounds, bounds[1:]), (len(rows), len(rows))], 1):
        batch = rows[lo:hi]
        last = hi == lo
        watermark = MAX_LONG if last else watermark + 1
        seen = {}
        for name, graph in (("batched", GraphOperator(plan, INFO)),
                            ("elements", element_path(plan))):
            op, seen[name] = cycle(graph, stored[name], [r[:3] for r in batch],
                                   [r[3] for r in batch], watermark, now)
            stored[name] = op.snapshot()
        assert seen["batched"] == seen["elements"], f"micro-batch {now}"
        history.append(seen["batched"])
    return history


rows_strategy = st.lists(
    st.tuples(st.integers(0, 1), st.sampled_from(["a", "b", "c"]), st.integers(0, 9),
              st.integers(0, 80)),
    max_size=60,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    plan=st.sampled_from(sorted(PLANS)),
    lateness=st.sampled_from([0, 3, 12]),
    delays=st.tuples(st.integers(0, 6), st.integers(0, 6)),
    rows=rows_strategy,
    cuts=st.lists(st.integers(0, 60), max_size=6),
)
def test_batched_window_nodes_give_the_element_paths_outputs(
    plan: str, lateness: int, delays: tuple[int, int], rows: list[Any], cuts: list[int]
) -> None:
    run_both(PLANS[plan], lateness, delays, rows, cuts)


@pytest.mark.parametrize("plan", sorted(PLANS))
def test_late_data_lateness_and_side_outputs_agree_across_micro_batch_splits(plan: str) -> None:
    """Out-of-order rows whose watermark passes windows that then get late elements (within
    and beyond the allowed lateness), cut every way into two or three micro-batches."""
    rows = [(0, "a", 1, 1), (0, "b", 2, 3), (1, "a", 1, 2), (0, "a", 3, 25),
            (0, "a", 4, 4), (1, "b", 5, 30), (0, "b", 6, 12), (0, "a", 7, 2),
            (0, "c", 8, 40), (0, "a", 9, 26), (1, "c", 1, 41), (0, "b", 2, 31)]
    histories = []
    for lateness in (3, 12):
        for first in range(0, len(rows) + 1, 2):
            for second in (first, first + 3):
                history = run_both(PLANS[plan], lateness, (0, 2), rows, [first, second])
                histories.append(history)
    assert any(seen["sides"] for history in histories for seen in history)  # late data seen


def test_a_window_on_a_source_takes_its_rows_in_one_call(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    """HotItems: a micro-batch of on-time rows reaches the window in one process_batch."""
    calls: list[int] = []
    original = WindowOperator.process_batch

    def counting(self: WindowOperator, frame: Any, timestamps: Any, records: Any = None
                 ) -> None:
        calls.append(len(frame))
        original(self, frame, timestamps, records)

    monkeypatch.setattr(WindowOperator, "process_batch", counting)
    rows = [(0, k, 1, t) for t, k in enumerate("abcabcab", start=10)]
    history = run_both(hot_items, 0, (0, 0), rows, [4])
    assert calls == [4, 4]  # the batched graph's two micro-batches; none element by element
    assert history[-1]["main"]


def test_rows_from_the_first_late_one_on_go_the_element_path(monkeypatch: pytest.MonkeyPatch
                                                             ) -> None:
    calls: list[int] = []
    original = WindowOperator.process_batch

    def counting(self: WindowOperator, frame: Any, timestamps: Any, records: Any = None
                 ) -> None:
        calls.append(len(frame))
        original(self, frame, timestamps, records)

    monkeypatch.setattr(WindowOperator, "process_batch", counting)
    # micro-batch 2 (watermark 29): 31 and 32 on time, 5 late, 33 after it
    rows = [(0, "a", 1, 30), (0, "a", 2, 31), (0, "a", 3, 32), (0, "a", 4, 5), (0, "a", 5, 33)]
    history = run_both(interleaved, 0, (0, 0), rows, [1])
    assert calls == [1, 2]
    assert history[1]["sides"] == {LATE1.tag_id: [(Row(k="a", v=4), 5)]}


def test_a_null_key_fails_as_on_the_element_path() -> None:
    plan = hot_items(0, (0, 0))
    for op in (GraphOperator(plan, INFO), element_path(plan)):
        with pytest.raises(NullKeyError):
            op.process_batch(frame([(0, "a", 1), (0, None, 2)]), [1, 2])


def test_only_window_configurations_the_batch_path_covers_take_batches() -> None:
    plain = source(0, 0)

    def built(**kwargs: Any) -> WindowOperator:
        args = {"assigner": TumblingEventTimeWindows.of(Time.milliseconds(10)),
                "function": sum_of("v"), "key_selector": "k", **kwargs}
        return WindowOperator(**args)

    assert takes_batches(built(), plain)
    assert not takes_batches(built(trigger=CountTrigger.of(2)), plain)
    assert not takes_batches(built(key_selector=lambda r: r.k), plain)
    assert not takes_batches(built(key_selector="other"), plain)
    assert not takes_batches(built(), SourceSpec(("c",), ("k",), pickled_elements=True))
    assert not takes_batches(built(), SourceSpec(("c", "d"), ("k", "v"),
                                                 converters={"v": tuple}))
    assert not takes_batches(built(key_type=Types.STRING()), plain)
    process = KeyedProcessOperator(TopN(), "k", task_info=INFO)
    assert not takes_batches(process, plain)
