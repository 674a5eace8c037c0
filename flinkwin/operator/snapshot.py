"""Operator state as compact, versioned bytes: one Arrow IPC stream.

Every piece of keyed state is one row: window contents, partitioned trigger state,
window-function state, event and processing timers (in firing order), and merging-window
mappings. Numbers are typed Arrow columns (``ns_start``/``ns_end`` for time windows, ``ts`` for
timers); Python objects (keys, accumulators, element lists, other namespaces) are referenced by
index into lists that are pickled once per snapshot and stored in the first (``meta``) row, so a
key shared by many windows and timers is stored once (a namespace that is not a time or global
window is such an object; its index is kept in ``ns_start``). The schema metadata carries
``flinkwin.format``; a snapshot of another format or another window-state kind fails clearly.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from flinkwin.operator.timer_service import TimerQueue
from flinkwin.state.backend import StateTables
from flinkwin.windows import GlobalWindow, TimeWindow

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator

FORMAT_VERSION = "2"

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

META, CONTENTS, TRIGGER, FUNCTION, EVENT_TIMER, PROC_TIMER, MERGING = range(7)
NS_TIME_WINDOW, NS_GLOBAL_WINDOW, NS_OTHER = 0, 1, 2
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1  # windows outside int64 (clock at MIN_LONG) pickle


class _Writer:
    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {f.name: [] for f in SCHEMA}
        self.keys: list[Any] = []
        self._key_index: dict[tuple[type, Any], int] = {}
        self.objects: list[Any] = []

    def key(self, key: Any) -> int:
        """Index of ``key`` in the key list (typed, so 1, 1.0 and True stay distinct)."""
        typed = (type(key), key)
        index = self._key_index.get(typed)
        if index is None:
            index = self._key_index[typed] = len(self.keys)
            self.keys.append(key)
        return index

    def obj(self, value: Any) -> int:
        self.objects.append(value)
        return len(self.objects) - 1

    def row(self, section: int, name: int | None, key: Any, ns: Any, ts: int | None,
            obj: int | None) -> None:
        c = self.cols
        c["section"].append(section)
        c["name"].append(name)
        c["key"].append(self.key(key))
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
            c["ns_start"].append(self.obj(ns))
            c["ns_end"].append(None)
        c["ts"].append(ts)
        c["obj"].append(obj)
        c["blob"].append(None)


def snapshot_operator(op: WindowOperator) -> bytes:
    w = _Writer()
    names: list[str] = []
    for section, tables in ((TRIGGER, op.partitioned_state), (FUNCTION, op.function_state)):
        for name, table in tables.tables.items():
            names.append(name)
            for (key, ns), value in table.items():
                w.row(section, len(names) - 1, key, ns, None, w.obj(value))
    for (key, ns), value in op.window_contents.items():
        w.row(CONTENTS, None, key, ns, None, w.obj(value))
    for section, queue in ((EVENT_TIMER, op.event_timers), (PROC_TIMER, op.processing_timers)):
        for ts, key, ns in queue.items():
            w.row(section, None, key, ns, ts, None)
    for key, pairs in op.merging_state.items():
        for window, state_window in pairs:
            w.row(MERGING, None, key, window, None, w.obj(state_window))

    meta = {
        "watermark": op.current_watermark,
        "processing_time": op.current_processing_time,
        "dropped": op.num_late_records_dropped,
        "state_kind": op.spec.state_kind,
        "evicting": op.evictor is not None,
    }
    blob = pickle.dumps((meta, names, w.keys, w.objects), protocol=pickle.HIGHEST_PROTOCOL)
    for name, value in zip(SCHEMA.names, (META, None, None, None, None, None, None, None, blob)):
        w.cols[name].insert(0, value)
    table = pa.Table.from_pydict(w.cols, schema=SCHEMA)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, SCHEMA, options=pa.ipc.IpcWriteOptions(compression="lz4")) as s:
        s.write_table(table)
    return sink.getvalue().to_pybytes()


def restore_operator(op: WindowOperator, data: bytes) -> None:
    try:
        reader = pa.ipc.open_stream(pa.py_buffer(data))
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"not a flinkwin operator snapshot: {exc}") from exc
    version = (reader.schema.metadata or {}).get(b"flinkwin.format", b"?").decode()
    if version != FORMAT_VERSION:
        raise ValueError(
            f"snapshot format {version!r} is not supported (this flinkwin reads {FORMAT_VERSION!r})"
        )
    cols = reader.read_all().to_pydict()
    meta, names, keys, objects = pickle.loads(cols["blob"][0])
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
    op.event_timers = TimerQueue()
    op.processing_timers = TimerQueue()

    make_window = TimeWindow.of
    global_window = GlobalWindow.get()
    rows = zip(
        cols["section"], cols["name"], cols["key"], cols["ns_kind"], cols["ns_start"],
        cols["ns_end"], cols["ts"], cols["obj"],
    )
    next(rows)  # the meta row
    for section, name, key_ref, kind, start, end, ts, obj in rows:
        key = keys[key_ref]
        if kind == NS_TIME_WINDOW:
            ns: Any = make_window(start, end)
        elif kind == NS_GLOBAL_WINDOW:
            ns = global_window
        else:
            ns = objects[start]
        if section == CONTENTS:
            op.window_contents[(key, ns)] = objects[obj]
        elif section == EVENT_TIMER:
            op.event_timers.register(ts, key, ns)
        elif section == PROC_TIMER:
            op.processing_timers.register(ts, key, ns)
        elif section in (TRIGGER, FUNCTION):
            tables = op.partitioned_state if section == TRIGGER else op.function_state
            tables.tables.setdefault(names[name], {})[(key, ns)] = objects[obj]
        elif section == MERGING:
            op.merging_state.setdefault(key, []).append((ns, objects[obj]))
        else:
            raise ValueError(f"unknown snapshot section {section!r}")
