"""The subtasks a Python worker process runs: rich functions opened once, closed once.

On Spark a subtask of a streaming window or graph stage is one key group in one Python worker
process, for one run of the query. The first call for a key group in a worker process creates
its :class:`~flinkwin.operator.runtime_context.Subtask` (its own copy of the user functions; a
graph's: :class:`~flinkwin.operator.graph_subtask.GraphSubtask`); every operator the worker
builds for that key group afterwards (on each restore from Spark's state) runs those same
functions, so ``open()`` runs once before the subtask's first element or timer, not on every
restore.

A query run is told apart by its run id, which Spark's micro-batch execution hands every task
as the job group (local property ``spark.jobGroup.id``): a restarted query is a new run, whose
subtasks open again (as a restored Flink job's do). Spark never tells a Python worker that a
query stopped (it reuses worker processes across queries and ends idle ones with ``SIGKILL``),
so the driver does (:mod:`flinkwin.spark.stops`): when a query run terminates, stopped or
failed, it writes an empty marker file named by the run id into :func:`stop_directory` (the
host's temporary directory, on each executor host too). ``close()`` runs once per opened
subtask when:

- the marker of its run appears (the worker's background thread looks every ``POLL_S``
  seconds), as soon as no call of the stage is running;
- else the worker process has not run the stage for ``idle_close_s`` seconds (the stage's
  ``spark.flinkwin.subtask.closeAfterIdleSeconds``, default 30, below the minute after which
  Spark kills an idle worker): after the query's last batch, or between batches further apart;
  a later call opens a new subtask (``open()`` again, as a restarted Flink task does);
- the worker process runs stages of ``MAX_STAGES`` more recent query runs;
- a call of the stage fails (PySpark's worker process then exits with ``os._exit``, which
  skips ``atexit``), or the call ends in a worker process that Spark does not reuse
  (``spark.python.worker.reuse=false``: it exits the same way after each task);
- the process exits through Python's normal shutdown (``atexit``).

A worker killed while busy, or a lost executor, closes nothing (the operating system still
releases the process's files and sockets). See ``docs/spark-semantics.md``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from flinkwin.operator.runtime_context import Subtask

#: How many stages' subtasks a worker process keeps open.
MAX_STAGES = 16
#: The Spark conf setting how long a worker process keeps an idle stage's subtasks open.
IDLE_CLOSE_CONF = "spark.flinkwin.subtask.closeAfterIdleSeconds"
#: Its default.
DEFAULT_IDLE_CLOSE_S = 30.0
#: How often a worker process looks for the stop markers of its runs, in seconds.
POLL_S = 0.5
#: The task's local property holding the query run's id (Spark's micro-batch job group).
RUN_PROPERTY = "spark.jobGroup.id"


def stop_directory() -> str:
    """Where the stop markers of query runs are written and looked for: a directory of this
    host's temporary directory, one per user."""
    user = os.getuid() if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"flinkwin-stopped-{user}")


def reused_worker() -> bool:
    """Whether this process goes on after the task: False only in a Spark Python worker that
    Spark does not reuse (PySpark's daemon ends a worker after its first task unless
    ``SPARK_REUSE_WORKER`` is set); True outside a Spark task."""
    from pyspark import TaskContext

    return TaskContext.get() is None or bool(os.environ.get("SPARK_REUSE_WORKER"))


def current_run() -> str:
    """The run id of the streaming query running this task ("" outside one)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    run = context.getLocalProperty(RUN_PROPERTY) if context is not None else None
    return run or ""


def idle_close_seconds(session: Any) -> float:
    """The session's ``spark.flinkwin.subtask.closeAfterIdleSeconds`` (a positive number)."""
    try:
        text = session.conf.get(IDLE_CLOSE_CONF, None)
    except Exception:  # a conf Spark Connect's server refuses to read: the default
        text = None
    if text is None:
        return DEFAULT_IDLE_CLOSE_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"{IDLE_CLOSE_CONF}={text!r}: must be a positive number of seconds")
    return value


@dataclass
class _Stage:
    idle_close_s: float
    #: the query run whose stop marker closes the stage ("": none)
    run: str = ""
    subtasks: dict[int, Subtask] = field(default_factory=dict)
    busy: int = 0
    last_used: float = field(default_factory=time.monotonic)


class SubtaskRegistry:
    """The open subtasks of one process, per stage (of one query run) and key group
    (thread-safe: a background thread closes idle and stopped stages)."""

    def __init__(self, max_stages: int = MAX_STAGES, stops: str | None = None) -> None:
        self.max_stages = max_stages
        #: the directory of stop markers (default: :func:`stop_directory`)
        self.stops = stops
        self._stages: OrderedDict[str, _Stage] = OrderedDict()
        self._lock = threading.RLock()
        self._watcher: threading.Thread | None = None
        self._at_exit = False

    @contextlib.contextmanager
    def running(self, stage: str, idle_close_s: float = DEFAULT_IDLE_CLOSE_S,
                run: str = "") -> Iterator[None]:
        """Mark ``stage`` (of query run ``run``) busy, never closed, while the block runs."""
        with self._lock:
            entry = self._entry(stage, idle_close_s, run)
            entry.busy += 1
        try:
            yield
        finally:
            with self._lock:
                entry.busy -= 1
                entry.last_used = time.monotonic()

    def get(self, stage: str, index: int, make: Callable[[], Subtask],
            idle_close_s: float = DEFAULT_IDLE_CLOSE_S, run: str = "") -> Subtask:
        """The open subtask ``index`` of ``stage`` (of query run ``run``), made by ``make``
        the first time (and after the previous one was closed)."""
        with self._lock:
            entry = self._entry(stage, idle_close_s, run)
            subtask = entry.subtasks.get(index)
            if subtask is None or subtask.closed:
                subtask = entry.subtasks[index] = make()
            return subtask

    def _entry(self, stage: str, idle_close_s: float, run: str) -> _Stage:
        entry = self._stages.get(stage)
        if entry is None:
            entry = self._stages[stage] = _Stage(idle_close_s, run)
            while len(self._stages) > self.max_stages:
                _, old = self._stages.popitem(last=False)
                _close(old.subtasks.values())
        self._stages.move_to_end(stage)
        entry.last_used = time.monotonic()
        self._watch()
        return entry

    def close_idle(self, now: float | None = None) -> None:
        """Close the subtasks of every stage not running and either idle for its
        ``idle_close_s`` or of a query run whose stop marker is there."""
        now = time.monotonic() if now is None else now
        stops = self.stops or stop_directory()
        with self._lock:
            for stage, entry in list(self._stages.items()):
                if entry.busy == 0 and (
                    now - entry.last_used >= entry.idle_close_s
                    or entry.run and os.path.exists(os.path.join(stops, entry.run))
                ):
                    del self._stages[stage]
                    _close(entry.subtasks.values())

    def close_stage(self, stage: str) -> None:
        """Close the subtasks of ``stage`` now (its call failed, or the process exits after
        it): the worker process ends without running ``atexit``."""
        with self._lock:
            entry = self._stages.pop(stage, None)
            if entry is not None:
                _close(entry.subtasks.values())

    def close_all(self) -> None:
        """Close every subtask (each once; a failing ``close()`` does not stop the others)."""
        with self._lock:
            stages, self._stages = self._stages, OrderedDict()
            for entry in stages.values():
                _close(entry.subtasks.values())

    def _watch(self) -> None:
        if self._watcher is not None and self._watcher.is_alive():
            return
        if not self._at_exit:
            self._at_exit = True
            atexit.register(self.close_all)
        self._watcher = threading.Thread(target=self._run, name="flinkwin-subtasks",
                                         daemon=True)
        self._watcher.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                if not self._stages:
                    self._watcher = None
                    return
                step = min(e.idle_close_s for e in self._stages.values()) / 4
            time.sleep(min(max(step, 0.05), POLL_S))
            self.close_idle()


def _close(subtasks: Iterable[Subtask]) -> None:
    for subtask in list(subtasks):
        with contextlib.suppress(Exception):
            subtask.close()


#: This process's subtasks.
SUBTASKS = SubtaskRegistry()

__all__ = [
    "DEFAULT_IDLE_CLOSE_S", "IDLE_CLOSE_CONF", "MAX_STAGES", "POLL_S", "RUN_PROPERTY", "SUBTASKS",
    "SubtaskRegistry", "current_run", "idle_close_seconds", "reused_worker", "stop_directory",
]
