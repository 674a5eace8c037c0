"""Compiles a window pipeline into one stateful Spark stage.

Streaming input becomes::

    df.withColumn(_fw_ts, unix_micros(ts)).drop(ts)                  # event time, range-checked
      .withColumn(_fw_wm, timestamp_micros(_fw_ts + S)).withWatermark(_fw_wm, D + 1)
      .withColumn(_fw_wm, null, watermark metadata kept)              # no Spark late-row filter
      .withColumn(_fw_kg, labels[pmod(hash(key columns), key_groups)])            # see key_groups
      .groupBy(_fw_kg)
      .applyInPandasWithState(KeyGroupRuntime.process_stream, output, state, "append", timeout)

Static input becomes ``groupBy(_fw_kg).applyInPandas(KeyGroupRuntime.process_static)``.

The event-time column and Spark's watermark are :mod:`flinkwin.spark.event_time`'s; the
pipeline, what follows from it alone and the compiled stage's outputs are
:mod:`flinkwin.spark.pipeline`'s; the function each key group runs is
:mod:`flinkwin.spark.runtime`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pyspark.sql import DataFrame, Observation
from pyspark.sql.streaming.state import GroupStateTimeout
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    IntegralType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from flinkwin.assigners.base import WindowAssigner
from flinkwin.assigners.sliding import SlidingEventTimeWindows, SlidingProcessingTimeWindows
from flinkwin.errors import UnsupportedOperationError
from flinkwin.functions.internal import resolve_window_function
from flinkwin.longs import ERROR
from flinkwin.operator.snapshots import StatePickler
from flinkwin.operator.states import DESCRIPTIONS as STATE_DESCRIPTIONS
from flinkwin.operator.states import state_kind
from flinkwin.operator.states.partials import PartialSpec
from flinkwin.output_tag import OutputTag
from flinkwin.runtime_mode import RuntimeExecutionMode, effective_mode
from flinkwin.timestamps import TimestampAssigner
from flinkwin.triggers.base import Trigger
from flinkwin.triggers.event_time import EventTimeTrigger
from flinkwin.triggers.processing_time import ProcessingTimeTrigger
from flinkwin.types import is_pickled_type
from flinkwin.watermark import NO_WATERMARKS_ON_A_STREAM, WatermarkStrategy

from .arrival import ARRIVAL_COLUMN, with_arrival_sequence
from .carried_time import watermark_mark
from .combine import CONF as COMBINE_CONF
from .combine import can_combine, combining_enabled, partial_spec, with_partials
from .elements import RECORD_TIMESTAMP_COLUMN, apply_element_stage
from .event_time import (
    _TS,
    _WM,
    _describe_event_time,
    _event_time,
    _in_event_time_range,
    _spark_watermark,
    _with_watermark,
)
from .inputs import EventTime
from .metrics import metric_aggregates, observed_metrics_name, with_heartbeats
from .nested import element_converters
from .nulls import NullMask
from .nulls import plan as null_plan
from .nulls import to_wire as nulls_to_wire
from .operator_spec import OperatorSpec
from .outputs import METRIC_COLUMNS, PACKED_SCHEMA, TAG_COLUMN, unpack
from .pipeline import (
    FIRING_COLUMNS,
    WINDOW_COLUMNS,
    CompiledStage,
    PipelineError,
    WindowPipeline,
    _nullable,
    check_passable_names,
    check_unique_names,
    failing_on_null_key,
    key_group_column,
    main_schema,
    null_timestamp_tag,
    overflow_policy,
    side_schema,
    timer_domain,
)
from .row_encoder import RowEncoder
from .runtime import (
    EVENT_TIME,
    KEY_GROUP_COLUMN,
    NO_TIMERS,
    PROCESSING_TIME,
    STATE_SCHEMA,
    KeyGroupRuntime,
    static_function,
    stream_function,
)
from .schema import check_carried
from .state_key import stage_fingerprint, state_pickler
from .stops import watch_stops
from .subtasks import DEFAULT_IDLE_CLOSE_S, idle_close_seconds
from .timestamps import on_wire, quoted, to_wire, with_checked_timestamps
from .watermarks import watermark_shift
from .window_tagging import with_window_tagging

_KG = KEY_GROUP_COLUMN

#: Input column types whose values round-trip through a columnar (Arrow) snapshot unchanged.
_COLUMNAR_TYPES = (
    StringType, IntegralType, FloatType, DoubleType, BooleanType, TimestampType,
    TimestampNTZType, DateType, BinaryType,
)
_TIMEOUTS = {
    EVENT_TIME: GroupStateTimeout.EventTimeTimeout,
    PROCESSING_TIME: GroupStateTimeout.ProcessingTimeTimeout,
    NO_TIMERS: GroupStateTimeout.NoTimeout,
}


# --------------------------------------------------------------------------- compiler
@dataclass(frozen=True)
class InputStage:
    """What a window stage reads and how it keeps its state, whichever outputs it produces:
    the input's rows as the stateful operator takes them (``staged``), built once per pipeline
    by :func:`input_stage` and shared by the stages of its main output and side outputs."""

    staged: DataFrame
    operator: OperatorSpec
    kind: str
    streaming: bool
    mode: RuntimeExecutionMode
    domain: str
    shift: int
    case_sensitive: bool
    session_tz: str
    strategy: WatermarkStrategy | None
    event_time: EventTime | None
    arrival: bool
    heartbeats: bool
    masks: tuple[NullMask, ...]
    partial: PartialSpec | None


def compile_pipeline(
    pipeline: WindowPipeline, side_tags: Sequence[OutputTag], staged: InputStage | None = None
) -> CompiledStage:
    """Build the stateful stage producing the main output and ``side_tags``, on ``staged``
    (:func:`input_stage` of ``pipeline`` when None)."""
    inputs = input_stage(pipeline) if staged is None else staged
    df, input_schema = pipeline.df, pipeline.input_schema
    streaming, domain, mode, arrival = inputs.streaming, inputs.domain, inputs.mode, inputs.arrival
    operator, kind, session_tz, event_time = (
        inputs.operator, inputs.kind, inputs.session_tz, inputs.event_time
    )
    case_sensitive, masks, partial = inputs.case_sensitive, inputs.masks, inputs.partial
    heartbeats, shift, strategy = inputs.heartbeats, inputs.shift, inputs.strategy

    main = main_schema(pipeline)
    if pipeline.with_window:
        main_out = StructType(
            list(main.fields)
            + [StructField(name, TimestampType(), True) for name in WINDOW_COLUMNS]
        )
    else:
        main_out = main
    if pipeline.with_firing:
        main_out = StructType(list(main_out.fields) + list(FIRING_COLUMNS))
    check_unique_names(
        main_out.fieldNames(), f"the {pipeline.function_name} output", case_sensitive
    )
    check_carried(main, f"the {pipeline.function_name} output")
    casts: dict[str, DataType] = {}
    out_main, main_columns = _nullable(main_out, "_fw_m", casts)
    out_fields = [
        StructField(TAG_COLUMN, ByteType(), False),
        *out_main.fields,
        StructField(RECORD_TIMESTAMP_COLUMN, LongType(), True),
    ]
    side_columns: dict[OutputTag, list[tuple[str, str]]] = {}
    side_schemas = []
    for j, tag in enumerate(side_tags, start=1):
        schema = side_schema(pipeline, tag)
        check_unique_names(schema.fieldNames(), f"side output {tag.tag_id!r}", case_sensitive)
        check_carried(schema, f"side output {tag.tag_id!r}")
        side_schemas.append(schema)
        out_side, side_columns[tag] = _nullable(schema, f"_fw_s{j}_", casts)
        out_fields.extend(out_side.fields)
    out_fields.extend(StructField(c, LongType(), True) for c in METRIC_COLUMNS)
    output_schema = StructType(out_fields)

    runtime = KeyGroupRuntime(
        operator=operator,
        input_schema=input_schema,
        null_timestamp_tag=null_timestamp_tag(pipeline),
        event_time=event_time,
        time_zone=session_tz,
        has_watermark=strategy is not None and (strategy.emits_watermarks or not streaming),
        timer_domain=domain,
        key_groups=pipeline.key_groups,
        main_encoder=RowEncoder(main, session_tz, f"{pipeline.function_name} output"),
        with_window=pipeline.with_window,
        with_firing=pipeline.with_firing,
        side_tags=list(side_tags),
        side_encoders=[
            RowEncoder(s, session_tz, f"side output {t.tag_id!r}")
            for t, s in zip(side_tags, side_schemas)
        ],
        output_schema=output_schema,
        sequence_column=ARRIVAL_COLUMN if arrival else None,
        heartbeats=heartbeats,
        idle_close_s=idle_close_seconds(df.sparkSession) if streaming else DEFAULT_IDLE_CLOSE_S,
        null_masks=masks,
        partial=partial,
        watermark_shift=shift,
        stage_fingerprint=stage_fingerprint(
            "window", pipeline.df.schema.simpleString(), main.simpleString(),
        ),
    )
    runtime.state_kind = kind
    runtime.packed_output = streaming and many_results(pipeline.assigner, pipeline.trigger)

    grouped = inputs.staged.groupBy(_KG)
    if streaming:
        watch_stops(df.sparkSession)  # the workers close a query run's functions when it ends
        if runtime.packed_output:
            combined = grouped.applyInPandasWithState(
                stream_function(runtime), PACKED_SCHEMA, STATE_SCHEMA, "append",
                _TIMEOUTS[domain],
            ).mapInArrow(unpack, output_schema)
        else:
            combined = grouped.applyInPandasWithState(
                stream_function(runtime), output_schema, STATE_SCHEMA, "append",
                _TIMEOUTS[domain],
            )
        metrics_name = observed_metrics_name(df)
        combined = combined.observe(metrics_name, *metric_aggregates())
        observation = None
    else:
        combined = grouped.applyInPandas(static_function(runtime), output_schema)
        # the static stage's metrics, read after an action with WindowResultStream.metrics()
        observation = Observation(observed_metrics_name(df))
        combined = combined.observe(observation, *metric_aggregates())
    summary = _summary(pipeline, domain, streaming, side_tags, mode)
    if streaming:
        summary["metrics"] = f"query.lastProgress['observedMetrics'][{metrics_name!r}]"
    else:
        summary["metrics"] = "result.metrics(), after an action"
    if runtime.packed_output:
        summary["outputs"] = PACKED_SUMMARY
    summary["window state"] += STATE_DESCRIPTIONS[runtime.state_kind]
    summary["shuffle"] = (
        f"elements combined per key and window of each input partition ({COMBINE_CONF})"
        if partial is not None else "every element"
    )
    if event_time is not None:
        summary["event time"] = _describe_event_time(event_time)
    summary["long overflow"] = (
        "error (spark.sql.ansi.enabled)" if runtime.operator.overflow == ERROR
        else "Java wrap-around, as Flink (spark.sql.ansi.enabled=false)"
    )
    return CompiledStage(
        pipeline, combined, main_columns, side_columns, domain, summary, observation, casts
    )


def input_stage(pipeline: WindowPipeline) -> InputStage:
    """``pipeline``'s input as its window stage reads it (see :class:`InputStage`); checks the
    pipeline first."""
    df = pipeline.df
    case_sensitive = str(
        df.sparkSession.conf.get("spark.sql.caseSensitive") or "false"
    ).lower() == "true"
    check_unique_names(df.columns, "the input", case_sensitive)
    check_passable_names(df.columns)
    check_carried(pipeline.input_schema, "the input")
    if pipeline.key_columns is not None:
        missing = [c for c in pipeline.key_columns if c not in df.columns]
        if missing:
            raise PipelineError(f"keyBy column(s) {missing} not in the input ({df.columns})")
    if pipeline.key_groups < 1:
        raise PipelineError("key_groups must be at least 1")
    streaming = df.isStreaming
    shift = watermark_shift(pipeline.times_before_1970) if streaming else 0
    mode = effective_mode(pipeline.runtime_mode, streaming)
    domain = timer_domain(pipeline) if streaming else NO_TIMERS
    uses_event_time = pipeline.assigner.is_event_time() or domain == EVENT_TIME
    strategy = pipeline.watermark
    if strategy is None and pipeline.carried_timestamps:
        if streaming:
            raise PipelineError(
                "this stream's timestamps come from another stateful stage: build the window "
                "on that stage's result stream itself (not on a DataFrame taken from it), so "
                "both run in one stage (see docs/windows/union-and-cascades.md)"
            )
        strategy = WatermarkStrategy(0, RECORD_TIMESTAMP_COLUMN)
    if streaming and uses_event_time and strategy is not None and not strategy.emits_watermarks:
        raise UnsupportedOperationError(NO_WATERMARKS_ON_A_STREAM)
    if uses_event_time and strategy is None:
        raise PipelineError(
            f"{pipeline.assigner!r} works on event time: call "
            "assignTimestampsAndWatermarks(WatermarkStrategy.forBoundedOutOfOrderness(...)"
            ".withTimestampAssigner(\"<column>\")) before keyBy/window"
        )

    input_schema = pipeline.input_schema
    keyed = pipeline.keyed
    function = (
        with_window_tagging(pipeline.function, keyed) if pipeline.with_window
        else pipeline.function
    )
    operator = OperatorSpec(
        assigner=pipeline.assigner,
        function=function,
        key_fields=(
            pipeline.key_selector if pipeline.key_selector is not None
            else pipeline.key_columns
        ),
        trigger=pipeline.trigger,
        evictor=pipeline.evictor,
        allowed_lateness_ms=pipeline.allowed_lateness_ms,
        late_tag=pipeline.late_tag,
        key_groups=pipeline.key_groups,
        task_name=f"Window({pipeline.function_name})",
        overflow=overflow_policy(df.sparkSession),
        tuple_elements=pipeline.tuple_elements,
        pickled_elements=is_pickled_type(pipeline.element_type),
        atomic_elements=pipeline.atomic_elements,
        element_converters=element_converters(input_schema, pipeline.element_type),
        state_pickler=state_pickler(df.sparkSession) if streaming else StatePickler(),
        key_type=pipeline.key_type,
        tag_firings=pipeline.with_firing,
    )
    template = operator.build()  # fail at build time on an invalid configuration
    frame_state = streaming and not pipeline.with_window and not pipeline.with_firing and all(
        isinstance(f.dataType, _COLUMNAR_TYPES) for f in input_schema.fields
    )
    kind = state_kind(template, frame_state)
    staged = with_checked_timestamps(df, input_schema)
    # STREAMING mode: each row's arrival sequence, taken before any shuffle (see
    # flinkwin.spark.arrival); on a stream, the element stage counts it if there is one
    arrival = mode is RuntimeExecutionMode.STREAMING
    if arrival and not streaming:
        staged = with_arrival_sequence(staged)
    session_tz = df.sparkSession.conf.get("spark.sql.session.timeZone") or "UTC"
    assigner = strategy.timestamp_column if strategy is not None else None
    ts_assigner = assigner if isinstance(assigner, TimestampAssigner) else None
    if pipeline.key_selector is not None or ts_assigner is not None:
        staged = apply_element_stage(
            staged, input_schema, pipeline.key_selector, pipeline.key_type, ts_assigner,
            session_tz, tuple_elements=pipeline.tuple_elements,
            atomic_elements=pipeline.atomic_elements, element_type=pipeline.element_type,
            arrival_sequence=arrival and streaming,
        )
    # a built-in aggregation's elements combined per input partition (flinkwin.spark.combine),
    # in a pass that also counts the arrival sequence
    combining = (
        streaming and arrival and ARRIVAL_COLUMN not in staged.columns
        and combining_enabled(df.sparkSession)
        and can_combine(template, kind, input_schema, pipeline.key_columns)
    )
    # the key-group label of combined rows is computed after the pass from the key columns
    # (they cross it unchanged unless they travel changed): one column less through Arrow,
    # and the null-key check moves into the event-time column, still on every input row
    late_label = combining and not any(
        on_wire(input_schema[c].dataType) for c in pipeline.key_columns or ()
    )
    if not late_label:
        # before the event-time columns replace the user's: the null checks show whole rows
        staged = staged.withColumn(_KG, key_group_column(pipeline))
    if arrival and ARRIVAL_COLUMN not in staged.columns and not combining:
        staged = with_arrival_sequence(staged)
    heartbeats = streaming and pipeline.keyed and pipeline.key_groups > 1
    if heartbeats and not combining:
        staged = with_heartbeats(staged, pipeline.key_groups)
    event_time: EventTime | None = None
    if strategy is not None:
        event_time, helper = _event_time(staged, strategy)
        if helper is not None:
            staged = staged.withColumn(_TS, helper)
        if streaming or strategy is pipeline.watermark:
            # (not needed for the timestamps an upstream window's results carry on static
            # input: they never become a Spark watermark)
            checked = _in_event_time_range(
                pipeline, strategy, event_time, quoted(event_time.column)
            )
            if late_label:  # a null key fails first, as in the label's own check
                checked = failing_on_null_key(pipeline, checked)
            staged = staged.withColumn(event_time.column, checked)
        if streaming and strategy.emits_watermarks and strategy.watermarked_upstream:
            staged = watermark_mark(staged, strategy)
        elif streaming and strategy.emits_watermarks:
            staged = _with_watermark(staged, event_time, strategy.out_of_orderness_ms, shift)
        if event_time.rebuilt is not None:
            staged = staged.drop(event_time.rebuilt)
    for f in input_schema.fields:
        if on_wire(f.dataType) and (event_time is None or f.name != event_time.rebuilt):
            staged = staged.withColumn(f.name, to_wire(quoted(f.name), f.dataType))
    masks = null_plan(input_schema)
    partial = None
    if combining:
        # Arrow carries nulls, so the combining pass reads the columns as they are (without
        # the null watermark column); the few rows it leaves go on the wire after it
        assert event_time is not None and pipeline.key_columns is not None and strategy
        partial = partial_spec(template, pipeline.key_columns, event_time, (), ARRIVAL_COLUMN)
        staged = with_partials(staged.drop(_WM), partial)
        if late_label:
            staged = staged.withColumn(_KG, key_group_column(pipeline, check_nulls=False))
        staged = nulls_to_wire(staged, masks, input_schema)
        if heartbeats:
            staged = with_heartbeats(staged, pipeline.key_groups)
        staged = watermark_mark(staged, strategy)  # the mark the Python pass dropped
    else:
        staged = nulls_to_wire(staged, masks, input_schema)
    return InputStage(
        staged, operator, kind, streaming, mode, domain, shift, case_sensitive, session_tz,
        strategy, event_time, arrival, heartbeats, masks, partial,
    )


#: explain()'s line for a stage whose outputs leave packed
PACKED_SUMMARY = (
    "packed: a key group's results leave its call as one Arrow stream, unpacked by a "
    "mapInArrow (a window firing more than once, or sliding windows: about a result per "
    "element, see docs/architecture.md)"
)


def many_results(assigner: WindowAssigner, trigger: Trigger | None) -> bool:
    """Whether a stage whose results are a window's (``assigner``, ``trigger``: None is the
    assigner's default) leaves packed (:func:`flinkwin.spark.outputs.unpack`): when the
    window may fire more than once (a trigger other than the event- and processing-time
    triggers that fire it at its end: early and repeated firings) or an element belongs to
    several windows (sliding windows), a stage emits about as many results as it reads
    elements, and PySpark's per-row cost of a stateful function's output would be paid on
    every one."""
    if trigger is not None and not isinstance(trigger, (EventTimeTrigger, ProcessingTimeTrigger)):
        return True
    return isinstance(assigner, (SlidingEventTimeWindows, SlidingProcessingTimeWindows)) and (
        assigner.size > assigner.slide
    )


def _summary(
    pipeline: WindowPipeline,
    domain: str,
    streaming: bool,
    side_tags: Sequence[OutputTag],
    runtime_mode: RuntimeExecutionMode,
) -> dict[str, str]:
    spec = resolve_window_function(pipeline.function, pipeline.evictor is not None)
    strategy = pipeline.watermark
    if not streaming:
        order = (
            "arrival order" if runtime_mode is RuntimeExecutionMode.STREAMING
            else "event-time order"
        )
        mode = (
            f"static input, {runtime_mode.name} mode ({order}): groupBy(key group)"
            ".applyInPandas, end-of-input watermark MAX_LONG"
        )
        timeout = "none (batch)"
    else:
        mode = (
            "streaming (STREAMING mode, arrival order): groupBy(key group)"
            ".applyInPandasWithState, append"
        )
        timeout = _TIMEOUTS[domain]
    if pipeline.key_selector is not None:
        keys = f"key selector {pipeline.key_selector!r} (called per element before the shuffle)"
    else:
        keys = ", ".join(pipeline.key_columns) if pipeline.key_columns else "none (windowAll)"
    groups = str(pipeline.key_groups) if pipeline.keyed else "1 (non-keyed)"
    return {
        "mode": mode,
        "key": keys,
        "key groups": groups,
        "assigner": repr(pipeline.assigner),
        "trigger": repr(pipeline.effective_trigger)
        + ("" if pipeline.trigger is not None else " (default)"),
        "evictor": repr(pipeline.evictor) if pipeline.evictor is not None else "none",
        "function": f"{pipeline.function_name}: {spec.describe()}",
        "window state": spec.state_kind if pipeline.evictor is None else "list (evictor)",
        "timers": domain,
        "timeout": timeout,
        "watermark": (
            "none" if strategy is None
            else "none (noWatermarks): Long.MIN_VALUE"
            if not strategy.emits_watermarks and streaming
            else "none until the end of input (noWatermarks)" if not strategy.emits_watermarks
            else f"max(ts) - {strategy.out_of_orderness_ms} ms - 1 ms, as Flink's "
            "BoundedOutOfOrdernessWatermarks" + _spark_watermark(pipeline, strategy, streaming)
        ),
        "allowed lateness": f"{pipeline.allowed_lateness_ms} ms",
        "late data": repr(pipeline.late_tag) if pipeline.late_tag is not None else "dropped",
        "null timestamps": (
            "n/a (no watermark strategy)" if strategy is None
            else "fail the batch" if strategy.null_timestamp_tag is None
            else repr(strategy.null_timestamp_tag)
        ),
        "side outputs": ", ".join(repr(t) for t in side_tags) or "none",
        "window columns": "window_start, window_end" if pipeline.with_window else "no",
        "firing columns": (
            ", ".join(f.name for f in FIRING_COLUMNS) if pipeline.with_firing else "no"
        ),
    }


__all__ = ["InputStage", "compile_pipeline", "input_stage"]
