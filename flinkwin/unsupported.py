"""The PyFlink names and modules flinkwin does not provide, each with what to do instead.

PyFlink programs port by replacing the package name ``pyflink`` with ``flinkwin``; an import of
something flinkwin cannot honour raises an ``ImportError`` saying why and what to write instead
(``docs/porting.md`` lists them). Names are refused by the modules' ``__getattr__``
(:func:`missing`); whole modules (connectors, formats, ``pyflink.table``...) by an import hook
(:class:`UnsupportedModuleFinder`) that only answers for the modules listed here.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

SOURCES_AND_SINKS = (
    "connectors are sources and sinks, which a port replaces: read with spark.read / "
    "spark.readStream and wrap the DataFrame in DataStream(df, type_info=...); write with "
    "print(), add_sink(...), result.start(main=..., side_outputs=...) or result.toDF()"
)
FORMATS = (
    "formats and (de)serialization schemas belong to connectors: let Spark read and write the "
    "format (spark.readStream.format('json'|'csv'|'avro'|'parquet')...) and wrap the DataFrame "
    "in DataStream(df, type_info=...)"
)
TABLE = (
    "flinkwin ports the DataStream API only; for SQL and tables use Spark SQL on the DataFrames "
    "(DataStream(df).toDF() and back with DataStream(df, type_info=...))"
)
CHECKPOINTS = (
    "checkpoints and state storage are Spark's: pass checkpoint_location= to result.start(...) "
    "(or writeStream.option('checkpointLocation', ...)); the state store is Spark's setting "
    "spark.sql.streaming.stateStore.providerClass (see docs/operations.md)"
)
RESTARTS = (
    "restarts are Spark's: a failed query is started again and resumes from its checkpoint "
    "(see docs/operations.md)"
)
JOBS = (
    "flinkwin has no job client: sinks run when they are called (print(), add_sink(), "
    "start()), env.execute() has nothing left to run and returns None; a streaming sink "
    "returns Spark's StreamingQuery to wait on or stop"
)
RESOURCES = (
    "slots and resources are Spark's (executors and cores); slot_sharing_group('name') with a "
    "name is accepted as a hint and changes nothing"
)
TWO_INPUTS = (
    "broadcast streams and broadcast state are not supported; two streams meet with "
    "connect(...) and a co-function (a.connect(b).key_by(k1, k2).process("
    "KeyedCoProcessFunction) keeps each key's rules or latest values in keyed state), "
    "union(...), a window join or coGroup, or an interval join, or join the DataFrames with "
    "Spark before DataStream(df)"
)
PARTITIONING = "partitioning is Spark's: key_by(...) is the only partitioning flinkwin honours"
SOURCES = (
    "sources are Spark DataFrames: DataStream(spark.readStream..., type_info=...) or "
    "env.from_collection(...)"
)
STATE_TTL = (
    "state TTL is not supported: window state is cleared when the window is purged; "
    "keyed state lives as long as the key's window state"
)
OPTIONS = (
    "Flink's typed configuration options have no Spark meaning: set Spark options on the "
    "SparkSession; Configuration (set_string(...)...) is accepted and recorded"
)
INSTANT = "Types.INSTANT() values are Python datetimes in flinkwin; Instant is not provided"
ASYNC = (
    "async I/O is not supported: call the service in a map/flat_map (its open() can set up a "
    "client), or enrich the DataFrame with Spark (mapInPandas, a join) before DataStream(df)"
)
JVM = (
    "PyFlink's bridges to Java objects have no counterpart: flinkwin runs no JVM code of its "
    "own (declare a function's output type with output_type=, configure Spark on the "
    "SparkSession)"
)
INTERNAL = (
    "it is internal to PyFlink's runtime, not a user API: write the function itself (a "
    "ProcessWindowFunction, WindowFunction, ReduceFunction...) and pass it to the stream"
)
TYPE_INFO_CLASSES = (
    "flinkwin's type information is built with the Types factories only: Types.STRING(), "
    "Types.LONG(), Types.ROW([...]), Types.ROW_NAMED(names, [...]), Types.TUPLE([...]), "
    "Types.MAP(k, v), Types.LIST(t), Types.PRIMITIVE_ARRAY(t), Types.BASIC_ARRAY(t), "
    "Types.OBJECT_ARRAY(t), Types.SQL_DATE(), Types.SQL_TIMESTAMP(), Types.INSTANT(), "
    "Types.PICKLED_BYTE_ARRAY() (compare with ==, e.g. t == Types.STRING())"
)
CACHE = (
    "cache() is not supported: cache the DataFrame with Spark (stream.toDF().cache()) and "
    "wrap it again with DataStream(df, type_info=...)"
)

#: Module (flinkwin name) -> why it is refused; its submodules are refused with it.
MODULES: dict[str, str] = {
    "flinkwin.datastream.connectors": SOURCES_AND_SINKS,
    "flinkwin.datastream.formats": FORMATS,
    "flinkwin.common.serialization": FORMATS,
    "flinkwin.table": TABLE,
    "flinkwin.datastream.state_backend": CHECKPOINTS,
    "flinkwin.datastream.checkpoint_storage": CHECKPOINTS,
    "flinkwin.datastream.checkpoint_config": CHECKPOINTS,
    "flinkwin.datastream.externalized_checkpoint_retention": CHECKPOINTS,
    "flinkwin.common.restart_strategy": RESTARTS,
    "flinkwin.common.job_client": JOBS,
    "flinkwin.common.job_execution_result": JOBS,
    "flinkwin.datastream.slot_sharing_group": RESOURCES,
    "flinkwin.datastream.async_data_stream": ASYNC,
    "flinkwin.datastream.async_retry_predicates": ASYNC,
    "flinkwin.datastream.async_retry_strategies": ASYNC,
    "flinkwin.datastream.utils": JVM,
    "flinkwin.common.completable_future": JOBS,
    "flinkwin.common.config_options": OPTIONS,
    "flinkwin.common.input_dependency_constraint": JOBS,
    "flinkwin.common.io": SOURCES,
    "flinkwin.common.job_id": JOBS,
    "flinkwin.common.job_status": JOBS,
    "flinkwin.common.utils": JVM,
}

#: Name -> why it is refused, wherever PyFlink exports it.
NAMES: dict[str, str] = {
    **dict.fromkeys(
        ["BroadcastStream", "BroadcastConnectedStream", "BaseBroadcastProcessFunction",
         "BroadcastProcessFunction", "KeyedBroadcastProcessFunction", "ReadOnlyBroadcastState",
         "BroadcastState", "OperatorStateStore"],
        TWO_INPUTS,
    ),
    **dict.fromkeys(
        ["CheckpointConfig", "ExternalizedCheckpointCleanup", "ExternalizedCheckpointRetention",
         "StateBackend", "HashMapStateBackend", "EmbeddedRocksDBStateBackend",
         "CustomStateBackend", "PredefinedOptions", "MemoryStateBackend", "FsStateBackend",
         "RocksDBStateBackend", "CheckpointStorage", "JobManagerCheckpointStorage",
         "FileSystemCheckpointStorage", "CustomCheckpointStorage"],
        CHECKPOINTS,
    ),
    **dict.fromkeys(["SlotSharingGroup", "MemorySize"], RESOURCES),
    **dict.fromkeys(["DataStreamSink"], SOURCES_AND_SINKS),
    **dict.fromkeys(["SourceFunction"], SOURCES),
    **dict.fromkeys(["Partitioner"], PARTITIONING),
    **dict.fromkeys(["StateTtlConfig"], STATE_TTL),
    **dict.fromkeys(
        ["SerializationSchema", "DeserializationSchema", "SimpleStringSchema",
         "ByteArraySchema", "Encoder", "JsonRowSerializationSchema",
         "JsonRowDeserializationSchema", "CsvRowSerializationSchema",
         "CsvRowDeserializationSchema", "AvroRowSerializationSchema",
         "AvroRowDeserializationSchema"],
        FORMATS,
    ),
    **dict.fromkeys(["RestartStrategies", "RestartStrategyConfiguration"], RESTARTS),
    **dict.fromkeys(
        ["CompletableFuture", "JobClient", "JobExecutionResult", "JobID", "JobStatus",
         "InputDependencyConstraint"],
        JOBS,
    ),
    **dict.fromkeys(["ConfigOption", "ConfigOptions"], OPTIONS),
    **dict.fromkeys(["AssignerWithPeriodicWatermarksWrapper"], (
        "legacy watermark assigners are not supported: use WatermarkStrategy "
        "(for_bounded_out_of_orderness / for_monotonous_timestamps)"
    )),
    **dict.fromkeys(["Instant"], INSTANT),
    **dict.fromkeys(
        ["AsyncDataStream", "AsyncFunction", "AsyncFunctionDescriptor", "AsyncRetryPredicate",
         "AsyncRetryStrategy"],
        ASYNC,
    ),
    **dict.fromkeys(
        ["FunctionWrapper", "ReduceFunctionWrapper", "JavaFunctionWrapper",
         "InternalWindowFunction", "InternalSingleValueWindowFunction",
         "InternalSingleValueAllWindowFunction", "InternalIterableWindowFunction",
         "InternalIterableAllWindowFunction", "InternalProcessWindowContext",
         "InternalProcessAllWindowContext", "InternalSingleValueProcessWindowFunction",
         "InternalSingleValueProcessAllWindowFunction", "InternalIterableProcessWindowFunction",
         "InternalIterableProcessAllWindowFunction", "WindowOperationDescriptor",
         "VoidNamespaceSerializer", "void"],
        INTERNAL,
    ),
    **dict.fromkeys(
        ["BasicType", "BasicTypeInfo", "InstantTypeInfo", "SqlTimeTypeInfo",
         "PrimitiveArrayTypeInfo", "BasicArrayTypeInfo", "ObjectArrayTypeInfo",
         "PickledBytesTypeInfo", "RowTypeInfo", "TupleTypeInfo", "DateTypeInfo", "TimeTypeInfo",
         "TimestampTypeInfo", "ListTypeInfo", "MapTypeInfo", "LocalTimeTypeInfo",
         "ExternalTypeInfo"],
        TYPE_INFO_CLASSES,
    ),
    **dict.fromkeys(["CachedDataStream"], CACHE),
}


def missing(module: str, name: str, names: Sequence[str] = ()) -> Exception:
    """What ``module.__getattr__(name)`` raises: an ``ImportError`` naming the reason for a
    PyFlink name flinkwin refuses (``names``: the ones this module's PyFlink counterpart
    exports; all of :data:`NAMES` when empty), an ``AttributeError`` otherwise."""
    if name in NAMES and (not names or name in names):
        pyflink = module.replace("flinkwin", "pyflink", 1)
        return ImportError(
            f"flinkwin does not provide {pyflink}.{name}: {NAMES[name]}", name=module
        )
    return AttributeError(f"module {module!r} has no attribute {name!r}")


def refused_module(fullname: str) -> str | None:
    """The reason ``fullname`` (or a package above it) is refused, or None."""
    for module, reason in MODULES.items():
        if fullname == module or fullname.startswith(module + "."):
            return reason
    return None


class UnsupportedModuleFinder(importlib.abc.MetaPathFinder):
    """Answers imports of the refused modules (:data:`MODULES`) with an ``ImportError`` saying
    why; placed after the regular finders, so it only sees modules that do not exist."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        reason = refused_module(fullname)
        if reason is None:
            return None
        pyflink = fullname.replace("flinkwin", "pyflink", 1)
        raise ImportError(f"flinkwin does not provide {pyflink}: {reason}", name=fullname)


def install() -> None:
    """Register :class:`UnsupportedModuleFinder` once (``import flinkwin`` does)."""
    if not any(isinstance(f, UnsupportedModuleFinder) for f in sys.meta_path):
        sys.meta_path.append(UnsupportedModuleFinder())


__all__ = ["MODULES", "NAMES", "UnsupportedModuleFinder", "install", "missing"]
