"""A window stage as the fluent API describes it (:class:`WindowPipeline`), what follows from
that description alone (its timer domain, key groups, overflow policy and output schemas), and
the compiled stage with its outputs (:class:`CompiledStage`); :mod:`flinkwin.spark.compiler`
turns the one into the other.

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
from pyspark.sql.types import BooleanType, DataType, LongType, StringType, StructField, StructType

from flinkwin.assigners.base import WindowAssigner, default_trigger
from flinkwin.assigners.count import CountSlidingWindowAssigner, CountTumblingWindowAssigner
from flinkwin.assigners.global_windows import GlobalWindows
from flinkwin.functions.internal import resolve_window_function
from flinkwin.longs import ERROR, WRAP
from flinkwin.output_tag import OutputTag
from flinkwin.runtime_mode import RuntimeExecutionMode
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
from flinkwin.types import TypeInformation, is_atomic_type
from flinkwin.watermark import WatermarkStrategy

from .elements import KEY_COLUMN, RECORD_TIMESTAMP_COLUMN
from .key_groups import failing_on_null, key_group_labels, label_of
from .outputs import TAG_COLUMN
from .parallelism import requested_parallelism
from .runtime import EVENT_TIME, NO_TIMERS, PROCESSING_TIME
from .schema import parse_schema, pickled_schema, value_schema
from .timestamps import quoted, sql_name, text_floats

WINDOW_COLUMNS = ("window_start", "window_end")


#: the columns ``with_firing=True`` appends (docs/firings.md)
FIRING_COLUMNS = (
    StructField("firing_timing", StringType(), True),
    StructField("firing_index", LongType(), True),
    StructField("firing_is_last", BooleanType(), True),
)


_EVENT_TRIGGERS = (EventTimeTrigger, ContinuousEventTimeTrigger, EndOfStreamTrigger)


_PROCESSING_TRIGGERS = (ProcessingTimeTrigger, ContinuousProcessingTimeTrigger)


_TIMERLESS_TRIGGERS = (CountTrigger, NeverTrigger, DeltaTrigger)


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
    #: the max parallelism the program declared (None: the key groups are flinkwin's default)
    max_parallelism: int | None = None
    key_type: Any = None
    runtime_mode: RuntimeExecutionMode = RuntimeExecutionMode.STREAMING
    #: the input stream's PyFlink type information (``Types.TUPLE``: elements are tuples)
    element_type: Any = None
    #: the stateful stage's tasks (``set_parallelism``; None: see flinkwin.spark.parallelism)
    parallelism: int | None = None
    #: the environment's parallelism when the window was built (``env.set_parallelism``)
    default_parallelism: int | None = None
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
    def requested_parallelism(self) -> int | None:
        """The stage's tasks asked for: its own, else the environment's capped by the key
        groups (None: flinkwin chooses; see flinkwin.spark.parallelism)."""
        return requested_parallelism(self.parallelism, self.default_parallelism, self.key_groups)

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


__all__ = [
    "CompiledStage",
    "PipelineError",
    "WindowPipeline",
    "key_group_column",
    "main_schema",
    "side_schema",
    "timer_domain",
]
