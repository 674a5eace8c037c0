"""The keyed nodes of a distributed graph as Spark operators, and the query over them.

:class:`ChainedNode` is the ``transformWithStateInPandas`` processor of one keyed node: one key
group per grouping key, its :class:`~flinkwin.operator.graph_chain.ChainStep` kept in a
ValueState (sealed) and in the worker's cache by version, a timer at Spark's watermark + 1
while it holds state. :func:`chained_stream` chains the sources' step, one shuffle and node per
keyed operator, and the outputs' step into one query. The plan and the wire between the stages
are described in :mod:`flinkwin.spark.graph_chained`, whose :class:`ChainedGraph` holds the
graph's functions these operators call.
"""

from __future__ import annotations

import functools
import uuid
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pyspark import cloudpickle
from pyspark.sql import DataFrame
from pyspark.sql.streaming.stateful_processor import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.types import BinaryType, LongType, StringType, StructField, StructType

from flinkwin.errors import UnsupportedOperationError
from flinkwin.operator.frames import from_arrow
from flinkwin.operator.graph_chain import ChainStep, Emission, keyed_nodes
from flinkwin.operator.graph_subtask import GraphSubtask
from flinkwin.operator.watermark_guard import uncertain_watermark

from .daemon import automatic_collection_paused, young_collections_only
from .graph_chained import (
    _IN,
    _WIRE_ARROW,
    CLOCKS,
    DATA,
    LABEL,
    NODE,
    WIRE,
    ChainedGraph,
    _node_counts,
)
from .subtasks import SUBTASKS, current_run, reused_worker
from .watermarks import check_after_epoch, flink_watermark, spark_uncertainty

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
        clocks: list[Any] = []
        for frame in rows:
            codes = frame.iloc[:, 0].to_numpy()
            sent, clock = codes == self.j, codes == CLOCKS - self.j
            passing = ~(sent | clock)
            if passing.any():
                yield frame[passing].set_axis([NODE, LABEL, DATA], axis=1)
            if sent.any():
                mine.extend(frame.iloc[:, 2][sent])
            if clock.any():
                clocks.extend(frame.iloc[:, 2][clock])
        if not mine and not clocks and not self.takes_rows:
            # rows passing on only: no state call. A key group holding state is called by its
            # tick timer when the watermark advanced (else it has nothing to do)
            return
        stored = self.state.get()  # one state call: None when the key group holds nothing
        yield self._run(label, mine, timerValues, None, stored, clocks)

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any
                           ) -> Iterator[pd.DataFrame]:
        yield self._run(int(key[0]), [], timerValues, expiredTimerInfo.getExpiryTimeInMs(),
                        self.state.get())

    def _decode(self, blobs: list[Any]) -> tuple[Any, list[Emission]]:
        """The call's input: the sources' rows of this key group (``takes_rows``: Arrow IPC
        blobs, see pack), else the elements sent to this node."""
        if not self.takes_rows:
            return None, self.graph.decode(blobs)
        # as PySpark hands a stage its rows (a null boolean None, not pandas' NA; dates as
        # datetime.date), values exact (frames.from_arrow)
        frames = [from_arrow(pa.ipc.open_stream(pa.py_buffer(bytes(blob))).read_all(),
                             date_as_object=True) for blob in blobs]
        return self.graph.runtime._inputs.rows(frames)[0], []

    def _run(self, label: int, blobs: list[Any], timer_values: Any, expired: int | None,
             stored: Any, clocks: list[Any] | None = None) -> pd.DataFrame:
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
                                     expired, stored, clocks or [])
            except BaseException:
                SUBTASKS.close_stage(stage)  # the worker process exits now, closing nothing
                raise
            if not reused_worker():
                SUBTASKS.close_stage(stage)
        return out

    def _call(self, stage: str, run: str, label: int,
              source_rows: tuple[pd.DataFrame, np.ndarray] | None, elements: list[Emission],
              timer_values: Any, expired: int | None, stored: Any, clocks: list[Any],
              ) -> pd.DataFrame:
        """The key group's step restored, run and stored back; with the graph's own clocks
        its watermark comes from the sources' maxima of the batches before (its state) and
        ``clocks`` (this batch's clock rows) update them after the run."""
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
        watermark = (step.sources_watermark(now) if graph.own_clocks
                     else flink_watermark(spark_watermark, graph.watermark_shift))
        # Spark's 0 after micro-batch 0 is MIN_LONG or a watermark at or before the epoch:
        # what that value decides fails, as in the one-task plan (flinkwin.spark.watermarks)
        uncertainty = (None if graph.own_clocks or graph.watermark_shift
                       else spark_uncertainty(spark_watermark))
        if (uncertainty is not None and source_rows is not None
                and graph.runtime.epoch_elements):
            check_after_epoch(*source_rows)  # as the one-task plan checks its rows
        with uncertain_watermark(uncertainty):
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
        for blob in clocks:  # they count from the next watermark on
            step.see_source_maxima(np.frombuffer(bytes(blob), dtype=np.int64))
        state_bytes = 0
        holds = not step.holds_nothing() or (graph.own_clocks and step.clocks_moved())
        kept = spark_watermark + 1 if holds else None
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
        emitted = staged.mapInArrow(functools.partial(_pack, graph, nodes[0]), WIRE).groupBy(
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


def _pack(graph: ChainedGraph, j: int, batches: Iterator[pa.RecordBatch]
          ) -> Iterator[pa.RecordBatch]:
    """The ``mapInArrow`` function before a first node taking the sources' rows itself: an
    input partition's rows, one wire row per key group (its label in ``_fw_kg``) holding them
    as an Arrow IPC stream, in their order (transformWithStateInPandas hands rows to Python one
    by one; a few blobs cost less than every row), and the partition's clock rows
    (:meth:`ChainedGraph.clocks`)."""
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
    event_time = graph.runtime.event_time
    if event_time is not None:
        clocks = graph.clocks(table.column(graph.plan.source_column).to_numpy(),
                              table.column(event_time.column).to_numpy())
        if clocks is not None:
            yield clocks


def _static(graph: ChainedGraph, j: int, fused: bool = False) -> Any:
    def run(frame: pd.DataFrame) -> pd.DataFrame:
        if fused:
            return graph.run_sources_static(j, frame)
        return graph.run_static(j, frame)

    return run


__all__ = ["ChainedNode", "chained_stream"]
