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

This module holds the plan's rules (:func:`chain_reason`), the wire and :class:`ChainedGraph`
(the graph's functions the stages call); each keyed node's Spark operator and the query over
them are in :mod:`flinkwin.spark.graph_chained_nodes`.
"""

from __future__ import annotations

import functools
import secrets
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark import cloudpickle
from pyspark.sql.types import (
    BinaryType,
    IntegerType,
    StructField,
    StructType,
)

from flinkwin.operator import emission_wire
from flinkwin.operator.frames import from_arrow
from flinkwin.operator.graph import GraphPlan, source_maxima
from flinkwin.operator.graph_chain import (
    ChainStep,
    Emission,
    keyed_nodes,
    non_parallel_reason,
    single_task_reason,
)
from flinkwin.operator.graph_subtask import GraphSubtask
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.operator.snapshots import StatePickler

from .daemon import automatic_collection_paused, young_collections_only
from .key_groups import key_group_labels
from .outputs import METRICS
from .row_encoder import arrow_to_pandas
from .runtime import EVENT_TIME, PROCESSING_TIME, KeyGroupRuntime
from .state_key import snapshot_binding

#: the stage kind a distributed graph records in ``pipeline.json``
STAGE_KIND = "distributed graph"
NODE, LABEL, DATA = "_fw_node", "_fw_kg", "_fw_data"
OUTPUT, METRICS_ROW = -1, -2
#: the node code of keyed node ``j``'s clock rows is ``CLOCKS - j`` (see ChainedGraph.clocks)
CLOCKS = -3
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


#: why a graph over static DataFrames runs in one task (at any parallelism asked: a bounded
#: input gives a parallelism-1 run's results, which Flink's at any parallelism may be)
STATIC_INPUT = "static input: a graph over static DataFrames runs in one task"

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
        return non_parallel_reason(graph) or STATIC_INPUT
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
    #: the graph's two or more watermarked sources' clocks are its own (see :meth:`clocks`):
    #: Spark's watermark is a wake-up clock
    own_clocks: bool = False
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

    # ---------------------------------------------------------------- clocks
    def clocks(self, sources: np.ndarray, timestamps: np.ndarray) -> pa.RecordBatch | None:
        """With ``own_clocks``, the clock rows of an input partition of the sources
        (``sources``: its rows' source numbers, ``timestamps`` their event times): to every
        key group of every keyed node, each source's greatest timestamp there (``MIN_LONG``:
        none), as int64s. Every key group then keeps the sources' maxima in its state, as a
        one-task graph does, and computes its watermark from them (Spark keeps each source's
        maximum in the driver's memory only and loses it at a restart)."""
        if not self.own_clocks or not len(timestamps):
            return None
        tops = source_maxima(sources, timestamps, len(self.plan.sources))
        nodes = keyed_nodes(self.plan)
        labels = self.labels
        return pa.RecordBatch.from_arrays([
            pa.array([CLOCKS - j for j in nodes for _ in labels], pa.int32()),
            pa.array([label for _ in nodes for label in labels], pa.int32()),
            pa.array([tops.tobytes()] * (len(nodes) * len(labels)), pa.binary()),
        ], schema=_WIRE_ARROW)

    # --------------------------------------------------------------- sources
    def sources(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """The ``mapInArrow`` function of the sources' step: the whole input partition at once
        (its rows in arrival order: one emission order per partition)."""
        from pyspark import TaskContext

        young_collections_only()
        context = TaskContext.get()
        partition = context.partitionId() if context is not None else 0
        # as PySpark hands a stage its rows (a null boolean None, not pandas' NA; dates as
        # datetime.date), values exact
        frames = [from_arrow(pa.Table.from_batches([b]), date_as_object=True)
                  for b in batches if b.num_rows]
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
            clocks = self.clocks(rows[0][self.plan.source_column].to_numpy(), rows[1])
            if clocks is not None:
                yield clocks
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
        drained = self.runtime._outputs.drain(_Outputs(outs, self.plan), None,
                                              {n: int(c) for n, c in zip(METRICS, counts)})
        assert drained is not None  # the metrics row at least
        yield from self.runtime._outputs.table(drained).to_batches()

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


__all__ = [
    "STAGE_KIND",
    "ChainedGraph",
    "chain_reason",
]
