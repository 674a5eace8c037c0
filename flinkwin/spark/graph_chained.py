"""A stream graph as a chain of keyed stages in ONE query: every keyed operator in its own key
groups (the distributed graph plan).

:mod:`flinkwin.spark.graph_compiler` builds this plan instead of the one-task graph stage when
:func:`chain_reason` finds nothing against it (HotItems: a sliding count keyed by item, then
``key_by(window_end).process(TopN)``; a window after a window keyed differently; joins keyed by
functions). The Flink side is :mod:`flinkwin.operator.graph_chain`; the plan, per micro-batch:

1. **sources' step** (``mapInArrow``, one call per input partition): the partition's rows in
   arrival order through the stateless steps reading the sources (:meth:`ChainStep.
   process_sources`); its output carries no watermark metadata, so Spark drops no late row;
2. per keyed node ``j``, in topological order, ``groupBy(_fw_kg)`` (a shuffle) then ONE
   ``transformWithStateInPandas`` operator in EventTime mode (no ``eventTimeColumnName``): the
   key group's :class:`ChainStep` restored from its ValueState (sealed, as a graph stage's
   state), run with the rows sent to node ``j`` at Spark's watermark (Flink's order carried by
   the rows' phases), stored back; a timer at Spark's watermark + 1 wakes every key group holding
   state at each watermark advance (its clock). Rows for later nodes and the graph's outputs
   pass through unchanged: the stateful operators form one linear chain (a stateful operator
   read by two consumers would be planned twice, with two states);
3. **outputs** (``mapInArrow``): the rows for the graph's main and side outputs, encoded as a
   graph stage's (tag column, main and side columns, metrics rows), so sinks, ``start()`` and
   ``writeStream`` read them unchanged.

Between stages a row is ``(_fw_node, _fw_kg, _fw_data)``: the receiving node (``-1``: the
graph's outputs, ``-2``: a metrics row), the grouping label of its key group, and the
:class:`Emission` s of one emitting call for that node and key group, packed column by column
(:mod:`flinkwin.operator.emission_wire`), pickled and signed with a key made for the compiled
query (:class:`~flinkwin.operator.snapshots.StatePickler`: checked before unpickling; bytes of
input data are never unpickled, the elements are pickled by the sources' step itself). On
static input the same chain runs with ``applyInPandas`` per node, each key group once, to the
end of input.
"""

from __future__ import annotations

import functools
import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark import cloudpickle
from pyspark.sql import DataFrame
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from flinkwin.errors import UnsupportedOperationError
from flinkwin.operator import emission_wire
from flinkwin.operator.graph import GraphPlan
from flinkwin.operator.graph_chain import ChainStep, Emission, keyed_nodes, single_task_reason
from flinkwin.operator.graph_subtask import GraphSubtask
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.operator.snapshots import StatePickler

from .daemon import automatic_collection_paused, young_collections_only
from .key_groups import key_group_labels
from .outputs import METRICS
from .row_encoder import arrow_to_pandas
from .runtime import EVENT_TIME, PROCESSING_TIME, KeyGroupRuntime
from .state_key import snapshot_binding
from .subtasks import SUBTASKS, current_run, reused_worker
from .watermarks import flink_watermark

#: the stage kind a distributed graph records in ``pipeline.json``
STAGE_KIND = "distributed graph"
NODE, LABEL, DATA = "_fw_node", "_fw_kg", "_fw_data"
OUTPUT, METRICS_ROW = -1, -2
WIRE = StructType([
    StructField(NODE, IntegerType(), False),
    StructField(LABEL, IntegerType(), False),
    StructField(DATA, BinaryType(), False),
])
_WIRE_ARROW = pa.schema([(NODE, pa.int32(), False), (LABEL, pa.int32(), False),
                         (DATA, pa.binary(), False)])
#: metrics a keyed node's call reports (the others come from the sources' and outputs' steps)
_IN, _DROPPED, _FIRED, _KEYS, _WINDOWS, _BYTES, _CALLS = (
    METRICS.index(n) for n in ("numRecordsIn", "numLateRecordsDropped", "numWindowsFired",
                               "keysInState", "windowsInState", "stateBytes", "keyGroupCalls"))


#: why a graph that could run distributed runs in one task: it was not asked to
PARALLELISM_ONE = (
    "parallelism 1, a graph's default (as Flink's parallelism.default): set_parallelism(n) "
    "with n > 1 on its result or on the environment runs every keyed operator in n tasks"
)


def chain_reason(
    graph: GraphPlan, node_timers: list[str], streaming: bool, arrival: bool, domain: str,
    parallelism: int | None,
) -> str | None:
    """Why the graph runs in one task rather than distributed (None: distributed)."""
    if not streaming:
        return "static input: a graph over static DataFrames runs in one task"
    reason = single_task_reason(graph)
    if reason is not None:
        return reason
    if PROCESSING_TIME in node_timers:
        return ("an operator works in processing time: a distributed key group is woken by "
                "the event-time watermark only")
    if not arrival:
        return "BATCH runtime mode (elements in event-time order) runs in one task"
    if streaming and domain != EVENT_TIME:
        return "the graph's sources carry no event-time watermark"
    if parallelism is None or parallelism == 1:
        return PARALLELISM_ONE
    return None


@dataclass
class ChainedGraph:
    """What the workers run of a distributed graph (shipped with every stage's function)."""

    plan: GraphPlan
    key_groups: int
    #: converts the sources' rows to elements and the outputs to the stage's output columns
    runtime: KeyGroupRuntime
    #: seals the key groups' stored state
    state_pickler: StatePickler
    watermark_shift: int = 0
    stage_fingerprint: str = ""
    #: signs the elements between the stages (a key for this compiled query only)
    wire: StatePickler = field(default_factory=lambda: StatePickler(
        key=secrets.token_bytes(32), source="the query's wire key",
        dumps=functools.partial(emission_wire.dumps, fallback=cloudpickle.dumps)))
    stage_id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def labels(self) -> tuple[int, ...]:
        return key_group_labels(self.key_groups)

    def task_info(self, j: int, key_group: int) -> TaskInfo:
        name = self.plan.nodes[j].name
        return TaskInfo(name, key_group, self.key_groups, self.key_groups)

    # ------------------------------------------------------------------ wire
    def encode(self, emitted: list[Emission], own_label: int) -> pa.RecordBatch:
        """``emitted`` as wire rows: one per receiving node and key group (outputs: one, in
        the emitter's own key group's label), the emission order kept within each."""
        groups: dict[tuple[int, int], list[Emission]] = {}
        labels = self.labels
        for e in emitted:
            where = (OUTPUT, own_label) if e.node is None else (e.node, labels[e.key_group])
            groups.setdefault(where, []).append(e)
        nodes = [n for n, _ in groups]
        return pa.RecordBatch.from_arrays([
            pa.array(nodes, pa.int32()), pa.array([lab for _, lab in groups], pa.int32()),
            pa.array([self.wire.dump(emission_wire.pack(items)) for items in groups.values()],
                     pa.binary()),
        ], schema=_WIRE_ARROW)

    def decode(self, blobs: Any) -> list[Emission]:
        out: list[Emission] = []
        for blob in blobs:
            out.extend(emission_wire.unpack(
                self.wire.load(bytes(blob), "elements between a graph's stages")))
        return out

    def metrics_batch(self, counts: np.ndarray) -> pa.RecordBatch:
        """A call's metrics row: in the first key group's label, whoever sends it (a key
        group of a later node that receives rows passing on only is still one more call of
        Spark's; one label makes it one per node and micro-batch)."""
        return pa.RecordBatch.from_arrays([
            pa.array([METRICS_ROW], pa.int32()), pa.array([self.labels[0]], pa.int32()),
            pa.array([counts.astype(np.int64).tobytes()], pa.binary()),
        ], schema=_WIRE_ARROW)

    # --------------------------------------------------------------- sources
    def sources(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """The ``mapInArrow`` function of the sources' step: the whole input partition at once
        (its rows in arrival order: one emission order per partition)."""
        from pyspark import TaskContext

        young_collections_only()
        context = TaskContext.get()
        partition = context.partitionId() if context is not None else 0
        frames = [arrow_to_pandas(pa.Table.from_batches([b])) for b in batches if b.num_rows]
        rows, _ = self.runtime._inputs.rows(frames)
        counts = np.zeros(len(METRICS), dtype=np.int64)
        label = self.labels[partition % self.key_groups]
        if rows is not None:
            step = ChainStep(self.plan, None, TaskInfo("Sources", partition, partition + 1,
                                                       partition + 1), self.key_groups)
            try:
                with automatic_collection_paused():
                    emitted = step.process_sources(*rows)
            finally:
                step.close()
            counts[_IN] = len(rows[1])
            yield self.encode(emitted, label)
        yield self.metrics_batch(counts)

    # --------------------------------------------------------------- outputs
    def outputs(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """The ``mapInArrow`` function of the outputs' step (see module docstring)."""
        young_collections_only()
        outs: list[Emission] = []
        counts = np.zeros(len(METRICS), dtype=np.int64)
        for batch in batches:
            nodes = batch.column(0).to_numpy()
            data = batch.column(2)
            for i in np.flatnonzero(nodes == METRICS_ROW).tolist():
                counts += np.frombuffer(data[i].as_py(), dtype=np.int64)
            others = np.flatnonzero(nodes != METRICS_ROW)
            if (nodes[others] != OUTPUT).any():
                raise RuntimeError("elements for a graph node reached the outputs' step")
            outs.extend(self.decode(data.take(pa.array(others)).to_pylist()))
        frame = self.runtime._outputs.frame(_Outputs(outs, self.plan), None,
                                           {n: int(c) for n, c in zip(METRICS, counts)})
        assert frame is not None  # the metrics row at least
        schema = self.runtime._outputs.arrow_schema
        yield from pa.Table.from_pandas(frame, schema=schema, preserve_index=False).to_batches()

    # ------------------------------------------------------------ key groups
    def step(self, j: int, label: int, subtask: GraphSubtask | None = None) -> ChainStep:
        """Key group ``label`` of node ``j``: running ``subtask``'s functions (else its own
        copies, closed by :meth:`ChainStep.close`)."""
        kg = self.labels.index(label)
        return ChainStep(self.plan, j, self.task_info(j, kg), self.key_groups, subtask)

    def subtask(self, j: int, key_group: int) -> GraphSubtask:
        return GraphSubtask(self.plan, self.task_info(j, key_group))

    def binding(self, j: int, label: int) -> Any:
        return snapshot_binding(f"{self.stage_fingerprint}/node {j}", label)

    def run_static(self, j: int, frame: pd.DataFrame) -> pd.DataFrame:
        """The ``applyInPandas`` function of node ``j`` on static input: the key group's rows
        for node ``j`` to the end of input; the others pass."""
        label = int(frame[LABEL].iloc[0])
        mine = frame[NODE].to_numpy() == j
        parts = [frame[~mine]]
        if mine.any():
            step = self.step(j, label)
            try:
                emitted = step.run_to_end(self.decode(frame[DATA][mine]),
                                          time.time_ns() // 1_000_000)
                counts = _node_counts(step, 0, 0, 0)
            finally:
                step.close()
            parts.append(arrow_to_pandas(pa.Table.from_batches([self.encode(emitted, label)])))
            parts.append(arrow_to_pandas(pa.Table.from_batches(
                [self.metrics_batch(counts)])))
        return pd.concat(parts, ignore_index=True)


    def run_sources_static(self, j: int, frame: pd.DataFrame) -> pd.DataFrame:
        """The ``applyInPandas`` function of node ``j`` reading the sources alone, on static
        input: the key group's rows, then the end of input."""
        label = int(frame[LABEL].iloc[0])
        rows, _ = self.runtime._inputs.rows([frame])
        step = self.step(j, label)
        try:
            emitted = step.run_sources_to_end(rows, time.time_ns() // 1_000_000)
            counts = _node_counts(step, 0, 0, 0)
        finally:
            step.close()
        counts[_IN] = 0 if rows is None else len(rows[1])
        table = pa.Table.from_batches([self.encode(emitted, label),
                                       self.metrics_batch(counts)])
        return arrow_to_pandas(table)


class _Outputs:
    """The graph's outputs of one partition, as ``KeyGroupRuntime._output_frame`` reads an
    operator's."""

    late_output_tag = None

    def __init__(self, emitted: list[Emission], plan: GraphPlan) -> None:
        self._main = [(e.value, e.timestamp) for e in emitted if e.tag is None]
        self._sides: dict[Any, list[tuple[Any, int | None]]] = {}
        for e in emitted:
            if e.tag is not None:
                self._sides.setdefault(e.tag, []).append((e.value, e.timestamp))
        self.late_output_tags = plan.late_tags

    def drain_output(self) -> list[tuple[Any, int | None]]:
        return self._main

    def drain_side_outputs(self) -> dict[Any, list[tuple[Any, int | None]]]:
        return dict(self._sides)


def _node_counts(step: ChainStep, dropped: int, fired: int, state_bytes: int) -> np.ndarray:
    counts = np.zeros(len(METRICS), dtype=np.int64)
    keys, windows = step.state_size()
    counts[_DROPPED] = step.num_late_records_dropped - dropped
    counts[_FIRED] = step.num_windows_fired - fired
    counts[_KEYS], counts[_WINDOWS], counts[_BYTES], counts[_CALLS] = (
        keys, windows, state_bytes, 1)
    return counts


#: per worker process: the key groups' steps of recent calls, by (stage run, node, label),
#: with the version of the state they hold (a call whose state holds another version restores)
_STEPS: OrderedDict[tuple[str, int, int], tuple[str, ChainStep]] = OrderedDict()
_MAX_STEPS = 4096
#: a key group's ValueState: its step's sealed snapshot, the version naming it, its tick timer
_STEP_STATE = StructType([
    StructField("snapshot", BinaryType()), StructField("version", StringType()),
    StructField("tick", LongType()),
])


class ChainedNode(StatefulProcessor):
    """Keyed node ``j`` of a distributed graph: one key group per grouping key (see module
    docstring). With ``takes_rows``, the node alone reads the sources and takes their rows,
    placed in its key groups by its key columns (packed by :func:`_pack`), instead of
    elements."""

    def __init__(self, graph: ChainedGraph, j: int, takes_rows: bool = False) -> None:
        # The graph (the user's functions) travels as bytes and is loaded at the first call:
        # Spark also unpickles the processor in a Python process on the driver to learn its
        # state (init only), which does not see modules shipped with addPyFile.
        self._graph_bytes = cloudpickle.dumps(graph)
        self._graph: ChainedGraph | None = None
        self.j = j
        self.takes_rows = takes_rows

    @property
    def graph(self) -> ChainedGraph:
        if self._graph is None:
            self._graph = cloudpickle.loads(self._graph_bytes)
        return self._graph

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_graph": None}

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.state = handle.getValueState("step", _STEP_STATE)

    def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Iterator[pd.DataFrame]:
        label = int(key[0])
        mine: list[Any] = []
        for frame in rows:
            sent = frame.iloc[:, 0].to_numpy() == self.j
            if not sent.all():
                yield frame[~sent].set_axis([NODE, LABEL, DATA], axis=1)
            if sent.any():
                mine.extend(frame.iloc[:, 2][sent])
        if not mine and not self.takes_rows:
            # rows passing on only: no state call. A key group holding state is called by its
            # tick timer when the watermark advanced (else it has nothing to do)
            return
        stored = self.state.get()  # one state call: None when the key group holds nothing
        if self.takes_rows or mine or stored is not None:
            yield self._run(label, mine, timerValues, None, stored)

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any
                           ) -> Iterator[pd.DataFrame]:
        yield self._run(int(key[0]), [], timerValues, expiredTimerInfo.getExpiryTimeInMs(),
                        self.state.get())

    def _decode(self, blobs: list[Any]) -> tuple[Any, list[Emission]]:
        """The call's input: the sources' rows of this key group (``takes_rows``: Arrow IPC
        blobs, see pack), else the elements sent to this node."""
        if not self.takes_rows:
            return None, self.graph.decode(blobs)
        frames = [arrow_to_pandas(pa.ipc.open_stream(pa.py_buffer(bytes(blob))).read_all())
                  for blob in blobs]
        return self.graph.runtime._inputs.rows(frames)[0], []

    def _run(self, label: int, blobs: list[Any], timer_values: Any, expired: int | None,
             stored: Any) -> pd.DataFrame:
        """One call of a key group, its functions those of its subtask in this worker process
        for this query run (opened once, closed when the run ends: flinkwin.spark.subtasks).
        As a window stage's call: no automatic garbage collection during it, and the worker's
        daemon collects the young generations only after each task (flinkwin.spark.daemon;
        a full collection walks every key group's step the worker keeps)."""
        young_collections_only()
        run = current_run()
        stage = f"{self.graph.stage_id}/{self.j}/{run}"
        idle = self.graph.runtime.idle_close_s
        with SUBTASKS.running(stage, idle, run):
            try:
                with automatic_collection_paused():
                    source_rows, elements = self._decode(blobs)
                    out = self._call(stage, run, label, source_rows, elements, timer_values,
                                     expired, stored)
            except BaseException:
                SUBTASKS.close_stage(stage)  # the worker process exits now, closing nothing
                raise
            if not reused_worker():
                SUBTASKS.close_stage(stage)
        return out

    def _call(self, stage: str, run: str, label: int,
              source_rows: tuple[pd.DataFrame, np.ndarray] | None, elements: list[Emission],
              timer_values: Any, expired: int | None, stored: Any) -> pd.DataFrame:
        graph = self.graph
        spark_watermark = timer_values.getCurrentWatermarkInMs()
        now = timer_values.getCurrentProcessingTimeInMs()
        kg = graph.labels.index(label)
        subtask = SUBTASKS.get(stage, kg, lambda: graph.subtask(self.j, kg),
                               graph.runtime.idle_close_s, run)
        assert isinstance(subtask, GraphSubtask)
        cached = (stage, self.j, label)
        binding = graph.binding(self.j, label)
        step, tick = None, None
        if stored is not None:
            snapshot, version, tick_value = stored
            tick = int(tick_value)
            hit = _STEPS.pop(cached, None)
            if hit is not None and hit[0] == version and hit[1].subtask is subtask:
                step = hit[1]
            else:
                step = graph.step(self.j, label, subtask)
                step.restore(graph.state_pickler.unseal(
                    bytes(snapshot), binding, f"{graph.plan.nodes[self.j].name} key group's "
                    "state"))
        if step is None:
            step = graph.step(self.j, label, subtask)
        dropped, fired = step.num_late_records_dropped, step.num_windows_fired
        watermark = flink_watermark(spark_watermark, graph.watermark_shift)
        if self.takes_rows:
            emitted = step.run_sources(source_rows, watermark, now)
        else:
            emitted = step.run(elements, watermark, now)
        if step.next_processing_time_timer() is not None:
            raise UnsupportedOperationError(
                f"{graph.plan.nodes[self.j].name} registered a processing-time timer, but this "
                "graph runs distributed (every keyed operator in its own key groups), where a "
                "key group is woken by the event-time watermark only: the timer would fire late "
                "or never. Run the graph in one task: drop set_parallelism(n) from its result "
                "(docs/architecture.md, \"Distributed graphs\")"
            )
        state_bytes = 0
        kept = None if step.holds_nothing() else spark_watermark + 1
        registered = None if tick == expired else tick  # Spark deletes the expired one
        if registered is not None and registered != kept:
            self.handle.deleteTimer(registered)
        if kept is None:
            if stored is not None:
                self.state.clear()
        else:
            sealed = graph.state_pickler.seal(step.snapshot(), binding)
            state_bytes = len(sealed)
            version = uuid.uuid4().hex
            self.state.update((sealed, version, kept))
            if registered != kept:
                self.handle.registerTimer(kept)
            _STEPS[cached] = (version, step)
            while len(_STEPS) > _MAX_STEPS:
                _STEPS.popitem(last=False)
        counts = _node_counts(step, dropped, fired, state_bytes)
        if source_rows is not None:
            counts[_IN] = len(source_rows[1])
        table = pa.Table.from_batches([graph.encode(emitted, label),
                                       graph.metrics_batch(counts)])
        return table.to_pandas()

    def close(self) -> None:
        pass


def chained_stream(graph: ChainedGraph, staged: DataFrame, fused: bool) -> DataFrame:
    """The distributed graph's query over ``staged`` (the graph stage's input rows), up to its
    outputs' step (module docstring). ``fused``: the first keyed node alone reads the sources
    and ``staged`` holds its key groups' labels (by its key columns): it takes the rows
    itself, without the sources' step."""
    nodes = keyed_nodes(graph.plan)
    if fused and staged.isStreaming:  # the rows travel packed per key group (see pack)
        emitted = staged.mapInArrow(functools.partial(_pack, nodes[0]), WIRE).groupBy(
            LABEL).transformWithStateInPandas(
            ChainedNode(graph, nodes[0], takes_rows=True), WIRE, "Append", "EventTime")
        nodes = nodes[1:]
    elif fused:
        emitted = staged.groupBy(LABEL).applyInPandas(
            _static(graph, nodes[0], fused=True), WIRE)
        nodes = nodes[1:]
    else:
        emitted = staged.mapInArrow(graph.sources, WIRE)
    for j in nodes:
        grouped = emitted.groupBy(LABEL)
        if staged.isStreaming:
            emitted = grouped.transformWithStateInPandas(
                ChainedNode(graph, j), WIRE, "Append", "EventTime")
        else:
            emitted = grouped.applyInPandas(_static(graph, j), WIRE)
    return emitted.mapInArrow(graph.outputs, graph.runtime.output_schema)


def _pack(j: int, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function before a first node taking the sources' rows itself: an
    input partition's rows, one wire row per key group (its label in ``_fw_kg``) holding them
    as an Arrow IPC stream, in their order (transformWithStateInPandas hands rows to Python one
    by one; a few blobs cost less than every row)."""
    young_collections_only()
    tables = [pa.Table.from_batches([b]) for b in batches if b.num_rows]
    if not tables:
        return
    table = pa.concat_tables(tables)
    labels = table.column(LABEL).to_numpy()
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    groups = np.split(order, bounds)
    blobs = []
    for rows in groups:
        sink = pa.BufferOutputStream()
        part = table.take(pa.array(rows))
        with pa.ipc.new_stream(sink, part.schema) as writer:
            writer.write_table(part)
        blobs.append(sink.getvalue().to_pybytes())
    yield pa.RecordBatch.from_arrays([
        pa.array([j] * len(groups), pa.int32()),
        pa.array([int(labels[g[0]]) for g in groups], pa.int32()),
        pa.array(blobs, pa.binary()),
    ], schema=_WIRE_ARROW)


def _static(graph: ChainedGraph, j: int, fused: bool = False) -> Any:
    def run(frame: pd.DataFrame) -> pd.DataFrame:
        if fused:
            return graph.run_sources_static(j, frame)
        return graph.run_static(j, frame)

    return run


__all__ = [
    "STAGE_KIND",
    "ChainedGraph",
    "ChainedNode",
    "chain_reason",
    "chained_stream",
]
