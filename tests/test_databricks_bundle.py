"""The example Databricks Asset Bundle (``databricks.yml`` + ``deploy/databricks/resources``)
is well formed, checked offline (no workspace can be reached from here): every job loads into
the ``databricks-bundles`` package's typed models (Databricks' own Python support for bundles:
unknown fields, wrong types and bad enum values fail), every ``${var.*}`` is defined, every
task runs this repository's wheel entry point with arguments flinkwin's job parser accepts, and
each job writes every output of the demo module to its own Delta table."""

from __future__ import annotations

import glob
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from databricks.bundles.jobs import Job

from flinkwin.job.config import parse_args

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "databricks.yml"
TOP_LEVEL = {"bundle", "include", "variables", "artifacts", "sync", "targets", "resources",
             "workspace", "permissions", "run_as", "presets", "experimental", "python"}
TASK_TYPES = {"python_wheel_task", "spark_python_task", "notebook_task", "spark_jar_task",
              "spark_submit_task", "pipeline_task", "run_job_task", "sql_task", "dbt_task",
              "condition_task", "for_each_task"}
# flinkwin.demo's outputs: one main output per pipeline, and the tumbling pipeline's late clicks.
DEMO_OUTPUTS = {"tumbling_revenue.main", "tumbling_revenue.late", "sliding_activity.main",
                "sessions.main"}
REFERENCE = re.compile(r"\$\{([a-z_]+)\.([A-Za-z0-9_.-]+)\}")


def _load(path: Path) -> dict[str, Any]:
    doc = yaml.safe_load(path.read_text())
    assert isinstance(doc, dict), f"{path} must hold a mapping"
    return doc


@pytest.fixture(scope="module")
def bundle() -> dict[str, Any]:
    return _load(BUNDLE)


@pytest.fixture(scope="module")
def resource_files(bundle: dict[str, Any]) -> dict[Path, dict[str, Any]]:
    files: dict[Path, dict[str, Any]] = {}
    for pattern in bundle["include"]:
        matched = sorted(glob.glob(str(ROOT / pattern)))
        assert matched, f"include {pattern!r} matches no file"
        files.update({Path(p): _load(Path(p)) for p in matched})
    return files


@pytest.fixture(scope="module")
def jobs(resource_files: dict[Path, dict[str, Any]]) -> dict[str, tuple[Path, dict[str, Any]]]:
    found = {}
    for path, doc in resource_files.items():
        assert set(doc) == {"resources"}, f"{path}: only 'resources' at the top level"
        for name, job in doc["resources"].get("jobs", {}).items():
            assert name not in found, f"job {name!r} defined twice"
            found[name] = (path, job)
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _substitute(text: str, variables: dict[str, Any]) -> str:
    return REFERENCE.sub(lambda m: str(variables[m.group(2)]["default"]), text)


def test_bundle_top_level_is_complete(bundle: dict[str, Any]) -> None:
    assert set(bundle) <= TOP_LEVEL, set(bundle) - TOP_LEVEL
    assert bundle["bundle"]["name"]
    assert set(bundle["targets"]) == {"dev", "prod"}
    assert bundle["targets"]["dev"]["mode"] == "development"
    assert bundle["targets"]["prod"]["mode"] == "production"
    for name, variable in bundle["variables"].items():
        assert variable.get("description"), f"variable {name!r} has no description"
        assert "default" in variable, f"variable {name!r} has no default"


def test_every_variable_reference_is_defined_and_every_variable_used(
    bundle: dict[str, Any], resource_files: dict[Path, dict[str, Any]]
) -> None:
    texts = _strings(bundle) + [s for doc in resource_files.values() for s in _strings(doc)]
    used = set()
    for text in texts:
        for namespace, name in REFERENCE.findall(text):
            assert namespace in {"var", "bundle", "workspace", "resources"}, text
            if namespace == "var":
                assert name in bundle["variables"], f"${{var.{name}}} is not defined"
                used.add(name)
    assert used == set(bundle["variables"])


def test_the_wheel_artifact_is_this_repository(bundle: dict[str, Any]) -> None:
    (artifact,) = bundle["artifacts"].values()
    assert artifact["type"] == "whl"
    assert (ROOT / artifact["path"] / "pyproject.toml").is_file()
    assert "--wheel-dir dist" in artifact["build"]


def test_the_wheel_leaves_pyspark_to_the_platform() -> None:
    """Databricks brings its own PySpark: the wheel asks for PySpark only as the ``spark``
    extra, so installing it as a job library never pulls PyPI's PySpark in beside the runtime's
    (the metadata checked is the installed distribution's, built from pyproject.toml)."""
    from importlib.metadata import requires

    from packaging.requirements import Requirement

    needed = [Requirement(r) for r in requires("flinkwin") or []]
    unconditional = {r.name for r in needed if r.marker is None}
    assert "pyspark" not in unconditional
    assert {"pyarrow", "pandas", "numpy"} <= unconditional
    (spark,) = [r for r in needed if r.marker is not None
                and r.marker.evaluate({"extra": "spark"}) and r.name == "pyspark"]
    assert str(spark.specifier) in {"<5,>=4.0", ">=4.0,<5"}


def test_jobs_load_into_databricks_bundles_models(
    jobs: dict[str, tuple[Path, dict[str, Any]]]
) -> None:
    assert set(jobs) == {"flinkwin_demo", "flinkwin_demo_serverless"}
    for name, (_, spec) in jobs.items():
        job = Job.from_dict(spec)  # raises on an unknown field, a wrong type, a bad enum
        assert job.as_dict()["name"] == spec["name"], name
        assert spec["max_concurrent_runs"] == 1, f"{name}: two runs would share a checkpoint"


def test_tasks_run_the_wheels_flinkwin_job_entry_point(
    bundle: dict[str, Any], jobs: dict[str, tuple[Path, dict[str, Any]]]
) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (artifact,) = bundle["artifacts"].values()
    wheels = (ROOT / artifact["path"] / "dist" / "*.whl").resolve()
    for name, (path, job) in jobs.items():
        clusters = {c["job_cluster_key"] for c in job.get("job_clusters", [])}
        environments = {e["environment_key"]: e for e in job.get("environments", [])}
        for task in job["tasks"]:
            types = TASK_TYPES & set(task)
            assert types == {"python_wheel_task"}, f"{name}: one wheel task, got {types}"
            wheel_task = task["python_wheel_task"]
            assert wheel_task["package_name"] == project["name"]
            assert project["scripts"][wheel_task["entry_point"]] == "flinkwin.job:cli"
            if "job_cluster_key" in task:  # classic: the wheel as a task library
                assert task["job_cluster_key"] in clusters
                installs = [lib["whl"] for lib in task["libraries"]]
            else:  # serverless: the wheel as an environment dependency
                installs = environments[task["environment_key"]]["spec"]["dependencies"]
                assert not clusters, f"{name}: serverless runs on no job cluster"
            assert [(path.parent / w).resolve() for w in installs] == [wheels]


def test_task_parameters_are_accepted_by_flinkwin_job(
    bundle: dict[str, Any], jobs: dict[str, tuple[Path, dict[str, Any]]]
) -> None:
    """The parameters, with the variables' defaults, parse with the job's own parser, and
    every demo output goes to its own Unity Catalog table."""
    variables = bundle["variables"]
    tables: set[str] = set()
    for name, (_, job) in jobs.items():
        (task,) = job["tasks"]
        argv = [_substitute(a, variables) for a in task["python_wheel_task"]["parameters"]]
        config = parse_args(argv)
        assert config.module == "flinkwin.demo"
        assert config.checkpoint.startswith("/Volumes/"), "Connect needs a mounted path"
        assert config.params["source"].startswith("/Volumes/")
        assert set(config.sinks) == DEMO_OUTPUTS, name
        targets = {spec.partition(":")[2] for spec in config.sinks.values()}
        assert all(s.startswith("delta-table:") for s in config.sinks.values())
        assert len(targets) == len(DEMO_OUTPUTS) and not targets & tables, "one table each"
        tables |= targets
        if "environments" in job:
            assert config.trigger == {"availableNow": True}  # serverless: no interval trigger
    assert all(t.count(".") == 2 for t in tables)  # catalog.schema.table
