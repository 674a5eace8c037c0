"""The columnar session state does exactly what the WindowOperator does.

Random scripts of batches (few keys, out-of-order, bridging and late timestamps, batches in
arrival order as the runtime hands them over in STREAMING mode, or sorted by event time as in
BATCH mode) and watermark advances run
through :class:`SessionAggregation` (falling back to its ``to_operator()`` equivalent when a
batch would fire a session on arrival, and back with ``from_operator()`` after such a batch) and
through a plain :class:`WindowOperator`; every batch's main output (in order), late output, next
timer and dropped count must agree, and so must the state (contents per surviving state window,
merging-window sets, timers) after a snapshot/restore at any point.
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
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.functions.builtin import max_by, max_of, min_of, sum_of
from flinkwin.operator import WindowOperator
from flinkwin.operator.states.columnar import snapshot_format
from flinkwin.operator.states.sessions import SessionAggregation, supports

LATE = OutputTag("late")
AGGS = {"sum": sum_of, "min": min_of, "max": max_of}
COLUMNS = ["k", "ts", "v", "tag"]


def make_operator(gap: int, agg: str, lateness: int, late: bool) -> WindowOperator:
    return WindowOperator(
        EventTimeSessionWindows.with_gap(Time.milliseconds(gap)), AGGS[agg]("v"),
        key_selector="k", allowed_lateness=lateness, late_output_tag=LATE if late else None,
    )


def timer_view(op: WindowOperator) -> list[tuple[int, frozenset[Any], list[Any]]]:
    """Timers per timestamp; the order that decides output order is that of the windows'
    ``max_timestamp`` timers (cleanup timers emit nothing)."""
    return [
        (ts, frozenset(slots), [slot for slot in slots if slot[1].max_timestamp() == ts])
        for ts, slots in op.event_timers.buckets()
    ]


def merging_view(op: WindowOperator) -> dict[Any, dict[Any, Any]]:
    return {key: dict(pairs) for key, pairs in op.merging_state.items()}


def rows_of(records: list[Any]) -> list[tuple[Any, ...]]:
    return [tuple(r) for r, _ in records]


def frame_rows(frame: pd.DataFrame | None) -> list[tuple[Any, ...]]:
    if frame is None:
        return []
    return [tuple(row) for row in frame.itertuples(index=False)]


batches_strategy = batches(max_ts=80, max_elements=14)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=batches_strategy,
    gap=st.sampled_from([1, 4, 10]),
    agg=st.sampled_from(sorted(AGGS)),
    lateness=st.sampled_from([0, 7]),
    late=st.booleans(),
    cut=st.integers(0, 8),
    back=st.booleans(),
    sort=st.booleans(),
)
def test_session_state_matches_the_window_operator(
    batches: list[Any], gap: int, agg: str, lateness: int, late: bool, cut: int, back: bool,
    sort: bool,
) -> None:
    def factory() -> WindowOperator:
        return make_operator(gap, agg, lateness, late)

    reference = factory()
    state: Any = SessionAggregation(factory(), factory)
    watermark = 0
    for i, (elements, step) in enumerate(batches):
        if i == cut and isinstance(state, SessionAggregation):
            restored = SessionAggregation(factory(), factory)
            restored.restore(state.snapshot())
            state = restored
        frame, ts = batch_frame(elements, sort, tags=True)
        if isinstance(state, SessionAggregation) and not state.accepts(frame, ts, watermark):
            state = state.to_operator()
        state.process_batch(frame, ts)
        reference.process_batch(frame, ts)
        watermark += step
        state.advance_watermark(watermark)
        reference.advance_watermark(watermark)

        expected_main = rows_of(reference.drain_output())
        expected_late = rows_of(reference.drain_side_output(LATE))
        if isinstance(state, SessionAggregation):
            assert frame_rows(state.drain_main()) == expected_main, f"main, batch {i}"
            assert frame_rows(state.drain_late()) == expected_late, f"late, batch {i}"
            converted = state.to_operator()
        else:
            assert rows_of(state.drain_output()) == expected_main, f"main, batch {i}"
            assert rows_of(state.drain_side_output(LATE)) == expected_late
            converted = state
            if back:
                state = SessionAggregation.from_operator(state, factory, COLUMNS)
                assert state is not None
        assert converted.window_contents == reference.window_contents, f"contents, batch {i}"
        assert merging_view(converted) == merging_view(reference), f"sessions, batch {i}"
        assert timer_view(converted) == timer_view(reference), f"timers, batch {i}"
        assert state.next_event_time_timer() == reference.next_event_time_timer()
        assert state.num_late_records_dropped == reference.num_late_records_dropped


def test_a_bridging_element_keeps_flinks_state_window() -> None:
    """An element joining two sessions keeps the state window Flink's MergingWindowSet keeps
    (the first merged window in Java ``HashSet`` order), whose first element's fields survive."""
    def factory() -> WindowOperator:
        return make_operator(10, "sum", 0, False)

    reference = factory()
    state = SessionAggregation(factory(), factory)
    for elements in ([("a", 0, 1), ("a", 20, 2)], [("a", 10, 4)]):
        frame, ts = batch_frame(elements, tags=True)
        frame["tag"] = [f"t{t}" for t in ts]
        assert state.accepts(frame, ts, 0)
        state.process_batch(frame, ts)
        reference.process_batch(frame, ts)
    assert merging_view(state.to_operator()) == merging_view(reference)
    assert state.to_operator().window_contents == reference.window_contents
    state.advance_watermark(100)
    reference.advance_watermark(100)
    expected = rows_of(reference.drain_output())
    assert frame_rows(state.drain_main()) == expected
    assert len(expected) == 1 and expected[0][2] == 7


def test_out_of_order_elements_touching_the_session_merge_without_replay(
    monkeypatch: Any,
) -> None:
    """Elements arriving out of order that each touch the session grown so far (held or new)
    are merged with array operations, with the operator's results: root, timers, outputs."""
    def factory() -> WindowOperator:
        return make_operator(10, "sum", 0, False)

    def no_replay(*args: Any) -> Any:
        raise AssertionError("replayed")

    reference = factory()
    state = SessionAggregation(factory(), factory)
    monkeypatch.setattr(state, "_replay", no_replay)
    scripts = (
        [("a", 30, 1), ("b", 5, 2), ("a", 25, 3), ("a", 41, 4), ("b", 1, 5), ("a", 18, 6)],
        [("a", 12, 7), ("b", 14, 8), ("a", 49, 9), ("a", 45, 10), ("b", 0, 11)],
    )
    for elements in scripts:
        frame, ts = batch_frame(elements, tags=True)
        frame["tag"] = [f"t{t}" for t in ts]
        assert state.accepts(frame, ts, 0)
        state.process_batch(frame, ts)
        reference.process_batch(frame, ts)
        operator = state.to_operator()
        assert merging_view(operator) == merging_view(reference)
        assert operator.window_contents == reference.window_contents
        assert timer_view(operator) == timer_view(reference)
    state.advance_watermark(100)
    reference.advance_watermark(100)
    expected = rows_of(reference.drain_output())
    assert frame_rows(state.drain_main()) == expected
    assert sorted(row[2] for row in expected) == [17, 23, 26]


def test_supported_configurations() -> None:
    sessions = EventTimeSessionWindows.with_gap(Time.seconds(1))
    assert supports(make_operator(1000, "sum", 0, False))
    assert not supports(WindowOperator(sessions, max_by("v"), key_selector="k"))
    assert not supports(WindowOperator(sessions, sum_of("v")))  # not keyed
    assert not supports(
        WindowOperator(sessions, sum_of("v"), key_selector="k", trigger=CountTrigger.of(2))
    )
    assert not supports(WindowOperator(
        EventTimeSessionWindows.with_dynamic_gap(lambda e: 5), sum_of("v"), key_selector="k"
    ))
    assert not supports(
        WindowOperator(TumblingEventTimeWindows.of(Time.seconds(1)), sum_of("v"),
                       key_selector="k")
    )


def test_batches_it_does_not_take() -> None:
    op = make_operator(10, "sum", 5, False)
    state = SessionAggregation(op, lambda: op)
    floats = pd.DataFrame({"k": ["a"], "ts": [1], "v": [1.5], "tag": ["x"]})
    assert not state.accepts(floats, np.array([1]), 0)
    frame, ts = batch_frame([("a", 100, 1)], tags=True)
    assert state.accepts(frame, ts, 0)
    # within the allowed lateness: Flink fires the session on arrival
    assert not state.accepts(frame, ts, 112)
    state.process_batch(frame, ts)
    state.advance_watermark(110)  # fired, kept until 114
    touching, ts = batch_frame([("a", 110, 1)], tags=True)
    assert not state.accepts(touching, ts, 110)
    apart, ts = batch_frame([("a", 125, 1)], tags=True)
    assert state.accepts(apart, ts, 110)


def test_snapshot_round_trip() -> None:
    def factory() -> WindowOperator:
        return make_operator(10, "max", 0, False)

    state = SessionAggregation(factory(), factory)
    frame, ts = batch_frame([("a", 1, 3), ("b", 2, 5), ("a", 8, 4)], tags=True)
    state.process_batch(frame, ts)
    data = state.snapshot()
    assert snapshot_format(data) == "sessions-1"
    restored = SessionAggregation(factory(), factory)
    restored.restore(data)
    restored.advance_watermark(100)
    assert frame_rows(restored.drain_main()) == [("b", 2, 5, "e1"), ("a", 1, 4, "e0")]


def test_touching_sessions_far_apart_use_joins() -> None:
    """Timestamps too far apart for one int64 per (key, time) take the join path, with the
    same pairs (every session an element window overlaps or touches)."""
    from flinkwin.operator.states.sessions import _touching

    def pairs(shift: int) -> list[tuple[int, int]]:
        ekey = np.array([0, 0, 1, 1], dtype=np.int64)
        estart = np.array([5, 40, 0, 100], dtype=np.int64) + ekey * shift
        skey = np.array([0, 0, 0, 1], dtype=np.int64)
        sstart = np.array([0, 15, 50, 110], dtype=np.int64) + skey * shift
        send = np.array([10, 20, 60, 120], dtype=np.int64) + skey * shift
        e, s = _touching(ekey, estart, estart + 10, skey, sstart, send)
        return sorted(zip(e.tolist(), s.tolist()))

    assert pairs(0) == pairs(2**61) == [(0, 0), (0, 1), (1, 2), (3, 3)]


@given(
    runs=st.lists(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=6),
                  min_size=1, max_size=6),
    narrow=st.booleans(),
)
def test_running_min_and_max_per_run_match_pandas_groupby(
    runs: list[list[int]], narrow: bool
) -> None:
    """The one-pass running min/max per run (and its fallback for spans no lift fits) is
    pandas' grouped ``cummin``/``cummax``."""
    from flinkwin.operator.states.sessions import _running

    if narrow:  # spans the lifted pass takes
        runs = [[v % 1000 - 500 for v in run] for run in runs]
    values = np.array([v for run in runs for v in run], dtype=np.int64)
    first = np.zeros(len(values), dtype=bool)
    first[np.cumsum([0, *map(len, runs[:-1])])] = True
    group = np.repeat(np.arange(len(runs)), [len(run) for run in runs])
    grouped = pd.Series(values).groupby(group)
    assert _running(np.maximum, values, first).tolist() == grouped.cummax().tolist()
    assert _running(np.minimum, values, first).tolist() == grouped.cummin().tolist()


def test_gathered_columns_have_the_values_and_dtype_pandas_concat_gives() -> None:
    """A session column built from held rows and batch rows equals taking the rows from each
    and concatenating them with pandas (values and dtype), for plain numpy, extension and
    mismatched dtypes."""
    from flinkwin.operator.states.sessions import _gather

    stamps = pd.Series(pd.to_datetime([1, 2, 3], unit="s", utc=True))
    pairs = [
        (pd.Series(["a", None, "c"]), pd.Series(["d", "e"])),
        (pd.Series([1, 2, 3]), pd.Series([4, 5])),
        (pd.Series([1, 2, 3]), pd.Series([4.5, np.nan])),
        (pd.Series(pd.array([1, None, 3], dtype="Int64")), pd.Series(pd.array([None, 5]))),
        (stamps, stamps.iloc[:2].reset_index(drop=True)),
        (pd.Series([1, 2, 3]), pd.Series(["x", "y"])),
    ]
    for old, new in pairs:
        for source in ([4, 0, 3, 2], [2, 0], [3, 4], []):
            at = np.array(source, dtype=np.int64)
            pieces = [old.iloc[[i]] if i < 3 else new.iloc[[i - 3]] for i in source]
            expected = pd.concat(pieces, ignore_index=True) if pieces else old.iloc[:0]
            got = pd.Series(_gather(old, new, at))
            pd.testing.assert_series_equal(got, expected.reset_index(drop=True))


@given(
    pairs=st.lists(st.tuples(st.integers(0, 5), st.integers(-(2**63), 2**63 - 1)), max_size=12),
    narrow=st.booleans(),
)
def test_key_order_is_lexsorts(pairs: list[tuple[int, int]], narrow: bool) -> None:
    """(key, value) order with ties in position order, as ``np.lexsort``, also for values
    too far apart for one int64 per pair."""
    from flinkwin.operator.states.sessions import _by_key

    if narrow:
        pairs = [(k, v % 7) for k, v in pairs]
    key = np.array([k for k, _ in pairs], dtype=np.int64)
    value = np.array([v for _, v in pairs], dtype=np.int64)
    assert _by_key(key, value).tolist() == np.lexsort((value, key)).tolist()


@pytest.mark.parametrize("span", [1, 7, 2**20, 2**32, 2**32 + 1, 2**40, 2**63])
@pytest.mark.parametrize("keys", [1, 600, 2**16 + 5])
def test_key_order_is_lexsorts_for_many_pairs(span: int, keys: int) -> None:
    """Batches large enough for the radix passes (values spanning up to ``2**32``), the one
    int64 sort and ``np.lexsort`` itself: the same order, ties in position order."""
    from flinkwin.operator.states.sessions import _by_key

    rng = np.random.default_rng(span % 1009 + keys)
    n = 3_000
    key = rng.integers(0, keys, n).astype(np.int64)
    if span > 2**62:  # the whole long range
        value = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True)
    else:
        value = 1_700_000_000_000 + rng.integers(0, span, n, dtype=np.int64)
    value[:50] = value[50:100]  # ties within and across keys
    key[:25] = key[50:75]
    assert _by_key(key, value).tolist() == np.lexsort((value, key)).tolist()
