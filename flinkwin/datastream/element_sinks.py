"""The sinks of a :class:`~flinkwin.datastream.data_stream.DataStream` that hand its elements
to Python, as PyFlink's do: ``execute_and_collect``, ``print`` and ``add_sink`` (``sink_to``, a
connector sink, is refused). Each runs when called: a static stream's elements reach the driver
and the call returns None (``execute_and_collect`` returns them); a streaming stream's start a
query delivering each micro-batch, which the call returns."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery

from flinkwin.datastream.closeable_iterator import CloseableIterator
from flinkwin.datastream.stream_execution_environment import StreamExecutionEnvironment
from flinkwin.errors import UnsupportedOperationError
from flinkwin.functions.transform import as_callable
from flinkwin.spark.elements import RECORD_TIMESTAMP_COLUMN
from flinkwin.spark.printing import element_shaper, printer
from flinkwin.spark.queries import settle_on_available_input
from flinkwin.spark.schema import is_pickled
from flinkwin.spark.sizing import state_partitions, state_store
from flinkwin.unsupported import SOURCES_AND_SINKS

if TYPE_CHECKING:
    from flinkwin.spark.sizing import StageSize
    from flinkwin.types import TypeInformation


class ElementSinks:
    """Mixed into ``DataStream``: the sinks that hand it elements to Python (see module
    docstring)."""

    _type_info: TypeInformation | None
    _elements_df: Callable[[], DataFrame]
    _public_df: Callable[[], DataFrame]
    _stage_size: Callable[[], StageSize | None]
    _wakes_keys_in_processing_time: Callable[[], bool]

    def execute_and_collect(self, job_execution_name: str | None = None,
                            limit: int | None = None) -> list[Any]:
        """All elements of a static stream, shaped as PyFlink returns them (tuples for
        ``Types.TUPLE``, the value for a basic type, Rows otherwise): without ``limit`` a
        :class:`~flinkwin.datastream.closeable_iterator.CloseableIterator` (PyFlink's, also a
        list: ``with ds.execute_and_collect() as results: ...``), with it the first ``limit``
        elements as a list."""
        df = self._static_df("execute_and_collect")
        rows = df.collect() if limit is None else df.limit(limit).collect()
        shape = element_shaper(df.schema, self._type_info)
        elements = [shape(row) for row in rows]
        return elements if limit is not None else CloseableIterator(elements)

    def print(self, sink_identifier: str | None = None) -> StreamingQuery | None:
        """Flink's print sink: one line per element as PyFlink prints it (``(a,1)`` for a
        tuple, ``+I[a,1]`` for a ``Types.ROW`` row, ``{a=1}`` for a map: Java's ``toString``,
        see :mod:`flinkwin.spark.printing`; values without a declared type as Python's
        ``str``), prefixed ``"<sink_identifier>> "`` when given. Runs now: a static stream
        prints from the driver and returns None; a streaming one starts a query printing each
        micro-batch and returns it."""
        prefix = "" if sink_identifier is None else f"{sink_identifier}> "
        schema = self._public_df().schema
        text = printer(self._type_info, is_pickled(schema), schema)

        def emit(value: Any, _context: Any) -> None:
            print(prefix + text(value))

        return self._run_sink(emit)

    def add_sink(self, sink_func: Any) -> StreamingQuery | None:
        """Call ``sink_func.invoke(value, context)`` (a ``SinkFunction``) for each element,
        shaped as for ``execute_and_collect``; runs now, as ``print()``."""
        invoke = as_callable(sink_func, "invoke", "add_sink")
        return self._run_sink(invoke)

    def sink_to(self, sink: Any) -> None:
        """Refused: a connector sink is what a port replaces; use ``print()``, ``add_sink()``,
        ``start()`` or ``toDF()``."""
        raise UnsupportedOperationError(f"sink_to(): {SOURCES_AND_SINKS}")

    def _run_sink(self, invoke: Any) -> StreamingQuery | None:
        """Deliver every element to ``invoke(value, context)`` in the driver (see ``print``)."""
        self._running()
        df = self._elements_df()
        carried = RECORD_TIMESTAMP_COLUMN in df.columns
        schema = self._public_df().schema
        shape = element_shaper(schema, self._type_info)
        names = schema.fieldNames()

        def deliver(rows: list[Any]) -> None:
            for row in rows:
                stamp = row[RECORD_TIMESTAMP_COLUMN] if carried else None
                invoke(shape([row[n] for n in names]), SinkContext(stamp))

        if not df.isStreaming:
            deliver(df.collect())
            return None
        writer = df.writeStream.foreachBatch(lambda batch, _id: deliver(batch.collect()))
        session, size = df.sparkSession, self._stage_size()
        with state_partitions(
            session, None if size is None else size.partitions(session)
        ), state_store(session, size is not None and size.rocksdb):
            query = writer.start()
        StreamExecutionEnvironment._sink_started(query)  # env.execute() waits for it, as Flink's
        if self._wakes_keys_in_processing_time():
            return settle_on_available_input(query)
        return query

    def _running(self) -> None:
        """Called when the stream is about to run (a sink, ``toDF()``): a stream graph warns
        there when it runs in one task against the environment's parallelism
        (:mod:`flinkwin.datastream.graph_stream`)."""

    def _static_df(self, what: str) -> DataFrame:
        self._running()
        df = self._public_df()
        if df.isStreaming:
            raise ValueError(f"{what} needs a static DataFrame; start a query on a streaming one")
        return df

    addSink = add_sink
    executeAndCollect = execute_and_collect


class SinkContext:
    """The context a sink function gets: the element's timestamp (None when it has none)."""

    __slots__ = ("_timestamp",)

    def __init__(self, timestamp: int | None) -> None:
        self._timestamp = timestamp

    def timestamp(self) -> int | None:
        return self._timestamp


__all__ = ["ElementSinks", "SinkContext"]
