"""Telling the Python workers that a query run ended, so that they close its subtasks.

Spark never tells a Python worker that a streaming query stopped, failed or finished. The
driver learns it from a ``StreamingQueryListener`` that :func:`watch_stops` adds to a session
once, when a streaming window or graph stage is compiled on it (queries started with
``start()`` or from ``toDF()`` alike). When a query run terminates, the listener writes the
run's stop marker (an empty file named by the run id) into
:func:`~flinkwin.spark.subtasks.stop_directory` on the driver's host, where the Python workers
of a local master look for it (:mod:`flinkwin.spark.subtasks`). On any other master it also
runs a small Spark job, one task per core of the application (``defaultParallelism``), whose
tasks write the marker on the executors they run on: Spark's scheduler spreads such tasks over
the executors, but does not promise to reach each, and a worker that sees no marker closes
after its idle timeout (``spark.flinkwin.subtask.closeAfterIdleSeconds``). That job runs only
for query runs whose progress carried a flinkwin stage's observed metrics (``flinkwin...``), so
the session's other queries never cause one; a run stopped before its first progress report
has its executors' workers closed by the idle timeout.

The query's checkpoint location is not used for the signal, although every executor can reach
it: it is reached through Hadoop's file systems in the JVM, which a Python worker cannot read
(only a local or mounted path would do).

Spark Connect sessions get no listener (their listeners run on the server): their workers close
after the idle timeout. Markers older than an hour are removed when a new one is written.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
import uuid
from typing import Any

from .subtasks import stop_directory

#: How long a stop marker is kept, in seconds.
MARKER_TTL_S = 3600.0

_lock = threading.Lock()
#: the sessions with a stop listener (kept alive with their listeners)
_watched: dict[int, tuple[Any, Any]] = {}


def write_marker(run: str, directory: str | None = None) -> None:
    """Write the stop marker of query run ``run`` (a run id: a UUID) into ``directory``
    (default: this host's :func:`~flinkwin.spark.subtasks.stop_directory`)."""
    name = str(uuid.UUID(run))  # a run id, never a path
    directory = directory or stop_directory()
    os.makedirs(directory, mode=0o700, exist_ok=True)
    now = time.time()
    for old in os.listdir(directory):
        path = os.path.join(directory, old)
        try:
            if now - os.path.getmtime(path) > MARKER_TTL_S:
                os.remove(path)
        except OSError:  # removed meanwhile by another process
            continue
    with open(os.path.join(directory, name), "a"):
        pass


def signal_executors(sc: Any, run: str) -> None:
    """Run the job that writes ``run``'s stop marker on the executors (see module docstring)."""
    tasks = max(int(sc.defaultParallelism), 1)

    def touch(_: Any) -> Any:
        from flinkwin.spark.stops import write_marker

        write_marker(run)
        return iter(())

    description = sc.getLocalProperty("spark.job.description")
    sc.setJobDescription(f"flinkwin: close the functions of stopped query run {run}")
    try:
        sc.parallelize(range(tasks), tasks).mapPartitions(touch).count()
    finally:
        sc.setJobDescription(description)


def watch_stops(session: Any) -> None:
    """Add the stop listener to ``session`` (once; nothing on a Spark Connect session)."""
    try:
        sc = session.sparkContext
        streams = session.streams
    except Exception:  # noqa: BLE001 (Spark Connect: no SparkContext here)
        return
    with _lock:
        if id(session) in _watched:
            return
        listener = StopListener(sc, local=str(sc.master).startswith("local"))
        jlistener = _add_listener(streams, listener)
        _watched[id(session)] = (session, listener)
        # a script ending right after its query would otherwise have Spark's listener bus
        # call the listener after Python's callback server is gone: an ERROR with a stack
        # trace at every exit (PySpark's own listeners do so)
        atexit.register(_remove_listener, sc, streams, jlistener)


class StopListener:
    """The stop listener, called by Spark's JVM with the events as JVM objects (through py4j),
    of which it reads only what it needs: PySpark's own ``StreamingQueryListener`` converts
    each progress event whole first, about a hundred py4j calls per micro-batch of every
    query of the session (``docs/benchmarks.md``, fixed cost round 4)."""

    def __init__(self, sc: Any, local: bool) -> None:
        self.sc = sc
        #: the workers share the driver's host: the marker there reaches them all
        self.local = local
        #: runs whose progress showed a flinkwin stage (those worth a job on the executors)
        self.flinkwin_runs: set[str] = set()

    def onQueryStarted(self, event: Any) -> None:  # noqa: N802 (Spark's names)
        pass

    def onQueryProgress(self, event: Any) -> None:  # noqa: N802
        if self.local:
            return
        progress = event.progress()
        run = str(progress.runId().toString())
        if run not in self.flinkwin_runs and any(
            str(name).startswith("flinkwin") for name in progress.observedMetrics().keySet()
        ):
            self.flinkwin_runs.add(run)

    def onQueryIdle(self, event: Any) -> None:  # noqa: N802
        pass

    def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
        run = str(event.runId().toString())
        with contextlib.suppress(OSError, ValueError):  # else the idle timeout closes
            write_marker(run)
        if run in self.flinkwin_runs:  # not on the listener's thread: it delivers
            self.flinkwin_runs.discard(run)  # every query's events
            threading.Thread(target=_signal, args=(self.sc, run), daemon=True,
                             name="flinkwin-stops").start()

    class Java:
        implements = ["org.apache.spark.sql.streaming.PythonStreamingQueryListener"]


def _add_listener(streams: Any, listener: StopListener) -> Any:
    """Register ``listener`` with the session's ``StreamingQueryManager`` as PySpark's
    ``streams.addListener`` does, minus PySpark's conversion of every event; returns the JVM's
    listener (for ``streams._jsqm.removeListener``)."""
    from pyspark import SparkContext
    from pyspark.java_gateway import ensure_callback_server_started

    gateway = SparkContext._gateway
    assert gateway is not None and SparkContext._jvm is not None
    ensure_callback_server_started(gateway)
    wrapper = SparkContext._jvm.org.apache.spark.sql.streaming.PythonStreamingQueryListenerWrapper
    jlistener = wrapper(listener)
    streams._jsqm.addListener(jlistener)
    return jlistener


def _remove_listener(sc: Any, streams: Any, jlistener: Any) -> None:
    """At exit: let Spark's listener bus deliver the events it holds (a query's end) while
    Python can still answer (at most 2 s), then remove the listener."""
    with contextlib.suppress(Exception):  # the session or its JVM may be gone already
        sc._jsc.sc().listenerBus().waitUntilEmpty(2000)
    with contextlib.suppress(Exception):
        streams._jsqm.removeListener(jlistener)


def _signal(sc: Any, run: str) -> None:
    with contextlib.suppress(Exception):  # the application is ending: the idle timeout closes
        signal_executors(sc, run)


__all__ = ["MARKER_TTL_S", "StopListener", "signal_executors", "watch_stops", "write_marker"]
