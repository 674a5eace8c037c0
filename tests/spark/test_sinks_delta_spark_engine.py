"""DeltaSink's Spark engine, checked with fakes: no Delta jar exists for this Spark, so these
tests look at exactly what the sink hands to Spark's writer (format, options, mode,
partitioning, path or table) and how it reads an existing table's layout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import AnalysisException
from pyspark.sql.types import LongType, StringType, StructField, StructType

from flinkwin.sinks import DeltaSink, DeltaTableMismatchError, SinkContext
from flinkwin.sinks.delta_engines import spark_has_delta

SCHEMA = StructType([StructField("k", StringType()), StructField("v", LongType())])


class FakeWriter:
    def __init__(self, calls: list[tuple[Any, ...]]) -> None:
        self.calls = calls

    def __getattr__(self, name: str) -> Any:
        def record(*args: Any) -> FakeWriter:
            self.calls.append((name, *args))
            return self
        return record


class FakeFrame:
    def __init__(self, schema: StructType = SCHEMA) -> None:
        self.schema = schema
        self.calls: list[tuple[Any, ...]] = []

    @property
    def write(self) -> FakeWriter:
        return FakeWriter(self.calls)


class FakeConf:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get(self, key: str, default: str | None = None) -> str | None:
        return self.values.get(key, default)


class FakeResult:
    def __init__(self, rows: list[dict[str, Any]]) -> None:
        self.rows = rows

    def collect(self) -> list[dict[str, Any]]:
        return self.rows


class FakeSession:
    """A Spark Connect-like session (no JVM) whose catalog knows ``tables``."""

    def __init__(self, tables: dict[str, tuple[StructType, list[str]]] | None = None,
                 conf: dict[str, str] | None = None) -> None:
        self.tables = tables or {}
        self.conf = FakeConf(conf or {})
        self.read = self

    def format(self, name: str) -> FakeSession:
        assert name == "delta"
        return self

    def _lookup(self, name: str) -> tuple[StructType, list[str]]:
        if name not in self.tables:
            raise AnalysisException(message=f"[DELTA_MISSING_DELTA_TABLE] {name}")
        return self.tables[name]

    def sql(self, text: str) -> Any:
        name = text.removeprefix("DESCRIBE DETAIL ").removeprefix("delta.`").removesuffix("`")
        return FakeResult([{"partitionColumns": self._lookup(name)[1]}])

    def load(self, path: str) -> FakeFrame:
        return FakeFrame(self._lookup(path)[0])

    def table(self, name: str) -> FakeFrame:
        return FakeFrame(self._lookup(name)[0])


def _open(sink: DeltaSink, session: Any, checkpoint: str | None = None) -> None:
    sink.open(SinkContext(session, SCHEMA, "main", checkpoint))


def test_spark_engine_appends_each_batch_with_the_delta_transaction(tmp_path: Path) -> None:
    sink = DeltaSink("/lake/clicks", engine="spark", partition_by=["k"])
    _open(sink, FakeSession(), str(tmp_path / "ck"))
    df = FakeFrame()
    sink.write_batch(df, 7)  # type: ignore[arg-type]
    app_id = json.loads((tmp_path / "ck/flinkwin/sinks.json").read_text())["app_ids"]["main"]
    assert df.calls == [
        ("format", "delta"), ("option", "txnAppId", app_id), ("option", "txnVersion", 7),
        ("mode", "append"), ("partitionBy", "k"), ("save", "/lake/clicks"),
    ]
    assert sink.resolved_engine == "spark" and not sink.single_pass


def test_spark_engine_writes_a_catalog_table_with_save_as_table() -> None:
    session = FakeSession({"main.db.clicks": (SCHEMA, [])})
    sink = DeltaSink(table="main.db.clicks", engine="spark", app_id="job-1")
    _open(sink, session)
    df = FakeFrame()
    sink.write_batch(df, 0)  # type: ignore[arg-type]
    assert df.calls == [
        ("format", "delta"), ("option", "txnAppId", "job-1"), ("option", "txnVersion", 0),
        ("mode", "append"), ("saveAsTable", "main.db.clicks"),
    ]


def test_spark_engine_takes_the_existing_tables_partitioning() -> None:
    session = FakeSession({"/lake/t": (SCHEMA, ["k"])})
    sink = DeltaSink("/lake/t", engine="spark")
    _open(sink, session)
    df = FakeFrame()
    sink.write_batch(df, 3)  # type: ignore[arg-type]
    assert ("partitionBy", "k") in df.calls


def test_spark_engine_refuses_a_table_that_does_not_fit() -> None:
    other = StructType([StructField("k", StringType()), StructField("n", LongType())])
    with pytest.raises(DeltaTableMismatchError, match=r"\['v'\] are not in the table"):
        _open(DeltaSink(table="t", engine="spark"), FakeSession({"t": (other, [])}))
    with pytest.raises(DeltaTableMismatchError, match=r"partitioned by \[\], the sink asks"):
        _open(DeltaSink(table="t", engine="spark", partition_by="k"),
              FakeSession({"t": (SCHEMA, [])}))


def test_table_needs_the_spark_engine_and_exactly_one_target() -> None:
    with pytest.raises(ValueError, match="catalog tables need Spark's Delta"):
        DeltaSink(table="cat.db.t", engine="deltalake")
    with pytest.raises(ValueError, match="exactly one of path"):
        DeltaSink("/p", table="t")
    with pytest.raises(ValueError, match="exactly one of path"):
        DeltaSink()
    with pytest.raises(ValueError, match="engine must be one of"):
        DeltaSink("/p", engine="delta")  # type: ignore[arg-type]


def test_auto_engine_probe() -> None:
    assert spark_has_delta(FakeSession(conf={  # type: ignore[arg-type]
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension"}))
    assert not spark_has_delta(FakeSession())  # type: ignore[arg-type]
    sink = DeltaSink(table="t")
    _open(sink, FakeSession({"t": (SCHEMA, [])}, conf={
        "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension"}))
    assert sink.resolved_engine == "spark"


def test_auto_engine_on_databricks_is_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABRICKS_RUNTIME_VERSION", "16.4")
    assert spark_has_delta(FakeSession())  # type: ignore[arg-type]
