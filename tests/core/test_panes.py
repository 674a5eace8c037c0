"""Panes for aligned sliding windows do exactly what the WindowOperator does.

Random scripts of batches (many keys, epoch-millisecond timestamps off the pane grid, out of
order and late, allowed lateness that fires windows on arrival) and watermark advances run
through :class:`PaneAggregation` and through a plain :class:`WindowOperator`; every batch's
main output (in order), late output, next timer and dropped count must agree, and so must the
state (contents and timer order, via ``to_operator()``) after a snapshot/restore at any point.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkwin import (
    EventTimeSessionWindows,
    OutputTag,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.assigners.stagger import WindowStagger
from flinkwin.functions.builtin import max_by, max_of, min_of, sum_of
from flinkwin.operator import WindowOperator
from flinkwin.operator.states.columnar import snapshot_format
from flinkwin.operator.states.panes import PaneAggregation, supports
from flinkwin.time import MIN_LONG

LATE = OutputTag("late")
AGGS = {"sum": sum_of, "min": min_of, "max": max_of}
#: 2024-01-01 00:00:00.123 UTC: realistic epoch milliseconds, off every window grid below.
T0 = 1_704_067_200_123
ASSIGNERS = [
    SlidingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(4)),  # panes of 2
    SlidingEventTimeWindows.of(Time.milliseconds(12), Time.milliseconds(3)),
    SlidingEventTimeWindows.of(Time.milliseconds(9), Time.milliseconds(6), Time.milliseconds(5)),
    SlidingEventTimeWindows.of(Time.milliseconds(6), Time.milliseconds(10)),  # gaps
    SlidingEventTimeWindows.of(Time.milliseconds(60), Time.milliseconds(1)),
    SlidingEventTimeWindows.of(Time.milliseconds(7), Time.milliseconds(7)),
]


def make_operator(assigner: Any, agg: str, lateness: int, late: bool) -> WindowOperator:
    return WindowOperator(
        assigner, AGGS[agg]("v"), key_selector="k", allowed_lateness=lateness,
        late_output_tag=LATE if late else None,
    )


def timer_view(op: WindowOperator) -> list[tuple[int, frozenset[Any], list[Any]]]:
    """Timers per timestamp; the order that decides output order is that of the windows'
    ``max_timestamp`` timers (cleanup timers emit nothing)."""
    return [
        (ts, frozenset(slots), [slot for slot in slots if slot[1].max_timestamp() == ts])
        for ts, slots in op.event_timers.buckets()
    ]


def rows_of(records: list[Any]) -> list[tuple[Any, ...]]:
    return [tuple(r) for r, _ in records]


def frame_rows(frame: pd.DataFrame | None) -> list[tuple[Any, ...]]:
    if frame is None:
        return []
    return [tuple(row) for row in frame.itertuples(index=False)]


batches_strategy = st.lists(
    st.tuples(
        st.lists(
            st.tuples(
                st.sampled_from([f"user_{i}" for i in range(12)]),
                st.integers(-20, 90),
                st.integers(-50, 99),
            ),
            max_size=40,
        ),
        st.integers(0, 30),  # watermark step after the batch
        st.booleans(),  # sort the batch by time (BATCH mode) or keep arrival order (STREAMING)
    ),
    min_size=1,
    max_size=8,
)


def run_script(
    batches: list[Any], assigner: Any, agg: str, lateness: int, late: bool, cut: int
) -> None:
    def factory() -> WindowOperator:
        return make_operator(assigner, agg, lateness, late)

    reference = factory()
    state = PaneAggregation(factory(), factory)
    watermark = T0 - 30
    for i, (elements, step, in_order) in enumerate(batches):
        if i == cut:
            restored = PaneAggregation(factory(), factory)
            restored.restore(state.snapshot())
            state = restored
        frame = pd.DataFrame(
            {"k": [k for k, _, _ in elements], "ts": [T0 + t for _, t, _ in elements],
             "n": np.arange(len(elements), dtype=np.int64),
             "v": np.array([v for _, _, v in elements], dtype=np.int64)}
        )
        if in_order:
            order = np.argsort(frame["ts"].to_numpy(), kind="stable")
            frame = frame.iloc[order].reset_index(drop=True)
        ts = frame["ts"].to_numpy(dtype=np.int64)
        state.advance_watermark(watermark)
        reference.advance_watermark(watermark)
        assert state.accepts(frame, ts, watermark)
        state.process_batch(frame, ts)
        reference.process_batch(frame, ts)
        watermark += step

        expected_main = rows_of(reference.drain_output())
        expected_late = rows_of(reference.drain_side_output(LATE))
        assert frame_rows(state.drain_main()) == expected_main, f"main, batch {i}"
        assert frame_rows(state.drain_late()) == expected_late, f"late, batch {i}"
        assert state.next_event_time_timer() == reference.next_event_time_timer(), i
        assert state.num_late_records_dropped == reference.num_late_records_dropped
    state.advance_watermark(watermark)
    reference.advance_watermark(watermark)
    assert frame_rows(state.drain_main()) == rows_of(reference.drain_output())
    assert state.next_event_time_timer() == reference.next_event_time_timer()
    converted = state.to_operator()
    assert converted.window_contents == reference.window_contents
    assert timer_view(converted) == timer_view(reference)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=batches_strategy,
    assigner=st.sampled_from(ASSIGNERS),
    agg=st.sampled_from(sorted(AGGS)),
    lateness=st.sampled_from([0, 5, 25]),
    late=st.booleans(),
    cut=st.integers(0, 8),
)
def test_panes_match_the_window_operator(
    batches: list[Any], assigner: Any, agg: str, lateness: int, late: bool, cut: int
) -> None:
    run_script(batches, assigner, agg, lateness, late, cut)


def test_many_keys_and_windows_match_the_window_operator() -> None:
    rng = np.random.default_rng(7)
    batches = []
    for b in range(6):
        n = 500
        elements = list(zip(
            [f"user_{k}" for k in rng.integers(0, 150, n)],
            (b * 40 + rng.integers(-45, 60, n)).tolist(),
            rng.integers(-1000, 1000, n).tolist(),
        ))
        batches.append((elements, 40, bool(b % 2)))
    for agg in AGGS:
        run_script(batches, ASSIGNERS[4], agg, 30, True, 3)


def test_a_window_fired_on_arrival_keeps_its_first_element() -> None:
    """Allowed lateness: a late element re-fires its window at once, with the window's first
    element's other fields and the aggregate over all of its elements."""
    assigner = SlidingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(5))

    def factory() -> WindowOperator:
        return make_operator(assigner, "sum", 40, False)

    state = PaneAggregation(factory(), factory)
    first = pd.DataFrame({"k": ["a", "a"], "ts": [T0, T0 + 1], "n": [1, 2], "v": [10, 20]})
    state.process_batch(first, first["ts"].to_numpy())
    state.advance_watermark(T0 + 30)
    fired = frame_rows(state.drain_main())
    assert [r[3] for r in fired] == [30, 30]
    late = pd.DataFrame({"k": ["a"], "ts": [T0 + 1], "n": [3], "v": [5]})
    state.process_batch(late, late["ts"].to_numpy())
    refired = frame_rows(state.drain_main())
    assert [(r[2], r[3]) for r in refired] == [(1, 35), (1, 35)]


def test_supported_configurations() -> None:
    sliding = SlidingEventTimeWindows.of(Time.seconds(60), Time.seconds(1))
    assert supports(make_operator(sliding, "sum", 0, False))
    assert supports(make_operator(sliding, "min", 1000, True))
    assert not supports(make_operator(TumblingEventTimeWindows.of(Time.seconds(1)), "sum", 0,
                                      False))
    assert not supports(WindowOperator(sliding, max_by("v"), key_selector="k"))
    assert not supports(WindowOperator(sliding, sum_of("v")))  # not keyed
    assert not supports(WindowOperator(sliding, sum_of("k"), key_selector="k"))
    staggered = SlidingEventTimeWindows.of(Time.seconds(6), Time.seconds(2))
    staggered.window_stagger = WindowStagger.RANDOM
    assert not supports(make_operator(staggered, "sum", 0, False))
    assert not supports(
        WindowOperator(EventTimeSessionWindows.with_gap(Time.seconds(1)), sum_of("v"),
                       key_selector="k")
    )


def test_batches_it_cannot_take_go_to_the_operator() -> None:
    def factory() -> WindowOperator:
        return make_operator(ASSIGNERS[0], "sum", 0, False)

    state = PaneAggregation(factory(), factory)
    floats = pd.DataFrame({"k": ["a"], "ts": [T0], "n": [1], "v": [1.5]})
    assert not state.accepts(floats, np.array([T0]), MIN_LONG)
    far = pd.DataFrame({"k": ["a"], "ts": [0], "n": [1], "v": [1]})
    assert not state.accepts(far, np.array([MIN_LONG + 1]), MIN_LONG)
    ints = pd.DataFrame({"k": ["a", "b"], "ts": [T0, T0 + 3], "n": [1, 2], "v": [4, 5]})
    state.process_batch(ints, ints["ts"].to_numpy())
    op = state.to_operator()
    reference = factory()
    reference.process_batch(ints, ints["ts"].to_numpy())
    assert op.window_contents == reference.window_contents
    assert timer_view(op) == timer_view(reference)


def test_snapshot_round_trip_and_format() -> None:
    def factory() -> WindowOperator:
        return make_operator(ASSIGNERS[0], "max", 0, False)

    state = PaneAggregation(factory(), factory)
    empty = PaneAggregation(factory(), factory)
    empty.restore(state.snapshot())
    assert empty.holds_nothing()
    frame = pd.DataFrame({"k": ["a", "b"], "ts": [T0, T0 + 3], "n": [1, 2], "v": [4, 5]})
    state.process_batch(frame, frame["ts"].to_numpy())
    data = state.snapshot()
    assert snapshot_format(data) == "panes-1"
    restored = PaneAggregation(factory(), factory)
    restored.restore(data)
    assert restored.next_event_time_timer() == state.next_event_time_timer()
    with pytest.raises(ValueError, match="not a pane"):
        restored.restore(factory().snapshot())
