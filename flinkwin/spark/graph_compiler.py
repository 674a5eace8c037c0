"""The ONE Spark stage of a stream graph (:class:`~flinkwin.spark.graph.StreamPlan`).

:func:`compile_graph` translates a plan into Spark in one place:

* every source gets its event time (its own ``WatermarkStrategy``: timestamp column or
  assigner, bounds, Spark's ``withWatermark`` on a stream), its columns renamed
  ``_fw_i<i>_<j>`` and its number in ``_fw_in``; the sources are unioned by name (Spark's
  global watermark is the minimum of theirs, ``multipleWatermarkPolicy=min``; with two or
  more watermarked sources a wake-up clock instead, :func:`_wake_clock`);
* the rows get their arrival sequence and go to their key group: by the key columns when the
  graph's one keyed operator reads the sources directly (or through unions) with column keys
  of one type (:mod:`~flinkwin.spark.graph_partitioning`), else all to ONE key group
  (operators keyed differently share no partitioning Spark could use; see
  ``docs/architecture.md``, "Stream graphs"); a
  :class:`~flinkwin.operator.graph.GraphOperator` runs the whole graph per key group and
  micro-batch. A graph that :func:`~flinkwin.spark.graph_chained.chain_reason`
  allows runs **distributed** instead (:mod:`flinkwin.spark.graph_chained`: every keyed
  operator in its own key groups, a shuffle before each, in the same query). With one key
  group the stage sees every row, so each operator gets the watermark of the sources it
  reads; with several, every operator reads every source, and each key group takes the
  sources' greatest timestamps (and which had elements: idle inputs) from heartbeat rows
  (:mod:`~flinkwin.spark.source_clocks`), or Spark's watermark of a single one. A source without a
  ``WatermarkStrategy`` holds the operators reading it at ``Long.MIN_VALUE`` either way, as
  in Flink (Spark's global watermark leaves it out);
* the stage's outputs are encoded as a single-window stage's are (main output, side outputs,
  metrics row), so sinks, ``start()`` and ``writeStream`` work unchanged.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from pyspark.sql import DataFrame, Observation
from pyspark.sql import functions as F
from pyspark.sql.types import ByteType, LongType, StructField, StructType

from flinkwin.errors import UnsupportedOperationError
from flinkwin.operator.graph import OPERATOR, GraphPlan, SourceSpec, StreamRef
from flinkwin.operator.graph_chain import keyed_nodes
from flinkwin.output_tag import OutputTag
from flinkwin.runtime_mode import RuntimeExecutionMode, effective_mode
from flinkwin.time import MIN_LONG
from flinkwin.timestamps import TimestampAssigner
from flinkwin.types import is_atomic_type, is_pickled_type
from flinkwin.watermark import NO_WATERMARKS_ON_A_STREAM

from .arrival import ARRIVAL_COLUMN, with_arrival_sequence
from .carried_time import watermark_mark
from .compiler import _TIMEOUTS, PACKED_SUMMARY, many_results
from .elements import RECORD_TIMESTAMP_COLUMN, apply_element_stage
from .event_time import _WM, _event_time, _in_event_time_range, _with_wake_clock, _with_watermark
from .graph import GraphPipeline, GraphSpec, StreamPlan, StreamType, stage_pickler
from .graph_chained import ChainedGraph, chain_reason
from .graph_chained_nodes import chained_stream
from .graph_nodes import ProcessBuilder, WindowNodeBuilder
from .graph_partitioning import fused_partitioning, partitioning
from .graph_restart import graph_fingerprint
from .inputs import EventTime
from .key_groups import failing_on_null, key_group_labels, label_of
from .metrics import (
    metric_aggregates,
    observed_metrics_name,
    sends_heartbeats,
    with_heartbeats,
)
from .nested import element_converters
from .nulls import plan as null_plan
from .nulls import to_wire as nulls_to_wire
from .outputs import METRIC_COLUMNS, PACKED_SCHEMA, TAG_COLUMN, unpack
from .parallelism import describe_parallelism, requested_parallelism
from .pipeline import CompiledStage, PipelineError, _nullable, overflow_policy
from .row_encoder import RowEncoder
from .runtime import (
    EVENT_TIME,
    KEY_GROUP_COLUMN,
    NO_TIMERS,
    PROCESSING_TIME,
    STATE_SCHEMA,
    USER_TIMERS,
    KeyGroupRuntime,
    static_function,
    stream_function,
)
from .schema import is_pickled
from .source_clocks import with_source_clocks
from .state_key import stage_fingerprint
from .stops import watch_stops
from .subtasks import DEFAULT_IDLE_CLOSE_S, idle_close_seconds
from .timestamps import on_wire, quoted, to_wire, with_checked_timestamps
from .watermarks import watermark_shift

SOURCE_COLUMN = "_fw_in"
EVENT_COLUMN = "_fw_ets"


# ---------------------------------------------------------------------------- compile
def _one_type_per_tag(plan: StreamPlan, tag: OutputTag, side_type: StreamType) -> None:
    """Refuse a query's side output ``tag`` that operators declare with different types
    (the late data of windows reading different streams): one sink cannot take both."""
    for node in plan.nodes:
        declared = node.sides.get(tag.tag_id)
        if declared is not None and declared[1].schema != side_type.schema:
            raise PipelineError(
                f"side output {tag!r}: {node.spec.name} declares it for rows of "
                f"{declared[1].schema.simpleString()}, a later operator for rows of "
                f"{side_type.schema.simpleString()}; one sink cannot take both: give each "
                "operator its own OutputTag"
            )


def compile_graph(
    plan: StreamPlan,
    side_tags: Sequence[OutputTag],
    runtime_mode: RuntimeExecutionMode = RuntimeExecutionMode.STREAMING,
    parallelism: int | None = None,
    one_task: str | None = None,
    default_parallelism: int | None = None,
    any_function_sides: bool = False,
) -> CompiledStage:
    """The stage computing ``plan``'s head and ``side_tags`` (module docstring): distributed
    where it can be (flinkwin.spark.graph_chained), unless ``one_task`` says why not. Its
    parallelism is ``parallelism`` (its result's ``set_parallelism``), else
    ``default_parallelism`` (the environment's when the graph's head was built). With
    ``any_function_sides`` (a query's ``side_outputs``), a tag takes what any node sends
    under it (every declaring node's late data, any function's ``ctx.output``); else
    (``getSideOutput``) the head's alone."""
    first = plan.sources[0]._public_df()
    session = first.sparkSession
    streaming = first.isStreaming
    if any(s._public_df().isStreaming != streaming for s in plan.sources):
        raise PipelineError("a graph cannot mix streaming and static DataFrames")
    mode = effective_mode(runtime_mode, streaming)
    tz = session.conf.get("spark.sql.session.timeZone") or "UTC"
    declared = {s._times_before_1970 for s in plan.sources}
    if streaming and len(declared) > 1:
        raise PipelineError(
            "the inputs of one graph must all declare times_before_1970=True or none: Spark "
            "computes one watermark over them all (see docs/spark-semantics.md, \"Watermarks\")"
        )
    before_1970 = streaming and True in declared
    arrival = mode is RuntimeExecutionMode.STREAMING
    described_sources = [_source_spec(i, s, streaming) for i, s in enumerate(plan.sources)]
    sources = [source for source, _ in described_sources]
    watermarked = any(has_wm for _, has_wm in described_sources)
    # two or more watermarked sources: the stage keeps their maxima (a one-task graph; the
    # keyed plan's key groups through heartbeats, flinkwin.spark.source_clocks; a distributed
    # graph's through clock rows, flinkwin.spark.graph_chained); Spark's watermark is a
    # wake-up clock
    own_clocks = streaming and _wake_clock(sources)
    partition = partitioning(plan)
    scaled = (default_parallelism if parallelism is None else parallelism) not in (None, 1)
    if partition is not None and any(s.idle_timeout_ms is not None for s in sources) and (
            not scaled or (len(sources) > 1 and not own_clocks)):
        # idle inputs: in key groups with the sources' own clocks only, and only where the
        # parallelism asks for it (a checkpoint of a flinkwin that kept such graphs in one
        # key group restarts so)
        partition = None
    key_groups = plan.sources[0]._key_groups if partition is not None else 1

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
        if any_function_sides:
            _one_type_per_tag(plan, tag, side_type)
        side_types.append(side_type)
        sides[tag] = plan.side_ref(tag)
        out_side, side_columns[tag] = _nullable(side_type.schema, f"_fw_s{j}_", casts)
        out_fields.extend(out_side.fields)
    out_fields.extend(StructField(c, LongType(), True) for c in METRIC_COLUMNS)
    output_schema = StructType(out_fields)

    graph = GraphPlan(tuple(sources), tuple(n.spec for n in plan.nodes), plan.head, sides,
                      SOURCE_COLUMN,
                      late_tags=tuple(tag for n in plan.nodes for tag, _ in n.sides.values()),
                      own_watermarks=key_groups == 1 or own_clocks,
                      function_sides=tuple(
                          tag.tag_id for tag in side_tags if any_function_sides
                      ))
    timers = {n.timers for n in plan.nodes}
    if not streaming:
        domain = NO_TIMERS
    elif watermarked:
        domain = EVENT_TIME
    elif PROCESSING_TIME in timers or (EVENT_TIME not in timers and USER_TIMERS in timers):
        domain = PROCESSING_TIME
    elif EVENT_TIME not in timers:  # no operator registers timers (rolling aggregations...)
        domain = NO_TIMERS
    elif any(s._watermark is not None for s in plan.sources):  # noWatermarks() on them all
        raise UnsupportedOperationError(NO_WATERMARKS_ON_A_STREAM)
    else:
        raise PipelineError(
            "the graph's operators work on event time: call assignTimestampsAndWatermarks(...) "
            "on its sources"
        )
    reason = "the graph's one keyed operator reads the sources: key groups by its key" if (
        partition is not None
    ) else one_task or chain_reason(
        graph, [n.timers for n in plan.nodes], streaming, arrival, domain,
        default_parallelism if parallelism is None else parallelism,
    )
    distributed = reason is None
    # the plan is decided: the sources' rows are built once, as it reads them
    wake_clock = own_clocks
    # heartbeats carry the sources' clocks (own clocks), else only the metrics' state totals
    heartbeats = streaming and key_groups > 1 and (wake_clock or sends_heartbeats(key_groups))
    fused = fused_partitioning(plan) if distributed else None
    if fused is None:
        staged, input_schema, masks = _stage_input(
            plan, tz, streaming, partition, key_groups, heartbeats, before_1970, arrival,
            wake_clock)
        if wake_clock and heartbeats:  # the heartbeats carry the sources' maxima
            staged = with_source_clocks(staged, key_groups, SOURCE_COLUMN, EVENT_COLUMN,
                                        ARRIVAL_COLUMN, (_WM, 1))
    else:  # the first keyed node's key groups by its key columns
        staged, input_schema, masks = _stage_input(
            plan, tz, streaming, fused, plan.sources[0]._key_groups, False, before_1970,
            arrival, wake_clock)
    names = " -> ".join(n.spec.name for n in plan.nodes) or "union"
    runtime = KeyGroupRuntime(
        operator=GraphSpec(graph, key_groups, f"Graph({names})", overflow_policy(session),
                           stage_pickler(plan)),
        input_schema=input_schema,
        event_time=EventTime(EVENT_COLUMN, "ms"),
        time_zone=tz,
        has_watermark=watermarked,
        timer_domain=domain,
        key_groups=key_groups,
        main_encoder=RowEncoder(main_type.schema, tz, "graph output"),
        with_window=False,
        side_tags=list(side_tags),
        side_encoders=[
            RowEncoder(t.schema, tz, f"side output {tag.tag_id!r}")
            for tag, t in zip(side_tags, side_types)
        ],
        output_schema=output_schema,
        sequence_column=ARRIVAL_COLUMN if arrival else None,
        heartbeats=heartbeats,
        source_clocks=SOURCE_COLUMN if wake_clock and heartbeats else None,
        idle_close_s=idle_close_seconds(session) if streaming else DEFAULT_IDLE_CLOSE_S,
        null_masks=masks,
        watermark_shift=watermark_shift(before_1970),
        own_watermarks=streaming and key_groups == 1 and not any(
            s.stage_watermark for s in sources),
        epoch_elements=any(
            not isinstance(n.spec.build, ProcessBuilder) for n in plan.nodes
            if n.spec.kind == OPERATOR
        ),
        # the graph's shape, which cannot change on restart anyway (GraphOperator.restore)
        stage_fingerprint=stage_fingerprint(
            "graph", [(n.spec.kind, _wiring(n.spec.inputs)) for n in plan.nodes],
        ),
    )
    runtime.operator.build()  # fail at build time on an invalid configuration
    summary_watermark = None if not wake_clock else (
        "each operator's own, from the sources it reads; Spark's is a wake-up clock (the "
        "last micro-batch with rows' timestamp - 1 ms, see docs/spark-semantics.md, \"When "
        "the stage runs\")"
    )
    if distributed:
        key_groups = plan.sources[0]._key_groups
        chained = ChainedGraph(
            graph, key_groups, runtime, runtime.operator.state_pickler,
            watermark_shift(before_1970), runtime.stage_fingerprint, own_clocks=own_clocks,
        )
        if fused is None:
            staged = staged.drop(KEY_GROUP_COLUMN)
        combined = chained_stream(chained, staged.drop(_WM), fused is not None)
    elif streaming:
        runtime.packed_output = _head_many_results(plan)
        combined = staged.groupBy(KEY_GROUP_COLUMN).applyInPandasWithState(
            stream_function(runtime), PACKED_SCHEMA if runtime.packed_output else output_schema,
            STATE_SCHEMA, "append", _TIMEOUTS[domain],
        )
        if runtime.packed_output:
            combined = combined.mapInArrow(unpack, output_schema)
    else:
        combined = staged.groupBy(KEY_GROUP_COLUMN).applyInPandas(
            static_function(runtime), output_schema
        )
    observation = None
    if streaming:
        watch_stops(session)  # the workers close a query run's functions when it ends
        combined = combined.observe(observed_metrics_name(first), *metric_aggregates(
            totals=key_groups == 1 or heartbeats or fused is not None))
    else:
        observation = Observation(observed_metrics_name(first))
        combined = combined.observe(observation, *metric_aggregates())
    summary = {
        "stage": "one stateful stage for the whole graph (one key group: see "
        "docs/architecture.md#stream-graphs)",
        "sources": str(len(plan.sources)),
        "operators": names,
        "time": domain if streaming else "static input",
        "mode": mode.name,
        "distributed": f"no: {reason}",
    }
    if summary_watermark is not None:
        summary["watermark"] = summary_watermark
    if runtime.packed_output:
        summary["outputs"] = PACKED_SUMMARY
    described = describe_parallelism(parallelism, default_parallelism, key_groups)
    if described is not None and (key_groups > 1 or parallelism is not None):
        summary["parallelism"] = described  # a one-task graph's says why in "distributed"
    if distributed:
        keyed = [plan.nodes[j].spec.name for j in keyed_nodes(graph)]
        summary["stage"] = (
            f"distributed: {len(keyed)} keyed stages in one query, each in {key_groups} key "
            f"groups with a shuffle before it ({' -> '.join(keyed)}; see "
            "docs/architecture.md#distributed-graphs)"
        )
        summary["distributed"] = "yes"
    elif key_groups > 1:
        summary["stage"] = (
            f"one stateful stage for the whole graph, {key_groups} key groups by "
            f"{partition}"
        )
    requested = requested_parallelism(parallelism, default_parallelism, key_groups)
    pipeline = GraphPipeline(key_groups, requested, runtime_mode,
                             graph_fingerprint(plan, sources, before_1970), distributed,
                             own_clocks=own_clocks or (
                                 key_groups == 1 and not distributed
                                 and not any(s.stage_watermark for s in sources)))
    fixes = {tag.tag_id: t.fix for tag, t in zip(side_tags, side_types) if t.fix is not None}
    return CompiledStage(
        pipeline, combined, main_columns, side_columns, domain, summary, observation, casts,  # type: ignore[arg-type]
        pickled_fixes=fixes,
    )


def _head_many_results(plan: StreamPlan) -> bool:
    """Whether the graph's output is a window's that emits about a result per element
    (:func:`flinkwin.spark.compiler.many_results`): its stage then leaves packed."""
    if plan.head[0] != "node":
        return False
    build = plan.nodes[plan.head[1]].spec.build
    return isinstance(build, WindowNodeBuilder) and many_results(
        build.spec.assigner, build.spec.trigger
    )


def _wiring(inputs: tuple[tuple[StreamRef, int], ...]) -> list[Any]:
    """A node's inputs as plain values (a side output by its tag's id): part of the stage's
    fingerprint."""
    return [([getattr(part, "tag_id", part) for part in ref], index) for ref, index in inputs]


def _wake_clock(sources: Sequence[SourceSpec]) -> bool:
    """Whether a streaming stage over ``sources`` puts Spark's watermark on the
    micro-batch's timestamp (one ``withWatermark`` on their union), not on each source's event
    time: the stage computes every operator's watermark itself (``own_watermarks``), and this
    wake-up clock moves after every micro-batch with rows, so Spark then runs one without
    data that calls the key group, whichever source moved (the sources' minimum moves only
    with the slowest). Needs two or more watermarked sources (else the minimum is exact) and
    none whose watermark is Spark's (``stage_watermark``)."""
    own = [s for s in sources if s.delay_ms is not None]
    return len(own) >= 2 and not any(s.stage_watermark for s in sources)


def _key_group(columns: list[str], key_groups: int, names: list[str]) -> Any:
    """The key group label of a source row keyed by ``columns``; a null key fails, as in
    Flink ("Assigned key must not be null!")."""
    return failing_on_null(
        columns, names, "key column(s)", "first", label_of(columns, key_groups)
    )


def _stage_input(
    plan: StreamPlan, tz: str, streaming: bool, partition: dict[int, list[str]] | None,
    key_groups: int, heartbeats: bool, before_1970: bool, arrival: bool, wake_clock: bool,
) -> tuple[DataFrame, StructType, Any]:
    """The stage's input rows (module docstring), their schema without the hidden columns and
    its null masks. ``wake_clock``: Spark's watermark is a wake-up clock on the sources' union
    (:func:`_wake_clock`), else each source's own."""
    frames = [
        _source_frame(i, stream, tz, streaming, None if partition is None else partition[i],
                      key_groups, before_1970, wake_clock)
        for i, stream in enumerate(plan.sources)
    ]
    staged = functools.reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), frames)
    if wake_clock:
        staged = _with_wake_clock(staged, watermark_shift(before_1970))
    if arrival and not (wake_clock and heartbeats):  # else with_source_clocks numbers them
        staged = with_arrival_sequence(staged)
    if heartbeats and not wake_clock:  # else with_source_clocks sends them
        staged = with_heartbeats(staged, key_groups)
    hidden = {KEY_GROUP_COLUMN, ARRIVAL_COLUMN, _WM, EVENT_COLUMN}
    input_schema = StructType([f for f in staged.schema.fields if f.name not in hidden])
    for f in input_schema.fields:
        if on_wire(f.dataType):
            staged = staged.withColumn(f.name, to_wire(quoted(f.name), f.dataType))
    masks = null_plan(input_schema)
    return nulls_to_wire(staged, masks, input_schema), input_schema, masks


def _source_frame(
    index: int, stream: Any, tz: str, streaming: bool, keys: list[str] | None,
    key_groups: int, before_1970: bool, wake_clock: bool,
) -> DataFrame:
    """Source ``index`` as the graph stage reads it: columns renamed ``_fw_i<index>_<j>``, its
    number, its event time in ms (``MIN_LONG``: none) with its own watermark on a stream
    (shifted when the graph declares ``times_before_1970``, see flinkwin.spark.watermarks).
    ``wake_clock``: no watermark of its own in Spark (:func:`_wake_clock`)."""
    df = stream._elements_df()
    schema = stream._public_df().schema
    type_info = stream.get_type()
    strategy = stream._watermark
    carried = strategy is None and RECORD_TIMESTAMP_COLUMN in df.columns
    staged = with_checked_timestamps(df, schema)  # before any Python assigner reads a row
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
        if streaming and not strategy.emits_watermarks:
            pass  # noWatermarks(): the source holds the operators reading it at MIN_LONG
        elif streaming and strategy.watermarked_upstream:
            staged = watermark_mark(staged, strategy)
            has_wm = True
        elif streaming and wake_clock:
            has_wm = True  # the stage computes it (GraphOperator); Spark's is the wake clock
        elif streaming:
            staged = _with_watermark(
                staged, event_time, strategy.out_of_orderness_ms, watermark_shift(before_1970)
            )
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
    label = (
        F.lit(key_group_labels(1)[0]) if keys is None else _key_group(keys, key_groups, names)
    )
    extra = [F.col(EVENT_COLUMN), label.alias(KEY_GROUP_COLUMN)] + (
        [F.col(_WM)] if has_wm and not wake_clock else []
    )
    return staged.select(*keep, *extra, F.lit(index).cast("int").alias(SOURCE_COLUMN))


def _source_spec(index: int, stream: Any, streaming: bool) -> tuple[SourceSpec, bool]:
    """How the graph operator reads source ``index`` (:func:`_source_frame`'s columns), and
    whether it is watermarked on a stream."""
    schema = stream._public_df().schema
    type_info = stream.get_type()
    strategy = stream._watermark
    carried = strategy is None and RECORD_TIMESTAMP_COLUMN in stream._elements_df().columns
    names = schema.fieldNames()
    columns = [f"_fw_i{index}_{j}" for j in range(len(names))]
    pickled = is_pickled(schema) or is_pickled_type(type_info)
    # a source whose watermark Spark computes before a filter/map, or whose timestamps an
    # earlier stage gave: the stage's watermark (the rows seen here are not all the rows the
    # watermark was computed from). A stream without a WatermarkStrategy has none: it holds
    # every operator reading it at Long.MIN_VALUE, as in Flink (see GraphOperator)
    emits = strategy is not None and strategy.emits_watermarks
    upstream = streaming and (carried or (emits and strategy.watermarked_upstream))
    delay = strategy.out_of_orderness_ms if emits and streaming else None
    if upstream:
        delay = None
    source = SourceSpec(
        tuple(columns), tuple(names),
        tuple_elements=getattr(type_info, "name", None) == "TUPLE",
        pickled_elements=pickled,
        atomic_elements=is_atomic_type(type_info) and not pickled,
        converters=element_converters(schema, type_info),
        delay_ms=delay,
        # withIdleness on noWatermarks() too: Flink's WatermarksWithIdleness marks such an
        # input idle as any other, and the operators reading it then follow their others
        idle_timeout_ms=(strategy.idle_timeout_ms
                         if strategy is not None and streaming and not upstream else None),
        stage_watermark=upstream,
    )
    return source, streaming and emits


__all__ = ["EVENT_COLUMN", "SOURCE_COLUMN", "compile_graph"]
