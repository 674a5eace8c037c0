"""One local Spark session shared by every Spark test (starting Spark costs seconds)."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest
from jvm_options import long_lived


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.spark)


#: the shared session's settings
SETTINGS = {
    "spark.master": "local[2]",
    "spark.app.name": "flinkwin-tests",
    "spark.sql.shuffle.partitions": "2",
    "spark.default.parallelism": "2",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.streaming.minBatchesToRetain": "5",
    # the tests' checkpoints are on a local disk: docs/operations.md, "Checkpoint files on a
    # local disk" (the crash test's and the users' scripts' own sessions keep Spark's default)
    "spark.sql.streaming.checkpointFileManagerClass": "org.apache.spark.sql.execution."
    "streaming.checkpointing.FileSystemBasedCheckpointFileManager",
}
#: the shared session, being created in the background
_starting: Future[Any] | None = None


def _need_java() -> None:
    if shutil.which("java") is None:
        # Loud, never a skip: a CI run without Java must not pass with no Spark test run.
        pytest.fail("Java 17 is needed for the Spark tests and was not found on PATH "
                    "(apt-get install openjdk-17-jre-headless)", pytrace=False)


def _create_session() -> Any:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in SETTINGS.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _begin() -> Future[Any]:
    """Launch the JVM here, then create the session in a background thread."""
    from pyspark import SparkConf, SparkContext

    # The Python workers must run this interpreter (the venv with flinkwin), set before start.
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    # Window functions defined in test modules are pickled by reference, as a user's own
    # modules are: the Python workers must be able to import them.
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = here if not path else os.pathsep.join([here, path])
    # In the calling thread, within a test's output capture (as when the fixture started it):
    # the JVM's own output goes where the tests' does, not to the terminal.
    # The shared session lives the whole run: the JVM's default compilers (jvm_options.py).
    with long_lived():
        SparkContext._ensure_initialized(conf=SparkConf().setAll(list(SETTINGS.items())))
    return ThreadPoolExecutor(1, thread_name_prefix="spark-start").submit(_create_session)


class _StartAtTheFirstTest:
    """A plugin (so its hook runs for every test, core tests included, unlike this conftest's
    own hooks): at the first test's setup, start the shared session."""

    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        global _starting
        if _starting is None:
            _starting = _begin()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Where the selected tests use the shared Spark session, it is started at the first test
    and created in the background while the core tests (collected first) run, instead of
    after them."""
    if (not session.config.option.collectonly and shutil.which("java") is not None
            and any("spark" in getattr(item, "fixturenames", ()) for item in session.items)):
        session.config.pluginmanager.register(_StartAtTheFirstTest())


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    _need_java()
    session = (_starting or _begin()).result()
    yield session
    session.stop()


@pytest.fixture
def ansi(spark: Any) -> Iterator[Any]:
    """Sets spark.sql.ansi.enabled (which picks the overflow policy) for one test, then
    restores it."""
    previous = spark.conf.get("spark.sql.ansi.enabled")
    yield lambda on: spark.conf.set("spark.sql.ansi.enabled", "true" if on else "false")
    spark.conf.set("spark.sql.ansi.enabled", previous)


@pytest.fixture
def fresh_env(monkeypatch: pytest.MonkeyPatch) -> object:
    """A new process-wide StreamExecutionEnvironment for one test: its settings (runtime mode,
    max parallelism...) do not leak into other tests."""
    from flinkwin.datastream import StreamExecutionEnvironment

    monkeypatch.setattr(StreamExecutionEnvironment, "_current", None)
    return StreamExecutionEnvironment.get_execution_environment()
