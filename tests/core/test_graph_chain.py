"""A stream graph run keyed operator by keyed operator, each in its own key groups
(``flinkwin.operator.graph_chain``), against :class:`GraphOperator` (the whole graph in one
place, Flink parallelism 1) as the oracle: the same micro-batches give the same outputs in the
same micro-batch, late data and restarts from snapshots included (no Spark)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from graph_frames import frame as two_source_frame
from graph_frames import source
from hypothesis import given, settings
from hypothesis import strategies as st

from flinkwin import (
    ListStateDescriptor,
    OutputTag,
    ProcessFunction,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    ValueStateDescriptor,
)
from flinkwin.datastream.joined_streams import JoinedStreams
from flinkwin.functions import KeyedProcessFunction, ProcessJoinFunction
from flinkwin.functions.builtin import sum_of
from flinkwin.keys import flink_key, pickled_key
from flinkwin.operator import WindowOperator, emission_wire
from flinkwin.operator.cogroup import TaggedUnion, build_operator
from flinkwin.operator.graph import (
    MAP,
    OPERATOR,
    GraphOperator,
    GraphPlan,
    NodeSpec,
)
from flinkwin.operator.graph_chain import (
    BEFORE,
    ELEMENT,
    NON_KEYED_PROCESS,
    ChainStep,
    Emission,
    canonical_key,
    key_group_of,
    keyed_nodes,
    single_task_reason,
)
from flinkwin.operator.interval_join_operator import IntervalJoinOperator
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator, ProcessOperator
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.operator.snapshots import StatePickler
from flinkwin.time import MIN_LONG

LATE1, LATE2 = OutputTag("late1"), OutputTag("late2")


def frame(rows: list[tuple[int, str, int]]) -> Any:
    """The graph stage's rows, objects kept (ints stay ints beside the other source's nulls)."""
    return two_source_frame(rows, dtype=object)


KEYS = ["a1", "a2", "b1", "b2", "c1"]


# ------------------------------------------------------------------------- the graphs




class CountWithEnd(ProcessWindowFunction):
    """HotItems' first stage: (item, window end, count) (of both sources' events)."""

    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (key, context.window().end, len(list(elements)))


class TopN(KeyedProcessFunction):
    """HotItems' second stage, keyed by window end: collects the counts, fires at the window
    end with the top two; reports each element with the watermark it is processed at."""

    def open(self, runtime_context: Any) -> None:
        self.items = runtime_context.get_list_state(ListStateDescriptor("items", None))

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.items.add(value)
        ctx.timer_service().register_event_time_timer(value[1])
        yield ("seen", value[0], value[2], ctx.timestamp(),
               ctx.timer_service().current_watermark())

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        items = sorted(self.items.get(), key=lambda t: (-t[2], t[0], t))
        self.items.clear()
        yield ("top", timestamp, tuple(items[:2]), ctx.timer_service().current_watermark())


class RunningCount(KeyedProcessFunction):
    """Per key, a running count and the watermark each element is processed at."""

    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("n", None))

    def process_element(self, value: Any, ctx: Any) -> Any:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield (value, n, ctx.timestamp(), ctx.timer_service().current_watermark())


def hot_items(sliding: bool) -> GraphPlan:
    assigner = (SlidingEventTimeWindows.of(Time.milliseconds(20), Time.milliseconds(10))
                if sliding else TumblingEventTimeWindows.of(Time.milliseconds(10)))

    def counts(info: TaskInfo) -> WindowOperator:
        return WindowOperator(assigner, CountWithEnd(), key_selector="k", allowed_lateness=15,
                              late_output_tag=LATE1, task_info=info)

    def top(info: TaskInfo) -> KeyedProcessOperator:
        return KeyedProcessOperator(TopN(), lambda t: t[1], task_info=info)

    nodes = (
        NodeSpec("counts", OPERATOR, ((("source", 0), 0), (("source", 1), 0)), build=counts),
        NodeSpec("top", OPERATOR, ((("node", 0), 0),), build=top),
    )
    return GraphPlan((source(0), source(1)), nodes, ("node", 1), {LATE1: ("side", 0, LATE1)})


def window_after_window() -> GraphPlan:
    def first(info: TaskInfo) -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), sum_of("v"),
                              key_selector="k", allowed_lateness=5, late_output_tag=LATE1,
                              task_info=info)

    def second(info: TaskInfo) -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(30)), sum_of("v"),
                              key_selector=lambda r: r.k, late_output_tag=LATE2,
                              task_info=info)

    nodes = (
        NodeSpec("w1", OPERATOR, ((("source", 0), 0), (("source", 1), 0)), build=first),
        NodeSpec("letter", MAP, ((("node", 0), 0),), function=lambda r: r.replace("k", r.k[0])),
        NodeSpec("w2", OPERATOR, ((("node", 1), 0),), build=second),
    )
    return GraphPlan((source(0), source(1)), nodes, ("node", 2),
                     {LATE1: ("side", 0, LATE1), LATE2: ("side", 2, LATE2)})


class Stream:
    """Stands in for a DataStream in a join builder: no declared type; ``_window_join`` hands
    the finished spec back."""

    def get_type(self) -> Any:
        return None

    def _window_join(self, spec: Any) -> Any:
        return spec


class Tagged:
    """A window join's operator: elements of input 0 as ``TaggedUnion.one``, of 1 as ``two``
    (what the Spark graph's join node runs)."""

    def __init__(self, op: WindowOperator) -> None:
        self.op = op

    def process_element(self, value: Any, timestamp: int | None, input_index: int = 0) -> None:
        self.op.process_element(self._tag(value, input_index), timestamp)

    def input_key(self, value: Any, input_index: int) -> Any:
        return self.op.key_of(self._tag(value, input_index))

    @staticmethod
    def _tag(value: Any, input_index: int) -> TaggedUnion:
        return TaggedUnion.one(value) if input_index == 0 else TaggedUnion.two(value)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.op, name)


def window_join_by_function() -> GraphPlan:
    spec = (
        JoinedStreams(Stream(), Stream()).where(lambda r: r.k[0]).equal_to(lambda r: r.k[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
        .allowed_lateness(Time.milliseconds(10)).side_output_late_data(LATE1)
        .apply(lambda a, b: a.k + b.k)
    )

    def join(info: TaskInfo) -> Tagged:
        return Tagged(build_operator(spec, task_info=info))

    def running(info: TaskInfo) -> KeyedProcessOperator:
        return KeyedProcessOperator(RunningCount(), lambda s: s, task_info=info)

    nodes = (
        NodeSpec("join", OPERATOR, ((("source", 0), 0), (("source", 1), 1)), build=join),
        NodeSpec("running", OPERATOR, ((("node", 0), 0),), build=running),
    )
    return GraphPlan((source(0), source(1)), nodes, ("node", 1), {LATE1: ("side", 0, LATE1)})


class Pairs(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Any:
        yield (left.k[0], left.v * 10 + right.v)


def interval_join_then_window() -> GraphPlan:
    """An interval join keyed by a function (first letter), then a window keyed by the pair's
    value's parity: every re-keying a shuffle."""

    def join(info: TaskInfo) -> IntervalJoinOperator:
        return IntervalJoinOperator(-5, 5, True, True, LATE1, LATE2, Pairs(),
                                    lambda r: r.k[0], lambda r: r.k[0], task_info=info)

    def window(info: TaskInfo) -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(20)),
                              CountWithEnd(), key_selector=lambda t: t[1] % 2,
                              task_info=info)

    nodes = (
        NodeSpec("join", OPERATOR, ((("source", 0), 0), (("source", 1), 1)), build=join),
        NodeSpec("window", OPERATOR, ((("node", 0), 0),), build=window),
    )
    return GraphPlan((source(0), source(1)), nodes, ("node", 1),
                     {LATE1: ("side", 0, LATE1), LATE2: ("side", 0, LATE2)})


PLANS = {
    "interval_join_then_window": interval_join_then_window,
    "hot_items_tumbling": lambda: hot_items(False),
    "hot_items_sliding": lambda: hot_items(True),
    "window_after_window": window_after_window,
    "window_join_by_function": window_join_by_function,
}

# ---------------------------------------------------------------------- the two runs
Batch = tuple[pd.DataFrame | None, list[int], int, int]  # rows, stamps, watermark, time
Outputs = list[tuple[Counter[Any], dict[str, Counter[Any]]]]


def _record(items: list[tuple[Any, int | None]]) -> Counter[Any]:
    return Counter((repr(tuple(v) if isinstance(v, tuple) else v), ts) for v, ts in items)


def run_whole(plan: GraphPlan, batches: list[Batch]) -> Outputs:
    """The oracle: the whole graph in one GraphOperator, fed as the graph stage feeds it."""
    op = GraphOperator(replace(plan, own_watermarks=False), TaskInfo("Graph", 0, 1, 1))
    out: Outputs = []
    for rows, stamps, watermark, now in batches:
        op.advance_watermark(watermark)
        op.advance_processing_time(now)
        if rows is not None:
            op.process_batch(rows, stamps)
        sides = {t.tag_id: _record(v) for t, v in op.drain_side_outputs().items() if v}
        out.append((_record(op.drain_output()), sides))
    return out


def run_chained(plan: GraphPlan, batches: list[Batch], key_groups: int,
                restore_each_batch: bool, seed: int, fused: bool = False,
                wire: bool = False) -> Outputs:
    """What a runtime of chained keyed operators does per micro-batch: the sources' step,
    then per keyed node (topological order) every key group with elements or holding a
    clock behind the watermark (its timer at ``watermark + 1``), called in any order; a key
    group holding nothing is dropped, the others kept (as a snapshot, when
    ``restore_each_batch``). With ``wire``, what each call emits crosses the signed wire of
    the Spark plan (one payload per receiving node and key group, the outputs in one)."""
    shuffle = random.Random(seed).shuffle
    carry = through_wire if wire else list
    held: dict[tuple[int, int], Any] = {}
    out: Outputs = []

    def step(j: int, kg: int) -> ChainStep:
        kept = held.get((j, kg))
        if isinstance(kept, ChainStep):
            return kept
        s = ChainStep(plan, j, TaskInfo(plan.nodes[j].name, kg, key_groups, key_groups),
                      key_groups)
        if kept is not None:
            s.restore(kept)
        return s

    def keep(j: int, kg: int, s: ChainStep) -> None:
        if s.holds_nothing():
            held.pop((j, kg), None)
        else:
            held[(j, kg)] = s.snapshot() if restore_each_batch else s

    nodes = keyed_nodes(plan)
    for rows, stamps, watermark, now in batches:
        pending: list[Emission] = []
        if fused:  # the first node takes its key groups' rows (placed by key "k") itself
            positions: dict[int, list[int]] = defaultdict(list)
            for i, (src, a, b) in enumerate(zip(*(
                [] if rows is None else [rows["_fw_in"], rows["_fw_i0_0"], rows["_fw_i1_0"]]
            ))):
                positions[key_group_of(a if src == 0 else b, key_groups)].append(i)
            woken = {kg for (n, kg), kept in held.items()
                     if n == nodes[0] and _clock(kept) < watermark}
            groups = sorted(set(positions) | woken)
            shuffle(groups)
            for kg in groups:
                s = step(nodes[0], kg)
                mine = positions.get(kg)
                taken = None if rows is None or not mine else (
                    rows.iloc[mine].reset_index(drop=True), np.asarray(stamps)[mine])
                pending.extend(carry(s.run_sources(taken, watermark, now)))
                keep(nodes[0], kg, s)
        elif rows is not None:
            sources = ChainStep(plan, None, TaskInfo("Sources", 0, 1, 1), key_groups)
            pending = carry(sources.process_sources(rows, stamps))
        for j in nodes[1:] if fused else nodes:
            inbox: dict[int, list[Emission]] = defaultdict(list)
            for e in pending:
                if e.node == j:
                    inbox[e.key_group].append(e)
            woken = {kg for (n, kg), kept in held.items() if n == j and _clock(kept) < watermark}
            groups = sorted(set(inbox) | woken)
            shuffle(groups)
            for kg in groups:
                s = step(j, kg)
                elements = inbox.get(kg, [])
                shuffle(elements)  # the runtime sorts them
                pending.extend(carry(s.run(elements, watermark, now)))
                keep(j, kg, s)
        main = [(e.value, e.timestamp) for e in pending if e.node is None and e.tag is None]
        sides: dict[str, list[Any]] = defaultdict(list)
        for e in pending:
            if e.node is None and e.tag is not None:
                sides[e.tag.tag_id].append((e.value, e.timestamp))
        out.append((_record(main), {t: _record(v) for t, v in sides.items()}))
    return out


WIRE = StatePickler(key=b"a key for the tests' wire", dumps=emission_wire.dumps)


def through_wire(emitted: list[Emission]) -> list[Emission]:
    """``emitted`` packed, signed, checked and unpacked as the Spark plan's stages hand them
    on: one payload per receiving node and key group, the graph's outputs in one."""
    groups: dict[tuple[int, int], list[Emission]] = defaultdict(list)
    for e in emitted:
        groups[(-1, 0) if e.node is None else (e.node, e.key_group)].append(e)
    out: list[Emission] = []
    for items in groups.values():
        out.extend(emission_wire.unpack(WIRE.load(WIRE.dump(emission_wire.pack(items)))))
    return out


def _clock(kept: Any) -> int:
    if isinstance(kept, ChainStep):
        return kept.current_watermark
    table = pa.ipc.open_stream(pa.py_buffer(kept)).read_all()
    return int(table.schema.metadata[b"watermark"])


def micro_batches(events: list[tuple[int, str, int, int]], cuts: list[int], delay: int
                  ) -> list[Batch]:
    """``events`` (source, key, value, timestamp) cut into micro-batches, each with Spark's
    watermark from the batches before it (``max - delay - 1``), then two batches without data
    moving the watermark past every window."""
    bounds = sorted({c % (len(events) + 1) for c in cuts} | {0, len(events)})
    batches: list[Batch] = []
    top = MIN_LONG
    for now, (lo, hi) in enumerate(zip(bounds, bounds[1:]), start=1):
        part = events[lo:hi]
        watermark = MIN_LONG if top == MIN_LONG else top - delay - 1
        batches.append((frame([(s, k, v) for s, k, v, _ in part]), [t for *_, t in part],
                        watermark, now))
        top = max([top, *(t for *_, t in part)])
    end = len(batches)
    batches.append((None, [], top - delay - 1, end + 1))
    batches.append((None, [], top + 1000, end + 2))
    return batches


EVENTS = st.lists(
    st.tuples(st.integers(0, 1), st.sampled_from(KEYS), st.integers(1, 5), st.integers(0, 90)),
    min_size=1, max_size=40,
)


@pytest.mark.parametrize("name", sorted(PLANS))
@settings(max_examples=40, deadline=None)
@given(events=EVENTS, cuts=st.lists(st.integers(0, 40), max_size=6),
       delay=st.sampled_from([0, 7]), key_groups=st.integers(1, 4),
       restore=st.booleans(), seed=st.integers(0, 1000))
def test_chained_key_groups_give_the_whole_graphs_outputs_batch_by_batch(
    name: str, events: list[Any], cuts: list[int], delay: int, key_groups: int,
    restore: bool, seed: int,
) -> None:
    """Every keyed operator in its own key groups, elements handed on by phase: each micro-
    batch's main and side outputs (late data included) are the whole graph's."""
    plan = PLANS[name]()
    batches = micro_batches(events, cuts, delay)
    assert run_chained(plan, batches, key_groups, restore, seed) == run_whole(plan, batches)


@pytest.mark.parametrize("name", sorted(PLANS))
@settings(max_examples=25, deadline=None)
@given(events=EVENTS, cuts=st.lists(st.integers(0, 40), max_size=6),
       delay=st.sampled_from([0, 7]), key_groups=st.integers(1, 4),
       restore=st.booleans(), seed=st.integers(0, 1000), fused=st.booleans())
def test_elements_crossing_the_signed_wire_give_the_whole_graphs_outputs(
    name: str, events: list[Any], cuts: list[int], delay: int, key_groups: int,
    restore: bool, seed: int, fused: bool,
) -> None:
    """Every emission packed column by column, pickled, signed and unpacked between the
    steps (as between the Spark plan's stages): each micro-batch's outputs are still the
    whole graph's, late data and restores included."""
    plan = PLANS[name]()
    if fused and name not in ("hot_items_sliding", "hot_items_tumbling", "window_after_window"):
        fused = False  # a first node reading the sources by the key column "k" only
    batches = micro_batches(events, cuts, delay)
    assert run_chained(plan, batches, key_groups, restore, seed, fused=fused,
                       wire=True) == run_whole(plan, batches)


# --------------------------------------------------------------- hand-computed runs
@pytest.mark.parametrize("name", ["hot_items_sliding", "hot_items_tumbling",
                                  "window_after_window"])
@settings(max_examples=40, deadline=None)
@given(events=EVENTS, cuts=st.lists(st.integers(0, 40), max_size=6),
       delay=st.sampled_from([0, 7]), key_groups=st.integers(1, 4),
       restore=st.booleans(), seed=st.integers(0, 1000))
def test_a_first_node_taking_its_key_groups_rows_gives_the_whole_graphs_outputs(
    name: str, events: list[Any], cuts: list[int], delay: int, key_groups: int,
    restore: bool, seed: int,
) -> None:
    """The first keyed node reads the sources alone, by key column: it takes the rows placed
    in its key groups (run_sources, its window taking quiet rows in batches) instead of a
    sources' step's elements; every batch as the whole graph's."""
    plan = PLANS[name]()
    batches = micro_batches(events, cuts, delay)
    assert run_chained(plan, batches, key_groups, restore, seed, fused=True) == run_whole(
        plan, batches)


def test_an_upstream_firing_is_on_time_downstream_and_a_late_firing_is_late() -> None:
    """w1 (10 ms, lateness 5) then w2 (30 ms, by first letter). Batch 2: a1@3 is late at w1
    (watermark 11) but within its lateness: [0, 10) re-fires (1+2, then 1+2+3) and both reach
    w2. Batch 4 (watermark 29): w1 fires [20, 30) at 29; w2 gets it at ITS previous watermark
    (11), so it is on time and counted before w2 fires [0, 30) at 29: 3+6+4+5 = 18 (processed
    after w2's advance it would have been late). Batch 5: a1@25 re-fires w1's [20, 30) at 29,
    now behind w2's watermark: late data at w2 (late2)."""
    plan = window_after_window()
    batches: list[Batch] = [
        (frame([(0, "a1", 1), (0, "a1", 2)]), [1, 2], MIN_LONG, 1),
        (frame([(1, "a2", 4)]), [12], 1, 2),
        (frame([(0, "a1", 3)]), [3], 11, 3),
        (frame([(0, "a2", 5), (1, "b1", 1)]), [26, 30], 11, 4),
        (None, [], 29, 5),
        (frame([(0, "a1", 7)]), [25], 29, 6),
        (None, [], 1000, 7),
    ]
    whole = run_whole(plan, batches)
    for key_groups in (1, 2, 3):
        assert run_chained(plan, batches, key_groups, True, key_groups) == whole
    expected: list[tuple[Counter[Any], dict[str, Counter[Any]]]] = [
        (Counter(), {}) for _ in batches
    ]
    expected[4] = (Counter({("('a', 18)", 29): 1}), {})
    expected[5] = (Counter(), {"late2": Counter({("('a', 7)", 29): 1})})
    expected[6] = (Counter({("('b', 1)", 59): 1}), {})
    assert whole == expected


def test_a_first_call_takes_the_previous_watermark_from_its_elements() -> None:
    """A key group without a clock of its own processes a BEFORE element at the watermark
    its emitter had before the batch (carried on the element), then advances."""
    plan = hot_items(False)
    s = ChainStep(plan, 1, TaskInfo("top", 0, 1, 1), 1)
    seen = s.run([Emission(1, 0, 0, None, ("a1", 10, 2), 9, BEFORE, (0, 0, 0), (5, 1))], 30, 2)
    assert [e.value for e in seen] == [("seen", "a1", 2, 9, 5), ("top", 10, (("a1", 10, 2),), 30)]
    assert s.current_watermark == 30


def test_elements_are_sorted_by_phase_and_emission_order() -> None:
    plan = window_join_by_function()
    s = ChainStep(plan, 1, TaskInfo("running", 0, 1, 1), 1)
    elements = [
        Emission(1, 0, 0, None, "x", 9, ELEMENT, (0, 1, 0), (0, 0)),
        Emission(1, 0, 0, None, "x", 8, BEFORE, (0, 2, 5), (0, 0)),
        Emission(1, 0, 0, None, "x", 7, BEFORE, (0, 2, 4), (0, 0)),
    ]
    out = s.run(elements, 20, 1)
    assert [e.value[1:] for e in out] == [(1, 7, 0), (2, 8, 0), (3, 9, 20)]
    assert [e.phase for e in out] == [BEFORE, BEFORE, ELEMENT]


# -------------------------------------------------------------------------- key groups
def test_equal_keys_share_a_key_group() -> None:
    same = [1, 1.0, Decimal(1), np.int64(1), True]
    assert len({canonical_key(flink_key(k)) for k in same}) == 1
    assert canonical_key(flink_key(float("nan"))) == canonical_key(flink_key(-float("nan")))
    assert canonical_key(pickled_key(1)) == canonical_key(pickled_key(np.int64(1)))
    assert canonical_key(pickled_key(1)) != canonical_key(pickled_key(1.0))
    assert canonical_key(("a", "a")) == canonical_key(("a", "".join(["a"])))
    groups = {key_group_of(k, 8) for k in KEYS * 3}
    assert groups <= set(range(8)) and len(groups) > 1


def test_key_groups_are_the_same_in_every_process() -> None:
    keys = ["a1", ("b", 2), 2.5, b"x"]
    code = ("from flinkwin.operator.graph_chain import key_group_of;"
            f"print([key_group_of(k, 16) for k in {keys!r}])")
    outputs = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, check=True)
        outputs.add(done.stdout.strip())
    assert outputs == {str([key_group_of(k, 16) for k in keys])}


def test_a_chain_step_runs_operators_only() -> None:
    with pytest.raises(ValueError, match="is not an operator"):
        ChainStep(window_after_window(), 1, TaskInfo("x", 0, 1, 1), 2)


# ------------------------------------------------------------ which graphs can run chained
@pytest.mark.parametrize("name", sorted(PLANS))
def test_graphs_whose_keyed_operators_read_every_source_can_run_chained(name: str) -> None:
    assert single_task_reason(PLANS[name]()) is None


def test_the_rules_that_keep_a_graph_on_one_task_name_the_cause() -> None:
    plan = hot_items(False)
    idle = replace(plan, sources=(replace(source(0), idle_timeout_ms=100), source(1)))
    assert single_task_reason(idle) is None  # each key group is told the sources' activity
    carried = replace(idle, sources=(idle.sources[0], replace(source(1), stage_watermark=True)))
    assert "source 0 uses with_idleness and a source's watermark is computed before a filter" in (
        str(single_task_reason(carried)))
    silent = replace(plan, sources=(source(0), replace(source(1), delay_ms=None)))
    assert "source 1 has no watermarks" in str(single_task_reason(silent))
    one_source = GraphPlan((source(0), source(1)), (
            NodeSpec("w1", OPERATOR, ((("source", 0), 0),),
                 build=window_after_window().nodes[0].build),
    ), ("node", 0))
    assert single_task_reason(one_source) == (
        "w1 reads sources [0] of 2: its own watermark is not the one of all the graph's sources"
    )

    class Echo(ProcessFunction):
        def process_element(self, value: Any, ctx: Any) -> Any:
            yield value

    def spy(info: TaskInfo) -> ProcessOperator:
        return ProcessOperator(Echo(), task_info=info)

    unkeyed = GraphPlan((source(0),), (NodeSpec("spy", OPERATOR, ((("source", 0), 0),),
                                                build=spy),), ("node", 0))
    assert single_task_reason(unkeyed) == f"spy is not keyed: {NON_KEYED_PROCESS}"


def test_a_key_groups_own_source_clocks_give_the_minimum_watermark_and_survive_a_restart() -> None:
    """A distributed graph of two watermarked sources: each key group is told each source's
    greatest timestamp per micro-batch (clock rows, flinkwin.spark.graph_chained) and takes
    as its watermark the minimum of the sources' (``max - delay - 1``), MIN_LONG until every
    source has a timestamp, as a one-task graph does; the maxima are in its snapshot, so a
    restored key group goes on from them (Spark's own per-source maxima do not survive a
    restart)."""
    plan = replace(window_join_by_function(),
                   sources=(source(0, delay=5), source(1, delay=0)))
    step = ChainStep(plan, 1, TaskInfo("running", 0, 2, 2), 2)
    assert not step.clocks_moved()
    step.see_source_maxima(np.array([100, MIN_LONG]))
    assert step.sources_watermark(0) == MIN_LONG and step.clocks_moved()
    step.see_source_maxima(np.array([90, 40]))  # a smaller maximum changes nothing
    assert step.sources_watermark(0) == min(100 - 5 - 1, 40 - 0 - 1)
    restored = ChainStep(plan, 1, TaskInfo("running", 0, 2, 2), 2)
    restored.restore(step.snapshot())
    assert restored.source_max == [100, 40]
    assert restored.sources_watermark(0) == 39


def test_a_key_group_whose_sources_all_turn_idle_follows_their_clocks_as_one_task_does(
) -> None:
    """Both sources with withIdleness: each micro-batch's clocks were told while the sources
    had elements (active), so the valves take them before the sources turn idle, then go on
    to the greatest watermark of all (both idle), as the one-task graph does (it advances
    before its processing time). Fed only while idle, the valves ignored every new clock:
    the distributed plan never fired again (found by bench/probes/fuzz_graphs.py)."""
    plan = replace(window_join_by_function(), sources=(
        replace(source(0), idle_timeout_ms=2), replace(source(1), idle_timeout_ms=2)))

    def told(step: ChainStep, now: int, maxima: list[int]) -> None:
        step.advance_processing_time(now)
        step.see_source_maxima(np.array(maxima))

    step = ChainStep(plan, 1, TaskInfo("running", 0, 2, 2), 2)
    told(step, 1, [10, 20])
    assert step.sources_watermark(5) == 19  # both idle: the greatest of 9 and 19
    told(step, 5, [40, 50])
    assert step.sources_watermark(9) == 49  # active at 5 (min 39), then idle: 49
    one = GraphOperator(replace(plan, own_watermarks=True), TaskInfo("one", 0, 1, 1))
    for now, maxima in ((1, [10, 20]), (5, [40, 50])):
        one.advance_processing_time(now)
        one.see_source_maxima(np.array(maxima))
    one.advance_watermark(0)  # the stage's wake-up, before its processing time moves
    one.advance_processing_time(9)
    assert one._node_watermarks[1] == 49


def test_a_key_groups_own_clocks_leave_an_idle_source_out_as_flinks_valves_do() -> None:
    """withIdleness in a distributed graph: each key group is told each source's greatest
    timestamp of every micro-batch (its clock rows), which also says the source had elements,
    and computes its node's watermark through the valves of every operator up to it, as a
    one-task graph does (StatusWatermarkValve): a source idle for its timeout is left out,
    one resuming behind the watermark stays out until it catches up; the valves survive a
    restore."""
    idle = replace(source(1), idle_timeout_ms=2)  # idle more than 2 ms after its elements
    plan = replace(window_join_by_function(), sources=(source(0), idle))

    def told(step: ChainStep, now: int, maxima: list[int]) -> None:
        step.advance_processing_time(now)
        step.see_source_maxima(np.array(maxima))

    step = ChainStep(plan, 1, TaskInfo("running", 0, 2, 2), 2)
    told(step, 1, [10, 20])
    assert step.sources_watermark(2) == 9  # the join's minimum, through to "running"
    told(step, 2, [30, MIN_LONG])  # source 1 has no elements
    assert step.sources_watermark(3) == 19  # not idle yet (last elements at 1)
    assert step.sources_watermark(4) == 29  # idle: the join follows source 0
    told(step, 5, [MIN_LONG, 25])  # source 1 back, at 24: behind the join's 29
    restored = ChainStep(plan, 1, TaskInfo("running", 0, 2, 2), 2)
    restored.restore(step.snapshot())
    for key_group in (step, restored):
        assert key_group.sources_watermark(6) == 29  # unaligned: left out
        told(key_group, 6, [MIN_LONG, 45])  # caught up: aligned, in the minimum again
        assert key_group.sources_watermark(7) == 29
        told(key_group, 7, [60, MIN_LONG])
        assert key_group.sources_watermark(8) == 44
