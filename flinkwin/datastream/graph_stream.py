"""``GraphResultStream``: a stream computed by a stream graph (``union``, window joins,
interval joins, ``process``, windows over windows' results), run as ONE stateful stage.

It is used as every flinkwin result is: as a DataFrame (``toDF()``), with ``print()``,
``add_sink()``, ``execute_and_collect()``, ``getSideOutput(tag)``, ``start(...)``,
``writeStream`` and ``explain()``; and as the input of more operators, which join its graph
(see :mod:`flinkwin.spark.graph`).
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType

from flinkwin.datastream.data_stream import DataStream
from flinkwin.datastream.side_output_stream import SideOutputStream
from flinkwin.datastream.stream_execution_environment import default_parallelism
from flinkwin.operator.graph_chain import PARALLELISM_ONE_ONLY
from flinkwin.output_tag import OutputTag, request_side_output
from flinkwin.spark import restart
from flinkwin.spark.checkpoint import CheckpointStore
from flinkwin.spark.graph import StreamPlan
from flinkwin.spark.graph_compiler import compile_graph
from flinkwin.spark.graph_restart import prepare_graph_restart
from flinkwin.spark.parallelism import check_max_parallelism, stage_parallelism
from flinkwin.spark.pipeline import CompiledStage, PipelineError
from flinkwin.spark.runtime import PROCESSING_TIME
from flinkwin.spark.sinks import start_query
from flinkwin.spark.sizing import StageSize
from flinkwin.spark.writer import WindowDataStreamWriter
from flinkwin.types import TypeInformation, Types, is_pickled_type


class OneTaskGraphWarning(UserWarning):
    """The environment's ``set_parallelism(n > 1)`` asks for a distributed graph, and a rule
    keeps this one in one task (the reason is in the message and in ``explain()``). Importable
    as ``flinkwin.OneTaskGraphWarning``, e.g. to make it an error with
    ``warnings.filterwarnings("error", category=flinkwin.OneTaskGraphWarning)``."""


class RestartedWatermarksWarning(UserWarning):
    """A graph of several sources running in several key groups on Spark's watermark (a
    source's watermark computed before a ``map``/``filter`` or carried from an earlier stage)
    restarts from a checkpoint: Spark restores only its query's one watermark, not each
    source's greatest event time, so until every source passes the restored watermark its
    operators' watermark lags behind Flink's and an element Flink finds late may be taken as
    on time (a known difference, docs/spark-semantics.md). Importable as
    ``flinkwin.RestartedWatermarksWarning``; make it an error with
    ``warnings.filterwarnings("error", category=...)``."""


class GraphResultStream(DataStream):
    """The head of a stream graph as a stream (see module docstring)."""

    _from_user = False  # a stream over its own stage

    def __init__(self, plan: StreamPlan) -> None:
        self._plan_value = plan
        # the environment's parallelism when the graph's head operator is built, as a Flink
        # transformation takes it when it is created
        self._default_parallelism = default_parallelism()
        self._warned_one_task = False
        self._requested_sides: dict[str, Any] = {}  # tag id -> type (getSideOutput)
        self._stages: dict[tuple[tuple[OutputTag, ...], bool], CompiledStage] = {}
        first = plan.sources[0]
        head = plan.head_type
        type_info = head.type_info
        if head.pickled:
            type_info = Types.PICKLED_BYTE_ARRAY()
        super().__init__(
            self._stage([]).main_timed(),
            key_groups=self._stage([]).pipeline.key_groups,
            runtime_mode=first._runtime_mode,
            type_info=None if head.pickled else type_info,
            times_before_1970=first._times_before_1970,
        )
        self._df, self._type_info = self._stage([]).main_timed(), type_info
        self._max_parallelism = first._max_parallelism
        if plan.head[0] == "node":
            self._origin = plan.nodes[plan.head[1]].spec.name

    @property
    def _plan(self) -> StreamPlan:
        return self._plan_value

    def _stage(self, side_tags: list[OutputTag], query: bool = False) -> CompiledStage:
        """The stage writing ``side_tags`` too: a query's (``query``: a tag no operator
        declares is what any operator's function sends under it) or ``getSideOutput``'s
        (this operator's own)."""
        key = (tuple(side_tags), query and bool(side_tags))
        if key not in self._stages:
            first = self._plan_value.sources[0]
            self._stages[key] = compile_graph(
                self._plan_value, side_tags, first._runtime_mode,
                getattr(self, "_parallelism", None), getattr(self, "_one_task", None),
                self._default_parallelism, any_function_sides=query,
            )
        return self._stages[key]

    def _wakes_keys_in_processing_time(self) -> bool:
        return self._stage([]).timer_domain == PROCESSING_TIME

    def getSideOutput(self, output_tag: OutputTag) -> DataStream:  # noqa: N802
        """The side output ``output_tag`` of this stream's operator (late data, or what its
        function sent with ``ctx.output``/``yield tag, value``); starting a query on it runs
        the graph again: use ``start(side_outputs=...)`` to write both in one query. An
        operator, union or step after it joins this graph (the operator runs once for every
        stream taken from it, see flinkwin.datastream.side_output_stream)."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"getSideOutput takes an OutputTag, got {output_tag!r}")
        ref, head = self._plan_value.side_ref(output_tag), self._plan_value.head
        if head[0] == "node" and ref[1] != head[1]:
            # Flink's getSideOutput is the side output of this operator alone
            raise PipelineError(
                f"getSideOutput({output_tag!r}): that tag is the side output of an earlier "
                f"operator ({self._plan_value.nodes[ref[1]].spec.name}), not of this stream's "
                f"({self._plan_value.nodes[head[1]].spec.name}); in Flink this stream's side "
                "output of that tag would be another stream (empty unless this operator's "
                "function emits it). Call getSideOutput on that operator's result, or write it "
                "in the same query with start(side_outputs={tag: sink}) on this stream; give "
                "this operator's own side output another tag"
            )
        request_side_output(self._requested_sides, output_tag)
        side_type = self._plan_value.side_type(output_tag)
        stage = self._stage([output_tag])
        type_info = side_type.type_info
        if side_type.pickled:
            type_info = Types.PICKLED_BYTE_ARRAY()
        elif not isinstance(type_info, TypeInformation) or is_pickled_type(type_info):
            type_info = None
        side = SideOutputStream._own(stage.side(output_tag), type_info,
                               key_groups=self._key_groups, runtime_mode=self._runtime_mode)
        side._origin = f"the side output {output_tag!r}"
        side._max_parallelism = self._max_parallelism
        self._running()  # a side output is taken to be run
        side._sizing = self._stage_size()
        side._from_processing_time_stage = stage.timer_domain == PROCESSING_TIME
        side._pickled_fix = side_type.fix
        side._side_plan = functools.partial(self._plan_value.with_side_head, output_tag)
        return side

    def _stage_size(self) -> StageSize:
        pipeline: Any = self._stage([]).pipeline
        return StageSize(pipeline.key_groups, pipeline.requested_parallelism,
                         check=self._check_restart, rocksdb=pipeline.distributed)

    def _running(self) -> None:
        self._check_parallelism()
        self._warn_one_task(self._stage([]))

    def _elements_df(self) -> DataFrame:
        self._check_parallelism()  # a downstream operator reads them: the graph will run
        return super()._elements_df()

    def _check_parallelism(self) -> None:
        """Flink's check at submission (:func:`check_max_parallelism`) of the graph's
        parallelism (its own, else the environment's when it runs distributed) against the
        max parallelism declared on this result, else on its first source or the
        environment, made when the graph runs or feeds another operator."""
        stage = self._stage([])
        parallelism = getattr(self, "_parallelism", None)
        if parallelism is None and stage.pipeline.key_groups > 1:
            parallelism = self._default_parallelism
        check_max_parallelism(
            self._hints.get("name") or str(stage.summary.get("operators", "Graph")),
            parallelism, self._hints.get("max_parallelism", self._max_parallelism),
        )

    def _warn_one_task(self, stage: CompiledStage) -> None:
        """Warn once when the environment's parallelism > 1 asked for a distributed graph and a
        rule keeps it in one task. An environment's default never fails a program (the graph
        was not asked for specifically: its result's ``set_parallelism(n > 1)`` is refused)."""
        default = self._default_parallelism
        if self._warned_one_task or getattr(self, "_parallelism", None) is not None or (
            default is None or default == 1 or stage.pipeline.key_groups > 1
        ):
            return
        self._warned_one_task = True
        reason = str(stage.summary.get("distributed", "")).removeprefix("no: ")
        warnings.warn(
            f"flinkwin: the environment's parallelism is {default}, but this stream graph "
            f"({stage.summary.get('operators')}) runs in one task: {reason} (explain() shows "
            "it; see docs/architecture.md#distributed-graphs-every-keyed-operator-in-its-own-"
            "key-groups)",
            OneTaskGraphWarning,
            stacklevel=_caller_outside_flinkwin(),
        )

    def explain(self, mode: str | None = None) -> None:
        """Print flinkwin's plan of the graph's stage, then Spark's."""
        stage = self._stage([])
        print("== flinkwin graph stage ==")
        width = max(len(k) for k in stage.summary)
        for key, value in stage.summary.items():
            print(f"{key.ljust(width)} : {value}")
        stage.combined.explain(mode)

    def metrics(self) -> dict[str, int]:
        """The stage's metrics on a static input, after an action (see ``docs/metrics.md``)."""
        for stage in self._stages.values():
            if stage.observation is None:
                raise ValueError("metrics() is for a static input; a streaming query "
                                 "publishes them in query.lastProgress['observedMetrics']")
            try:
                return dict(stage.observation.get)
            except Exception:  # noqa: BLE001,S112 (not computed yet: try the next stage)
                continue
        raise RuntimeError("no action has computed this result yet")

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
        """Run the graph as ONE query writing the main output to ``main`` and each side output
        to its sink, as
        :meth:`flinkwin.datastream.window_result_stream.WindowResultStream.start`."""
        side_outputs = dict(side_outputs or {})
        stage = self._stage(list(side_outputs), query=True)
        if trigger and trigger.get("availableNow") and stage.timer_domain == PROCESSING_TIME:
            raise ValueError(
                "a processing-time graph stage never finishes under availableNow: use a "
                "processingTime trigger and stop the query yourself"
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
            session = stage.combined.sparkSession
            location = restart.checkpoint_location(session, checkpoint_location, query_name)
            if self._written_by_one_task(stage, location):
                self._one_task = ("the checkpoint was written by the one-task plan (an earlier "
                                  "flinkwin, or parallelism 1): its query continues on it")
                self._stages.clear()
                stage = self._stage(list(side_outputs), query=True)
            self._check_restart(location)
        self._check_parallelism()
        self._warn_one_task(stage)
        return start_query(
            stage, main, side_outputs, checkpoint_location=checkpoint_location,
            trigger=trigger, output_mode=output_mode, query_name=query_name, options=options,
        )

    @staticmethod
    def _written_by_one_task(stage: CompiledStage, location: str | None) -> bool:
        """A distributed ``stage`` started from a checkpoint the one-task graph plan wrote
        (``start()`` then continues it on that plan; Spark cannot switch a checkpoint's plan):
        its ``pipeline.json`` says so, or it has none (written before flinkwin recorded
        graphs, when every graph ran in one task)."""
        pipeline: Any = stage.pipeline
        if location is None or not pipeline.distributed:
            return False
        store = CheckpointStore(stage.combined.sparkSession, location)
        recorded = store.read_json(restart.DOCUMENT)
        if recorded is None:  # Spark's offsets without flinkwin's document: an earlier
            return bool(store.spark_listing("offsets"))  # flinkwin's (one-task) graph stage
        return recorded.get("stage") == "graph"

    def _check_restart(self, location: str | None) -> None:
        """Record the graph in the checkpoint at ``location``, or check it against the recorded
        one (see :mod:`flinkwin.spark.graph_restart`); flinkwin's ``start()`` and a query
        started from ``toDF()`` both call it."""
        if location is not None:
            stage = self._stage([])
            pipeline: Any = stage.pipeline
            store = CheckpointStore(stage.combined.sparkSession, location)
            prepare_graph_restart(store, self._plan_value, pipeline.key_groups,
                                  pipeline.fingerprint, pipeline.stage_kind)
            sources = len(self._plan_value.sources)
            if sources > 1 and not pipeline.own_clocks and store.spark_listing("offsets"):
                warnings.warn(
                    f"flinkwin: this stream graph ({stage.summary.get('operators')}) of "
                    f"{sources} sources runs on Spark's watermark (a source's watermark is "
                    "computed before a filter or flat_map, or carried from an earlier stage), "
                    f"and restarts from the checkpoint at {location}: Spark restores its one "
                    "watermark, not each source's greatest event time, so until every "
                    "source passes it the operators' watermark lags behind Flink's and an "
                    "element Flink finds late may be taken as on time (a known difference: "
                    "docs/spark-semantics.md, \"What is not like Flink\"). A graph keeps "
                    "each source's clock in its state when it computes every source's "
                    "watermark itself: assign the WatermarkStrategy after the filter "
                    "for exact results across restarts",
                    RestartedWatermarksWarning,
                    stacklevel=_caller_outside_flinkwin(),
                )

    @property
    def writeStream(self) -> WindowDataStreamWriter:  # noqa: N802
        """Spark's ``DataStreamWriter`` interface for this result (see
        :class:`flinkwin.spark.writer.WindowDataStreamWriter`)."""
        self._running()
        if not self._public_df().isStreaming:
            raise ValueError("'writeStream' can be called only on a streaming input")
        return WindowDataStreamWriter(self)  # type: ignore[arg-type]

    def setParallelism(self, parallelism: int) -> GraphResultStream:  # noqa: N802
        """Run the graph at ``parallelism``, Flink's way to scale a job out (it overrides the
        environment's ``set_parallelism``). A graph runs at 1 by default: one task, every
        operator seeing its inputs in the one order a Flink job at parallelism 1 gives. With
        ``parallelism`` > 1 every keyed operator runs in the stream's key groups over that many
        Spark tasks, with a shuffle between operators keyed differently
        (docs/architecture.md#distributed-graphs); as in Flink at that parallelism, elements
        from several upstream tasks then reach an operator in no defined order. A graph whose
        one keyed operator reads its sources directly runs in its key groups either way.
        A graph that a rule keeps in one task (``explain()`` names it) runs there, with a
        ``OneTaskGraphWarning`` naming the rule: the results of a parallelism-1 run are among
        those Flink gives at any parallelism. Refused only where Flink refuses it too: a
        ``window_all`` runs at parallelism 1 only."""
        previous: int | None = getattr(self, "_parallelism", None)
        self._parallelism: int | None = parallelism
        self._stages.clear()
        stage = self._stage([])
        key_groups = stage.pipeline.key_groups
        if key_groups == 1 and parallelism != 1:
            self._parallelism = previous
            self._stages.clear()
            reason = stage.summary.get("distributed", "").removeprefix("no: ")
            if not reason.endswith(PARALLELISM_ONE_ONLY):
                # Flink runs the job at this parallelism, and a parallelism-1 run's results
                # are among the results it may give; refusing here would fail a program Flink
                # runs (a window_all is Flink's own parallelism-1 case: refused there too)
                warnings.warn(
                    f"flinkwin: setParallelism({parallelism}) on this stream graph "
                    f"({stage.summary.get('operators')}): it runs in one task ({reason}), "
                    "with the results of a parallelism-1 run",
                    OneTaskGraphWarning,
                    stacklevel=_caller_outside_flinkwin(),
                )
                self._hints["parallelism"] = parallelism
                self._df = self._stage([]).main_timed()
                return self
            raise PipelineError(
                f"setParallelism({parallelism}): this stream graph runs in one task "
                f"({reason}); only 1 is possible"
            )
        stage_parallelism(None, key_groups, parallelism)  # validates
        self._hints["parallelism"] = parallelism
        # toDF(), a sink and a downstream operator read the stage of this parallelism's plan
        self._df = stage.main_timed()
        return self

    @property
    def output_schema(self) -> StructType:
        return self._public_df().schema

    get_side_output = getSideOutput
    set_parallelism = setParallelism


_FLINKWIN = str(Path(__file__).resolve().parents[1]) + "/"


def _caller_outside_flinkwin() -> int:
    """The ``stacklevel`` of the first caller outside flinkwin, for the function that calls
    ``warnings.warn`` (a warning names the user's line)."""
    frame: FrameType | None = sys._getframe(2)
    level = 2
    while frame is not None and str(Path(frame.f_code.co_filename).resolve()).startswith(
        _FLINKWIN
    ):
        frame, level = frame.f_back, level + 1
    return level


__all__ = ["GraphResultStream", "OneTaskGraphWarning", "RestartedWatermarksWarning"]
