"""The core tests' ``env`` fixture (a fresh process-wide ``StreamExecutionEnvironment``,
restored after the test) and the Hypothesis profiles for the property tests: ``flinkwin`` (the
default) and ``ci`` (derandomized: every run tries the same cases, so a failure reproduces).
Choose with ``HYPOTHESIS_PROFILE=ci``. Neither has Hypothesis' 200 ms deadline per example: the
properties check results, not speed, and under a loaded machine's scheduling a deadline only
makes them flaky. The realistic-scale properties take their example count from
``FLINKWIN_PROPERTY_EXAMPLES`` (default 25) for longer runs."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings

from flinkwin.datastream.stream_execution_environment import StreamExecutionEnvironment

settings.register_profile("flinkwin", deadline=None)
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "flinkwin"))


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> StreamExecutionEnvironment:
    monkeypatch.setattr(StreamExecutionEnvironment, "_current", None)
    return StreamExecutionEnvironment.get_execution_environment()
