"""The Python worker's collection between sessions: young generations only.

PySpark's worker daemon (``pyspark.daemon``) forks the Python workers; a reused worker runs
``gc.collect()`` (a full collection) after every session it serves. A window stage's worker
serves a session per state partition and micro-batch, and a full collection walks every object
the worker holds (pandas, pyarrow, the cached operators of :mod:`flinkwin.spark.runtime`): tens
of milliseconds per session, growing with the worker's heap, on every micro-batch.

:func:`young_collections_only`, called by the stage's function in each worker, makes the daemon
loop of that worker process collect generations 0 and 1 only (``gc.collect(1)``); Python's own
thresholds still run full collections as the heap grows, so cyclic garbage is still freed.
It changes only a worker forked by PySpark's own daemon (the daemon runs as ``__main__`` there,
and the loop reads its module's ``gc`` on each pass); a worker of any other daemon module
(``spark.python.daemon.module``), or a daemon that already replaced ``gc``, is left as it is.

While a key group's call runs, :func:`automatic_collection_paused` also holds off Python's
automatic collections: a call allocates an object per input row (the rows Spark hands over, the
elements of a user function), and each automatic collection triggered by those allocations
walks the young objects, and now and then every object of the worker. The allocations counted
meanwhile make the next allocation after the call collect as Python would have, so garbage left
by a call is freed right after it.

Why not a daemon module of flinkwin's for ``spark.python.daemon.module``: ``python -m
flinkwin.spark.daemon`` would import the ``flinkwin`` package (pandas, pyarrow, numpy) in the
daemon before it forks, which starts threads (pyarrow's jemalloc, numpy's BLAS), and PySpark's
daemon must not fork with threads running; it would also need the setting on every cluster.
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Iterator
from types import SimpleNamespace

#: what the patched daemon loop sees as ``gc``: ``collect()`` collects generations 0 and 1
YOUNG_GC = SimpleNamespace(collect=lambda: gc.collect(1))

#: whether this process's daemon loop collects the young generations only (None: not checked)
_applied: bool | None = None


def young_collections_only() -> bool:
    """Make this worker's PySpark daemon loop collect only the young generations after each
    session (see the module docstring). Returns whether the loop now does; cheap to call on
    every key-group call (the check runs once per process)."""
    global _applied
    if _applied is None:
        _applied = _patch_daemon_loop()
    return _applied


def _patch_daemon_loop() -> bool:
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if (
        spec is None
        or spec.name != "pyspark.daemon"
        or getattr(main, "gc", None) is not gc
        or not callable(getattr(main, "worker", None))
    ):
        return False
    main.gc = YOUNG_GC  # type: ignore[union-attr]
    return True


@contextlib.contextmanager
def automatic_collection_paused() -> Iterator[None]:
    """No automatic garbage collection inside the block (see the module docstring); the
    collector's previous state is restored after it, also when the block fails."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


__all__ = ["YOUNG_GC", "automatic_collection_paused", "young_collections_only"]
