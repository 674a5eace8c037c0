"""DeltaUpsertSink: a window result as an always-current Delta table, exactly once.

The table holds one row per key and window: a window's first firing inserts it, each later
firing replaces it, so the table always equals each window's latest result (its early results
while the window is open, the on-time one, then each late correction). A batch's rows are
reduced to the latest firing of each key and window (the greatest ``firing_index``), then
merged on (key columns, ``window_start``, ``window_end``), replacing a row only with a greater
``firing_index``: applying a batch twice changes nothing, and an older firing never overwrites
a newer one. With delta-rs the merge also records the app transaction ``(app_id, batch_id)``
and a batch already recorded is skipped, as :class:`~flinkwin.sinks.DeltaSink` does.

See ``docs/sinks.md`` for what it refuses and why (purging triggers, merging windows).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame

from .base import SinkContext, WindowOutput
from .delta import DeltaSink, Engine
from .delta_engines import DeltaRsEngine, SparkDeltaEngine
from .writer_ids import recorded_writer_id

WINDOW = ("window_start", "window_end")
INDEX = "firing_index"
_ROW = "_fw_upsert_row"


class UpsertRefusedError(ValueError):
    """The output cannot be written as one current row per key and window."""


class DeltaUpsertSink(DeltaSink):
    """Keeps each (key, window)'s latest firing as one row of the Delta table at ``path`` (or
    the catalog ``table``, Spark's Delta only), exactly once (see module docstring).

    The output must be a window result with ``with_window=True`` and ``with_firing=True``.
    ``keys``: the output columns that hold the key (default: the ``key_by`` column names; a
    key selector function needs them named; ``[]`` for ``window_all``). ``replacing_trigger``:
    declare that a user-defined trigger never returns FIRE_AND_PURGE before a window's last
    firing (flinkwin cannot tell). ``partition_by``, ``engine``, ``app_id`` and
    ``storage_options`` are :class:`~flinkwin.sinks.DeltaSink`'s.
    """

    def __init__(
        self,
        path: str | None = None,
        *,
        table: str | None = None,
        keys: list[str] | str | None = None,
        replacing_trigger: bool = False,
        partition_by: list[str] | str | None = None,
        engine: Engine = "auto",
        app_id: str | None = None,
        storage_options: dict[str, str] | None = None,
    ) -> None:
        super().__init__(path, table=table, partition_by=partition_by, engine=engine,
                         app_id=app_id, storage_options=storage_options)
        self.keys = [keys] if isinstance(keys, str) else keys
        self.replacing_trigger = replacing_trigger
        self.merge_key: list[str] = []

    def open(self, context: SinkContext) -> None:
        self.merge_key = [*self._key_columns(context), *WINDOW]
        if recorded_writer_id(context) is None and _has_rows(self._choose_engine(context)):
            raise UpsertRefusedError(
                f"{self!r}: the table already holds rows and this query starts afresh (a new "
                "checkpoint, or none): its firing indexes start again at 0, so the rows of "
                "windows already in the table would never be replaced; write to a new table, "
                "or empty this one first (DELETE FROM), or restart from the query's checkpoint"
            )
        super().open(context)
        if isinstance(self._engine, SparkDeltaEngine):
            create_spark_table(self._engine, context, self._partitions)

    def write_batch(self, df: DataFrame, batch_id: int) -> None:
        if self._engine is None or self._app_id is None:
            raise RuntimeError(f"{self!r} was not opened: start it through a query")
        if isinstance(self._engine, DeltaRsEngine):
            upsert_delta_rs(self._engine, df, batch_id, self._app_id, self.merge_key)
        else:
            upsert_spark(self._engine, df, self.merge_key)

    def _key_columns(self, context: SinkContext) -> list[str]:
        """The output's key columns, after refusing an output the table cannot follow."""
        where = f"{self!r} on the {context.label!r} output"
        window = context.window
        if window is None:
            raise UpsertRefusedError(
                f"{where}: an upserting sink writes the main output of a window (reduce, "
                "aggregate, process... with with_window=True, with_firing=True); this output "
                "is not one (a side output, or a stream graph): use DeltaSink"
            )
        _refuse_replacing_nothing(where, window, self.replacing_trigger)
        missing = [c for c in (*WINDOW, INDEX) if c not in context.schema.fieldNames()]
        if not (window.with_window and window.with_firing) or missing:
            raise UpsertRefusedError(
                f"{where}: the result needs its window and firing columns (missing {missing}) "
                "to be upserted by (key, window) in firing order: build it with "
                "with_window=True, with_firing=True"
            )
        keys = self.keys if self.keys is not None else window.key_columns
        if keys is None:
            raise UpsertRefusedError(
                f"{where}: the stream is keyed by a function, so the output's key columns are "
                "unknown: name them, DeltaUpsertSink(..., keys=['<column>', ...])"
            )
        absent = [k for k in keys if k not in context.schema.fieldNames()]
        clash = [k for k in keys if k in (*WINDOW, INDEX, "firing_timing", "firing_is_last")]
        if absent or clash:
            raise UpsertRefusedError(
                f"{where}: key column(s) {absent or clash} are "
                f"{'not in the output' if absent else 'window or firing columns'} "
                f"(columns: {context.schema.fieldNames()}); give the output columns holding "
                "the key: DeltaUpsertSink(..., keys=[...])"
            )
        return list(keys)

    def __repr__(self) -> str:
        where = f"{self.path!r}" if self.path is not None else f"table={self.table!r}"
        return f"DeltaUpsertSink({where}, engine={self.engine!r})"


def _has_rows(engine: DeltaRsEngine | SparkDeltaEngine) -> bool:
    if engine.describe() is None:
        return False
    if isinstance(engine, DeltaRsEngine):
        return bool(engine._table().to_pyarrow_dataset().count_rows())
    reader = engine.session.read.format("delta")
    df = engine.session.table(engine.table) if engine.table else reader.load(engine.path)
    return bool(df.limit(1).count())


def _refuse_replacing_nothing(where: str, window: WindowOutput, declared: bool) -> None:
    """Refuse what the table cannot follow: increments (a purging trigger) and merging
    windows (a merged-away window's row would stay)."""
    if window.trigger_purges:
        raise UpsertRefusedError(
            f"{where}: the trigger {window.trigger} purges the window at a firing before its "
            "last, so each later firing is an increment (what arrived since), not the "
            "window's result, and replacing the row would lose data: drop PurgingTrigger "
            "(each firing then carries the whole window), or write increments with DeltaSink"
        )
    if window.trigger_purges is None and not declared:
        raise UpsertRefusedError(
            f"{where}: flinkwin cannot tell whether the user-defined trigger {window.trigger} "
            "returns FIRE_AND_PURGE before a window's last firing (later firings would be "
            "increments); if every firing carries the whole window, say so: "
            "DeltaUpsertSink(..., replacing_trigger=True)"
        )
    if window.merging is not None:
        raise UpsertRefusedError(
            f"{where}: {window.merging} merges windows, and a merged-away window's row would "
            "stay in the table beside the merged window's: use DeltaSink (every firing "
            "appended, with its firing columns)"
        )


def latest_firings(data: Any, merge_key: list[str]) -> Any:
    """The rows of ``data`` (an Arrow table) with the greatest ``firing_index`` of their key
    and window; one firing with several rows is an error (it has no one current row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    data = data.take(pc.sort_indices(data, sort_keys=[(INDEX, "ascending")]))
    data = data.append_column(_ROW, pa.array(range(data.num_rows), pa.int64()))
    per_firing = data.group_by([*merge_key, INDEX], use_threads=False).aggregate(
        [(_ROW, "count")]
    )
    counts = per_firing.column(f"{_ROW}_count")
    if data.num_rows and pc.max(counts).as_py() > 1:
        first = per_firing.filter(pc.greater(counts, 1)).slice(0, 1).to_pylist()[0]
        raise UpsertRefusedError(
            f"one firing emitted {first.pop(f'{_ROW}_count')} rows for {first}: an upserting "
            "table keeps one row per key and window; emit one row per firing (or name key "
            "columns that tell the rows apart: keys=[...])"
        )
    latest = data.group_by(merge_key, use_threads=False).aggregate([(_ROW, "max")])
    return data.take(latest.column(f"{_ROW}_max")).drop_columns([_ROW])


def upsert_delta_rs(
    engine: DeltaRsEngine, df: DataFrame, batch_id: int, app_id: str, merge_key: list[str]
) -> None:
    """Merge the batch's latest firings with delta-rs, recording ``(app_id, batch_id)``; a
    batch the table already records is skipped."""
    from deltalake import CommitProperties, Transaction
    from pyspark.sql.pandas.types import to_arrow_schema

    # Read the batch first, always (see DeltaRsEngine.write).
    data = df.toArrow().cast(to_arrow_schema(df.schema, timezone="UTC"))
    table = engine._table()
    done = table.transaction_version(app_id)
    if (done is not None and done >= batch_id) or data.num_rows == 0:
        return
    on = " AND ".join(f"(s.{_dq(c)} IS NOT DISTINCT FROM t.{_dq(c)})" for c in merge_key)
    (
        table.merge(
            latest_firings(data, merge_key), on, source_alias="s", target_alias="t",
            commit_properties=CommitProperties(app_transactions=[Transaction(app_id, batch_id)]),
        )
        .when_matched_update_all(predicate=f"s.{_dq(INDEX)} > t.{_dq(INDEX)}")
        .when_not_matched_insert_all()
        .execute()
    )


def upsert_spark(engine: SparkDeltaEngine, df: DataFrame, merge_key: list[str]) -> None:
    """Merge the batch's latest firings with Spark's Delta MERGE (Databricks, delta-spark).
    Idempotent by its condition: a replayed batch replaces no row (same firing indexes) and
    inserts none (every row matches)."""
    from delta.tables import DeltaTable  # Databricks and delta-spark ship it
    from pyspark.sql import Window
    from pyspark.sql import functions as F  # noqa: N812

    group = [F.col(_bq(c)) for c in merge_key]
    doubled = df.groupBy(*group, F.col(INDEX)).count().where("count > 1").limit(1).collect()
    if doubled:
        raise UpsertRefusedError(
            f"one firing emitted several rows for {doubled[0].asDict()}: an upserting table "
            "keeps one row per key and window; emit one row per firing"
        )
    rank = F.row_number().over(Window.partitionBy(*group).orderBy(F.col(INDEX).desc()))
    latest = df.withColumn(_ROW, rank).where(F.col(_ROW) == 1).drop(_ROW)
    session = engine.session
    target = (DeltaTable.forName(session, engine.table) if engine.table is not None
              else DeltaTable.forPath(session, engine.path))
    on = " AND ".join(f"t.{_bq(c)} <=> s.{_bq(c)}" for c in merge_key)
    (
        target.alias("t").merge(latest.alias("s"), on)
        .whenMatchedUpdateAll(condition=f"s.{INDEX} > t.{INDEX}")
        .whenNotMatchedInsertAll()
        .execute()
    )


def create_spark_table(engine: SparkDeltaEngine, context: SinkContext, partitions: list[str]
                       ) -> None:
    """An empty table from the output schema (a MERGE needs its target), unless one exists."""
    writer = context.session.createDataFrame([], context.schema).write.format("delta")
    writer = writer.mode("ignore").partitionBy(*partitions) if partitions else writer.mode(
        "ignore")
    if engine.table is not None:
        writer.saveAsTable(engine.table)
    else:
        writer.save(engine.path)


def _dq(name: str) -> str:
    """A column name quoted for delta-rs (DataFusion) SQL."""
    return '"' + name.replace('"', '""') + '"'


def _bq(name: str) -> str:
    """A column name quoted for Spark SQL."""
    return "`" + name.replace("`", "``") + "`"


__all__ = ["DeltaUpsertSink", "UpsertRefusedError", "latest_firings"]
