"""Snapshots of the process operators (:mod:`flinkwin.operator.keyed_process_operator`): one
Arrow IPC stream of format ``keyed-process-1``. A meta row holds the signed pickle (the operator's
:class:`~flinkwin.operator.snapshots.StatePickler`) of the clocks, the state names, the keys and
the state values; every state entry and every timer is a row referring to them by index."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from flinkwin.operator.snapshots import READ_OPTIONS, StatePickler, formats
from flinkwin.operator.snapshots.restored_keys import restore_keys
from flinkwin.operator.timer_service import TimerQueue
from flinkwin.state.backend import VOID_NAMESPACE

FORMAT = formats.written(formats.PROCESS)
SCHEMA = pa.schema(
    [
        ("section", pa.int8()),
        ("name", pa.int32()),
        ("key", pa.int32()),
        ("ts", pa.int64()),
        ("obj", pa.int32()),
        ("blob", pa.binary()),
    ],
    metadata={"flinkwin.format": FORMAT},
)
META, STATE, EVENT_TIMER, PROC_TIMER = range(4)


def snapshot_process_operator(
    pickler: StatePickler,
    meta: dict[str, Any],
    states: list[tuple[str, list[tuple[Any, Any]], list[Any]]],
    event_timers: TimerQueue,
    processing_timers: TimerQueue,
) -> bytes:
    """The snapshot of an operator with ``meta`` (its kind and clocks), keyed ``states``
    (name, (key, namespace) slots, values) and timers: a meta row holding the signed pickle of
    ``meta``, the state names, keys and values; a row per state entry (name, key, value refs)
    and per timer (key, timestamp), timers in firing order."""
    keys: list[Any] = []
    key_index: dict[tuple[type, Any], int] = {}

    def key_ref(key: Any) -> int:
        typed = (type(key), key)  # 1, 1.0 and True stay distinct keys
        i = key_index.get(typed)
        if i is None:
            i = key_index[typed] = len(keys)
            keys.append(key)
        return i

    cols: dict[str, list[Any]] = {name: [] for name in SCHEMA.names}
    names: list[str] = []
    objects: list[Any] = []
    for name, slots, values in states:
        n = len(slots)
        cols["section"] += [STATE] * n
        cols["name"] += [len(names)] * n
        cols["key"] += [key_ref(key) for key, _ in slots]
        cols["ts"] += [None] * n
        cols["obj"] += range(len(objects), len(objects) + n)
        names.append(name)
        objects += values
    for section, queue in ((EVENT_TIMER, event_timers), (PROC_TIMER, processing_timers)):
        timers = list(queue)
        n = len(timers)
        cols["section"] += [section] * n
        cols["name"] += [None] * n
        cols["key"] += [key_ref(key) for _, key, _ in timers]
        cols["ts"] += [ts for ts, _, _ in timers]
        cols["obj"] += [None] * n
    cols["blob"] += [None] * len(cols["section"])
    blob = pickler.dump((meta, names, keys, objects))
    for name, value in zip(SCHEMA.names, (META, None, None, None, None, blob)):
        cols[name].insert(0, value)
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="lz4", use_threads=False)  # small buffers
    with pa.ipc.new_stream(sink, SCHEMA, options=options) as s:
        s.write_table(pa.Table.from_pydict(cols, schema=SCHEMA))
    return sink.getvalue().to_pybytes()


def restore_process_operator(
    pickler: StatePickler, kind: str, data: bytes, keys_by_value: bool = True,
    key_type: Any = None, where: str = "KeyedProcess",
) -> tuple[
    dict[str, Any],
    list[tuple[str, tuple[Any, Any], Any]],
    list[tuple[int, tuple[Any, Any]]],
    list[tuple[int, tuple[Any, Any]]],
]:
    """(meta, [(state name, (key, namespace), value)], event timers, processing timers) of a
    snapshot, timers as (timestamp, (key, namespace)) in firing order; its keys as the operator
    ``where`` holds them (:func:`~flinkwin.operator.snapshots.restored_keys.restore_keys`)."""
    try:
        reader = pa.ipc.open_stream(pa.py_buffer(data), options=READ_OPTIONS)
    except (pa.ArrowInvalid, OSError) as exc:
        raise ValueError(f"not a flinkwin operator snapshot: {exc}") from exc
    version = (reader.schema.metadata or {}).get(b"flinkwin.format", b"?").decode()
    if version != FORMAT:
        raise ValueError(
            f"snapshot format {version!r} is not a process operator's ({FORMAT!r})"
        )
    table = reader.read_all()
    meta, names, keys, objects = pickler.load(table.column("blob")[0].as_py())
    keys = restore_keys(keys, keys_by_value, key_type, where)
    if meta["operator"] != kind:
        raise ValueError(
            f"snapshot of a {meta['operator']} process operator cannot restore a {kind} one"
        )
    body = table.slice(1).to_pydict()
    states = []
    timers: dict[int, list[tuple[int, tuple[Any, Any]]]] = {EVENT_TIMER: [], PROC_TIMER: []}
    for section, name, key, ts, obj in zip(
        body["section"], body["name"], body["key"], body["ts"], body["obj"]
    ):
        slot = (keys[key], VOID_NAMESPACE)
        if section == STATE:
            states.append((names[name], slot, objects[obj]))
        elif section in timers:
            timers[section].append((ts, slot))
        else:
            raise ValueError(f"unknown snapshot section {section!r}")
    return meta, states, timers[EVENT_TIMER], timers[PROC_TIMER]


__all__ = ["FORMAT", "restore_process_operator", "snapshot_process_operator"]
