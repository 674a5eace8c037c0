"""The core tests' ``env`` fixture (a fresh process-wide ``StreamExecutionEnvironment``,
restored after the test). The Hypothesis profiles are tests/conftest.py's; the realistic-scale
properties take their example count from ``FLINKWIN_PROPERTY_EXAMPLES`` (default 25) for longer
runs."""

from __future__ import annotations

import pytest

from flinkwin.datastream.stream_execution_environment import StreamExecutionEnvironment


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> StreamExecutionEnvironment:
    monkeypatch.setattr(StreamExecutionEnvironment, "_current", None)
    return StreamExecutionEnvironment.get_execution_environment()
