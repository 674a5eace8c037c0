"""DeltaSink: one output into a Delta table, exactly once.

Every batch is committed together with the Delta app transaction ``(app_id, batch_id)``; a
batch that Spark replays after a failure (same id, same rows) finds its transaction already in
the table and is skipped. Spark's Delta writer does that check itself (``txnAppId`` /
``txnVersion``); with delta-rs the sink checks ``DeltaTable.transaction_version`` first.

The app id must be the same across restarts of one query and new for a new checkpoint (batch
ids start again at 0): by default it is drawn once and kept in the checkpoint, in flinkwin's
``sinks.json`` keyed by the output's name.
"""

from __future__ import annotations

from typing import Any, Literal

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from .base import Sink, SinkContext
from .delta_engines import (
    DeltaRsEngine,
    SparkDeltaEngine,
    TableLayout,
    spark_has_delta,
)
from .writer_ids import SINKS_DOCUMENT, new_writer_id, record_writer_id, recorded_writer_id

Engine = Literal["auto", "spark", "deltalake"]
_ENGINES = ("auto", "spark", "deltalake")


class DeltaTableMismatchError(ValueError):
    """An existing Delta table's columns or partitioning do not fit the output."""


class DeltaSink(Sink):
    """Appends an output to the Delta table at ``path`` (or the catalog ``table``), exactly once.

    ``engine``: ``"spark"`` writes with Spark's Delta (Databricks, or delta-spark in the
    session) and is the only one that accepts ``table=`` (e.g. ``"cat.schema.t"``);
    ``"deltalake"`` writes from the driver with delta-rs (the batch is collected as Arrow);
    ``"auto"`` takes Spark's Delta when the session has it, else delta-rs. ``partition_by``
    names partition columns (default: the existing table's, or none). ``app_id`` overrides
    the transaction id kept in the checkpoint; it must then stay the same for this
    checkpoint and change with a new one.

    At start the table is checked (same columns and types as the output, same partitioning)
    or, with delta-rs, created from the output schema (Spark ``TimestampType`` as Delta
    ``timestamp``, ``TimestampNTZType`` as ``timestamp_ntz``).
    """

    def __init__(
        self,
        path: str | None = None,
        *,
        table: str | None = None,
        partition_by: list[str] | str | None = None,
        engine: Engine = "auto",
        app_id: str | None = None,
        storage_options: dict[str, str] | None = None,
    ) -> None:
        if engine not in _ENGINES:
            raise ValueError(f"DeltaSink engine must be one of {_ENGINES}, got {engine!r}")
        if (path is None) == (table is None):
            raise ValueError("DeltaSink needs exactly one of path=... or table=...")
        if table is not None and engine == "deltalake":
            raise ValueError(
                f"DeltaSink(table={table!r}): catalog tables need Spark's Delta "
                "(engine='spark' or 'auto'); the deltalake engine writes to a path"
            )
        if app_id is not None and not app_id:
            raise ValueError("DeltaSink app_id must be a non-empty string")
        self.path = path
        self.table = table
        self.partition_by = [partition_by] if isinstance(partition_by, str) else partition_by
        self.engine: Engine = engine
        self.app_id = app_id
        self.storage_options = storage_options
        self._engine: SparkDeltaEngine | DeltaRsEngine | None = None
        self._app_id: str | None = None
        self._partitions: list[str] = []

    @property
    def target(self) -> str:
        """The table's path or catalog name."""
        return str(self.path if self.path is not None else self.table)

    def open(self, context: SinkContext) -> None:
        engine = self._choose_engine(context)
        layout = engine.describe()
        self._partitions = _check_fit(self, context, layout)
        if layout is None:
            engine.create(context.schema, self._partitions)
        self._app_id = _app_id(self, context, engine)
        self._engine = engine
        self.single_pass = engine.single_pass

    def write_batch(self, df: DataFrame, batch_id: int) -> None:
        if self._engine is None or self._app_id is None:
            raise RuntimeError(f"{self!r} was not opened: start it through a query")
        self._engine.write(df, batch_id, self._app_id, self._partitions)

    @property
    def resolved_app_id(self) -> str | None:
        """The app id the running query writes with (after start)."""
        return self._app_id

    @property
    def resolved_engine(self) -> str | None:
        """The engine the running query writes with (after start)."""
        return None if self._engine is None else self._engine.name

    def _choose_engine(self, context: SinkContext) -> SparkDeltaEngine | DeltaRsEngine:
        engine = self.engine
        if engine == "auto":
            engine = "spark" if spark_has_delta(context.session) else "deltalake"
            if engine == "deltalake" and self.table is not None:
                raise ValueError(
                    f"DeltaSink(table={self.table!r}) needs Spark's Delta (Databricks or a "
                    "session with delta-spark); this session has none"
                )
        if engine == "spark":
            return SparkDeltaEngine(context.session, self.path, self.table)
        return DeltaRsEngine(str(self.path), self.storage_options)

    def __repr__(self) -> str:
        where = f"{self.path!r}" if self.path is not None else f"table={self.table!r}"
        return f"DeltaSink({where}, engine={self.engine!r})"


def _check_fit(sink: DeltaSink, context: SinkContext, layout: TableLayout | None) -> list[str]:
    """The partition columns to write with, after checking the output against the table."""
    columns = context.schema.fieldNames()
    wanted = sink.partition_by
    unknown = [c for c in wanted or [] if c not in columns]
    if unknown:
        raise DeltaTableMismatchError(
            f"{sink!r}: partition column(s) {unknown} are not in the {context.label!r} "
            f"output's columns {columns}"
        )
    if layout is None:
        return list(wanted or [])
    problems = _schema_differences(context.schema, layout.fields)
    if wanted is not None and list(wanted) != layout.partition_columns:
        problems.append(
            f"partitioned by {layout.partition_columns}, the sink asks for {list(wanted)}"
        )
    if problems:
        raise DeltaTableMismatchError(
            f"the existing Delta table {sink.target} does not fit the {context.label!r} "
            "output: " + "; ".join(problems)
        )
    return list(layout.partition_columns)


def _schema_differences(schema: StructType, fields: list[dict[str, Any]]) -> list[str]:
    ours = {f["name"]: f["type"] for f in schema.jsonValue()["fields"]}
    theirs = {f["name"]: f["type"] for f in fields}
    problems = []
    missing = [n for n in ours if n not in theirs]
    extra = [n for n in theirs if n not in ours]
    if missing:
        problems.append(f"column(s) {missing} are not in the table")
    if extra:
        problems.append(f"the table's column(s) {extra} are not in the output")
    for name in ours:
        if name in theirs and ours[name] != theirs[name]:
            problems.append(f"column {name!r} is {theirs[name]} in the table, {ours[name]} here")
    return problems


def _app_id(
    sink: DeltaSink, context: SinkContext, engine: SparkDeltaEngine | DeltaRsEngine
) -> str:
    """The transaction app id: kept in the checkpoint under the output's name, so a restart
    writes under the same id and a new checkpoint under a new one."""
    recorded = recorded_writer_id(context)
    if recorded is not None:
        if sink.app_id is not None and sink.app_id != recorded:
            raise ValueError(
                f"{sink!r}: app_id={sink.app_id!r} but this checkpoint's {context.label!r} "
                f"output writes as {recorded!r}; a checkpoint keeps its app id (a replayed "
                "batch would be written again under a new one)"
            )
        return recorded
    # A new checkpoint, or none (Spark then checkpoints to a temporary folder): batch ids
    # start at 0.
    why = "the checkpoint is new" if context.checkpoint_location else "the query has no checkpoint"
    _refuse_used_app_id(sink, engine, why)
    app_id = sink.app_id or new_writer_id()
    record_writer_id(context, app_id)
    return app_id


def _refuse_used_app_id(
    sink: DeltaSink, engine: SparkDeltaEngine | DeltaRsEngine, why: str
) -> None:
    """Batch ids start at 0 here: an explicit app id the table already has would skip them."""
    if sink.app_id is None or not isinstance(engine, DeltaRsEngine) or engine.describe() is None:
        return
    version = engine.committed_version(sink.app_id)
    if version is not None:
        raise ValueError(
            f"{sink!r}: the table already holds app_id={sink.app_id!r} up to batch {version} "
            f"and {why}, so batch ids start again at 0 and would be skipped: use a new app_id "
            "or the query's own checkpoint"
        )


__all__ = ["SINKS_DOCUMENT", "DeltaSink", "DeltaTableMismatchError", "Engine"]
