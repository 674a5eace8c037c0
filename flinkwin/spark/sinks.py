"""The one streaming query that feeds every output's sink.

``start_query`` runs the stateful stage once per micro-batch (``foreachBatch`` over the
persisted batch; a lone single-pass sink gets the batch directly) and hands each output's rows
to its sink: the main output and every side output (late data...) can go to a different place.
The sinks themselves live in :mod:`flinkwin.sinks` (re-exported here).

Spark re-runs a batch interrupted by a failure with the same ``batch_id`` and the same rows;
the sinks that skip a batch id they already committed (:class:`~flinkwin.sinks.DeltaSink`,
:class:`~flinkwin.sinks.FileSink`) make the whole query exactly-once; the main output of a window
stage tells its sink what it is (:class:`~flinkwin.sinks.WindowOutput`, for
:class:`~flinkwin.sinks.DeltaUpsertSink`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType

from flinkwin.assigners.base import MergingWindowAssigner
from flinkwin.errors import pickled_elements_error
from flinkwin.output_tag import OutputTag
from flinkwin.sinks import (
    ConsoleSink,
    DeltaSink,
    DeltaUpsertSink,
    FileSink,
    ForeachBatchSink,
    MemorySink,
    Sink,
    SinkContext,
    WindowOutput,
    as_sink,
)
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
)

from .file_source_log import before_start
from .parallelism import stage_parallelism
from .queries import settle_on_available_input
from .restart import checkpoint_location as resolved_checkpoint
from .runtime import PROCESSING_TIME
from .schema import is_pickled
from .sizing import state_partitions, state_store

if TYPE_CHECKING:
    from .pipeline import CompiledStage


def _side_of(stage: CompiledStage, tag: OutputTag, df: DataFrame) -> DataFrame:
    return stage.side(tag, df)


def start_query(
    stage: CompiledStage,
    main: Any,
    side_outputs: Mapping[OutputTag, Any],
    *,
    checkpoint_location: str | None,
    trigger: Mapping[str, Any] | None,
    output_mode: str,
    query_name: str | None,
    options: Mapping[str, Any],
) -> StreamingQuery | None:
    """Launch one streaming query writing every output to its sink (see module docstring).
    On a static stage the outputs are written once, synchronously, and None is returned."""
    if output_mode != "append":
        raise ValueError(
            f"output_mode={output_mode!r}: window results are final once emitted, so only "
            "'append' is supported"
        )
    outputs: list[tuple[str, Any, StructType, Callable[[DataFrame], DataFrame]]] = []
    if main is not None:
        outputs.append(("main", main, stage.main().schema, stage.main))
    for tag, value in side_outputs.items():
        side: Callable[[DataFrame], DataFrame] = functools.partial(_side_of, stage, tag)
        outputs.append((tag.tag_id, value, stage.side(tag).schema, side))
    if not outputs:
        raise ValueError("start() needs at least one sink (main=... or side_outputs={...})")
    for label, _, schema, _ in outputs:
        if is_pickled(schema):  # flinkwin's own schema: values a function emitted untyped
            origin = "the main output's function" if label == "main" else (
                f"the side output {label!r}"
            )
            raise pickled_elements_error(
                f"start(): the {label} output", origin, stage.pickled_fixes.get(label)
            )
    sinks = [as_sink(value) for _, value, _, _ in outputs]
    for i, sink in enumerate(sinks):
        if any(sink is other for other in sinks[:i]):
            raise ValueError(f"{sink!r} is given for two outputs: each output needs its own sink")
    session = stage.combined.sparkSession
    targets: list[tuple[Sink, Callable[[DataFrame], DataFrame]]] = []
    for (label, _, schema, project), sink in zip(outputs, sinks):
        window = window_output(stage) if label == "main" else None
        sink.open(SinkContext(session, schema, label, checkpoint_location, window))
        targets.append((sink, project))

    direct = len(targets) == 1 and targets[0][0].single_pass

    def dispatch(batch: DataFrame, batch_id: int) -> None:
        if direct:
            sink, project = targets[0]
            sink.write_batch(project(batch), batch_id)
            return
        # Materialize every partition once: the stateful stage runs (and commits its state
        # stores) exactly once per batch however many sinks read it, and whatever they do.
        data = batch.persist()
        try:
            data.count()
            for sink, project in targets:
                sink.write_batch(project(data), batch_id)
        finally:
            data.unpersist()

    if not stage.combined.isStreaming:
        dispatch(stage.combined, 0)
        return None
    writer = stage.combined.writeStream.foreachBatch(dispatch).outputMode("append")
    if checkpoint_location is not None:
        writer = writer.option("checkpointLocation", checkpoint_location)
    if trigger:
        writer = writer.trigger(**trigger)
    if query_name is not None:
        writer = writer.queryName(query_name)
    for key, value in options.items():
        writer = writer.option(key, value)
    before_start(session, resolved_checkpoint(session, checkpoint_location, query_name))
    pipeline = stage.pipeline
    with state_partitions(
        session, stage_parallelism(session, pipeline.key_groups, pipeline.requested_parallelism)
    ), state_store(session, getattr(pipeline, "distributed", False)):
        query = writer.start()
    if stage.timer_domain == PROCESSING_TIME:  # Spark runs a batch on every trigger
        return settle_on_available_input(query)
    return query


#: flinkwin's triggers that never purge (FIRE only)
_REPLACING_TRIGGERS = (
    ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, CountTrigger, DeltaTrigger,
    EndOfStreamTrigger, EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger,
)


def window_output(stage: CompiledStage) -> WindowOutput | None:
    """What ``stage``'s main output is, when it is a window's result (else None)."""
    from .pipeline import WindowPipeline

    pipeline = stage.pipeline
    if not isinstance(pipeline, WindowPipeline):
        return None
    keys = tuple(pipeline.key_columns) if pipeline.key_columns is not None else (
        None if pipeline.keyed else ()
    )
    assigner = pipeline.assigner
    trigger = pipeline.effective_trigger
    return WindowOutput(
        keys, pipeline.with_window, pipeline.with_firing, repr(trigger),
        _purges_early(trigger, pipeline.allowed_lateness_ms, assigner.is_event_time()),
        repr(assigner) if isinstance(assigner, MergingWindowAssigner) else None,
    )


def _purges_early(trigger: Any, allowed_lateness_ms: int, event_time: bool) -> bool | None:
    """Whether ``trigger`` can purge a window before its last firing (None: cannot tell)."""
    if isinstance(trigger, PurgingTrigger):
        inner = trigger.nested_trigger
        # each of these fires a window once: at its end, late elements being dropped
        once = (isinstance(inner, EventTimeTrigger) and event_time and allowed_lateness_ms == 0
                ) or (isinstance(inner, ProcessingTimeTrigger) and not event_time)
        return not once
    return False if type(trigger) in _REPLACING_TRIGGERS else None


__all__ = [
    "ConsoleSink",
    "DeltaSink",
    "DeltaUpsertSink",
    "FileSink",
    "ForeachBatchSink",
    "MemorySink",
    "Sink",
    "SinkContext",
    "as_sink",
    "start_query",
    "window_output",
]
