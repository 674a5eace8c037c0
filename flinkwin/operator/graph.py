"""``GraphOperator``: the operators of a stream graph fused into one, as one stage runs them.

A stream program that is a graph (a ``union`` of inputs, a window join, an interval join, a
``KeyedProcessFunction``, a window over a window's results) runs in ONE stateful Spark stage
(see ``docs/architecture.md#stream-graphs``). In each key group the stage holds a
``GraphOperator``: the graph's operators (:class:`~flinkwin.operator.stream_operator.
StreamOperator`: window, keyed process, interval join...) and its stateless steps (``map``,
``flat_map``, ``filter``), wired as the program wired them.

What happens, exactly:

* **Elements.** The stage's rows carry their source's number (``source_column``); each row
  becomes an element of its source (a Row, a tuple or a value, as the source's type says) and
  is pushed through the graph in arrival order: into every operator or step reading that
  source, each operator's outputs on to every operator reading them, depth first, before the
  next row (Flink's chained order for one record). An element without a timestamp
  (``MIN_LONG``) reaches the operators as ``None``.
* **Watermarks.** ``advance_watermark(w)`` advances the operators in topological order; the
  results and side outputs each one emits are pushed downstream before the next operator
  advances, so a window's results reach the operator after it before the watermark that fired
  them, as in Flink (an operator forwards a watermark after what it fired). Every operator
  sees the stage's watermark: the minimum of its sources' watermarks (Spark's global
  watermark), which is Flink's watermark after a union or a two-input operator.
* **Processing time** is advanced the same way.
* **Outputs.** The stage's main output is one stream of the graph (``main``); its side outputs
  are side outputs (late data, ``ctx.output``) of any of the graph's operators.

The snapshot holds each operator's own snapshot and the clocks (an Arrow IPC stream, no
pickle of its own).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from flinkwin.functions.internal import iterate_outputs
from flinkwin.operator.runtime_context import TaskInfo, TaskRuntimeContext
from flinkwin.operator.stream_operator import StreamOperator
from flinkwin.operator.vectorized import _records
from flinkwin.output_tag import OutputTag
from flinkwin.time import MIN_LONG

FORMAT = "graph-1"
MAP, FLAT_MAP, FILTER, UNION, OPERATOR = "map", "flat_map", "filter", "union", "operator"

#: A stream of the graph: ``("source", i)``, ``("node", j)`` (node ``j``'s main output) or
#: ``("side", j, tag_id)`` (node ``j``'s side output ``tag_id``).
StreamRef = tuple[Any, ...]


@dataclass(frozen=True)
class SourceSpec:
    """How the stage's rows of one source become its elements."""

    #: the stage's columns holding this source's fields, in field order
    columns: tuple[str, ...]
    #: the fields' names (the element's field names)
    names: tuple[str, ...]
    tuple_elements: bool = False
    pickled_elements: bool = False
    atomic_elements: bool = False
    converters: dict[str, Any] = field(default_factory=dict)

    def elements(self, frame: pd.DataFrame) -> list[Any]:
        sub = frame.loc[:, list(self.columns)]
        sub.columns = list(self.names)
        return _records(sub, self.tuple_elements, self.pickled_elements,
                        self.atomic_elements, self.converters)


@dataclass(frozen=True)
class NodeSpec:
    """One operator or stateless step of the graph.

    ``inputs`` are ``(stream, input_index)`` pairs: every element of ``stream`` reaches this
    node as input ``input_index`` (several streams on one index: a union). ``build(task_info)``
    makes an operator node's :class:`StreamOperator`; ``function`` is a step's callable;
    ``shape`` turns the node's results into the elements the nodes after it see (None: as
    they are)."""

    name: str
    kind: str
    inputs: tuple[tuple[StreamRef, int], ...]
    build: Any = None
    function: Any = None
    rich: Any = None
    shape: Any = None


@dataclass(frozen=True)
class GraphPlan:
    """A stream graph as one stage runs it: sources, nodes in topological order, outputs."""

    sources: tuple[SourceSpec, ...]
    nodes: tuple[NodeSpec, ...]
    main: StreamRef
    #: the stage's side outputs: tag -> the graph's stream holding it
    sides: dict[OutputTag, StreamRef] = field(default_factory=dict)
    source_column: str = "_fw_in"


class GraphOperator:
    """The operators of one key group of a graph stage (see module docstring)."""

    late_output_tag: OutputTag | None = None

    def __init__(self, plan: GraphPlan, task_info: TaskInfo) -> None:
        self.plan = plan
        self.task_info = task_info
        self.current_watermark = MIN_LONG
        self.current_processing_time = MIN_LONG
        self.operators: list[StreamOperator | None] = [
            node.build(task_info) if node.kind == OPERATOR else None for node in plan.nodes
        ]
        self._consumers: dict[StreamRef, list[tuple[int, int]]] = {}
        for j, node in enumerate(plan.nodes):
            for ref, index in node.inputs:
                self._consumers.setdefault(_ref(ref), []).append((j, index))
        self._main = _ref(plan.main)
        self._sides = {_ref(ref): tag for tag, ref in plan.sides.items()}
        self._output: list[tuple[Any, int | None]] = []
        self._side_output: dict[OutputTag, list[tuple[Any, int | None]]] = {}
        self._opened = False

    # ----------------------------------------------------------------- lifecycle
    def open(self) -> None:
        if self._opened:
            return
        self._opened = True
        context = TaskRuntimeContext(self.task_info)
        from flinkwin.operator.window_operator import open_function

        for node, op in zip(self.plan.nodes, self.operators):
            if op is not None:
                op.open()
            elif node.rich is not None:
                open_function(node.rich, context)

    def close(self) -> None:
        failure: BaseException | None = None
        for node, op in zip(self.plan.nodes, self.operators):
            try:
                if op is not None:
                    op.close()
                elif self._opened and callable(getattr(node.rich, "close", None)):
                    node.rich.close()
            except Exception as exc:  # noqa: BLE001 (raised below, after the others)
                failure = failure or exc
        self._opened = False
        if failure is not None:
            raise failure

    # -------------------------------------------------------------------- inputs
    def process_element(self, value: Any, timestamp: int | None, input_index: int = 0) -> None:
        """One element of source ``input_index``."""
        self.open()
        self._push(("source", input_index), value, _stamp(timestamp))

    def process_batch(self, frame: pd.DataFrame, timestamps: Sequence[int] | np.ndarray) -> None:
        """The stage's rows in order: each to its source's consumers (see module docstring)."""
        self.open()
        sources = frame[self.plan.source_column].to_numpy()
        stamps = np.asarray(timestamps, dtype=np.int64)
        elements: list[Any] = [None] * len(frame)
        for i, source in enumerate(self.plan.sources):
            rows = np.flatnonzero(sources == i)
            if len(rows):
                for row, element in zip(rows.tolist(), source.elements(frame.iloc[rows])):
                    elements[row] = element
        for row, source_index in enumerate(sources.tolist()):
            self._push(("source", source_index), elements[row], _stamp(stamps[row]))

    def advance_watermark(self, watermark: int) -> None:
        """Advance every operator in topological order, pushing what each fires downstream
        before the next one advances."""
        watermark = int(watermark)
        if watermark <= self.current_watermark:
            return
        self.open()
        self.current_watermark = watermark
        for j, op in enumerate(self.operators):
            if op is not None:
                op.advance_watermark(watermark)
                self._flush(j)

    def advance_processing_time(self, time: int) -> None:
        self.open()
        self.current_processing_time = int(time)
        for j, op in enumerate(self.operators):
            if op is not None:
                op.advance_processing_time(time)
                self._flush(j)

    # ------------------------------------------------------------------ routing
    def _push(self, ref: StreamRef, value: Any, timestamp: int | None) -> None:
        if ref == self._main:
            self._output.append((value, timestamp))
        tag = self._sides.get(ref)
        if tag is not None:
            self._side_output.setdefault(tag, []).append((value, timestamp))
        for j, index in self._consumers.get(ref, ()):
            self._deliver(j, index, value, timestamp)

    def _deliver(self, j: int, index: int, value: Any, timestamp: int | None) -> None:
        node = self.plan.nodes[j]
        op = self.operators[j]
        if op is not None:
            op.process_element(value, timestamp, index)
            self._flush(j)
            return
        out = ("node", j)
        if node.kind == MAP:
            self._emit(node, out, node.function(value), timestamp)
        elif node.kind == FLAT_MAP:
            for result in iterate_outputs(node.function(value), f"{node.name}.flat_map"):
                self._emit(node, out, result, timestamp)
        elif node.kind == UNION or node.function(value):  # a union passes all, a filter some
            self._push(out, value, timestamp)

    def _emit(self, node: NodeSpec, ref: StreamRef, value: Any, timestamp: int | None) -> None:
        self._push(ref, value if node.shape is None else node.shape(value), timestamp)

    def _flush(self, j: int) -> None:
        op = self.operators[j]
        assert op is not None
        node = self.plan.nodes[j]
        for value, timestamp in op.drain_output():
            self._emit(node, ("node", j), value, _stamp(timestamp))
        for tag, items in op.drain_side_outputs().items():
            ref = ("side", j, tag.tag_id)
            for value, timestamp in items:
                self._push(ref, value, _stamp(timestamp))

    # ------------------------------------------------------------------ outputs
    def drain_output(self) -> list[tuple[Any, int | None]]:
        out, self._output = self._output, []
        return out

    def drain_side_outputs(self) -> dict[OutputTag, list[tuple[Any, int | None]]]:
        out, self._side_output = self._side_output, {}
        return out

    # -------------------------------------------------------------- timers, size
    def _ops(self) -> Iterable[StreamOperator]:
        return (op for op in self.operators if op is not None)

    def next_event_time_timer(self) -> int | None:
        return _earliest(op.next_event_time_timer() for op in self._ops())

    def next_processing_time_timer(self) -> int | None:
        return _earliest(op.next_processing_time_timer() for op in self._ops())

    @property
    def num_late_records_dropped(self) -> int:
        return sum(op.num_late_records_dropped for op in self._ops())

    @property
    def num_windows_fired(self) -> int:
        return sum(getattr(op, "num_windows_fired", 0) for op in self._ops())

    def state_size(self) -> tuple[int, int]:
        sizes = [op.state_size() for op in self._ops()]
        return sum(k for k, _ in sizes), sum(n for _, n in sizes)

    def holds_nothing(self) -> bool:
        return all(op.holds_nothing() for op in self._ops())

    # ---------------------------------------------------------------- snapshots
    def snapshot(self) -> bytes:
        """Each operator's snapshot (null for steps) and the clocks, as an Arrow IPC stream."""
        blobs = [None if op is None else op.snapshot() for op in self.operators]
        table = pa.table({"node": pa.array(blobs, pa.binary())})
        metadata = {
            "flinkwin.format": FORMAT,
            "watermark": str(self.current_watermark),
            "processing_time": str(self.current_processing_time),
            "nodes": str(len(self.operators)),
        }
        table = table.replace_schema_metadata(metadata)
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        return bytes(sink.getvalue().to_pybytes())

    def restore(self, data: bytes) -> None:
        reader = pa.ipc.open_stream(pa.py_buffer(data))
        table = reader.read_all()
        metadata = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
        if metadata.get("flinkwin.format") != FORMAT:
            raise ValueError(f"not a stream-graph snapshot: {metadata.get('flinkwin.format')}")
        blobs = table.column("node").to_pylist()
        if len(blobs) != len(self.operators):
            raise ValueError(
                f"the snapshot holds {len(blobs)} graph nodes but the graph now has "
                f"{len(self.operators)}: a graph's shape cannot change on restart"
            )
        for op, blob in zip(self.operators, blobs):
            if op is not None and blob is not None:
                op.restore(blob)
        self.current_watermark = int(metadata["watermark"])
        self.current_processing_time = int(metadata["processing_time"])


def _ref(ref: StreamRef) -> StreamRef:
    """A stream reference with a side output's tag as its id."""
    if ref[0] == "side" and isinstance(ref[2], OutputTag):
        return ("side", ref[1], ref[2].tag_id)
    return tuple(ref)


def _stamp(timestamp: Any) -> int | None:
    if timestamp is None:
        return None
    value = int(timestamp)
    return None if value == MIN_LONG else value


def _earliest(timers: Iterable[int | None]) -> int | None:
    present = [t for t in timers if t is not None]
    return min(present) if present else None


#: builds a node's operator for a key group's task
OperatorBuilder = Callable[[TaskInfo], StreamOperator]

__all__ = [
    "FILTER",
    "FLAT_MAP",
    "FORMAT",
    "MAP",
    "OPERATOR",
    "UNION",
    "GraphOperator",
    "GraphPlan",
    "NodeSpec",
    "OperatorBuilder",
    "SourceSpec",
]
