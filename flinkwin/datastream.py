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

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Row
from pyspark.sql.streaming import StreamingQuery

from flinkwin.assigners.base import WindowAssigner
from flinkwin.functions.base import KeySelector
from flinkwin.functions.transform import as_callable
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.spark.elements import (
    RECORD_TIMESTAMP_COLUMN,
    TIMESTAMP_COLUMN,
    apply_element_stage,
)
from flinkwin.spark.printing import flink_string, python_string, python_value
from flinkwin.spark.schema import parse_schema, pickled_schema, without_pickled_marks
from flinkwin.spark.transforms import FILTER, FLAT_MAP, MAP, apply_transform
from flinkwin.timestamps import TimestampAssigner
from flinkwin.types import TypeInformation, Types, is_atomic_type, is_pickled_type
from flinkwin.watermark import WatermarkStrategy

if TYPE_CHECKING:

    from flinkwin.keyed_stream import KeyedStream
    from flinkwin.windowed_stream import AllWindowedStream

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
        if is_pickled_type(type_info):
            raise ValueError(
                "a DataFrame cannot be declared a stream of pickled values "
                "(Types.PICKLED_BYTE_ARRAY()): flinkwin never unpickles bytes it did not write "
                "itself in this pipeline (a binary column is a stream of bytes)"
            )
        if is_atomic_type(type_info):
            public = [c for c in df.columns if c != RECORD_TIMESTAMP_COLUMN]
            if len(public) != 1:
                raise ValueError(
                    f"a stream of {type_info!r} holds one value per element: its DataFrame "
                    f"needs exactly one column, got {public}"
                )
        self._df = without_pickled_marks(df)
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
        type_info = settings.pop("type_info")
        stream = DataStream(df, **settings)
        # flinkwin's own output: its pickled-values marks stay, with the type saying so
        stream._df, stream._type_info = df, type_info
        return stream

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
        """The declared PyFlink type of the elements (None: Rows of the DataFrame's columns;
        ``Types.PICKLED_BYTE_ARRAY()``: Python values flinkwin pickled, the output of a
        ``map``/``flat_map`` or window function without an output type, as in PyFlink)."""
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
            if output_type is None or is_pickled_type(output_type):
                out_schema = pickled_schema()  # PyFlink pickles the values: one column
                type_info = Types.PICKLED_BYTE_ARRAY()
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
        pickled = is_pickled_type(self._type_info)
        return [python_value(row, self._type_info, pickled) for row in rows]

    def print(self, sink_identifier: str | None = None) -> StreamingQuery | None:
        """Flink's print sink: one line per element in Flink's format (``(a,1)`` for a tuple,
        ``+I[a, 1]`` for a Row; values without a declared type as Python's ``str``, as PyFlink
        prints them), prefixed ``"<sink_identifier>> "`` when given. Runs now: a static stream
        prints from the driver and returns None; a streaming one starts a query printing each
        micro-batch and returns it."""
        prefix = "" if sink_identifier is None else f"{sink_identifier}> "
        # PyFlink prints pickled values (no declared type) with Python's str()
        text = python_string if is_pickled_type(self._type_info) else flink_string

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
        pickled = is_pickled_type(type_info)

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
        from flinkwin.keyed_stream import KeyedStream

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
        from flinkwin.windowed_stream import AllWindowedStream, _window_state

        return AllWindowedStream(_window_state(self, None, assigner))

    def countWindowAll(self, size: int, slide: int | None = None) -> AllWindowedStream:  # noqa: N802
        """Java's ``countWindowAll``: GlobalWindows with a purging CountTrigger of ``size``, or
        with ``slide``: a CountEvictor of ``size`` and a CountTrigger of ``slide`` (fires every
        ``slide`` elements from the first)."""
        from flinkwin.windowed_stream import AllWindowedStream, _count_window_state

        return AllWindowedStream(_count_window_state(self, None, size, slide))

    def count_window_all(self, size: int, slide: int = 0) -> AllWindowedStream:
        """``count_window`` (PyFlink's count assigners) over the whole stream; PyFlink itself
        has no ``count_window_all``."""
        from flinkwin.windowed_stream import AllWindowedStream, _pyflink_count_window_state

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


def _is_tuple_type(type_info: TypeInformation | None) -> bool:
    return type_info is not None and type_info.name == "TUPLE"


__all__ = ["DEFAULT_KEY_GROUPS", "DataStream", "SinkContext"]
