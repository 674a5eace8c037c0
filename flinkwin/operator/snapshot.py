"""Operator state as compact, versioned bytes: one Arrow IPC stream.

Every piece of state is one row ``(section, name, key, ns_kind, ns_start, ns_end, ns, ts, seq,
payload)``: window contents, partitioned trigger state, window-function state, event and
processing timers, merging-window mappings, and one ``meta`` row with the clocks. Time windows
are stored as two int64 columns; keys, other namespaces and values are pickled. The schema
metadata carries ``flinkwin.format`` so incompatible snapshots fail clearly on restore.
"""

from __future__ import annotations

import pickle
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from flinkwin.windows import GlobalWindow, TimeWindow

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator

FORMAT_VERSION = "1"

SCHEMA = pa.schema(
    [
        ("section", pa.string()),
        ("name", pa.string()),
        ("key", pa.binary()),
        ("ns_kind", pa.int8()),
        ("ns_start", pa.int64()),
        ("ns_end", pa.int64()),
        ("ns", pa.binary()),
        ("ts", pa.int64()),
        ("seq", pa.int64()),
        ("payload", pa.binary()),
    ],
    metadata={"flinkwin.format": FORMAT_VERSION},
)

NS_TIME_WINDOW, NS_GLOBAL_WINDOW, NS_OTHER = 0, 1, 2
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1  # windows outside int64 (clock at MIN_LONG) pickle
_dumps = pickle.dumps


def _ns(namespace: Any) -> tuple[int, int | None, int | None, bytes | None]:
    in_range = isinstance(namespace, TimeWindow) and (
        _LONG_MIN <= namespace.start <= namespace.end <= _LONG_MAX
    )
    if in_range:
        return NS_TIME_WINDOW, namespace.start, namespace.end, None
    if isinstance(namespace, GlobalWindow):
        return NS_GLOBAL_WINDOW, None, None, None
    return NS_OTHER, None, None, _dumps(namespace)


def _ns_back(kind: int, start: int | None, end: int | None, blob: bytes | None) -> Any:
    if kind == NS_TIME_WINDOW:
        return TimeWindow(start, end)  # type: ignore[arg-type]
    if kind == NS_GLOBAL_WINDOW:
        return GlobalWindow.get()
    return pickle.loads(blob)  # type: ignore[arg-type]


def _first(item: tuple[Any, ...]) -> Any:
    return item[0]


def snapshot_operator(op: WindowOperator) -> bytes:
    cols: dict[str, list[Any]] = {f.name: [] for f in SCHEMA}

    def row(section: str, name: str | None, key: Any, namespace: Any, ts: int | None,
            seq: int | None, payload: Any) -> None:
        kind, start, end, blob = _ns(namespace)
        cols["section"].append(section)
        cols["name"].append(name)
        cols["key"].append(_dumps(key))
        cols["ns_kind"].append(kind)
        cols["ns_start"].append(start)
        cols["ns_end"].append(end)
        cols["ns"].append(blob)
        cols["ts"].append(ts)
        cols["seq"].append(seq)
        cols["payload"].append(None if payload is None else _dumps(payload))

    meta = {
        "watermark": op.current_watermark,
        "processing_time": op.current_processing_time,
        "dropped": op.num_late_records_dropped,
        "assigner": repr(op.assigner),
        "state_kind": op.spec.state_kind,
        "evicting": op.evictor is not None,
    }
    row("meta", None, None, None, None, None, meta)
    for (key, ns), value in op.window_contents.items():
        row("contents", None, key, ns, None, None, value)
    for section, tables in (("trigger", op.partitioned_state), ("function", op.function_state)):
        for name, table in tables.tables.items():
            for (key, ns), value in table.items():
                row(section, name, key, ns, None, None, value)
    for section, queue in (("event_timer", op.event_timers), ("proc_timer", op.processing_timers)):
        for seq, (ts, key, ns) in enumerate(queue.items()):
            row(section, None, key, ns, ts, seq, None)
    for key, pairs in op.merging_state.items():
        for window, state_window in pairs:
            row("merging", None, key, window, None, None, state_window)

    table = pa.Table.from_pydict(cols, schema=SCHEMA)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, SCHEMA, options=pa.ipc.IpcWriteOptions(compression="lz4")) as w:
        w.write_table(table)
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
    table = reader.read_all().to_pydict()
    from flinkwin.operator.timer_service import TimerQueue
    from flinkwin.state.backend import StateTables

    op.window_contents = {}
    op.partitioned_state = StateTables()
    op.function_state = StateTables()
    op.merging_state = {}
    op.event_timers = TimerQueue()
    op.processing_timers = TimerQueue()
    timers: dict[str, list[tuple[int, int, Any, Any]]] = {"event_timer": [], "proc_timer": []}
    loads = pickle.loads
    for i, section in enumerate(table["section"]):
        key = loads(table["key"][i])
        ns = _ns_back(table["ns_kind"][i], table["ns_start"][i], table["ns_end"][i], table["ns"][i])
        payload = table["payload"][i]
        value = None if payload is None else loads(payload)
        if section == "meta":
            if value["state_kind"] != op.spec.state_kind or value["evicting"] != (
                op.evictor is not None
            ):
                raise ValueError(
                    "snapshot was taken with a different window state "
                    f"({value['state_kind']}, evictor={value['evicting']}) than this operator "
                    f"({op.spec.state_kind}, evictor={op.evictor is not None})"
                )
            op.current_watermark = value["watermark"]
            op.current_processing_time = value["processing_time"]
            op.num_late_records_dropped = value["dropped"]
        elif section == "contents":
            op.window_contents[(key, ns)] = value
        elif section in ("trigger", "function"):
            tables = op.partitioned_state if section == "trigger" else op.function_state
            tables.tables.setdefault(table["name"][i], {})[(key, ns)] = value
        elif section in timers:
            timers[section].append((table["seq"][i], table["ts"][i], key, ns))
        elif section == "merging":
            op.merging_state.setdefault(key, []).append((ns, value))
        else:
            raise ValueError(f"unknown snapshot section {section!r}")
    for section, queue in (("event_timer", op.event_timers), ("proc_timer", op.processing_timers)):
        queue.restore([(ts, key, ns) for _, ts, key, ns in sorted(timers[section], key=_first)])
