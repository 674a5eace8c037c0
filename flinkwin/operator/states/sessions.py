"""Columnar event-time session windows for the built-in aggregations.

A keyed ``sum``/``min``/``max`` over an integer field on ``EventTimeSessionWindows.withGap``
with the default ``EventTimeTrigger`` and no evictor keeps, per in-flight session, one row: the
first element of the session's *state window* (the window whose state the session's merges were
folded into, Flink's ``MergingWindowSet`` mapping) with the aggregate in place of the field,
the session's bounds, its state window's bounds, the registration number of its
``max_timestamp`` timer and whether it fired (allowed lateness). :class:`SessionAggregation`
merges a whole batch into these rows with array operations and gives exactly
:class:`~flinkwin.operator.WindowOperator`'s results:

- each element's window ``[t, t + gap)`` and the sessions it touches (``merge_asof`` per key);
  intervals (touched sessions and element windows) sorted per key form connected components
  (windows that overlap or touch merge, as ``TimeWindow.mergeWindows``), each becomes one
  session;
- a component is *simple* when each of its elements, in processing order, touches the session
  grown so far (the component's one held session, if any, and the earlier elements' windows;
  out-of-order elements included): then it grew from one root and kept that root's state
  window, and its timer was registered by the last element that changed its bounds. Other
  components (elements bridging held sessions, where
  Flink's choice of the surviving state window follows Java's ``HashSet`` order, and elements
  whose own window is late that may merge into a session) are replayed element by element
  through the real :class:`~flinkwin.operator.merging_window_set.MergingWindowSet` on plain
  ints;
- firing, cleanup and snapshots are
  :class:`~flinkwin.operator.states.columnar.ColumnarAggregation`'s:
  sessions fire when the watermark passes their ``max_timestamp``, in (timestamp, registration)
  order.

A batch that would fire a session on arrival (an element within the allowed lateness, or
touching a session that already fired), with a non-integral field, or with timestamps near the
long limits is not taken (:meth:`SessionAggregation.accepts` is False); the caller continues
with :meth:`SessionAggregation.to_operator`, and can come back with
:meth:`SessionAggregation.from_operator`.

Why one module of some 540 lines: :class:`SessionAggregation` is one class whose batch merge
(components, simple rows, replay) shares the session rows' layout and the operator's timer
order; its array helpers are in :mod:`~flinkwin.operator.states.session_runs`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from flinkwin.assigners.session import EventTimeSessionWindows
from flinkwin.functions.base import FieldKeySelector
from flinkwin.functions.internal import REDUCING
from flinkwin.longs import safe_band
from flinkwin.operator.batch_windows import _codes
from flinkwin.operator.element_rows import column_values
from flinkwin.operator.frames import drain_frames, drain_frames_timed
from flinkwin.operator.merging_window_set import MergingWindowSet
from flinkwin.operator.snapshots import formats
from flinkwin.operator.states.columnar import (
    _END,
    _FIRED,
    _SEQ,
    _START,
    _UFUNCS,
    ColumnarAggregation,
)
from flinkwin.operator.states.operator_windows import records_frame, window_timers
from flinkwin.operator.states.session_runs import (
    _before,
    _by_key,
    _gather,
    _running,
    _touching,
    _wrap,
)
from flinkwin.time import MAX_LONG, MIN_LONG
from flinkwin.triggers.event_time import EventTimeTrigger
from flinkwin.windows import TimeWindow

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator

#: The ``flinkwin.format`` of a session snapshot.
FORMAT = formats.written(formats.SESSIONS)
_SW_START, _SW_END = "_fw_sw_start", "_fw_sw_end"
_SESSION_COLUMNS = (_START, _END, _SW_START, _SW_END, _SEQ, _FIRED)
#: New session rows: each row's source (a position among the held sessions, then among the
#: batch's elements), its aggregate, bounds, state window's bounds and timer registration.
_Rows = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def supports(op: WindowOperator) -> bool:
    """True if ``op``'s configuration has a columnar session equivalent (module docstring)."""
    spec = op.spec
    builtin = spec.builtin if spec.state_kind == REDUCING else None
    selector = op.key_selector
    return (
        type(op.assigner) is EventTimeSessionWindows
        and type(op.trigger) is EventTimeTrigger
        and op.evictor is None
        and spec.window_fn is None
        and builtin is not None
        and builtin.kind in _UFUNCS
        and type(selector) is FieldKeySelector
        and builtin.field not in selector.fields
    )


class SessionAggregation(ColumnarAggregation):
    """The in-flight sessions of one key group for a configuration :func:`supports` accepts."""

    FORMAT = FORMAT

    def __init__(self, template: WindowOperator, operator_factory: Callable[[], WindowOperator]):
        super().__init__(template, operator_factory)
        self.gap = int(template.assigner.session_timeout)  # type: ignore[attr-defined]

    # ----------------------------------------------------------------- input
    def accepts(self, frame: pd.DataFrame, timestamps: np.ndarray, watermark: int) -> bool:
        """True if, under ``watermark``, no element fires a session on arrival, the field is
        integral and the timestamps are far from the long limits (else :meth:`to_operator`)."""
        if len(timestamps) == 0:
            return True
        dtype = frame[self.field].dtype
        if not (dtype.kind == "i" or (dtype.kind == "u" and dtype.itemsize < 8)):
            return False
        low, high = safe_band(2 * self.gap + self.lateness + 1)
        if not (low <= int(timestamps.min()) and int(timestamps.max()) <= high):
            return False
        if not self.builtin.int64_exact and self._sum_may_overflow(frame):
            return False
        if self.lateness == 0:
            return True
        own_max = timestamps + (self.gap - 1)
        if bool(((own_max <= watermark) & (own_max + self.lateness > watermark)).any()):
            return False
        sessions = self.panes
        if sessions is None or not len(sessions):
            return True
        max_ts = sessions[_END].to_numpy() - 1
        fired = (max_ts <= watermark) & (self._cleanup(max_ts) > watermark)
        if not fired.any():
            return True
        held = sessions[fired]
        codes = _codes([
            np.concatenate([held[f].to_numpy(), frame[f].to_numpy()]) for f in self.key_fields
        ])
        pairs, _ = _touching(
            codes[len(held):], timestamps, timestamps + self.gap,
            codes[: len(held)], held[_START].to_numpy(), held[_END].to_numpy(),
        )
        return not len(pairs)

    def _sum_may_overflow(self, frame: pd.DataFrame) -> bool:
        """Conservatively: could a session's running sum overflow (all held sums may merge)?"""
        held = 0.0
        if self.panes is not None and len(self.panes):
            held = float(np.abs(self.panes[self.field].to_numpy(dtype=np.float64)).sum())
        values = frame[self.field].to_numpy()
        return self.builtin.sums_may_overflow(values, np.zeros(1, dtype=np.int64), [held])

    def process_batch(self, frame: pd.DataFrame, timestamps: np.ndarray) -> None:
        """Merge the rows of ``frame`` (in processing order) into the sessions; the batch must
        be one :meth:`accepts` under the current watermark."""
        n = len(frame)
        if n == 0:
            return
        wm, gap = self.current_watermark, self.gap
        old = self.panes if self.panes is not None else frame.iloc[:0].assign(
            **{c: np.empty(0, dtype=np.int64) for c in _SESSION_COLUMNS}
        )
        n_old = len(old)
        codes = _codes([
            np.concatenate([old[f].to_numpy(), frame[f].to_numpy()]) for f in self.key_fields
        ])
        okey, ekey = codes[:n_old], codes[n_old:]
        ostart, oend = old[_START].to_numpy(dtype=np.int64), old[_END].to_numpy(dtype=np.int64)
        estart = timestamps.astype(np.int64, copy=False)
        eend = estart + gap
        pair_elem, pair_sess = _touching(ekey, estart, eend, okey, ostart, oend)

        # elements whose own window is late: kept only if they may merge into a session
        late_alone = self._cleanup(eend - 1) <= wm
        candidate = np.ones(n, dtype=bool)
        late_idx: list[int] = []
        if late_alone.any():
            near = np.zeros(n, dtype=bool)
            near[pair_elem] = True
            by_key = np.lexsort((estart, ekey))
            k_sorted, s_sorted = ekey[by_key], estart[by_key]
            close = (k_sorted[1:] == k_sorted[:-1]) & (s_sorted[1:] - s_sorted[:-1] <= gap)
            neighbour = np.zeros(n, dtype=bool)
            neighbour[by_key[1:][close]] = True
            neighbour[by_key[:-1][close]] = True
            candidate = ~late_alone | near | neighbour
            late_idx = np.flatnonzero(~candidate).tolist()

        elem = np.flatnonzero(candidate)
        marked = np.zeros(n_old, dtype=bool)
        marked[pair_sess[candidate[pair_elem]]] = True
        touched = np.flatnonzero(marked)
        values = frame[self.field].to_numpy()
        keep = np.ones(n_old, dtype=bool)
        keep[touched] = False
        kept = np.flatnonzero(keep)
        rows = [(kept, *(old[c].to_numpy(dtype=np.int64)[kept]
                         for c in (self.field, *_SESSION_COLUMNS[:-1])))]
        fired = [old[_FIRED].to_numpy(dtype=bool)[kept]]
        if len(elem):
            late_idx += self._merge_components(
                frame, old, elem, touched, ekey, okey, estart, values, late_alone, rows
            )
        self.next_seq += n
        self.panes = self._sessions(frame, old, rows, fired)
        if late_idx:
            late = np.sort(np.asarray(late_idx, dtype=np.int64))
            if self.late_tag is None:
                self.num_late_records_dropped += len(late)
            else:
                self._late.append(frame.iloc[late])

    def _sessions(
        self, frame: pd.DataFrame, old: pd.DataFrame, rows: list[_Rows],
        fired: list[np.ndarray],
    ) -> pd.DataFrame | None:
        """The sessions ``rows`` describe as one frame (None if there are none): each row's
        input columns from its source (a position in ``old``, then in ``frame``), the
        aggregate in the field, then the session columns (``fired``: the first rows' flags,
        the others have not fired)."""
        source, *numbers = (np.concatenate(c) for c in zip(*rows))
        if not len(source):
            return None
        columns: dict[str, Any] = {}
        for c in old.columns[: len(old.columns) - len(_SESSION_COLUMNS)]:
            columns[c] = numbers[0] if c == self.field else _gather(old[c], frame[c], source)
        columns.update(zip(_SESSION_COLUMNS[:-1], numbers[1:]))
        flags = np.zeros(len(source), dtype=bool)
        head = np.concatenate(fired)
        flags[: len(head)] = head
        columns[_FIRED] = flags
        return pd.DataFrame(columns, copy=False)

    def _merge_components(
        self, frame: pd.DataFrame, old: pd.DataFrame, elem: np.ndarray, touched: np.ndarray,
        ekey: np.ndarray, okey: np.ndarray, estart: np.ndarray, values: np.ndarray,
        late_alone: np.ndarray, rows: list[_Rows],
    ) -> list[int]:
        """Append the new sessions of every component to ``rows``; return the elements the
        replay found late."""
        gap = self.gap
        n_t = len(touched)
        # intervals: touched sessions (order -1), then candidate elements (order = position)
        key = np.concatenate([okey[touched], ekey[elem]])
        start = np.concatenate([old[_START].to_numpy(dtype=np.int64)[touched], estart[elem]])
        end = np.concatenate([old[_END].to_numpy(dtype=np.int64)[touched], estart[elem] + gap])
        srt = _by_key(key, start)
        k_s, s_s, e_s = key[srt], start[srt], end[srt]
        new_key = np.ones(len(srt), dtype=bool)
        new_key[1:] = k_s[1:] != k_s[:-1]
        run_max = _running(np.maximum, e_s, new_key)
        new_comp = np.ones(len(srt), dtype=bool)
        new_comp[1:] = (k_s[1:] != k_s[:-1]) | (s_s[1:] > run_max[:-1])
        comp_sorted = np.cumsum(new_comp) - 1
        comp = np.empty(len(key), dtype=np.int64)
        comp[srt] = comp_sorted
        n_comp = int(comp_sorted[-1]) + 1
        win_start = s_s[new_comp]
        win_end = np.maximum.reduceat(e_s, np.flatnonzero(new_comp))

        sess_comp = comp[:n_t]
        n_init = np.bincount(sess_comp, minlength=n_comp)
        ec = comp[n_t:]
        has_late = np.bincount(ec, weights=late_alone[elem], minlength=n_comp) > 0
        # elements per component in processing order
        eo = np.argsort(ec, kind="stable")  # (elem ascends)
        ec_o, el_o = ec[eo], elem[eo]
        t_o = estart[el_o]
        first = np.ones(len(eo), dtype=bool)
        first[1:] = ec_o[1:] != ec_o[:-1]
        sess_of = np.full(n_comp, -1, dtype=np.int64)  # the component's held session, if one
        sess_of[sess_comp] = touched
        held = sess_of >= 0
        lo0 = np.full(n_comp, MAX_LONG, dtype=np.int64)  # the held session's bounds, if one
        hi0 = np.full(n_comp, MIN_LONG, dtype=np.int64)
        lo0[held] = old[_START].to_numpy(dtype=np.int64)[sess_of[held]]
        hi0[held] = old[_END].to_numpy(dtype=np.int64)[sess_of[held]]
        # the session each element meets: the held session and the component's earlier
        # elements' windows, [lo, hi) (one session as long as every element touched it)
        lo = _before(_running(np.minimum, t_o, first), first, MAX_LONG)
        hi = _before(_running(np.maximum, t_o, first), first, MIN_LONG)
        hi[~first] += gap
        lo = np.minimum(lo, lo0[ec_o])
        hi = np.maximum(hi, hi0[ec_o])
        opens = first & ~held[ec_o]  # a component's first element with no held session
        broken = ~opens & ((t_o > hi) | (t_o + gap < lo))
        changed = opens | (t_o < lo) | (t_o + gap > hi)
        chain_ok = np.bincount(ec_o, weights=broken, minlength=n_comp) == 0
        simple = (n_init <= 1) & ~has_late & chain_ok

        # ---- simple components: one root, the session grown by each element in turn
        sel = simple[ec_o]
        if sel.any():
            rows.append(self._simple_rows(
                old, ec_o[sel], el_o[sel], t_o[sel], first[sel], changed[sel], values,
                sess_of, win_start, win_end,
            ))
        late: list[int] = []
        if not simple.all():
            hard = np.flatnonzero(~simple)
            late = self._replay(old, hard, ec_o, el_o, sess_comp, touched, estart, values, rows)
        return late

    def _simple_rows(
        self, old: pd.DataFrame, comp: np.ndarray, elems: np.ndarray,
        t: np.ndarray, first: np.ndarray, changed: np.ndarray, values: np.ndarray,
        sess_of: np.ndarray, win_start: np.ndarray, win_end: np.ndarray,
    ) -> _Rows:
        """The sessions of components that grew from one root (``changed``: the elements that
        changed their session's bounds; the last one registered its timer): held sessions
        first, then new ones."""
        gap = self.gap
        bounds = np.flatnonzero(first)
        comps = comp[bounds]
        held = sess_of[comps]
        has = held >= 0
        last_change = np.maximum.reduceat(np.where(changed, elems, -1), bounds)
        agg = _UFUNCS[self.kind].reduceat(values[elems].astype(np.int64), bounds)
        if has.any():
            held_agg = old[self.field].to_numpy()[held[has]].astype(np.int64)
            agg[has] = _UFUNCS[self.kind](held_agg, agg[has])
        source = np.where(has, held, len(old) + elems[bounds])
        order = np.concatenate([np.flatnonzero(has), np.flatnonzero(~has)])

        def held_or(column: str, default: np.ndarray) -> np.ndarray:
            out = default.copy()
            out[has] = old[column].to_numpy(dtype=np.int64)[held[has]]
            return out

        sw_start = held_or(_SW_START, t[bounds])
        sw_end = held_or(_SW_END, t[bounds] + gap)
        seq = np.where(
            last_change >= 0, self.next_seq + last_change, held_or(_SEQ, last_change)
        )
        return (
            source[order], agg[order], win_start[comps][order], win_end[comps][order],
            sw_start[order], sw_end[order], seq[order],
        )

    def _replay(
        self, old: pd.DataFrame, hard: np.ndarray, ec_o: np.ndarray,
        el_o: np.ndarray, sess_comp: np.ndarray, touched: np.ndarray, estart: np.ndarray,
        values: np.ndarray, rows: list[_Rows],
    ) -> list[int]:
        """Replay the elements of components ``hard`` through ``MergingWindowSet`` (Flink's
        choice of surviving state windows); append their sessions to ``rows``, return the
        elements found late."""
        gap, wm = self.gap, self.current_watermark
        kind = self.kind
        ostart = old[_START].tolist()
        oend = old[_END].tolist()
        osws = old[_SW_START].tolist()
        oswe = old[_SW_END].tolist()
        oseq = old[_SEQ].tolist()
        oagg = old[self.field].tolist()
        ts_list = estart.tolist()
        val_list = values.tolist()
        lateness = self.lateness
        late: list[int] = []
        # per result session: (source ("o" held row / "e" element), index, agg, window, sw, seq)
        out_src: list[tuple[str, int]] = []
        out_cols: list[tuple[int, int, int, int, int, int]] = []
        hard_set = set(hard.tolist())
        sessions_of: dict[int, list[int]] = {}
        for j, c in zip(touched.tolist(), sess_comp.tolist()):
            if c in hard_set:
                sessions_of.setdefault(c, []).append(j)
        elems_of: dict[int, list[int]] = {}
        for c, e in zip(ec_o.tolist(), el_o.tolist()):
            if c in hard_set:
                elems_of.setdefault(c, []).append(e)

        def combine(a: int, b: int) -> int:
            if kind == "sum":
                return a + b
            return min(a, b) if kind == "min" else max(a, b)

        for c in hard.tolist():
            make = TimeWindow.of
            contents: dict[TimeWindow, list[Any]] = {}
            seqs: dict[TimeWindow, int] = {}
            state: list[tuple[Any, Any]] = []
            for j in sessions_of.get(c, []):
                window, sw = make(ostart[j], oend[j]), make(osws[j], oswe[j])
                state.append((window, sw))
                contents[sw] = ["o", j, oagg[j]]
                seqs[window] = oseq[j]
            merging = MergingWindowSet(self.assigner, state)

            def merge(
                result: Any, merged: list[Any], target: Any, sources: list[Any],
                contents: dict[TimeWindow, list[Any]] = contents,
            ) -> None:
                for source in sources:
                    if source != target and source in contents:
                        contents[target][2] = combine(contents[target][2], contents.pop(source)[2])

            for e in elems_of.get(c, []):
                t = ts_list[e]
                existed = set(merging.mapping)
                actual = merging.add_window(make(t, t + gap), merge)
                if actual.max_timestamp() + lateness <= wm:
                    merging.retire_window(actual)
                    late.append(e)
                    continue
                if actual not in existed:
                    seqs[actual] = self.next_seq + e
                sw = merging.get_state_window(actual)
                if sw in contents:
                    contents[sw][2] = combine(contents[sw][2], val_list[e])
                else:
                    contents[sw] = ["e", e, val_list[e]]
            for window, sw in merging.mapping.items():
                source, index, agg = contents[sw]
                out_src.append((source, index))
                out_cols.append((_wrap(agg), window.start, window.end, sw.start, sw.end,
                                 seqs[window]))
        if out_src:
            n_old = len(old)
            from_old = [i for i, (s, _) in enumerate(out_src) if s == "o"]
            from_new = [i for i, (s, _) in enumerate(out_src) if s == "e"]
            source = np.array([out_src[i][1] for i in from_old]
                              + [n_old + out_src[i][1] for i in from_new], dtype=np.int64)
            cols = np.array([out_cols[i] for i in from_old + from_new], dtype=np.int64)
            rows.append((source, *cols.T))
        return late

    # ---------------------------------------------------------------- output
    def drain_main(self) -> pd.DataFrame | None:
        """The fired sessions' rows (input columns, aggregate in place) since the last call."""
        return drain_frames(self._main, drop=_SESSION_COLUMNS)

    def drain_main_timed(self) -> tuple[pd.DataFrame | None, np.ndarray]:
        """``drain_main`` and each row's timestamp: its session's ``max_timestamp()``."""
        return drain_frames_timed(self._main, (_START, _SW_START, _SW_END, _SEQ, _FIRED), _END)

    # ------------------------------------------------------- object-based operator
    def to_operator(self) -> WindowOperator:
        """The equivalent :class:`WindowOperator`: same clocks, contents, merging-window
        sets and timers (registered in this state's order). Outputs must have been drained."""
        assert not self._main and not self._late, "drain outputs before converting"
        op = self._factory()
        op.current_watermark = self.current_watermark
        op.current_processing_time = self.current_processing_time
        op.num_late_records_dropped = self.num_late_records_dropped
        sessions = self.panes
        if sessions is None or not len(sessions):
            return op
        sessions = sessions.sort_values(_SEQ, kind="stable")
        columns = [c for c in sessions.columns if c not in _SESSION_COLUMNS]
        records = op.elements(tuple(columns), [column_values(sessions[c]) for c in columns])
        make = TimeWindow.of
        bounds = zip(*(sessions[c].tolist() for c in _SESSION_COLUMNS if c != _SEQ))
        for record, (start, end, sw_start, sw_end, fired) in zip(records, bounds):
            key = op.key_of(record)
            window, state_window = make(start, end), make(sw_start, sw_end)
            op.window_contents[(key, state_window)] = record
            op.merging_state.setdefault(key, []).append((window, state_window))
            if not fired:
                op.event_timers.register(end - 1, key, window)
            cleanup = op.cleanup_time(window)
            if cleanup != MAX_LONG:
                op.event_timers.register(cleanup, key, window)
        return op

    @classmethod
    def from_operator(
        cls, op: WindowOperator, operator_factory: Callable[[], WindowOperator],
        columns: list[str],
    ) -> SessionAggregation | None:
        """The columnar equivalent of ``op``, or None when its state has another shape (see
        :meth:`ColumnarAggregation.from_operator`); every content must belong to an in-flight
        session's state window."""
        if (
            op.partitioned_state.num_entries() or op.function_state.num_entries()
            or len(op.processing_timers)
        ):
            return None
        state = cls(op, operator_factory)
        state.current_watermark = op.current_watermark
        state.current_processing_time = op.current_processing_time
        state.num_late_records_dropped = op.num_late_records_dropped
        contents = op.window_contents
        inflight = [
            (key, window, sw) for key, pairs in op.merging_state.items() for window, sw in pairs
        ]
        if len(inflight) != len(contents) or any(
            (key, sw) not in contents or type(window) is not TimeWindow
            for key, window, sw in inflight
        ):
            return None
        timers = window_timers(op, {(key, window) for key, window, _ in inflight})
        if timers is None:
            return None
        seq, cleanups = timers
        if not inflight:
            return state
        records = [contents[(key, sw)] for key, _, sw in inflight]
        slots = [(key, window) for key, window, _ in inflight]
        fired = [slot not in seq for slot in slots]
        sessions = records_frame(records, columns, state.field, op, slots, fired, cleanups)
        if sessions is None:
            return None
        after = len(seq)
        sessions[_START] = np.array([w.start for _, w, _ in inflight], dtype=np.int64)
        sessions[_END] = np.array([w.end for _, w, _ in inflight], dtype=np.int64)
        sessions[_SW_START] = np.array([sw.start for _, _, sw in inflight], dtype=np.int64)
        sessions[_SW_END] = np.array([sw.end for _, _, sw in inflight], dtype=np.int64)
        sessions[_SEQ] = np.array(
            [seq[slot] if slot in seq else after + i for i, slot in enumerate(slots)],
            dtype=np.int64,
        )
        sessions[_FIRED] = np.array(fired, dtype=bool)
        state.panes = sessions
        state.next_seq = after + len(slots)
        return state


__all__ = ["FORMAT", "SessionAggregation", "supports"]
