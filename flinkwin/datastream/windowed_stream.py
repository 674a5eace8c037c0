"""``WindowedStream`` and ``AllWindowedStream``: a (keyed or non-keyed) stream with a window
assigner, its trigger, evictor, allowed lateness and late-data tag, and the window functions
that make it a :class:`~flinkwin.datastream.window_result_stream.WindowResultStream` (Flink's
``WindowedStream``/``AllWindowedStream``)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from flinkwin.assigners.base import MergingWindowAssigner, WindowAssigner
from flinkwin.assigners.count import CountSlidingWindowAssigner, CountTumblingWindowAssigner
from flinkwin.assigners.global_windows import GlobalWindows
from flinkwin.datastream.data_stream import DataStream
from flinkwin.datastream.graph_stream import GraphResultStream
from flinkwin.datastream.stream_execution_environment import (
    StreamExecutionEnvironment,
    default_parallelism,
)
from flinkwin.datastream.window_result_stream import WindowResultStream
from flinkwin.errors import MERGING_TRIGGER_MESSAGE, UnsupportedOperationError
from flinkwin.evictors import CountEvictor, Evictor
from flinkwin.functions.builtin import max_by, max_of, min_by, min_of, sum_of
from flinkwin.functions.internal import (
    CALL_ARGUMENTS,
    called_as,
    function_kind,
    resolve_window_function,
)
from flinkwin.functions.transform import function_label
from flinkwin.output_tag import OutputTag
from flinkwin.spark.aggregations import check_aggregatable, over_field
from flinkwin.spark.graph_nodes import window_node
from flinkwin.spark.pipeline import WindowPipeline
from flinkwin.spark.schema import parse_schema
from flinkwin.time import TimeLike, to_millis
from flinkwin.triggers import CountTrigger, PurgingTrigger, Trigger
from flinkwin.types import TypeInformation, declared_output, is_atomic_type

if TYPE_CHECKING:
    from typing_extensions import Self


@dataclasses.dataclass(frozen=True)
class _WindowState:
    stream: DataStream
    keys: list[str] | None
    assigner: WindowAssigner
    trigger: Trigger | None = None
    evictor: Evictor | None = None
    allowed_lateness_ms: int = 0
    late_tag: OutputTag | None = None
    key_selector: Any = None
    key_type: TypeInformation | None = None


def _window_state(stream: DataStream, keys: list[str] | None, assigner: Any) -> _WindowState:
    if not isinstance(assigner, WindowAssigner):
        raise TypeError(f"window() takes a WindowAssigner, got {type(assigner).__name__}")
    return _WindowState(stream, keys, assigner)


def _count_window_state(
    stream: DataStream, keys: list[str] | None, size: int, slide: int | None
) -> _WindowState:
    state = _WindowState(stream, keys, GlobalWindows.create())
    if slide is None:
        return dataclasses.replace(state, trigger=PurgingTrigger.of(CountTrigger.of(size)))
    return dataclasses.replace(
        state, evictor=CountEvictor.of(size), trigger=CountTrigger.of(slide)
    )


def _pyflink_count_window_state(
    stream: DataStream, keys: list[str] | None, size: int, slide: int
) -> _WindowState:
    if slide == 0:
        return _WindowState(stream, keys, CountTumblingWindowAssigner(size))
    return _WindowState(stream, keys, CountSlidingWindowAssigner(size, slide))


class WindowedStream:
    """A keyed stream with a window assigner; finish it with a window function.

    Window functions take ``output_schema=`` (a DDL string, a StructType or PyFlink type
    information; PyFlink's ``output_type=`` is accepted as an alias). Reduce and the built-in
    aggregations keep the input's schema; without a declared type, aggregate, process and apply
    (and reduce with a window function) output pickled Python values in one ``value binary``
    column, as PyFlink outputs ``PICKLED_BYTE_ARRAY`` (``flinkwin.spark.schema.unpickle``).
    ``with_window=True`` adds ``window_start``/``window_end`` timestamp columns (null for the
    global window of count windows). ``with_firing=True`` adds ``firing_timing``,
    ``firing_index`` and ``firing_is_last`` (what each firing of the window was, as Beam's
    ``PaneInfo``) and makes ``context.firing()`` available (see ``docs/firings.md``).
    """

    _keyed = True

    def __init__(self, state: _WindowState) -> None:
        self._state = state

    def _with(self, **changes: Any) -> Self:
        """Set options on this stream and return it (Flink's builders do the same)."""
        self._state = dataclasses.replace(self._state, **changes)
        return self

    # ------------------------------------------------------------- configuration
    def trigger(self, trigger: Trigger) -> Self:
        """Replace the assigner's default trigger."""
        if not isinstance(trigger, Trigger):
            raise TypeError(f"trigger() takes a Trigger, got {type(trigger).__name__}")
        if isinstance(self._state.assigner, MergingWindowAssigner) and not trigger.can_merge():
            raise UnsupportedOperationError(MERGING_TRIGGER_MESSAGE)
        return self._with(trigger=trigger)

    def evictor(self, evictor: Evictor) -> Self:
        """Evict elements before/after the window function (window state becomes a list)."""
        if not isinstance(evictor, Evictor):
            raise TypeError(f"evictor() takes an Evictor, got {type(evictor).__name__}")
        return self._with(evictor=evictor)

    def allowedLateness(self, time_ms: TimeLike) -> Self:  # noqa: N802
        """Keep windows (and re-fire them on late elements) until watermark passes
        ``window end + time_ms`` (PyFlink's milliseconds, or a ``Time``/``Duration``)."""
        millis = to_millis(time_ms, "allowed lateness")
        if millis < 0:
            raise ValueError("The allowed lateness cannot be negative.")
        return self._with(allowed_lateness_ms=millis)

    def sideOutputLateData(self, output_tag: OutputTag) -> Self:  # noqa: N802
        """Send elements that arrive too late for every window to ``output_tag``."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"sideOutputLateData takes an OutputTag, got {output_tag!r}")
        return self._with(late_tag=output_tag)

    # ---------------------------------------------------------- window functions
    def reduce(
        self,
        reduce_function: Any,
        window_function: Any = None,
        output_type: Any = None,
        *,
        output_schema: Any = None,
        with_window: bool = False,
        with_firing: bool = False,
    ) -> WindowResultStream:
        """Incremental reduce (``ReduceFunction`` or ``fn(a, b)``); with ``window_function``
        that function sees the single reduced value (then declare ``output_schema``)."""
        self._check_kinds("reduce", reduce_function, window_function)
        function = reduce_function if window_function is None else (
            reduce_function, window_function
        )
        return self._finish(
            function, "reduce", output_schema, output_type, with_window, with_firing
        )

    def aggregate(
        self,
        aggregate_function: Any,
        window_function: Any = None,
        accumulator_type: Any = None,
        output_type: Any = None,
        *,
        output_schema: Any = None,
        with_window: bool = False,
        with_firing: bool = False,
    ) -> WindowResultStream:
        """Incremental ``AggregateFunction``; optionally followed by ``window_function``."""
        self._check_kinds("aggregate", aggregate_function, window_function)
        function = aggregate_function if window_function is None else (
            aggregate_function, window_function
        )
        return self._finish(
            function, "aggregate", output_schema, output_type, with_window, with_firing
        )

    def process(
        self,
        process_window_function: Any,
        output_type: Any = None,
        *,
        output_schema: Any = None,
        with_window: bool = False,
        with_firing: bool = False,
    ) -> WindowResultStream:
        """Full-window ``ProcessWindowFunction`` (``ProcessAllWindowFunction`` for windowAll).
        As PyFlink, any object whose ``process`` takes the arguments this stream passes works
        (``(key, context, elements)``, or ``(context, elements)`` after ``window_all``)."""
        function = self._full_window("process", process_window_function)
        return self._finish(
            function, "process", output_schema, output_type, with_window, with_firing
        )

    def apply(
        self,
        window_function: Any,
        output_type: Any = None,
        *,
        output_schema: Any = None,
        with_window: bool = False,
        with_firing: bool = False,
    ) -> WindowResultStream:
        """Full-window ``WindowFunction`` (``AllWindowFunction`` for windowAll). As PyFlink,
        any object whose ``apply`` takes the arguments this stream passes works
        (``(key, window, inputs)``, or ``(window, inputs)`` after ``window_all``)."""
        function = self._full_window("apply", window_function)
        return self._finish(
            function, "apply", output_schema, output_type, with_window, with_firing
        )

    # ------------------------------------------------------ built-in aggregations
    def sum(
        self, field: str | int, *, with_window: bool = False, with_firing: bool = False
    ) -> WindowResultStream:
        """The first element of each window with ``field`` replaced by the window's sum."""
        return self._builtin(sum_of, "sum", field, with_window, with_firing)

    def min(
        self, field: str | int, *, with_window: bool = False, with_firing: bool = False
    ) -> WindowResultStream:
        """The first element with ``field`` replaced by the window's minimum."""
        return self._builtin(min_of, "min", field, with_window, with_firing)

    def max(
        self, field: str | int, *, with_window: bool = False, with_firing: bool = False
    ) -> WindowResultStream:
        """The first element with ``field`` replaced by the window's maximum."""
        return self._builtin(max_of, "max", field, with_window, with_firing)

    def minBy(  # noqa: N802
        self, field: str | int, *, with_window: bool = False, with_firing: bool = False
    ) -> WindowResultStream:
        """The element with the minimum ``field`` (the earliest on ties)."""
        return self._builtin(min_by, "minBy", field, with_window, with_firing)

    def maxBy(  # noqa: N802
        self, field: str | int, *, with_window: bool = False, with_firing: bool = False
    ) -> WindowResultStream:
        """The element with the maximum ``field`` (the earliest on ties)."""
        return self._builtin(max_by, "maxBy", field, with_window, with_firing)

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        """The process's execution environment."""
        return StreamExecutionEnvironment.get_execution_environment()

    def get_input_type(self) -> TypeInformation | None:
        """The declared type of the elements entering the windows (None: Rows of the
        DataFrame's columns), as ``DataStream.get_type``."""
        return self._state.stream.get_type()

    allowed_lateness = allowedLateness
    side_output_late_data = sideOutputLateData
    getExecutionEnvironment = get_execution_environment  # noqa: N815
    getInputType = get_input_type  # noqa: N815
    min_by = minBy
    max_by = maxBy

    # ------------------------------------------------------------------ helpers
    def _full_window(self, method: str, function: Any) -> Any:
        """``function`` as this stream's full-window ``method`` calls it (see ``process``);
        a ``TypeError`` naming what was passed and what PyFlink would call otherwise."""
        kind = method + ("" if self._keyed else "_all")
        adapted = called_as(function, kind)
        if adapted is None:
            arguments = ", ".join(CALL_ARGUMENTS[kind])
            raise TypeError(
                f"{type(self).__name__}.{method}() takes {_KIND_NAMES[kind]}, got "
                f"{_describe_function(function, function_kind(function))}; PyFlink calls "
                f"{method}({arguments}) on it, which it does not take"
            )
        return adapted

    def _check_kinds(self, method: str, function: Any, window_function: Any) -> None:
        """Each window method takes one kind of function, as Flink's typed signatures demand
        (a ``process()`` given a ``ReduceFunction`` does not compile in Java): anything else
        raises a ``TypeError`` naming what was passed and the method that takes it."""
        keyed = self._keyed
        suffix = "" if keyed else "_all"
        expected = {
            "reduce": {"reduce"},
            "aggregate": {"aggregate"},
        }[method]
        kind = function_kind(function)
        if kind not in expected:
            raise TypeError(
                f"{type(self).__name__}.{method}() takes {_KIND_NAMES[next(iter(expected))]}, "
                f"got {_describe_function(function, kind)}"
            )
        if window_function is not None:
            window_kind = function_kind(window_function)
            if window_kind not in ("process" + suffix, "apply" + suffix):
                wanted = (
                    "a ProcessWindowFunction or WindowFunction" if keyed
                    else "a ProcessAllWindowFunction or AllWindowFunction"
                )
                raise TypeError(
                    f"{type(self).__name__}.{method}(): the window function must be {wanted}, "
                    f"got {_describe_function(window_function, window_kind)}"
                )

    def _builtin(
        self, factory: Any, name: str, field: str | int, with_window: bool, with_firing: bool
    ) -> WindowResultStream:
        schema = self._state.stream._public_df().schema
        columns = schema.fieldNames()
        if isinstance(field, int) and not isinstance(field, bool):
            if not 0 <= field < len(columns):
                raise ValueError(f"{name}({field}): no column at position {field} in {columns}")
            field = columns[field]
        if field not in columns:
            raise ValueError(f"{name}({field!r}): no such column in {columns}")
        function = factory(field)
        dtype = schema[field].dataType
        check_aggregatable(function.kind, f"{name}({field!r})", field, dtype)
        return self._finish(
            over_field(function, dtype), f"{name}({field!r})", None, None, with_window, with_firing
        )

    def _finish(
        self, function: Any, name: str, output_schema: Any, output_type: Any, with_window: bool,
        with_firing: bool = False,
    ) -> Any:
        declared = declared_output(output_type, output_schema)
        resolve_window_function(function, self._state.evictor is not None)
        state = self._state
        pipeline = WindowPipeline(
            df=state.stream._elements_df(),
            watermark=state.stream._watermark,
            key_columns=state.keys,
            assigner=state.assigner,
            trigger=state.trigger,
            evictor=state.evictor,
            allowed_lateness_ms=state.allowed_lateness_ms,
            late_tag=state.late_tag,
            function=function,
            function_name=name,
            output_schema=None if declared is None else parse_schema(declared),
            with_window=bool(with_window),
            key_groups=state.stream._key_groups,
            max_parallelism=state.stream._max_parallelism,
            key_selector=state.key_selector,
            key_type=state.key_type,
            runtime_mode=state.stream._runtime_mode,
            element_type=state.stream._type_info,
            times_before_1970=state.stream._times_before_1970,
            with_firing=bool(with_firing),
            default_parallelism=default_parallelism(),
        )
        if isinstance(declared, TypeInformation):
            type_info: TypeInformation | None = declared
        else:
            type_info = state.stream._type_info if declared is None else None
        if (with_window or with_firing) and is_atomic_type(type_info):
            type_info = None  # the window or firing columns make Rows of the outputs
        if getattr(state.stream, "_plan", None) is not None:
            # a window over a graph stream (a union, a join, a window's results on a stream)
            # joins that graph's one stage
            plan = state.stream._plan
            result: Any = GraphResultStream(plan.with_node(window_node(pipeline, plan, type_info)))
        else:
            result = WindowResultStream(pipeline, type_info)  # compiles: errors surface here
        functions = function if isinstance(function, tuple) else (function,)
        result._origin = f"the window's {name}({', '.join(map(function_label, functions))})"
        return result


_KIND_NAMES = {
    "reduce": "a ReduceFunction (or a callable(a, b))",
    "aggregate": "an AggregateFunction",
    "process": "a ProcessWindowFunction",
    "process_all": "a ProcessAllWindowFunction",
    "apply": "a WindowFunction",
    "apply_all": "an AllWindowFunction",
}
_KIND_METHODS = {
    "reduce": "reduce()",
    "aggregate": "aggregate()",
    "process": "process() on a keyed stream",
    "process_all": "process() after windowAll",
    "apply": "apply() on a keyed stream",
    "apply_all": "apply() after windowAll",
}


def _describe_function(function: Any, kind: str | None) -> str:
    name = type(function).__name__
    if kind is None:
        return f"{name} {function!r}, which is no window function"
    return f"{name}, {_KIND_NAMES[kind]} (that goes to {_KIND_METHODS[kind]})"


class AllWindowedStream(WindowedStream):
    """A non-keyed stream with a window assigner (``windowAll``/``countWindowAll``)."""

    _keyed = False


__all__ = ["AllWindowedStream", "WindowedStream"]
