"""Stream graphs on Spark: the logical plan of a graph-shaped program and its ONE stage.

A :class:`StreamPlan` is what a stream of a graph holds (Flink's Transformations, reduced to
what the stage needs): its sources (plain :class:`~flinkwin.datastream.data_stream.DataStream`
objects over DataFrames), its operators and steps in topological order
(:class:`~flinkwin.operator.graph.NodeSpec`, with the type of what each emits), and which of
the graph's streams it is (``head``). ``union``, joins, ``process`` and windows over a graph
stream combine plans (:func:`combine`); :func:`compile_graph` translates a plan into Spark in
one place:

* every source gets its event time (its own ``WatermarkStrategy``: timestamp column or
  assigner, bounds, Spark's ``withWatermark`` on a stream), its columns renamed
  ``_fw_i<i>_<j>`` and its number in ``_fw_in``; the sources are unioned by name, so Spark's
  global watermark is the minimum of theirs (``multipleWatermarkPolicy=min``, Spark's
  default: Flink's watermark after a union or a two-input operator);
* the rows get their arrival sequence and go to ONE key group (see ``docs/architecture.md``,
  "Stream graphs": operators keyed differently share no partitioning Spark could use), where a
  :class:`~flinkwin.operator.graph.GraphOperator` runs the whole graph per micro-batch;
* the stage's outputs are encoded as a single-window stage's are (main output, side outputs,
  metrics row), so sinks, ``start()`` and ``writeStream`` work unchanged.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import Any

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql.types import ByteType, LongType, StructField, StructType

from flinkwin.operator.graph import GraphOperator, GraphPlan, NodeSpec, SourceSpec, StreamRef
from flinkwin.operator.runtime_context import Subtask, TaskInfo
from flinkwin.operator.snapshot import StatePickler
from flinkwin.output_tag import OutputTag
from flinkwin.record import element_class
from flinkwin.runtime_mode import RuntimeExecutionMode, effective_mode
from flinkwin.time import MIN_LONG
from flinkwin.timestamps import TimestampAssigner
from flinkwin.types import TypeInformation, is_atomic_type, is_pickled_type

from .arrival import ARRIVAL_COLUMN, with_arrival_sequence
from .compiler import (
    _TIMEOUTS,
    _WM,
    CompiledStage,
    PipelineError,
    _event_time,
    _in_event_time_range,
    _nullable,
    _with_watermark,
    overflow_policy,
)
from .elements import RECORD_TIMESTAMP_COLUMN, apply_element_stage
from .key_groups import key_group_labels
from .metrics import metric_aggregates, observed_metrics_name
from .nested import element_converters
from .nulls import plan as null_plan
from .nulls import to_wire as nulls_to_wire
from .runtime import (
    EVENT_TIME,
    KEY_GROUP_COLUMN,
    METRIC_COLUMNS,
    NO_TIMERS,
    PROCESSING_TIME,
    STATE_SCHEMA,
    TAG_COLUMN,
    EventTime,
    KeyGroupRuntime,
    static_function,
    stream_function,
)
from .schema import RowEncoder, is_pickled, parse_schema, pickled_schema
from .state_key import state_pickler
from .subtasks import DEFAULT_IDLE_CLOSE_S, idle_close_seconds
from .timestamps import on_wire, quoted, to_wire

SOURCE_COLUMN = "_fw_in"
EVENT_COLUMN = "_fw_ets"


# ------------------------------------------------------------------------------ types
@dataclass(frozen=True)
class StreamType:
    """The elements of one stream of a graph: their columns and PyFlink type."""

    schema: StructType
    type_info: Any = None

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
    (:meth:`flinkwin.spark.schema.RowEncoder.to_row`: by field name for Rows and dicts, by
    position for tuples), so an operator downstream sees what it would read back."""

    encoder: RowEncoder
    tuples: bool

    def __call__(self, value: Any) -> Any:
        names = tuple(self.encoder.names)
        return tuple.__new__(element_class(names, self.tuples), self.encoder.to_row(value))


# ------------------------------------------------------------------------------- plan
@dataclass(frozen=True)
class PlanNode:
    """A node of a plan: its runtime spec, the type of its main output, the types of the side
    outputs it is known to emit (late data), and its name for ``explain()``."""

    spec: NodeSpec
    output: StreamType
    sides: dict[str, tuple[OutputTag, StreamType]] = field(default_factory=dict)
    #: "event time", "processing time" or "none": the timers the node needs woken
    timers: str = NO_TIMERS


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
            return StreamType(stream.toDF().schema, stream.get_type())
        node = self.nodes[ref[1]]
        if ref[0] == "node":
            return node.output
        return node.sides[ref[2]][1]

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

    def side_type(self, tag: OutputTag) -> StreamType:
        ref = self.side_ref(tag)
        declared = self.nodes[ref[1]].sides.get(tag.tag_id)
        if declared is not None:
            return declared[1]
        return declared_type(tag.type_info, f"schema of {tag!r}")


def combine(plans: Sequence[StreamPlan]) -> tuple[StreamPlan, list[StreamRef]]:
    """One plan holding all of ``plans`` (sources shared by identity, nodes renumbered), and
    each plan's head in it."""
    sources: list[Any] = []
    nodes: list[PlanNode] = []
    heads: list[StreamRef] = []
    for plan in plans:
        source_map = []
        for stream in plan.sources:
            index = next((i for i, s in enumerate(sources) if s is stream), None)
            if index is None:
                index = len(sources)
                sources.append(stream)
            source_map.append(index)
        offset = len(nodes)

        def moved(ref: StreamRef, source_map: list[int] = source_map, offset: int = offset
                  ) -> StreamRef:
            if ref[0] == "source":
                return ("source", source_map[ref[1]])
            return (ref[0], ref[1] + offset, *ref[2:])

        for node in plan.nodes:
            spec = replace(node.spec, inputs=tuple((moved(r), i) for r, i in node.spec.inputs))
            nodes.append(replace(node, spec=spec))
        heads.append(moved(plan.head))
    return StreamPlan(tuple(sources), tuple(nodes), heads[0] if heads else ("source", 0)), heads


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

    def task_info(self, key_group: int) -> TaskInfo:
        return TaskInfo(
            task_name=self.task_name,
            index_of_this_subtask=key_group,
            number_of_parallel_subtasks=self.key_groups,
            max_number_of_parallel_subtasks=self.key_groups,
        )

    def subtask(self, key_group: int) -> Subtask:
        # the graph's functions are opened by its operators (see GraphOperator.open)
        return Subtask(None, None, self.task_info(key_group))

    def build(self, key_group: int = 0, subtask: Subtask | None = None) -> GraphOperator:
        return GraphOperator(self.plan, self.task_info(key_group))


@dataclass(frozen=True)
class WindowNodeBuilder:
    """A window node's operator: the window stage's ``OperatorSpec``, built for the task."""

    spec: Any

    def __call__(self, task_info: TaskInfo) -> Any:
        return self.spec.build(task_info.index_of_this_subtask)


@dataclass
class GraphPipeline:
    """What sinks and ``start()`` read of a graph stage (as of a window pipeline)."""

    key_groups: int = 1
    parallelism: int | None = None
    runtime_mode: RuntimeExecutionMode = RuntimeExecutionMode.STREAMING


def stage_pickler(plan: StreamPlan) -> StatePickler:
    df = plan.sources[0].toDF()
    return state_pickler(df.sparkSession) if df.isStreaming else StatePickler()


# ---------------------------------------------------------------------------- compile
def compile_graph(
    plan: StreamPlan,
    side_tags: Sequence[OutputTag],
    runtime_mode: RuntimeExecutionMode = RuntimeExecutionMode.STREAMING,
    parallelism: int | None = None,
) -> CompiledStage:
    """The ONE stateful stage computing ``plan``'s head and ``side_tags`` (module docstring)."""
    first = plan.sources[0].toDF()
    session = first.sparkSession
    streaming = first.isStreaming
    if any(s.toDF().isStreaming != streaming for s in plan.sources):
        raise PipelineError("a graph cannot mix streaming and static DataFrames")
    mode = effective_mode(runtime_mode, streaming)
    tz = session.conf.get("spark.sql.session.timeZone") or "UTC"
    frames, sources, watermarked = [], [], False
    for i, stream in enumerate(plan.sources):
        staged, source, has_wm = _source_frame(i, stream, tz, streaming)
        frames.append(staged)
        sources.append(source)
        watermarked |= has_wm
    staged = functools.reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)
    staged = staged.withColumn(KEY_GROUP_COLUMN, F.lit(key_group_labels(1)[0]))
    arrival = mode is RuntimeExecutionMode.STREAMING
    if arrival:
        staged = with_arrival_sequence(staged)
    hidden = {KEY_GROUP_COLUMN, ARRIVAL_COLUMN, _WM, EVENT_COLUMN}
    input_schema = StructType([f for f in staged.schema.fields if f.name not in hidden])
    for f in input_schema.fields:
        if on_wire(f.dataType):
            staged = staged.withColumn(f.name, to_wire(quoted(f.name), f.dataType))
    masks = null_plan(input_schema)
    staged = nulls_to_wire(staged, masks, input_schema)

    main_type = plan.head_type
    casts: dict[str, Any] = {}
    out_main, main_columns = _nullable(main_type.schema, "_fw_m", casts)
    out_fields = [
        StructField(TAG_COLUMN, ByteType(), False),
        *out_main.fields,
        StructField(RECORD_TIMESTAMP_COLUMN, LongType(), True),
    ]
    side_columns: dict[OutputTag, list[tuple[str, str]]] = {}
    side_types = []
    sides: dict[OutputTag, StreamRef] = {}
    for j, tag in enumerate(side_tags, start=1):
        side_type = plan.side_type(tag)
        side_types.append(side_type)
        sides[tag] = plan.side_ref(tag)
        out_side, side_columns[tag] = _nullable(side_type.schema, f"_fw_s{j}_", casts)
        out_fields.extend(out_side.fields)
    out_fields.extend(StructField(c, LongType(), True) for c in METRIC_COLUMNS)
    output_schema = StructType(out_fields)

    graph = GraphPlan(tuple(sources), tuple(n.spec for n in plan.nodes), plan.head, sides,
                      SOURCE_COLUMN)
    timers = {n.timers for n in plan.nodes}
    if not streaming:
        domain = NO_TIMERS
    elif watermarked:
        domain = EVENT_TIME
    elif PROCESSING_TIME in timers or EVENT_TIME not in timers:
        domain = PROCESSING_TIME
    else:
        raise PipelineError(
            "the graph's operators work on event time: call assignTimestampsAndWatermarks(...) "
            "on its sources"
        )
    names = " -> ".join(n.spec.name for n in plan.nodes) or "union"
    runtime = KeyGroupRuntime(
        operator=GraphSpec(graph, 1, f"Graph({names})", overflow_policy(session)),
        input_schema=input_schema,
        event_time=EventTime(EVENT_COLUMN, "ms"),
        time_zone=tz,
        has_watermark=watermarked,
        timer_domain=domain,
        key_groups=1,
        main_encoder=RowEncoder(main_type.schema, tz, "graph output"),
        with_window=False,
        side_tags=list(side_tags),
        side_encoders=[
            RowEncoder(t.schema, tz, f"side output {tag.tag_id!r}")
            for tag, t in zip(side_tags, side_types)
        ],
        output_schema=output_schema,
        sequence_column=ARRIVAL_COLUMN if arrival else None,
        heartbeats=False,
        idle_close_s=idle_close_seconds(session) if streaming else DEFAULT_IDLE_CLOSE_S,
        null_masks=masks,
    )
    runtime.operator.build()  # fail at build time on an invalid configuration
    grouped = staged.groupBy(KEY_GROUP_COLUMN)
    observation = None
    if streaming:
        combined = grouped.applyInPandasWithState(
            stream_function(runtime), output_schema, STATE_SCHEMA, "append", _TIMEOUTS[domain]
        )
        metrics_name = observed_metrics_name(first)
        combined = combined.observe(metrics_name, *metric_aggregates())
    else:
        combined = grouped.applyInPandas(static_function(runtime), output_schema)
        observation = Observation(observed_metrics_name(first))
        combined = combined.observe(observation, *metric_aggregates())
    summary = {
        "stage": "one stateful stage for the whole graph (one key group: see "
        "docs/architecture.md#stream-graphs)",
        "sources": str(len(plan.sources)),
        "operators": names,
        "time": domain if streaming else "static input",
        "mode": mode.name,
    }
    pipeline = GraphPipeline(1, parallelism, runtime_mode)
    return CompiledStage(
        pipeline, combined, main_columns, side_columns, domain, summary, observation, casts  # type: ignore[arg-type]
    )


def _source_frame(
    index: int, stream: Any, tz: str, streaming: bool
) -> tuple[DataFrame, SourceSpec, bool]:
    """Source ``index`` as the graph stage reads it: columns renamed ``_fw_i<index>_<j>``, its
    number, its event time in ms (``MIN_LONG``: none) with its own watermark on a stream."""
    df = stream._elements_df()
    schema = stream.toDF().schema
    type_info = stream.get_type()
    strategy = stream._watermark
    carried = strategy is None and RECORD_TIMESTAMP_COLUMN in df.columns
    staged = df
    has_wm = False
    if strategy is not None:
        assigner = strategy.timestamp_column
        if isinstance(assigner, TimestampAssigner):
            staged = apply_element_stage(
                staged, schema, None, None, assigner, tz,
                tuple_elements=getattr(type_info, "name", None) == "TUPLE",
                atomic_elements=is_atomic_type(type_info), element_type=type_info,
            )
        if strategy.null_timestamp_tag is not None:
            raise PipelineError(
                "withNullTimestamps(...) is not supported on the inputs of a stream graph: "
                "filter rows without a timestamp out first"
            )
        event_time, helper = _event_time(staged, strategy)
        if helper is not None:
            staged = staged.withColumn("_fw_ts", helper)
        shim = SimpleNamespace(input_schema=schema)
        checked = _in_event_time_range(
            shim, strategy, event_time, quoted(event_time.column)  # type: ignore[arg-type]
        )
        staged = staged.withColumn(event_time.column, checked)
        if streaming:
            staged = _with_watermark(staged, event_time, strategy.out_of_orderness_ms)
            has_wm = True
        column = quoted(event_time.column)
        if event_time.unit == "us":  # floor to ms, exactly (no double)
            name = f"`{event_time.column}`"
            column = F.expr(f"({name} - pmod({name}, 1000)) div 1000")
        staged = staged.withColumn(EVENT_COLUMN, column.cast("long"))
    elif carried:
        staged = staged.withColumn(EVENT_COLUMN, F.col(RECORD_TIMESTAMP_COLUMN))
    else:
        staged = staged.withColumn(EVENT_COLUMN, F.lit(MIN_LONG).cast("long"))
    names = schema.fieldNames()
    columns = [f"_fw_i{index}_{j}" for j in range(len(names))]
    keep = [quoted(n).alias(c) for n, c in zip(names, columns)]
    extra = [F.col(EVENT_COLUMN)] + ([F.col(_WM)] if has_wm else [])
    staged = staged.select(*keep, *extra, F.lit(index).cast("int").alias(SOURCE_COLUMN))
    pickled = is_pickled(schema) or is_pickled_type(type_info)
    delay = strategy.out_of_orderness_ms if strategy is not None and streaming else None
    source = SourceSpec(
        tuple(columns), tuple(names),
        tuple_elements=getattr(type_info, "name", None) == "TUPLE",
        pickled_elements=pickled,
        atomic_elements=is_atomic_type(type_info) and not pickled,
        converters=element_converters(schema, type_info),
        delay_ms=delay,
    )
    return staged, source, has_wm


__all__ = [
    "GraphPipeline",
    "GraphSpec",
    "PlanNode",
    "StreamPlan",
    "StreamType",
    "WindowNodeBuilder",
    "combine",
    "compile_graph",
    "declared_type",
    "plan_of",
]


# ------------------------------------------------------------------------ window nodes
def window_node(pipeline: Any, plan: StreamPlan, type_info: Any = None) -> PlanNode:
    """The window of ``pipeline`` as a node reading ``plan``'s head (a window over a graph
    stream, or a window stage joining a graph as its first operator)."""
    from flinkwin.functions.internal import resolve_window_function

    from .compiler import timer_domain
    from .runtime import OperatorSpec

    if pipeline.with_window:
        raise PipelineError(
            "with_window=True is not supported inside a stream graph: return the window's "
            "bounds from a ProcessWindowFunction (context.window()) instead"
        )
    source = plan.head_type
    if pipeline.output_schema is not None:
        output = StreamType(pipeline.output_schema, type_info)
    else:
        resolved = resolve_window_function(pipeline.function, pipeline.evictor is not None)
        if resolved.reduce_fn is None or resolved.window_fn is not None:
            output = declared_type(None, "")
        else:
            output = source  # reduce and the built-in aggregations keep the elements' type
    operator = OperatorSpec(
        assigner=pipeline.assigner,
        function=pipeline.function,
        key_fields=(
            pipeline.key_selector if pipeline.key_selector is not None else pipeline.key_columns
        ),
        trigger=pipeline.trigger,
        evictor=pipeline.evictor,
        allowed_lateness_ms=pipeline.allowed_lateness_ms,
        late_tag=pipeline.late_tag,
        key_groups=1,
        task_name=f"Window({pipeline.function_name})",
        overflow=overflow_policy(plan.sources[0].toDF().sparkSession),
        tuple_elements=source.tuples,
        atomic_elements=source.atomic or source.pickled,
        state_pickler=stage_pickler(plan),
    )
    operator.build()  # fail at build time on an invalid configuration
    sides = {} if pipeline.late_tag is None else {
        pipeline.late_tag.tag_id: (pipeline.late_tag, source)
    }
    spec = NodeSpec(
        name=f"Window({pipeline.function_name})",
        kind="operator",
        inputs=((plan.head, 0),),
        build=WindowNodeBuilder(operator),
        shape=output.shape(),
    )
    timers = timer_domain(pipeline)
    return PlanNode(spec, output, sides, timers)


# ---------------------------------------------------------------------- window joins
@dataclass(frozen=True)
class TaggedInputs:
    """A window join's operator: the window operator over ``TaggedUnion`` elements, input 0
    tagged ``one``, input 1 ``two`` (Flink's ``CoGroupedStreams`` input mappers)."""

    spec: Any

    def __call__(self, task_info: TaskInfo) -> Any:
        return _TaggingOperator(self.spec.build(task_info.index_of_this_subtask))


class _TaggingOperator:
    def __init__(self, op: Any) -> None:
        self.op = op

    def process_element(self, value: Any, timestamp: int | None, input_index: int = 0) -> None:
        from flinkwin.operator.cogroup import TaggedUnion

        tagged = TaggedUnion.one(value) if input_index == 0 else TaggedUnion.two(value)
        self.op.process_element(tagged, timestamp)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.op, name)


def window_join_node(spec: Any, plan: StreamPlan, heads: Sequence[StreamRef]) -> PlanNode:
    """The window join or coGroup of ``spec`` reading ``heads`` (first, second) of ``plan``."""
    from .runtime import OperatorSpec

    declared = spec.output_schema if spec.output_schema is not None else spec.output_type
    output = declared_type(declared, f"{spec.kind} output")
    first, second = (plan.type_of(h) for h in heads)
    operator = OperatorSpec(
        assigner=spec.assigner,
        function=spec.window_function,
        key_fields=spec.union_key_selector(),
        trigger=spec.trigger,
        evictor=spec.evictor,
        allowed_lateness_ms=spec.allowed_lateness_ms,
        late_tag=spec.late_tag,
        key_groups=1,
        task_name="Window Join" if spec.kind != "cogroup" else "Window CoGroup",
        overflow=overflow_policy(plan.sources[0].toDF().sparkSession),
        atomic_elements=True,  # TaggedUnions, keyed by the union key selector
        state_pickler=stage_pickler(plan),
    )
    operator.build()
    sides = {}
    if spec.late_tag is not None:  # late elements of either input, as TaggedUnions
        sides[spec.late_tag.tag_id] = (spec.late_tag, declared_type(None, ""))
    node = NodeSpec(
        name=operator.task_name,
        kind="operator",
        inputs=((heads[0], 0), (heads[1], 1)),
        build=TaggedInputs(operator),
        shape=output.shape(),
    )
    from flinkwin.assigners.count import CountSlidingWindowAssigner, CountTumblingWindowAssigner

    if spec.assigner.is_event_time():
        timers = EVENT_TIME
    elif isinstance(spec.assigner, (CountTumblingWindowAssigner, CountSlidingWindowAssigner)):
        timers = NO_TIMERS
    else:
        timers = PROCESSING_TIME
    del first, second
    return PlanNode(node, output, sides, timers)


# ---------------------------------------------------------------------- interval joins
@dataclass(frozen=True)
class IntervalJoinBuilder:
    """An interval join's operator, built for the task (the spec without its streams)."""

    spec: Any
    left_key: Any
    right_key: Any
    overflow: str
    state_pickler: StatePickler

    def __call__(self, task_info: TaskInfo) -> Any:
        from flinkwin.operator.interval_join_operator import IntervalJoinOperator

        s = self.spec
        return IntervalJoinOperator(
            s.lower_bound, s.upper_bound, s.lower_bound_inclusive, s.upper_bound_inclusive,
            s.left_late_data_output_tag, s.right_late_data_output_tag, copy.deepcopy(s.function),
            self.left_key, self.right_key, task_info=task_info, overflow=self.overflow,
            state_pickler=self.state_pickler,
        )


def interval_join_node(
    spec: Any, left_key: Any, right_key: Any, plan: StreamPlan, heads: Sequence[StreamRef]
) -> PlanNode:
    """The interval join of ``spec`` reading ``heads`` (left, right) of ``plan``."""
    declared = spec.output_schema if spec.output_schema is not None else spec.output_type
    output = declared_type(declared, "interval join output")
    left, right = (plan.type_of(h) for h in heads)
    runtime_spec = replace(spec, right=None)
    builder = IntervalJoinBuilder(
        runtime_spec, left_key, right_key,
        overflow_policy(plan.sources[0].toDF().sparkSession), stage_pickler(plan),
    )
    builder(TaskInfo("IntervalJoin", 0, 1, 1))  # fail at build time on an invalid setup
    sides = {}
    for tag, side in ((spec.left_late_data_output_tag, left),
                      (spec.right_late_data_output_tag, right)):
        if tag is not None:
            sides[tag.tag_id] = (tag, side)
    node = NodeSpec(
        name="IntervalJoin", kind="operator", inputs=((heads[0], 0), (heads[1], 1)),
        build=builder, shape=output.shape(),
    )
    return PlanNode(node, output, sides, EVENT_TIME)


# --------------------------------------------------------------------- process nodes
@dataclass(frozen=True)
class ProcessBuilder:
    """A ``process`` node's operator: ``KeyedProcessOperator`` (with a key) or
    ``ProcessOperator``, running its own copy of the function."""

    function: Any
    key: Any
    atomic: bool
    state_pickler: StatePickler

    def __call__(self, task_info: TaskInfo) -> Any:
        from flinkwin.operator.keyed_process_operator import (
            KeyedProcessOperator,
            ProcessOperator,
        )

        function = copy.deepcopy(self.function)
        if self.key is None:
            return ProcessOperator(function, task_info=task_info,
                                   state_pickler=self.state_pickler)
        return KeyedProcessOperator(function, self.key, task_info=task_info,
                                    atomic_elements=self.atomic,
                                    state_pickler=self.state_pickler)


def process_node(function: Any, key: Any, output_type: Any, plan: StreamPlan) -> PlanNode:
    """``process(function)`` on ``plan``'s head, keyed by ``key`` (None: not keyed)."""
    source = plan.head_type
    output = declared_type(output_type, "process output_type")
    builder = ProcessBuilder(function, key, source.atomic or source.pickled, stage_pickler(plan))
    builder(TaskInfo("KeyedProcess" if key is not None else "Process", 0, 1, 1))
    name = f"{'KeyedProcess' if key is not None else 'Process'}({type(function).__name__})"
    node = NodeSpec(name=name, kind="operator", inputs=((plan.head, 0),), build=builder,
                    shape=output.shape())
    return PlanNode(node, output, {}, NO_TIMERS)
