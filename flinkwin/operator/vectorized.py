"""The window operator on whole batches: the same results as per-element processing, without a
Python call per element on the common paths.

A batch is processed under one watermark and one processing time (both only change between
batches), so every pane (key, window) can be classified up front:

- a *quiet* pane receives its elements without its trigger firing: its elements are folded into
  the window state in one go (numpy for built-in integer aggregations, a tight loop otherwise),
  and its timers and trigger state are set as its first element would set them;
- a *firing* pane (EventTimeTrigger on a window the watermark already passed, i.e. allowed
  lateness; CountTrigger reaching its count) goes element by element through the operator's
  exact per-element code.

Timers are registered in the order the per-element path registers them (first element of each
pane, in batch order), so later firings tie-break identically. Configurations outside this
(merging assigners, evictors, user-defined assigners or triggers, key selector callables) use
the per-element path for the whole batch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from flinkwin.assigners.global_windows import GlobalWindows
from flinkwin.assigners.sliding import SlidingEventTimeWindows, SlidingProcessingTimeWindows
from flinkwin.assigners.stagger import WindowStagger
from flinkwin.assigners.tumbling import TumblingEventTimeWindows, TumblingProcessingTimeWindows
from flinkwin.errors import user_function_error
from flinkwin.functions.base import FieldKeySelector
from flinkwin.functions.builtin import BuiltinAggregation
from flinkwin.functions.internal import AGGREGATING, LIST, REDUCING
from flinkwin.keys import flink_key
from flinkwin.longs import LongOverflowError, located, to_long
from flinkwin.operator.batch_windows import _codes, assign_event_windows, in_safe_band
from flinkwin.operator.element_rows import column_values, op_records
from flinkwin.operator.ordering import stable_order
from flinkwin.record import Row
from flinkwin.time import MAX_LONG, MIN_LONG, java_mod
from flinkwin.triggers.continuous_event_time import ContinuousEventTimeTrigger, next_fire_time
from flinkwin.triggers.count import CountTrigger
from flinkwin.triggers.event_time import EventTimeTrigger
from flinkwin.triggers.processing_time import ProcessingTimeTrigger
from flinkwin.triggers.purging import PurgingTrigger
from flinkwin.windows import GlobalWindow, TimeWindow

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator

_TRIGGERS = (EventTimeTrigger, ProcessingTimeTrigger, ContinuousEventTimeTrigger, CountTrigger)
_EVENT_ASSIGNERS = (TumblingEventTimeWindows, SlidingEventTimeWindows)
_PROC_ASSIGNERS = (TumblingProcessingTimeWindows, SlidingProcessingTimeWindows)


def base_trigger(trigger: Any) -> Any:
    """The trigger under any ``PurgingTrigger`` wrappers."""
    while type(trigger) is PurgingTrigger:
        trigger = trigger.nested_trigger
    return trigger


def is_vectorizable(op: WindowOperator) -> bool:
    """True if ``process_batch`` runs vectorized for this operator's configuration."""
    assigner = op.assigner
    if op.evictor is not None or op.is_merging or op.firings is not None:
        return False
    if type(assigner) not in (*_EVENT_ASSIGNERS, *_PROC_ASSIGNERS, GlobalWindows):
        return False
    if getattr(assigner, "window_stagger", WindowStagger.ALIGNED) is not WindowStagger.ALIGNED:
        return False
    if type(base_trigger(op.trigger)) not in _TRIGGERS:
        return False
    return op.key_selector is None or type(op.key_selector) is FieldKeySelector


def process_frame(
    op: WindowOperator, frame: pd.DataFrame, timestamps: np.ndarray,
    records: list[Any] | None = None,
) -> None:
    """Process ``frame``'s rows in order with ``timestamps`` (see module docstring);
    ``records``: the rows as elements, when the caller has built them (else built from
    ``frame`` in the operator's stream shape)."""
    if len(frame) != len(timestamps):
        raise ValueError(f"{len(frame)} rows but {len(timestamps)} timestamps")
    if len(frame) == 0:
        return
    if not is_vectorizable(op) or (
        op.assigner.is_event_time() and not _vectorizable_timestamps(op, timestamps)
    ):
        elements = op_records(op, frame) if records is None else records
        for record, ts in zip(elements, timestamps.tolist()):
            op._process(record, ts, op.key_of(record))
        return
    _Batch(op, frame.reset_index(drop=True), timestamps, records).run()


def _vectorizable_timestamps(op: WindowOperator, timestamps: np.ndarray) -> bool:
    """No "no timestamp" marker, and far enough from the long limits that numpy's int64
    arithmetic cannot overflow (nearer, the per-element path computes Flink's long arithmetic)."""
    if bool((timestamps <= MIN_LONG).any()):
        return False
    trigger = base_trigger(op.trigger)
    interval = trigger.interval if type(trigger) is ContinuousEventTimeTrigger else 0
    return in_safe_band(op.assigner, op.allowed_lateness, timestamps, interval)


class _Batch:
    def __init__(
        self, op: WindowOperator, frame: pd.DataFrame, timestamps: np.ndarray,
        records: list[Any] | None = None,
    ) -> None:
        self.op = op
        self.frame = frame
        self.ts = timestamps
        self._records: list[Any] | None = records

    def records(self) -> list[Any]:
        if self._records is None:
            self._records = op_records(self.op, self.frame)
        return self._records

    # ---------------------------------------------------------------- keys
    def key_codes(self) -> tuple[np.ndarray, list[Any]]:
        op, n = self.op, len(self.frame)
        if op.key_selector is None:
            return np.zeros(n, dtype=np.int64), [None]
        fields = cast(FieldKeySelector, op.key_selector).fields
        codes = _codes([self.frame[f].to_numpy() for f in fields])
        first = first_appearances(codes)
        converters = op.element_converters or {}
        if any(f in converters for f in fields):  # the key of the element as shaped
            return codes, [op.key_of(record) for record in op_records(op, self.frame, first)]
        values = [column_values(self.frame[f], first) for f in fields]
        keys = values[0] if len(fields) == 1 else list(zip(*values))
        return codes, [flink_key(k) for k in keys]

    # ------------------------------------------------------------- windows
    def assign(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(element index, window start, window end) per assignment, in per-element order."""
        op, ts = self.op, self.ts
        assigner: Any = op.assigner
        n = len(ts)
        elems = np.arange(n, dtype=np.int64)
        if type(assigner) in _EVENT_ASSIGNERS:
            e, s, t = assign_event_windows(assigner, ts)
            return e, s, t
        if type(assigner) is GlobalWindows:
            return elems, np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        windows = assigner.assign_windows(None, 0, op._assigner_ctx)
        k = len(windows)
        e = np.repeat(elems, k)
        s = np.tile(np.array([w.start for w in windows], dtype=np.int64), n)
        t = np.tile(np.array([w.end for w in windows], dtype=np.int64), n)
        return e, s, t

    # ----------------------------------------------------------------- run
    def run(self) -> None:
        op = self.op
        codes, keys = self.key_codes()
        pair_elem, starts, ends = self.assign()
        global_windows = type(op.assigner) is GlobalWindows
        watermark = op.current_watermark
        max_ts = np.full(len(ends), MAX_LONG, dtype=np.int64) if global_windows else ends - 1

        if op.is_event_time:
            cleanup = max_ts + op.allowed_lateness
            live = cleanup > watermark
            self._late_elements(pair_elem, live)
            pair_elem, starts, ends, max_ts = (
                pair_elem[live], starts[live], ends[live], max_ts[live]
            )
        if len(pair_elem) == 0:
            return

        pane_of_pair = _codes([codes[pair_elem], starts])  # numbered by first appearance
        order = stable_order(pane_of_pair)
        counts = np.bincount(pane_of_pair)
        bounds = np.concatenate(([0], np.cumsum(counts)))
        first_pair = order[bounds[:-1]]

        pane_key = [keys[c] for c in codes[pair_elem[first_pair]].tolist()]
        pane_window: list[Any]
        if global_windows:
            pane_window = [GlobalWindow.get()] * len(first_pair)
        else:
            make = TimeWindow.of
            pane_window = [
                make(s, e) for s, e in zip(starts[first_pair].tolist(), ends[first_pair].tolist())
            ]
        firing = self._firing_panes(pane_key, pane_window, max_ts[first_pair], counts)

        quiet = np.flatnonzero(~firing)
        self._fold_quiet(
            quiet, order, bounds, pair_elem, pane_key, pane_window, bool(firing.any())
        )

        # Timers and trigger state, and the firing panes' elements, in per-element order
        # (pane ids are numbered in order of first appearance).
        first_ts = self.ts[pair_elem[first_pair]].tolist()
        counts_list = counts.tolist()
        if not firing.any():
            self._quiet_pane_timers(range(len(pane_key)), pane_key, pane_window, first_ts,
                                    counts_list)
            return
        events = [(int(first_pair[p]), 0, int(p)) for p in quiet]
        for p in np.flatnonzero(firing).tolist():
            for pair in order[bounds[p] : bounds[p + 1]].tolist():
                events.append((pair, 1, p))
        events.sort()
        records = self.records()
        ts_list = self.ts.tolist()
        pair_elem_list = pair_elem.tolist()
        for pair, is_firing, p in events:
            if is_firing:
                elem = pair_elem_list[pair]
                op._on_element_in_window(
                    records[elem], ts_list[elem], pane_key[p], pane_window[p], pane_window[p]
                )
            else:
                self._quiet_pane_timers((p,), pane_key, pane_window, first_ts, counts_list)

    def _late_elements(self, pair_elem: np.ndarray, live: np.ndarray) -> None:
        op = self.op
        has_live = np.zeros(len(self.ts), dtype=bool)
        has_live[pair_elem[live]] = True
        late = ~has_live & (self.ts + op.allowed_lateness <= op.current_watermark)
        if not late.any():
            return
        idx = np.flatnonzero(late)
        if op.late_output_tag is None:
            op.num_late_records_dropped += len(idx)
            return
        records = self.records()
        for i in idx.tolist():
            op.emit_side(op.late_output_tag, records[i], int(self.ts[i]))

    def _firing_panes(
        self, pane_key: list[Any], pane_window: list[Any], pane_max_ts: np.ndarray,
        counts: np.ndarray,
    ) -> np.ndarray:
        op = self.op
        trigger = base_trigger(op.trigger)
        if type(trigger) in (EventTimeTrigger, ContinuousEventTimeTrigger):
            return pane_max_ts <= op.current_watermark
        if type(trigger) is ProcessingTimeTrigger:
            return np.zeros(len(pane_key), dtype=bool)
        table = op.partitioned_state.table(trigger.state_desc)
        existing = np.array(
            [table.get((k, w), 0) for k, w in zip(pane_key, pane_window)], dtype=np.int64
        )
        return existing + counts >= trigger.max_count

    def _quiet_pane_timers(
        self, panes: Any, pane_key: list[Any], pane_window: list[Any], first_ts: list[int],
        counts: list[int],
    ) -> None:
        """What the trigger and the operator do for quiet panes' elements (the trigger does not
        fire): timers and trigger state as the first element sets them, the cleanup timer."""
        op = self.op
        trigger = base_trigger(op.trigger)
        kind = type(trigger)
        timers = op.event_timers if op.is_event_time else op.processing_timers
        lateness = op.allowed_lateness if op.is_event_time else 0
        if kind is EventTimeTrigger or kind is ProcessingTimeTrigger:
            own = op.event_timers if kind is EventTimeTrigger else op.processing_timers
            same = own is timers and lateness == 0
            for p in panes:
                key, window = pane_key[p], pane_window[p]
                max_ts = window.max_timestamp()
                own.register(max_ts, key, window)
                if not same:
                    self._cleanup_timer(timers, key, window)
            return
        table = op.partitioned_state.table(trigger.state_desc)
        for p in panes:
            key, window = pane_key[p], pane_window[p]
            slot = (key, window)
            if kind is ContinuousEventTimeTrigger:
                max_ts = window.max_timestamp()
                op.event_timers.register(max_ts, key, window)
                if slot not in table:
                    ts = first_ts[p]
                    fire_at = next_fire_time(
                        ts - java_mod(ts, trigger.interval), trigger.interval, max_ts, op.overflow
                    )
                    table[slot] = fire_at
                    op.event_timers.register(fire_at, key, window)
            else:
                table[slot] = table.get(slot, 0) + counts[p]
            self._cleanup_timer(timers, key, window)

    def _cleanup_timer(self, timers: Any, key: Any, window: Any) -> None:
        cleanup = self.op.cleanup_time(window)
        if cleanup != MAX_LONG:
            timers.register(cleanup, key, window)

    # ------------------------------------------------------------- folding
    def _fold_quiet(
        self, quiet: np.ndarray, order: np.ndarray, bounds: np.ndarray, pair_elem: np.ndarray,
        pane_key: list[Any], pane_window: list[Any], elements_needed: bool,
    ) -> None:
        """Fold the quiet panes' elements into their window state; ``elements_needed``: the
        batch's elements are needed in batch order afterwards (firing panes)."""
        if len(quiet) == 0:
            return
        spec = self.op.spec
        contents = self.op.window_contents
        builtin = spec.builtin if spec.state_kind == REDUCING else None
        elem_sorted = pair_elem[order]
        if builtin is not None and self._fold_builtin(
            builtin, quiet, bounds, elem_sorted, pane_key, pane_window
        ):
            return
        # the panes' elements, pane by pane: built in that order when only the fold needs them
        # and each element is in one pane (pairs are in element order)
        if (
            self._records is None
            and not elements_needed
            and bool((pair_elem[1:] > pair_elem[:-1]).all())
        ):
            ordered = op_records(self.op, self.frame, elem_sorted)
        else:
            records = self.records()
            ordered = [records[i] for i in elem_sorted.tolist()]
        bounds_list = bounds.tolist()
        op, kind = self.op, spec.state_kind
        add = spec.agg_fn.add if kind == AGGREGATING else None
        for p in quiet.tolist():
            key = pane_key[p]
            slot = (key, pane_window[p])
            op.current_key = key
            members = ordered[bounds_list[p] : bounds_list[p + 1]]
            if kind == LIST:
                contents.setdefault(slot, []).extend(members)
                continue
            try:
                if kind == REDUCING:
                    if slot in contents:
                        acc = contents[slot]
                    else:
                        acc, members = members[0], members[1:]
                    for r in members:
                        acc = spec.reduce(acc, r)
                else:
                    assert add is not None
                    acc = contents[slot] if slot in contents else spec.agg_fn.create_accumulator()
                    for r in members:
                        acc = add(r, acc)
            except LongOverflowError as exc:
                raise located(exc, slot[0], slot[1]) from None
            except Exception as exc:
                raise user_function_error(exc, slot[0], slot[1]) from exc
            contents[slot] = acc

    def _fold_builtin(
        self, agg: BuiltinAggregation, quiet: np.ndarray, bounds: np.ndarray,
        elem_sorted: np.ndarray, pane_key: list[Any], pane_window: list[Any],
    ) -> bool:
        """Built-in sum/min/max over an integer column with numpy; False to fall back.

        Sums are int64 sums, which wrap exactly as Java's long sums (``overflow="wrap"``);
        under ``"error"``, or over a field narrower than a long, a batch whose sums could leave
        the field's range falls back to the per-element fold, which wraps or raises at the
        first overflowing addition, as the per-element path does."""
        if agg.kind not in ("sum", "min", "max") or agg.field not in self.frame.columns:
            return False
        column = self.frame[agg.field].to_numpy()
        if column.dtype.kind not in ("i" if agg.kind == "sum" else "iu"):
            return False
        values = column[elem_sorted]
        seg_starts = bounds[:-1][quiet]
        contents = self.op.window_contents
        quiet_list = quiet.tolist()
        slots = [(pane_key[p], pane_window[p]) for p in quiet_list]
        existing = [contents.get(slot) for slot in slots]
        field, kind = agg.field, agg.kind
        if not agg.int64_exact:
            held = [0 if e is None else e[field] for e in existing]
            if any(type(h) is not int for h in held) or agg.sums_may_overflow(
                values, seg_starts, held
            ):
                return False
        ufunc = {"sum": np.add, "min": np.minimum, "max": np.maximum}[kind]
        # reduceat over each quiet pane's contiguous run of the pane-sorted values
        ends_ = bounds[1:][quiet]
        reduced = [
            int(ufunc.reduce(values[s:e])) for s, e in zip(seg_starts.tolist(), ends_.tolist())
        ] if len(quiet) < 64 else _segment_reduce(ufunc, values, seg_starts, ends_)
        first_elems = elem_sorted[seg_starts].tolist()
        new_panes = [j for j, e in enumerate(existing) if e is None]
        records = self._records_at([first_elems[j] for j in new_panes])
        for j, rec in zip(new_panes, records):
            contents[slots[j]] = Row.replace(rec, field, reduced[j])
        for j, old_rec in enumerate(existing):
            if old_rec is None:
                continue
            old, value = old_rec[field], reduced[j]
            if kind == "sum":
                new = old + value
                if type(new) is int and not MIN_LONG <= new <= MAX_LONG:
                    new = to_long(new, agg.overflow, f"sum of field {field!r}: {old} + {value}")
            elif kind == "min":
                new = value if value < old else old
            else:
                new = value if value > old else old
            contents[slots[j]] = Row.replace(old_rec, field, new)
        return True

    def _records_at(self, elems: list[int]) -> list[Row]:
        if not elems:
            return []
        if self._records is not None:
            return [self._records[i] for i in elems]
        columns = tuple(self.frame.columns)
        sub = self.frame.iloc[elems]
        return self.op.elements(columns, [column_values(sub[c]) for c in columns])


def first_appearances(codes: np.ndarray) -> np.ndarray:
    """The index of each code's first row, for codes numbered in order of first appearance
    (``np.unique(codes, return_index=True)[1]`` without sorting)."""
    if len(codes) == 0:
        return np.zeros(0, dtype=np.int64)
    seen = np.maximum.accumulate(codes)
    new = np.empty(len(codes), dtype=bool)
    new[0] = True
    new[1:] = seen[1:] > seen[:-1]
    return np.flatnonzero(new)


def _segment_reduce(
    ufunc: Any, values: np.ndarray, starts: np.ndarray, ends: np.ndarray
) -> list[int]:
    """``ufunc`` over ``values[starts[i]:ends[i]]`` for each i (segments are non-empty and
    sorted)."""
    out = ufunc.reduceat(values, starts)
    # reduceat reduces up to the next start; trim segments whose end is before the next start
    nxt = np.append(starts[1:], len(values))
    short = np.flatnonzero(ends != nxt)
    for i in short.tolist():
        out[i] = ufunc.reduce(values[starts[i] : ends[i]])
    return out.tolist()


