"""The fluent DataStream window API over a Spark DataFrame (streaming or static).

    result = (DataStream(df)
              .assignTimestampsAndWatermarks(
                  WatermarkStrategy.forBoundedOutOfOrderness(Duration.ofSeconds(5))
                  .withTimestampAssigner("ts"))
              .keyBy("user")
              .window(TumblingEventTimeWindows.of(Time.minutes(1)))
              .allowedLateness(Time.seconds(30))
              .sideOutputLateData(late)
              .sum("clicks"))
    result.toDF()                 # main output as a DataFrame
    result.getSideOutput(late)    # late elements, with the input's columns
    result.start(main=..., side_outputs={late: ...}, checkpoint_location=...)

Every builder has its Flink (camelCase) and PyFlink (snake_case) name. Stream builders
(``keyBy``, ``window``, the window functions...) return a new stream; as in Flink, a windowed
stream's options (``trigger``, ``evictor``, ``allowedLateness``, ``sideOutputLateData``) are set
on that stream and return it, so ``ws.trigger(t); ws.reduce(f)`` keeps the trigger. Where Java and
PyFlink differ, each name behaves as its own Flink does: ``countWindow(size, slide)`` is Java's
(fires every ``slide`` elements), ``count_window(size, slide)`` PyFlink's (only full windows of
a ``CountSlidingWindowAssigner``; see ``docs/semantics.md``).

Nothing runs until ``toDF()``, ``getSideOutput()``, ``explain()`` or ``start()``; the window
stage compiles to one ``applyInPandasWithState`` (see :mod:`flinkwin.spark.compiler` and
``docs/spark-semantics.md``).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Observation, Row
from pyspark.sql.streaming import StreamingQuery
from pyspark.sql.types import StructType

from flinkwin.assigners.base import MergingWindowAssigner, WindowAssigner
from flinkwin.assigners.count import CountSlidingWindowAssigner, CountTumblingWindowAssigner
from flinkwin.assigners.global_windows import GlobalWindows
from flinkwin.assigners.stagger import fix_stagger
from flinkwin.errors import MERGING_TRIGGER_MESSAGE, UnsupportedOperationError
from flinkwin.evictors import CountEvictor, Evictor
from flinkwin.functions.base import KeySelector
from flinkwin.functions.builtin import max_by, max_of, min_by, min_of, sum_of
from flinkwin.functions.internal import function_kind, resolve_window_function
from flinkwin.functions.transform import as_callable
from flinkwin.output_tag import OutputTag
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.spark import restart
from flinkwin.spark.checkpoint import CheckpointStore
from flinkwin.spark.compiler import (
    CompiledStage,
    WindowPipeline,
    compile_pipeline,
    null_timestamp_tag,
)
from flinkwin.spark.elements import (
    RECORD_TIMESTAMP_COLUMN,
    TIMESTAMP_COLUMN,
    apply_element_stage,
)
from flinkwin.spark.printing import flink_string, python_string, python_value
from flinkwin.spark.runtime import PROCESSING_TIME
from flinkwin.spark.schema import is_pickled, parse_schema, pickled_schema
from flinkwin.spark.sinks import start_query
from flinkwin.spark.transforms import FILTER, FLAT_MAP, MAP, apply_transform
from flinkwin.spark.writer import WindowDataStreamWriter
from flinkwin.time import TimeLike, to_millis
from flinkwin.timestamps import TimestampAssigner
from flinkwin.triggers import CountTrigger, PurgingTrigger, Trigger
from flinkwin.types import TypeInformation, is_atomic_type
from flinkwin.watermark import WatermarkStrategy

if TYPE_CHECKING:
    from typing_extensions import Self

#: Default number of key groups (Flink's max parallelism): the unit of Spark state and work.
DEFAULT_KEY_GROUPS = 16


class DataStream:
    """A stream of rows backed by a Spark DataFrame.

    ``key_groups`` is the number of groups keys are hashed into (Flink's max parallelism): each
    key group is one Spark state entry processed with one vectorized call per micro-batch. It is
    recorded in the checkpoint and cannot change on restart.

    ``runtime_mode`` is Flink's :class:`~flinkwin.runtime_mode.RuntimeExecutionMode` for a
    static DataFrame: ``STREAMING`` (the default, as PyFlink's) hands each key's elements to
    the window in the DataFrame's row order, ``BATCH`` in event-time order.
    """

    def __init__(
        self,
        df: DataFrame,
        *,
        key_groups: int = DEFAULT_KEY_GROUPS,
        watermark_strategy: WatermarkStrategy | None = None,
        runtime_mode: RuntimeExecutionMode = RuntimeExecutionMode.STREAMING,
        type_info: TypeInformation | None = None,
    ) -> None:
        if not isinstance(df, DataFrame):
            raise TypeError(f"DataStream wraps a pyspark DataFrame, got {type(df).__name__}")
        if not isinstance(key_groups, int) or key_groups < 1:
            raise ValueError(f"key_groups must be a positive int, got {key_groups!r}")
        if not isinstance(runtime_mode, RuntimeExecutionMode):
            raise TypeError(f"runtime_mode must be a RuntimeExecutionMode, got {runtime_mode!r}")
        if is_atomic_type(type_info):
            public = [c for c in df.columns if c != RECORD_TIMESTAMP_COLUMN]
            if len(public) != 1:
                raise ValueError(
                    f"a stream of {type_info!r} holds one value per element: its DataFrame "
                    f"needs exactly one column, got {public}"
                )
        self._df = df
        self._key_groups = key_groups
        self._watermark = watermark_strategy
        self._runtime_mode = runtime_mode
        self._type_info = type_info

    def _derive(self, df: DataFrame, **changes: Any) -> DataStream:
        """A stream over ``df`` with this stream's settings (``changes`` override them)."""
        settings: dict[str, Any] = {
            "key_groups": self._key_groups,
            "watermark_strategy": self._watermark,
            "runtime_mode": self._runtime_mode,
            "type_info": self._type_info,
        }
        settings.update(changes)
        return DataStream(df, **settings)

    def toDF(self) -> DataFrame:  # noqa: N802
        """The underlying Spark DataFrame."""
        if RECORD_TIMESTAMP_COLUMN in self._df.columns:
            return self._df.drop(RECORD_TIMESTAMP_COLUMN)
        return self._df

    def _elements_df(self) -> DataFrame:
        """The DataFrame a downstream operator reads: the public columns plus, downstream of a
        window, the hidden ``_fw_rts`` column with the timestamps the elements carry."""
        return self._df

    def get_type(self) -> TypeInformation | None:
        """The declared PyFlink type of the elements (None: Rows of the DataFrame's columns)."""
        return self._type_info

    def __getattr__(self, name: str) -> Any:
        """Anything else is the DataFrame's: a stream can be used where a DataFrame is expected
        (``result.getSideOutput(late).writeStream...``, ``.collect()``, ``.columns``)."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.toDF(), name)

    # ------------------------------------------------------------ stream plumbing
    def map(self, func: Any, output_type: Any = None) -> DataStream:
        """One output per element: ``func(value)`` or a ``MapFunction``; ``output_type`` (PyFlink
        type information, a DDL string or a StructType) makes the outputs typed columns; without
        it they travel pickled (as PyFlink's), one ``value binary`` column whose values the next
        function, sink or ``execute_and_collect()`` gets back as they were returned."""
        return self._transform(MAP, func, as_callable(func, "map", "map"), output_type)

    def flat_map(self, func: Any, output_type: Any = None) -> DataStream:
        """Any number of outputs per element: ``func(value)`` returns or yields them (or a
        ``FlatMapFunction``); ``output_type`` as for ``map``."""
        return self._transform(
            FLAT_MAP, func, as_callable(func, "flat_map", "flat_map"), output_type
        )

    def filter(self, func: Any) -> DataStream:
        """The elements for which ``func(value)`` (or a ``FilterFunction``) is true."""
        return self._transform(FILTER, func, as_callable(func, "filter", "filter"), None)

    def _transform(self, kind: str, rich: Any, function: Any, output_type: Any) -> DataStream:
        """``function`` (``rich``'s method, or ``rich`` itself when it is a plain function)
        over every element; ``rich`` is opened and closed per task when it is a Function."""
        if kind == FILTER:
            out_schema = None
            type_info = self._type_info
        else:
            if output_type is None:  # PyFlink pickles the values: one pickled column
                out_schema = pickled_schema()
                type_info = None
            else:
                out_schema = parse_schema(output_type, f"{kind} output_type")
                type_info = output_type if isinstance(output_type, TypeInformation) else None
        schema = self.toDF().schema
        df, strategy = self._elements_df(), self._watermark
        if kind != FILTER and strategy is not None and isinstance(
            strategy.timestamp_column, TimestampAssigner
        ):
            df, strategy = self._stamped(df, strategy)
        df = apply_transform(
            df, kind, function, schema, out_schema, kind,
            tuple_elements=_is_tuple_type(self._type_info), rich=rich,
            atomic_elements=is_atomic_type(self._type_info), element_type=self._type_info,
        )
        return self._derive(df, type_info=type_info, watermark_strategy=strategy)

    def _stamped(
        self, df: DataFrame, strategy: WatermarkStrategy
    ) -> tuple[DataFrame, WatermarkStrategy]:
        """Flink assigns timestamps once, where ``assign_timestamps_and_watermarks`` is: before
        a map/flat_map, the ``TimestampAssigner`` runs on the elements it was written for, the
        timestamps travel in the hidden ``_fw_rts`` column (a map's outputs keep their
        element's, as in Flink), and the downstream strategy reads them from there."""
        time_zone = df.sparkSession.conf.get("spark.sql.session.timeZone") or "UTC"
        stamped = apply_element_stage(
            df, self.toDF().schema, None, None, strategy.timestamp_column, time_zone,
            tuple_elements=_is_tuple_type(self._type_info),
            atomic_elements=is_atomic_type(self._type_info), element_type=self._type_info,
        )
        if RECORD_TIMESTAMP_COLUMN in stamped.columns:
            stamped = stamped.drop(RECORD_TIMESTAMP_COLUMN)
        stamped = stamped.withColumnRenamed(TIMESTAMP_COLUMN, RECORD_TIMESTAMP_COLUMN)
        return stamped, strategy.withTimestampAssigner(RECORD_TIMESTAMP_COLUMN)

    def execute_and_collect(self, job_execution_name: str | None = None,
                            limit: int | None = None) -> list[Any]:
        """All elements of a static stream, shaped as PyFlink returns them (tuples for
        ``Types.TUPLE``, the value for a basic type, Rows otherwise)."""
        df = self._static_df("execute_and_collect")
        rows = df.collect() if limit is None else df.limit(limit).collect()
        pickled = is_pickled(df.schema)
        return [python_value(row, self._type_info, pickled) for row in rows]

    def print(self, sink_identifier: str | None = None) -> StreamingQuery | None:
        """Flink's print sink: one line per element in Flink's format (``(a,1)`` for a tuple,
        ``+I[a, 1]`` for a Row; values without a declared type as Python's ``str``, as PyFlink
        prints them), prefixed ``"<sink_identifier>> "`` when given. Runs now: a static stream
        prints from the driver and returns None; a streaming one starts a query printing each
        micro-batch and returns it."""
        prefix = "" if sink_identifier is None else f"{sink_identifier}> "
        # PyFlink prints pickled values (no declared type) with Python's str()
        text = python_string if is_pickled(self.toDF().schema) else flink_string

        def emit(value: Any, _context: Any) -> None:
            print(prefix + text(value))

        return self._run_sink(emit)

    def add_sink(self, sink_function: Any) -> StreamingQuery | None:  # noqa: N802
        """Call ``sink_function.invoke(value, context)`` (a ``SinkFunction``) for each element,
        shaped as for ``execute_and_collect``; runs now, as ``print()``."""
        invoke = as_callable(sink_function, "invoke", "add_sink")
        return self._run_sink(invoke)

    def _run_sink(self, invoke: Any) -> StreamingQuery | None:
        """Deliver every element to ``invoke(value, context)`` in the driver (see ``print``)."""
        type_info = self._type_info
        df = self._elements_df()
        carried = RECORD_TIMESTAMP_COLUMN in df.columns
        pickled = is_pickled(self.toDF().schema)

        def deliver(rows: list[Any]) -> None:
            for row in rows:
                stamp = row[RECORD_TIMESTAMP_COLUMN] if carried else None
                public = Row(**{k: v for k, v in row.asDict().items()
                                if k != RECORD_TIMESTAMP_COLUMN})
                invoke(python_value(public, type_info, pickled), SinkContext(stamp))

        if not df.isStreaming:
            deliver(df.collect())
            return None
        return df.writeStream.foreachBatch(lambda batch, _id: deliver(batch.collect())).start()

    def _static_df(self, what: str) -> DataFrame:
        df = self.toDF()
        if df.isStreaming:
            raise ValueError(f"{what} needs a static DataFrame; start a query on a streaming one")
        return df

    def assignTimestampsAndWatermarks(  # noqa: N802
        self, watermark_strategy: WatermarkStrategy
    ) -> DataStream:
        """Event timestamps and watermarks for the windows downstream."""
        if not isinstance(watermark_strategy, WatermarkStrategy):
            raise TypeError(
                "assignTimestampsAndWatermarks takes a WatermarkStrategy, got "
                f"{type(watermark_strategy).__name__}"
            )
        return self._derive(self._elements_df(), watermark_strategy=watermark_strategy)

    def keyBy(self, *keys: Any, key_type: Any = None) -> KeyedStream:  # noqa: N802
        """Partition by key: column names (``keyBy("user")``, ``keyBy("user", "page")``,
        ``keyBy(["user", "page"])``; the key is the column's value, a tuple for several: the
        fast path, computed by Spark), or PyFlink's key selector: a function of the element
        (``key_by(lambda r: r[0], key_type=Types.STRING())``) or a ``KeySelector``, called once
        per element before the shuffle (a tuple-returning selector gives tuple keys).
        ``key_type`` is checked against every key a selector returns."""
        if len(keys) == 1 and (isinstance(keys[0], KeySelector) or (
            callable(keys[0]) and not isinstance(keys[0], (str, type))
        )):
            if key_type is not None and not isinstance(key_type, TypeInformation):
                raise TypeError(f"key_type must be PyFlink type information, got {key_type!r}")
            return KeyedStream(self, None, keys[0], key_type)
        if key_type is not None:
            raise TypeError("key_type is for a key selector; column keys take the column's type")
        if len(keys) == 1 and isinstance(keys[0], (list, tuple)):
            keys = tuple(keys[0])
        if not keys or not all(isinstance(k, str) for k in keys):
            raise TypeError(
                "keyBy takes column names, or one key selector (a function or KeySelector), "
                f"got {keys!r}"
            )
        missing = [k for k in keys if k not in self._df.columns]
        if missing:
            raise ValueError(f"keyBy column(s) {missing} not in the input ({self._df.columns})")
        return KeyedStream(self, list(keys))

    def windowAll(self, assigner: WindowAssigner) -> AllWindowedStream:  # noqa: N802
        """Windows over the whole (non-keyed) stream; runs as a single key group."""
        return AllWindowedStream(_window_state(self, None, assigner))

    def countWindowAll(self, size: int, slide: int | None = None) -> AllWindowedStream:  # noqa: N802
        """Java's ``countWindowAll``: GlobalWindows with a purging CountTrigger of ``size``, or
        with ``slide``: a CountEvictor of ``size`` and a CountTrigger of ``slide`` (fires every
        ``slide`` elements from the first)."""
        return AllWindowedStream(_count_window_state(self, None, size, slide))

    def count_window_all(self, size: int, slide: int = 0) -> AllWindowedStream:
        """``count_window`` (PyFlink's count assigners) over the whole stream; PyFlink itself
        has no ``count_window_all``."""
        return AllWindowedStream(_pyflink_count_window_state(self, None, size, slide))

    addSink = add_sink
    flatMap = flat_map
    executeAndCollect = execute_and_collect
    getType = get_type
    assign_timestamps_and_watermarks = assignTimestampsAndWatermarks
    key_by = keyBy
    window_all = windowAll
    to_df = toDF


class SinkContext:
    """The context a sink function gets: the element's timestamp (None when it has none)."""

    __slots__ = ("_timestamp",)

    def __init__(self, timestamp: int | None) -> None:
        self._timestamp = timestamp

    def timestamp(self) -> int | None:
        return self._timestamp


class KeyedStream:
    """A stream partitioned by key columns or by a key selector."""

    def __init__(
        self,
        stream: DataStream,
        keys: list[str] | None,
        key_selector: Any = None,
        key_type: TypeInformation | None = None,
    ) -> None:
        self._stream = stream
        self._keys = keys
        self._key_selector = key_selector
        self._key_type = key_type

    def _keyed(self, state: _WindowState) -> _WindowState:
        """``state`` keyed by this stream's key selector (if it has one)."""
        return dataclasses.replace(
            state, key_selector=self._key_selector, key_type=self._key_type
        )

    def _state(self, assigner: Any) -> _WindowState:
        return self._keyed(_window_state(self._stream, self._keys, assigner))

    def window(self, assigner: WindowAssigner) -> WindowedStream:
        """Windows per key, assigned by ``assigner``."""
        return WindowedStream(self._state(assigner))

    def countWindow(self, size: int, slide: int | None = None) -> WindowedStream:  # noqa: N802
        """Java's ``countWindow`` (see ``DataStream.countWindowAll``)."""
        return WindowedStream(
            self._keyed(_count_window_state(self._stream, self._keys, size, slide))
        )

    def count_window(self, size: int, slide: int = 0) -> WindowedStream:
        """PyFlink's ``count_window``: ``CountTumblingWindowAssigner(size)``, or with a
        ``slide``: ``CountSlidingWindowAssigner(size, slide)``, which fires only full windows."""
        return WindowedStream(
            self._keyed(_pyflink_count_window_state(self._stream, self._keys, size, slide))
        )


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
    global window of count windows).
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

    def allowedLateness(self, lateness: TimeLike) -> Self:  # noqa: N802
        """Keep windows (and re-fire them on late elements) until watermark passes
        ``window end + lateness``."""
        millis = to_millis(lateness, "allowed lateness")
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
    ) -> WindowResultStream:
        """Incremental reduce (``ReduceFunction`` or ``fn(a, b)``); with ``window_function``
        that function sees the single reduced value (then declare ``output_schema``)."""
        self._check_kinds("reduce", reduce_function, window_function)
        function = reduce_function if window_function is None else (
            reduce_function, window_function
        )
        return self._finish(function, "reduce", output_schema, output_type, with_window)

    def aggregate(
        self,
        aggregate_function: Any,
        window_function: Any = None,
        accumulator_type: Any = None,
        output_type: Any = None,
        *,
        output_schema: Any = None,
        with_window: bool = False,
    ) -> WindowResultStream:
        """Incremental ``AggregateFunction``; optionally followed by ``window_function``."""
        self._check_kinds("aggregate", aggregate_function, window_function)
        function = aggregate_function if window_function is None else (
            aggregate_function, window_function
        )
        return self._finish(function, "aggregate", output_schema, output_type, with_window)

    def process(
        self,
        process_function: Any,
        output_type: Any = None,
        *,
        output_schema: Any = None,
        with_window: bool = False,
    ) -> WindowResultStream:
        """Full-window ``ProcessWindowFunction`` (``ProcessAllWindowFunction`` for windowAll)."""
        self._check_kinds("process", process_function, None)
        return self._finish(process_function, "process", output_schema, output_type, with_window)

    def apply(
        self,
        window_function: Any,
        output_type: Any = None,
        *,
        output_schema: Any = None,
        with_window: bool = False,
    ) -> WindowResultStream:
        """Full-window ``WindowFunction`` (``AllWindowFunction`` for windowAll)."""
        self._check_kinds("apply", window_function, None)
        return self._finish(window_function, "apply", output_schema, output_type, with_window)

    # ------------------------------------------------------ built-in aggregations
    def sum(self, field: str | int, *, with_window: bool = False) -> WindowResultStream:
        """The first element of each window with ``field`` replaced by the window's sum."""
        return self._builtin(sum_of, "sum", field, with_window)

    def min(self, field: str | int, *, with_window: bool = False) -> WindowResultStream:
        """The first element with ``field`` replaced by the window's minimum."""
        return self._builtin(min_of, "min", field, with_window)

    def max(self, field: str | int, *, with_window: bool = False) -> WindowResultStream:
        """The first element with ``field`` replaced by the window's maximum."""
        return self._builtin(max_of, "max", field, with_window)

    def minBy(self, field: str | int, *, with_window: bool = False) -> WindowResultStream:  # noqa: N802
        """The element with the minimum ``field`` (the earliest on ties)."""
        return self._builtin(min_by, "minBy", field, with_window)

    def maxBy(self, field: str | int, *, with_window: bool = False) -> WindowResultStream:  # noqa: N802
        """The element with the maximum ``field`` (the earliest on ties)."""
        return self._builtin(max_by, "maxBy", field, with_window)

    allowed_lateness = allowedLateness
    side_output_late_data = sideOutputLateData
    min_by = minBy
    max_by = maxBy

    # ------------------------------------------------------------------ helpers
    def _check_kinds(self, method: str, function: Any, window_function: Any) -> None:
        """Each window method takes one kind of function, as Flink's typed signatures demand
        (a ``process()`` given a ``ReduceFunction`` does not compile in Java): anything else
        raises a ``TypeError`` naming what was passed and the method that takes it."""
        keyed = self._keyed
        suffix = "" if keyed else "_all"
        expected = {
            "reduce": {"reduce"},
            "aggregate": {"aggregate"},
            "process": {"process" + suffix},
            "apply": {"apply" + suffix},
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
        self, factory: Any, name: str, field: str | int, with_window: bool
    ) -> WindowResultStream:
        columns = self._state.stream.toDF().columns
        if isinstance(field, int) and not isinstance(field, bool):
            if not 0 <= field < len(columns):
                raise ValueError(f"{name}({field}): no column at position {field} in {columns}")
            field = columns[field]
        if field not in columns:
            raise ValueError(f"{name}({field!r}): no such column in {columns}")
        return self._finish(factory(field), f"{name}({field!r})", None, None, with_window)

    def _finish(
        self, function: Any, name: str, output_schema: Any, output_type: Any, with_window: bool
    ) -> WindowResultStream:
        if output_schema is not None and output_type is not None:
            raise ValueError("pass output_schema or output_type, not both")
        declared = output_schema if output_schema is not None else output_type
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
            key_selector=state.key_selector,
            key_type=state.key_type,
            runtime_mode=state.stream._runtime_mode,
            element_type=state.stream._type_info,
        )
        if isinstance(declared, TypeInformation):
            type_info: TypeInformation | None = declared
        else:
            type_info = state.stream._type_info if declared is None else None
        if with_window and is_atomic_type(type_info):
            type_info = None  # the window columns make Rows of the outputs
        # compiles: errors surface where it is built
        return WindowResultStream(pipeline, type_info)


def _is_tuple_type(type_info: TypeInformation | None) -> bool:
    return type_info is not None and type_info.name == "TUPLE"


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


class WindowResultStream(DataStream):
    """The output of a window function (Flink's ``SingleOutputStreamOperator``)."""

    def __init__(self, pipeline: WindowPipeline, type_info: TypeInformation | None = None) -> None:
        # A staggered assigner's offset is drawn once, here: every task and batch unpickles it
        assigner = fix_stagger(pipeline.assigner, int(time.time() * 1000))
        if assigner is not pipeline.assigner:
            pipeline = dataclasses.replace(pipeline, assigner=assigner)
        self._pipeline = pipeline
        self._stages: dict[tuple[OutputTag, ...], CompiledStage] = {}
        super().__init__(
            self._stage([]).main_timed(),
            key_groups=pipeline.key_groups,
            runtime_mode=pipeline.runtime_mode,
            type_info=type_info,
        )
        if is_pickled(self.toDF().schema):  # outputs without a declared type: the values
            self._type_info = None

    def _stage(self, side_tags: list[OutputTag]) -> CompiledStage:
        key = tuple(side_tags)
        if key not in self._stages:
            self._stages[key] = compile_pipeline(self._pipeline, side_tags)
        return self._stages[key]

    def getSideOutput(self, output_tag: OutputTag) -> DataStream:  # noqa: N802
        """The side output ``output_tag`` as a stream, usable directly as a DataFrame (or take
        ``.toDF()``): late data
        has the input's columns; other tags declare a schema (``OutputTag("x", "a string")``).
        Starting a query on it runs the window stage again, separately from the main output's
        query; use ``start(side_outputs=...)`` to compute both in one query."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"getSideOutput takes an OutputTag, got {output_tag!r}")
        stage = self._stage([output_tag])
        tag_type = output_tag.type_info
        return DataStream(
            stage.side(output_tag),
            key_groups=self._pipeline.key_groups,
            runtime_mode=self._pipeline.runtime_mode,
            type_info=tag_type if isinstance(tag_type, TypeInformation) else None,
        )

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

    def setMaxParallelism(self, max_parallelism: int) -> WindowResultStream:  # noqa: N802
        """Use ``max_parallelism`` key groups for this window stage (Flink's max parallelism)."""
        if not isinstance(max_parallelism, int) or max_parallelism < 1:
            raise ValueError(f"max parallelism must be a positive int, got {max_parallelism!r}")
        return WindowResultStream(
            dataclasses.replace(self._pipeline, key_groups=max_parallelism), self._type_info
        )

    def explain(self, mode: str | None = None) -> None:
        """Print flinkwin's choices for the window stage, then Spark's plan
        (``mode`` as in ``DataFrame.explain``)."""
        routed = (self._pipeline.late_tag, null_timestamp_tag(self._pipeline))
        tags = list(dict.fromkeys(t for t in routed if t is not None))
        stage = self._stage(tags)
        print("== flinkwin window stage ==")
        width = max(len(k) for k in stage.summary)
        for key, value in stage.summary.items():
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

    @property
    def writeStream(self) -> WindowDataStreamWriter:  # noqa: N802
        """Spark's ``DataStreamWriter`` interface for this result: ``format``, ``option``,
        ``outputMode``, ``trigger``, ``queryName``, ``partitionBy``, ``foreachBatch``,
        ``start(path)``, ``toTable(name)``, plus ``sideOutput(tag, sink)``. Runs ONE streaming
        query for the main output and every side output (see
        :class:`flinkwin.spark.writer.WindowDataStreamWriter`)."""
        if not self.toDF().isStreaming:
            raise ValueError(
                "'writeStream' can be called only on a streaming input, as for a DataFrame: "
                "this result is computed from a static DataFrame (use start() to write its "
                "outputs once, or toDF().write)"
            )
        return WindowDataStreamWriter(self)

    @property
    def output_schema(self) -> StructType:
        """The main output's Spark schema."""
        return self.toDF().schema

    get_side_output = getSideOutput
    set_max_parallelism = setMaxParallelism


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


__all__ = [
    "DEFAULT_KEY_GROUPS",
    "AllWindowedStream",
    "DataStream",
    "KeyedStream",
    "WindowResultStream",
    "WindowedStream",
]
