"""Partial aggregates: a built-in window aggregation's elements combined before the shuffle.

For a keyed ``sum``/``min``/``max`` of an integer field over tumbling event-time windows with
the default trigger, no evictor, no allowed lateness and no late-data side output, the window
state of a (key, window) pane is the pane's first element with the field replaced by the
aggregate of all its elements (Flink's built-in aggregations), and whether an element is late
depends only on its window (every element of a micro-batch sees the same watermark). So the
elements of one pane that arrive in one input partition can be folded into one *partial* row
before the shuffle, without changing any result:

- the partial is the pane's first element of the partition (arrival order) with the field
  replaced by the partition's aggregate, and that element's arrival sequence; the window stage
  folds a pane's partials in arrival order, which is the elements' order (a partition's
  elements precede the next partition's), so the first element and the aggregate are Flink's;
- ``_fw_n`` counts the elements a partial stands for (``numRecordsIn`` and
  ``numLateRecordsDropped`` count elements, not partials);
- under the ``"error"`` overflow policy a sum is checked exactly as the element-by-element
  fold checks it: a partial also carries the highest and lowest running sum within it
  (``_fw_hi``, ``_fw_lo``, relative to the pane's value before it), so the window stage raises
  :class:`~flinkwin.longs.LongOverflowError` exactly when one of the elements' running sums
  leaves the long range (:func:`check_partial_sums`).

An element whose field or timestamp is null is not combined: it travels alone (``_fw_n`` 1),
and the window stage handles it as it handles any element (a null field fails as in Flink once
it meets another element). Within a partition whose sum's magnitudes could reach ``2**62``
under the ``"error"`` policy, nothing is combined (the bounds could not be computed exactly).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from flinkwin.longs import ERROR, LongOverflowError, located, to_long
from flinkwin.operator.batch_windows import assign_event_windows
from flinkwin.operator.ordering import stable_order
from flinkwin.time import MAX_LONG, MIN_LONG
from flinkwin.windows import TimeWindow

#: Elements a row stands for.
COUNT = "_fw_n"
#: Highest and lowest running sum within a partial, relative to the value before it.
HIGH, LOW = "_fw_hi", "_fw_lo"
#: Ids below this are sorted by radix (flinkwin.operator.ordering).
_RADIX_BOUND = 1 << 32
#: Partition magnitudes up to which partial sums and their bounds are computed exactly.
_EXACT_MAGNITUDE = float(2**62)
_KINDS = ("sum", "min", "max")


@dataclass(frozen=True)
class PartialSpec:
    """How to combine a partition's rows (column names as they travel to the window stage)."""

    #: the key columns, and for a nullable key column the (mask column, bit) of its nulls
    key_columns: tuple[str, ...]
    key_masks: tuple[tuple[str, int], ...]
    #: the aggregated field, its kind (sum, min, max) and its nulls' (mask column, bit)
    field: str
    kind: str
    field_mask: tuple[str, int] | None
    #: the event-time column and its unit ("ms" or "us")
    time_column: str
    time_unit: str
    #: the window assigner (tumbling event time)
    assigner: Any
    #: the arrival-sequence column to write
    sequence_column: str
    #: carry the running-sum bounds (a sum under the "error" overflow policy)
    bounds: bool

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {self.kind!r}")

    @property
    def added_columns(self) -> tuple[str, ...]:
        """The columns :func:`combine` appends, in order."""
        return (self.sequence_column, COUNT, *((HIGH, LOW) if self.bounds else ()))


def _nulls(table: pa.Table, column: str, mask: tuple[str, int] | None) -> np.ndarray:
    values = table.column(column)
    nulls = np.asarray(values.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    if mask is not None:
        bits = table.column(mask[0]).fill_null(0).to_numpy(zero_copy_only=False)
        nulls |= ((np.asarray(bits, dtype=np.int64) >> mask[1]) & 1).astype(bool)
    return nulls


def _codes(column: pa.ChunkedArray) -> np.ndarray:
    """Dense codes of a column's values (nulls one value)."""
    encoded = pc.dictionary_encode(column, null_encoding="encode").combine_chunks()
    return np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)


def _group_ids(columns: Sequence[np.ndarray]) -> tuple[np.ndarray, int]:
    """One id per distinct combination of the code columns (non-negative codes), and a bound
    above every id: mixed radix while the ids stay below ``2**32``, else renumbered densely."""
    ids = np.zeros(len(columns[0]), dtype=np.int64)
    bound = 1
    for codes in columns:
        width = int(codes.max()) + 1 if len(codes) else 1
        ids = ids * width + codes
        bound *= width
        if bound > _RADIX_BOUND:
            ids, uniques = pd.factorize(ids)
            ids, bound = ids.astype(np.int64, copy=False), len(uniques)
    return ids, bound


def _window_codes(starts: np.ndarray, size: int) -> np.ndarray:
    """Non-negative codes of tumbling windows' starts (one per window)."""
    if not len(starts):
        return starts
    codes = (starts - starts.min()) // size
    if int(codes.max()) >= len(starts):  # sparse: number the windows densely instead
        return pd.factorize(starts)[0].astype(np.int64)
    return codes


def combine(table: pa.Table, spec: PartialSpec, sequence: np.ndarray) -> pa.Table:
    """The partials of one input partition's rows (``table``, in arrival order, with each
    row's arrival ``sequence``): ``table``'s columns plus :attr:`PartialSpec.added_columns`,
    one row per pane and one per element that is not combined."""
    n = table.num_rows
    values = table.column(spec.field)
    raw = _nulls(table, spec.field, spec.field_mask) | _nulls(table, spec.time_column, None)
    field = np.asarray(values.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
    bounds = spec.bounds
    if bounds and np.abs(field[~raw].astype(np.float64)).sum() >= _EXACT_MAGNITUDE:
        raw[:] = True
    alone = np.flatnonzero(raw)
    if len(alone) == n:
        return _partial_rows(table, spec, np.arange(n), sequence, field, np.ones(n, np.int64),
                             field, field, raw)
    # the rows combined (None: every row)
    rows = None if len(alone) == 0 else np.flatnonzero(~raw)
    stamps = np.asarray(table.column(spec.time_column).fill_null(0).to_numpy(), dtype=np.int64)
    stamps = stamps if rows is None else stamps[rows]
    millis = stamps if spec.time_unit == "ms" else stamps // 1000
    _, starts, _ = assign_event_windows(spec.assigner, millis)
    taken = table if rows is None else table.take(pa.array(rows))
    codes = [_codes(taken.column(c)) for c in spec.key_columns]
    codes += [_nulls(taken, c, mask).astype(np.int64)
              for c, mask in zip(spec.key_columns, spec.key_masks) if mask[0]]
    ids, bound = _group_ids([*codes, _window_codes(starts, spec.assigner.size)])
    order = stable_order(ids, bound)  # stable: a pane's elements stay in arrival order
    sorted_ids = ids[order]
    edges = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
    members = (field if rows is None else field[rows])[order]
    ufunc = {"sum": np.add, "min": np.minimum, "max": np.maximum}[spec.kind]
    aggregate = ufunc.reduceat(members, edges)
    count = np.diff(np.r_[edges, len(order)])
    first = order[edges] if rows is None else rows[order[edges]]  # each pane's first element
    keep = np.sort(np.concatenate([first, alone]))
    panes = np.searchsorted(keep, first)  # the panes' rows among the kept ones
    counts = np.ones(len(keep), dtype=np.int64)
    counts[panes] = count
    combined = field[keep]
    combined[panes] = aggregate
    high = low = combined
    if bounds:
        running = np.cumsum(members)  # exact: magnitudes below 2**62
        before = np.repeat(running[edges] - members[edges], count)
        relative = running - before
        high, low = combined.copy(), combined.copy()
        high[panes] = np.maximum.reduceat(relative, edges)
        low[panes] = np.minimum.reduceat(relative, edges)
    return _partial_rows(table, spec, keep, sequence, combined, counts, high, low, raw)


def _partial_rows(
    table: pa.Table, spec: PartialSpec, keep: np.ndarray, sequence: np.ndarray,
    combined: np.ndarray, counts: np.ndarray, high: np.ndarray, low: np.ndarray,
    raw: np.ndarray,
) -> pa.Table:
    """``table``'s rows at ``keep`` with their field's values ``combined`` (the field's
    nulls kept on the rows that travel alone, ``raw``) and the added columns."""
    out = table.take(pa.array(keep))
    index = table.schema.get_field_index(spec.field)
    original = out.column(index)
    replaced = pa.array(combined, type=original.type)
    if original.null_count:
        nulls = np.asarray(original.is_null().to_numpy(zero_copy_only=False), dtype=bool)
        nulls &= raw[keep]
        if nulls.any():
            replaced = pc.if_else(pa.array(nulls), pa.nulls(len(nulls), replaced.type),
                                  replaced)
    out = out.set_column(index, table.schema.field(spec.field), replaced)
    out = out.append_column(spec.sequence_column, pa.array(sequence[keep], pa.int64()))
    out = out.append_column(COUNT, pa.array(counts, pa.int64()))
    if spec.bounds:
        out = out.append_column(HIGH, pa.array(high, pa.int64()))
        out = out.append_column(LOW, pa.array(low, pa.int64()))
    return out


def late_elements(
    assigner: Any, timestamps: np.ndarray, counts: np.ndarray, watermark: int
) -> int:
    """The elements the rows stand for whose every window is past its cleanup time under
    ``watermark`` (no allowed lateness): what an element-by-element operator counts as late."""
    if len(timestamps) == 0:
        return 0
    elem, _, ends = assign_event_windows(assigner, timestamps)
    live = np.zeros(len(timestamps), dtype=bool)
    live[elem[ends - 1 > watermark]] = True
    return int(counts[~live].sum())


def check_partial_sums(
    assigner: Any, keys: list[np.ndarray], timestamps: np.ndarray, values: np.ndarray,
    high: np.ndarray, low: np.ndarray, held: dict[tuple[Any, int], int], field: str,
    watermark: int,
) -> None:
    """Raise :class:`LongOverflowError` if folding the rows' elements into their panes one by
    one, in arrival order, leaves the long range: a row's running sums lie in ``[base + low,
    base + high]`` where ``base`` is its pane's value before it (``held``: the existing panes'
    sums by (key tuple, window start); a new pane starts at 0). Elements of windows past
    their cleanup time under ``watermark`` are late, not folded. Python ints: called only
    when the magnitudes could reach the limits (:func:`prepare`)."""
    if len(values) == 0:
        return
    elem, starts, ends = assign_event_windows(assigner, timestamps)
    running: dict[tuple[Any, int], int] = {}
    for e, start, end in zip(elem.tolist(), starts.tolist(), ends.tolist()):
        if end - 1 <= watermark:  # late (no allowed lateness)
            continue
        key = tuple(k[e] for k in keys)
        pane = (key, start)
        base = running.get(pane, held.get(pane, 0))
        top, bottom = base + int(high[e]), base + int(low[e])
        if top > MAX_LONG or bottom < MIN_LONG:
            try:
                to_long(top if top > MAX_LONG else bottom, ERROR, f"sum of field {field!r}")
            except LongOverflowError as exc:
                window = TimeWindow.of(start, end)
                raise located(exc, key[0] if len(key) == 1 else key, window) from None
        running[pane] = base + int(values[e])




@dataclass(frozen=True)
class PartialRows:
    """The partial columns of a batch's rows, in processing order."""

    counts: np.ndarray
    high: np.ndarray | None = None
    low: np.ndarray | None = None

    @property
    def elements(self) -> int:
        """The elements the rows stand for."""
        return int(self.counts.sum())


def _held_sums(state: Any, key_fields: list[str], field: str) -> dict[tuple[Any, int], int]:
    """The current value of every pane of ``state`` (columnar or operator), by (key values,
    window start)."""
    from flinkwin.operator.states.columnar import ColumnarAggregation

    if isinstance(state, ColumnarAggregation):
        panes = state.panes
        if panes is None or not len(panes):
            return {}
        keys = list(zip(*(panes[c].tolist() for c in key_fields)))
        return dict(zip(zip(keys, panes["_fw_start"].tolist()), panes[field].tolist()))
    held = {}
    for (_, window), record in state.window_contents.items():
        fields = record.__fields__
        key = tuple(record[fields.index(c)] for c in key_fields)
        held[(key, window.start)] = record[fields.index(field)]
    return held


def _held_magnitude(state: Any, field: str) -> float:
    from flinkwin.operator.states.columnar import ColumnarAggregation

    if isinstance(state, ColumnarAggregation):
        panes = state.panes
        if panes is None or not len(panes):
            return 0.0
        return float(np.abs(panes[field].to_numpy(dtype=np.float64)).max())
    return float(max((abs(v) for v in _held_sums(state, [], field).values()), default=0))


def prepare(
    state: Any, frame: pd.DataFrame, timestamps: np.ndarray, watermark: int, rows: PartialRows,
    key_fields: list[str], field: str,
) -> Any:
    """``states.prepare`` for partial rows: the exact running-sum check when the rows carry
    bounds, then the columnar state if it takes the batch, else its operator equivalent."""
    from flinkwin.operator.states.columnar import ColumnarAggregation

    if rows.high is not None and rows.low is not None:
        values = frame[field].to_numpy()
        if values.dtype.kind == "i":  # (a null field fails in the fold itself)
            keys = [np.asarray(frame[c].tolist(), dtype=object) for c in key_fields]
            _check(state, keys, timestamps, values, rows, key_fields, field, watermark)
    if not isinstance(state, ColumnarAggregation):
        return state
    if state.accepts_partials(frame, timestamps, watermark):
        return state
    return state.to_operator()


def _check(
    state: Any, keys: list[np.ndarray], timestamps: np.ndarray, values: np.ndarray,
    rows: PartialRows, key_fields: list[str], field: str, watermark: int,
) -> None:
    assert rows.high is not None and rows.low is not None
    high, low = rows.high.astype(np.float64), rows.low.astype(np.float64)
    magnitude = np.maximum(np.abs(high), np.abs(low))
    if _held_magnitude(state, field) + float(magnitude.sum()) < float(2**62):
        return
    check_partial_sums(
        state.assigner, keys, timestamps, values, rows.high, rows.low,
        _held_sums(state, key_fields, field), field, watermark,
    )


def process_batch(
    state: Any, frame: pd.DataFrame, timestamps: np.ndarray, rows: PartialRows
) -> None:
    """``process_batch`` for partial rows: late elements counted as elements."""
    from flinkwin.operator.states.columnar import ColumnarAggregation

    if isinstance(state, ColumnarAggregation):
        state.process_partial_batch(frame, timestamps, rows.counts)
        return
    before = state.num_late_records_dropped
    state.process_batch(frame, timestamps)
    counted = state.num_late_records_dropped - before
    late = late_elements(state.assigner, timestamps, rows.counts, state.current_watermark)
    state.num_late_records_dropped += late - counted


__all__ = [
    "COUNT",
    "HIGH",
    "LOW",
    "PartialRows",
    "PartialSpec",
    "check_partial_sums",
    "combine",
    "late_elements",
    "prepare",
    "process_batch",
]
