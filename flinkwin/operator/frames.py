"""What the frame-based key-group states share: their snapshot (one pandas frame and a few
numbers as one Arrow IPC stream), the exact conversion of frames to and from Arrow, and
draining their pending output frames.

Exact conversion (:func:`to_arrow`, :func:`from_arrow`): integers never pass through float (an
integer column with nulls is Python ints and None), and NaN is not null (a float column with
nulls is Python floats, NaN among them, and None); plain numpy columns where nothing is null.

Used by :mod:`flinkwin.operator.states.columnar`, :mod:`flinkwin.operator.states.panes` and
:mod:`flinkwin.operator.states.lists`. The schema metadata carries ``flinkwin.format`` (checked
on restore) and the numbers as JSON under a key of the state's own.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from flinkwin.operator.snapshots import READ_OPTIONS


def to_arrow(
    frame: pd.DataFrame, kept: ArrowColumns | None = None, changing: str = ""
) -> pa.Table:
    """``frame`` as an Arrow table, exactly: a NaN stays NaN (Arrow's pandas conversion would
    make it null) and None is null (see module docstring). One thread: a key group's frame is
    small, and Arrow's pool of Python threads costs more than it saves. Column by column as
    ``Table.from_pandas`` converts them, without its pandas metadata (no reader uses it).
    ``kept``: the object columns' arrays kept from the last call (all but ``changing``)."""
    names = list(frame.columns)
    if not all(type(name) is str for name in names) or len(set(names)) != len(names):
        table = pa.Table.from_pandas(frame, preserve_index=False, nthreads=1)
        return table.from_arrays(
            [_exact(frame[name], column) for name, column in zip(names, table.columns)],
            names=table.column_names,
        )
    known = {} if kept is None else kept.arrays(frame, _converted, changing)
    arrays = []
    for name, column in frame.items():
        values = column._values
        if name in known:
            arrays.append(known[name])
        elif isinstance(values, np.ndarray) and values.dtype.kind in "iub":
            arrays.append(pa.array(values))
        else:
            arrays.append(_converted(column))
    return pa.Table.from_arrays(arrays, names=names)


def _converted(column: pd.Series) -> Any:
    return _exact(column, pa.array(column, from_pandas=True))


def _exact(column: pd.Series, converted: pa.Array | pa.ChunkedArray) -> Any:
    """``converted`` (Arrow's pandas conversion of ``column``), a float column converted again
    without taking NaN for null."""
    if not pa.types.is_floating(converted.type):
        return converted
    return pa.array(column.to_numpy(), type=converted.type, from_pandas=False)


def from_arrow(table: pa.Table | pa.RecordBatch, **options: Any) -> pd.DataFrame:
    """An Arrow table (or batch) as a pandas frame, exactly (see module docstring);
    ``options`` go to Arrow's ``to_pandas``."""
    frame = table.to_pandas(integer_object_nulls=True, **options)
    for name, column in zip(table.schema.names, table.columns):
        if pa.types.is_floating(column.type) and column.null_count:
            frame[name] = float_objects(
                column.to_numpy(zero_copy_only=False), column.is_null().to_numpy(False)
            )
        elif pa.types.is_nested(column.type) and _holds_floats(column.type):
            # Arrow's pandas conversion makes a null float element NaN: take Python values
            frame[name] = pd.Series(column.to_pylist(), dtype=object, index=frame.index)
    return frame


def _holds_floats(kind: pa.DataType) -> bool:
    """Whether a nested Arrow type holds floats at some depth."""
    if pa.types.is_floating(kind):
        return True
    if pa.types.is_map(kind):
        return _holds_floats(kind.key_type) or _holds_floats(kind.item_type)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or (
        pa.types.is_fixed_size_list(kind)
    ):
        return _holds_floats(kind.value_type)
    if pa.types.is_struct(kind):
        return any(_holds_floats(kind.field(i).type) for i in range(kind.num_fields))
    return False


def float_objects(values: np.ndarray, nulls: np.ndarray) -> np.ndarray:
    """Floats as Python floats (NaN kept) with None where ``nulls``."""
    out = np.asarray(values).astype(object)
    out[np.asarray(nulls, dtype=bool)] = None
    return out


class ArrowColumns:
    """The Arrow arrays of a frame's object columns (strings: the costly part of a snapshot's
    conversion), kept while the frame only loses rows or gains rows at its end, so that
    :func:`to_arrow` converts only the rows added since its last call. It follows one frame
    object (:meth:`follow`); any other frame is converted whole."""

    def __init__(self) -> None:
        self.frame: pd.DataFrame | None = None
        self._arrays: dict[str, Any] = {}

    def follow(self, old: pd.DataFrame, frame: pd.DataFrame, kept: np.ndarray | None) -> None:
        """The frame ``old`` became ``frame``: ``old``'s rows where ``kept`` (all when None),
        then appended rows, the object columns' values unchanged."""
        if self.frame is not old:
            self.frame, self._arrays = None, {}
            return
        if kept is not None and not kept.all():
            mask = pa.array(kept[: self._length()])
            self._arrays = {name: array.filter(mask) for name, array in self._arrays.items()}
        self.frame = frame

    def _length(self) -> int:
        return len(next(iter(self._arrays.values()))) if self._arrays else 0

    def arrays(self, frame: pd.DataFrame, convert: Any, skip: str) -> dict[str, Any]:
        """The Arrow array of each of ``frame``'s object columns but ``skip`` (``convert``
        turns a column into one), the kept prefix of each reused; kept for the next call."""
        names = [n for n, column in frame.items() if column.dtype.kind == "O" and n != skip]
        if self.frame is not frame or set(self._arrays) != set(names):
            self._arrays = {}
        kept = self._length()
        arrays = {}
        for name in names:
            column = frame[name]
            if kept == 0:
                arrays[name] = convert(column)
                continue
            tail = convert(column.iloc[kept:])
            head = self._arrays[name]
            if tail.type != head.type or not isinstance(tail, pa.Array):
                arrays[name] = convert(column)
            else:
                arrays[name] = pa.concat_arrays([head, tail]) if len(tail) else head
        self.frame = frame
        self._arrays = {n: a for n, a in arrays.items() if isinstance(a, pa.Array)}
        if len(self._arrays) != len(arrays):
            self.frame, self._arrays = None, {}
        return arrays



def write_frame(
    frame: pd.DataFrame | None, fmt: str, meta_key: str, meta: dict[str, Any],
    kept: ArrowColumns | None = None, changing: str = "",
) -> bytes:
    """``frame`` (None: no columns) and ``meta`` as one lz4-compressed Arrow IPC stream
    (``kept``, ``changing``: see :func:`to_arrow`)."""
    table = to_arrow(frame if frame is not None else pd.DataFrame(), kept, changing)
    table = table.replace_schema_metadata(
        {"flinkwin.format": fmt, meta_key: json.dumps(meta)}
    )
    sink = pa.BufferOutputStream()
    # (one thread, as in to_arrow: the buffers are small)
    options = pa.ipc.IpcWriteOptions(compression="lz4", use_threads=False)
    with pa.ipc.new_stream(sink, table.schema, options=options) as stream:
        stream.write_table(table)
    return sink.getvalue().to_pybytes()


def read_frame(
    data: bytes, fmt: str, meta_key: str, what: str
) -> tuple[pd.DataFrame | None, dict[str, Any]]:
    """The frame (None if it had no columns) and numbers of a :func:`write_frame` snapshot;
    a snapshot of another format fails with ``ValueError`` naming ``what`` was expected."""
    reader = pa.ipc.open_stream(pa.py_buffer(data), options=READ_OPTIONS)
    metadata = reader.schema.metadata or {}
    if metadata.get(b"flinkwin.format") != fmt.encode():
        raise ValueError(f"not a {what} flinkwin snapshot")
    meta = json.loads(metadata[meta_key.encode()])
    table = reader.read_all().replace_schema_metadata(None)
    if not table.num_columns:
        return None, meta
    return from_arrow(table), meta


def drain_frames(parts: list[pd.DataFrame], drop: tuple[str, ...] = ()) -> pd.DataFrame | None:
    """The pending frames as one (without the ``drop`` columns), or None; clears ``parts``."""
    frame, _ = drain_frames_timed(parts, drop)
    return frame


def drain_frames_timed(
    parts: list[pd.DataFrame], drop: tuple[str, ...] = (), end: str | None = None,
) -> tuple[pd.DataFrame | None, np.ndarray]:
    """``drain_frames`` without the ``end`` column too, and that column's values minus one
    (each row's window's ``max_timestamp()``; empty without ``end``). The frame is built from
    the kept columns' arrays (a call's fired rows are few, and pandas' ``drop`` and
    ``reset_index`` cost more than the rows)."""
    if not parts:
        return None, np.empty(0, dtype=np.int64)
    frame = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    parts.clear()
    stamps = (
        np.empty(0, dtype=np.int64) if end is None
        else frame[end].to_numpy(dtype=np.int64) - 1
    )
    gone = set(drop) if end is None else {*drop, end}
    if not frame.columns.is_unique:
        return frame.drop(columns=list(gone)).reset_index(drop=True), stamps
    keep = [c for c in frame.columns if c not in gone]
    return pd.DataFrame._from_arrays(
        [frame[c]._values for c in keep], columns=keep, index=pd.RangeIndex(len(frame)),
        verify_integrity=False,
    ), stamps


__all__ = [
    "ArrowColumns",
    "drain_frames",
    "drain_frames_timed",
    "float_objects",
    "from_arrow",
    "read_frame",
    "to_arrow",
    "write_frame",
]
