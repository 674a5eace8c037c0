"""One local Spark session shared by every Spark test (starting Spark costs seconds)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.spark)


#: the shared session, starting in the background once the run is known to need it
_starting: Future[Any] | None = None


def _need_java() -> None:
    if shutil.which("java") is None:
        # Loud, never a skip: a CI run without Java must not pass with no Spark test run.
        pytest.fail("Java 17 is needed for the Spark tests and was not found on PATH "
                    "(apt-get install openjdk-17-jre-headless)", pytrace=False)


def _start_session() -> Any:
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("flinkwin-tests")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.streaming.minBatchesToRetain", "5")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


def _begin() -> Future[Any]:
    # The Python workers must run this interpreter (the venv with flinkwin), set before start.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # Window functions defined in test modules are pickled by reference, as a user's own
    # modules are: the Python workers must be able to import them.
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = here if not path else os.pathsep.join([here, path])
    return ThreadPoolExecutor(1, thread_name_prefix="spark-start").submit(_start_session)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the shared Spark session in a background thread as soon as the selected tests are
    known to use it: its JVM starts while the core tests (collected first) run, instead of
    after them."""
    global _starting
    if (session.config.option.collectonly or shutil.which("java") is None
            or not any("spark" in getattr(item, "fixturenames", ()) for item in session.items)):
        return
    _starting = _begin()


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    _need_java()
    session = (_starting or _begin()).result()
    yield session
    session.stop()


@pytest.fixture
def fresh_env(monkeypatch: pytest.MonkeyPatch) -> object:
    """A new process-wide StreamExecutionEnvironment for one test: its settings (runtime mode,
    max parallelism...) do not leak into other tests."""
    from flinkwin.datastream import StreamExecutionEnvironment

    monkeypatch.setattr(StreamExecutionEnvironment, "_current", None)
    return StreamExecutionEnvironment.get_execution_environment()
