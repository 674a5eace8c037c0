"""What the frame-based key-group states share: their snapshot (one pandas frame and a few
numbers as one Arrow IPC stream) and draining their pending output frames.

Used by :mod:`flinkwin.operator.columnar`, :mod:`flinkwin.operator.panes` and
:mod:`flinkwin.operator.element_lists`. The schema metadata carries ``flinkwin.format`` (checked
on restore) and the numbers as JSON under a key of the state's own.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
import pyarrow as pa


def write_frame(frame: pd.DataFrame | None, fmt: str, meta_key: str, meta: dict[str, Any]) -> bytes:
    """``frame`` (None: no columns) and ``meta`` as one lz4-compressed Arrow IPC stream."""
    table = pa.Table.from_pandas(
        frame if frame is not None else pd.DataFrame(), preserve_index=False
    )
    table = table.replace_schema_metadata(
        {"flinkwin.format": fmt, meta_key: json.dumps(meta)}
    )
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="lz4")
    with pa.ipc.new_stream(sink, table.schema, options=options) as stream:
        stream.write_table(table)
    return sink.getvalue().to_pybytes()


def read_frame(
    data: bytes, fmt: str, meta_key: str, what: str
) -> tuple[pd.DataFrame | None, dict[str, Any]]:
    """The frame (None if it had no columns) and numbers of a :func:`write_frame` snapshot;
    a snapshot of another format fails with ``ValueError`` naming ``what`` was expected."""
    reader = pa.ipc.open_stream(pa.py_buffer(data))
    metadata = reader.schema.metadata or {}
    if metadata.get(b"flinkwin.format") != fmt.encode():
        raise ValueError(f"not a {what} flinkwin snapshot")
    meta = json.loads(metadata[meta_key.encode()])
    table = reader.read_all().replace_schema_metadata(None)
    if not table.num_columns:
        return None, meta
    return table.to_pandas(integer_object_nulls=True), meta


def drain_frames(parts: list[pd.DataFrame], drop: tuple[str, ...] = ()) -> pd.DataFrame | None:
    """The pending frames as one (without the ``drop`` columns), or None; clears ``parts``."""
    if not parts:
        return None
    frame = parts[0] if len(parts) == 1 else pd.concat(parts, ignore_index=True)
    parts.clear()
    if drop:
        frame = frame.drop(columns=list(drop))
    return frame.reset_index(drop=True)


__all__ = ["drain_frames", "read_frame", "write_frame"]
