"""The columnar state for built-in aggregations does exactly what the WindowOperator does.

Random scripts of batches (few keys, out-of-order and late timestamps; each batch in arrival
order, as the runtime hands it over in STREAMING mode, or sorted by event time as in BATCH mode)
and watermark advances run through :class:`ColumnarAggregation` (falling back to its
``to_operator()`` equivalent when a batch fires a window on arrival, and back with
``from_operator()`` after such a batch) and through a plain :class:`WindowOperator`; every
batch's main output (in order), late output, next timer and dropped count must agree, and so
must the state after a snapshot/restore at any point.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from batch_scripts import batch_frame, batches
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkwin import (
    CountTrigger,
    EventTimeSessionWindows,
    OutputTag,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.functions.builtin import max_by, max_of, min_of, sum_of
from flinkwin.operator import WindowOperator, states
from flinkwin.operator.states.columnar import ColumnarAggregation, snapshot_format, supports

LATE = OutputTag("late")
AGGS = {"sum": sum_of, "min": min_of, "max": max_of}


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


batches_strategy = batches()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=batches_strategy,
    assigner=st.sampled_from([
        TumblingEventTimeWindows.of(Time.milliseconds(10)),
        TumblingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(3)),
        SlidingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(4)),
    ]),
    agg=st.sampled_from(sorted(AGGS)),
    lateness=st.sampled_from([0, 7]),
    late=st.booleans(),
    cut=st.integers(0, 8),
    back=st.booleans(),
    sort=st.booleans(),  # batches in event-time order (BATCH mode) or in arrival order
)
def test_columnar_state_matches_the_window_operator(
    batches: list[Any], assigner: Any, agg: str, lateness: int, late: bool, cut: int,
    back: bool,
    sort: bool,
) -> None:
    def factory() -> WindowOperator:
        return make_operator(assigner, agg, lateness, late)

    reference = factory()
    state: Any = ColumnarAggregation(factory(), factory)
    watermark = 0
    for i, (elements, step) in enumerate(batches):
        if i == cut and isinstance(state, ColumnarAggregation):
            restored = ColumnarAggregation(factory(), factory)
            restored.restore(state.snapshot())
            state = restored
        frame, ts = batch_frame(elements, sort)
        if isinstance(state, ColumnarAggregation) and not state.accepts(frame, ts, watermark):
            state = state.to_operator()
        state.process_batch(frame, ts)
        reference.process_batch(frame, ts)
        watermark += step
        state.advance_watermark(watermark)
        reference.advance_watermark(watermark)

        expected_main = rows_of(reference.drain_output())
        expected_late = rows_of(reference.drain_side_output(LATE))
        if isinstance(state, ColumnarAggregation):
            assert frame_rows(state.drain_main()) == expected_main, f"main, batch {i}"
            assert frame_rows(state.drain_late()) == expected_late, f"late, batch {i}"
        else:
            assert rows_of(state.drain_output()) == expected_main, f"main, batch {i}"
            assert rows_of(state.drain_side_output(LATE)) == expected_late
            if back:
                state = ColumnarAggregation.from_operator(state, factory, ["k", "ts", "v"])
                assert state is not None
        assert state.next_event_time_timer() == reference.next_event_time_timer()
        assert state.num_late_records_dropped == reference.num_late_records_dropped
    if isinstance(state, ColumnarAggregation):
        converted = state.to_operator()
        assert converted.window_contents == reference.window_contents
        assert timer_view(converted) == timer_view(reference)


def test_from_operator_refuses_other_state_shapes() -> None:
    def factory() -> WindowOperator:
        return make_operator(TumblingEventTimeWindows.of(Time.seconds(10)), "sum", 0, False)

    op = factory()
    op.process_element({"k": "a", "ts": 1, "v": 1}, 1)
    assert ColumnarAggregation.from_operator(op, factory, ["k", "ts", "v"]) is not None
    assert ColumnarAggregation.from_operator(op, factory, ["k", "v"]) is None  # other columns
    op.process_element({"k": "b", "ts": 2, "v": None}, 2)  # a null aggregate field
    assert ColumnarAggregation.from_operator(op, factory, ["k", "ts", "v"]) is None


def test_supported_configurations() -> None:
    tumbling = TumblingEventTimeWindows.of(Time.seconds(1))
    assert supports(make_operator(tumbling, "sum", 0, False))
    assert not supports(WindowOperator(tumbling, max_by("v"), key_selector="k"))
    assert not supports(WindowOperator(tumbling, sum_of("v")))  # not keyed
    assert not supports(WindowOperator(tumbling, sum_of("k"), key_selector="k"))
    assert not supports(
        WindowOperator(tumbling, sum_of("v"), key_selector="k", trigger=CountTrigger.of(2))
    )
    assert not supports(
        WindowOperator(EventTimeSessionWindows.with_gap(Time.seconds(1)), sum_of("v"),
                       key_selector="k")
    )


def test_a_float_column_is_not_taken() -> None:
    op = make_operator(TumblingEventTimeWindows.of(Time.seconds(1)), "sum", 0, False)
    columnar = ColumnarAggregation(op, lambda: op)
    frame = pd.DataFrame({"k": ["a"], "ts": [1], "v": [1.5]})
    assert not columnar.accepts(frame, np.array([1]), 0)


def test_snapshot_round_trip_keeps_nullable_and_timestamp_columns() -> None:
    def factory() -> WindowOperator:
        return make_operator(TumblingEventTimeWindows.of(Time.seconds(10)), "sum", 0, False)

    state = ColumnarAggregation(factory(), factory)
    frame = pd.DataFrame({
        "k": ["a", "b"], "v": np.array([1, 2], dtype=np.int64),
        "extra": pd.Series([None, 7], dtype=object),
        "at": pd.to_datetime(["2024-01-01 00:00:00.000001", "2024-01-01 00:00:01.000000"]),
    })
    state.process_batch(frame, np.array([1000, 2000], dtype=np.int64))
    data = state.snapshot()
    assert snapshot_format(data) == "columnar-1"
    restored = ColumnarAggregation(factory(), factory)
    restored.restore(data)
    restored.advance_watermark(20_000)
    out = restored.drain_main()
    assert out is not None
    assert out["extra"].tolist() == [None, 7]
    assert out["at"].tolist() == frame["at"].tolist()


def test_timestamps_after_2262_survive_snapshots_and_the_operator_round_trip() -> None:
    """Timestamp columns stay microseconds in every frame state: pandas' nanoseconds stop in
    2262, and a stream with later timestamps must not fail when its state is restored."""
    def factory() -> WindowOperator:
        return make_operator(TumblingEventTimeWindows.of(Time.seconds(10)), "sum", 0, False)

    micros = np.array(["2500-01-01T00:00:00.000001", "9000-06-01T12:00"], dtype="datetime64[us]")
    far = pd.Series(pd.DatetimeIndex(micros).tz_localize("UTC"))
    frame = pd.DataFrame({"k": ["a", "b"], "v": np.array([1, 2], dtype=np.int64), "at": far})
    def sliding() -> WindowOperator:
        assigner = SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))
        return make_operator(assigner, "sum", 0, False)

    for kind, build in ((states.COLUMNAR, factory), (states.PANES, sliding)):
        state = states.new_state(kind, build)
        state.process_batch(frame, np.array([1000, 2000], dtype=np.int64))
        restored = states.restore_state(state.snapshot(), build)
        restored.advance_watermark(20_000)
        out = restored.drain_main()
        assert out is not None and set(out["at"].tolist()) == set(far.tolist()), kind
    # an operator's records back to the columnar form, then a snapshot
    op = factory()
    op.process_batch(frame, np.array([1000, 2000], dtype=np.int64))
    columnar = ColumnarAggregation.from_operator(op, factory, ["k", "v", "at"])
    assert columnar is not None
    restored = states.restore_state(columnar.snapshot(), factory)
    restored.advance_watermark(20_000)
    out = restored.drain_main()
    assert out is not None
    assert out["at"].tolist() == far.tolist()


def test_snapshot_of_an_empty_state() -> None:
    def factory() -> WindowOperator:
        return make_operator(TumblingEventTimeWindows.of(Time.seconds(10)), "sum", 0, False)

    state = ColumnarAggregation(factory(), factory)
    restored = ColumnarAggregation(factory(), factory)
    restored.restore(state.snapshot())
    assert restored.holds_nothing()
    with pytest.raises(ValueError, match="not a columnar"):
        restored.restore(factory().snapshot())
