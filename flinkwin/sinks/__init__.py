"""Sinks for a pipeline's outputs: the main output and every side output can each go to its
own sink, all fed by one streaming query (:func:`flinkwin.spark.sinks.start_query`).

- :class:`DeltaSink`: a Delta table (Spark's Delta or delta-rs), exactly once;
- :class:`DeltaUpsertSink`: a window result as one current row per key and window, exactly once;
- :class:`FileSink`: parquet/json/csv/orc/text files, exactly once;
- :class:`ForeachBatchSink`: ``fn(df, batch_id)``, the function's own guarantee;
- :class:`MemorySink`: driver memory and a temp view, for tests (at-least-once);
- :class:`ConsoleSink`: prints batches, for debugging (at-least-once).

See ``docs/sinks.md`` for each guarantee and why it holds.
"""

from .base import Sink, SinkContext, WindowOutput
from .console import ConsoleSink
from .delta import DeltaSink, DeltaTableMismatchError
from .delta_upsert import DeltaUpsertSink, UpsertRefusedError
from .files import FileSink
from .foreach_batch import ForeachBatchSink
from .memory import MemorySink
from .resolve import as_sink

__all__ = [
    "ConsoleSink",
    "DeltaSink",
    "DeltaTableMismatchError",
    "DeltaUpsertSink",
    "FileSink",
    "ForeachBatchSink",
    "MemorySink",
    "Sink",
    "SinkContext",
    "UpsertRefusedError",
    "WindowOutput",
    "as_sink",
]
