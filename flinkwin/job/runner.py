"""Running a pipeline module as a job: load it, build its queries, start each with its sinks
and checkpoint, wait, and report failures with a non-zero exit."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from flinkwin.datastream.window_result_stream import WindowResultStream
from flinkwin.output_tag import OutputTag

from .config import JobConfig, JobConfigError, sink_from_spec


@dataclass(frozen=True)
class Pipeline:
    """One streaming query of a job: a window result (the ``main`` output) and the side outputs
    to write with it, by name (e.g. ``{"late": late_tag}``). Every output gets its own sink."""

    main: WindowResultStream
    side_outputs: Mapping[str, OutputTag] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.main, WindowResultStream):
            raise TypeError(
                "Pipeline(main=...) takes a window result (the stream a window function "
                f"returns), got {type(self.main).__name__}"
            )
        for name, tag in self.side_outputs.items():
            _check_name(name, "side output")
            if name == "main":
                raise ValueError("a side output cannot be named 'main' (the main output is)")
            if not isinstance(tag, OutputTag):
                raise TypeError(f"side output {name!r}: expected an OutputTag, got {tag!r}")


@dataclass(frozen=True)
class StartedQuery:
    """A query the job started: its name, Spark's query (None for a static input, written
    once) and the sinks of its outputs by output name."""

    name: str
    query: Any
    sinks: Mapping[str, Any]


def _check_name(name: Any, what: str) -> None:
    if not isinstance(name, str) or not name or "." in name or "/" in name:
        raise ValueError(f"{what} name {name!r}: a non-empty name without '.' or '/'")


def load_build(spec: str, *, by_value: bool = False) -> Callable[..., Any]:
    """The build function named by ``package.module[:function]`` or ``file.py[:function]``."""
    target, _, function = spec.partition(":")
    if ":" in function or not target:
        raise JobConfigError(f"module {spec!r}: expected package.module[:function]")
    function = function or "build"
    module = _load_module(target)
    if by_value or target.endswith(".py"):
        # The workers cannot import a module loaded from a file (nor, on Spark Connect, one
        # installed only next to the client): its classes travel inside the pickled functions.
        from pyspark import cloudpickle

        cloudpickle.register_pickle_by_value(module)
    build = getattr(module, function, None)
    if not callable(build):
        raise JobConfigError(f"module {target!r} has no function {function!r}")
    return build  # type: ignore[no-any-return]


def _load_module(target: str) -> ModuleType:
    if target.endswith(".py"):
        path = os.path.abspath(target)
        if not os.path.isfile(path):
            raise JobConfigError(f"module file {target!r} does not exist")
        name = os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise JobConfigError(f"cannot load {target!r} as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name and target.startswith(exc.name):
            raise JobConfigError(f"no module named {target!r}: install it or give a .py "
                                 "file") from exc
        raise


def build_pipelines(build: Callable[..., Any], spark: Any,
                    params: Mapping[str, Any]) -> dict[str, Pipeline]:
    """Call the module's ``build(spark, params)`` (or ``build(spark)``) and name its queries:
    a single ``Pipeline`` (or bare window result) is the query ``""``."""
    signature = inspect.signature(build)
    if _binds(signature, spark, params):
        built = build(spark, dict(params))
    elif _binds(signature, spark):
        if params:
            raise JobConfigError(
                f"{build.__name__}(spark) takes no params, but got {sorted(params)}"
            )
        built = build(spark)
    else:
        raise JobConfigError(
            f"{build.__name__}{signature}: a build function takes (spark, params) or (spark)"
        )
    if isinstance(built, WindowResultStream):
        built = Pipeline(built)
    if isinstance(built, Pipeline):
        return {"": built}
    if isinstance(built, Mapping) and built:
        queries = {}
        for name, value in built.items():
            _check_name(name, "query")
            if isinstance(value, WindowResultStream):
                value = Pipeline(value)
            if not isinstance(value, Pipeline):
                raise TypeError(f"query {name!r}: expected a flinkwin.job.Pipeline, got "
                                f"{type(value).__name__}")
            queries[name] = value
        return queries
    raise TypeError(
        f"{build.__name__} must return a flinkwin.job.Pipeline, a window result, or a non-empty "
        f"dict of query name to Pipeline; got {type(built).__name__}"
    )


def _binds(signature: inspect.Signature, *args: Any) -> bool:
    try:
        signature.bind(*args)
    except TypeError:
        return False
    return True


def output_names(queries: Mapping[str, Pipeline]) -> dict[str, tuple[str, str]]:
    """Every output's job-wide name -> (query, output): ``main``/``late`` for one query,
    ``<query>.main``/``<query>.late`` for several."""
    names = {}
    for query, pipeline in queries.items():
        for output in ["main", *pipeline.side_outputs]:
            names[f"{query}.{output}" if query else output] = (query, output)
    return names


def start_queries(config: JobConfig, queries: Mapping[str, Pipeline]) -> list[StartedQuery]:
    """Start every query with its sinks; each output must have exactly one sink."""
    names = output_names(queries)
    missing = sorted(set(names) - set(config.sinks))
    unknown = sorted(set(config.sinks) - set(names))
    if missing or unknown:
        parts = []
        if missing:
            parts.append(f"no sink for output(s) {missing}")
        if unknown:
            parts.append(f"sink(s) for unknown output(s) {unknown}")
        raise JobConfigError("; ".join(parts) + f"; the module's outputs are {sorted(names)}")
    started: list[StartedQuery] = []
    try:
        for query, pipeline in queries.items():
            sinks = {output: sink_from_spec(config.sinks[name], delta_engine=config.delta_engine)
                     for name, (q, output) in names.items() if q == query}
            checkpoint = config.checkpoint.rstrip("/") + f"/{query}" if query else config.checkpoint
            handle = pipeline.main.start(
                sinks["main"],
                {tag: sinks[name] for name, tag in pipeline.side_outputs.items()},
                checkpoint_location=checkpoint,
                trigger=dict(config.trigger),
                query_name=query or None,
            )
            started.append(StartedQuery(query, handle, sinks))
    except BaseException:
        stop_all(started)
        raise
    return started


def stop_all(started: list[StartedQuery]) -> None:
    for item in started:
        if item.query is not None and item.query.isActive:
            item.query.stop()


class QueryFailed(RuntimeError):
    """A query of the job ended with an error (the others were stopped)."""


def wait(started: list[StartedQuery], config: JobConfig) -> None:
    """Wait until every query has ended (availableNow, once), or for the timeout, or (a
    processing-time job) until one query stops or fails; then stop the rest. Raises
    :class:`QueryFailed` naming each query that failed."""
    deadline = None if config.timeout_seconds is None else time.monotonic() + config.timeout_seconds
    active = [s for s in started if s.query is not None]
    try:
        while active:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                break
            step = 5.0 if remaining is None else min(5.0, remaining)
            for item in active:
                item.query.awaitTermination(step / len(active))
            ended = [s for s in active if not s.query.isActive]
            failed = [s for s in ended if s.query.exception() is not None]
            if failed:
                raise QueryFailed("; ".join(
                    f"query {s.name or 'main'!r} failed: {s.query.exception()}" for s in failed
                ))
            if ended and not config.waits_for_end:
                break  # a processing-time query was stopped: the job ends
            active = [s for s in active if s.query.isActive]
    finally:
        stop_all(started)


def run_job(config: JobConfig, spark: Any = None) -> list[StartedQuery]:
    """Run the job on ``spark`` (default: the session from ``config``) until it ends; returns
    the queries it ran (their sinks, with resolved ids, for reporting)."""
    build = load_build(config.module, by_value=config.pickle_by_value)
    if spark is None:
        spark = make_session(config)
    queries = build_pipelines(build, spark, config.params)
    started = start_queries(config, queries)
    wait(started, config)
    return started


def make_session(config: JobConfig) -> Any:
    """The job's session: ``remote`` (Spark Connect), ``master`` (a new classic session), else
    the active/default one (Databricks' session in a job task, ``SPARK_REMOTE`` if set)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    if config.remote:
        builder = builder.remote(config.remote)
    elif config.master:
        builder = builder.master(config.master).appName("flinkwin-job")
    for key, value in config.conf.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


__all__ = [
    "Pipeline",
    "QueryFailed",
    "StartedQuery",
    "build_pipelines",
    "load_build",
    "make_session",
    "output_names",
    "run_job",
    "start_queries",
    "wait",
]
