"""The Spark side of flinkwin: compiling a window pipeline into one stateful stage
(:mod:`~flinkwin.spark.compiler`), the per-key-group function Spark runs
(:mod:`~flinkwin.spark.runtime`), arrival order (:mod:`~flinkwin.spark.arrival`), key groups
spread evenly over shuffle partitions
(:mod:`~flinkwin.spark.key_groups`), output schemas (:mod:`~flinkwin.spark.schema`), the query
that feeds the sinks (:mod:`~flinkwin.spark.sinks`; the sinks are :mod:`flinkwin.sinks`),
``result.writeStream`` (:mod:`~flinkwin.spark.writer`) and restart safety
(:mod:`~flinkwin.spark.restart`)."""

from flinkwin.spark.pipeline import PipelineError
from flinkwin.spark.restart import IncompatibleRestartError
from flinkwin.spark.row_encoder import SchemaMismatchError
from flinkwin.spark.runtime import KeyGroupMismatchError
from flinkwin.spark.sinks import (
    ConsoleSink,
    DeltaSink,
    DeltaUpsertSink,
    FileSink,
    ForeachBatchSink,
    MemorySink,
    Sink,
    as_sink,
)
from flinkwin.spark.writer import WindowDataStreamWriter

__all__ = [
    "ConsoleSink",
    "DeltaSink",
    "DeltaUpsertSink",
    "FileSink",
    "ForeachBatchSink",
    "IncompatibleRestartError",
    "KeyGroupMismatchError",
    "MemorySink",
    "PipelineError",
    "SchemaMismatchError",
    "Sink",
    "WindowDataStreamWriter",
    "as_sink",
]
