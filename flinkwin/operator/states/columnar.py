"""Columnar window state for the built-in aggregations: the common case without Python objects.

A keyed ``sum``/``min``/``max`` over an integer field, on tumbling or sliding event-time
windows with the default ``EventTimeTrigger`` and no evictor, keeps per pane (key, window) only
the first element's row with the aggregate in place of the field (Flink's built-in aggregation
semantics), plus when the pane's timers were registered. :class:`ColumnarAggregation` holds all
panes of a key group as one pandas DataFrame and does, for whole batches, exactly what
:class:`~flinkwin.operator.WindowOperator` does:

- ``process_batch``: assign windows with numpy; elements whose every window is past its cleanup
  time are late (side output or dropped, as in the operator); the other elements are folded
  into their panes (one group-by for the batch, one for merging into the existing panes); new
  panes are numbered in the order the operator would register their timers;
- ``advance_watermark``: panes whose ``max_timestamp`` is ``<=`` the watermark fire, in timer
  order (timestamp, then registration), and are dropped at their cleanup time
  (``max_timestamp + allowed lateness``).

An element arriving for a window the watermark already passed (allowed lateness) fires that
window on arrival; such a batch is not taken here (:meth:`ColumnarAggregation.accepts` is
False) and the caller continues with :meth:`ColumnarAggregation.to_operator`, the equivalent
object-based operator. Snapshots are one Arrow IPC stream of the panes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa

from flinkwin.assigners.sliding import SlidingEventTimeWindows
from flinkwin.assigners.stagger import WindowStagger
from flinkwin.assigners.tumbling import TumblingEventTimeWindows
from flinkwin.functions.base import FieldKeySelector
from flinkwin.functions.internal import REDUCING
from flinkwin.keys import float_codes
from flinkwin.operator.batch_windows import _codes, assign_event_windows, in_safe_band
from flinkwin.operator.element_rows import column_values
from flinkwin.operator.frames import (
    ArrowColumns,
    drain_frames,
    drain_frames_timed,
    read_frame,
    write_frame,
)
from flinkwin.operator.ordering import stable_order
from flinkwin.operator.snapshots import formats
from flinkwin.operator.states.operator_windows import records_frame, window_timers
from flinkwin.operator.states.pane_lookup import PaneLookup, identities
from flinkwin.time import MAX_LONG, MIN_LONG
from flinkwin.triggers.event_time import EventTimeTrigger
from flinkwin.windows import TimeWindow

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator

#: The ``flinkwin.format`` of a columnar snapshot.
FORMAT = formats.written(formats.COLUMNAR)
_META_KEY = "flinkwin.columnar"
_START, _END, _SEQ, _FIRED = "_fw_start", "_fw_end", "_fw_seq", "_fw_fired"
_PANE_COLUMNS = (_START, _END, _SEQ, _FIRED)
_UFUNCS = {"sum": np.add, "min": np.minimum, "max": np.maximum}
#: held panes per batch pane from which a batch is matched through the lookup (measured with
#: bench/bench_key_group.py: below it, coding both together costs less than the lookup's upkeep)
_LOOKUP_FROM = 8


def supports(op: WindowOperator, trigger: type = EventTimeTrigger) -> bool:
    """True if ``op``'s configuration has a columnar equivalent (see module docstring); with
    ``trigger``, the same configuration under that trigger class."""
    spec = op.spec
    builtin = spec.builtin if spec.state_kind == REDUCING else None
    selector = op.key_selector
    return (
        type(op.assigner) in (TumblingEventTimeWindows, SlidingEventTimeWindows)
        and getattr(op.assigner, "window_stagger", WindowStagger.ALIGNED)
        is WindowStagger.ALIGNED
        and type(op.trigger) is trigger
        and op.evictor is None
        and spec.window_fn is None
        and builtin is not None
        and builtin.kind in _UFUNCS
        and type(selector) is FieldKeySelector
        and builtin.field not in selector.fields
    )


class ColumnarAggregation:
    """The panes of one key group for a configuration :func:`supports` accepts."""

    #: The ``flinkwin.format`` this class writes and reads.
    FORMAT = FORMAT
    #: The pane bookkeeping columns (not part of an output row).
    PANE_COLUMNS: tuple[str, ...] = _PANE_COLUMNS
    #: How far beyond a window's bounds timer arithmetic reaches (see ``in_safe_band``).
    timer_margin = 0

    def __init__(self, template: WindowOperator, operator_factory: Callable[[], WindowOperator]):
        builtin = template.spec.builtin
        assert builtin is not None and type(template.key_selector) is FieldKeySelector
        self.assigner = template.assigner
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
        #: the panes' lookup and Arrow columns, while they follow ``panes`` (see _derive)
        self._lookup: PaneLookup | None = None
        self._no_lookup: pd.DataFrame | None = None  # a frame that has none
        self._arrow = ArrowColumns()
        self._main: list[pd.DataFrame] = []
        self._late: list[pd.DataFrame] = []

    # ---------------------------------------------------------------- clocks
    def advance_processing_time(self, time: int) -> None:
        self.current_processing_time = int(time)

    def advance_watermark(self, watermark: int) -> None:
        """Fire panes whose ``max_timestamp <= watermark`` (timer order), drop panes at their
        cleanup time. A watermark that is not greater than the current one is ignored."""
        watermark = int(watermark)
        if watermark <= self.current_watermark:
            return
        self.current_watermark = watermark
        panes = self.panes
        if panes is None or not len(panes):
            return
        max_ts = panes[_END].to_numpy() - 1
        fired = panes[_FIRED].to_numpy()
        due = ~fired & (max_ts <= watermark)
        if due.any():
            firing = panes[due]
            order = np.lexsort((firing[_SEQ].to_numpy(), max_ts[due]))
            self._main.append(firing.iloc[order])
            self.num_windows_fired += len(firing)
        cleanup = self._cleanup(max_ts)
        keep = cleanup > watermark
        if self.lateness > 0:
            panes = panes.assign(**{_FIRED: fired | due})
        self._derive(panes[keep] if not keep.all() else panes, keep)

    def _derive(self, panes: pd.DataFrame, kept: np.ndarray | None) -> None:
        """The panes become ``panes``: the current ones where ``kept`` (all when None), in
        their order, then any new ones; the held panes' keys and first elements unchanged.
        The lookup and the Arrow columns follow (other assignments to ``panes`` leave them
        stale, and they are rebuilt)."""
        old = self.panes
        if old is not None:
            self._arrow.follow(old, panes, kept)
            lookup = self._lookup
            if lookup is not None:
                self._lookup = None if lookup.frame is not old else lookup.follow(
                    panes, kept, self.key_fields, _START
                )
        self.panes = panes

    def _lookup_of(self, panes: pd.DataFrame) -> PaneLookup | None:
        """The lookup of ``panes`` (the held ones), built if stale; None if it has none."""
        lookup = self._lookup
        if lookup is not None and lookup.frame is panes:
            return lookup
        if self._no_lookup is panes:
            return None
        self._lookup = lookup = PaneLookup.of(panes, self.key_fields, _START)
        self._no_lookup = panes if lookup is None else None
        return lookup

    def _cleanup(self, max_ts: np.ndarray) -> np.ndarray:
        if self.lateness == 0:
            return max_ts
        return np.where(max_ts > MAX_LONG - self.lateness, MAX_LONG, max_ts + self.lateness)

    def next_event_time_timer(self) -> int | None:
        if self.panes is None or not len(self.panes):
            return None
        max_ts = self.panes[_END].to_numpy() - 1
        timers = np.where(self.panes[_FIRED].to_numpy(), self._cleanup(max_ts), max_ts)
        return int(timers.min())

    def next_processing_time_timer(self) -> int | None:
        return None

    def holds_nothing(self) -> bool:
        return self.panes is None or not len(self.panes)

    def state_size(self) -> tuple[int, int]:
        """(keys, windows) held: the distinct keys of the panes (as ``Double.equals`` tells
        float keys apart), and the panes."""
        if self.panes is None or not len(self.panes):
            return 0, 0
        lookup = self._lookup
        if lookup is not None and lookup.frame is self.panes:
            return lookup.distinct_keys(), len(self.panes)
        columns = [self.panes[f].to_numpy() for f in self.key_fields]
        if len(columns) == 1:  # (no codes needed: the distinct values' count)
            column = columns[0]
            distinct = pd.unique(float_codes(column) if column.dtype.kind == "f" else column)
            return len(distinct), len(self.panes)
        return int(_codes(columns).max()) + 1, len(self.panes)

    # ----------------------------------------------------------------- input
    def accepts(self, frame: pd.DataFrame, timestamps: np.ndarray, watermark: int) -> bool:
        """True if, under ``watermark``, no element of the batch fires a window on arrival
        and the aggregated column is integral (otherwise use :meth:`to_operator`)."""
        return self._accepts(frame, timestamps, watermark, sums_checked=False)

    def accepts_partials(
        self, frame: pd.DataFrame, timestamps: np.ndarray, watermark: int
    ) -> bool:
        """:meth:`accepts` for partial rows whose sums the caller checked for overflow
        (:mod:`flinkwin.operator.states.partials`)."""
        return self._accepts(frame, timestamps, watermark, sums_checked=True)

    def _accepts(
        self, frame: pd.DataFrame, timestamps: np.ndarray, watermark: int, sums_checked: bool
    ) -> bool:
        if len(timestamps) == 0:
            return True
        kinds = "i" if self.kind == "sum" else "iu"
        if frame[self.field].dtype.kind not in kinds or bool((timestamps <= MIN_LONG).any()):
            return False
        if not in_safe_band(self.assigner, self.lateness, timestamps, self.timer_margin):
            return False
        if (
            not self.builtin.int64_exact and not sums_checked and self._sum_may_overflow(frame)
        ):
            return False
        _, _, ends = assign_event_windows(self.assigner, timestamps)
        max_ts = ends - 1
        live = self._cleanup(max_ts) > watermark
        return not bool((max_ts[live] <= watermark).any())

    def _sum_may_overflow(self, frame: pd.DataFrame) -> bool:
        """Conservatively: could a pane's running sum overflow in this batch?"""
        held = 0
        if self.panes is not None and len(self.panes):
            held = int(np.abs(self.panes[self.field].to_numpy(dtype=np.float64)).max())
        values = frame[self.field].to_numpy()
        return self.builtin.sums_may_overflow(values, np.zeros(1, dtype=np.int64), [held])

    def process_batch(self, frame: pd.DataFrame, timestamps: np.ndarray) -> None:
        """Process the rows of ``frame`` (in processing order) with their timestamps; the batch
        must be one :meth:`accepts` under the current watermark."""
        self.process_partial_batch(frame, timestamps, None)

    def process_partial_batch(
        self, frame: pd.DataFrame, timestamps: np.ndarray, counts: np.ndarray | None
    ) -> None:
        """:meth:`process_batch` for rows that stand for ``counts`` elements each (partial
        aggregates, :mod:`flinkwin.operator.states.partials`): late elements are counted so."""
        if len(frame) == 0:
            return
        wm = self.current_watermark
        elem, starts, ends = assign_event_windows(self.assigner, timestamps)
        live = self._cleanup(ends - 1) > wm
        if not live.all():
            has_live = np.zeros(len(frame), dtype=bool)
            has_live[elem[live]] = True
            late = ~has_live & (timestamps + self.lateness <= wm)
            if late.any():
                if self.late_tag is None:
                    dropped = late.sum() if counts is None else counts[late].sum()
                    self.num_late_records_dropped += int(dropped)
                else:
                    self._late.append(frame[late])
            elem, starts, ends = elem[live], starts[live], ends[live]
        if len(elem) == 0:
            return
        keys = [frame[f].to_numpy()[elem] for f in self.key_fields]
        pane_ids = _codes([*keys, starts])
        order = stable_order(pane_ids)
        bounds = np.concatenate(([0], np.cumsum(np.bincount(pane_ids))))
        first_pair = order[bounds[:-1]]
        values = frame[self.field].to_numpy()[elem[order]]
        reduced = _UFUNCS[self.kind].reduceat(values, bounds[:-1])
        # each pane's first element's row, the aggregate in place of the field
        rows = elem[first_pair]
        columns: dict[str, Any] = {
            name: reduced if name == self.field else frame[name].array.take(rows)
            for name in frame.columns
        }
        columns[_START] = starts[first_pair]
        columns[_END] = ends[first_pair]
        columns[_SEQ] = np.arange(len(rows), dtype=np.int64)
        columns[_FIRED] = np.zeros(len(rows), dtype=bool)
        self._merge(pd.DataFrame(columns, copy=False), timestamps[rows])

    def _merge(self, new: pd.DataFrame, first_ts: np.ndarray) -> None:
        """Fold the batch's panes (``first_ts``: the timestamp of each one's first element)
        into the existing ones: existing panes keep their first element and registration
        number; new panes are numbered after them."""
        old = self.panes
        if old is not None and len(old):
            positions = self._held_positions(old, new)
            matched = positions >= 0
            if matched.any():
                acc = old[self.field].to_numpy().copy()
                if self.kind == "sum":
                    acc = acc.astype(np.int64)  # long sums, wrapping as Java's
                values = new[self.field].to_numpy()
                _UFUNCS[self.kind].at(acc, positions[matched], values[matched])
                old = old.assign(**{self.field: acc})
                new = new[~matched].reset_index(drop=True)
                first_ts = first_ts[~matched]
        self._register(new, first_ts)
        if old is None or not len(old):
            self.panes = new
        else:
            self._derive(pd.concat([old, new], ignore_index=True), None)

    def _held_positions(self, old: pd.DataFrame, new: pd.DataFrame) -> np.ndarray:
        """The position among the held panes ``old`` of each of the batch's panes ``new``
        (-1: not held): by the lookup, in time proportional to the batch, when the held panes
        outnumber the batch's (coding is faster for a small state, and then no lookup is kept
        up to date), or else by coding held and new panes together."""
        if len(old) < _LOOKUP_FROM * len(new):
            self._lookup = None
            lookup = None
        else:
            lookup = self._lookup_of(old)
        if lookup is not None and all(new[c].dtype == old[c].dtype for c in self.key_fields):
            keys = identities([new[c].to_numpy() for c in self.key_fields])
            if keys is not None:
                return lookup.find(keys, new[_START].to_numpy())
        n_old = len(old)
        ids = _codes([
            np.concatenate([old[c].to_numpy(), new[c].to_numpy()])
            for c in (*self.key_fields, _START)
        ])
        held = ids[n_old:]
        return np.where(held < n_old, held, -1)  # ids number the old panes 0 .. n_old - 1

    def _register(self, new: pd.DataFrame, first_ts: np.ndarray) -> None:
        """Number the timers of the batch's new panes (in their order of first appearance, as
        the operator registers them), after all existing ones."""
        new[_SEQ] = self.next_seq + np.arange(len(new), dtype=np.int64)
        self.next_seq += len(new)

    # ---------------------------------------------------------------- output
    def drain_main(self) -> pd.DataFrame | None:
        """The fired panes' rows (input columns, aggregate in place) since the last call."""
        return drain_frames(self._main, drop=self.PANE_COLUMNS)

    def drain_main_timed(self) -> tuple[pd.DataFrame | None, np.ndarray]:
        """``drain_main`` and each row's timestamp: its window's ``max_timestamp()``."""
        drop = tuple(c for c in self.PANE_COLUMNS if c != _END)
        return drain_frames_timed(self._main, drop, _END)

    def drain_late(self) -> pd.DataFrame | None:
        """The late elements sent to the late-data side output since the last call."""
        return drain_frames(self._late, drop=())

    # ------------------------------------------------------- object-based operator
    def to_operator(self) -> WindowOperator:
        """The equivalent :class:`WindowOperator`: same clocks, contents and timers (registered
        in this state's order). Pending outputs must have been drained."""
        op, panes, records = self._operator_records()
        if panes is None:
            return op
        make = TimeWindow.of
        for record, start, end, fired in zip(
            records, panes[_START].tolist(), panes[_END].tolist(), panes[_FIRED].tolist()
        ):
            key = op.key_of(record)
            window = make(start, end)
            op.window_contents[(key, window)] = record
            if not fired:
                op.event_timers.register(end - 1, key, window)
            cleanup = op.cleanup_time(window)
            if cleanup != MAX_LONG:
                op.event_timers.register(cleanup, key, window)
        return op

    def _operator_records(self) -> tuple[WindowOperator, pd.DataFrame | None, list[Any]]:
        """A new operator with this state's clocks, the panes in registration order (None
        when there are none) and their rows as the operator's elements."""
        assert not self._main and not self._late, "drain outputs before converting"
        op = self._factory()
        op.current_watermark = self.current_watermark
        op.current_processing_time = self.current_processing_time
        op.num_late_records_dropped = self.num_late_records_dropped
        panes = self.panes
        if panes is None or not len(panes):
            return op, None, []
        panes = panes.sort_values(_SEQ, kind="stable")
        columns = [c for c in panes.columns if c not in self.PANE_COLUMNS]
        records = op.elements(tuple(columns), [column_values(panes[c]) for c in columns])
        return op, panes, records

    @classmethod
    def from_operator(
        cls, op: WindowOperator, operator_factory: Callable[[], WindowOperator],
        columns: list[str],
    ) -> ColumnarAggregation | None:
        """The columnar equivalent of ``op`` (built with :meth:`to_operator` or processing
        batches itself), or None when its state has another shape: contents that are not
        records of ``columns`` with an integral aggregate, timers other than each window's
        ``max_timestamp`` (until it fires) and cleanup time, any other state. Timers firing at
        the same time keep their order."""
        if (
            op.partitioned_state.num_entries() or op.function_state.num_entries()
            or op.merging_state or len(op.processing_timers)
        ):
            return None
        state = cls(op, operator_factory)
        state.current_watermark = op.current_watermark
        state.current_processing_time = op.current_processing_time
        state.num_late_records_dropped = op.num_late_records_dropped
        contents = op.window_contents
        timers = window_timers(op)
        if timers is None:
            return None
        seq, cleanups = timers
        if not contents:
            return state
        slots = list(contents)
        fired = [slot not in seq for slot in slots]
        panes = records_frame(
            list(contents.values()), columns, state.field, op, slots, fired, cleanups
        )
        if panes is None:
            return None
        after = len(seq)
        panes[_START] = np.array([slot[1][0] for slot in slots], dtype=np.int64)
        panes[_END] = np.array([slot[1][1] for slot in slots], dtype=np.int64)
        panes[_SEQ] = np.array(
            [seq[slot] if slot in seq else after + i for i, slot in enumerate(slots)],
            dtype=np.int64,
        )
        panes[_FIRED] = np.array(fired, dtype=bool)
        state.panes = panes
        state.next_seq = after + len(slots)
        return state

    # ------------------------------------------------------------- snapshots
    def snapshot(self) -> bytes:
        """The panes and clocks as one Arrow IPC stream."""
        meta = {
            "watermark": self.current_watermark,
            "processing_time": self.current_processing_time,
            "dropped": self.num_late_records_dropped,
            "next_seq": self.next_seq,
        }
        return write_frame(self.panes, self.FORMAT, _META_KEY, meta, self._arrow, self.field)

    def restore(self, data: bytes) -> None:
        self.panes, meta = read_frame(data, self.FORMAT, _META_KEY, self.FORMAT)
        self.current_watermark = meta["watermark"]
        self.current_processing_time = meta["processing_time"]
        self.num_late_records_dropped = meta["dropped"]
        self.next_seq = meta["next_seq"]



def snapshot_format(data: bytes) -> str:
    """The ``flinkwin.format`` a snapshot was written in."""
    try:
        reader = pa.ipc.open_stream(pa.py_buffer(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"not a flinkwin operator snapshot: {exc}") from exc
    return (reader.schema.metadata or {}).get(b"flinkwin.format", b"?").decode()


__all__ = [
    "FORMAT",
    "ColumnarAggregation",
    "snapshot_format",
    "supports",
]
