"""A columnar state kept between micro-batches matches held panes by its lookup and converts only
new rows to Arrow (flinkwin/operator/states/pane_lookup.py, ``ArrowColumns``): it must give
exactly what the same state restored from its snapshot every batch gives, and what the state
without lookups (panes coded together with the batch's, as before) gives: the same outputs, the
same key and window counts, byte-identical snapshots; for string, integer and float keys (NaN
one key, ``0.0`` and ``-0.0`` two, as Java's ``Double.equals``), keys of two fields, key
columns whose kind has no lookup, and batches that fire and drop panes."""

from __future__ import annotations

import math
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkwin import (
    ContinuousEventTimeTrigger,
    OutputTag,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
)
from flinkwin.functions.builtin import max_of, sum_of
from flinkwin.operator import WindowOperator
from flinkwin.operator.states import columnar
from flinkwin.operator.states.columnar import ColumnarAggregation
from flinkwin.operator.states.continuous import ContinuousAggregation
from flinkwin.operator.states.pane_lookup import PaneLookup, identities

LATE = OutputTag("late")
KEY_POOLS: dict[str, list[Any]] = {
    "str": ["a", "b", "ü", ""],
    "int": [0, 1, -1, 2**62],
    "float": [0.0, -0.0, math.nan, 1.5],
    "object": [b"x", b"y"],  # bytes: a kind without a lookup (coded as before)
}


def _frame(kind: str, elements: list[tuple[int, int, int, int]]) -> pd.DataFrame:
    pool = KEY_POOLS[kind]
    keys = [pool[k % len(pool)] for k, _, _, _ in elements]
    column: Any = np.array(keys, dtype=np.float64) if kind == "float" else (
        np.array(keys, dtype=np.int64) if kind == "int" else np.array(keys, dtype=object)
    )
    return pd.DataFrame({
        "k": column, "k2": np.array([k2 for _, k2, _, _ in elements], dtype=np.int64),
        "ts": np.array([t for _, _, t, _ in elements], dtype=np.int64),
        "v": np.array([v for _, _, _, v in elements], dtype=np.int64),
        "note": np.array([f"n{i}" for i in range(len(elements))], dtype=object),
    })


def _run(
    kind: str, two_fields: bool, assigner: Any, agg: Any, lateness: int, continuous: bool,
    script: list[Any], restore_every_batch: bool,
) -> list[tuple[Any, ...]]:
    """Per batch: main rows, late rows, (keys, windows) held, next timer and the snapshot."""
    keys = "k,k2" if two_fields else "k"

    def factory() -> WindowOperator:
        return WindowOperator(
            assigner, agg("v"), key_selector=tuple(keys.split(",")) if two_fields else keys,
            allowed_lateness=lateness, late_output_tag=LATE,
            trigger=ContinuousEventTimeTrigger.of(Time.milliseconds(4)) if continuous else None,
        )

    klass = ContinuousAggregation if continuous else ColumnarAggregation
    state: Any = klass(factory(), factory)
    watermark, seen = -1, []
    for elements, step in script:
        if restore_every_batch:
            restored = klass(factory(), factory)
            restored.restore(state.snapshot())
            state = restored
        frame = _frame(kind, elements)
        ts = frame["ts"].to_numpy()
        if not state.accepts(frame, ts, watermark):
            return seen  # (the operator's batches are another state's test)
        state.process_batch(frame, ts)
        watermark += step
        state.advance_watermark(watermark)
        main, late = state.drain_main(), state.drain_late()
        seen.append((  # (repr: NaN equals NaN there, -0.0 is not 0.0)
            None if main is None else repr(main.to_dict("list")),
            None if late is None else repr(late.to_dict("list")),
            state.state_size(), state.next_event_time_timer(), state.snapshot(),
        ))
    return seen


script_strategy = st.lists(
    st.tuples(
        st.lists(
            st.tuples(st.integers(0, 3), st.integers(0, 1), st.integers(0, 60),
                      st.integers(-5, 9)),
            max_size=10,
        ),
        st.integers(0, 20),
    ),
    min_size=1, max_size=7,
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    script=script_strategy,
    kind=st.sampled_from(sorted(KEY_POOLS)),
    two_fields=st.booleans(),
    assigner=st.sampled_from([
        TumblingEventTimeWindows.of(Time.milliseconds(10)),
        SlidingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(5)),
    ]),
    agg=st.sampled_from([sum_of, max_of]),
    lateness=st.sampled_from([0, 7]),
    continuous=st.booleans(),
)
def test_a_kept_state_gives_what_a_restored_state_and_one_without_lookups_give(
    script: list[Any], kind: str, two_fields: bool, assigner: Any, agg: Any, lateness: int,
    continuous: bool,
) -> None:
    if continuous and not isinstance(assigner, TumblingEventTimeWindows):
        continuous = False
    args = (kind, two_fields, assigner, agg, lateness, continuous, script)
    with mock.patch.object(columnar, "_LOOKUP_FROM", 0):  # the lookup for every batch
        kept = _run(*args, restore_every_batch=False)
        restored = _run(*args, restore_every_batch=True)
    with mock.patch.object(PaneLookup, "of", classmethod(lambda cls, *a: None)):
        coded = _run(*args, restore_every_batch=False)
    assert kept == restored
    # without lookups the snapshots are the same; the outputs and counts too
    assert kept == coded


def test_identities_follow_java_equality_for_floats_and_take_only_exact_kinds() -> None:
    floats = identities([np.array([0.0, -0.0, math.nan, -math.nan])])
    assert floats is not None
    assert floats[0] != floats[1] and floats[2] == floats[3]
    assert identities([np.array(["a", "b"], dtype=object)]) == ["a", "b"]
    assert identities([np.array(["a", None], dtype=object)]) is None
    assert identities([np.array([1, "1"], dtype=object)]) is None
    assert identities([np.array(["2024-01-01"], dtype="datetime64[ns]")]) is None
    assert identities([np.array([1, 2]), np.array(["x", "y"], dtype=object)]) == [
        (1, "x"), (2, "y")]


def test_a_trickle_batch_over_held_panes_is_matched_by_the_lookup_not_by_coding_them_all(
) -> None:
    """The held panes are not coded again (``_codes`` over the state) once the lookup is built:
    a batch's work follows its own panes."""
    def factory() -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.days(1)), sum_of("v"),
                              key_selector="k")

    state = ColumnarAggregation(factory(), factory)
    keys = np.array([f"u{i}" for i in range(1000)], dtype=object)
    load = pd.DataFrame({"k": keys, "ts": np.arange(1000, dtype=np.int64),
                         "v": np.ones(1000, dtype=np.int64)})
    state.process_batch(load, load["ts"].to_numpy())
    state.process_batch(load.iloc[:10], load["ts"].to_numpy()[:10])  # builds the lookup
    real = columnar._codes

    def batch_only(columns: list[np.ndarray]) -> np.ndarray:
        assert len(columns[0]) <= 10, "coded the held panes"
        return real(columns)

    with mock.patch.object(columnar, "_codes", side_effect=batch_only):
        trickle = load.iloc[5:15].reset_index(drop=True)
        state.process_batch(trickle, trickle["ts"].to_numpy())
        assert state.state_size() == (1000, 1000)
    panes = state.panes
    assert panes is not None
    sums = dict(zip(panes["k"], panes["v"]))
    assert [sums[f"u{i}"] for i in (0, 4, 5, 9, 10, 14, 15)] == [2, 2, 3, 3, 2, 2, 1]


@pytest.mark.parametrize("drop", [False, True])
def test_a_snapshot_after_firing_and_dropping_panes_equals_a_whole_conversion(
    drop: bool,
) -> None:
    def factory() -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)),
                              sum_of("v"), key_selector="k", allowed_lateness=0 if drop else 50)

    state = ColumnarAggregation(factory(), factory)
    for step in range(6):
        ts = np.arange(step * 7, step * 7 + 12, dtype=np.int64)
        frame = pd.DataFrame({"k": np.array([f"k{t % 5}" for t in ts], dtype=object),
                              "ts": ts, "v": np.ones(len(ts), dtype=np.int64)})
        state.process_batch(frame, ts)
        state.snapshot()  # keeps the Arrow columns
        state.advance_watermark(step * 7 + 3)
        state.drain_main()
        whole = ColumnarAggregation(factory(), factory)
        whole.restore(state.snapshot())
        fresh = ColumnarAggregation(factory(), factory)
        fresh.restore(whole.snapshot())
        assert state.snapshot() == whole.snapshot() == fresh.snapshot()
