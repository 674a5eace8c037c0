"""``python -m flinkwin.job`` (console script ``flinkwin-job``): run a pipeline module as a
streaming job, e.g. a Databricks job task, with sinks, checkpoint and trigger from the command
line or a JSON config file.

The module's contract (see ``docs/deployment.md``): a function ``build(spark, params)`` (or
``build(spark)``) that reads its sources from ``spark`` and returns a :class:`Pipeline` (a
window result and its side outputs by name), a bare window result, or a dict of query name to
Pipeline (several queries, each with its own checkpoint folder). It must not start queries:
the job starts them with the configured sinks, checkpoint and trigger.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .config import JobConfig, JobConfigError, build_config, parse_args, sink_from_spec
from .runner import Pipeline, QueryFailed, StartedQuery, make_session, run_job


def main(argv: Sequence[str] | None = None, spark: object = None) -> int:
    """Parse the arguments, run the job, return the exit code: 0 when every query ended well
    (or was stopped at the timeout), 1 when a query failed, 2 for bad settings."""
    try:
        config = parse_args(argv)
        started = run_job(config, spark)
    except JobConfigError as exc:
        print(f"flinkwin-job: error: {exc}", file=sys.stderr)
        return 2
    except QueryFailed as exc:
        print(f"flinkwin-job: {exc}", file=sys.stderr)
        return 1
    for item in started:
        outputs = ", ".join(f"{name} -> {sink!r}" for name, sink in item.sinks.items())
        print(f"flinkwin-job: query {item.name or 'main'!r} done: {outputs}")
    return 0


def cli() -> None:
    """The console script's entry point (``flinkwin-job``)."""
    sys.exit(main())


__all__ = [
    "JobConfig",
    "JobConfigError",
    "Pipeline",
    "QueryFailed",
    "StartedQuery",
    "build_config",
    "cli",
    "main",
    "make_session",
    "parse_args",
    "run_job",
    "sink_from_spec",
]
