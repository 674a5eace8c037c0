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

from pyspark.sql import Observation
from pyspark.sql.streaming.state import GroupStateTimeout
from pyspark.sql.types import (
    ByteType,
    DataType,
    LongType,
    StructField,
    StructType,
    TimestampType,
)

from flinkwin.assigners.base import WindowAssigner
from flinkwin.assigners.sliding import SlidingEventTimeWindows, SlidingProcessingTimeWindows
from flinkwin.functions.internal import resolve_window_function
from flinkwin.longs import ERROR
from flinkwin.operator.states import DESCRIPTIONS as STATE_DESCRIPTIONS
from flinkwin.output_tag import OutputTag
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.triggers.base import Trigger
from flinkwin.triggers.event_time import EventTimeTrigger
from flinkwin.triggers.processing_time import ProcessingTimeTrigger

from .arrival import ARRIVAL_COLUMN
from .combine import CONF as COMBINE_CONF
from .elements import RECORD_TIMESTAMP_COLUMN
from .event_time import (
    _describe_event_time,
    _spark_watermark,
)
from .input_stage import InputStage, input_stage
from .metrics import metric_aggregates, observed_metrics_name
from .outputs import METRIC_COLUMNS, PACKED_SCHEMA, TAG_COLUMN, unpack
from .pipeline import (
    FIRING_COLUMNS,
    WINDOW_COLUMNS,
    CompiledStage,
    WindowPipeline,
    _nullable,
    check_unique_names,
    main_schema,
    null_timestamp_tag,
    side_schema,
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
from .state_key import stage_fingerprint
from .stops import watch_stops
from .subtasks import DEFAULT_IDLE_CLOSE_S, idle_close_seconds

_KG = KEY_GROUP_COLUMN

_TIMEOUTS = {
    EVENT_TIME: GroupStateTimeout.EventTimeTimeout,
    PROCESSING_TIME: GroupStateTimeout.ProcessingTimeTimeout,
    NO_TIMERS: GroupStateTimeout.NoTimeout,
}


# --------------------------------------------------------------------------- compiler
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
        combined = combined.observe(metrics_name, *metric_aggregates(
            totals=heartbeats or not pipeline.keyed or pipeline.key_groups == 1))
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


__all__ = ["compile_pipeline"]
