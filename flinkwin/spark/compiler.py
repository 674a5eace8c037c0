"""Compiles a window pipeline into one stateful Spark stage.

Streaming input becomes::

    df.withColumn(_fw_ts, unix_micros(ts)).drop(ts)                  # event time, range-checked
      .withColumn(_fw_wm, timestamp_micros(_fw_ts + S)).withWatermark(_fw_wm, D + 1)
      .withColumn(_fw_wm, null, watermark metadata kept)              # no Spark late-row filter
      .withColumn(_fw_kg, labels[pmod(hash(key columns), key_groups)])            # see key_groups
      .groupBy(_fw_kg)
      .applyInPandasWithState(KeyGroupRuntime.process_stream, output, state, "append", timeout)

Static input becomes ``groupBy(_fw_kg).applyInPandas(KeyGroupRuntime.process_static)``.

The watermark sits on a helper column ``ts + S`` (see :mod:`flinkwin.spark.watermarks`: ``S``
is 0 unless the stream declares ``times_before_1970``) with delay ``D + 1`` ms, so Spark's
watermark is Flink's ``BoundedOutOfOrdernessWatermarks`` value ``max(ts) - D - 1`` shifted by
``S`` (``ts`` in Flink's milliseconds: Spark floors the helper's microseconds to milliseconds
before taking the maximum). Once
Spark has taken the watermark's statistics, the helper column is replaced by nulls that keep
its watermark metadata: Spark requires that metadata on an input column of an
``EventTimeTimeout`` stage, and drops input rows whose such column is at or below the previous
watermark, which a null never is. So Spark drops no row at all; lateness is judged by the Flink
operator. A timestamp column travels once, as epoch microseconds (see ``runtime.EventTime``);
the workers rebuild the user's column from them. Epoch-millisecond columns are used as they are.

The stage emits one row schema: ``_fw_tag`` (0 = main output, ``j`` = the ``j``-th requested
side output), the main columns ``_fw_m<i>`` and each side output's columns ``_fw_s<j>_<i>``;
:class:`CompiledStage` projects them back to their public names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pyspark.sql import Column, DataFrame, Observation
from pyspark.sql import functions as F
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

from flinkwin.assigners.base import WindowAssigner, default_trigger
from flinkwin.assigners.count import CountSlidingWindowAssigner, CountTumblingWindowAssigner
from flinkwin.assigners.global_windows import GlobalWindows
from flinkwin.errors import UnsupportedOperationError
from flinkwin.functions.internal import resolve_window_function
from flinkwin.longs import ERROR, WRAP
from flinkwin.operator.snapshots import StatePickler
from flinkwin.operator.states import DESCRIPTIONS as STATE_DESCRIPTIONS
from flinkwin.operator.states import state_kind
from flinkwin.output_tag import OutputTag
from flinkwin.runtime_mode import RuntimeExecutionMode, effective_mode
from flinkwin.timestamps import TimestampAssigner
from flinkwin.triggers import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    DeltaTrigger,
    EndOfStreamTrigger,
    EventTimeTrigger,
    NeverTrigger,
    ProcessingTimeTrigger,
    PurgingTrigger,
    Trigger,
)
from flinkwin.types import TypeInformation, is_atomic_type, is_pickled_type
from flinkwin.watermark import NO_WATERMARKS_ON_A_STREAM, WatermarkStrategy

from .arrival import ARRIVAL_COLUMN, with_arrival_sequence
from .carried_time import watermark_mark
from .combine import CONF as COMBINE_CONF
from .combine import can_combine, combining_enabled, partial_spec, with_partials
from .elements import (
    KEY_COLUMN,
    RECORD_TIMESTAMP_COLUMN,
    TIMESTAMP_COLUMN,
    apply_element_stage,
)
from .key_groups import failing_on_null, key_group_labels, label_of
from .metrics import metric_aggregates, observed_metrics_name, with_heartbeats
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
    OperatorSpec,
    static_function,
    stream_function,
)
from .schema import (
    RowEncoder,
    check_carried,
    parse_schema,
    pickled_schema,
    value_schema,
)
from .state_key import stage_fingerprint, state_pickler
from .stops import watch_stops
from .subtasks import DEFAULT_IDLE_CLOSE_S, idle_close_seconds
from .timestamps import on_wire, quoted, sql_name, text_floats, to_wire
from .watermarks import (
    MAX_EVENT_TIME_MS,
    WATERMARK_SHIFT_MS,
    watermark_delay_ms,
    watermark_shift,
)
from .window_tagging import with_window_tagging

WINDOW_COLUMNS = ("window_start", "window_end")
#: the columns ``with_firing=True`` appends (docs/firings.md)
FIRING_COLUMNS = (
    StructField("firing_timing", StringType(), True),
    StructField("firing_index", LongType(), True),
    StructField("firing_is_last", BooleanType(), True),
)
_TS, _WM, _KG = "_fw_ts", "_fw_wm", KEY_GROUP_COLUMN

#: Input column types whose values round-trip through a columnar (Arrow) snapshot unchanged.
_COLUMNAR_TYPES = (
    StringType, IntegralType, FloatType, DoubleType, BooleanType, TimestampType,
    TimestampNTZType, DateType, BinaryType,
)
_EVENT_TRIGGERS = (EventTimeTrigger, ContinuousEventTimeTrigger, EndOfStreamTrigger)
_PROCESSING_TRIGGERS = (ProcessingTimeTrigger, ContinuousProcessingTimeTrigger)
_TIMERLESS_TRIGGERS = (CountTrigger, NeverTrigger, DeltaTrigger)
_TIMEOUTS = {
    EVENT_TIME: GroupStateTimeout.EventTimeTimeout,
    PROCESSING_TIME: GroupStateTimeout.ProcessingTimeTimeout,
    NO_TIMERS: GroupStateTimeout.NoTimeout,
}


class PipelineError(ValueError):
    """The pipeline cannot run on Spark as built (raised when it is compiled)."""


@dataclass
class WindowPipeline:
    """A fully specified window stage, as the fluent API builds it."""

    df: DataFrame
    watermark: WatermarkStrategy | None
    key_columns: list[str] | None
    assigner: WindowAssigner
    trigger: Trigger | None
    evictor: Any
    allowed_lateness_ms: int
    late_tag: OutputTag | None
    function: Any
    function_name: str
    output_schema: StructType | None
    with_window: bool
    key_groups: int
    key_selector: Any = None
    key_type: Any = None
    runtime_mode: RuntimeExecutionMode = RuntimeExecutionMode.STREAMING
    #: the input stream's PyFlink type information (``Types.TUPLE``: elements are tuples)
    element_type: Any = None
    #: the stateful stage's tasks (``set_parallelism``; None: see flinkwin.spark.parallelism)
    parallelism: int | None = None
    #: the stream declares event times at or before 1970 (``DataStream(df,
    #: times_before_1970=True)``): Spark's watermark is shifted (flinkwin.spark.watermarks)
    times_before_1970: bool = False
    #: ``with_firing=True``: each result carries its firing (docs/firings.md)
    with_firing: bool = False

    @property
    def tuple_elements(self) -> bool:
        """The elements user functions see are tuples (a ``Types.TUPLE`` input stream)."""
        return getattr(self.element_type, "name", None) == "TUPLE"

    @property
    def atomic_elements(self) -> bool:
        """The elements user functions see are bare values (an input stream of an atomic type,
        ``Types.STRING()``...)."""
        return is_atomic_type(self.element_type)

    @property
    def keyed(self) -> bool:
        return self.key_columns is not None or self.key_selector is not None

    @property
    def input_schema(self) -> StructType:
        """The elements' schema: the input's columns without the hidden record timestamps."""
        return StructType(
            [f for f in self.df.schema.fields if f.name != RECORD_TIMESTAMP_COLUMN]
        )

    @property
    def timestamp_assigner(self) -> TimestampAssigner | None:
        spec = None if self.watermark is None else self.watermark.timestamp_column
        return spec if isinstance(spec, TimestampAssigner) else None

    @property
    def carried_timestamps(self) -> bool:
        """Event time comes from the timestamps the elements carry (an upstream window's)."""
        return self.watermark is None and RECORD_TIMESTAMP_COLUMN in self.df.columns

    @property
    def effective_trigger(self) -> Trigger:
        return self.trigger if self.trigger is not None else default_trigger(self.assigner)


@dataclass
class CompiledStage:
    """The stateful stage plus how to read each output back out of it."""

    pipeline: WindowPipeline
    combined: DataFrame
    main_columns: list[tuple[str, str]]
    side_columns: dict[OutputTag, list[tuple[str, str]]]
    timer_domain: str
    summary: dict[str, str] = field(default_factory=dict)
    #: the static stage's metrics (None on a streaming stage: they are in its progress)
    observation: Observation | None = None
    #: the declared type of each output field that leaves the stage as text (text_floats)
    casts: dict[str, DataType] = field(default_factory=dict)
    #: side outputs (by tag id) of objects no output type describes: what to do instead
    pickled_fixes: dict[str, str] = field(default_factory=dict)

    #: each output's row filter and columns, built once (see ``_project``)
    _projections: dict[tuple[int, bool], tuple[Column, list[Column]]] = field(
        default_factory=dict, init=False, repr=False
    )

    def main(self, combined: DataFrame | None = None) -> DataFrame:
        """The main output rows of ``combined`` (default: the whole stage)."""
        return self._project(self.combined if combined is None else combined, 0)

    def main_timed(self) -> DataFrame:
        """The main output plus the hidden ``_fw_rts`` column: the timestamp each result
        carries downstream (its window's ``max_timestamp()``, as in Flink)."""
        return self._project(self.combined, 0, timed=True)

    def side(self, tag: OutputTag, combined: DataFrame | None = None) -> DataFrame:
        """The rows of side output ``tag``."""
        tags = list(self.side_columns)
        if tag not in self.side_columns:
            raise KeyError(f"{tag!r} is not an output of this stage (outputs: {tags})")
        return self._project(
            self.combined if combined is None else combined, tags.index(tag) + 1
        )

    def _project(self, df: DataFrame, tag: int, timed: bool = False) -> DataFrame:
        """The rows of output ``tag`` (0: main) of ``df`` (the stage's rows, or one
        micro-batch of them), under the output's own column names. The filter and columns are
        built once per output and reused for every micro-batch: building them anew costs
        py4j calls by the hundred each time."""
        built = self._projections.get((tag, timed))
        if built is None:
            if tag == 0:
                columns = list(self.main_columns)
                if timed:
                    columns.append((RECORD_TIMESTAMP_COLUMN, RECORD_TIMESTAMP_COLUMN))
            else:
                columns = list(self.side_columns.values())[tag - 1]
            schema = self.combined.schema  # every micro-batch's schema
            built = self._projections[tag, timed] = (
                F.expr(f"{sql_name(TAG_COLUMN)} = {tag}"),
                [
                    (
                        quoted(internal).cast(self.casts[internal]) if internal in self.casts
                        else quoted(internal)
                    ).alias(public, metadata=schema[internal].metadata)
                    for internal, public in columns
                ],
            )
        condition, selected = built
        return df.where(condition).select(*selected)


# ------------------------------------------------------------------------ time domain
def _base_trigger(trigger: Trigger) -> Trigger:
    while isinstance(trigger, PurgingTrigger):
        trigger = trigger.nested_trigger
    return trigger


_ENDLESS_WINDOW_ASSIGNERS = (GlobalWindows, CountTumblingWindowAssigner, CountSlidingWindowAssigner)


def timer_domain(pipeline: WindowPipeline) -> str:
    """The one timer domain the stage needs: event time, processing time or none.

    Built-in triggers are classified exactly; a user-defined trigger is assumed to use the
    assigner's domain (for ``GlobalWindows`` and the count assigners, whose windows never end
    and so need no cleanup timer: event time when a watermark strategy is set).
    """
    assigner = pipeline.assigner
    if assigner.is_event_time():
        assigner_domain = EVENT_TIME
    elif isinstance(assigner, _ENDLESS_WINDOW_ASSIGNERS):
        assigner_domain = NO_TIMERS
    else:
        assigner_domain = PROCESSING_TIME
    trigger = _base_trigger(pipeline.effective_trigger)
    if isinstance(trigger, _EVENT_TRIGGERS):
        trigger_domain = EVENT_TIME
    elif isinstance(trigger, _PROCESSING_TRIGGERS):
        trigger_domain = PROCESSING_TIME
    elif isinstance(trigger, _TIMERLESS_TRIGGERS):
        trigger_domain = NO_TIMERS
    elif assigner_domain == NO_TIMERS and pipeline.watermark is not None and (
        pipeline.watermark.emits_watermarks
    ):
        trigger_domain = EVENT_TIME
    else:
        trigger_domain = assigner_domain
    domains = {assigner_domain, trigger_domain} - {NO_TIMERS}
    if len(domains) > 1:
        raise PipelineError(
            f"{assigner!r} with {pipeline.effective_trigger!r} needs both event-time and "
            "processing-time timers; a Spark stateful stage has a single timeout kind, so idle "
            "keys could not be woken for both. Use a trigger in the assigner's time domain "
            "(or run on a static DataFrame, where both work)."
        )
    return domains.pop() if domains else NO_TIMERS


def key_group_column(pipeline: WindowPipeline, check_nulls: bool = True) -> Column:
    """The key group's label (see :mod:`flinkwin.spark.key_groups`): group
    ``pmod(hash(keys), key_groups)`` (for a key selector: the hash of the pickled key), or
    group 0 for a non-keyed stream. A row with a null key column fails
    (:func:`failing_on_null_key`) unless ``check_nulls`` is False (rows checked before)."""
    if not pipeline.keyed:
        return F.lit(key_group_labels(1)[0])
    if pipeline.key_selector is not None:
        # the selector's keys travel pickled; a null key fails in the element stage
        return label_of([KEY_COLUMN], pipeline.key_groups)
    assert pipeline.key_columns is not None
    label = label_of(pipeline.key_columns, pipeline.key_groups)
    return failing_on_null_key(pipeline, label) if check_nulls else label


def failing_on_null_key(pipeline: WindowPipeline, column: Column) -> Column:
    """``column``, failing on a row whose key column (one of them) is null, with the row in
    the message (:func:`~flinkwin.spark.key_groups.failing_on_null`)."""
    assert pipeline.key_columns is not None
    return failing_on_null(
        pipeline.key_columns, pipeline.df.columns, "keyBy column(s)", "before keyBy", column
    )


def overflow_policy(spark: Any) -> str:
    """Long overflow in window arithmetic and sums follows ``spark.sql.ansi.enabled``: an
    error under ANSI (Spark 4's default), Java's wrap-around (Flink's) otherwise."""
    ansi = spark.conf.get("spark.sql.ansi.enabled", "true")
    return ERROR if str(ansi).strip().lower() == "true" else WRAP


# ------------------------------------------------------------------------- timestamps
def _event_time(df: DataFrame, strategy: WatermarkStrategy) -> tuple[EventTime, Column | None]:
    """How event time is shipped, and the helper column's expression (None: a user column of
    epoch milliseconds is used as it is)."""
    spec = strategy.timestamp_column
    if isinstance(spec, TimestampAssigner):
        return EventTime(TIMESTAMP_COLUMN, "ms"), None
    if spec is None:
        raise PipelineError(
            "the WatermarkStrategy has no timestamp column: use "
            ".withTimestampAssigner(\"<column>\")"
        )
    if isinstance(spec, str):
        if spec not in df.columns:
            raise PipelineError(
                f"timestamp column {spec!r} is not a column of the input ({df.columns})"
            )
        column = F.col(spec)
    else:
        column = spec
    dtype = df.select(column.alias("ts")).schema["ts"].dataType
    if isinstance(dtype, (TimestampType, TimestampNTZType)):
        # an instant, or a wall time read as UTC (unix_micros of a TIMESTAMP_NTZ is exact)
        rebuilt = spec if isinstance(spec, str) else None
        return EventTime(_TS, "us", rebuilt), F.unix_micros(column)
    if isinstance(dtype, IntegralType):
        if isinstance(spec, str) and dtype.typeName() == "long":
            return EventTime(spec, "ms"), None
        return EventTime(_TS, "ms"), column.cast("long")
    raise PipelineError(
        f"timestamp column {spec!r} has type {dtype.simpleString()}; it must be a timestamp "
        "or integral epoch milliseconds"
    )


def _in_event_time_range(
    pipeline: WindowPipeline, strategy: WatermarkStrategy, event_time: EventTime, column: Column
) -> Column:
    """``column`` (event time in ``event_time.unit``), failing on a row whose timestamp is
    outside ``[-MAX_EVENT_TIME_MS, MAX_EVENT_TIME_MS]`` (see :mod:`flinkwin.spark.watermarks`),
    with the column, the value and the range in the message. A null passes (it is handled
    later: an error or the null-timestamp side output)."""
    per_ms = 1 if event_time.unit == "ms" else 1000
    low, high = -MAX_EVENT_TIME_MS * per_ms, MAX_EVENT_TIME_MS * per_ms + per_ms - 1
    spec = strategy.timestamp_column
    if isinstance(spec, TimestampAssigner):
        source = f"the timestamp returned by {spec!r}"
    elif isinstance(spec, str):
        source = f"timestamp column {spec!r}"
    else:
        source = f"timestamp column {spec}"
    # unix_millis floors exactly (a division would go through a double)
    millis = column if per_ms == 1 else F.unix_millis(F.timestamp_micros(column))
    message = F.concat(
        F.lit(f"{source}: event time "),
        millis.cast("string"),
        F.lit(
            f" ms is outside the range flinkwin supports, [{-MAX_EVENT_TIME_MS}, "
            f"{MAX_EVENT_TIME_MS}] ms (about 126,000 years either side of 1970: Spark carries "
            "the watermark as a timestamp), in row "
        ),
        F.to_json(
            F.struct(*[quoted(c) for c in pipeline.input_schema.fieldNames()]),
            {"ignoreNullFields": "false"},
        ),
    )
    outside = (column < F.lit(low)) | (column > F.lit(high))
    return F.when(outside, F.raise_error(message)).otherwise(column)


def _with_watermark(
    staged: DataFrame, event_time: EventTime, out_of_orderness_ms: int, shift: int
) -> DataFrame:
    """``staged`` with Spark's watermark on the helper column ``ts + shift`` (delay ``D + 1``),
    and that column then nulled, keeping its watermark metadata (see the module docstring)."""
    per_ms = 1 if event_time.unit == "ms" else 1000
    shifted = quoted(event_time.column)
    if shift:
        shifted = shifted + F.lit(shift * per_ms)
    micros = shifted * F.lit(1000 // per_ms)
    delay = watermark_delay_ms(out_of_orderness_ms)
    staged = staged.withColumn(_WM, F.timestamp_micros(micros)).withWatermark(
        _WM, f"{delay} milliseconds"
    )
    # Spark's watermark mark on the column (EventTimeWatermark.delayKey), written out rather
    # than read back from the schema: a Spark Connect schema does not carry it
    metadata = {"spark.watermarkDelayMs": delay}
    nulls = staged.withColumn(_WM, F.lit(None).cast(TimestampType()))
    return nulls.withMetadata(_WM, metadata)


# ---------------------------------------------------------------------------- schemas
def main_schema(pipeline: WindowPipeline) -> StructType:
    """The declared output schema; else the input schema for reduce and the built-in
    aggregations, and pickled values (one ``value binary`` column) for the other functions."""
    if pipeline.output_schema is not None:
        schema = pipeline.output_schema
    else:
        spec = resolve_window_function(pipeline.function, pipeline.evictor is not None)
        if spec.reduce_fn is None or spec.window_fn is not None:
            schema = pickled_schema()  # PyFlink: no output type means pickled Python objects
        else:  # reduce keeps the elements' type: under a whole-value type, the values
            schema = value_schema(pipeline.input_schema) if pipeline.atomic_elements else (
                pipeline.input_schema
            )
    if pipeline.with_window:
        clash = [c for c in WINDOW_COLUMNS if c in schema.fieldNames()]
        if clash:
            raise PipelineError(f"with_window=True adds {clash}, which the output already has")
    if pipeline.with_firing:
        clash = [f.name for f in FIRING_COLUMNS if f.name in schema.fieldNames()]
        if clash:
            raise PipelineError(f"with_firing=True adds {clash}, which the output already has")
    return schema


def check_passable_names(names: Sequence[str]) -> None:
    """Raise on an input column whose name has a dot or a backtick: pyspark's
    ``applyInPandas``/``applyInPandasWithState`` pass columns to Python as ``df[name]``, which
    reads ``a.b`` as field ``b`` of a column ``a`` and fails with an unresolved column."""
    bad = [n for n in names if "." in n or "`" in n]
    if bad:
        example = bad[0].replace(".", "_").replace("`", "")
        raise PipelineError(
            f"input column name(s) {bad} contain '.' or '`': pyspark's stateful Python stage "
            "cannot pass such a column to Python (it reads 'a.b' as field 'b' of a column "
            f"'a'); rename it first, e.g. df.withColumnRenamed({bad[0]!r}, {example!r})"
        )


def check_unique_names(names: Sequence[str], what: str, case_sensitive: bool) -> None:
    """Raise if two columns of ``what`` share a name (ignoring case unless Spark's
    ``spark.sql.caseSensitive`` is set): outputs are built from names, so one of them would
    be lost or unreachable."""
    seen: dict[str, str] = {}
    duplicates = []
    for name in names:
        folded = name if case_sensitive else name.lower()
        if folded in seen:
            duplicates.append((seen[folded], name))
        seen.setdefault(folded, name)
    if duplicates:
        shown = ", ".join(a if a == b else f"{a}/{b}" for a, b in duplicates)
        case = "" if case_sensitive else " (Spark compares names ignoring case)"
        raise PipelineError(
            f"{what} has duplicate column names: {shown}{case}; rename them (e.g. with "
            "withColumnRenamed) so every column has its own name"
        )


def side_schema(pipeline: WindowPipeline, tag: OutputTag) -> StructType:
    """Late data and rows without a timestamp keep the input schema; other side outputs
    take the tag's type (PyFlink type information, a DDL string or a StructType); a tag
    without one carries its values pickled, as PyFlink's ``PICKLED_BYTE_ARRAY`` default."""
    if tag in (pipeline.late_tag, null_timestamp_tag(pipeline)):
        return pipeline.input_schema
    if tag.type_info is None:
        return pickled_schema()
    if isinstance(tag.type_info, (str, StructType, TypeInformation)):
        return parse_schema(tag.type_info, f"schema of {tag!r}")
    raise PipelineError(
        f"side output {tag!r}: its type must be PyFlink type information, a DDL string or a "
        f"StructType, got {tag.type_info!r}"
    )


def null_timestamp_tag(pipeline: WindowPipeline) -> OutputTag | None:
    """The side output for rows whose timestamp is null, if the watermark strategy routes
    them (``WatermarkStrategy.withNullTimestamps``)."""
    strategy = pipeline.watermark
    return None if strategy is None else strategy.null_timestamp_tag


def _nullable(
    schema: StructType, prefix: str, casts: dict[str, DataType]
) -> tuple[StructType, list[tuple[str, str]]]:
    """The stage's output fields for ``schema`` (all nullable, floats inside nested values as
    text: see flinkwin.spark.timestamps) and the (internal, public) names; ``casts`` gets the
    declared type of each field that leaves the stage as text."""
    fields = []
    for i, f in enumerate(schema.fields):
        shipped = text_floats(f.dataType)
        if shipped != f.dataType:
            casts[f"{prefix}{i}"] = f.dataType
        fields.append(StructField(f"{prefix}{i}", shipped, True, f.metadata))
    return StructType(fields), [(f"{prefix}{i}", f.name) for i, f in enumerate(schema.fields)]


# --------------------------------------------------------------------------- compiler
def compile_pipeline(pipeline: WindowPipeline, side_tags: Sequence[OutputTag]) -> CompiledStage:
    """Build the stateful stage producing the main output and ``side_tags``."""
    df = pipeline.df
    reserved = [
        c for c in df.columns if c.startswith("_fw_") and c != RECORD_TIMESTAMP_COLUMN
    ]
    if reserved:
        raise PipelineError(f"column names starting with '_fw_' are reserved: {reserved}")
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
    staged = df
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

    grouped = staged.groupBy(_KG)
    if streaming:
        watch_stops(df.sparkSession)  # the workers close a query run's functions when it ends
        combined = grouped.applyInPandasWithState(
            stream_function(runtime), output_schema, STATE_SCHEMA, "append", _TIMEOUTS[domain]
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


def _spark_watermark(
    pipeline: WindowPipeline, strategy: WatermarkStrategy, streaming: bool
) -> str:
    """How Spark carries the watermark, for the summary."""
    delay = watermark_delay_ms(strategy.out_of_orderness_ms)
    if not streaming:
        return ""
    if pipeline.times_before_1970:
        return (
            f" (times_before_1970: Spark's watermark is it plus {WATERMARK_SHIFT_MS} ms, on "
            f"ts + {WATERMARK_SHIFT_MS} ms with delay {delay} ms)"
        )
    return (
        f" (Spark's watermark is it: on ts with delay {delay} ms; an element at or before 1970 "
        "fails while it is not past the epoch, see times_before_1970)"
    )


def _describe_event_time(event_time: EventTime) -> str:
    shipped = {
        "ms": f"{event_time.column} (epoch ms)",
        "us": f"{event_time.column} (epoch us)",
    }[event_time.unit]
    if event_time.rebuilt is not None:
        return f"shipped as {shipped}; {event_time.rebuilt!r} rebuilt in the workers"
    return f"shipped as {shipped}"


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


__all__ = [
    "WATERMARK_SHIFT_MS",
    "CompiledStage",
    "PipelineError",
    "WindowPipeline",
    "compile_pipeline",
    "main_schema",
    "timer_domain",
    "watermark_delay_ms",
]
