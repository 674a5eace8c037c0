"""The two ways DeltaSink writes a batch: Spark's own Delta writer, or delta-rs from the driver.

Both answer the same three questions (what table is there, create it, write a batch under a
transaction id) so :class:`~flinkwin.sinks.delta.DeltaSink` keeps one code path for
checking the table and choosing the app id.
"""

from __future__ import annotations

import json
import os
from typing import Any

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType


class TableLayout:
    """An existing table's columns (Delta's JSON field descriptions) and partition columns."""

    def __init__(self, fields: list[dict[str, Any]], partition_columns: list[str]) -> None:
        self.fields = fields
        self.partition_columns = partition_columns


class SparkDeltaEngine:
    """Spark's Delta writer (Databricks, or a session with delta-spark): each batch is an
    append with ``txnAppId``/``txnVersion``, which Delta itself skips when that app has already
    committed that version."""

    name = "spark"
    #: Delta skips a replayed batch without reading it, so the batch must be materialised first.
    single_pass = False

    def __init__(self, session: SparkSession, path: str | None, table: str | None) -> None:
        self.session = session
        self.path = path
        self.table = table

    def _ref(self) -> str:
        if self.table is not None:
            return self.table
        return "delta.`" + str(self.path).replace("`", "``") + "`"

    def describe(self) -> TableLayout | None:
        try:
            detail = self.session.sql(f"DESCRIBE DETAIL {self._ref()}").collect()
            reader = self.session.read.format("delta")
            df = self.session.table(self.table) if self.table else reader.load(self.path)
        except AnalysisException:
            return None
        partitions = list(detail[0]["partitionColumns"] or []) if detail else []
        return TableLayout(df.schema.jsonValue()["fields"], partitions)

    def create(self, schema: StructType, partition_by: list[str]) -> None:
        """Nothing to do: the first batch's append creates the table from the output schema."""

    def write(self, df: DataFrame, batch_id: int, app_id: str, partition_by: list[str]) -> None:
        writer = (
            df.write.format("delta")
            .option("txnAppId", app_id)
            .option("txnVersion", batch_id)
            .mode("append")
        )
        if partition_by:
            writer = writer.partitionBy(*partition_by)
        if self.table is not None:
            writer.saveAsTable(self.table)
        else:
            writer.save(self.path)


class DeltaRsEngine:
    """delta-rs (the ``deltalake`` package) on the driver: the batch comes over as Arrow and is
    appended with the app transaction ``(app_id, batch_id)`` recorded in the same commit,
    unless the table already records that transaction (delta-rs records but does not check)."""

    name = "deltalake"
    single_pass = True

    def __init__(self, path: str, storage_options: dict[str, str] | None) -> None:
        self.path = path
        self.storage_options = storage_options

    def _table(self) -> Any:
        from deltalake import DeltaTable

        return DeltaTable(self.path, storage_options=self.storage_options)

    def describe(self) -> TableLayout | None:
        from deltalake.exceptions import TableNotFoundError

        try:
            table = self._table()
        except TableNotFoundError:
            return None
        fields = json.loads(table.schema().to_json())["fields"]
        return TableLayout(fields, list(table.metadata().partition_columns))

    def create(self, schema: StructType, partition_by: list[str]) -> None:
        from deltalake import DeltaTable, Schema

        DeltaTable.create(
            self.path,
            Schema.from_json(schema.json()),
            mode="ignore",
            partition_by=partition_by or None,
            storage_options=self.storage_options,
        )

    def committed_version(self, app_id: str) -> int | None:
        """The last batch id this app committed to the table (None: none yet)."""
        version = self._table().transaction_version(app_id)
        return None if version is None else int(version)

    def write(self, df: DataFrame, batch_id: int, app_id: str, partition_by: list[str]) -> None:
        from deltalake import CommitProperties, Transaction, write_deltalake
        from pyspark.sql.pandas.types import to_arrow_schema

        # Read the batch first, always: as a query's lone sink, reading it is what runs (and
        # commits) the window stage, which a replayed batch needs as much as a new one.
        data = df.toArrow().cast(to_arrow_schema(df.schema, timezone="UTC"))
        table = self._table()
        done = table.transaction_version(app_id)
        if (done is not None and done >= batch_id) or data.num_rows == 0:
            return
        write_deltalake(
            table,
            data,
            mode="append",
            partition_by=partition_by or None,
            commit_properties=CommitProperties(app_transactions=[Transaction(app_id, batch_id)]),
        )


def spark_has_delta(session: SparkSession) -> bool:
    """Whether Spark's own Delta data source is available: on Databricks, or when the
    ``delta`` source resolves in the session (classic), or the Delta session extension is
    configured (Spark Connect). Any failure to tell answers False."""
    if os.environ.get("DATABRICKS_RUNTIME_VERSION"):
        return True
    try:
        jvm = getattr(session, "_jvm", None)
    except Exception:  # Spark Connect sessions refuse JVM attributes
        jvm = None
    try:
        if jvm is not None:
            conf = session._jsparkSession.sessionState().conf()  # type: ignore[attr-defined]
            jvm.org.apache.spark.sql.execution.datasources.DataSource.lookupDataSource(
                "delta", conf
            )
            return True
        return "DeltaSparkSessionExtension" in (session.conf.get("spark.sql.extensions", "") or "")
    except Exception:
        return False


__all__ = ["DeltaRsEngine", "SparkDeltaEngine", "TableLayout", "spark_has_delta"]
