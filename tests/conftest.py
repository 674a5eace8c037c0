"""Settings for every test process and for the Spark processes the tests start, and the
Hypothesis profiles of the property tests: ``flinkwin`` (the default) and ``ci``
(derandomized: every run tries the same cases, so a failure reproduces; choose it with
``HYPOTHESIS_PROFILE=ci``). Neither has Hypothesis' 200 ms deadline per example: the
properties check results, not speed, and on a loaded machine a deadline only makes them
flaky."""

from __future__ import annotations

import os

import pytest
from hypothesis import settings
from jvm_options import set_short_lived, start_class_archive, use_class_archive
from tiers import EXTENDED

set_short_lived()
settings.register_profile("flinkwin", deadline=None)
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "flinkwin"))

_core = os.path.join(os.path.dirname(os.path.abspath(__file__)), "core")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Where tests beyond the core ones are selected (they start Spark JVMs), have the class
    archive made in the background while the first tests run."""
    if not session.config.option.collectonly and any(
            not str(item.fspath).startswith(_core) for item in session.items):
        start_class_archive()


_here = os.path.dirname(os.path.abspath(__file__))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        node = os.path.relpath(str(item.fspath), _here).replace(os.sep, "/")
        if f"{node}::{item.name}" in EXTENDED:
            item.add_marker(pytest.mark.extended)


def pytest_runtest_setup(item: pytest.Item) -> None:
    use_class_archive()
