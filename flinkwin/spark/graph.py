"""Stream graphs on Spark: the logical plan of a graph-shaped program.

A :class:`StreamPlan` is what a stream of a graph holds (Flink's Transformations, reduced to
what the stage needs): its sources (plain :class:`~flinkwin.datastream.data_stream.DataStream`
objects over DataFrames), its operators and steps in topological order
(:class:`~flinkwin.operator.graph.NodeSpec`, with the type of what each emits and the key of
each input), and which of the graph's streams it is (``head``). ``union``, joins,
``process`` and windows over a graph stream add nodes (:mod:`flinkwin.spark.graph_nodes`)
and combine plans (:func:`combine`); :mod:`flinkwin.spark.graph_compiler` translates a plan
into ONE Spark stage.
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pyspark.sql.types import StructType

from flinkwin.operator.graph import GraphOperator, GraphPlan, NodeSpec, StreamRef
from flinkwin.operator.graph_subtask import GraphSubtask
from flinkwin.operator.runtime_context import Subtask, TaskInfo
from flinkwin.operator.snapshots import StatePickler
from flinkwin.output_tag import OutputTag
from flinkwin.record import element_class
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.types import TypeInformation, is_atomic_type, is_pickled_type

from .pipeline import PipelineError
from .row_encoder import RowEncoder
from .runtime import NO_TIMERS
from .schema import is_pickled, parse_schema, pickled_schema
from .state_key import state_pickler


# ------------------------------------------------------------------------------ types
@dataclass(frozen=True)
class StreamType:
    """The elements of one stream of a graph: their columns and PyFlink type."""

    schema: StructType
    type_info: Any = None
    #: for pickled elements that no output type can describe: what to do instead
    fix: str | None = None

    @property
    def pickled(self) -> bool:
        return is_pickled(self.schema) or is_pickled_type(self.type_info)

    @property
    def atomic(self) -> bool:
        return is_atomic_type(self.type_info)

    @property
    def tuples(self) -> bool:
        return getattr(self.type_info, "name", None) == "TUPLE"

    def shape(self) -> ElementShape | None:
        """How an operator's results become this stream's elements (None: as they are)."""
        if self.pickled or self.atomic:
            return None
        return ElementShape(RowEncoder(self.schema, "UTC", "output"), self.tuples)


def declared_type(declared: Any, what: str) -> StreamType:
    """The stream type of an output declared as ``output_schema``/``output_type`` (None:
    pickled values, as PyFlink's ``PICKLED_BYTE_ARRAY``)."""
    if declared is None or is_pickled_type(declared):
        from flinkwin.types import Types

        return StreamType(pickled_schema(), Types.PICKLED_BYTE_ARRAY())
    schema = parse_schema(declared, what)
    return StreamType(schema, declared if isinstance(declared, TypeInformation) else None)


@dataclass(frozen=True)
class ElementShape:
    """An operator's result as the element the operators after it see: a Row (or tuple, for a
    ``Types.TUPLE`` output) of the declared fields, matched as the output's columns would be
    (:meth:`flinkwin.spark.row_encoder.RowEncoder.to_row`: by field name for Rows and dicts, by
    position for tuples), so an operator downstream sees what it would read back."""

    encoder: RowEncoder
    tuples: bool

    def __call__(self, value: Any) -> Any:
        names = tuple(self.encoder.names)
        return tuple.__new__(element_class(names, self.tuples), self.encoder.to_row(value))


# ------------------------------------------------------------------------------- plan
_UIDS = itertools.count()


@dataclass(frozen=True)
class PlanNode:
    """A node of a plan: its runtime spec, the type of its main output, the types of the side
    outputs it is known to emit (late data), and its name for ``explain()``."""

    spec: NodeSpec
    output: StreamType
    sides: dict[str, tuple[OutputTag, StreamType]] = field(default_factory=dict)
    #: "event time", "processing time" or "none": the timers the node needs woken; "user":
    #: a user function's, which may register timers of either domain
    timers: str = NO_TIMERS
    #: per input index, the operator's key as given (column names or a selector); empty for
    #: a node that keys nothing (a step, a union, a non-keyed operator)
    keys: tuple[Any, ...] = ()
    #: side outputs its function emits (``ctx.output``) that a node after it reads:
    #: id -> (tag, type); ``sides`` are the ones it declares (late data)
    emitted: dict[str, tuple[OutputTag, StreamType]] = field(default_factory=dict)
    #: the node's identity, kept by ``replace``: the plans of streams taken from one node
    #: share it (see :func:`combine`)
    uid: int = field(default_factory=lambda: next(_UIDS), compare=False)


@dataclass(frozen=True)
class StreamPlan:
    """A stream of a graph: its sources, nodes (topological order) and which stream it is."""

    sources: tuple[Any, ...]
    nodes: tuple[PlanNode, ...] = ()
    head: StreamRef = ("source", 0)

    @staticmethod
    def of_source(stream: Any) -> StreamPlan:
        return StreamPlan((stream,))

    def type_of(self, ref: StreamRef) -> StreamType:
        if ref[0] == "source":
            stream = self.sources[ref[1]]
            return StreamType(stream._public_df().schema, stream.get_type())
        node = self.nodes[ref[1]]
        if ref[0] == "node":
            return node.output
        return (node.sides.get(ref[2]) or node.emitted[ref[2]])[1]

    @property
    def head_type(self) -> StreamType:
        return self.type_of(self.head)

    def with_node(self, node: PlanNode) -> StreamPlan:
        """This plan plus ``node`` (reading streams of this plan), whose output is the head."""
        return replace(self, nodes=(*self.nodes, node), head=("node", len(self.nodes)))

    def side_ref(self, tag: OutputTag) -> StreamRef:
        """The stream holding side output ``tag`` of the head node (or, for a tag no node
        declares, of the head node's function output)."""
        for j in range(len(self.nodes) - 1, -1, -1):
            if tag.tag_id in self.nodes[j].sides:
                return ("side", j, tag.tag_id)
        if self.head[0] != "node":
            raise PipelineError(f"{tag!r}: this stream has no operator emitting side outputs")
        return ("side", self.head[1], tag.tag_id)

    def with_side_head(self, tag: OutputTag) -> StreamPlan:
        """This plan with the head node's side output ``tag`` as its head: the stream a node
        after ``getSideOutput(tag)`` reads, as a Flink side output is one more stream of the
        job. A side output the node does not declare (its function's ``ctx.output``) takes the
        tag's type, and its values reach the nodes after it as that type's elements."""
        ref = self.side_ref(tag)
        j = int(ref[1])
        node = self.nodes[j]
        if tag.tag_id not in node.sides and tag.tag_id not in node.emitted:
            side = self.side_type(tag)
            shape = side.shape()
            spec = node.spec if shape is None else replace(
                node.spec, side_shapes=(*node.spec.side_shapes, (tag.tag_id, shape))
            )
            node = replace(node, spec=spec, emitted={**node.emitted, tag.tag_id: (tag, side)})
        return replace(self, nodes=(*self.nodes[:j], node, *self.nodes[j + 1:]), head=ref)

    def side_type(self, tag: OutputTag) -> StreamType:
        ref = self.side_ref(tag)
        declared = self.nodes[ref[1]].sides.get(tag.tag_id)
        if declared is not None:
            return declared[1]
        return declared_type(tag.type_info, f"schema of {tag!r}")


def combine(plans: Sequence[StreamPlan]) -> tuple[StreamPlan, list[StreamRef]]:
    """One plan holding all of ``plans`` (sources shared by identity, nodes renumbered), and
    each plan's head in it. A node the plans share (the same node reading the same streams:
    two streams taken from one operator, its result and a side output, or two side outputs)
    is one node, as in Flink, where one operator feeds every stream taken from it."""
    sources: list[Any] = []
    nodes: list[PlanNode] = []
    heads: list[StreamRef] = []
    shared: dict[tuple[int, Any], int] = {}  # (node uid, its inputs) -> its index
    for plan in plans:
        source_map = []
        for stream in plan.sources:
            index = next((i for i, s in enumerate(sources) if s is stream), None)
            if index is None:
                index = len(sources)
                sources.append(stream)
            source_map.append(index)
        node_map: list[int] = []

        def moved(ref: StreamRef, source_map: list[int] = source_map,
                  node_map: list[int] = node_map) -> StreamRef:
            if ref[0] == "source":
                return ("source", source_map[ref[1]])
            return (ref[0], node_map[ref[1]], *ref[2:])

        for node in plan.nodes:
            spec = replace(node.spec, inputs=tuple((moved(r), i) for r, i in node.spec.inputs))
            index = shared.get((node.uid, spec.inputs))
            if index is None:
                index = shared[(node.uid, spec.inputs)] = len(nodes)
                nodes.append(replace(node, spec=spec))
            else:
                nodes[index] = _merged(nodes[index], node)
            node_map.append(index)
        heads.append(moved(plan.head))
    return StreamPlan(tuple(sources), tuple(nodes), heads[0] if heads else ("source", 0)), heads


def _merged(kept: PlanNode, other: PlanNode) -> PlanNode:
    """``kept`` (one node of several plans) with the side outputs ``other``, the same node in
    another plan, has nodes after it read."""
    emitted = {**other.emitted, **kept.emitted}
    if len(emitted) == len(kept.emitted):
        return kept
    shapes = dict(kept.spec.side_shapes)
    shapes.update((i, shape) for i, shape in other.spec.side_shapes if i not in shapes)
    return replace(kept, emitted=emitted,
                   spec=replace(kept.spec, side_shapes=tuple(shapes.items())))


def plan_of(stream: Any) -> StreamPlan:
    """The plan of ``stream``: its own, or the stream as the single source of one."""
    plan = getattr(stream, "_plan", None)
    return plan if plan is not None else StreamPlan.of_source(stream)


# ---------------------------------------------------------------------------- runtime
@dataclass
class GraphSpec:
    """Builds a key group's :class:`GraphOperator` in a worker (the runtime's operator
    spec for a graph stage)."""

    plan: GraphPlan
    key_groups: int = 1
    task_name: str = "Graph"
    overflow: str = "wrap"
    #: seals the key groups' stored state (see flinkwin.spark.state_key)
    state_pickler: StatePickler = field(default_factory=StatePickler)

    def task_info(self, key_group: int) -> TaskInfo:
        return TaskInfo(
            task_name=self.task_name,
            index_of_this_subtask=key_group,
            number_of_parallel_subtasks=self.key_groups,
            max_number_of_parallel_subtasks=self.key_groups,
        )

    def subtask(self, key_group: int) -> GraphSubtask:
        """A new subtask of key group ``key_group``: its own copies of every node's functions
        (see :class:`~flinkwin.operator.graph_subtask.GraphSubtask`)."""
        return GraphSubtask(self.plan, self.task_info(key_group))

    def build(self, key_group: int = 0, subtask: Subtask | None = None) -> GraphOperator:
        """A key group's operator: running ``subtask``'s functions, or its own copies."""
        if subtask is not None and not isinstance(subtask, GraphSubtask):
            raise TypeError(f"a graph stage runs a GraphSubtask, got {subtask!r}")
        return GraphOperator(self.plan, self.task_info(key_group), subtask)


@dataclass
class GraphPipeline:
    """What sinks and ``start()`` read of a graph stage (as of a window pipeline)."""

    key_groups: int = 1
    #: the stage's tasks asked for (its result's ``set_parallelism``, else the environment's
    #: capped by the key groups; None: flinkwin chooses, see flinkwin.spark.parallelism)
    requested_parallelism: int | None = None
    runtime_mode: RuntimeExecutionMode = RuntimeExecutionMode.STREAMING
    #: what the stage's state depends on, recorded in its checkpoint
    #: (flinkwin.spark.graph_restart)
    fingerprint: dict[str, Any] = field(default_factory=dict)
    #: every keyed operator in its own key groups (flinkwin.spark.graph_chained), else one
    #: stateful stage for the whole graph
    distributed: bool = False
    #: the stage keeps the sources' greatest timestamps itself (one key group, or two or more
    #: watermarked sources, none of them with Spark's watermark: computed before a
    #: map/filter or carried from an earlier stage): its watermarks survive a restart, where
    #: Spark's per-source maxima do not
    own_clocks: bool = False

    @property
    def stage_kind(self) -> str:
        """The stage kind ``pipeline.json`` records."""
        return "distributed graph" if self.distributed else "graph"


def stage_pickler(plan: StreamPlan) -> StatePickler:
    df = plan.sources[0]._public_df()
    return state_pickler(df.sparkSession) if df.isStreaming else StatePickler()


__all__ = [
    "ElementShape",
    "GraphPipeline",
    "GraphSpec",
    "PlanNode",
    "StreamPlan",
    "StreamType",
    "combine",
    "declared_type",
    "plan_of",
    "stage_pickler",
]
