"""Fixtures of the deployment tests: the pipeline's reference run on ``local[2]``, a Spark
Connect server and a standalone cluster, each owned by the test session and always stopped.

Every run is a separate driver process (``deploy_driver.py``): a classic session, a Connect
client and a cluster application cannot share one Python process, and a driver of its own is
also how a deployed job runs."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark_processes import connect_server, run_driver, standalone_cluster


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = str(Path(__file__).parent)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.spark)
            item.add_marker(pytest.mark.beside)  # separate driver processes


def _need_java() -> None:
    if shutil.which("java") is None:
        pytest.fail("Java 17 is needed for the deployment tests and was not found on PATH "
                    "(apt-get install openjdk-17-jre-headless)", pytrace=False)


@pytest.fixture(scope="session")
def local_reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The pipeline's output on the classic ``local[2]`` session."""
    _need_java()
    tmp = tmp_path_factory.mktemp("local")
    return run_driver(["--master", "local[2]"], tmp / "job", tmp / "local.json", tmp)


@pytest.fixture(scope="session")
def connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _need_java()
    with connect_server(tmp_path_factory.mktemp("connect-server")) as url:
        yield url


@pytest.fixture(scope="session")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    _need_java()
    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as url:
        yield url
