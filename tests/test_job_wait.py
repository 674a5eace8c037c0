"""How ``flinkwin-job`` waits for its queries (Spark-free: queries are stand-ins with the
``StreamingQuery`` methods it uses)."""

from __future__ import annotations

import pytest

from flinkwin.job import QueryFailed, build_config
from flinkwin.job.runner import StartedQuery, wait


class FakeQuery:
    """Ends after ``ends_after`` waits (never when None), with ``error`` if given."""

    def __init__(self, ends_after: int | None, error: Exception | None = None) -> None:
        self.left = ends_after
        self.error = error
        self.stopped = False

    @property
    def isActive(self) -> bool:  # noqa: N802
        return not self.stopped and (self.left is None or self.left > 0)

    def awaitTermination(self, timeout: float) -> bool:  # noqa: N802
        if self.left is not None and self.left > 0:
            self.left -= 1
        return not self.isActive

    def exception(self) -> Exception | None:
        return None if self.isActive or self.stopped else self.error

    def stop(self) -> None:
        self.stopped = True


def _config(trigger: str, timeout: float | None = None) -> object:
    values = {"module": "m", "checkpoint": "/ck", "sinks": {"main": "console"},
              "trigger": trigger}
    if timeout is not None:
        values["timeout_seconds"] = timeout
    return build_config(values)


def _started(*queries: FakeQuery) -> list[StartedQuery]:
    return [StartedQuery(f"q{i}", q, {}) for i, q in enumerate(queries)]


def test_available_now_waits_until_every_query_has_ended() -> None:
    a, b = FakeQuery(1), FakeQuery(4)
    wait(_started(a, b), _config("availableNow"))
    assert not a.isActive and not b.isActive and b.left == 0 and not b.stopped


def test_a_failed_query_is_named_and_the_others_are_stopped() -> None:
    ok, bad = FakeQuery(None), FakeQuery(2, RuntimeError("boom"))
    with pytest.raises(QueryFailed, match="query 'q1' failed: boom"):
        wait(_started(ok, bad), _config("availableNow"))
    assert ok.stopped


def test_processing_time_runs_until_the_timeout_then_stops_every_query() -> None:
    a, b = FakeQuery(None), FakeQuery(None)
    wait(_started(a, b), _config("processingTime=1 second", timeout=0.01))
    assert a.stopped and b.stopped


def test_processing_time_job_ends_when_one_query_stops() -> None:
    running, stopping = FakeQuery(None), FakeQuery(3)
    wait(_started(running, stopping), _config("processingTime=1 second"))
    assert running.stopped


def test_a_static_input_written_once_has_nothing_to_wait_for() -> None:
    wait([StartedQuery("", None, {})], _config("availableNow"))
