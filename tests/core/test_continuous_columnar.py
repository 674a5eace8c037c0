"""The columnar state under ``ContinuousEventTimeTrigger`` does exactly what the WindowOperator
does.

Random scripts of batches (few keys, out-of-order and late timestamps, in arrival order or
sorted by event time) and watermark advances run through :class:`ContinuousAggregation`
(falling back to its ``to_operator()`` equivalent when a batch fires a window on arrival, and
back with ``from_operator()`` after such a batch) and through two plain
:class:`WindowOperator`\\ s, one fed a batch at a time and one an element at a time; every
batch's main output (rows and order), late output, next timer and dropped count must agree,
and so must the state after a snapshot/restore at any point and the operator it converts to
(contents, fire times, timers in firing order).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from batch_scripts import batch_frame, batches
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkwin import (
    ContinuousEventTimeTrigger,
    EventTimeTrigger,
    OutputTag,
    PurgingTrigger,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.functions.builtin import max_of, min_of, sum_of
from flinkwin.operator import WindowOperator, states
from flinkwin.operator.states.columnar import snapshot_format
from flinkwin.operator.states.continuous import ContinuousAggregation, supports

LATE = OutputTag("late")
AGGS = {"sum": sum_of, "min": min_of, "max": max_of}
COLUMNS = ["k", "ts", "v"]


def make_operator(
    assigner: Any, agg: str, interval: int, lateness: int, late: bool
) -> WindowOperator:
    return WindowOperator(
        assigner, AGGS[agg]("v"), key_selector="k",
        trigger=ContinuousEventTimeTrigger.of(Time.milliseconds(interval)),
        allowed_lateness=lateness, late_output_tag=LATE if late else None,
    )


def fire_time_table(op: WindowOperator) -> dict[Any, Any]:
    return dict(op.partitioned_state.tables.get("fire-time", {}))


def timer_view(op: WindowOperator) -> list[tuple[int, frozenset[Any], list[Any]]]:
    """Timers per timestamp; the order that decides output order is that of the windows'
    ``max_timestamp`` and fire-time timers (cleanup timers emit nothing)."""
    fire_times = fire_time_table(op)
    return [
        (ts, frozenset(slots), [
            slot for slot in slots
            if ts in (slot[1].max_timestamp(), fire_times.get(slot))
        ])
        for ts, slots in op.event_timers.buckets()
    ]


def rows_of(records: list[Any]) -> list[tuple[Any, ...]]:
    return [tuple(r) for r, _ in records]


def timed_rows_of(records: list[Any]) -> list[tuple[Any, ...]]:
    return [(*tuple(r), ts) for r, ts in records]


def frame_rows(state: ContinuousAggregation) -> list[tuple[Any, ...]]:
    frame, stamps = state.drain_main_timed()
    if frame is None:
        return []
    return [(*row, ts) for row, ts in zip(frame.itertuples(index=False), stamps.tolist())]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=batches(),
    assigner=st.sampled_from([
        TumblingEventTimeWindows.of(Time.milliseconds(20)),
        TumblingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(3)),
        SlidingEventTimeWindows.of(Time.milliseconds(12), Time.milliseconds(4)),
    ]),
    agg=st.sampled_from(sorted(AGGS)),
    interval=st.sampled_from([1, 3, 4, 7, 30]),
    lateness=st.sampled_from([0, 7]),
    late=st.booleans(),
    cut=st.integers(0, 8),
    back=st.booleans(),
    sort=st.booleans(),
    shift=st.sampled_from([0, -45]),  # timestamps before 1970: Java's remainder
)
def test_continuous_state_matches_the_window_operator(
    batches: list[Any], assigner: Any, agg: str, interval: int, lateness: int, late: bool,
    cut: int, back: bool, sort: bool, shift: int,
) -> None:
    def factory() -> WindowOperator:
        return make_operator(assigner, agg, interval, lateness, late)

    reference = factory()  # a batch at a time (the vectorized operator)
    per_element = factory()  # an element at a time
    state: Any = ContinuousAggregation(factory(), factory)
    watermark = shift
    for i, (elements, step) in enumerate(batches):
        elements = [(k, t + shift, v) for k, t, v in elements]
        if i == cut and isinstance(state, ContinuousAggregation):
            restored = ContinuousAggregation(factory(), factory)
            restored.restore(state.snapshot())
            state = restored
        frame, ts = batch_frame(elements, sort)
        if isinstance(state, ContinuousAggregation) and not state.accepts(frame, ts, watermark):
            state = state.to_operator()
        state.process_batch(frame, ts)
        reference.process_batch(frame, ts)
        for record, t in zip(frame.to_dict("records"), ts.tolist()):
            per_element.process_element(record, t)
        watermark += step
        for op in (state, reference, per_element):
            op.advance_watermark(watermark)

        expected_main = timed_rows_of(reference.drain_output())
        expected_late = rows_of(reference.drain_side_output(LATE))
        assert timed_rows_of(per_element.drain_output()) == expected_main, f"batch {i}"
        assert rows_of(per_element.drain_side_output(LATE)) == expected_late
        if isinstance(state, ContinuousAggregation):
            assert frame_rows(state) == expected_main, f"main, batch {i}"
            late_frame = state.drain_late()
            late_rows = [] if late_frame is None else [
                tuple(r) for r in late_frame.itertuples(index=False)
            ]
            assert late_rows == expected_late, f"late, batch {i}"
        else:
            assert timed_rows_of(state.drain_output()) == expected_main, f"main, batch {i}"
            assert rows_of(state.drain_side_output(LATE)) == expected_late
            if back:
                state = ContinuousAggregation.from_operator(state, factory, COLUMNS)
                assert state is not None
        assert state.next_event_time_timer() == reference.next_event_time_timer()
        assert state.num_late_records_dropped == reference.num_late_records_dropped
    if isinstance(state, ContinuousAggregation):
        converted = state.to_operator()
        assert converted.window_contents == reference.window_contents
        assert fire_time_table(converted) == fire_time_table(reference)
        assert timer_view(converted) == timer_view(reference)
        again = ContinuousAggregation.from_operator(converted, factory, COLUMNS)
        assert again is not None
        assert timer_view(again.to_operator()) == timer_view(reference)


def test_fires_every_interval_and_at_the_window_end_in_timer_order() -> None:
    """Two keys, 1 h windows fired every 10 min: each firing emits the pane's contents with
    the window's max_timestamp; at a shared time the pane whose timer was registered first
    fires first; the window's end fires once and clears the pane."""
    hour, minute = 3_600_000, 60_000

    def factory() -> WindowOperator:
        return WindowOperator(
            TumblingEventTimeWindows.of(Time.hours(1)), sum_of("v"), key_selector="k",
            trigger=ContinuousEventTimeTrigger.of(Time.minutes(10)),
        )

    state = ContinuousAggregation(factory(), factory)
    per_element = factory()
    script = [
        ([("b", 12 * minute, 1), ("a", 5 * minute, 2), ("a", 41 * minute, 3)], 25 * minute),
        ([("b", 30 * minute, 4)], hour),
    ]
    outputs = []
    for elements, watermark in script:
        frame, ts = batch_frame(elements)
        state.process_batch(frame, ts)
        for k, t, v in elements:
            per_element.process_element({"k": k, "ts": t, "v": v}, t)
        state.advance_watermark(watermark)
        per_element.advance_watermark(watermark)
        outputs.append(frame_rows(state))
        assert outputs[-1] == timed_rows_of(per_element.drain_output())
    # at 10 min a (its first firing); at 20 min b (timer registered by its element) before a
    # (registered when a fired at 10 min)
    a, b = ("a", 5 * minute, 5, hour - 1), ("b", 12 * minute, 1, hour - 1)
    assert outputs[0] == [a, b, a]
    # b fired first at 20 min, so its 30 min timer comes first, and so on; at the end, the
    # end-of-window timers in the order the first elements registered them (b, then a)
    b = ("b", 12 * minute, 5, hour - 1)
    assert outputs[1] == [b, a] * 4
    assert state.holds_nothing()
    assert state.num_windows_fired == 11


def test_state_kind_and_supported_configurations() -> None:
    tumbling = TumblingEventTimeWindows.of(Time.seconds(10))
    continuous = ContinuousEventTimeTrigger.of(Time.seconds(1))

    def op(**kw: Any) -> WindowOperator:
        return WindowOperator(tumbling, sum_of("v"), key_selector="k", **kw)

    assert supports(op(trigger=continuous))
    assert states.state_kind(op(trigger=continuous), True) == states.CONTINUOUS
    assert states.state_kind(op(trigger=continuous), False) == states.OBJECT
    assert not supports(op(trigger=PurgingTrigger.of(continuous)))
    assert not supports(op(trigger=EventTimeTrigger.create()))
    assert states.state_kind(op(), True) == states.COLUMNAR


def test_snapshot_restores_into_the_continuous_state() -> None:
    def factory() -> WindowOperator:
        return make_operator(TumblingEventTimeWindows.of(Time.milliseconds(20)), "sum", 3, 0,
                             False)

    state = ContinuousAggregation(factory(), factory)
    frame, ts = batch_frame([("a", 4, 1), ("b", 9, 2)])
    state.process_batch(frame, ts)
    state.advance_watermark(7)
    state.drain_main_timed()
    data = state.snapshot()
    assert snapshot_format(data) == "continuous-1"
    restored = states.restore_state(data, factory)
    assert type(restored) is ContinuousAggregation
    restored.advance_watermark(30)
    state.advance_watermark(30)
    assert frame_rows(restored) == frame_rows(state)
    assert restored.next_seq == state.next_seq


def test_from_operator_refuses_other_state_shapes() -> None:
    def factory() -> WindowOperator:
        return make_operator(TumblingEventTimeWindows.of(Time.seconds(10)), "sum", 1000, 0,
                             False)

    op = factory()
    op.process_element({"k": "a", "ts": 1, "v": 1}, 1)
    assert ContinuousAggregation.from_operator(op, factory, COLUMNS) is not None
    assert ContinuousAggregation.from_operator(op, factory, ["k", "v"]) is None
    op.event_timers.register(5_000, "a", next(iter(op.window_contents))[1])  # a foreign timer
    assert ContinuousAggregation.from_operator(op, factory, COLUMNS) is None


def test_timestamps_near_the_long_limits_are_not_taken() -> None:
    def factory() -> WindowOperator:
        return make_operator(TumblingEventTimeWindows.of(Time.milliseconds(20)), "sum", 3, 0,
                             False)

    state = ContinuousAggregation(factory(), factory)
    frame, _ = batch_frame([("a", 1, 1)])
    near = np.array([2**63 - 10], dtype=np.int64)
    assert not state.accepts(frame, near, 0)


def run_both(factory: Any, script: list[tuple[list[Any], int]]) -> list[list[Any]]:
    """Each step's main outputs of the state and of the per-element operator (asserted equal)."""
    state = ContinuousAggregation(factory(), factory)
    per_element = factory()
    outputs = []
    for elements, watermark in script:
        frame, ts = batch_frame(elements)
        state.process_batch(frame, ts)
        for k, t, v in elements:
            per_element.process_element({"k": k, "ts": t, "v": v}, t)
        state.advance_watermark(watermark)
        per_element.advance_watermark(watermark)
        outputs.append(frame_rows(state))
        assert outputs[-1] == timed_rows_of(per_element.drain_output())
    return outputs


def test_runs_of_early_firings_in_overlapping_sliding_windows() -> None:
    """One watermark jump over many intervals with sliding windows firing every millisecond:
    runs of firings (computed at once) stop where another window's timer or end comes between,
    and the outputs are the per-element operator's."""
    def factory() -> WindowOperator:
        return make_operator(SlidingEventTimeWindows.of(Time.milliseconds(12),
                                                        Time.milliseconds(4)),
                             "sum", 1, 0, False)

    outputs = run_both(factory, [([("a", 11, 1), ("b", 5, 2)], 0), ([], 30)])
    assert len(outputs[1]) > 20


def test_a_long_run_of_early_firings() -> None:
    """A day window firing every millisecond after a long watermark jump: every firing is
    emitted, in order, and the window's end once."""
    def factory() -> WindowOperator:
        return WindowOperator(
            TumblingEventTimeWindows.of(Time.days(1)), sum_of("v"), key_selector="k",
            trigger=ContinuousEventTimeTrigger.of(Time.milliseconds(1)),
        )

    outputs = run_both(factory, [([("a", 3, 1), ("b", 7, 2)], 2), ([], 5_000)])
    assert [row[0] for row in outputs[1][:6]] == ["a", "a", "a", "a", "b", "a"]
    assert len(outputs[1]) == (5_000 - 4 + 1) + (5_000 - 8 + 1)
