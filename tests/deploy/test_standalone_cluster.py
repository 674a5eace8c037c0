"""The restartable pipeline on a Spark standalone cluster (a master and two workers on
localhost, executors in their own JVMs with their own Python workers) gives the rows it gives
on ``local[2]``: user classes unpickled in executors, state restored across executors. And
``flinkwin-job`` runs the demo module on the cluster into Delta tables equal to its
``local[2]`` run's. Stream graphs with a re-keying step (HotItems, a window join keyed by a
function) run their keyed stages on both workers, with the rows of ``local[2]``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from spark_processes import DRIVER_TIMEOUT_S, HERE, run_driver, spark_env


@pytest.mark.cluster
def test_pipeline_on_standalone_cluster_matches_local(
    cluster_url: str, local_reference: dict[str, Any], tmp_path: Path
) -> None:
    result = run_driver(["--master", cluster_url], tmp_path / "job", tmp_path / "cluster.json",
                        tmp_path)
    assert len(result["executors"]) == 3, result["executors"]  # the driver and two executors
    assert result["main"] == local_reference["main"]
    assert result["late"] == local_reference["late"]


def _run_job(master: str, work: Path, tmp: Path) -> dict[str, Counter[tuple[Any, ...]]]:
    """``python -m flinkwin.job`` with the demo's three pipelines (four outputs) into Delta
    tables under ``work``, in two runs (half the input, then a restart with all of it)."""
    import deltalake

    conf = ["spark.sql.shuffle.partitions=2", "spark.ui.enabled=false",
            "spark.sql.session.timeZone=UTC", "spark.driver.host=127.0.0.1",
            "spark.driver.bindAddress=127.0.0.1", "spark.executor.memory=512m",
            "spark.executor.cores=1", "spark.cores.max=2"]
    outputs = {"tumbling_revenue.main": "revenue", "tumbling_revenue.late": "late",
               "sliding_activity.main": "sliding", "sessions.main": "sessions"}
    env = spark_env(tmp)
    env.pop("SPARK_NO_DAEMONIZE")
    for batches in (3, 6):
        argv = [sys.executable, "-m", "flinkwin.job", "--module", "flinkwin.demo",
                "--master", master, "--param", f"source={work / 'source'}",
                "--param", f"batches={batches}", "--checkpoint", str(work / "checkpoints"),
                "--delta-engine", "deltalake"]
        argv += [a for c in conf for a in ("--conf", c)]
        argv += [a for o, t in outputs.items() for a in ("--sink", f"{o}=delta:{work / t}")]
        log = tmp / f"job-{work.name}-{batches}.log"
        with open(log, "wb") as f:
            proc = subprocess.Popen(argv, env=env, stdout=f, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                proc.wait(timeout=DRIVER_TIMEOUT_S)
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=30)
        assert proc.returncode == 0, log.read_text(errors="replace")[-4000:]
    return {
        t: Counter(tuple(sorted(r.items()))
                   for r in deltalake.DeltaTable(str(work / t)).to_pyarrow_table().to_pylist())
        for t in outputs.values()
    }


@pytest.mark.cluster
def test_flinkwin_job_runs_the_demo_on_the_cluster_as_on_local(
    cluster_url: str, tmp_path: Path
) -> None:
    local = _run_job("local[2]", tmp_path / "local", tmp_path)
    cluster = _run_job(cluster_url, tmp_path / "cluster", tmp_path)
    assert all(sum(rows.values()) > 0 for rows in local.values()), local
    assert cluster == local


@pytest.mark.cluster
def test_graphs_with_a_re_keying_step_run_on_both_workers_as_on_local(
    cluster_url: str, tmp_path: Path
) -> None:
    """HotItems and a window join keyed by a function (``graph_driver.py``, with a restart
    mid-stream) give on the two-worker cluster exactly the rows they give on ``local[2]``, and
    their keyed stages' tasks ran on both workers (issue 31, point 4)."""
    script = HERE / "graph_driver.py"
    local = run_driver(["--master", "local[2]"], tmp_path / "local", tmp_path / "local.json",
                       tmp_path, script)
    cluster = run_driver(["--master", cluster_url], tmp_path / "cluster",
                         tmp_path / "cluster.json", tmp_path, script)
    assert local["hot_items"] and local["join"]
    assert cluster["hot_items"] == local["hot_items"]
    assert cluster["join"] == local["join"]
    stages = cluster["stage_executors"]
    assert isinstance(stages, list)
    assert any(len(executors) == 2 for executors in stages), stages
