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

import difflib
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from flinkwin.assigners.base import WindowAssigner
from flinkwin.datastream.closeable_iterator import CloseableIterator
from flinkwin.datastream.element_sinks import ElementSinks, SinkContext
from flinkwin.datastream.graph_operations import GraphOperations
from flinkwin.datastream.operator_hints import OperatorHints
from flinkwin.datastream.stream_execution_environment import (
    StreamExecutionEnvironment,
    stream_defaults,
)
from flinkwin.errors import UnsupportedOperationError, pickled_elements_error
from flinkwin.functions.base import KeySelector
from flinkwin.functions.transform import as_callable, function_label
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.spark.carried_time import carry_time, carry_timestamps
from flinkwin.spark.elements import (
    RECORD_TIMESTAMP_COLUMN,
    TIMESTAMP_COLUMN,
    apply_element_stage,
)
from flinkwin.spark.schema import (
    parse_schema,
    pickled_schema,
    refuse_reserved_names,
    without_pickled_marks,
)
from flinkwin.spark.sizing import StageSize, sized_data_frame
from flinkwin.spark.transforms import FILTER, FLAT_MAP, MAP, apply_transform
from flinkwin.spark.workers import ensure_worker_python
from flinkwin.timestamps import TimestampAssigner
from flinkwin.types import (
    TypeInformation,
    Types,
    declared_output,
    is_atomic_type,
    is_pickled_type,
)
from flinkwin.unsupported import missing
from flinkwin.watermark import WatermarkStrategy

if TYPE_CHECKING:

    from flinkwin.datastream.keyed_stream import KeyedStream
    from flinkwin.datastream.windowed_stream import AllWindowedStream

#: Default number of key groups (Flink's max parallelism): the unit of Spark state and work.
DEFAULT_KEY_GROUPS = 16
#: PyFlink's name of a window operator's contents state.
WINDOW_STATE_NAME = "window-contents"


class DataStream(GraphOperations, OperatorHints, ElementSinks):
    """A stream of rows backed by a Spark DataFrame.

    ``key_groups`` is the number of groups keys are hashed into (Flink's max parallelism): each
    key group is one Spark state entry processed with one vectorized call per micro-batch. It is
    recorded in the checkpoint and cannot change on restart.

    ``runtime_mode`` is Flink's :class:`~flinkwin.runtime_mode.RuntimeExecutionMode` for a
    static DataFrame: ``STREAMING`` (the default, as PyFlink's) hands each key's elements to
    the window in the DataFrame's row order, ``BATCH`` in event-time order.

    Without ``key_groups=`` / ``runtime_mode=`` a stream takes the execution environment's
    (``env.set_max_parallelism(n)``, ``env.set_runtime_mode(mode)``, see
    :class:`~flinkwin.datastream.stream_execution_environment.StreamExecutionEnvironment`), or
    16 key groups and ``STREAMING`` when a program made none.

    ``times_before_1970=True`` declares that a stream's event times may lie at or before
    1970-01-01T00:00:00Z (or that its watermark is read while every event time is within the
    out-of-orderness bound of it): its windows, timers and watermark there are then exact, and
    Spark's own view of the watermark (progress, UI, listeners) is shifted by about 128,000
    years. Without it Spark shows Flink's watermark as it is, and what Spark's watermark cannot
    tell there fails naming this declaration (see docs/spark-semantics.md, "Watermarks").
    Static DataFrames need no declaration.

    Operator names and hints (``name``, ``uid``, ``set_parallelism``, ``slot_sharing_group``...)
    are recorded on the stream and returned by it, as PyFlink's builders do; they change nothing
    on Spark (the name and uid of a window result appear in ``explain()``).
    """

    #: the stream graph this stream is the head of (None: a stream over a DataFrame, which is
    #: a source of any graph it joins; see flinkwin.spark.graph)
    _plan: Any = None
    #: the operator that produced this stream's elements, named in errors (None: unknown)
    _origin: str | None = None
    #: what sizes the flinkwin stage this stream's elements come from (None: no stage)
    _sizing: StageSize | None = None
    #: the elements come out of a stage that wakes keys in processing time (a side output's)
    _from_processing_time_stage = False
    #: the stream this one was derived from (None: a DataFrame's own)
    _upstream: DataStream | None = None
    #: pickled elements no output type describes: what to do instead (see pickled_elements_error)
    _pickled_fix: str | None = None
    #: the DataFrame is a user's (False: one flinkwin wrote, whose hidden ``_fw_rts`` column
    #: is its own; a user's columns named like flinkwin's are refused)
    _from_user = True

    def __init__(
        self,
        df: DataFrame,
        *,
        key_groups: int | None = None,
        watermark_strategy: WatermarkStrategy | None = None,
        runtime_mode: RuntimeExecutionMode | None = None,
        type_info: TypeInformation | None = None,
        times_before_1970: bool = False,
    ) -> None:
        if self._from_user and isinstance(df, DataFrame):
            refuse_reserved_names(df.columns, "the DataFrame")
        declared = key_groups
        if key_groups is None or runtime_mode is None:
            env_mode, env_key_groups = stream_defaults()
            runtime_mode = env_mode if runtime_mode is None else runtime_mode
            if key_groups is None:
                declared = env_key_groups
                key_groups = DEFAULT_KEY_GROUPS if env_key_groups is None else env_key_groups
        if not isinstance(df, DataFrame):
            raise TypeError(f"DataStream wraps a pyspark DataFrame, got {type(df).__name__}")
        if not isinstance(key_groups, int) or key_groups < 1:
            raise ValueError(f"key_groups must be a positive int, got {key_groups!r}")
        if not isinstance(runtime_mode, RuntimeExecutionMode):
            raise TypeError(f"runtime_mode must be a RuntimeExecutionMode, got {runtime_mode!r}")
        if not isinstance(times_before_1970, bool):
            raise TypeError(f"times_before_1970 must be a bool, got {times_before_1970!r}")
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
        ensure_worker_python(df.sparkSession)
        self._df = without_pickled_marks(df)
        self._hints: dict[str, Any] = {}
        self._key_groups = key_groups
        #: the max parallelism the program declared (``key_groups=``, the environment's
        #: ``set_max_parallelism``); None: flinkwin's default key groups, which no operator's
        #: parallelism is checked against (see flinkwin.spark.parallelism.check_max_parallelism)
        self._max_parallelism: int | None = declared
        self._watermark = watermark_strategy
        self._runtime_mode = runtime_mode
        self._type_info = type_info
        self._times_before_1970 = times_before_1970

    def _derive(self, df: DataFrame, **changes: Any) -> DataStream:
        """A stream over ``df`` with this stream's settings (``changes`` override them)."""
        settings: dict[str, Any] = {
            "key_groups": self._key_groups,
            "watermark_strategy": self._watermark,
            "runtime_mode": self._runtime_mode,
            "type_info": self._type_info,
            "times_before_1970": self._times_before_1970,
        }
        settings.update(changes)
        stream = DataStream._own(df, **settings)
        stream._origin = self._origin
        stream._max_parallelism = self._max_parallelism
        stream._sizing = self._stage_size()
        stream._upstream = self
        return stream

    def _wakes_keys_in_processing_time(self) -> bool:
        """True if a query over this stream runs a stage that wakes keys in processing time
        (Spark then runs a micro-batch on every trigger: see :mod:`flinkwin.spark.queries`)."""
        upstream = self._upstream
        return self._from_processing_time_stage or (
            upstream is not None and upstream._wakes_keys_in_processing_time()
        )

    @classmethod
    def _own(cls, df: DataFrame, type_info: TypeInformation | None, **settings: Any) -> Any:
        """A stream over a DataFrame flinkwin wrote itself in this pipeline (a function's or a
        side output's results, ``from_collection``): its pickled-values marks stay, with the
        type saying so. Every DataFrame from outside goes through ``DataStream(df)``."""
        stream = cls.__new__(cls)
        stream._from_user = False
        DataStream.__init__(stream, df, **settings)
        stream._df, stream._type_info = df, type_info
        return stream

    def toDF(self) -> DataFrame:  # noqa: N802
        """The elements as a Spark DataFrame: one column per field of their type (the
        DataFrame's own for a stream over one). Elements without a declared type (pickled
        Python objects, ``get_type()`` is ``Types.PICKLED_BYTE_ARRAY()``) have no Spark form:
        a :class:`~flinkwin.errors.PickledElementsError` names the operator that produced them
        and says to declare its ``output_type``.

        Downstream of a flinkwin stage, a streaming query started from it with Spark's
        ``writeStream...start()`` / ``toTable()`` runs the stage at its parallelism, as
        flinkwin's ``start()`` does (:mod:`flinkwin.spark.sizing`)."""
        if is_pickled_type(self._type_info):
            raise pickled_elements_error("toDF()", self._origin, self._pickled_fix)
        self._running()
        df, size = self._public_df(), self._stage_size()
        if size is None or not df.isStreaming:
            return df
        return sized_data_frame(df, size)

    def _schema(self) -> StructType:
        """The schema of ``toDF()``, read without running the stream (an operator reading its
        input's columns does not run that input: a stream graph warns when it runs)."""
        if is_pickled_type(self._type_info):
            raise pickled_elements_error("toDF()", self._origin, self._pickled_fix)
        return self._public_df().schema

    def _stage_size(self) -> StageSize | None:
        """What sizes the flinkwin stage of this stream (None: the stream has none)."""
        return self._sizing

    def _public_df(self) -> DataFrame:
        """The DataFrame of the elements without the hidden columns (pickled ones included:
        flinkwin's own use)."""
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
        (``result.getSideOutput(late).writeStream...``, ``.collect()``, ``.columns``), as
        ``toDF()`` gives it."""
        if name.startswith("_"):
            raise AttributeError(name)
        if name == "start":  # (a DataFrame has none: Spark's error would not say why)
            raise AttributeError(
                "start() runs a stream that ends in a flinkwin operator (a window, a process "
                "function, a rolling aggregation, a join); this stream has none (only "
                "map/filter/flat_map steps, if any): write it with Spark's "
                "stream.writeStream...start() (or stream.toDF().writeStream)"
            )
        frame = self.toDF()
        try:
            return getattr(frame, name)
        except AttributeError:
            own = [n for n in dir(type(self)) if not n.startswith("_")]
            close = difflib.get_close_matches(name, own, n=3)
            hint = f" Did you mean {' or '.join(close)}?" if close else ""
            raise AttributeError(
                f"{type(self).__name__!r} object has no attribute {name!r}: neither the stream "
                f"nor its DataFrame (toDF()) has it.{hint}"
            ) from None

    # ------------------------------------------------------------ stream plumbing
    def map(
        self, func: Any, output_type: Any = None, *, output_schema: Any = None
    ) -> DataStream:
        """One output per element: ``func(value)`` or a ``MapFunction``; ``output_type`` (PyFlink
        type information, a DDL string or a StructType; also named ``output_schema``, as every
        function producing elements takes it) makes the outputs typed columns; without it they
        travel pickled (as PyFlink's), one ``value binary`` column whose values the next
        function, sink or ``execute_and_collect()`` gets back as they were returned."""
        return self._transform(MAP, func, as_callable(func, "map", "map"),
                               declared_output(output_type, output_schema))

    def flat_map(
        self, func: Any, output_type: Any = None, *, output_schema: Any = None
    ) -> DataStream:
        """Any number of outputs per element: ``func(value)`` returns or yields them (or a
        ``FlatMapFunction``); ``output_type``/``output_schema`` as for ``map``."""
        return self._transform(
            FLAT_MAP, func, as_callable(func, "flat_map", "flat_map"),
            declared_output(output_type, output_schema),
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
        if self._plan is not None:
            stepped = self._graph_step(kind, rich, function, out_schema, type_info)
        else:
            stepped = self._transformed(kind, rich, function, out_schema, type_info)
        if kind != FILTER:
            stepped._origin = f"{kind}({function_label(rich)})"
        return stepped

    def _transformed(
        self, kind: str, rich: Any, function: Any, out_schema: Any, type_info: Any
    ) -> DataStream:
        """``_transform`` on a stream over a DataFrame."""
        schema = self._public_df().schema
        df, strategy = self._elements_df(), self._watermark
        if strategy is not None:
            # timestamps are taken here, and before a filter/flat_map the watermark, over
            # every element (Flink's TimestampsAndWatermarksOperator; a map keeps every
            # element and its timestamp): see flinkwin.spark.carried_time
            if isinstance(strategy.timestamp_column, TimestampAssigner):
                df, strategy = self._stamped(df, strategy)
            df, strategy = carry_time(df, strategy, schema, self._times_before_1970,
                                      every_element=kind == MAP)
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
            df, self._public_df().schema, None, None, strategy.timestamp_column, time_zone,
            tuple_elements=_is_tuple_type(self._type_info),
            atomic_elements=is_atomic_type(self._type_info), element_type=self._type_info,
        )
        if RECORD_TIMESTAMP_COLUMN in stamped.columns:
            stamped = stamped.drop(RECORD_TIMESTAMP_COLUMN)
        stamped = stamped.withColumnRenamed(TIMESTAMP_COLUMN, RECORD_TIMESTAMP_COLUMN)
        return stamped, strategy.withTimestampAssigner(RECORD_TIMESTAMP_COLUMN)

    def assignTimestampsAndWatermarks(  # noqa: N802
        self, watermark_strategy: WatermarkStrategy
    ) -> DataStream:
        """Event timestamps and watermarks for the windows downstream."""
        if not isinstance(watermark_strategy, WatermarkStrategy):
            raise TypeError(
                "assignTimestampsAndWatermarks takes a WatermarkStrategy, got "
                f"{type(watermark_strategy).__name__}"
            )
        if self._plan is not None and self._df.isStreaming:
            raise UnsupportedOperationError(
                "assign_timestamps_and_watermarks on the results of a window, join or process "
                "function on a stream is not supported: the graph runs in one Spark stage, "
                "whose watermark is its sources'. The results already carry their timestamps "
                "(a window's window.max_timestamp(), a join's, a process function's element "
                "or timer time) and the operators after them see the watermark that fired "
                "them, as in Flink: remove this call, or assign the timestamps at the source "
                "(see docs/windows/union-and-cascades.md)"
            )
        if self._df.isStreaming and getattr(self._watermark, "watermarked_upstream", False):
            raise UnsupportedOperationError(
                "assign_timestamps_and_watermarks after a filter or flat_map of a stream "
                "that already has a WatermarkStrategy is not supported on a stream: Spark "
                "takes one watermark per source, and this one's is taken where its first "
                "strategy is (before the filter, over every element); Flink would use the new "
                "strategy's watermarks from here on. Assign one strategy: at the source, or "
                "only after the filter/flat_map (see docs/spark-semantics.md)"
            )
        df, previous = self._elements_df(), self._watermark
        if (self._plan is None and previous is not None
                and previous.timestamp_column not in (None, RECORD_TIMESTAMP_COLUMN)):
            # Flink's TimestampsAndWatermarksOperator hands the new assigner each element's
            # timestamp so far (recordTimestamp): the previous strategy's, whose watermarks the
            # new one replaces. Its timestamps are taken here, without its watermark.
            if isinstance(previous.timestamp_column, TimestampAssigner):
                df, _ = self._stamped(df, previous)
            else:
                df = carry_timestamps(df, previous, self._public_df().schema)
        if watermark_strategy.timestamp_column is None and RECORD_TIMESTAMP_COLUMN in df.columns:
            # no assigner: Flink's default (RecordTimestampAssigner) keeps the timestamps the
            # elements carry (an earlier strategy's, or a window's or join's results')
            watermark_strategy = watermark_strategy.withTimestampAssigner(RECORD_TIMESTAMP_COLUMN)
        return self._derive(df, watermark_strategy=watermark_strategy)

    def keyBy(  # noqa: N802
        self, *keys: Any, key_selector: Any = None, key_type: Any = None
    ) -> KeyedStream:
        """Partition by key: column names (``keyBy("user")``, ``keyBy("user", "page")``,
        ``keyBy(["user", "page"])``; the key is the column's value, a tuple for several: the
        fast path, computed by Spark), or PyFlink's key selector: a function of the element
        (``key_by(lambda r: r[0], key_type=Types.STRING())``, also written
        ``key_by(key_selector=..., key_type=...)`` or ``key_by(selector, Types.STRING())``) or
        a ``KeySelector``, called once per element before the shuffle (a tuple-returning
        selector gives tuple keys). ``key_type`` is checked against every key a selector
        returns."""
        # inherent cycle: a KeyedStream is a DataStream
        from flinkwin.datastream.keyed_stream import KeyedStream

        if key_selector is not None:
            if keys:
                raise TypeError("key_by takes the key selector once: positionally or as "
                                "key_selector=")
            keys = (key_selector,)
        if len(keys) == 2 and isinstance(keys[1], TypeInformation) and key_type is None:
            key_type = keys[1]  # PyFlink's key_by(key_selector, key_type)
            keys = (keys[0],)

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

    def windowAll(self, window_assigner: WindowAssigner) -> AllWindowedStream:  # noqa: N802
        """Windows over the whole (non-keyed) stream; runs as a single key group."""
        # inherent cycle: a windowed stream's results are DataStreams
        from flinkwin.datastream.windowed_stream import AllWindowedStream, _window_state

        return AllWindowedStream(_window_state(self, None, window_assigner))

    def countWindowAll(self, size: int, slide: int | None = None) -> AllWindowedStream:  # noqa: N802
        """Java's ``countWindowAll``: GlobalWindows with a purging CountTrigger of ``size``, or
        with ``slide``: a CountEvictor of ``size`` and a CountTrigger of ``slide`` (fires every
        ``slide`` elements from the first)."""
        # inherent cycle: a windowed stream's results are DataStreams
        from flinkwin.datastream.windowed_stream import AllWindowedStream, _count_window_state

        return AllWindowedStream(_count_window_state(self, None, size, slide))

    def count_window_all(self, size: int, slide: int = 0) -> AllWindowedStream:
        """``count_window`` (PyFlink's count assigners) over the whole stream; PyFlink itself
        has no ``count_window_all``."""
        # inherent cycle: a windowed stream's results are DataStreams
        from flinkwin.datastream.windowed_stream import (
            AllWindowedStream,
            _pyflink_count_window_state,
        )

        return AllWindowedStream(_pyflink_count_window_state(self, None, size, slide))

    def get_execution_environment(self) -> StreamExecutionEnvironment:
        """The process's execution environment."""
        return StreamExecutionEnvironment.get_execution_environment()

    flatMap = flat_map
    getType = get_type
    getExecutionEnvironment = get_execution_environment  # noqa: N815
    assign_timestamps_and_watermarks = assignTimestampsAndWatermarks
    key_by = keyBy
    window_all = windowAll
    to_df = toDF


def _is_tuple_type(type_info: TypeInformation | None) -> bool:
    return type_info is not None and type_info.name == "TUPLE"


def __getattr__(name: str) -> Any:
    """PyFlink's ``data_stream`` module also holds the keyed, windowed and connected
    streams."""
    # inherent cycle: they are (or make) DataStreams, so they load after this module
    if name == "KeyedStream":
        from flinkwin.datastream.keyed_stream import KeyedStream

        return KeyedStream
    if name == "ConnectedStreams":
        from flinkwin.datastream.connected_streams import ConnectedStreams

        return ConnectedStreams
    if name in ("WindowedStream", "AllWindowedStream"):
        from flinkwin.datastream import windowed_stream

        return getattr(windowed_stream, name)
    raise missing(__name__, name)


# re-exported from their own modules, as public names of this one: CloseableIterator (PyFlink's
# data_stream has it) and SinkContext (what an add_sink function gets)
__all__ = [
    "DEFAULT_KEY_GROUPS", "WINDOW_STATE_NAME", "CloseableIterator", "DataStream", "SinkContext",
]

