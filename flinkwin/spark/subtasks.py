"""The subtasks a Python worker process runs: rich functions opened once, closed once.

On Spark a subtask of a streaming window stage is one key group in one Python worker process,
for one run of the query (one ``start()``: each start compiles a new stage id). The first call
for a key group in a worker process creates its :class:`~flinkwin.operator.runtime_context.Subtask`
(its own copy of the user functions); every operator the worker builds for that key group
afterwards (on each restore from Spark's state) runs those same functions, so ``open()`` runs
once before the subtask's first element or timer, not on every restore.

A Python worker never learns that a query stopped (Spark reuses worker processes across queries
and ends idle ones with ``SIGKILL``), so ``close()`` runs once per opened subtask when:

- the worker process has not run the stage for ``idle_close_s`` seconds (the stage's
  ``spark.flinkwin.subtask.closeAfterIdleSeconds``, default 30, below the minute after which
  Spark kills an idle worker): after the query's last batch, or between batches further apart;
  a later call opens a new subtask (``open()`` again, as a restarted Flink task does);
- the worker process runs stages of ``MAX_STAGES`` more recent query runs;
- the process exits through Python's normal shutdown (``atexit``).

A worker killed while busy, or a lost executor, closes nothing (the operating system still
releases the process's files and sockets). See ``docs/spark-semantics.md``.
"""

from __future__ import annotations

import atexit
import contextlib
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
    subtasks: dict[int, Subtask] = field(default_factory=dict)
    busy: int = 0
    last_used: float = field(default_factory=time.monotonic)


class SubtaskRegistry:
    """The open subtasks of one process, per stage id and key group (thread-safe: a
    background thread closes idle stages)."""

    def __init__(self, max_stages: int = MAX_STAGES) -> None:
        self.max_stages = max_stages
        self._stages: OrderedDict[str, _Stage] = OrderedDict()
        self._lock = threading.RLock()
        self._watcher: threading.Thread | None = None
        self._at_exit = False

    @contextlib.contextmanager
    def running(self, stage: str, idle_close_s: float = DEFAULT_IDLE_CLOSE_S) -> Iterator[None]:
        """Mark ``stage`` busy (never closed for idleness) while the block runs."""
        with self._lock:
            entry = self._entry(stage, idle_close_s)
            entry.busy += 1
        try:
            yield
        finally:
            with self._lock:
                entry.busy -= 1
                entry.last_used = time.monotonic()

    def get(self, stage: str, index: int, make: Callable[[], Subtask],
            idle_close_s: float = DEFAULT_IDLE_CLOSE_S) -> Subtask:
        """The open subtask ``index`` of ``stage``, made by ``make`` the first time (and
        after the previous one was closed)."""
        with self._lock:
            entry = self._entry(stage, idle_close_s)
            subtask = entry.subtasks.get(index)
            if subtask is None or subtask.closed:
                subtask = entry.subtasks[index] = make()
            return subtask

    def _entry(self, stage: str, idle_close_s: float) -> _Stage:
        entry = self._stages.get(stage)
        if entry is None:
            entry = self._stages[stage] = _Stage(idle_close_s)
            while len(self._stages) > self.max_stages:
                _, old = self._stages.popitem(last=False)
                _close(old.subtasks.values())
        self._stages.move_to_end(stage)
        entry.last_used = time.monotonic()
        self._watch()
        return entry

    def close_idle(self, now: float | None = None) -> None:
        """Close the subtasks of every stage not running and idle for its ``idle_close_s``."""
        now = time.monotonic() if now is None else now
        with self._lock:
            for stage, entry in list(self._stages.items()):
                if entry.busy == 0 and now - entry.last_used >= entry.idle_close_s:
                    del self._stages[stage]
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
            time.sleep(min(max(step, 0.05), 5.0))
            self.close_idle()


def _close(subtasks: Iterable[Subtask]) -> None:
    for subtask in list(subtasks):
        with contextlib.suppress(Exception):
            subtask.close()


#: This process's subtasks.
SUBTASKS = SubtaskRegistry()

__all__ = [
    "DEFAULT_IDLE_CLOSE_S", "IDLE_CLOSE_CONF", "MAX_STAGES", "SUBTASKS", "SubtaskRegistry",
    "idle_close_seconds",
]
