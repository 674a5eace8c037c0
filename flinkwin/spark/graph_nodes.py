"""The nodes a stream graph's operators become: windows, window joins and coGroups, interval
joins, process functions (each a :class:`~flinkwin.spark.graph.PlanNode` whose operator is built
in the workers by a picklable builder)."""
from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from flinkwin.errors import TAGGED_UNION_FIX
from flinkwin.operator.graph import NodeSpec, StreamRef
from flinkwin.operator.runtime_context import Subtask, TaskInfo
from flinkwin.operator.snapshots import StatePickler

from .graph import PlanNode, StreamPlan, StreamType, declared_type, stage_pickler
from .pipeline import PipelineError, overflow_policy
from .runtime import EVENT_TIME, NO_TIMERS, PROCESSING_TIME, USER_TIMERS


@dataclass(frozen=True)
class WindowNodeBuilder:
    """A window node's operator: the window stage's ``OperatorSpec``, built for the task."""

    spec: Any

    def subtask(self, task_info: TaskInfo) -> Subtask:
        return self.spec.subtask(task_info.index_of_this_subtask)

    def __call__(self, task_info: TaskInfo, subtask: Subtask | None = None) -> Any:
        return self.spec.build(task_info.index_of_this_subtask, subtask)


# ------------------------------------------------------------------------ window nodes
def window_node(pipeline: Any, plan: StreamPlan, type_info: Any = None) -> PlanNode:
    """The window of ``pipeline`` as a node reading ``plan``'s head (a window over a graph
    stream, or a window stage joining a graph as its first operator)."""
    from flinkwin.functions.internal import resolve_window_function

    from .operator_spec import OperatorSpec
    from .pipeline import timer_domain

    if pipeline.with_window:
        raise PipelineError(
            "with_window=True is not supported inside a stream graph: return the window's "
            "bounds from a ProcessWindowFunction (context.window()) instead"
        )
    if pipeline.with_firing:
        raise PipelineError(
            "with_firing=True is not supported inside a stream graph (a union, a join, or a "
            "window before or after this one): firing metadata is kept for a window stage of "
            "its own"
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
        overflow=overflow_policy(plan.sources[0]._public_df().sparkSession),
        tuple_elements=source.tuples,
        atomic_elements=source.atomic or source.pickled,
        state_pickler=stage_pickler(plan),
        key_type=pipeline.key_type,
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
    key = pipeline.key_selector if pipeline.key_selector is not None else pipeline.key_columns
    return PlanNode(spec, output, sides, timers, () if key is None else (key,))


# ---------------------------------------------------------------------- window joins
@dataclass(frozen=True)
class TaggedInputs:
    """A window join's operator: the window operator over ``TaggedUnion`` elements, input 0
    tagged ``one``, input 1 ``two`` (Flink's ``CoGroupedStreams`` input mappers)."""

    spec: Any

    def subtask(self, task_info: TaskInfo) -> Subtask:
        return self.spec.subtask(task_info.index_of_this_subtask)

    def __call__(self, task_info: TaskInfo, subtask: Subtask | None = None) -> Any:
        return _TaggingOperator(self.spec.build(task_info.index_of_this_subtask, subtask))


class _TaggingOperator:
    def __init__(self, op: Any) -> None:
        self.op = op

    def process_element(self, value: Any, timestamp: int | None, input_index: int = 0) -> None:
        from flinkwin.operator.cogroup import TaggedUnion

        tagged = TaggedUnion.one(value) if input_index == 0 else TaggedUnion.two(value)
        self.op.process_element(tagged, timestamp)

    def input_key(self, value: Any, input_index: int) -> Any:
        """The key an element of input ``input_index`` is held under (its TaggedUnion's)."""
        from flinkwin.operator.cogroup import TaggedUnion

        tagged = TaggedUnion.one(value) if input_index == 0 else TaggedUnion.two(value)
        return self.op.key_of(tagged)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.op, name)


def window_join_node(spec: Any, plan: StreamPlan, heads: Sequence[StreamRef]) -> PlanNode:
    """The window join or coGroup of ``spec`` reading ``heads`` (first, second) of ``plan``."""
    from .operator_spec import OperatorSpec

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
        overflow=overflow_policy(plan.sources[0]._public_df().sparkSession),
        atomic_elements=True,  # TaggedUnions, keyed by the union key selector
        state_pickler=stage_pickler(plan),
        key_type=spec.key_type,
    )
    operator.build()
    sides = {}
    if spec.late_tag is not None:  # late elements of either input, as TaggedUnions
        late = replace(declared_type(None, ""), fix=TAGGED_UNION_FIX)
        sides[spec.late_tag.tag_id] = (spec.late_tag, late)
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
    return PlanNode(node, output, sides, timers, (spec.first_key, spec.second_key))


# ---------------------------------------------------------------------- interval joins
@dataclass(frozen=True)
class IntervalJoinBuilder:
    """An interval join's operator, built for the task (the spec without its streams)."""

    spec: Any
    left_key: Any
    right_key: Any
    overflow: str
    state_pickler: StatePickler
    #: the declared key type of either input (None: none declared)
    key_type: Any = None

    def subtask(self, task_info: TaskInfo) -> Subtask:
        """The subtask's own copies of the join function and the two key selectors."""
        function, *keys = copy.deepcopy((self.spec.function, self.left_key, self.right_key))
        return Subtask(function, tuple(keys), task_info)

    def __call__(self, task_info: TaskInfo, subtask: Subtask | None = None) -> Any:
        from flinkwin.operator.interval_join_operator import IntervalJoinOperator

        s = self.spec
        function, (left, right) = (
            (copy.deepcopy(s.function), (self.left_key, self.right_key)) if subtask is None
            else (subtask.function, subtask.key_selector)
        )
        return IntervalJoinOperator(
            s.lower_bound, s.upper_bound, s.lower_bound_inclusive, s.upper_bound_inclusive,
            s.left_late_data_output_tag, s.right_late_data_output_tag, function,
            left, right, task_info=task_info, overflow=self.overflow,
            state_pickler=self.state_pickler, subtask=subtask, key_type=self.key_type,
        )


def interval_join_node(
    spec: Any, left_key: Any, right_key: Any, plan: StreamPlan, heads: Sequence[StreamRef],
    key_type: Any = None,
) -> PlanNode:
    """The interval join of ``spec`` reading ``heads`` (left, right) of ``plan``;
    ``key_type``: the inputs' declared key type (None: none declared)."""
    declared = spec.output_schema if spec.output_schema is not None else spec.output_type
    output = declared_type(declared, "interval join output")
    left, right = (plan.type_of(h) for h in heads)
    runtime_spec = replace(spec, right=None)
    builder = IntervalJoinBuilder(
        runtime_spec, left_key, right_key,
        overflow_policy(plan.sources[0]._public_df().sparkSession), stage_pickler(plan),
        key_type,
    )
    builder(TaskInfo("IntervalJoin", 0, 1, 1))  # fail at build time on an invalid setup
    sides = {}
    for tag, side in ((spec.left_late_data_output_tag, left),
                      (spec.right_late_data_output_tag, right)):
        if tag is not None:
            sides[tag.tag_id] = (tag, side)
    node = NodeSpec(
        name="IntervalJoin", kind="operator", inputs=((heads[0], 0), (heads[1], 1)),
        build=builder, shape=output.shape(), two_input=True,
    )
    return PlanNode(node, output, sides, EVENT_TIME, (left_key, right_key))


# --------------------------------------------------------------------- process nodes
@dataclass(frozen=True)
class ProcessBuilder:
    """A ``process`` node's operator: ``KeyedProcessOperator`` (with a key) or
    ``ProcessOperator``, running its own copy of the function."""

    function: Any
    key: Any
    atomic: bool
    state_pickler: StatePickler
    #: the declared key type (None: none declared)
    key_type: Any = None

    def subtask(self, task_info: TaskInfo) -> Subtask:
        """The subtask's own copies of the function and the key selector."""
        function, key = copy.deepcopy((self.function, self.key))
        return Subtask(function, key, task_info)

    def __call__(self, task_info: TaskInfo, subtask: Subtask | None = None) -> Any:
        from flinkwin.operator.keyed_process_operator import (
            KeyedProcessOperator,
            ProcessOperator,
        )

        function, key = (
            (copy.deepcopy(self.function), self.key) if subtask is None
            else (subtask.function, subtask.key_selector)
        )
        if key is None:
            return ProcessOperator(function, task_info=task_info,
                                   state_pickler=self.state_pickler, subtask=subtask)
        return KeyedProcessOperator(function, key, task_info=task_info,
                                    atomic_elements=self.atomic,
                                    state_pickler=self.state_pickler, subtask=subtask,
                                    key_type=self.key_type)


def process_node(
    function: Any, key: Any, output_type: Any, plan: StreamPlan, key_type: Any = None
) -> PlanNode:
    """``process(function)`` on ``plan``'s head, keyed by ``key`` (None: not keyed) of the
    declared ``key_type`` (None: none declared)."""
    source = plan.head_type
    output = declared_type(output_type, "process output_type")
    builder = ProcessBuilder(function, key, source.atomic or source.pickled, stage_pickler(plan),
                             key_type)
    builder(TaskInfo("KeyedProcess" if key is not None else "Process", 0, 1, 1))
    name = f"{'KeyedProcess' if key is not None else 'Process'}({type(function).__name__})"
    node = NodeSpec(name=name, kind="operator", inputs=((plan.head, 0),), build=builder,
                    shape=output.shape())
    # flinkwin's own rolling aggregations and keyed map/filter/flat_map register no timers on
    # a stream (a BATCH rolling reduce's timer is on static input): a graph of them needs no
    # timeouts, and finishes under availableNow
    timers = NO_TIMERS if getattr(function, "streams_without_timers", False) else USER_TIMERS
    return PlanNode(node, output, {}, timers, () if key is None else (key,))


# ---------------------------------------------------------------- co-process nodes
@dataclass(frozen=True)
class CoProcessBuilder:
    """A connected streams' ``process`` node's operator: ``KeyedCoProcessOperator`` (with a
    key per input) or ``CoProcessOperator``, running its own copy of the function."""

    function: Any
    keys: tuple[Any, Any] | None
    atomic: tuple[bool, bool]
    state_pickler: StatePickler
    #: the declared key type (None: none declared)
    key_type: Any = None

    def subtask(self, task_info: TaskInfo) -> Subtask:
        """The subtask's own copies of the function and the key selectors."""
        function, keys = copy.deepcopy((self.function, self.keys))
        return Subtask(function, keys, task_info)

    def __call__(self, task_info: TaskInfo, subtask: Subtask | None = None) -> Any:
        from flinkwin.operator.co_process_operator import (
            CoProcessOperator,
            KeyedCoProcessOperator,
        )

        function, keys = (
            (copy.deepcopy(self.function), self.keys) if subtask is None
            else (subtask.function, subtask.key_selector)
        )
        if keys is None:
            return CoProcessOperator(function, task_info=task_info, atomic_elements=self.atomic,
                                     state_pickler=self.state_pickler, subtask=subtask)
        return KeyedCoProcessOperator(function, keys, task_info=task_info,
                                      atomic_elements=self.atomic,
                                      state_pickler=self.state_pickler, subtask=subtask,
                                      key_type=self.key_type)


def co_process_node(
    function: Any, keys: tuple[Any, Any] | None, output_type: Any, plan: StreamPlan,
    heads: Sequence[StreamRef], key_type: Any = None,
) -> PlanNode:
    """``connect(...).process(function)`` of ``heads`` (first, second) of ``plan``, keyed by
    ``keys`` (one per input; None: not keyed) of the declared ``key_type``."""
    output = declared_type(output_type, "process output_type")
    first, second = (plan.type_of(h) for h in heads)
    builder = CoProcessBuilder(
        function, keys, (first.atomic or first.pickled, second.atomic or second.pickled),
        stage_pickler(plan), key_type,
    )
    kind = "KeyedCoProcess" if keys is not None else "CoProcess"
    builder(TaskInfo(kind, 0, 1, 1))  # fail at build time on an invalid function
    label = getattr(function, "label", type(function).__name__)
    node = NodeSpec(name=f"{kind}({label})", kind="operator",
                    inputs=((heads[0], 0), (heads[1], 1)), build=builder,
                    shape=output.shape(), two_input=True)
    timers = NO_TIMERS if getattr(function, "streams_without_timers", False) else USER_TIMERS
    return PlanNode(node, output, {}, timers, () if keys is None else keys)


__all__ = [
    "CoProcessBuilder",
    "IntervalJoinBuilder",
    "ProcessBuilder",
    "TaggedInputs",
    "WindowNodeBuilder",
    "co_process_node",
    "interval_join_node",
    "process_node",
    "window_join_node",
    "window_node",
]
