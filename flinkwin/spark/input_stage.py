"""A window stage's input: the rows its stateful operator reads, built once per pipeline.

:func:`input_stage` checks the pipeline and turns its DataFrame into what the stage takes:
event time checked and range-checked, Spark's watermark, the key-group label, the arrival
sequence, heartbeats, partial aggregates and the wire forms of nulls and timestamps (see
:mod:`flinkwin.spark.compiler` for the stage built on it). A result's main output and its side
outputs share one :class:`InputStage`.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql.types import (
    BinaryType,
    BooleanType,
    DateType,
    DoubleType,
    FloatType,
    IntegralType,
    StringType,
    TimestampNTZType,
    TimestampType,
)

from flinkwin.errors import UnsupportedOperationError
from flinkwin.operator.snapshots import StatePickler
from flinkwin.operator.states import state_kind
from flinkwin.operator.states.partials import PartialSpec
from flinkwin.runtime_mode import RuntimeExecutionMode, effective_mode
from flinkwin.timestamps import TimestampAssigner
from flinkwin.types import is_pickled_type
from flinkwin.watermark import NO_WATERMARKS_ON_A_STREAM, WatermarkStrategy

from .arrival import ARRIVAL_COLUMN, with_arrival_sequence
from .carried_time import watermark_mark
from .combine import can_combine, combining_enabled, partial_spec, with_partials
from .elements import RECORD_TIMESTAMP_COLUMN, apply_element_stage
from .event_time import (
    _TS,
    _WM,
    _event_time,
    _in_event_time_range,
    _with_watermark,
)
from .inputs import EventTime
from .metrics import sends_heartbeats, with_heartbeats
from .nested import element_converters
from .nulls import NullMask
from .nulls import plan as null_plan
from .nulls import to_wire as nulls_to_wire
from .operator_spec import OperatorSpec
from .pipeline import (
    PipelineError,
    WindowPipeline,
    check_passable_names,
    check_unique_names,
    failing_on_null_key,
    key_group_column,
    overflow_policy,
    timer_domain,
)
from .runtime import (
    EVENT_TIME,
    KEY_GROUP_COLUMN,
    NO_TIMERS,
)
from .schema import check_carried
from .state_key import state_pickler
from .timestamps import on_wire, quoted, to_wire, with_checked_timestamps
from .watermarks import watermark_shift
from .window_tagging import with_window_tagging

_KG = KEY_GROUP_COLUMN

#: Input column types whose values round-trip through a columnar (Arrow) snapshot unchanged.
_COLUMNAR_TYPES = (
    StringType, IntegralType, FloatType, DoubleType, BooleanType, TimestampType,
    TimestampNTZType, DateType, BinaryType,
)
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
    heartbeats = streaming and pipeline.keyed and sends_heartbeats(pipeline.key_groups)
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



__all__ = ["InputStage", "input_stage"]
