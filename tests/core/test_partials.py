"""Partial aggregates (flinkwin.operator.states.partials): a batch's elements combined per input
partition and then folded by the window state give exactly what the element-by-element
WindowOperator gives: the same outputs in the same order, the same late-element counts, and
under the "error" overflow policy the same overflow errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from batch_scripts import batches
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.functions.builtin import max_of, min_of, sum_of
from flinkwin.longs import ERROR, WRAP, LongOverflowError
from flinkwin.operator import WindowOperator
from flinkwin.operator.states import partials as p
from flinkwin.operator.states.columnar import ColumnarAggregation
from flinkwin.time import MIN_LONG

AGGS = {"sum": sum_of, "min": min_of, "max": max_of}
ASSIGNERS = [
    TumblingEventTimeWindows.of(Time.milliseconds(10)),
    TumblingEventTimeWindows.of(Time.milliseconds(10), Time.milliseconds(3)),
]


def _operator(assigner: Any, agg: str, overflow: str) -> WindowOperator:
    return WindowOperator(assigner, AGGS[agg]("v"), key_selector="k", overflow=overflow)


def _spec(assigner: Any, agg: str, overflow: str) -> p.PartialSpec:
    return p.PartialSpec(("k",), (("", 0),), "v", agg, None, "ts", "ms", assigner, "_fw_seq",
                         bounds=agg == "sum" and overflow == ERROR)


def _partials(elements: list[Any], cuts: list[int], spec: p.PartialSpec) -> pd.DataFrame:
    """The batch cut into input partitions at ``cuts``, each combined, in arrival order."""
    frame = pd.DataFrame({
        "k": [k for k, _, _ in elements], "ts": np.array([t for _, t, _ in elements], np.int64),
        "v": np.array([v for _, _, v in elements], dtype=np.int64),
    })
    bounds = sorted({0, len(frame), *(c for c in cuts if 0 < c < len(frame))})
    parts = []
    for index, (lo, hi) in enumerate(zip(bounds, bounds[1:])):
        table = pa.Table.from_pandas(frame.iloc[lo:hi], preserve_index=False)
        sequence = (index << 33) + np.arange(hi - lo, dtype=np.int64)
        parts.append(p.combine(table, spec, sequence).to_pandas())
    if not parts:
        empty = np.empty(0, np.int64)
        return frame.assign(_fw_seq=empty, _fw_n=empty, _fw_hi=empty, _fw_lo=empty)
    return pd.concat(parts, ignore_index=True).sort_values("_fw_seq", kind="stable")


def _rows(state: Any) -> list[tuple[Any, ...]]:
    if isinstance(state, ColumnarAggregation):
        frame = state.drain_main()
        return [] if frame is None else [tuple(r) for r in frame.itertuples(index=False)]
    return [tuple(r) for r, _ in state.drain_output()]


def _run_both(script: Any, cuts: list[int], assigner: Any, agg: str, overflow: str) -> None:
    spec = _spec(assigner, agg, overflow)
    plain = _operator(assigner, agg, overflow)
    factory = lambda: _operator(assigner, agg, overflow)  # noqa: E731
    combined: Any = ColumnarAggregation(factory(), factory)
    watermark = MIN_LONG
    for elements, step in script:
        watermark = step if watermark == MIN_LONG else watermark + step
        rows = _partials(elements, cuts, spec)
        frame = rows[["k", "ts", "v"]].reset_index(drop=True)
        stamps = frame["ts"].to_numpy(dtype=np.int64)
        partial = p.PartialRows(
            rows["_fw_n"].to_numpy(),
            *((rows["_fw_hi"].to_numpy(), rows["_fw_lo"].to_numpy()) if spec.bounds
              else (None, None)),
        )
        assert partial.elements == len(elements)
        error = None
        try:
            combined = p.prepare(combined, frame, stamps, watermark, partial, ["k"], "v")
            combined.advance_watermark(watermark)
            p.process_batch(combined, frame, stamps, partial)
        except LongOverflowError as exc:
            error = exc
        plain.advance_watermark(watermark)
        raw = pd.DataFrame({
            "k": [k for k, _, _ in elements], "ts": [t for _, t, _ in elements],
            "v": np.array([v for _, _, v in elements], dtype=np.int64),
        })
        raw_stamps = raw["ts"].to_numpy(dtype=np.int64)
        if error is not None:
            with pytest.raises(LongOverflowError):
                plain.process_batch(raw, raw_stamps)
            return
        plain.process_batch(raw, raw_stamps)
        assert _rows(combined) == _rows(plain)
        assert combined.num_late_records_dropped == plain.num_late_records_dropped
    final = watermark + 100 if watermark != MIN_LONG else 100
    combined.advance_watermark(final)
    plain.advance_watermark(final)
    assert _rows(combined) == _rows(plain)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    script=batches(),
    cuts=st.lists(st.integers(0, 12), max_size=3),
    assigner=st.sampled_from(ASSIGNERS),
    agg=st.sampled_from(sorted(AGGS)),
    overflow=st.sampled_from([WRAP, ERROR]),
)
def test_combined_partitions_fold_as_elements(
    script: Any, cuts: list[int], assigner: Any, agg: str, overflow: str
) -> None:
    _run_both(script, cuts, assigner, agg, overflow)


BIG = 2**62


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    script=st.lists(st.tuples(
        st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 25),
                           st.sampled_from([BIG, -BIG, BIG // 2, -(BIG // 2), 1, -1])),
                 max_size=8),
        st.integers(0, 12)), min_size=1, max_size=5),
    cuts=st.lists(st.integers(0, 8), max_size=3),
    overflow=st.sampled_from([WRAP, ERROR]),
)
def test_combined_sums_near_the_long_limits(script: Any, cuts: list[int], overflow: str) -> None:
    """Running sums that leave the long range inside a partial: the same error under
    "error" (raised exactly when an element's running sum overflows), the same wrapped
    sums under "wrap"."""
    _run_both(script, cuts, ASSIGNERS[0], "sum", overflow)


def test_an_element_with_a_null_field_travels_alone() -> None:
    spec = _spec(ASSIGNERS[0], "sum", WRAP)
    table = pa.table({"k": ["a", "a", "a"], "ts": pa.array([1, 2, 3], pa.int64()),
                      "v": pa.array([1, None, 4], pa.int64())})
    out = p.combine(table, spec, np.arange(3, dtype=np.int64)).to_pydict()
    assert out["v"] == [5, None] and out[p.COUNT] == [2, 1] and out["_fw_seq"] == [0, 1]


def _reference(rows: list[tuple[Any, ...]], kind: str, size: int) -> list[tuple[Any, ...]]:
    """``combine`` row by row: an element with a null field (its value or its mask bit 0)
    or a null timestamp alone, else one row per (key, key null or its mask bit 1, window) at its
    first element, with the aggregate, the count and the running sums' highest and lowest."""
    fold = {"sum": lambda a, b: a + b, "min": min, "max": max}[kind]
    panes: dict[Any, list[Any]] = {}
    out: dict[int, list[Any]] = {}
    for i, (k, ts, v, mask) in enumerate(rows):
        if v is None or mask & 1 or ts is None:
            value = 0 if v is None else v
            out[i] = [k, ts, v, mask, i, 1, value, value]
            continue
        pane = (k, k is None or (mask >> 1) & 1, ts - ts % size)
        if pane not in panes:
            panes[pane] = out[i] = [k, ts, v, mask, i, 1, v, v]
            panes[pane].append(v)  # the running sum
            continue
        row = panes[pane]
        row[2], row[5] = fold(row[2], v), row[5] + 1
        row[8] += v
        row[6], row[7] = max(row[6], row[8]), min(row[7], row[8])
    return [tuple(out[i][:8]) for i in sorted(out)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(st.tuples(
        st.sampled_from(["a", "b", "c", None]), st.one_of(st.none(), st.integers(0, 40)),
        st.one_of(st.none(), st.integers(-9, 9)), st.integers(0, 3)), max_size=40),
    kind=st.sampled_from(sorted(AGGS)),
)
def test_combine_equals_a_row_by_row_fold_with_nulls(rows: list[Any], kind: str) -> None:
    """Null fields, null timestamps, null keys and masked nulls (bit 0 of ``m``: the
    field's, bit 1: the key's) in any order: the partials are exactly those of a row-by-row
    fold, in arrival order (nulls kept on the rows that travel alone)."""
    spec = p.PartialSpec(("k",), (("m", 1),), "v", kind, ("m", 0), "ts", "ms", ASSIGNERS[0],
                         "_fw_seq", bounds=kind == "sum")
    table = pa.table({"k": pa.array([r[0] for r in rows], pa.string()),
                      "ts": pa.array([r[1] for r in rows], pa.int64()),
                      "v": pa.array([r[2] for r in rows], pa.int64()),
                      "m": pa.array([r[3] for r in rows], pa.int64())})
    if not rows:
        return
    out = p.combine(table, spec, np.arange(len(rows), dtype=np.int64)).to_pydict()
    columns = ["k", "ts", "v", "m", "_fw_seq", p.COUNT, *((p.HIGH, p.LOW) if spec.bounds else ())]
    got = list(zip(*(out[c] for c in columns)))
    assert got == [r[:len(columns)] for r in _reference(rows, kind, 10)]
