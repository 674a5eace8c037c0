"""The restartable pipeline (user classes, late side output, parquet sinks, restarts from the
checkpoint) on a local Spark Connect server gives the rows it gives on ``local[2]``; what
Connect lacks is refused with a clear error."""

from __future__ import annotations

from typing import Any

import pytest
from spark_processes import run_driver


@pytest.fixture(scope="module")
def connect_result(connect_url: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("connect")
    return run_driver(["--remote", connect_url], tmp / "job", tmp / "connect.json", tmp)


def test_pipeline_on_spark_connect_matches_local(
    connect_result: dict[str, Any], local_reference: dict[str, Any]
) -> None:
    assert connect_result["main"] == local_reference["main"]
    assert connect_result["late"] == local_reference["late"]


def test_what_connect_lacks_fails_with_a_clear_error(connect_result: dict[str, Any]) -> None:
    """Rows collected in the driver (MemorySink) and Hadoop access for flinkwin's checkpoint
    documents need the classic session; on Connect each is refused by name."""
    limits = connect_result["connect_limits"]
    assert "cannot collect rows on Spark Connect" in limits["memory_sink"]
    assert "no JVM access (Spark Connect)" in limits["remote_checkpoint"]


def test_a_query_spark_starts_from_to_df_is_sized_on_connect(
    connect_result: dict[str, Any]
) -> None:
    """In a Connect session at Spark's default 200, ``toDF().writeStream...start()`` runs the
    stage in its 16 key groups (a Connect client reads no cores), leaves the session as it was,
    and a DataFrame derived from ``toDF()`` warns with the line that sizes it."""
    sizing = connect_result["connect_sizing"]
    assert sizing["state_partitions"] == [16]
    assert sizing["session_after"] == {"shuffle": "200", "state": None}
    [warning] = sizing["derived_warnings"]
    assert warning.startswith("UnsizedStageWarning")
    assert "spark.conf.set('spark.sql.shuffle.partitions', '16')" in warning
