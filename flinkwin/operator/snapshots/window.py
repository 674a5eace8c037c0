"""The object window operator's state as compact, versioned bytes: one Arrow IPC stream.

Every piece of keyed state is one row: window contents, partitioned trigger state,
window-function state, event and processing timers (in firing order), and merging-window
mappings. Numbers are typed Arrow columns (``ns_start``/``ns_end`` for time windows, ``ts`` for
timers); Python objects (keys, accumulators, element lists, other namespaces) are referenced by
index into lists that are pickled once per snapshot and stored in the first (``meta``) row, so a
key shared by many windows and timers is stored once (a namespace that is not a time or global
window is such an object; its index is kept in ``ns_start``). The schema metadata carries
``flinkwin.format``; a snapshot of another format or another window-state kind fails clearly.

The pickled objects are written and read by the operator's
:class:`~flinkwin.operator.snapshots.StatePickler` (see :mod:`flinkwin.operator.snapshots`).
"""

from __future__ import annotations

import io
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from flinkwin.functions.internal import WindowFunctionSpec
from flinkwin.operator.firings import FiringTracker
from flinkwin.operator.snapshots import (
    READ_OPTIONS,
    UNKEYED,
    SnapshotAuthenticationError,
    StatePickler,
    _Unpickler,
    formats,
)
from flinkwin.operator.snapshots.restored_keys import restore_keys
from flinkwin.operator.timer_service import TimerQueue
from flinkwin.state.backend import StateTables
from flinkwin.windows import GlobalWindow, TimeWindow

FORMAT_VERSION = formats.written(formats.OBJECT)

SCHEMA = pa.schema(
    [
        ("section", pa.int8()),
        ("name", pa.int32()),
        ("key", pa.int32()),
        ("ns_kind", pa.int8()),
        ("ns_start", pa.int64()),
        ("ns_end", pa.int64()),
        ("ts", pa.int64()),
        ("obj", pa.int32()),
        ("blob", pa.binary()),
    ],
    metadata={"flinkwin.format": FORMAT_VERSION},
)

META, CONTENTS, TRIGGER, FUNCTION, EVENT_TIMER, PROC_TIMER, MERGING, FIRING = range(8)
NS_TIME_WINDOW, NS_GLOBAL_WINDOW, NS_OTHER = 0, 1, 2
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1  # windows outside int64 (clock at MIN_LONG) pickle


class WindowOperatorState(Protocol):
    """What of a :class:`~flinkwin.operator.WindowOperator` its snapshot holds and restores."""

    current_watermark: int
    current_processing_time: int
    num_late_records_dropped: int
    window_contents: dict[tuple[Any, Any], Any]
    partitioned_state: StateTables
    function_state: StateTables
    merging_state: dict[Any, list[tuple[Any, Any]]]
    event_timers: TimerQueue
    processing_timers: TimerQueue
    firings: FiringTracker | None
    keys_by_value: bool
    key_type: Any
    runtime_context: Any
    spec: WindowFunctionSpec
    evictor: Any
    state_pickler: StatePickler


class _Writer:
    """Builds the snapshot's columns a section at a time (list comprehensions, no per-row
    calls)."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {f.name: [] for f in SCHEMA}
        self.keys: list[Any] = []
        self._key_index: dict[Any, int] = {}
        self._typed_keys = False
        self.objects: list[Any] = []

    def _key_refs(self, keys: list[Any]) -> list[int]:
        """Indexes into the key list; keys are typed (1, 1.0 and True stay distinct) once a
        section mixes key types."""
        if not self._typed_keys and len({type(k) for k in keys} | self._key_types()) > 1:
            self._typed_keys = True
            self._key_index = {(type(k), k): i for i, k in enumerate(self.keys)}
        index, known = self._key_index, self.keys
        refs = []
        for k in keys:
            tk = (type(k), k) if self._typed_keys else k
            i = index.get(tk)
            if i is None:
                i = index[tk] = len(known)
                known.append(k)
            refs.append(i)
        return refs

    def _key_types(self) -> set[type]:
        return {type(self.keys[0])} if self.keys else set()

    def section(self, section: int, name: int | None, slots: list[tuple[Any, Any]],
                ts: list[int] | None, values: list[Any] | None) -> None:
        """Rows for ``slots`` ((key, namespace) pairs) with optional timestamps and values."""
        n = len(slots)
        if n == 0:
            return
        c = self.cols
        c["section"] += [section] * n
        c["name"] += [name] * n
        c["key"] += self._key_refs([slot[0] for slot in slots])
        namespaces = [slot[1] for slot in slots]
        if all(type(ns) is TimeWindow for ns in namespaces) and _in_long_range(
            starts := [ns[0] for ns in namespaces], ends := [ns[1] for ns in namespaces]
        ):
            c["ns_kind"] += [NS_TIME_WINDOW] * n
            c["ns_start"] += starts
            c["ns_end"] += ends
        else:
            for ns in namespaces:
                if type(ns) is TimeWindow and _LONG_MIN <= ns[0] <= ns[1] <= _LONG_MAX:
                    c["ns_kind"].append(NS_TIME_WINDOW)
                    c["ns_start"].append(ns[0])
                    c["ns_end"].append(ns[1])
                elif isinstance(ns, GlobalWindow):
                    c["ns_kind"].append(NS_GLOBAL_WINDOW)
                    c["ns_start"].append(None)
                    c["ns_end"].append(None)
                else:
                    c["ns_kind"].append(NS_OTHER)
                    c["ns_start"].append(len(self.objects))
                    c["ns_end"].append(None)
                    self.objects.append(ns)
        c["ts"] += ts if ts is not None else [None] * n
        if values is None:
            c["obj"] += [None] * n
        else:
            first = len(self.objects)
            c["obj"] += range(first, first + n)
            self.objects += values
        c["blob"] += [None] * n


def _in_long_range(starts: list[int], ends: list[int]) -> bool:
    return min(min(starts), min(ends)) >= _LONG_MIN and max(max(starts), max(ends)) <= _LONG_MAX


def snapshot_operator(op: WindowOperatorState) -> bytes:
    w = _Writer()
    names: list[str] = []
    for section, tables in ((TRIGGER, op.partitioned_state), (FUNCTION, op.function_state)):
        for name, table in tables.tables.items():
            names.append(name)
            w.section(section, len(names) - 1, list(table), None, list(table.values()))
    contents = op.window_contents
    w.section(CONTENTS, None, list(contents), None, list(contents.values()))
    for section, queue in ((EVENT_TIMER, op.event_timers), (PROC_TIMER, op.processing_timers)):
        for ts, slots in queue.buckets():
            w.section(section, None, slots, [ts] * len(slots), None)
    for key, pairs in op.merging_state.items():
        w.section(MERGING, None, [(key, window) for window, _ in pairs], None,
                  [state_window for _, state_window in pairs])
    if op.firings is not None:  # since format 4
        records = op.firings.records
        w.section(FIRING, None, list(records), None, list(records.values()))

    meta = {
        "watermark": op.current_watermark,
        "processing_time": op.current_processing_time,
        "dropped": op.num_late_records_dropped,
        "state_kind": op.spec.state_kind,
        "evicting": op.evictor is not None,
    }
    blob = op.state_pickler.dump((meta, names, w.keys, w.objects))
    for name, value in zip(SCHEMA.names, (META, None, None, None, None, None, None, None, blob)):
        w.cols[name].insert(0, value)
    table = pa.Table.from_pydict(w.cols, schema=SCHEMA)
    sink = pa.BufferOutputStream()
    # (one thread: the buffers are small, a thread pool's hand-offs cost more than they save)
    options = pa.ipc.IpcWriteOptions(compression="lz4", use_threads=False)
    with pa.ipc.new_stream(sink, SCHEMA, options=options) as s:
        s.write_table(table)
    return sink.getvalue().to_pybytes()


def restore_operator(op: WindowOperatorState, data: bytes) -> None:
    try:
        reader = pa.ipc.open_stream(pa.py_buffer(data), options=READ_OPTIONS)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"not a flinkwin operator snapshot: {exc}") from exc
    version = (reader.schema.metadata or {}).get(b"flinkwin.format", b"?").decode()
    formats.check(version, formats.OBJECT, "window operator snapshot")
    table = reader.read_all()
    blob = table.column("blob")[0].as_py()
    meta, names, keys, objects = _objects(op.state_pickler, version, blob)
    keys = restore_keys(keys, op.keys_by_value, op.key_type, op.runtime_context.get_task_name())
    if meta["state_kind"] != op.spec.state_kind or meta["evicting"] != (op.evictor is not None):
        raise ValueError(
            "snapshot was taken with a different window state "
            f"({meta['state_kind']}, evictor={meta['evicting']}) than this operator "
            f"({op.spec.state_kind}, evictor={op.evictor is not None})"
        )
    op.current_watermark = meta["watermark"]
    op.current_processing_time = meta["processing_time"]
    op.num_late_records_dropped = meta["dropped"]
    op.window_contents = {}
    op.partitioned_state = StateTables()
    op.function_state = StateTables()
    op.merging_state = {}
    if op.firings is not None:
        op.firings.records = {}
    op.event_timers = TimerQueue()
    op.processing_timers = TimerQueue()

    body = table.slice(1)  # without the meta row
    key_refs = body.column("key").to_numpy()
    key_list = [keys[i] for i in key_refs.tolist()]
    slots = list(zip(key_list, _namespaces(body, objects)))
    obj_refs = body.column("obj").to_pylist()
    name_refs = body.column("name").to_pylist()
    sections = body.column("section").to_numpy()
    timers: dict[int, list[tuple[int, tuple[Any, Any]]]] = {EVENT_TIMER: [], PROC_TIMER: []}
    for section, first, last in _runs(sections):
        run_slots = slots[first:last]
        if section == CONTENTS:
            op.window_contents.update(
                zip(run_slots, [objects[i] for i in obj_refs[first:last]])
            )
        elif section in (EVENT_TIMER, PROC_TIMER):
            timers[section] += zip(body.column("ts").slice(first, last - first).to_pylist(),
                                   run_slots)
        elif section in (TRIGGER, FUNCTION):
            tables = op.partitioned_state if section == TRIGGER else op.function_state
            for i in range(first, last):
                table_ = tables.tables.setdefault(names[name_refs[i]], {})
                table_[slots[i]] = objects[obj_refs[i]]
        elif section == FIRING:
            if op.firings is None:
                raise ValueError(
                    "snapshot holds firing metadata (with_firing=True) but this operator does "
                    "not keep it: restart the pipeline with with_firing=True"
                )
            op.firings.records.update(
                zip(run_slots, [tuple(objects[i]) for i in obj_refs[first:last]])
            )
        elif section == MERGING:
            for i in range(first, last):
                key, window = slots[i]
                op.merging_state.setdefault(key, []).append((window, objects[obj_refs[i]]))
        else:
            raise ValueError(f"unknown snapshot section {section!r}")
    op.event_timers.restore_buckets(timers[EVENT_TIMER])
    op.processing_timers.restore_buckets(timers[PROC_TIMER])


def _objects(pickler: StatePickler, version: str, blob: bytes) -> Any:
    """The pickled objects of a snapshot of format ``version``: signed since format 3; format
    2's are a plain pickle, read only where signatures authenticate nothing (no state key)."""
    if version != "2":
        return pickler.load(blob)
    if pickler.key != UNKEYED:
        raise SnapshotAuthenticationError(
            f"operator snapshot of format 2: its pickled objects carry no signature, while a "
            f"state key is configured ({pickler.source}); refusing to unpickle them. It was "
            "written by a flinkwin before signed snapshots: restart it without a state key, "
            "or start the pipeline from a new checkpoint location"
        )
    return _Unpickler(io.BytesIO(blob)).load()


def _namespaces(body: pa.Table, objects: list[Any]) -> list[Any]:
    """Each row's namespace; equal time windows are built once and shared."""
    kinds = body.column("ns_kind").to_numpy()
    starts = body.column("ns_start").fill_null(0).to_numpy()
    ends = body.column("ns_end").fill_null(0).to_numpy()
    timed = kinds == NS_TIME_WINDOW
    unique_starts, unique_ends, inverse = _distinct_pairs(starts[timed], ends[timed])
    make = TimeWindow.of
    built = [make(start, end) for start, end in zip(unique_starts.tolist(), unique_ends.tolist())]
    windows = [built[i] for i in inverse.tolist()]
    if timed.all():
        return windows
    global_window = GlobalWindow.get()
    namespaces = [
        global_window if kind == NS_GLOBAL_WINDOW else objects[start] if kind == NS_OTHER else None
        for kind, start in zip(kinds.tolist(), starts.tolist())
    ]
    for i, window in zip(np.flatnonzero(timed).tolist(), windows):
        namespaces[i] = window
    return namespaces


def _distinct_pairs(
    starts: np.ndarray, ends: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (start, end) pairs in (start, end) order, and each row's index among them
    (what ``np.unique`` of the stacked pairs with ``axis=0`` returns, without its slow sort of
    structured rows)."""
    order = np.lexsort((ends, starts))
    sorted_starts, sorted_ends = starts[order], ends[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (sorted_starts[1:] != sorted_starts[:-1]) | (sorted_ends[1:] != sorted_ends[:-1])
    inverse = np.empty(len(order), dtype=np.intp)
    inverse[order] = np.cumsum(first) - 1
    return sorted_starts[first], sorted_ends[first], inverse


def _runs(values: np.ndarray) -> list[tuple[int, int, int]]:
    """(value, first, last) for each run of equal consecutive values."""
    if len(values) == 0:
        return []
    cuts = (np.flatnonzero(values[1:] != values[:-1]) + 1).tolist()
    firsts = [0, *cuts]
    lasts = [*cuts, len(values)]
    return [(int(values[f]), f, t) for f, t in zip(firsts, lasts)]
