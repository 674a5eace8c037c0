"""``result.writeStream``: Spark's ``DataStreamWriter`` interface on a flinkwin result.

    query = (result.writeStream
             .format("parquet")
             .option("checkpointLocation", "/chk/clicks")
             .outputMode("append")
             .trigger(processingTime="1 minute")
             .queryName("clicks")
             .partitionBy("user")
             .sideOutput(late, "parquet:/data/late_clicks")   # flinkwin's one addition
             .start("/data/clicks"))

A Spark user's existing ``writeStream`` chain works unchanged on a window result and, like
:meth:`flinkwin.datastream.window_result_stream.WindowResultStream.start`, runs ONE streaming
query: the window stage is computed once per micro-batch and its main output and every side
output are written to their sinks (:func:`flinkwin.spark.sinks.start_query`).
``sideOutput(tag, sink)`` adds a side output (late data, or a tag a window function emits to)
with its own sink: a :class:`~flinkwin.spark.sinks.Sink` (``DeltaSink``, ``FileSink``...), a
short string (``"parquet:/path"``, ``"memory:<view>"``, ``"console"``) or a
``fn(df, batch_id)``.

The main output's sink is chosen as Spark chooses its sink:

===============================  ===================================================
``format(...)``                   sink
===============================  ===================================================
parquet, json, csv, orc, text     ``FileSink(path, format, partition_by, **options)``
delta                             ``flinkwin.sinks.DeltaSink``: ``start(path)``, ``toTable(name)``
delta-upsert                      ``flinkwin.sinks.DeltaUpsertSink``: the same, one row per key
                                  and window (option ``keys``: comma-separated key columns)
memory                            ``MemorySink(queryName)``: the temporary view ``queryName``
console                           ``ConsoleSink`` (options ``numRows``, ``truncate``)
``foreachBatch(fn)``              ``ForeachBatchSink(fn)``
===============================  ===================================================

Without ``format`` the session's ``spark.sql.sources.default`` is used, as in Spark. Window
results are final once emitted, so the output mode is ``append`` only; Spark's continuous
trigger and ``foreach`` (per-row writers) are not supported (each fails with the reason).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql.streaming import StreamingQuery

from flinkwin.output_tag import OutputTag
from flinkwin.sinks.resolve import FILE_FORMATS as _FILE_FORMATS

from .sinks import (
    ConsoleSink,
    DeltaSink,
    DeltaUpsertSink,
    FileSink,
    ForeachBatchSink,
    MemorySink,
    Sink,
)

if TYPE_CHECKING:
    from flinkwin.datastream.window_result_stream import WindowResultStream

_CONSOLE_OPTIONS = {"numrows", "truncate"}
_TRIGGERS = ("processingTime", "once", "continuous", "availableNow")


class WindowDataStreamWriter:
    """Spark's ``DataStreamWriter`` for a flinkwin window result (see module docstring).

    Every setter returns the writer itself, as in Spark; nothing runs before ``start`` or
    ``toTable``.
    """

    def __init__(self, result: WindowResultStream) -> None:
        self._result = result
        self._format: str | None = None
        self._options: dict[str, str] = {}
        self._output_mode = "append"
        self._trigger: dict[str, Any] | None = None
        self._query_name: str | None = None
        self._partition_by: list[str] | None = None
        self._foreach_batch: Any = None
        self._side_outputs: dict[OutputTag, Any] = {}

    # ------------------------------------------------------------------ Spark's setters
    def format(self, source: str) -> WindowDataStreamWriter:
        """The main output's sink format (see the module docstring's table)."""
        if not isinstance(source, str) or not source:
            raise TypeError(f"format() takes a format name, got {source!r}")
        self._format = source
        self._foreach_batch = None
        return self

    def option(self, key: str, value: Any) -> WindowDataStreamWriter:
        """One option: ``checkpointLocation`` for the query, anything else for the sink."""
        self._options[str(key)] = _to_str(value)
        return self

    def options(self, **options: Any) -> WindowDataStreamWriter:
        """Several options at once (see :meth:`option`)."""
        for key, value in options.items():
            self.option(key, value)
        return self

    def outputMode(self, outputMode: str) -> WindowDataStreamWriter:  # noqa: N802, N803
        """Only ``append``: a fired window's result is final once emitted (a window that fires
        again, e.g. on a late element within the allowed lateness, emits a new row, as Flink
        does), so Spark's ``update`` and ``complete`` modes have nothing to update."""
        mode = str(outputMode).lower()
        if mode != "append":
            raise ValueError(
                f"outputMode({outputMode!r}) is not supported: a window result is final once "
                "emitted (each firing is a new row, as in Flink), so a flinkwin query writes "
                "in 'append' mode only"
            )
        self._output_mode = mode
        return self

    def trigger(
        self,
        *,
        processingTime: str | None = None,  # noqa: N803
        once: bool | None = None,
        continuous: str | None = None,
        availableNow: bool | None = None,  # noqa: N803
    ) -> WindowDataStreamWriter:
        """Spark's trigger: exactly one of ``processingTime``, ``once``, ``availableNow``
        (``continuous`` is not supported: Spark's continuous processing has no stateful
        operators)."""
        given = {
            name: value for name, value in zip(
                _TRIGGERS, (processingTime, once, continuous, availableNow)
            ) if value is not None
        }
        if len(given) != 1:
            raise ValueError(
                f"trigger() takes exactly one of {', '.join(_TRIGGERS)}; got {given or 'none'}"
            )
        if "continuous" in given:
            raise ValueError(
                "trigger(continuous=...) is not supported: Spark's continuous processing runs "
                "no stateful operators, and a window stage is one; use processingTime"
            )
        self._trigger = given
        return self

    def queryName(self, queryName: str) -> WindowDataStreamWriter:  # noqa: N802, N803
        """The query's name (also the view name of the ``memory`` format)."""
        if not isinstance(queryName, str) or not queryName.strip():
            raise ValueError(f"queryName must be a non-empty string, got {queryName!r}")
        self._query_name = queryName
        return self

    def partitionBy(self, *cols: str | list[str]) -> WindowDataStreamWriter:  # noqa: N802
        """Partition the main output's files or table by ``cols``."""
        if len(cols) == 1 and isinstance(cols[0], (list, tuple)):
            cols = tuple(cols[0])
        if not all(isinstance(c, str) for c in cols):
            raise TypeError(f"partitionBy takes column names, got {cols!r}")
        self._partition_by = list(cols)  # type: ignore[arg-type]
        return self

    def foreachBatch(self, func: Any) -> WindowDataStreamWriter:  # noqa: N802
        """Call ``func(df, batch_id)`` with each micro-batch of the main output."""
        if not callable(func):
            raise TypeError(f"foreachBatch takes a function (df, batch_id), got {func!r}")
        self._foreach_batch = func
        self._format = None
        return self

    def foreach(self, f: Any) -> WindowDataStreamWriter:
        """Not supported: use :meth:`foreachBatch` (a flinkwin query delivers each output
        batch by batch to its sink)."""
        raise ValueError(
            "foreach() is not supported on a flinkwin result: every output is written batch by "
            "batch; use foreachBatch(lambda df, batch_id: ...) and iterate the rows there"
        )

    # --------------------------------------------------------------- flinkwin's addition
    def sideOutput(self, tag: OutputTag, sink: Any) -> WindowDataStreamWriter:  # noqa: N802
        """Write side output ``tag`` to ``sink`` in the same query (the same stateful stage
        and micro-batches as the main output). ``sink`` is anything ``start(side_outputs=
        {tag: sink})`` takes: a Sink such as ``DeltaSink(...)``, ``"parquet:/path"``,
        ``"memory:<view>"``, ``"console"`` or a ``fn(df, batch_id)``."""
        if not isinstance(tag, OutputTag):
            raise TypeError(f"sideOutput takes an OutputTag first, got {tag!r}")
        if sink is None:
            raise ValueError(f"sideOutput({tag!r}, ...) needs a sink")
        self._side_outputs[tag] = sink
        return self

    side_output = sideOutput

    # -------------------------------------------------------------------------- running
    def start(
        self,
        path: str | None = None,
        format: str | None = None,  # noqa: A002 (Spark's name)
        outputMode: str | None = None,  # noqa: N803
        partitionBy: str | list[str] | None = None,  # noqa: N803
        queryName: str | None = None,  # noqa: N803
        **options: Any,
    ) -> StreamingQuery:
        """Start the query, writing the main output to ``path`` (for file and delta formats)
        and each side output to its sink. Returns the one ``StreamingQuery``."""
        self._apply(format, outputMode, partitionBy, queryName, options)
        if path is not None:
            self._options["path"] = _to_str(path)
        return self._launch(self._main_sink(table=None))

    def toTable(  # noqa: N802
        self,
        tableName: str,  # noqa: N803
        format: str | None = None,  # noqa: A002
        outputMode: str | None = None,  # noqa: N803
        partitionBy: str | list[str] | None = None,  # noqa: N803
        queryName: str | None = None,  # noqa: N803
        **options: Any,
    ) -> StreamingQuery:
        """Start the query, appending the main output to the catalog table ``tableName``
        (Delta tables only: format ``delta`` or a session whose default source is delta)."""
        if not isinstance(tableName, str) or not tableName:
            raise ValueError(f"toTable needs a table name, got {tableName!r}")
        self._apply(format, outputMode, partitionBy, queryName, options)
        return self._launch(self._main_sink(table=tableName))

    # -------------------------------------------------------------------------- helpers
    def _apply(
        self,
        format: str | None,  # noqa: A002
        output_mode: str | None,
        partition_by: str | list[str] | None,
        query_name: str | None,
        options: dict[str, Any],
    ) -> None:
        if format is not None:
            self.format(format)
        if output_mode is not None:
            self.outputMode(output_mode)
        if partition_by is not None:
            self.partitionBy(partition_by)
        if query_name is not None:
            self.queryName(query_name)
        self.options(**options)

    def _get(self, name: str) -> str | None:
        """Option ``name`` (option names are case-insensitive in Spark)."""
        return next((v for k, v in self._options.items() if k.lower() == name.lower()), None)

    def _main_sink(self, table: str | None) -> Sink:
        options = dict(self._options)
        options.pop(next((k for k in options if k.lower() == "checkpointlocation"), ""), None)
        path = options.pop(next((k for k in options if k.lower() == "path"), ""), None)
        if self._foreach_batch is not None:
            self._no_extras("foreachBatch", options, path, table)
            return ForeachBatchSink(self._foreach_batch)
        session = self._result._public_df().sparkSession
        fmt = (self._format or session.conf.get("spark.sql.sources.default", "parquet")
               or "parquet").lower()
        if fmt in ("delta", "delta-upsert"):
            return self._delta(path, table, options, upsert=fmt == "delta-upsert")
        if table is not None:
            raise ValueError(
                f"toTable({table!r}) with format {fmt!r}: flinkwin writes catalog tables as "
                "Delta tables only (a replayed batch must not append twice); use "
                "format('delta').toTable(...), or start(path) to write files"
            )
        if fmt in _FILE_FORMATS:
            if path is None:
                raise ValueError(f"format {fmt!r} needs a path: start('<path>')")
            return FileSink(path, format=fmt, partition_by=self._partition_by, **options)
        if fmt == "memory":
            self._no_extras("memory", options, path, table)
            if self._query_name is None:
                raise ValueError("queryName must be specified for the memory format (it names "
                                 "the temporary view), as in Spark")
            return MemorySink(self._query_name)
        if fmt == "console":
            unknown = [k for k in options if k.lower() not in _CONSOLE_OPTIONS]
            self._no_extras("console", {k: options[k] for k in unknown}, path, table)
            num_rows = next((v for k, v in options.items() if k.lower() == "numrows"), "20")
            truncate = next((v for k, v in options.items() if k.lower() == "truncate"), "true")
            return ConsoleSink(num_rows=int(num_rows), truncate=truncate.lower() == "true")
        raise ValueError(
            f"format {fmt!r} is not supported for a flinkwin result; supported: "
            f"{', '.join((*_FILE_FORMATS, 'delta', 'delta-upsert', 'memory', 'console'))} and "
            "foreachBatch(fn) "
            "(e.g. foreachBatch(lambda df, batch_id: df.write.format(...).save(...)))"
        )

    def _delta(
        self, path: str | None, table: str | None, options: dict[str, str], upsert: bool
    ) -> Sink:
        keys = options.pop(next((k for k in options if k.lower() == "keys"), ""), None)
        if upsert:
            if path is None and table is None:
                raise ValueError("format('delta-upsert') needs a path (start('<path>')) or "
                                 "toTable(name)")
            if options:
                raise ValueError(f"option(s) {sorted(options)} are not understood by "
                                 "flinkwin's upserting Delta sink (it takes 'keys')")
            return DeltaUpsertSink(
                path, table=table, partition_by=self._partition_by,
                keys=None if keys is None else [k.strip() for k in str(keys).split(",")
                                                if k.strip()],
            )
        if keys is not None:
            options["keys"] = keys
        if options:
            raise ValueError(
                f"option(s) {sorted(options)} are not understood by flinkwin's Delta sink"
            )
        if path is None and table is None:
            raise ValueError("format('delta') needs a path (start('<path>')) or toTable(name)")
        sink: Sink = DeltaSink(path, table=table, partition_by=self._partition_by)
        return sink

    def _no_extras(
        self, kind: str, options: dict[str, str], path: str | None, table: str | None
    ) -> None:
        """The memory, console and foreachBatch sinks take no path, table, partitioning or
        other options; one given would be ignored, so it is an error."""
        extras = [*(f"option {k!r}" for k in options)]
        if path is not None:
            extras.append(f"path {path!r}")
        if table is not None:
            extras.append(f"table {table!r}")
        if self._partition_by:
            extras.append(f"partitionBy{tuple(self._partition_by)}")
        if extras:
            raise ValueError(f"the {kind} sink takes no {', '.join(extras)}")

    def _launch(self, main: Sink) -> StreamingQuery:
        checkpoint = self._get("checkpointLocation")
        query = self._result.start(
            main=main,
            side_outputs=dict(self._side_outputs),
            checkpoint_location=checkpoint,
            trigger=self._trigger,
            output_mode=self._output_mode,
            query_name=self._query_name,
        )
        assert query is not None  # writeStream exists on streaming results only
        return query


def _to_str(value: Any) -> str:
    """Spark's option value conversion (booleans lower case)."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


__all__ = ["WindowDataStreamWriter"]
