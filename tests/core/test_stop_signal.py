"""The stop listener (flinkwin.spark.stops) runs its job on the executors only for query runs
that ran a flinkwin stage: the session's other queries never cause a Spark job."""

from __future__ import annotations

import uuid
from types import SimpleNamespace
from typing import Any

import pytest

from flinkwin.spark import stops


def _listener(monkeypatch: pytest.MonkeyPatch, master: str) -> tuple[Any, list[str]]:
    added: list[Any] = []
    signalled: list[str] = []
    session = SimpleNamespace(
        sparkContext=SimpleNamespace(master=master, defaultParallelism=2),
        streams=SimpleNamespace(),
    )
    monkeypatch.setattr(stops, "_add_listener", lambda streams, listener: added.append(listener))
    monkeypatch.setattr(stops, "_watched", {})
    monkeypatch.setattr(stops, "_signal", lambda sc, run: signalled.append(run))
    monkeypatch.setattr(stops, "write_marker", lambda run: None)
    stops.watch_stops(session)
    (listener,) = added
    return listener, signalled


def _java(value: Any) -> Any:
    """A JVM object as py4j hands it over: its fields are methods."""
    return lambda: value


def _progress(run: str, metrics: dict[str, Any]) -> Any:
    run_id = SimpleNamespace(toString=_java(run))
    observed = SimpleNamespace(keySet=_java(set(metrics)))
    return SimpleNamespace(progress=_java(SimpleNamespace(runId=_java(run_id),
                                                          observedMetrics=_java(observed))))


def _terminated(run: str) -> Any:
    return SimpleNamespace(runId=_java(SimpleNamespace(toString=_java(run))))


def test_only_runs_with_a_flinkwin_stage_run_the_executor_job(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    listener, signalled = _listener(monkeypatch, "spark://master:7077")
    ours, theirs = str(uuid.uuid4()), str(uuid.uuid4())
    listener.onQueryProgress(_progress(ours, {"flinkwin": {}}))
    listener.onQueryProgress(_progress(theirs, {"users_metrics": {}}))
    for run in (ours, theirs):
        listener.onQueryTerminated(_terminated(run))
    for thread in stops.threading.enumerate():
        if thread.name == "flinkwin-stops":
            thread.join(5)
    assert signalled == [ours]


def test_a_local_master_runs_no_executor_job(monkeypatch: pytest.MonkeyPatch) -> None:
    listener, signalled = _listener(monkeypatch, "local[2]")
    run = str(uuid.uuid4())
    listener.onQueryProgress(_progress(run, {"flinkwin": {}}))
    listener.onQueryTerminated(_terminated(run))
    assert signalled == []
