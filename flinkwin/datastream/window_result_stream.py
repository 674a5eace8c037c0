"""``WindowResultStream``: the output of a window function (Flink's
``SingleOutputStreamOperator``): its DataFrame, side outputs, metrics, ``explain()`` and
``start()``/``writeStream``."""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Mapping
from typing import Any

from pyspark.sql import DataFrame, Observation
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType

from flinkwin.assigners.stagger import fix_stagger
from flinkwin.datastream.data_stream import DataStream
from flinkwin.datastream.side_output_stream import SideOutputStream
from flinkwin.output_tag import OutputTag, request_side_output
from flinkwin.spark import restart
from flinkwin.spark.checkpoint import CheckpointStore
from flinkwin.spark.compiler import compile_pipeline
from flinkwin.spark.graph import StreamPlan
from flinkwin.spark.graph_nodes import window_node
from flinkwin.spark.input_stage import InputStage, input_stage
from flinkwin.spark.parallelism import (
    check_max_parallelism,
    describe_parallelism,
    stage_parallelism,
)
from flinkwin.spark.pipeline import CompiledStage, WindowPipeline, main_schema, null_timestamp_tag
from flinkwin.spark.runtime import PROCESSING_TIME
from flinkwin.spark.schema import is_pickled
from flinkwin.spark.sinks import start_query
from flinkwin.spark.sizing import StageSize
from flinkwin.spark.writer import WindowDataStreamWriter
from flinkwin.types import TypeInformation, Types, is_pickled_type


class WindowResultStream(DataStream):
    """The output of a window function (Flink's ``SingleOutputStreamOperator``)."""

    _from_user = False  # a stream over its own stage

    def __init__(self, pipeline: WindowPipeline, type_info: TypeInformation | None = None) -> None:
        # A staggered assigner's offset is drawn once, here: every task and batch unpickles it
        assigner = fix_stagger(pipeline.assigner, int(time.time() * 1000))
        if assigner is not pipeline.assigner:
            pipeline = dataclasses.replace(pipeline, assigner=assigner)
        self._pipeline = pipeline
        self._declared = type_info
        self._stages: dict[tuple[OutputTag, ...], CompiledStage] = {}
        self._input: InputStage | None = None  # shared by the stages of all outputs
        self._requested_sides: dict[str, Any] = {}  # tag id -> type (getSideOutput)
        # outputs without a declared type are pickled values (flinkwin's own schema decides,
        # never the DataFrame's metadata)
        pickled = is_pickled(main_schema(pipeline))
        super().__init__(
            self._stage([]).main_timed(),
            key_groups=pipeline.key_groups,
            runtime_mode=pipeline.runtime_mode,
            type_info=None if pickled else type_info,
            times_before_1970=pipeline.times_before_1970,
        )
        self._max_parallelism = pipeline.max_parallelism
        if pickled:
            self._df, self._type_info = self._stage([]).main_timed(), Types.PICKLED_BYTE_ARRAY()

    @property
    def _plan(self) -> Any:
        """This window as the first operator of a graph: a window, join or process after it
        joins the same stage, where it receives this window's results in the order Flink's
        operator emits them, before the watermark that fired them."""
        source = self.__dict__.get("_source")
        if source is None:
            pipeline = self._pipeline
            source = self.__dict__["_source"] = DataStream._own(
                pipeline.df, pipeline.element_type, key_groups=pipeline.key_groups,
                watermark_strategy=pipeline.watermark, runtime_mode=pipeline.runtime_mode,
                times_before_1970=pipeline.times_before_1970,
            )
            source._max_parallelism = pipeline.max_parallelism
        self._check_parallelism()
        built = self.__dict__.get("_built_plan")
        if built is None or built[0] is not self._pipeline or built[1] is not self._declared:
            # one plan per configuration: the streams taken from this window (its result, its
            # side outputs) share its node (flinkwin.spark.graph.combine)
            plan = StreamPlan.of_source(source)
            plan = plan.with_node(window_node(self._pipeline, plan, self._declared))
            built = self.__dict__["_built_plan"] = (self._pipeline, self._declared, plan)
        return built[2]

    def _stage(self, side_tags: list[OutputTag]) -> CompiledStage:
        key = tuple(side_tags)
        if key not in self._stages:
            if self._input is None:
                self._input = input_stage(self._pipeline)
            self._stages[key] = compile_pipeline(self._pipeline, side_tags, self._input)
        return self._stages[key]

    def _wakes_keys_in_processing_time(self) -> bool:
        return self._stage([]).timer_domain == PROCESSING_TIME

    def getSideOutput(self, output_tag: OutputTag) -> DataStream:  # noqa: N802
        """The side output ``output_tag`` as a stream, usable directly as a DataFrame (or take
        ``.toDF()``): late data
        has the input's columns; other tags declare a schema (``OutputTag("x", "a string")``).
        Starting a query on it runs the window stage again, separately from the main output's
        query; use ``start(side_outputs=...)`` to compute both in one query. An operator, union
        or step after it joins this window's graph, which runs the window once for it and for
        every other stream taken from the window (see flinkwin.datastream.side_output_stream)."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"getSideOutput takes an OutputTag, got {output_tag!r}")
        request_side_output(self._requested_sides, output_tag)
        stage = self._stage([output_tag])
        tag_type = output_tag.type_info
        if output_tag in (self._pipeline.late_tag, null_timestamp_tag(self._pipeline)):
            type_info = self._pipeline.element_type  # the input's elements, as they came
        elif tag_type is None or is_pickled_type(tag_type):
            type_info = Types.PICKLED_BYTE_ARRAY()  # the values the functions emitted
        else:
            type_info = tag_type if isinstance(tag_type, TypeInformation) else None
        side = SideOutputStream._own(
            stage.side(output_tag),
            type_info,
            key_groups=self._pipeline.key_groups,
            runtime_mode=self._pipeline.runtime_mode,
        )
        side._origin = f"the side output {output_tag!r}"
        side._max_parallelism = self._max_parallelism
        side._sizing = StageSize(
            self._pipeline.key_groups, self._pipeline.requested_parallelism,
            check=functools.partial(self._check_restart, side_tags=[output_tag]),
        )
        side._from_processing_time_stage = stage.timer_domain == PROCESSING_TIME
        side._side_plan = lambda: self._plan.with_side_head(output_tag)
        return side

    def _running(self) -> None:
        self._check_parallelism()

    def _elements_df(self) -> DataFrame:
        self._check_parallelism()  # a downstream operator reads them: the stage will run
        return super()._elements_df()

    def _check_parallelism(self) -> None:
        """Flink's check at submission (:func:`check_max_parallelism`), made when the stage
        runs or feeds another operator: the setters may come in any order."""
        pipeline = self._pipeline
        name = self._hints.get("name") or (
            f"Window({pipeline.assigner!r}, {pipeline.effective_trigger!r}, "
            f"{pipeline.function_name})"
        )
        own = pipeline.parallelism
        check_max_parallelism(name, pipeline.default_parallelism if own is None else own,
                              pipeline.max_parallelism)

    def _stage_size(self) -> StageSize:
        pipeline = self._pipeline
        return StageSize(pipeline.key_groups, pipeline.requested_parallelism,
                         check=self._check_restart)

    def metrics(self) -> dict[str, int]:
        """The window stage's metrics on a static input (see ``docs/metrics.md``): those of
        the first action that computed it (``toDF().collect()``, ``start(...)``...). A
        streaming stage publishes them per micro-batch in ``query.lastProgress``."""
        observations = [s.observation for s in self._stages.values()]
        if not observations or observations[0] is None:
            raise ValueError(
                "metrics() is for a static input; a streaming query publishes the window "
                "stage's metrics per micro-batch: query.lastProgress['observedMetrics']"
                "['flinkwin']"
            )
        for observation in reversed([o for o in observations if o is not None]):
            if _observed(observation):
                return dict(observation.get)
        raise RuntimeError(
            "no action has computed this window result yet: the metrics come with the first "
            "action (e.g. toDF().collect() or start(...))"
        )

    def setParallelism(self, parallelism: int) -> WindowResultStream:  # noqa: N802
        """Run the window stage in ``parallelism`` Spark tasks (its state partitions), Flink's
        operator parallelism; default: the environment's ``set_parallelism``, else Spark's
        default parallelism, capped by the key groups (:mod:`flinkwin.spark.parallelism`).
        Fixed at the query's first start. Sets it on this stream and returns it, as Flink's
        builder does."""
        stage_parallelism(None, self._pipeline.key_groups, parallelism)  # validates
        hints = self._hints
        WindowResultStream.__init__(
            self, dataclasses.replace(self._pipeline, parallelism=parallelism), self._type_info
        )
        self._hints = {**hints, "parallelism": parallelism}
        return self

    def force_non_parallel(self) -> WindowResultStream:
        """Run the window stage in one task (``setParallelism(1)``)."""
        return self.setParallelism(1)

    def setMaxParallelism(self, max_parallelism: int) -> WindowResultStream:  # noqa: N802
        """Use ``max_parallelism`` key groups for this window stage (Flink's max parallelism);
        sets it on this stream and returns it, as Flink's builder does."""
        if not isinstance(max_parallelism, int) or isinstance(max_parallelism, bool) or (
            max_parallelism < 1
        ):
            raise ValueError(f"max parallelism must be a positive int, got {max_parallelism!r}")
        hints = self._hints
        pipeline = dataclasses.replace(
            self._pipeline, key_groups=max_parallelism, max_parallelism=max_parallelism
        )
        WindowResultStream.__init__(self, pipeline, self._type_info)
        self._hints = {**hints, "max_parallelism": max_parallelism}
        return self

    def explain(self, mode: str | None = None) -> None:
        """Print flinkwin's choices for the window stage, then Spark's plan
        (``mode`` as in ``DataFrame.explain``)."""
        routed = (self._pipeline.late_tag, null_timestamp_tag(self._pipeline))
        tags = list(dict.fromkeys(t for t in routed if t is not None))
        stage = self._stage(tags)
        print("== flinkwin window stage ==")
        summary: dict[str, Any] = {
            k: self._hints[k] for k in ("name", "uid", "description") if k in self._hints
        }
        pipeline = self._pipeline
        parallelism = describe_parallelism(
            pipeline.parallelism, pipeline.default_parallelism, pipeline.key_groups
        )
        if parallelism is not None:
            summary["parallelism"] = parallelism
        summary.update(stage.summary)
        width = max(len(k) for k in summary)
        for key, value in summary.items():
            print(f"{key.ljust(width)} : {value}")
        stage.combined.explain(mode)

    def start(
        self,
        main: Any = None,
        side_outputs: Mapping[OutputTag, Any] | None = None,
        *,
        checkpoint_location: str | None = None,
        trigger: Mapping[str, Any] | None = None,
        output_mode: str = "append",
        query_name: str | None = None,
        **options: Any,
    ) -> StreamingQuery | None:
        """Run the pipeline as ONE streaming query writing the main output to ``main`` and each
        side output to its sink (see :func:`flinkwin.spark.sinks.as_sink` for what a sink can
        be). ``trigger`` is passed to ``DataStreamWriter.trigger`` (e.g.
        ``{"processingTime": "10 seconds"}`` or ``{"availableNow": True}``); extra keyword
        options go to ``DataStreamWriter.option``. Returns the ``StreamingQuery``; on a static
        input, writes the final results once and returns None.

        With a checkpoint (``checkpoint_location``, option ``checkpointLocation``, or Spark's
        ``spark.sql.streaming.checkpointLocation`` plus ``query_name``), the pipeline is
        recorded in it on the first start and checked on every restart: an incompatible change
        raises :class:`flinkwin.spark.restart.IncompatibleRestartError` naming it (see
        ``docs/operations.md``)."""
        self._running()
        side_outputs = dict(side_outputs or {})
        stage = self._stage(list(side_outputs))
        if trigger and trigger.get("availableNow") and stage.timer_domain == PROCESSING_TIME:
            raise ValueError(
                "a processing-time window stage never finishes under availableNow (Spark keeps "
                "running batches to check processing-time timeouts): use a processingTime "
                "trigger and stop the query yourself"
            )
        from_options = options.pop("checkpointLocation", None)
        if from_options is not None:
            if checkpoint_location is not None and checkpoint_location != from_options:
                raise ValueError(
                    f"two checkpoint locations: {checkpoint_location!r} and option "
                    f"checkpointLocation={from_options!r}"
                )
            checkpoint_location = str(from_options)
        if stage.combined.isStreaming:
            stage = self._restartable(stage, checkpoint_location, query_name, list(side_outputs))
        return start_query(
            stage,
            main,
            side_outputs,
            checkpoint_location=checkpoint_location,
            trigger=trigger,
            output_mode=output_mode,
            query_name=query_name,
            options=options,
        )

    def _restartable(
        self,
        stage: CompiledStage,
        checkpoint_location: str | None,
        query_name: str | None,
        side_tags: list[OutputTag],
    ) -> CompiledStage:
        """Record the pipeline in its checkpoint, or check it against the recorded one (see
        :mod:`flinkwin.spark.restart`); the stage to run, with the recorded stagger offset."""
        session = stage.combined.sparkSession
        location = restart.checkpoint_location(session, checkpoint_location, query_name)
        if location is None:
            return stage
        store = CheckpointStore(session, location)
        pipeline = restart.prepare_restart(store, self._pipeline, stage)
        return stage if pipeline is self._pipeline else compile_pipeline(pipeline, side_tags)

    def _check_restart(
        self, location: str | None, side_tags: list[OutputTag] | None = None
    ) -> None:
        """``start()``'s checks of the checkpoint at ``location`` for a query the user starts
        from ``toDF()`` (of this result or of its side output ``side_tags``), whose plan is
        already built: a recorded stagger offset other than this result's fails too
        (``start()`` would run with the recorded one)."""
        if location is None:
            return
        stage = self._stage(side_tags or [])
        store = CheckpointStore(stage.combined.sparkSession, location)
        if restart.prepare_restart(store, self._pipeline, stage) is not self._pipeline:
            raise restart.IncompatibleRestartError(location, [
                "stagger_offset: the checkpoint's windows are staggered by another offset than "
                "this toDF()'s; start the query with result.start(...) or result.writeStream, "
                "which reuse the checkpoint's offset"
            ])

    @property
    def writeStream(self) -> WindowDataStreamWriter:  # noqa: N802
        """Spark's ``DataStreamWriter`` interface for this result: ``format``, ``option``,
        ``outputMode``, ``trigger``, ``queryName``, ``partitionBy``, ``foreachBatch``,
        ``start(path)``, ``toTable(name)``, plus ``sideOutput(tag, sink)``. Runs ONE streaming
        query for the main output and every side output (see
        :class:`flinkwin.spark.writer.WindowDataStreamWriter`)."""
        self._running()
        if not self._public_df().isStreaming:
            raise ValueError(
                "'writeStream' can be called only on a streaming input, as for a DataFrame: "
                "this result is computed from a static DataFrame (use start() to write its "
                "outputs once, or toDF().write)"
            )
        return WindowDataStreamWriter(self)

    @property
    def output_schema(self) -> StructType:
        """The main output's Spark schema."""
        return self._public_df().schema

    get_side_output = getSideOutput
    set_max_parallelism = setMaxParallelism
    set_parallelism = setParallelism


def _observed(observation: Observation) -> bool:
    """True once an action has filled ``observation`` (its ``get`` would block before)."""
    jo = getattr(observation, "_jo", None)
    if jo is None:  # Spark Connect: get raises until the metrics arrive
        try:
            observation.get  # noqa: B018
        except Exception:  # noqa: BLE001
            return False
        return True
    return bool(jo.future().isCompleted())


__all__ = ["WindowResultStream"]
