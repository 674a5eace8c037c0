"""The subtasks a Python worker process runs: rich functions opened once, closed once.

On Spark a subtask of a streaming window stage is one key group in one Python worker process,
for one run of the query (one ``start()``: each start compiles a new stage id). The first call
for a key group in a worker process creates its :class:`~flinkwin.operator.runtime_context.Subtask`
(its own copy of the user functions); every operator the worker builds for that key group
afterwards (on each restore from Spark's state) runs those same functions, so ``open()`` runs
once before the subtask's first element or timer, not on every restore.

``close()`` runs once per opened subtask when the worker process learns it is done with it:

- the process is ending through ``SIGHUP`` or ``SIGTERM`` (Spark's daemon ends its workers with
  ``SIGHUP`` when the executor or the session stops) or Python's normal exit (``atexit``);
- the process runs key groups of ``MAX_STAGES`` more recent stages (later query runs).

Spark ends an idle worker it no longer needs with ``SIGKILL`` and a lost executor takes its
workers with it: then ``close()`` does not run (the operating system still releases the
process's files and sockets). See ``docs/spark-semantics.md``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import threading
from collections import OrderedDict
from collections.abc import Callable
from types import FrameType

from flinkwin.operator.runtime_context import Subtask

#: How many stages' subtasks a worker process keeps open.
MAX_STAGES = 16
_SIGNALS = tuple(s for s in (getattr(signal, "SIGHUP", None), signal.SIGTERM) if s is not None)


class SubtaskRegistry:
    """The open subtasks of one process, per stage id and key group."""

    def __init__(self, max_stages: int = MAX_STAGES) -> None:
        self.max_stages = max_stages
        self._stages: OrderedDict[str, dict[int, Subtask]] = OrderedDict()

    def get(self, stage: str, index: int, make: Callable[[], Subtask]) -> Subtask:
        """The subtask ``index`` of ``stage``, made by ``make`` the first time; closes the
        subtasks of the stages beyond the ``max_stages`` most recent."""
        _close_on_exit(self)
        groups = self._stages.get(stage)
        if groups is None:
            groups = self._stages[stage] = {}
            while len(self._stages) > self.max_stages:
                _, old = self._stages.popitem(last=False)
                _close(old.values())
        self._stages.move_to_end(stage)
        subtask = groups.get(index)
        if subtask is None:
            subtask = groups[index] = make()
        return subtask

    def close_all(self) -> None:
        """Close every subtask (each once; a failing ``close()`` does not stop the others)."""
        stages, self._stages = self._stages, OrderedDict()
        for groups in stages.values():
            _close(groups.values())


def _close(subtasks: object) -> None:
    for subtask in list(subtasks):  # type: ignore[call-overload]
        with contextlib.suppress(Exception):
            subtask.close()


_installed: set[int] = set()


def _close_on_exit(registry: SubtaskRegistry) -> None:
    """Close ``registry``'s subtasks at exit and on SIGHUP/SIGTERM. Spark's worker resets
    those signals before each task, so the handlers are put back on every call."""
    if id(registry) not in _installed:
        _installed.add(id(registry))
        atexit.register(registry.close_all)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread

    def on_signal(signum: int, frame: FrameType | None) -> None:
        registry.close_all()
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    for signum in _SIGNALS:
        current = signal.getsignal(signum)
        if getattr(current, "_flinkwin", False):
            continue
        if current not in (signal.SIG_DFL, None):
            continue  # someone else's handler: leave it
        on_signal._flinkwin = True  # type: ignore[attr-defined]
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signum, on_signal)


#: This process's subtasks.
SUBTASKS = SubtaskRegistry()

__all__ = ["MAX_STAGES", "SUBTASKS", "SubtaskRegistry"]
