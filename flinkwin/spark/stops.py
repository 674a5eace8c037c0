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
        from pyspark.sql.streaming import StreamingQueryListener

        sc = session.sparkContext
        streams = session.streams
    except Exception:  # noqa: BLE001 (Spark Connect: no SparkContext here)
        return
    local = str(sc.master).startswith("local")  # the workers share the driver's host

    class StopListener(StreamingQueryListener):
        #: runs whose progress showed a flinkwin stage (those worth a job on the executors)
        flinkwin_runs: set[str] = set()

        def onQueryStarted(self, event: Any) -> None:  # noqa: N802 (Spark's names)
            pass

        def onQueryProgress(self, event: Any) -> None:  # noqa: N802
            if not local:
                progress = event.progress
                if any(name.startswith("flinkwin") for name in progress.observedMetrics):
                    self.flinkwin_runs.add(str(progress.runId))

        def onQueryIdle(self, event: Any) -> None:  # noqa: N802
            pass

        def onQueryTerminated(self, event: Any) -> None:  # noqa: N802
            run = str(event.runId)
            with contextlib.suppress(OSError, ValueError):  # else the idle timeout closes
                write_marker(run)
            if run in self.flinkwin_runs:  # not on the listener's thread: it delivers
                self.flinkwin_runs.discard(run)  # every query's events
                threading.Thread(target=_signal, args=(sc, run), daemon=True,
                                 name="flinkwin-stops").start()

    with _lock:
        if id(session) in _watched:
            return
        listener = StopListener()
        streams.addListener(listener)
        _watched[id(session)] = (session, listener)


def _signal(sc: Any, run: str) -> None:
    with contextlib.suppress(Exception):  # the application is ending: the idle timeout closes
        signal_executors(sc, run)


__all__ = ["MARKER_TTL_S", "signal_executors", "watch_stops", "write_marker"]
