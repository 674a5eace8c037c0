"""Columnar element lists for full-window functions: no Python object per element at rest.

A keyed or non-keyed ``process``/``apply`` window function (Process(All)WindowFunction,
(All)WindowFunction) on tumbling or sliding event-time windows with the default
``EventTimeTrigger`` and no evictor (sliding: each element in at most :data:`MAX_COPIES`
windows) keeps, in Flink, a ``ListState`` of the window's elements.
:class:`ColumnarLists` holds all of a key group's lists as one pandas frame: one row per
(element, window) with the element's columns, the window's bounds and the window's
registration number (the order the operator registers the windows' timers in), rows of a
window in arrival order. It does, for whole batches, exactly what
:class:`~flinkwin.operator.WindowOperator` does:

- ``process_batch``: assign windows with numpy, route late elements (side output or dropped
  count) and append the others; a new window is numbered when its first element arrives;
- ``advance_watermark``: windows whose ``max_timestamp`` is ``<=`` the watermark fire in timer
  order (timestamp, then registration); each window's function gets its elements as a
  :class:`~flinkwin.operator.states.window_elements.WindowElements` sequence built lazily
  (one pass over the firing rows, on the first access of any of them), in arrival order as
  Flink's ``ListState``; rows are dropped at their window's cleanup time (``max_timestamp +
  allowed lateness``).

A batch with an element that fires a window on arrival (allowed lateness) is not taken
(:meth:`ColumnarLists.accepts` is False): the caller continues with
:meth:`ColumnarLists.to_operator`, the equivalent object-based operator, and takes the state
back with :meth:`ColumnarLists.from_operator`. A window function that keeps keyed state (per-window
or global, through its context or runtime context) or defines ``clear`` is not run here
(:func:`supports`), nor is one that leaves function state behind after firing
(:meth:`ColumnarLists.holds_function_state`: the caller converts).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
import pyarrow as pa

from flinkwin.assigners.sliding import SlidingEventTimeWindows
from flinkwin.assigners.stagger import WindowStagger
from flinkwin.assigners.tumbling import TumblingEventTimeWindows
from flinkwin.functions.base import (
    FieldKeySelector,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
)
from flinkwin.functions.internal import LIST
from flinkwin.keys import flink_key
from flinkwin.operator.batch_windows import _codes, assign_event_windows, in_safe_band
from flinkwin.operator.element_rows import column_values
from flinkwin.operator.frames import from_arrow, read_frame, write_frame
from flinkwin.operator.snapshots import formats
from flinkwin.operator.states.operator_windows import window_timers
from flinkwin.operator.states.window_elements import WindowElements, _elements, _Records
from flinkwin.time import MAX_LONG, MIN_LONG
from flinkwin.triggers.event_time import EventTimeTrigger
from flinkwin.windows import TimeWindow

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator

#: The ``flinkwin.format`` of a columnar element-list snapshot.
FORMAT = formats.written(formats.LISTS)
_META_KEY = "flinkwin.lists"
_START, _END, _SEQ = "_fw_start", "_fw_end", "_fw_seq"
_LIST_COLUMNS = (_START, _END, _SEQ)
#: Sliding windows store a row per (element, window): at most this many copies of an element.
MAX_COPIES = 4
_NO_CLEAR = (None, ProcessWindowFunction.clear, ProcessAllWindowFunction.clear)


def supports(op: WindowOperator) -> bool:
    """True if ``op``'s configuration has a columnar element-list equivalent (module
    docstring)."""
    spec = op.spec
    selector = op.key_selector
    assigner = op.assigner
    return (
        (
            type(assigner) is TumblingEventTimeWindows
            or type(assigner) is SlidingEventTimeWindows
            and assigner.size <= MAX_COPIES * assigner.slide
        )
        and getattr(op.assigner, "window_stagger", WindowStagger.ALIGNED)
        is WindowStagger.ALIGNED
        and type(op.trigger) is EventTimeTrigger
        and op.evictor is None
        and spec.state_kind == LIST
        and spec.window_fn is not None
        and getattr(type(spec.window_fn), "clear", None) in _NO_CLEAR
        and (selector is None or type(selector) is FieldKeySelector)
    )


def _window_keys(
    rows: pd.DataFrame, heads: np.ndarray, positions: list[int], op: WindowOperator
) -> list[Any]:
    """The keys (``op.key_of``) of the elements at the rows ``heads`` of ``rows`` (their
    columns at ``positions``): from the key columns' values where the key is a selection of
    columns without a declared key type and no key value is null (what ``op.key_of`` returns
    for such elements), else through the elements (a null key fails naming its element)."""
    selector = op.key_selector
    if selector is None:
        return [None] * len(heads)
    fields = cast(FieldKeySelector, selector).fields
    converters = op.element_converters or {}
    if (
        not (op.pickled_elements or op.atomic_elements) and op.keys_by_value
        and op.key_type is None and not any(f in converters for f in fields)
    ):
        values = [column_values(rows[f], heads) for f in fields]
        if not any(v is None for column in values for v in column):
            keys = values[0] if len(fields) == 1 else list(zip(*values))
            return [flink_key(k) for k in keys]
    return [op.key_of(head) for head in _elements(rows.iloc[heads, positions], op)]


def _positions(seq: np.ndarray, numbers: np.ndarray) -> np.ndarray:
    """The index into ``seq`` (sorted, distinct) of each of ``numbers`` (each one of ``seq``'s
    values): through a table over ``seq``'s range when that range is not much larger than
    ``numbers`` (one gather), else by binary search."""
    low, high = int(seq[0]), int(seq[-1])
    if high - low > 4 * len(numbers) + 1024:
        return np.searchsorted(seq, numbers)
    table = np.empty(high - low + 1, dtype=np.intp)
    table[seq - low] = np.arange(len(seq))
    return table[numbers - low]


class ColumnarLists:
    """The element lists of one key group for a configuration :func:`supports` accepts."""

    def __init__(self, template: WindowOperator, operator_factory: Callable[[], WindowOperator]):
        assert supports(template)
        #: The operator that runs the window function (context, clocks, side outputs).
        self.op = template
        self.assigner = template.assigner
        self.lateness = template.allowed_lateness
        self.late_tag = template.late_output_tag
        selector = template.key_selector
        self.key_fields = [] if selector is None else list(cast(FieldKeySelector, selector).fields)
        self._factory = operator_factory
        self.next_seq = 0
        self.rows: pd.DataFrame | None = None
        self._panes_of: tuple[pd.DataFrame, np.ndarray, np.ndarray] | None = None

    # ---------------------------------------------------- what the operator shares
    @property
    def current_watermark(self) -> int:
        return self.op.current_watermark

    @property
    def current_processing_time(self) -> int:
        return self.op.current_processing_time

    @property
    def num_late_records_dropped(self) -> int:
        return self.op.num_late_records_dropped

    @property
    def late_output_tag(self) -> Any:
        return self.late_tag

    @property
    def num_windows_fired(self) -> int:
        return self.op.num_windows_fired

    def drain_output(self) -> list[tuple[Any, int]]:
        return self.op.drain_output()

    def drain_side_output(self, tag: Any) -> list[tuple[Any, int]]:
        return self.op.drain_side_output(tag)

    def drain_side_outputs(self) -> dict[Any, list[tuple[Any, int]]]:
        return self.op.drain_side_outputs()

    def advance_processing_time(self, time: int) -> None:
        self.op.advance_processing_time(time)  # no processing-time timers here

    def close(self) -> None:
        self.op.close()

    def holds_function_state(self) -> bool:
        """True if the window function left keyed state behind (then convert with
        :meth:`to_operator`, which keeps it)."""
        return bool(self.op.function_state.num_entries())

    # ---------------------------------------------------------------- windows
    def _cleanup(self, max_ts: np.ndarray) -> np.ndarray:
        if self.lateness == 0:
            return max_ts
        return np.where(max_ts > MAX_LONG - self.lateness, MAX_LONG, max_ts + self.lateness)

    def _panes(self) -> tuple[np.ndarray, np.ndarray]:
        """(registration numbers, first row) of the windows held, by registration (computed
        once per version of the rows)."""
        rows = self.rows
        assert rows is not None
        cached = self._panes_of
        if cached is None or cached[0] is not rows:
            seq, first = np.unique(rows[_SEQ].to_numpy(), return_index=True)
            cached = self._panes_of = (rows, seq, first)
        return cached[1], cached[2]

    def advance_watermark(self, watermark: int) -> None:
        """Fire the windows whose ``max_timestamp <= watermark`` in timer order, drop rows at
        their window's cleanup time. A watermark that is not greater than the current one is
        ignored."""
        op = self.op
        watermark = int(watermark)
        previous = op.current_watermark
        if watermark <= previous:
            return
        if not op._opened:
            op.open()
        op.current_watermark = watermark
        rows = self.rows
        if rows is None or not len(rows):
            return
        seq, first = self._panes()
        ends = rows[_END].to_numpy()[first]
        max_ts = ends - 1
        due = np.flatnonzero((max_ts > previous) & (max_ts <= watermark))
        gone = self._cleanup(max_ts) <= watermark
        if not len(due) and not gone.any():
            return
        window_of = _positions(seq, rows[_SEQ].to_numpy())  # each row's window's index
        if len(due):
            self._fire(seq, first, due[np.lexsort((seq[due], max_ts[due]))], window_of)
        if gone.any():
            keep = ~gone[window_of]
            if not keep.any():
                self.rows = None
                return
            kept = self.rows = rows[keep].reset_index(drop=True)
            # the windows left, and their first rows' new positions
            self._panes_of = (kept, seq[~gone], (np.cumsum(keep) - 1)[first[~gone]])

    def _fire(
        self, seq: np.ndarray, first: np.ndarray, firing: np.ndarray, window_of: np.ndarray
    ) -> None:
        """Run the window function over each firing window (``firing``: indexes into ``seq``,
        in timer order; ``window_of``: each row's window's index into ``seq``)."""
        op = self.op
        rows = self.rows
        assert rows is not None
        rank = np.full(len(seq), -1, dtype=np.int64)
        rank[firing] = np.arange(len(firing), dtype=np.int64)
        row_rank = rank[window_of]
        member = np.flatnonzero(row_rank >= 0)
        member = member[np.argsort(row_rank[member], kind="stable")]
        bounds = np.concatenate(([0], np.cumsum(np.bincount(row_rank[member]))))
        positions = [i for i, c in enumerate(rows.columns) if c not in _LIST_COLUMNS]
        # built on first access, straight from the held rows' columns
        source = _Records(rows, self.op, member, [rows.columns[i] for i in positions])
        firsts = first[firing]
        keys = _window_keys(rows, firsts, positions, op)
        starts = rows[_START].to_numpy()[firsts].tolist()
        ends = rows[_END].to_numpy()[firsts].tolist()
        bounds_list = bounds.tolist()
        op.fire_windows(
            keys, list(map(TimeWindow.of, starts, ends)),
            map(WindowElements, repeat(source), bounds_list[:-1], bounds_list[1:]),
        )

    def next_event_time_timer(self) -> int | None:
        rows = self.rows
        if rows is None or not len(rows):
            return None
        max_ts = rows[_END].to_numpy() - 1
        fired = max_ts <= self.op.current_watermark
        return int(np.where(fired, self._cleanup(max_ts), max_ts).min())

    def next_processing_time_timer(self) -> int | None:
        return None

    def holds_nothing(self) -> bool:
        return (self.rows is None or not len(self.rows)) and not self.holds_function_state()

    def state_size(self) -> tuple[int, int]:
        """(keys, windows) held."""
        rows = self.rows
        if rows is None or not len(rows):
            return 0, 0
        seq, first = self._panes()
        keys = 1
        if self.key_fields:
            keys = int(_codes([rows[f].to_numpy()[first] for f in self.key_fields]).max()) + 1
        return keys, len(seq)

    # ----------------------------------------------------------------- input
    def accepts(self, frame: pd.DataFrame, timestamps: np.ndarray, watermark: int) -> bool:
        """True if, under ``watermark``, no element of the batch fires a window on arrival
        and long arithmetic cannot overflow (otherwise use :meth:`to_operator`)."""
        if len(timestamps) == 0:
            return True
        if bool((timestamps <= MIN_LONG).any()):
            return False
        if not in_safe_band(self.assigner, self.lateness, timestamps):
            return False
        _, _, ends = assign_event_windows(self.assigner, timestamps)
        max_ts = ends - 1
        live = self._cleanup(max_ts) > watermark
        return not bool((max_ts[live] <= watermark).any())

    def process_batch(self, frame: pd.DataFrame, timestamps: np.ndarray) -> None:
        """Process the rows of ``frame`` (in processing order) with their timestamps; the batch
        must be one :meth:`accepts` under the current watermark."""
        if len(frame) == 0:
            return
        op = self.op
        if not op._opened:
            op.open()
        wm = op.current_watermark
        elem, starts, ends = assign_event_windows(self.assigner, timestamps)
        live = self._cleanup(ends - 1) > wm
        if not live.all():
            has_live = np.zeros(len(frame), dtype=bool)
            has_live[elem[live]] = True
            late = np.flatnonzero(~has_live & (timestamps + self.lateness <= wm))
            if len(late):
                if self.late_tag is None:
                    op.num_late_records_dropped += len(late)
                else:
                    for record, ts in zip(
                        _elements(frame.iloc[late], op), timestamps[late].tolist()
                    ):
                        op.emit_side(self.late_tag, record, ts)
            elem, starts, ends = elem[live], starts[live], ends[live]
        if len(elem) == 0:
            return
        new = frame.iloc[elem].reset_index(drop=True)
        new[_START] = starts
        new[_END] = ends
        held = self.next_seq
        numbers = new[_SEQ] = self._numbers(new)
        if self.rows is None:
            self.rows = new
            return
        seq, first = self._panes()
        # the windows first numbered here follow the held ones, each first met in ``new``
        fresh = np.flatnonzero(numbers >= held)
        added, at = np.unique(numbers[fresh], return_index=True)
        offset = len(self.rows)
        rows = self.rows = pd.concat([self.rows, new], ignore_index=True)
        self._panes_of = (
            rows, np.concatenate([seq, added]), np.concatenate([first, fresh[at] + offset])
        )

    def _numbers(self, new: pd.DataFrame) -> np.ndarray:
        """Each new row's window registration number: the held window's, else the next free
        numbers in order of first appearance."""
        fields = [*self.key_fields, _START]
        held = 0
        columns = [new[c].to_numpy() for c in fields]
        if self.rows is not None and len(self.rows):
            seq, first = self._panes()
            held = len(seq)
            rows = self.rows
            columns = [
                np.concatenate([rows[c].to_numpy()[first], col]) for c, col in zip(fields, columns)
            ]
        codes = _codes(columns)[held:]  # held windows are codes 0 .. held - 1, by registration
        out = np.empty(len(new), dtype=np.int64)
        old = codes < held
        if held:
            out[old] = seq[codes[old]]
        fresh = codes[~old] - held  # numbered from 0 in order of first appearance
        out[~old] = self.next_seq + fresh
        if len(fresh):
            self.next_seq += int(fresh.max()) + 1
        return out

    # ------------------------------------------------------- object-based operator
    def to_operator(self) -> WindowOperator:
        """The equivalent :class:`WindowOperator` (the one running the window function, with
        its clocks and any function state): contents and timers registered in this state's
        order. Pending outputs stay pending on it."""
        op = self.op
        rows = self.rows
        self.rows = None
        if rows is None or not len(rows):
            return op
        order = np.argsort(rows[_SEQ].to_numpy(), kind="stable")
        rows = rows.iloc[order]
        columns = [c for c in rows.columns if c not in _LIST_COLUMNS]
        records = _elements(rows[columns], op)
        seqs = rows[_SEQ].tolist()
        starts, ends = rows[_START].tolist(), rows[_END].tolist()
        contents = op.window_contents
        make = TimeWindow.of
        previous = None
        members: list[Any] = []
        for record, seq, start, end in zip(records, seqs, starts, ends):
            if seq != previous:
                previous = seq
                key, window = op.key_of(record), make(start, end)
                members = contents[(key, window)] = []
                if window.max_timestamp() > op.current_watermark:
                    op.event_timers.register(window.max_timestamp(), key, window)
                cleanup = op.cleanup_time(window)
                if cleanup != MAX_LONG:
                    op.event_timers.register(cleanup, key, window)
            members.append(record)
        return op

    @classmethod
    def from_operator(
        cls, op: WindowOperator, operator_factory: Callable[[], WindowOperator],
        columns: list[str],
    ) -> ColumnarLists | None:
        """The columnar equivalent of ``op``, reusing it to run the window function, or None
        when its state has another shape: contents that are not non-empty lists of records of
        ``columns``, function or trigger state, timers other than each window's
        ``max_timestamp`` (until it fires) and cleanup time."""
        if (
            not supports(op)
            or op.partitioned_state.num_entries() or op.function_state.num_entries()
            or op.merging_state or len(op.processing_timers)
        ):
            return None
        contents = op.window_contents
        timers = window_timers(op)
        if timers is None:
            return None
        seq, cleanups = timers
        slots = list(contents)
        if any(
            (slot not in seq) != (slot[1].max_timestamp() <= op.current_watermark)
            or (slot not in cleanups and op.cleanup_time(slot[1]) != MAX_LONG)
            for slot in slots
        ):
            return None
        names = tuple(columns)
        lists = [contents[slot] for slot in slots]
        if any(
            type(members) is not list or not members
            or any(getattr(type(r), "__fields__", None) != names for r in members)
            for members in lists
        ):
            return None
        state = cls(op, operator_factory)
        if not slots:
            return state
        records = [r for members in lists for r in members]
        try:
            table = pa.Table.from_arrays(
                [pa.array([r[i] for r in records]) for i in range(len(names))], names=columns
            )
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            return None
        for slot in slots:
            op.event_timers.delete(slot[1].max_timestamp(), *slot)
            op.event_timers.delete(op.cleanup_time(slot[1]), *slot)
        op.window_contents = {}
        rows = from_arrow(table)
        after = len(seq)
        numbers = [seq[slot] if slot in seq else after + i for i, slot in enumerate(slots)]
        sizes = [len(members) for members in lists]
        rows[_START] = np.repeat([slot[1].start for slot in slots], sizes).astype(np.int64)
        rows[_END] = np.repeat([slot[1].end for slot in slots], sizes).astype(np.int64)
        rows[_SEQ] = np.repeat(numbers, sizes).astype(np.int64)
        state.rows = rows
        state.next_seq = after + len(slots)
        return state

    # ------------------------------------------------------------- snapshots
    def snapshot(self) -> bytes:
        """The rows and clocks as one Arrow IPC stream."""
        meta = {
            "watermark": self.op.current_watermark,
            "processing_time": self.op.current_processing_time,
            "dropped": self.op.num_late_records_dropped,
            "next_seq": self.next_seq,
        }
        return write_frame(self.rows, FORMAT, _META_KEY, meta)

    def restore(self, data: bytes) -> None:
        self.rows, meta = read_frame(data, FORMAT, _META_KEY, "element-list")
        self.op.current_watermark = meta["watermark"]
        self.op.current_processing_time = meta["processing_time"]
        self.op.num_late_records_dropped = meta["dropped"]
        self.next_seq = meta["next_seq"]


__all__ = ["FORMAT", "ColumnarLists", "supports"]
