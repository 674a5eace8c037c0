"""``python -m flinkwin.job`` end to end: the demo module's tumbling pipeline (early firings,
allowed lateness, late side output) into two Delta tables (delta-rs), under availableNow.

The job runs first as a subprocess (the real command line, with a JSON config file) over half
the clickstream; then, restarted from the same checkpoint with the whole clickstream, in this
test's session. The tables must equal those of one uninterrupted run, and a third run with no
new input must commit nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from flinkwin.job import main

deltalake = pytest.importorskip("deltalake")

OUTPUTS = ("tumbling_revenue.main", "tumbling_revenue.late")

# runs its own Spark processes for a long while: `make test` runs it beside the rest
pytestmark = pytest.mark.beside


def _args(work: Path, batches: int) -> list[str]:
    return [
        "--module", "flinkwin.demo",
        "--param", f"source={work / 'source'}",
        "--param", f"batches={batches}",
        "--param", "pipelines=tumbling_revenue",
        "--checkpoint", str(work / "checkpoint"),
        "--sink", f"tumbling_revenue.main=delta:{work / 'revenue'}",
        "--sink", f"tumbling_revenue.late=delta:{work / 'late'}",
        "--delta-engine", "deltalake",
    ]


def _tables(work: Path) -> dict[str, Counter[tuple[Any, ...]]]:
    """Each table's rows as a multiset (an early firing can repeat a row legitimately)."""
    out = {}
    for name in ("revenue", "late"):
        rows = deltalake.DeltaTable(str(work / name)).to_pyarrow_table().to_pylist()
        out[name] = Counter(tuple(sorted(r.items())) for r in rows)
    return out


def _versions(work: Path) -> dict[str, int]:
    return {n: deltalake.DeltaTable(str(work / n)).version() for n in ("revenue", "late")}


def test_job_runs_demo_into_delta_and_restarts_from_its_checkpoint(
    spark: Any, tmp_path: Path
) -> None:
    reference = tmp_path / "reference"
    assert main(_args(reference, 6), spark=spark) == 0
    expected = _tables(reference)
    assert sum(expected["revenue"].values()) > 20 and sum(expected["late"].values()) > 0

    work = tmp_path / "job"
    config = {
        "module": "flinkwin.demo",
        "params": {"source": str(work / "source"), "batches": 3,
                   "pipelines": "tumbling_revenue"},
        "checkpoint": str(work / "checkpoint"),
        "sinks": {
            "tumbling_revenue.main": {"format": "delta", "path": str(work / "revenue"),
                                      "engine": "deltalake"},
            "tumbling_revenue.late": f"delta:{work / 'late'}",
        },
        "delta_engine": "deltalake",
        "trigger": {"availableNow": True},
        "master": "local[2]",
        "conf": {"spark.sql.shuffle.partitions": 2, "spark.ui.enabled": "false",
                 "spark.sql.session.timeZone": "UTC"},
    }
    (tmp_path / "job.json").write_text(json.dumps(config))
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    done = subprocess.run(
        [sys.executable, "-m", "flinkwin.job", "--config", str(tmp_path / "job.json")],
        env=env, capture_output=True, text=True, timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "query 'tumbling_revenue' done" in done.stdout
    first = _tables(work)
    assert first["revenue"] and first["revenue"] != expected["revenue"]  # half the input

    # The restart reads the rest of the input (the module adds the missing files).
    assert main(_args(work, 6), spark=spark) == 0
    assert _tables(work) == expected
    versions = _versions(work)
    assert main(_args(work, 6), spark=spark) == 0  # nothing new: nothing committed
    assert _versions(work) == versions
    assert _tables(work) == expected


def test_every_output_needs_exactly_one_sink_before_any_query_starts(spark: Any) -> None:
    """A sink for an output the module does not have, or an output without a sink (its rows
    would be lost), fails the job naming both lists; nothing is started."""
    from flinkwin import OutputTag
    from flinkwin.demo import pipelines
    from flinkwin.job import JobConfigError, Pipeline, build_config
    from flinkwin.job.runner import start_queries

    clicks = spark.createDataFrame([], "user string, amount long, ts timestamp")
    built = pipelines(clicks)
    queries = {"revenue": Pipeline(built["tumbling_revenue"], {"late": OutputTag("late-clicks")}),
               "sessions": Pipeline(built["sessions"])}
    config = build_config({
        "module": "flinkwin.demo", "checkpoint": "/nowhere",
        "sinks": {"revenue.main": "delta:/a", "sessions.mian": "delta:/b"},
    })
    with pytest.raises(JobConfigError) as failed:
        start_queries(config, queries)
    assert str(failed.value) == (
        "no sink for output(s) ['revenue.late', 'sessions.main']; sink(s) for unknown "
        "output(s) ['sessions.mian']; the module's outputs are ['revenue.late', "
        "'revenue.main', 'sessions.main']"
    )
    assert not spark.streams.active
    with pytest.raises(ValueError, match="cannot be named 'main'"):
        Pipeline(built["sessions"], {"main": OutputTag("x")})
    with pytest.raises(TypeError, match="takes a window result"):
        Pipeline(clicks)  # type: ignore[arg-type]
