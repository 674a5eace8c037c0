"""Columnar window state for a built-in aggregation under ``ContinuousEventTimeTrigger``.

The configuration of :mod:`flinkwin.operator.states.columnar` (a keyed ``sum``/``min``/``max``
over an integer field, tumbling or sliding event-time windows, no evictor) with
``ContinuousEventTimeTrigger.of(interval)`` as the trigger. Besides each pane's aggregate row,
:class:`ContinuousAggregation` keeps the trigger's state and the pane's timers as columns:

- the pending fire time ``f`` (the trigger's ``fire-time`` state): set by the pane's first
  element to ``min(ts - ts % interval + interval, max_timestamp)``, and after each firing at
  ``f`` to ``min(f + interval, max_timestamp)``;
  a pane whose first element fired it on arrival (allowed lateness) has none;
- the registration number of the pane's ``max_timestamp`` timer and of its fire-time timer
  (the same timer once ``f`` reaches ``max_timestamp``).

``advance_watermark`` fires, timestamp by timestamp, every timer ``<=`` the watermark in the
operator's order (timestamp, then registration; a fire-time timer registered by a firing comes
after every timer registered before it), emitting the pane's contents at each firing with its
window's ``max_timestamp()`` as timestamp, and drops panes at their cleanup time. A batch with an
element for a window the watermark passed (allowed lateness: it fires on arrival) goes to the
equivalent :class:`~flinkwin.operator.WindowOperator`, as in the columnar state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from flinkwin.operator.batch_windows import in_safe_band
from flinkwin.operator.snapshots import formats
from flinkwin.operator.states.columnar import (
    _END,
    _FIRED,
    _SEQ,
    _START,
    ColumnarAggregation,
)
from flinkwin.operator.states.columnar import supports as columnar_supports
from flinkwin.operator.states.operator_windows import records_frame
from flinkwin.time import MAX_LONG
from flinkwin.triggers.continuous_event_time import ContinuousEventTimeTrigger
from flinkwin.windows import TimeWindow

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator

#: The ``flinkwin.format`` of a snapshot of this state.
FORMAT = formats.written(formats.CONTINUOUS)
#: the pending fire time, and the registration number of its timer (when before max_timestamp)
_FIRE, _FSEQ = "_fw_fire", "_fw_fseq"
#: ``_FIRE`` of a pane without trigger state (its first element came after its window's end,
#: within the allowed lateness, and fired it on arrival)
_NO_FIRE = MAX_LONG


def supports(op: WindowOperator) -> bool:
    """True if ``op``'s configuration has this columnar equivalent (see module docstring)."""
    return columnar_supports(op, ContinuousEventTimeTrigger)


class ContinuousAggregation(ColumnarAggregation):
    """The panes of one key group for a configuration :func:`supports` accepts."""

    FORMAT = FORMAT
    PANE_COLUMNS = (_START, _END, _SEQ, _FIRED, _FIRE, _FSEQ)

    def __init__(self, template: WindowOperator, operator_factory: Callable[[], WindowOperator]):
        super().__init__(template, operator_factory)
        trigger = template.trigger
        assert type(trigger) is ContinuousEventTimeTrigger
        self.trigger = trigger
        self.interval = trigger.interval
        self.timer_margin = trigger.interval

    # ---------------------------------------------------------------- clocks
    def advance_watermark(self, watermark: int) -> None:
        """Fire every timer ``<= watermark`` in timer order (see module docstring), drop panes
        at their cleanup time. A watermark not greater than the current one is ignored."""
        watermark = int(watermark)
        if watermark <= self.current_watermark:
            return
        self.current_watermark = watermark
        panes = self.panes
        if panes is None or not len(panes):
            return
        max_ts = panes[_END].to_numpy() - 1
        fired = panes[_FIRED].to_numpy()
        fire = panes[_FIRE].to_numpy()
        pending = fire < max_ts  # a fire-time timer of its own
        due_end = ~fired & (max_ts <= watermark)
        due = np.flatnonzero((pending & (fire <= watermark)) | due_end)
        if len(due):
            fire, fseq, fired = self._fire(
                due, max_ts, fire.copy(), panes[_FSEQ].to_numpy().copy(), fired.copy(),
                panes[_SEQ].to_numpy(), watermark,
            )
            panes = panes.assign(**{_FIRE: fire, _FSEQ: fseq, _FIRED: fired})
        keep = self._cleanup(max_ts) > watermark
        self._derive(panes[keep] if not keep.all() else panes, keep)

    def _fire(
        self, due: np.ndarray, max_ts: np.ndarray, fire: np.ndarray, fseq: np.ndarray,
        fired: np.ndarray, seq: np.ndarray, watermark: int,
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Fire the timers of the panes ``due`` up to ``watermark``, one timestamp at a time;
        the updated fire times, fire-timer numbers and fired flags."""
        end = max_ts[due]
        f = fire[due]
        f_seq = fseq[due]
        m_seq = seq[due]
        f_pending = f < end
        end_pending = ~fired[due] & (end <= watermark)
        end_or_never = np.where(end_pending, end, MAX_LONG)
        rows: list[np.ndarray] = []
        next_seq = self.next_seq
        interval = self.interval
        while True:
            pending_at = np.where(f_pending, f, MAX_LONG)
            at = min(int(pending_at.min()), int(end_or_never.min()))
            if at > watermark or at == MAX_LONG:  # MAX_LONG: no timer left (none is there:
                break  # the safe band keeps every window's timers below it)
            at_fire = f_pending & (f == at)
            at_end = end_or_never == at  # never both: a pending fire time is before the end
            hit = np.flatnonzero(at_fire | at_end)
            hit = hit[np.argsort(np.where(at_fire[hit], f_seq[hit], m_seq[hit]), kind="stable")]
            steps = 1
            if not at_end.any():
                # a run: the same panes fire at at, at + interval, ... in the same order (each
                # firing renumbers them in firing order) while no other timer comes between
                # and none of them reaches its window's end
                others = int(np.where(at_fire, MAX_LONG, pending_at).min())
                last = min(watermark, others - 1, int(end_or_never.min()) - 1)
                steps = max(1, min((last - at) // interval + 1,
                                   (int(end[hit].min()) - 1 - at) // interval))
            if steps > 1:
                rows.append(np.tile(hit, steps))
                f[hit] = at + steps * interval
                f_seq[hit] = next_seq + (steps - 1) * len(hit) + np.arange(len(hit))
                next_seq += steps * len(hit)
                continue
            rows.append(hit)
            again = hit[at_fire[hit]]  # in firing order: their next timers register so
            f[again] = np.minimum(at + interval, end[again])
            f_pending[again] = f[again] < end[again]
            renumbered = again[f_pending[again]]
            f_seq[renumbered] = next_seq + np.arange(len(renumbered), dtype=np.int64)
            next_seq += len(renumbered)
            end_or_never[at_end] = MAX_LONG
        self.next_seq = next_seq
        fire[due], fseq[due] = f, f_seq
        fired[due] |= end_pending
        if rows:
            emitted = due[np.concatenate(rows)]
            self._main.append(self.panes.iloc[emitted])  # type: ignore[union-attr]
            self.num_windows_fired += len(emitted)
        return fire, fseq, fired

    def next_event_time_timer(self) -> int | None:
        if self.panes is None or not len(self.panes):
            return None
        max_ts = self.panes[_END].to_numpy() - 1
        fire = self.panes[_FIRE].to_numpy()
        timers = np.where(self.panes[_FIRED].to_numpy(), self._cleanup(max_ts), max_ts)
        return int(np.minimum(timers, np.where(fire < max_ts, fire, MAX_LONG)).min())

    # ----------------------------------------------------------------- input
    def _register(self, new: pd.DataFrame, first_ts: np.ndarray) -> None:
        """The new panes' trigger state and timers, as their first elements register them:
        the ``max_timestamp`` timer, then the first fire time's."""
        n = len(new)
        max_ts = new[_END].to_numpy() - 1
        start = first_ts - np.fmod(first_ts, self.interval)  # Java's remainder
        new[_FIRE] = np.minimum(start + self.interval, max_ts)
        new[_SEQ] = self.next_seq + 2 * np.arange(n, dtype=np.int64)
        new[_FSEQ] = new[_SEQ].to_numpy() + 1
        self.next_seq += 2 * n

    # ------------------------------------------------------- object-based operator
    def to_operator(self) -> WindowOperator:
        """The equivalent :class:`WindowOperator`: same clocks, contents, trigger state and
        timers (registered in this state's order). Pending outputs must have been drained."""
        op, panes, records = self._operator_records()
        if panes is None:
            return op
        fire_times = op.partitioned_state.table(self.trigger.state_desc)
        timers: list[tuple[int, int, int, tuple[Any, Any]]] = []
        make = TimeWindow.of
        for record, start, end, fired, seq, fire, fseq in zip(
            records, *(panes[c].tolist() for c in (_START, _END, _FIRED, _SEQ, _FIRE, _FSEQ))
        ):
            window = make(start, end)
            slot = (op.key_of(record), window)
            op.window_contents[slot] = record
            if fire != _NO_FIRE:
                fire_times[slot] = fire
            if not fired:
                timers.append((seq, 0, end - 1, slot))
            if fire < end - 1:
                timers.append((fseq, 0, fire, slot))
            cleanup = op.cleanup_time(window)
            if cleanup != MAX_LONG:
                timers.append((seq, 1, cleanup, slot))
        timers.sort(key=lambda t: (t[0], t[1]))
        for _, _, timestamp, (key, window) in timers:
            op.event_timers.register(timestamp, key, window)
        return op

    @classmethod
    def from_operator(
        cls, op: WindowOperator, operator_factory: Callable[[], WindowOperator],
        columns: list[str],
    ) -> ContinuousAggregation | None:
        """The columnar equivalent of ``op``, or None when its state has another shape:
        contents that are not records of ``columns`` with an integral aggregate, trigger state
        other than one fire time per window, timers other than each window's
        ``max_timestamp`` (until it fires), pending fire time and cleanup time, any other
        state. Timers firing at the same time keep their order."""
        trigger = op.trigger
        if type(trigger) is not ContinuousEventTimeTrigger:
            return None
        name = trigger.state_desc.name
        tables = {k: t for k, t in op.partitioned_state.tables.items() if t}
        if (
            set(tables) - {name} or op.function_state.num_entries()
            or op.merging_state or len(op.processing_timers)
        ):
            return None
        state = cls(op, operator_factory)
        state.current_watermark = op.current_watermark
        state.current_processing_time = op.current_processing_time
        state.num_late_records_dropped = op.num_late_records_dropped
        contents = op.window_contents
        fire_times = tables.get(name, {})
        if any(slot not in contents or type(f) is not int for slot, f in fire_times.items()):
            return None
        numbers = _timer_numbers(op, fire_times)
        if numbers is None:
            return None
        end_seq, fire_seq, cleanups, count = numbers
        if not contents:
            state.next_seq = count
            return state
        slots = list(contents)
        fired = [slot not in end_seq for slot in slots]
        for slot, f in zip(slots, fired):
            max_ts = slot[1].max_timestamp()
            fire = fire_times.get(slot, _NO_FIRE if f else None)
            if fire is None or (fire > max_ts and fire != _NO_FIRE) or (
                (fire < max_ts) != (slot in fire_seq)
            ):
                return None
        ends = np.array([slot[1].end for slot in slots], dtype=np.int64)
        fires = np.array([fire_times.get(slot, _NO_FIRE) for slot in slots], dtype=np.int64)
        if not state._in_band(np.concatenate([ends - 1, fires[fires != _NO_FIRE]])):
            return None
        panes = records_frame(
            list(contents.values()), columns, state.field, op, slots, fired, cleanups
        )
        if panes is None:
            return None
        panes[_START] = np.array([slot[1].start for slot in slots], dtype=np.int64)
        panes[_END] = ends
        panes[_SEQ] = np.array([end_seq.get(slot, -1) for slot in slots], dtype=np.int64)
        panes[_FIRED] = np.array(fired, dtype=bool)
        panes[_FIRE] = fires
        panes[_FSEQ] = np.array([fire_seq.get(slot, -1) for slot in slots], dtype=np.int64)
        state.panes = panes
        state.next_seq = count
        return state

    def _in_band(self, timestamps: np.ndarray) -> bool:
        """True if timer arithmetic on these window timestamps cannot overflow int64."""
        return in_safe_band(self.assigner, self.lateness, timestamps, self.timer_margin)


def _timer_numbers(
    op: WindowOperator, fire_times: dict[tuple[Any, Any], int]
) -> tuple[dict[Any, int], dict[Any, int], set[Any], int] | None:
    """Each held window's ``max_timestamp`` timer number and pending fire-time timer number
    (positions in firing order), the windows with a cleanup timer, and the number of timers;
    None when a timer is none of those."""
    contents = op.window_contents
    end_seq: dict[Any, int] = {}
    fire_seq: dict[Any, int] = {}
    cleanups: set[Any] = set()
    number = 0
    for ts, slots in op.event_timers.buckets():
        for slot in slots:
            window = slot[1]
            if slot not in contents or type(window) is not TimeWindow:
                return None
            known = False
            if ts == window.max_timestamp():
                end_seq[slot] = number
                known = True
            elif ts == fire_times.get(slot):
                fire_seq[slot] = number
                known = True
            if ts == op.cleanup_time(window):
                cleanups.add(slot)
                known = True
            if not known:
                return None
            number += 1
    return end_seq, fire_seq, cleanups, number


__all__ = ["FORMAT", "ContinuousAggregation", "supports"]
