"""``StreamExecutionEnvironment``: the environment lines of a PyFlink program, kept as written.

``get_execution_environment()`` returns the process's one environment. What it honours:

- ``from_collection(collection, type_info=None)`` builds a static DataFrame on the active
  SparkSession (one is created if none is active, as PyFlink starts a local cluster) and returns
  ``DataStream(df, type_info=type_info)``: a bounded source, in the collection's order. With
  ``type_info`` the elements become typed columns (``f0, f1, ...`` for a tuple, ``value`` for a
  basic type); without it they travel pickled, as PyFlink's ``PICKLED_BYTE_ARRAY``, and every
  function gets them back exactly as they are in the collection.
- Java's ``fromElements(e1, e2, ...)``, ``fromData(...)`` and ``fromSequence(from, to)`` (also
  as ``from_elements``, ``from_data``, ``from_sequence``) are ``from_collection`` of those
  elements (the sequence typed ``Types.LONG()``). Every method also has its Java name
  (``getExecutionEnvironment``, ``setParallelism``, ``setRuntimeMode``...).
- ``set_runtime_mode(mode)`` and ``set_max_parallelism(n)`` are the defaults of every
  ``DataStream`` created afterwards without ``runtime_mode=`` / ``key_groups=`` (the max
  parallelism is flinkwin's number of key groups).
- ``set_parallelism(n)`` is Flink's ``parallelism.default``: every window, join or process
  operator built afterwards takes it (as a Flink transformation takes the environment's
  parallelism when it is created) unless its result's own ``set_parallelism`` says otherwise.
  A window stage then runs in ``n`` Spark tasks, at most one per key group; a stream graph
  with ``n > 1`` runs distributed where it can, and in one task, with a warning naming the
  reason, where a rule keeps it there (see :func:`default_parallelism`).

What it records and reads back, changing nothing on Spark: ``enable_checkpointing`` (Spark
checkpoints every micro-batch to the ``checkpoint_location`` given to ``start()``),
``set_buffer_timeout``, ``disable_operator_chaining``, ``add_jars``, ``add_classpaths``, the
configuration passed to ``get_execution_environment`` and ``get_config()``'s settings.
flinkwin's sinks (``print()``, ``add_sink()``, ``start()``) run when they are called: on a static
DataFrame they deliver at once, on a streaming one they start a query. ``execute()`` then runs
the job as Flink's does: it waits for the streaming queries that this environment's
``print()``/``add_sink()`` started (a ported streaming program's last line, which would
otherwise let the script end, and its queries with it, before any micro-batch ran), and raises
a query's failure; with none, it returns at once. ``execute_async()`` returns at once.

This module imports no Spark; ``from_collection`` does, when called.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar

from flinkwin.common.configuration import Configuration
from flinkwin.common.execution_config import PARALLELISM_DEFAULT, ExecutionConfig
from flinkwin.datastream.checkpointing_mode import CheckpointingMode
from flinkwin.datastream.time_characteristic import TimeCharacteristic
from flinkwin.errors import UnsupportedOperationError
from flinkwin.runtime_mode import RuntimeExecutionMode
from flinkwin.types import TypeInformation, Types
from flinkwin.unsupported import CHECKPOINTS, RESTARTS, SOURCES, SOURCES_AND_SINKS

if TYPE_CHECKING:
    from flinkwin.datastream.data_stream import DataStream


class StreamExecutionEnvironment:
    """The process's execution environment (see module docstring)."""

    _current: ClassVar[StreamExecutionEnvironment | None] = None

    def __init__(self) -> None:
        self._config = ExecutionConfig()
        self._configuration = Configuration()
        self._runtime_mode = RuntimeExecutionMode.STREAMING
        self._checkpoint_interval = -1
        self._checkpointing_mode = CheckpointingMode.EXACTLY_ONCE
        self._time_characteristic = TimeCharacteristic.EventTime
        self._buffer_timeout = 100
        self._chaining = True
        self._jars: list[str] = []
        self._classpaths: list[str] = []
        self._sink_queries: list[Any] = []

    @staticmethod
    def get_execution_environment(
        configuration: Configuration | None = None,
    ) -> StreamExecutionEnvironment:
        """The process's environment (created on first call); ``configuration`` is added to
        its recorded configuration."""
        env = StreamExecutionEnvironment._current
        if env is None:
            env = StreamExecutionEnvironment._current = StreamExecutionEnvironment()
        if configuration is not None:
            env._configuration.add_all(configuration)
        return env

    # ------------------------------------------------------------------ source
    def from_collection(
        self, collection: Iterable[Any], type_info: TypeInformation | None = None
    ) -> DataStream:
        """A bounded stream of ``collection``'s elements (see module docstring)."""
        # Spark and DataStream (which imports this module) load only when a collection is read
        import pyarrow as pa
        from pyspark.sql import SparkSession

        from flinkwin.datastream.data_stream import DataStream
        from flinkwin.spark.row_encoder import RowEncoder
        from flinkwin.spark.schema import parse_schema

        if type_info is not None and not isinstance(type_info, TypeInformation):
            raise TypeError(
                f"from_collection type_info must be PyFlink type information, got {type_info!r}"
            )
        spark = SparkSession.getActiveSession() or SparkSession.builder.getOrCreate()
        declared = Types.PICKLED_BYTE_ARRAY() if type_info is None else type_info
        schema = parse_schema(declared, "from_collection type_info")
        time_zone = spark.conf.get("spark.sql.session.timeZone") or "UTC"
        arrays = RowEncoder(schema, time_zone, "from_collection").arrays(list(collection))
        table = pa.Table.from_arrays(arrays, names=schema.fieldNames())
        df = spark.createDataFrame(table, schema)
        # flinkwin wrote these bytes itself: a stream of pickled values without a declared type
        stream = DataStream._own(df, declared)
        stream._origin = "from_collection() (its type_info=)"
        return stream

    def from_source(self, source: Any, watermark_strategy: Any = None,
                    source_name: str = "") -> DataStream:
        """Refused: a connector source is what a port replaces (see ``docs/porting.md``)."""
        raise UnsupportedOperationError(f"from_source(): {SOURCES_AND_SINKS}")

    def add_source(self, source_func: Any, source_name: str = "", type_info: Any = None) -> (
        DataStream
    ):
        """Refused: sources are Spark DataFrames (see ``docs/porting.md``)."""
        raise UnsupportedOperationError(f"add_source(): {SOURCES}")

    def set_restart_strategy(self, restart_strategy_configuration: Any) -> None:
        """Refused: restarts are Spark's (see ``docs/operations.md``)."""
        raise UnsupportedOperationError(f"set_restart_strategy(): {RESTARTS}")

    # ---------------------------------------------------------------- settings
    def get_config(self) -> ExecutionConfig:
        """The execution config (parallelism, max parallelism, watermark interval...)."""
        return self._config

    def get_configuration(self) -> Configuration:
        """The configuration passed to ``get_execution_environment`` (recorded)."""
        return self._configuration

    def set_runtime_mode(self, execution_mode: RuntimeExecutionMode) -> StreamExecutionEnvironment:
        """The runtime mode of every ``DataStream`` created afterwards without
        ``runtime_mode=`` (``STREAMING`` until set, as in PyFlink)."""
        if not isinstance(execution_mode, RuntimeExecutionMode):
            raise TypeError(
                f"set_runtime_mode takes a RuntimeExecutionMode, got {execution_mode!r}"
            )
        self._runtime_mode = execution_mode
        return self

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        """The default parallelism of every operator built afterwards (Flink's
        ``parallelism.default``; see module docstring)."""
        self._config.set_parallelism(parallelism)
        return self

    def get_parallelism(self) -> int:
        """The recorded parallelism, or -1 when none was set."""
        return self._config.get_parallelism()

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        """The number of key groups of every ``DataStream`` created afterwards without
        ``key_groups=`` (flinkwin's key groups are Flink's max parallelism)."""
        self._config.set_max_parallelism(max_parallelism)
        return self

    def get_max_parallelism(self) -> int:
        """The recorded max parallelism, or -1 when none was set."""
        return self._config.get_max_parallelism()

    def enable_checkpointing(
        self, interval: int, mode: CheckpointingMode | None = None
    ) -> StreamExecutionEnvironment:
        """Record the checkpoint interval (ms) and mode: Spark checkpoints every micro-batch
        to the ``checkpoint_location`` given to ``start()``."""
        if not isinstance(interval, int) or interval < 1:
            raise ValueError(f"checkpoint interval must be a positive int (ms), got {interval!r}")
        if mode is not None and not isinstance(mode, CheckpointingMode):
            raise TypeError(f"enable_checkpointing mode must be a CheckpointingMode, got {mode!r}")
        self._checkpoint_interval = interval
        if mode is not None:
            self._checkpointing_mode = mode
        return self

    def get_checkpoint_interval(self) -> int:
        """The recorded checkpoint interval, -1 when checkpointing was not enabled."""
        return self._checkpoint_interval

    def get_checkpointing_mode(self) -> CheckpointingMode:
        return self._checkpointing_mode

    def get_checkpoint_config(self) -> Any:
        """Refused: Flink's checkpoint settings have no Spark counterpart."""
        raise UnsupportedOperationError(f"get_checkpoint_config(): {CHECKPOINTS}")

    def set_stream_time_characteristic(
        self, characteristic: TimeCharacteristic
    ) -> StreamExecutionEnvironment:
        """PyFlink 1.x: ``EventTime`` and ``ProcessingTime`` are recorded (the window
        assigners choose the time); ``IngestionTime`` is refused (see
        :mod:`flinkwin.datastream.time_characteristic`)."""
        if not isinstance(characteristic, TimeCharacteristic):
            raise TypeError(f"expected a TimeCharacteristic, got {characteristic!r}")
        if characteristic is TimeCharacteristic.IngestionTime:
            raise UnsupportedOperationError(
                "TimeCharacteristic.IngestionTime: a Spark source assigns no ingestion time; "
                "add a column with current_timestamp() and use event time on it"
            )
        self._time_characteristic = characteristic
        return self

    def get_stream_time_characteristic(self) -> TimeCharacteristic:
        return self._time_characteristic

    def set_buffer_timeout(self, timeout_millis: int) -> StreamExecutionEnvironment:
        """Record Flink's network buffer timeout; Spark has no such buffer."""
        self._buffer_timeout = int(timeout_millis)
        return self

    def get_buffer_timeout(self) -> int:
        return self._buffer_timeout

    def disable_operator_chaining(self) -> StreamExecutionEnvironment:
        """Record it; Spark plans its own stages."""
        self._chaining = False
        return self

    def is_chaining_enabled(self) -> bool:
        return self._chaining

    def add_jars(self, *jars_path: str) -> None:
        """Record connector jars; Spark's jars are its own settings (``spark.jars``)."""
        self._jars.extend(jars_path)

    def add_classpaths(self, *classpaths: str) -> None:
        """Record classpaths; Spark's classpath is its own setting."""
        self._classpaths.extend(classpaths)

    def execute(self, job_name: str | None = None) -> None:
        """Run the job as Flink's ``execute()``: wait until every streaming query this
        environment's ``print()``/``add_sink()`` started has ended (stopped, or failed: its
        error is raised); static sinks ran when they were called (see module docstring)."""
        queries, self._sink_queries = self._sink_queries, []
        for query in queries:
            query.awaitTermination()

    @staticmethod
    def _sink_started(query: Any) -> None:
        """Called by ``print()``/``add_sink()`` with the streaming query they started: the
        current environment's ``execute()`` waits for it (a program without an environment
        has no ``execute()`` to wait)."""
        env = StreamExecutionEnvironment._current
        if env is not None:
            env._sink_queries.append(query)

    def execute_async(self, job_name: str = "Flink Streaming Job") -> None:
        """Nothing left to run, as ``execute``."""

    # ------------------------------------------------ Java's sources, beside from_collection
    def from_elements(self, *elements: Any) -> DataStream:
        """Java's ``fromElements(e1, e2, ...)``: ``from_collection`` of the elements."""
        return self.from_collection(list(elements))

    def from_data(self, *data: Any, type_info: TypeInformation | None = None) -> DataStream:
        """Java's ``fromData`` (Flink 1.19 and 2.x): ``fromData(e1, e2, ...)``, or one list or
        tuple of the elements (Java's ``fromData(Collection)``), with an optional
        ``type_info`` as ``from_collection``'s."""
        elements = list(data[0]) if len(data) == 1 and isinstance(data[0], (list, tuple)) \
            else list(data)
        return self.from_collection(elements, type_info)

    def from_sequence(self, from_: int, to: int) -> DataStream:
        """Java's ``fromSequence(from, to)``: the longs ``from`` to ``to``, both included, in
        order (Flink's parallel source at parallelism 1)."""
        if from_ > to:
            raise ValueError(f"fromSequence: from ({from_}) must be at most to ({to})")
        return self.from_collection(range(from_, to + 1), Types.LONG())

    # ------------------------------------------------------------------ Flink's Java names
    getExecutionEnvironment = get_execution_environment  # noqa: N815
    fromCollection = from_collection  # noqa: N815
    fromElements = from_elements  # noqa: N815
    fromData = from_data  # noqa: N815
    fromSequence = from_sequence  # noqa: N815
    fromSource = from_source  # noqa: N815
    addSource = add_source  # noqa: N815
    setRestartStrategy = set_restart_strategy  # noqa: N815
    getConfig = get_config  # noqa: N815
    getConfiguration = get_configuration  # noqa: N815
    setRuntimeMode = set_runtime_mode  # noqa: N815
    setParallelism = set_parallelism  # noqa: N815
    getParallelism = get_parallelism  # noqa: N815
    setMaxParallelism = set_max_parallelism  # noqa: N815
    getMaxParallelism = get_max_parallelism  # noqa: N815
    enableCheckpointing = enable_checkpointing  # noqa: N815
    getCheckpointInterval = get_checkpoint_interval  # noqa: N815
    getCheckpointingMode = get_checkpointing_mode  # noqa: N815
    getCheckpointConfig = get_checkpoint_config  # noqa: N815
    setStreamTimeCharacteristic = set_stream_time_characteristic  # noqa: N815
    getStreamTimeCharacteristic = get_stream_time_characteristic  # noqa: N815
    setBufferTimeout = set_buffer_timeout  # noqa: N815
    getBufferTimeout = get_buffer_timeout  # noqa: N815
    disableOperatorChaining = disable_operator_chaining  # noqa: N815
    isChainingEnabled = is_chaining_enabled  # noqa: N815
    executeAsync = execute_async  # noqa: N815


def stream_defaults() -> tuple[RuntimeExecutionMode, int | None]:
    """The runtime mode and key groups (None: flinkwin's default) a ``DataStream`` created now
    takes when it is not given them: the environment's, if a program made one."""
    env = StreamExecutionEnvironment._current
    if env is None:
        return RuntimeExecutionMode.STREAMING, None
    max_parallelism = env.get_max_parallelism()
    return env._runtime_mode, None if max_parallelism == PARALLELISM_DEFAULT else max_parallelism


def default_parallelism() -> int | None:
    """The parallelism an operator built now takes when its result sets none: the
    environment's ``set_parallelism(n)``, if a program made an environment and set it (None:
    flinkwin's own choice, see :mod:`flinkwin.spark.parallelism`). Flink refuses a job whose
    parallelism is higher than its max parallelism; so does this, when both are set on the
    environment."""
    env = StreamExecutionEnvironment._current
    if env is None or env.get_parallelism() == PARALLELISM_DEFAULT:
        return None
    parallelism, max_parallelism = env.get_parallelism(), env.get_max_parallelism()
    if max_parallelism != PARALLELISM_DEFAULT and parallelism > max_parallelism:
        raise ValueError(
            f"the environment's parallelism ({parallelism}) is higher than its max parallelism "
            f"({max_parallelism}), which Flink refuses (\"parallelism is higher than the max "
            "parallelism\"): lower the parallelism or increase the max parallelism (flinkwin's "
            "key groups)"
        )
    return parallelism


__all__ = ["StreamExecutionEnvironment", "default_parallelism", "stream_defaults"]
