"""The restartable pipeline on a Spark standalone cluster (a master and two workers on
localhost, executors in their own JVMs with their own Python workers) gives the rows it gives
on ``local[2]``: user classes unpickled in executors, state restored across executors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from spark_processes import run_driver


@pytest.mark.cluster
def test_pipeline_on_standalone_cluster_matches_local(
    cluster_url: str, local_reference: dict[str, Any], tmp_path: Path
) -> None:
    result = run_driver(["--master", cluster_url], tmp_path / "job", tmp_path / "cluster.json",
                        tmp_path)
    assert len(result["executors"]) == 3, result["executors"]  # the driver and two executors
    assert result["main"] == local_reference["main"]
    assert result["late"] == local_reference["late"]
