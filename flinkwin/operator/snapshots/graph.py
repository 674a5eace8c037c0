"""A stream graph's state as bytes: one Arrow IPC stream, no pickle of its own.

One row per graph node: the node operator's own snapshot (null for a stateless step). The
schema metadata carries ``flinkwin.format`` and the graph's clocks (:class:`GraphClocks`):
the stage's watermark and processing time, each source's greatest timestamp and last
activity, each node's watermark and its input gates' watermark valves (JSON; absent in
snapshots written before flinkwin kept them). The runtime stores the stream sealed, all of it
under one HMAC (:func:`flinkwin.operator.states.sealed_snapshot`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pyarrow as pa

from flinkwin.operator.snapshots import formats
from flinkwin.operator.watermark_valve import StatusWatermarkValve

FORMAT = formats.written(formats.GRAPH)


@dataclass
class GraphClocks:
    """The clocks of a graph's snapshot (:class:`flinkwin.operator.graph.GraphOperator`'s)."""

    watermark: int
    processing_time: int
    #: per source, the greatest timestamp seen and the processing time of its last element
    source_max: list[int]
    source_active: list[int]
    #: per node, its watermark and its input gates' valves (None: not kept yet)
    node_watermarks: list[int]
    valves: list[list[StatusWatermarkValve] | None]


def dump_graph(blobs: list[bytes | None], clocks: GraphClocks) -> bytes:
    """The snapshot of a graph whose nodes' snapshots are ``blobs``."""
    table = pa.table({"node": pa.array(blobs, pa.binary())})
    metadata = {
        "flinkwin.format": FORMAT,
        "watermark": str(clocks.watermark),
        "processing_time": str(clocks.processing_time),
        "source_max": _longs(clocks.source_max),
        "source_active": _longs(clocks.source_active),
        "node_watermarks": _longs(clocks.node_watermarks),
        "valves": json.dumps([
            None if valves is None else [valve.to_json() for valve in valves]
            for valves in clocks.valves
        ]),
        "nodes": str(len(blobs)),
    }
    table = table.replace_schema_metadata(metadata)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def load_graph(data: bytes, gates: list[int]) -> tuple[list[bytes | None], GraphClocks]:
    """The node snapshots and clocks of ``data``, for a graph whose node ``j`` has
    ``gates[j]`` input gates; a snapshot of another format or another graph shape fails."""
    table = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    metadata = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
    if metadata.get("flinkwin.format") != FORMAT:
        raise ValueError(f"not a stream-graph snapshot: {metadata.get('flinkwin.format')}")
    blobs = table.column("node").to_pylist()
    if len(blobs) != len(gates):
        raise ValueError(
            f"the snapshot holds {len(blobs)} graph nodes but the graph now has "
            f"{len(gates)}: a graph's shape cannot change on restart"
        )
    # none before flinkwin kept them
    kept = json.loads(metadata.get("valves", "null")) or [None] * len(gates)
    valves = [
        None if node is None else [StatusWatermarkValve.from_json(v) for v in node]
        for node in kept
    ]
    if any(v is not None and len(v) != g for v, g in zip(valves, gates)):
        raise ValueError("the snapshot's input gates do not match the graph's")
    clocks = GraphClocks(
        int(metadata["watermark"]), int(metadata["processing_time"]),
        _read_longs(metadata["source_max"]), _read_longs(metadata["source_active"]),
        _read_longs(metadata["node_watermarks"]), valves,
    )
    return blobs, clocks


def _longs(values: list[int]) -> str:
    return ",".join(map(str, values))


def _read_longs(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v]
