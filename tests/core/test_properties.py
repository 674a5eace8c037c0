"""Property tests (hypothesis) over random scripts of elements, watermarks and processing time.

(a) Snapshot/restore at any point leaves the output unchanged: a script run straight through one
    harness emits exactly what it emits when, at a random cut point, the state is snapshotted and
    restored into a fresh harness that runs the rest.
(b) The batch path (``process_elements`` -> ``WindowOperator.process_batch``, vectorized where the
    configuration allows) emits exactly what the per-element path emits, in the same order.

Scripts use few keys, small out-of-order timestamps relative to the current watermark (so some
elements are late), watermarks that sometimes do not advance (they must be ignored) and
processing-time advances. Every configuration is built fresh for each harness.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkwin import (
    AggregateFunction,
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountEvictor,
    CountTrigger,
    DeltaEvictor,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindows,
    OutputTag,
    ProcessAllWindowFunction,
    ProcessingTimeSessionWindows,
    ProcessWindowFunction,
    PurgingTrigger,
    ReduceFunction,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    TimeEvictor,
    TimeWindow,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    ValueStateDescriptor,
    WindowAssigner,
    WindowFunction,
)
from flinkwin.functions.builtin import max_by, max_of, min_by, min_of, sum_of
from flinkwin.state import ReducingStateDescriptor
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MAX_LONG

LATE = OutputTag("late")
SIDE = OutputTag("side")

# ---------------------------------------------------------------------------------------------
#  User functions, triggers and assigners used by the configurations
# ---------------------------------------------------------------------------------------------


class SumReduce(ReduceFunction):
    def reduce(self, a, b):
        return {"k": a["k"], "g": a["g"], "v": a["v"] + b["v"], "id": a["id"]}


def keep_larger(a, b):
    """A plain-callable reduce whose result depends on the order of its inputs."""
    return b if b["v"] >= a["v"] else a


class CountSumMax(AggregateFunction):
    def create_accumulator(self):
        return (0, 0, None)

    def add(self, value, acc):
        count, total, top = acc
        return (count + 1, total + value["v"], value["v"] if top is None else max(top, value["v"]))

    def get_result(self, acc):
        return acc

    def merge(self, a, b):
        tops = [t for t in (a[2], b[2]) if t is not None]
        return (a[0] + b[0], a[1] + b[1], max(tops) if tops else None)


class Describe(ProcessWindowFunction):
    """Emits key, window, the element ids in window order, and a side output per firing; keeps
    a per-window firing counter (window state) and a per-key one (global state)."""

    fired = ValueStateDescriptor("fired")
    total = ValueStateDescriptor("total")

    def process(self, key, context, elements):
        window_state = context.window_state().get_state(self.fired)
        global_state = context.global_state().get_state(self.total)
        n = (window_state.value() or 0) + 1
        t = (global_state.value() or 0) + 1
        window_state.update(n)
        global_state.update(t)
        ids = [e["id"] for e in elements]
        context.output(SIDE, (key, n))
        yield (key, _w(context.window()), ids, n, t)

    def clear(self, context):
        context.window_state().get_state(self.fired).clear()


class DescribeSession(ProcessWindowFunction):
    """Like ``Describe`` for merging windows, where Flink forbids per-window state: only the
    per-key (global) state counts firings."""

    total = ValueStateDescriptor("total")

    def process(self, key, context, elements):
        global_state = context.global_state().get_state(self.total)
        t = (global_state.value() or 0) + 1
        global_state.update(t)
        ids = [e["id"] for e in elements]
        context.output(SIDE, (key, t))
        yield (key, _w(context.window()), ids, t)


class DescribeAll(ProcessAllWindowFunction):
    def process(self, context, elements):
        ids = sorted(e["id"] for e in elements)
        if len(ids) % 2:
            yield SIDE, ids[0]
        yield (_w(context.window()), ids)


class ApplyIds(WindowFunction):
    def apply(self, key, window, inputs):
        return [(key, _w(window), [i["id"] for i in inputs])]


class PassThrough(ProcessWindowFunction):
    """Second half of a (reduce/aggregate, process) pair."""

    def process(self, key, context, elements):
        return [(key, _w(context.window()), list(elements))]


def _w(window: Any) -> Any:
    return (window.start, window.end) if isinstance(window, TimeWindow) else "global"


class EarlyEvery5(Trigger):
    """A user trigger (per-element path): fires early at every multiple of 5 of event time after
    the first element, fires at the window end, purges when an element with v == 0 arrives."""

    next_fire = ValueStateDescriptor("next-fire")

    def on_element(self, element, timestamp, window, ctx):
        ctx.register_event_time_timer(window.max_timestamp())
        state = ctx.get_partitioned_state(self.next_fire)
        if state.value() is None:
            t = timestamp - timestamp % 5 + 5
            if t < window.max_timestamp():
                ctx.register_event_time_timer(t)
                state.update(t)
        return TriggerResult.PURGE if element["v"] == 0 else TriggerResult.CONTINUE

    def on_event_time(self, time, window, ctx):
        if time == window.max_timestamp():
            return TriggerResult.FIRE
        state = ctx.get_partitioned_state(self.next_fire)
        if state.value() == time:
            t = time + 5
            if t < window.max_timestamp():
                ctx.register_event_time_timer(t)
                state.update(t)
            else:
                state.clear()
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_processing_time(self, time, window, ctx):
        return TriggerResult.CONTINUE

    def clear(self, window, ctx):
        state = ctx.get_partitioned_state(self.next_fire)
        if state.value() is not None:
            ctx.delete_event_time_timer(state.value())
            state.clear()
        ctx.delete_event_time_timer(window.max_timestamp())


class MergingCount(Trigger):
    """A user mergeable trigger: FIRE every 3 elements (count merged across sessions), and at
    the session end."""

    count = ReducingStateDescriptor("n", lambda a, b: a + b)

    def on_element(self, element, timestamp, window, ctx):
        ctx.register_event_time_timer(window.max_timestamp())
        state = ctx.get_partitioned_state(self.count)
        state.add(1)
        if state.get() >= 3:
            state.clear()
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_event_time(self, time, window, ctx):
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE

    def on_processing_time(self, time, window, ctx):
        return TriggerResult.CONTINUE

    def can_merge(self):
        return True

    def on_merge(self, window, ctx):
        ctx.merge_partitioned_state(self.count)
        if window.max_timestamp() > ctx.get_current_watermark():
            ctx.register_event_time_timer(window.max_timestamp())

    def clear(self, window, ctx):
        ctx.get_partitioned_state(self.count).clear()
        ctx.delete_event_time_timer(window.max_timestamp())


class EvenOddWindows(WindowAssigner):
    """A user assigner: windows of 8 for even values, of 12 for odd values (overlapping)."""

    def assign_windows(self, element, timestamp, context):
        size = 8 if element["v"] % 2 == 0 else 12
        start = timestamp - timestamp % size
        return [TimeWindow(start, start + size)]

    def get_default_trigger(self, env=None):
        return EventTimeTrigger.create()

    def is_event_time(self):
        return True


# ---------------------------------------------------------------------------------------------
#  Configurations: name -> factory of the harness arguments
# ---------------------------------------------------------------------------------------------

Factory = Callable[[], dict[str, Any]]


def cfg(assigner: Callable[[], Any], function: Callable[[], Any], **kwargs: Any) -> Factory:
    def make() -> dict[str, Any]:
        out = {"assigner": assigner(), "function": function(), "key_field": "k"}
        for name, value in kwargs.items():
            out[name] = value() if callable(value) and name in ("trigger", "evictor") else value
        return out

    return make


def tumbling(n: int = 10) -> Callable[[], Any]:
    return lambda: TumblingEventTimeWindows.of(n)


def sliding(size: int = 12, slide: int = 4, offset: int = 0) -> Callable[[], Any]:
    return lambda: SlidingEventTimeWindows.of(size, slide, offset)


def session(gap: int = 5) -> Callable[[], Any]:
    return lambda: EventTimeSessionWindows.withGap(gap)


# Configurations the vectorized batch path is expected to handle.
VECTORIZABLE: dict[str, Factory] = {
    "tumbling-sum": cfg(tumbling(), lambda: sum_of("v")),
    "tumbling-offset-min": cfg(lambda: TumblingEventTimeWindows.of(10, 3), lambda: min_of("v")),
    "tumbling-max": cfg(tumbling(7), lambda: max_of("v")),
    "tumbling-min-by": cfg(tumbling(), lambda: min_by("v")),
    "tumbling-max-by": cfg(tumbling(), lambda: max_by("v")),
    "sliding-sum": cfg(sliding(), lambda: sum_of("v")),
    "sliding-offset-max-by": cfg(sliding(10, 5, -2), lambda: max_by("v")),
    "sliding-user-reduce": cfg(sliding(9, 3), SumReduce),
    "tumbling-callable-reduce": cfg(tumbling(), lambda: keep_larger),
    "tumbling-aggregate": cfg(tumbling(), CountSumMax),
    "sliding-aggregate-lateness-late-tag": cfg(
        sliding(), CountSumMax, allowed_lateness=6, late_output_tag=LATE
    ),
    "tumbling-sum-lateness": cfg(tumbling(), lambda: sum_of("v"), allowed_lateness=5),
    "tumbling-sum-lateness-late-tag": cfg(
        tumbling(), lambda: sum_of("v"), allowed_lateness=5, late_output_tag=LATE
    ),
    "tumbling-sum-late-tag": cfg(tumbling(), lambda: sum_of("v"), late_output_tag=LATE),
    "tumbling-count-trigger": cfg(
        tumbling(20), lambda: sum_of("v"), trigger=lambda: CountTrigger.of(3)
    ),
    "tumbling-purging-count-trigger": cfg(
        tumbling(20), SumReduce, trigger=lambda: PurgingTrigger.of(CountTrigger.of(2))
    ),
    "tumbling-continuous": cfg(
        tumbling(20), lambda: sum_of("v"), trigger=lambda: ContinuousEventTimeTrigger.of(4)
    ),
    "tumbling-purging-continuous": cfg(
        tumbling(20), CountSumMax,
        trigger=lambda: PurgingTrigger.of(ContinuousEventTimeTrigger.of(4)),
    ),
    "sliding-continuous-lateness": cfg(
        sliding(), lambda: sum_of("v"), trigger=lambda: ContinuousEventTimeTrigger.of(3),
        allowed_lateness=4, late_output_tag=LATE,
    ),
    "tumbling-purging-event-time": cfg(
        tumbling(), lambda: max_of("v"), trigger=lambda: PurgingTrigger.of(EventTimeTrigger())
    ),
    "global-count-window": cfg(
        lambda: GlobalWindows.create(), lambda: sum_of("v"),
        trigger=lambda: PurgingTrigger.of(CountTrigger.of(3)),
    ),
    "global-count-trigger-aggregate": cfg(
        lambda: GlobalWindows.create(), CountSumMax, trigger=lambda: CountTrigger.of(2)
    ),
    "tumbling-two-field-key": lambda: {
        "assigner": TumblingEventTimeWindows.of(10), "function": sum_of("v"),
        "key_field": ["k", "g"],
    },
    "tumbling-non-keyed": lambda: {
        "assigner": TumblingEventTimeWindows.of(10), "function": sum_of("v"), "key_field": None,
    },
    "tumbling-aggregate-process-pair": cfg(tumbling(), lambda: (CountSumMax(), PassThrough())),
    "tumbling-processing-time-sum": cfg(
        lambda: TumblingProcessingTimeWindows.of(10), lambda: sum_of("v")
    ),
    "sliding-processing-time-reduce": cfg(
        lambda: SlidingProcessingTimeWindows.of(10, 5), SumReduce
    ),
}

# Configurations that need the per-element path (merging, evictors, user components...).
PER_ELEMENT: dict[str, Factory] = {
    "session-sum": cfg(session(), lambda: sum_of("v")),
    "session-process-lateness-late-tag": cfg(
        session(4), DescribeSession, allowed_lateness=5, late_output_tag=LATE
    ),
    "session-aggregate-process-pair": cfg(session(), lambda: (CountSumMax(), PassThrough())),
    "session-reduce-process-pair": cfg(session(3), lambda: (SumReduce(), PassThrough())),
    "session-continuous": cfg(
        session(6), lambda: sum_of("v"), trigger=lambda: ContinuousEventTimeTrigger.of(3)
    ),
    "session-count-trigger": cfg(
        session(), SumReduce, trigger=lambda: PurgingTrigger.of(CountTrigger.of(2))
    ),
    "session-user-merging-trigger": cfg(session(), ApplyIds, trigger=MergingCount),
    "dynamic-session": cfg(
        lambda: EventTimeSessionWindows.withDynamicGap(lambda e: e["v"] % 4 + 1), CountSumMax
    ),
    "processing-time-session": cfg(
        lambda: ProcessingTimeSessionWindows.withGap(6), lambda: sum_of("v")
    ),
    "tumbling-process-window-function": cfg(tumbling(), Describe),
    "tumbling-continuous-process-state": cfg(
        tumbling(20), Describe, trigger=lambda: ContinuousEventTimeTrigger.of(5)
    ),
    "tumbling-window-function": cfg(tumbling(), ApplyIds, allowed_lateness=3),
    "sliding-non-keyed-process-all": lambda: {
        "assigner": SlidingEventTimeWindows.of(10, 5), "function": DescribeAll(),
        "key_field": None, "late_output_tag": LATE,
    },
    "global-count-evictor-sum": cfg(
        lambda: GlobalWindows.create(), lambda: sum_of("v"),
        evictor=lambda: CountEvictor.of(4), trigger=lambda: CountTrigger.of(2),
    ),
    "global-count-evictor-after-process": cfg(
        lambda: GlobalWindows.create(), Describe,
        evictor=lambda: CountEvictor.of(3, do_evict_after=True), trigger=lambda: CountTrigger.of(2),
    ),
    "tumbling-time-evictor-reduce": cfg(
        tumbling(20), SumReduce, evictor=lambda: TimeEvictor.of(5),
        trigger=lambda: ContinuousEventTimeTrigger.of(5),
    ),
    "sliding-delta-evictor-aggregate": cfg(
        sliding(), CountSumMax,
        evictor=lambda: DeltaEvictor.of(4, lambda a, b: abs(b["v"] - a["v"])),
        allowed_lateness=3, late_output_tag=LATE,
    ),
    "session-count-evictor": cfg(session(), ApplyIds, evictor=lambda: CountEvictor.of(2)),
    "tumbling-user-trigger": cfg(tumbling(20), Describe, trigger=EarlyEvery5),
    "user-assigner": cfg(lambda: EvenOddWindows(), lambda: sum_of("v")),
    "callable-key-selector": lambda: {
        "assigner": TumblingEventTimeWindows.of(10), "function": sum_of("v"),
        "key_field": lambda r: r["k"] + r["g"],
    },
    "processing-time-continuous": cfg(
        lambda: TumblingProcessingTimeWindows.of(20), lambda: sum_of("v"),
        trigger=lambda: ContinuousProcessingTimeTrigger.of(4),
    ),
}

ALL_CONFIGS = {**VECTORIZABLE, **PER_ELEMENT}

# ---------------------------------------------------------------------------------------------
#  Scripts
# ---------------------------------------------------------------------------------------------

# An element is (key, group, value, timestamp offset from the current watermark).
ELEMENT = st.tuples(
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["x", "y"]),
    st.integers(0, 9),
    st.integers(-14, 20),
)
STEP = st.one_of(
    st.tuples(st.just("elements"), st.lists(ELEMENT, min_size=1, max_size=6)),
    st.tuples(st.just("watermark"), st.integers(-3, 12)),  # <= 0: must be ignored
    st.tuples(st.just("processing"), st.integers(0, 12)),
)
SCRIPT = st.lists(STEP, min_size=1, max_size=14)

# Wide batches: many keys and windows per batch, so that the batch path's per-pane bulk
# operations (e.g. segment reductions over many panes) are exercised too.
WIDE_ELEMENT = st.tuples(
    st.sampled_from([f"k{i}" for i in range(40)]),
    st.sampled_from(["x", "y"]),
    st.integers(0, 9),
    st.integers(-14, 40),
)
WIDE_SCRIPT = st.lists(
    st.one_of(
        st.tuples(st.just("elements"), st.lists(WIDE_ELEMENT, min_size=50, max_size=200)),
        st.tuples(st.just("watermark"), st.integers(-3, 25)),
        st.tuples(st.just("processing"), st.integers(0, 25)),
    ),
    min_size=1,
    max_size=6,
)

Action = tuple[str, Any]


def actions_of(script: list[Any]) -> list[Action]:
    """The script as actions with absolute times: ("elements", [(record, ts), ...]) for each
    maximal run of elements, ("watermark", t),
    ("processing", t). Starts the processing-time clock at 0 (the harness starts it at
    Long.MIN_VALUE, where processing-time windows would reach below Long.MIN_VALUE) and ends with
    the end-of-input watermark and a late processing time."""
    out: list[Action] = [("processing", 0)]
    watermark, processing, next_id = 0, 0, 0
    for kind, arg in script:
        if kind == "elements":
            batch = []
            for key, group, value, offset in arg:
                record = {"k": key, "g": group, "v": value, "id": next_id}
                next_id += 1
                batch.append((record, max(0, watermark + offset)))
            if out and out[-1][0] == "elements":
                out[-1][1].extend(batch)
            else:
                out.append(("elements", batch))
        elif kind == "watermark":
            out.append(("watermark", watermark + arg))
            watermark = max(watermark, watermark + arg)
        else:
            processing += arg
            out.append(("processing", processing))
    out.append(("watermark", MAX_LONG))
    out.append(("processing", processing + 1_000))
    return out


def run_action(h: WindowOperatorHarness, action: Action, *, batch: bool) -> None:
    kind, arg = action
    if kind == "elements":
        if batch:
            h.process_elements([r for r, _ in arg], [t for _, t in arg])
        else:
            for record, ts in arg:
                h.process_element(record, ts)
    elif kind == "watermark":
        h.process_watermark(arg)
    else:
        h.set_processing_time(arg)


def flatten(actions: list[Action]) -> list[Action]:
    """One action per element (so a cut can fall inside a run of elements)."""
    out: list[Action] = []
    for kind, arg in actions:
        if kind == "elements":
            out.extend(("elements", [e]) for e in arg)
        else:
            out.append((kind, arg))
    return out


def observed(h: WindowOperatorHarness) -> tuple[Any, ...]:
    return (
        h.output_with_timestamps(),
        h.side_output_with_timestamps(LATE),
        h.side_output_with_timestamps(SIDE),
        h.num_late_records_dropped,
    )


def normalize(obs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Records/dicts -> sorted item tuples so that outputs compare by value and field names."""

    def norm(v: Any) -> Any:
        if hasattr(v, "asDict"):
            return ("record", tuple(v.asDict().items()))
        if isinstance(v, dict):
            return ("record", tuple(v.items()))
        if isinstance(v, (list, tuple)):
            return (type(v).__name__, tuple(norm(x) for x in v))
        return v

    return norm(obs)


PROPERTY_SETTINGS = settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)

# ---------------------------------------------------------------------------------------------
#  (a) snapshot/restore at any point leaves the output unchanged
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ALL_CONFIGS))
@PROPERTY_SETTINGS
@given(script=SCRIPT, cut=st.floats(0, 1))
def test_snapshot_restore_at_any_point_leaves_output_unchanged(name, script, cut):
    make = ALL_CONFIGS[name]
    actions = flatten(actions_of(script))

    straight = WindowOperatorHarness(**make())
    for action in actions:
        run_action(straight, action, batch=False)

    at = round(cut * len(actions))
    first = WindowOperatorHarness(**make())
    for action in actions[:at]:
        run_action(first, action, batch=False)
    snapshot = first.snapshot()
    assert isinstance(snapshot, bytes)
    before = observed(first)
    second = WindowOperatorHarness(**make())
    second.restore(snapshot)
    for action in actions[at:]:
        run_action(second, action, batch=False)
        # taking a snapshot has no effect on the operator it was taken from
        run_action(first, action, batch=False)
    assert normalize(observed(first)) == normalize(observed(straight))

    after = observed(second)
    combined = (
        before[0] + after[0],
        before[1] + after[1],
        before[2] + after[2],
        after[3],  # the dropped-records counter is part of the snapshot
    )
    assert normalize(combined) == normalize(observed(straight))


@pytest.mark.parametrize("name", ["session-process-lateness-late-tag", "tumbling-continuous"])
@PROPERTY_SETTINGS
@given(script=SCRIPT, cuts=st.lists(st.floats(0, 1), min_size=2, max_size=4))
def test_repeated_snapshot_restore_chains_leave_output_unchanged(name, script, cuts):
    make = ALL_CONFIGS[name]
    actions = flatten(actions_of(script))
    straight = WindowOperatorHarness(**make())
    for action in actions:
        run_action(straight, action, batch=False)

    points = sorted(round(c * len(actions)) for c in cuts) + [len(actions)]
    h = WindowOperatorHarness(**make())
    collected: list[Any] = [[], [], []]
    done = 0
    for point in points:
        for action in actions[done:point]:
            run_action(h, action, batch=False)
        done = point
        obs = observed(h)
        for i in range(3):
            collected[i] += obs[i]
        dropped = obs[3]
        data = h.snapshot()
        h = WindowOperatorHarness(**make())
        h.restore(data)
    assert normalize((*collected, dropped)) == normalize(observed(straight))


# ---------------------------------------------------------------------------------------------
#  (b) batch path == per-element path
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(ALL_CONFIGS))
@PROPERTY_SETTINGS
@given(script=SCRIPT)
def test_batch_path_equals_per_element_path(name, script):
    make = ALL_CONFIGS[name]
    actions = actions_of(script)
    per_element = WindowOperatorHarness(**make())
    batched = WindowOperatorHarness(**make())
    for action in actions:
        run_action(per_element, action, batch=False)
        run_action(batched, action, batch=True)
        # identical after every step, not just at the end
        assert normalize(observed(batched)) == normalize(observed(per_element))
    assert batched.num_event_time_timers() == per_element.num_event_time_timers()
    assert batched.num_keyed_state_entries() == per_element.num_keyed_state_entries()


@pytest.mark.parametrize("name", list(VECTORIZABLE))
@settings(PROPERTY_SETTINGS, max_examples=4)
@given(script=WIDE_SCRIPT)
def test_batch_path_equals_per_element_path_on_wide_batches(name, script):
    make = VECTORIZABLE[name]
    per_element = WindowOperatorHarness(**make())
    batched = WindowOperatorHarness(**make())
    for action in actions_of(script):
        run_action(per_element, action, batch=False)
        run_action(batched, action, batch=True)
        assert normalize(observed(batched)) == normalize(observed(per_element))


@pytest.mark.parametrize("name", ["tumbling-sum", "sliding-aggregate-lateness-late-tag",
                                  "session-sum", "global-count-evictor-sum"])
@PROPERTY_SETTINGS
@given(script=SCRIPT, cut=st.floats(0, 1))
def test_batch_path_state_restores_into_per_element_path(name, script, cut):
    """The batch path's state is the per-element path's state: snapshot a batch-fed harness
    and continue per element (and vice versa) without any difference in output."""
    make = ALL_CONFIGS[name]
    actions = actions_of(script)
    straight = WindowOperatorHarness(**make())
    for action in actions:
        run_action(straight, action, batch=False)

    at = round(cut * len(actions))
    first = WindowOperatorHarness(**make())
    for action in actions[:at]:
        run_action(first, action, batch=True)
    second = WindowOperatorHarness(**make())
    second.restore(first.snapshot())
    for action in actions[at:]:
        run_action(second, action, batch=False)
    before, after = observed(first), observed(second)
    combined = (before[0] + after[0], before[1] + after[1], before[2] + after[2], after[3])
    assert normalize(combined) == normalize(observed(straight))


def test_scripts_exercise_late_data_and_ignored_watermarks():
    """Guard for the generator: a fixed script has late elements, a watermark that does not
    advance, and outputs on both sides of a cut (so the properties are not vacuous)."""
    script = [
        ("elements", [("a", "x", 1, 3), ("b", "y", 2, 15)]),
        ("watermark", 12),
        ("watermark", -2),
        ("elements", [("a", "x", 5, -10), ("a", "y", 7, 2)]),
        ("watermark", 10),
    ]
    actions = actions_of(script)
    assert ("watermark", 10) in actions  # 12 - 2: not greater than 12, ignored by the harness
    h = WindowOperatorHarness(**ALL_CONFIGS["tumbling-sum-late-tag"]())
    for action in actions:
        run_action(h, action, batch=False)
    assert h.side_output(LATE) == [{"k": "a", "g": "x", "v": 5, "id": 2}]
    assert [r["v"] for r in h.output()] == [1, 2, 7]


def test_snapshot_succeeds_for_windows_assigned_at_min_long_processing_time():
    """An element processed while the clock is still at Long.MIN_VALUE (the harness's initial
    time) gets sliding windows starting below Long.MIN_VALUE (Python ints do not wrap, see
    docs/semantics.md); that state must still snapshot and restore exactly."""
    h = WindowOperatorHarness(SlidingProcessingTimeWindows.of(10, 5), sum_of("v"), key_field="k")
    h.process_element({"k": "a", "v": 1}, 0)  # set_processing_time was never called
    data = h.snapshot()
    restored = WindowOperatorHarness(
        SlidingProcessingTimeWindows.of(10, 5), sum_of("v"), key_field="k"
    )
    restored.restore(data)
    h.set_processing_time(100)
    restored.set_processing_time(100)
    assert restored.output_with_timestamps() == h.output_with_timestamps()
