"""Spark servers the deployment tests own: a Spark Connect server and a standalone cluster
(master + workers), started from the pyspark installation as subprocesses on loopback with
free ports, waited for with bounded timeouts, and always stopped (their whole process groups,
so the JVMs they fork go too)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
HERE = Path(__file__).resolve().parent
DRIVER = HERE / "deploy_driver.py"
START_TIMEOUT_S = 240.0
DRIVER_TIMEOUT_S = 1200.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spark_env(tmp: Path) -> dict[str, str]:
    """The environment of every Spark process: this interpreter for Python workers, loopback
    only, logs and pid files under ``tmp``, an ident when ``USER`` is unset."""
    env = dict(os.environ)
    env.update(
        SPARK_HOME=str(SPARK_HOME),
        PYSPARK_PYTHON=sys.executable,
        PYSPARK_DRIVER_PYTHON=sys.executable,
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(tmp / "logs"),
        SPARK_PID_DIR=str(tmp / "pids"),
        SPARK_WORKER_DIR=str(tmp / "work"),
        SPARK_IDENT_STRING=os.environ.get("USER") or "flinkwin-tests",
        SPARK_NO_DAEMONIZE="1",
    )
    # The pipeline's user module travels with addPyFile/addArtifacts, not the environment.
    env.pop("PYTHONPATH", None)
    return env


class Processes:
    """Subprocesses started in their own process groups, each logging to a file."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.env = spark_env(tmp)
        self.procs: list[tuple[subprocess.Popen[bytes], Path]] = []

    def start(self, name: str, argv: list[str]) -> subprocess.Popen[bytes]:
        log = self.tmp / f"{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                argv, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )
        self.procs.append((proc, log))
        return proc

    def wait_until(self, what: str, ready: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for proc, log in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(
                        f"{proc.args[0]} exited ({proc.returncode}) before {what}:\n"
                        + log.read_text(errors="replace")[-3000:]
                    )
            with contextlib.suppress(OSError, ValueError):
                if ready():
                    return
            time.sleep(1.0)
        raise TimeoutError(f"{what} not within {timeout:.0f} s; logs in {self.tmp}")

    def stop(self) -> None:
        """SIGTERM every process group, then SIGKILL what is left after 30 s."""
        for proc, _ in reversed(self.procs):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 30
        for proc, _ in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
        self.procs.clear()


def _port_open(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=2):
        return True


@contextlib.contextmanager
def connect_server(tmp: Path) -> Iterator[str]:
    """A local Spark Connect server (``sbin/start-connect-server.sh --wait`` on ``local[2]``);
    yields its ``sc://`` URL."""
    port = free_port()
    procs = Processes(tmp)
    # The server starts its foreachBatch Python worker as a fresh process and waits a fixed
    # 10 s for it to connect back; on a starved machine (load ~30 on 2 cores, as here) its
    # imports alone take longer. spark-daemon.sh runs the server under `nice -n
    # $SPARK_NICENESS`, and its Python workers inherit that priority.
    if os.geteuid() == 0:
        procs.env.setdefault("SPARK_NICENESS", "-5")
    try:
        procs.start("connect-server", [
            "bash", str(SPARK_HOME / "sbin" / "start-connect-server.sh"), "--wait",
            "--master", "local[2]",
            "--conf", f"spark.connect.grpc.binding.port={port}",
            "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
            "--conf", "spark.driver.host=127.0.0.1",
            "--conf", "spark.driver.bindAddress=127.0.0.1",
            "--conf", "spark.ui.enabled=false",
            "--conf", "spark.sql.shuffle.partitions=2",
            "--conf", "spark.sql.session.timeZone=UTC",
            "--conf", f"spark.pyspark.python={sys.executable}",
        ])
        procs.wait_until("the Spark Connect server listens", lambda: _port_open(port),
                         START_TIMEOUT_S)
        yield f"sc://127.0.0.1:{port}"
    finally:
        procs.stop()


@contextlib.contextmanager
def standalone_cluster(tmp: Path, workers: int = 2) -> Iterator[str]:
    """A standalone master and ``workers`` workers (1 core, 1 GB each) through ``spark-class``;
    yields the master URL once every worker has registered."""
    port, ui = free_port(), free_port()
    spark_class = str(SPARK_HOME / "bin" / "spark-class")
    procs = Processes(tmp)
    try:
        procs.start("master", [
            spark_class, "org.apache.spark.deploy.master.Master",
            "--host", "127.0.0.1", "--port", str(port), "--webui-port", str(ui),
        ])
        url = f"spark://127.0.0.1:{port}"
        procs.wait_until("the master listens", lambda: _port_open(port), START_TIMEOUT_S)
        for i in range(workers):
            procs.start(f"worker-{i}", [
                spark_class, "org.apache.spark.deploy.worker.Worker",
                "--host", "127.0.0.1", "--port", str(free_port()),
                "--webui-port", str(free_port()), "--cores", "1", "--memory", "1g",
                "--work-dir", str(tmp / f"work-{i}"), url,
            ])

        def registered() -> bool:
            with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=5) as r:
                state = json.load(r)
            return sum(w.get("state") == "ALIVE" for w in state.get("workers", [])) >= workers

        procs.wait_until(f"{workers} workers register", registered, START_TIMEOUT_S)
        yield url
    finally:
        procs.stop()


def run_driver(
    where: list[str], work: Path, out: Path, tmp: Path, script: Path = DRIVER
) -> dict[str, object]:
    """Runs ``script`` (``deploy_driver.py``) in a subprocess (its own Spark session) and
    returns its JSON."""
    env = spark_env(tmp)
    env.pop("SPARK_NO_DAEMONIZE")
    log = tmp / f"driver-{out.stem}.log"
    with open(log, "wb") as f:
        proc = subprocess.Popen(
            [sys.executable, str(script), *where, str(work), str(out)],
            env=env, stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=DRIVER_TIMEOUT_S)
        finally:
            if proc.poll() is None:  # timed out (or interrupted): its JVM goes with it
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-4000:]
        raise AssertionError(f"driver {where} failed ({proc.returncode}):\n{tail}")
    return json.loads(out.read_text())
