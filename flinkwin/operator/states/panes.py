"""Panes for aligned sliding event-time windows (seed 002): one update per element.

A keyed built-in ``sum``/``min``/``max`` over an integer field on ``SlidingEventTimeWindows``
(aligned, default ``EventTimeTrigger``, no evictor) keeps, per key, panes of
``gcd(size, slide)`` milliseconds: each element updates exactly one pane, and a window's
result is combined from its ``size / gcd`` panes when it fires (prefix sums for ``sum``, a
sparse table for ``min``/``max``), instead of ``size / slide`` updates per element.

:class:`PaneAggregation` gives exactly :class:`~flinkwin.operator.WindowOperator`'s results.
What the operator keeps per window is derivable from the panes:

- a window exists (has contents and timers) iff its cleanup time is after the watermark and one
  of its panes holds an element: an element joins every window of its pane that is not late at
  its arrival, and a window late once stays late;
- its result is the first element of the window (Flink's built-in aggregation keeps the first
  element's other fields) with the field aggregated: each pane keeps its first element and that
  element's arrival number, a window takes the pane whose first element arrived first;
- windows with the same ``max_timestamp`` (one per key) fire in the order their timers were
  registered, i.e. by the arrival of their first element.

So the state is the panes only (first element's row, aggregate in place, pane start, first
arrival number). Late elements, the late side output, the dropped count, and elements that
fire a window on arrival (allowed lateness) are handled here, exactly as the operator does.
Aggregates are int64. A batch whose aggregated column is not integral (or is uint64), or with
timestamps beyond +-2^61 ms, is not taken (:meth:`PaneAggregation.accepts`); the caller
continues with :meth:`PaneAggregation.to_operator`. Snapshots are one Arrow IPC stream of the panes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from flinkwin.assigners.sliding import SlidingEventTimeWindows
from flinkwin.assigners.stagger import WindowStagger
from flinkwin.functions.base import FieldKeySelector
from flinkwin.functions.internal import REDUCING
from flinkwin.operator.batch_windows import _codes, assign_event_windows
from flinkwin.operator.element_rows import column_values
from flinkwin.operator.frames import drain_frames, read_frame, write_frame
from flinkwin.operator.ordering import stable_order
from flinkwin.operator.snapshots import formats
from flinkwin.operator.states.pane_index import _FIRST, _PANE, _UFUNCS, _PaneIndex
from flinkwin.time import MAX_LONG, MIN_LONG, java_mod
from flinkwin.triggers.event_time import EventTimeTrigger
from flinkwin.windows import TimeWindow

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator

#: The ``flinkwin.format`` of a pane snapshot.
FORMAT = formats.written(formats.PANES)
_META_KEY = "flinkwin.panes"
#: Timestamps taken here lie within +-_LIMIT (window size below _LIMIT / 2, allowed lateness
#: below _LIMIT), and bounds are clipped to +-2 * _LIMIT: window arithmetic stays in int64.
_LIMIT = 2**61


def supports(op: WindowOperator) -> bool:
    """True if ``op``'s configuration has a pane equivalent (see module docstring)."""
    spec = op.spec
    builtin = spec.builtin if spec.state_kind == REDUCING else None
    selector = op.key_selector
    assigner = op.assigner
    return (
        type(assigner) is SlidingEventTimeWindows
        and getattr(assigner, "window_stagger", WindowStagger.ALIGNED) is WindowStagger.ALIGNED
        and assigner.size < _LIMIT // 2
        and op.allowed_lateness < _LIMIT
        and type(op.trigger) is EventTimeTrigger
        and op.evictor is None
        and spec.window_fn is None
        and builtin is not None
        and builtin.kind in _UFUNCS
        and type(selector) is FieldKeySelector
        and builtin.field not in selector.fields
    )


def _clip(value: int) -> int:
    """A bound computed with Python ints, clamped to where int64 window arithmetic is safe."""
    return max(-2 * _LIMIT, min(2 * _LIMIT, value))


class PaneAggregation:
    """The panes of one key group for a configuration :func:`supports` accepts."""

    def __init__(self, template: WindowOperator, operator_factory: Callable[[], WindowOperator]):
        builtin = template.spec.builtin
        assigner = template.assigner
        assert builtin is not None and type(template.key_selector) is FieldKeySelector
        assert type(assigner) is SlidingEventTimeWindows
        self.size = int(assigner.size)
        self.slide = int(assigner.slide)
        self.offset = java_mod(int(assigner.offset), self.slide)
        self.pane = math.gcd(self.size, self.slide)
        self.lateness = template.allowed_lateness
        self.late_tag = template.late_output_tag
        self.key_fields = list(template.key_selector.fields)
        self.field = builtin.field
        self.kind = builtin.kind
        self.builtin = builtin
        self._factory = operator_factory
        self.current_watermark = MIN_LONG
        self.current_processing_time = MIN_LONG
        self.num_late_records_dropped = 0
        self.num_windows_fired = 0  # not snapshotted: a per-run counter
        self.next_seq = 0
        self.panes: pd.DataFrame | None = None
        self._main: list[pd.DataFrame] = []
        #: each pending main row's timestamp: its window's max_timestamp()
        self._main_ts: list[np.ndarray] = []
        self._late: list[pd.DataFrame] = []

    # ------------------------------------------------------------- geometry
    def _align(self, t: np.ndarray) -> np.ndarray:
        """The latest window start ``<= t`` (the start of ``t``'s last window)."""
        rem = np.fmod(t - self.offset, self.slide)
        return np.where(rem < 0, t - (rem + self.slide), t - rem)

    def _pane_start(self, ts: np.ndarray) -> np.ndarray:
        off = self.offset % self.pane
        rem = np.fmod(ts - off, self.pane)
        return np.where(rem < 0, ts - (rem + self.pane), ts - rem)

    def _cleanup(self, max_ts: np.ndarray) -> np.ndarray:
        return max_ts + self.lateness

    def _window_range(self, ps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """First and last start of the windows containing the panes starting at ``ps``."""
        return self._align(ps - self.size) + self.slide, self._align(ps)

    # ---------------------------------------------------------------- clocks
    def advance_processing_time(self, time: int) -> None:
        self.current_processing_time = int(time)

    def advance_watermark(self, watermark: int) -> None:
        """Fire windows whose ``max_timestamp`` is in (old watermark, ``watermark``] in timer
        order, drop panes all of whose windows are past their cleanup time. A watermark that is
        not greater than the current one is ignored."""
        watermark = int(watermark)
        old = self.current_watermark
        if watermark <= old:
            return
        self.current_watermark = watermark
        panes = self.panes
        if panes is None or not len(panes):
            return
        index = _PaneIndex(self, panes)
        s_from = _clip(old - self.size + 2)  # max_ts > old
        s_to = _clip(watermark - self.size + 1)  # max_ts <= watermark
        kc, starts = index.windows(s_from, s_to)
        if len(kc):
            agg, first = index.combine(kc, starts)
            order = np.lexsort((index.first[first], starts))
            self._main.append(index.rows(first[order], agg[order]))
            self._main_ts.append(starts[order] + (self.size - 1))
            self.num_windows_fired += len(order)
        _, last = self._window_range(panes[_PANE].to_numpy())
        keep = self._cleanup(last + self.size - 1) > watermark
        if not keep.all():
            self.panes = panes[keep].reset_index(drop=True)

    def next_event_time_timer(self) -> int | None:
        """The earliest pending timer: a window's ``max_timestamp`` until it fires, then its
        cleanup time."""
        panes = self.panes
        if panes is None or not len(panes):
            return None
        wm = self.current_watermark
        first, last = self._window_range(panes[_PANE].to_numpy())
        size, slide = self.size, self.slide
        # the earliest window not yet fired (max_ts > wm) of each pane
        unfired = np.maximum(first, self._align(np.int64(_clip(wm - size + 1))) + slide)
        timers = np.where(unfired <= last, unfired + size - 1, MAX_LONG)
        if self.lateness:
            # the earliest window not yet cleaned up, if it has fired: its cleanup time
            alive = np.maximum(
                first, self._align(np.int64(_clip(wm - size - self.lateness + 1))) + slide
            )
            fired_alive = (alive <= last) & (alive + size - 1 <= wm)
            timers = np.minimum(
                timers, np.where(fired_alive, self._cleanup(alive + size - 1), MAX_LONG)
            )
        best = int(timers.min())
        return None if best == MAX_LONG else best

    def next_processing_time_timer(self) -> int | None:
        return None

    def holds_nothing(self) -> bool:
        return self.panes is None or not len(self.panes)

    def state_size(self) -> tuple[int, int]:
        """(keys, windows) held: the distinct keys, and the distinct (key, window) pairs that
        some pane belongs to (each key's window-start ranges merged)."""
        panes = self.panes
        if panes is None or not len(panes):
            return 0, 0
        codes = _codes([panes[f].to_numpy() for f in self.key_fields])
        first, last = self._window_range(panes[_PANE].to_numpy())
        order = np.lexsort((first, codes))
        codes, first, last = codes[order], first[order], last[order]
        reach = pd.Series(last).groupby(codes).cummax().to_numpy()
        new = np.ones(len(codes), dtype=bool)
        new[1:] = (codes[1:] != codes[:-1]) | (first[1:] > reach[:-1] + self.slide)
        lo = first[new]
        hi = np.maximum.reduceat(last, np.flatnonzero(new))
        windows = int(((hi - lo) // self.slide + 1).sum())
        return int(codes.max()) + 1, windows  # codes are factorized: 0..keys-1

    # ----------------------------------------------------------------- input
    def accepts(self, frame: pd.DataFrame, timestamps: np.ndarray, watermark: int) -> bool:
        """True if the aggregated column is integral (as int64; not uint64) and every
        timestamp within +-2^61 ms (otherwise use :meth:`to_operator`)."""
        if len(timestamps) == 0:
            return True
        dtype = frame[self.field].dtype
        if not (dtype.kind == "i" or (dtype.kind == "u" and dtype.itemsize < 8)):
            return False
        if not (np.abs(timestamps) < _LIMIT).all():
            return False
        # a sum that int64 does not wrap as the field's Java type (under "error", or of a field
        # narrower than a long) must stay in the field's range: conservatively, every prefix
        # and window sum stays below the total magnitude held and added
        return self.builtin.int64_exact or not self._sum_may_overflow(frame)

    def _sum_may_overflow(self, frame: pd.DataFrame) -> bool:
        held = 0.0
        if self.panes is not None and len(self.panes):
            held = float(np.abs(self.panes[self.field].to_numpy(dtype=np.float64)).sum())
        values = frame[self.field].to_numpy()
        return self.builtin.sums_may_overflow(values, np.zeros(1, dtype=np.int64), [held])

    def process_batch(self, frame: pd.DataFrame, timestamps: np.ndarray) -> None:
        """Process the rows of ``frame`` (in processing order) with their timestamps; the batch
        must be one :meth:`accepts`."""
        n = len(frame)
        if n == 0:
            return
        wm = self.current_watermark
        seq = self.next_seq + np.arange(n, dtype=np.int64)
        self.next_seq += n
        first, last = self._window_range(timestamps)
        live = self._cleanup(last + self.size - 1) > wm
        if not live.all():
            late = ~live & (timestamps + self.lateness <= wm)
            if late.any():
                if self.late_tag is None:
                    self.num_late_records_dropped += int(late.sum())
                else:
                    self._late.append(frame[late])
            if not live.any():
                return
            idx = np.flatnonzero(live)
            frame = frame.iloc[idx].reset_index(drop=True)
            timestamps, seq, first, last = timestamps[idx], seq[idx], first[idx], last[idx]
        if self.lateness:
            self._fire_on_arrival(frame, timestamps, first, last)
        self._add(frame, self._pane_start(timestamps), seq)

    def _fire_on_arrival(
        self, frame: pd.DataFrame, ts: np.ndarray, first: np.ndarray, last: np.ndarray
    ) -> None:
        """Windows an element joins after the watermark passed their ``max_timestamp`` (but
        not their cleanup time) fire on its arrival, with the element (``EventTimeTrigger``):
        one output per (element, such window), in element order, then the assigner's order."""
        wm = self.current_watermark
        # latest window start with max_ts <= wm, within each element's windows
        cand = np.minimum(last, self._align(np.int64(_clip(wm - self.size + 1))))
        hits = np.flatnonzero((cand >= first) & (self._cleanup(cand + self.size - 1) > wm))
        if not len(hits):
            return
        elem, starts, ends = assign_event_windows(_Sliding(self), ts[hits])
        max_ts = ends - 1
        keep = (max_ts <= wm) & (self._cleanup(max_ts) > wm)
        elem, starts = hits[elem[keep]], starts[keep]
        values = frame[self.field].to_numpy().astype(np.int64, copy=False)[elem]
        keys = [frame[f].to_numpy()[elem] for f in self.key_fields]
        group = _codes([*keys, starts])
        n_groups = int(group.max()) + 1
        first_pair = np.full(n_groups, len(group), dtype=np.int64)
        np.minimum.at(first_pair, group, np.arange(len(group), dtype=np.int64))
        # what each window held before the batch
        prior_found = np.zeros(n_groups, dtype=bool)
        prior_agg = np.zeros(n_groups, dtype=np.int64)
        prior_first = np.zeros(n_groups, dtype=np.int64)
        index: _PaneIndex | None = None
        if self.panes is not None and len(self.panes):
            index = _PaneIndex(self, self.panes, [k[first_pair] for k in keys])
            prior_found, prior_agg, prior_first = index.lookup(starts[first_pair])
        # running aggregate of each window over its pairs (few: late elements only)
        ufunc = _UFUNCS[self.kind]
        running = np.empty(len(group), dtype=np.int64)
        order = stable_order(group, n_groups)
        bounds = np.concatenate(([0], np.cumsum(np.bincount(group, minlength=n_groups))))
        for g in range(n_groups):
            members = order[bounds[g] : bounds[g + 1]]
            acc = ufunc.accumulate(values[members])
            running[members] = ufunc(acc, prior_agg[g]) if prior_found[g] else acc
        # a window that held elements keeps its first one; else the batch's first is it
        found = prior_found[group]
        out = frame.iloc[elem[first_pair[group]]].reset_index(drop=True)
        if index is not None and found.any():
            prior_rows = index.rows(prior_first[group[found]], running[found])
            prior_rows.index = np.flatnonzero(found)
            out = pd.concat([out[~found], prior_rows]).sort_index().reset_index(drop=True)
        out[self.field] = running
        self._main.append(out)
        self._main_ts.append(starts + (self.size - 1))
        self.num_windows_fired += len(out)

    def _add(self, frame: pd.DataFrame, ps: np.ndarray, seq: np.ndarray) -> None:
        """Fold the elements into their panes: one group-by for the batch, one merge with the
        panes in state (existing panes keep their first element)."""
        keys = [frame[f].to_numpy() for f in self.key_fields]
        ids = _codes([*keys, ps])
        order = stable_order(ids)
        bounds = np.concatenate(([0], np.cumsum(np.bincount(ids))))
        first = order[bounds[:-1]]
        values = frame[self.field].to_numpy().astype(np.int64, copy=False)
        reduced = _UFUNCS[self.kind].reduceat(values[order], bounds[:-1])
        new = frame.iloc[first].reset_index(drop=True)
        new[self.field] = reduced
        new[_PANE] = ps[first]
        new[_FIRST] = seq[first]
        old = self.panes
        if old is not None and len(old):
            n_old = len(old)
            ids = _codes([
                np.concatenate([old[c].to_numpy(), new[c].to_numpy()])
                for c in (*self.key_fields, _PANE)
            ])
            matched = ids[n_old:] < n_old
            if matched.any():
                acc = old[self.field].to_numpy().copy()
                _UFUNCS[self.kind].at(acc, ids[n_old:][matched], reduced[matched])
                old = old.assign(**{self.field: acc})
                new = new[~matched]
            self.panes = pd.concat([old, new], ignore_index=True) if len(new) else old
        else:
            self.panes = new

    # ---------------------------------------------------------------- output
    def drain_main(self) -> pd.DataFrame | None:
        """The fired windows' rows (input columns, aggregate in place) since the last call."""
        return self.drain_main_timed()[0]

    def drain_main_timed(self) -> tuple[pd.DataFrame | None, np.ndarray]:
        """``drain_main`` and each row's timestamp: its window's ``max_timestamp()``."""
        stamps = (
            np.concatenate(self._main_ts).astype(np.int64, copy=False) if self._main_ts
            else np.empty(0, dtype=np.int64)
        )
        self._main_ts.clear()
        return drain_frames(self._main), stamps

    def drain_late(self) -> pd.DataFrame | None:
        """The late elements sent to the late-data side output since the last call."""
        return drain_frames(self._late)

    # ------------------------------------------------------- object-based operator
    def to_operator(self) -> WindowOperator:
        """The equivalent :class:`WindowOperator`: same clocks, window contents and timers
        (registered in the order of each window's first element). Pending outputs must have
        been drained."""
        assert not self._main and not self._late, "drain outputs before converting"
        op = self._factory()
        op.current_watermark = self.current_watermark
        op.current_processing_time = self.current_processing_time
        op.num_late_records_dropped = self.num_late_records_dropped
        panes = self.panes
        if panes is None or not len(panes):
            return op
        index = _PaneIndex(self, panes)
        wm = self.current_watermark
        kc, starts = index.windows(_clip(wm - self.size - self.lateness + 2), 2 * _LIMIT)
        agg, first = index.combine(kc, starts)
        order = np.argsort(index.first[first], kind="stable")
        rows = index.rows(first[order], agg[order])
        columns = list(rows.columns)
        records = op.elements(tuple(columns), [column_values(rows[c]) for c in columns])
        make = TimeWindow.of
        for record, start in zip(records, starts[order].tolist()):
            key = op.key_of(record)
            window = make(start, start + self.size)
            op.window_contents[(key, window)] = record
            if window.max_timestamp() > wm:
                op.event_timers.register(window.max_timestamp(), key, window)
            cleanup = op.cleanup_time(window)
            if cleanup != MAX_LONG:
                op.event_timers.register(cleanup, key, window)
        return op

    # ------------------------------------------------------------- snapshots
    def snapshot(self) -> bytes:
        """The panes and clocks as one Arrow IPC stream."""
        meta = {
            "watermark": self.current_watermark,
            "processing_time": self.current_processing_time,
            "dropped": self.num_late_records_dropped,
            "next_seq": self.next_seq,
        }
        return write_frame(self.panes, FORMAT, _META_KEY, meta)

    def restore(self, data: bytes) -> None:
        self.panes, meta = read_frame(data, FORMAT, _META_KEY, "pane")
        self.current_watermark = meta["watermark"]
        self.current_processing_time = meta["processing_time"]
        self.num_late_records_dropped = meta["dropped"]
        self.next_seq = meta["next_seq"]


class _Sliding:
    """The assigner's geometry for :func:`assign_event_windows`."""

    def __init__(self, state: PaneAggregation) -> None:
        self.size, self.slide, self.offset = state.size, state.slide, state.offset


__all__ = ["FORMAT", "PaneAggregation", "supports"]
