"""Probe-only instrumentation (issue 31 performance): a :class:`ChainedNode` that records, per
call of a distributed graph's keyed node in Spark's Python worker, the wall and CPU time of the
whole call (pyspark's input conversion, flinkwin's work, the state calls) and, optionally, a
cProfile on the thread's CPU clock. Used by ``profile_31_distributed.py``; nothing in flinkwin
changes (the probe puts this class in place of ``graph_chained_nodes.ChainedNode`` on the driver;
the workers import it from ``bench/probes``)."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from typing import Any

from flinkwin.operator.graph_chain import ChainStep
from flinkwin.spark.graph_chained import ChainedGraph
from flinkwin.spark.graph_chained_nodes import ChainedNode

#: per call: CPU seconds and calls of the pieces below (patched in the worker at import)
PIECES: dict[str, list[float]] = {}


def _timed(owner: Any, name: str, label: str) -> None:
    inner = getattr(owner, name)

    def wrapper(*a: Any, **k: Any) -> Any:
        c = time.thread_time()
        try:
            return inner(*a, **k)
        finally:
            p = PIECES.setdefault(label, [0.0, 0])
            p[0] += time.thread_time() - c
            p[1] += 1

    setattr(owner, name, wrapper)


for _owner, _name, _label in (
    (ChainStep, "restore", "restore"), (ChainStep, "snapshot", "snapshot"),
    (ChainStep, "run", "run"), (ChainStep, "run_sources", "run_sources"),
    (ChainedGraph, "encode", "encode"), (ChainedGraph, "decode", "decode"),
):
    _timed(_owner, _name, _label)


class ProfiledNode(ChainedNode):
    out_dir = ""
    profile = False

    def _measured(self, kind: str, key: Any, produce: Any) -> Iterator[Any]:
        import cProfile

        from pyspark import TaskContext

        PIECES.clear()
        prof = cProfile.Profile(time.thread_time) if self.profile else None
        t0, c0 = time.perf_counter(), time.thread_time()
        if prof is not None:
            prof.enable()
        out = list(produce())
        if prof is not None:
            prof.disable()
        t1, c1 = time.perf_counter(), time.thread_time()
        ctx = TaskContext.get()
        batch = ctx.getLocalProperty("streaming.sql.batchId") if ctx else None
        name = f"{self.j}-{os.getpid()}-{time.monotonic_ns()}"
        if prof is not None:
            prof.dump_stats(os.path.join(self.out_dir, name + ".prof"))
        with open(os.path.join(self.out_dir, name + ".json"), "w") as f:
            json.dump({"node": self.j, "kind": kind, "batch": batch, "label": int(key[0]),
                       "pid": os.getpid(), "rows_out": sum(len(x) for x in out),
                       "wall_s": t1 - t0, "cpu_s": c1 - c0, "pieces": PIECES}, f)
        return iter(out)

    def handleInputRows(self, key: Any, rows: Any, timerValues: Any) -> Iterator[Any]:
        return self._measured("input", key,
                              lambda: super(ProfiledNode, self).handleInputRows(
                                  key, rows, timerValues))

    def handleExpiredTimer(self, key: Any, timerValues: Any, expiredTimerInfo: Any
                           ) -> Iterator[Any]:
        return self._measured("timer", key,
                              lambda: super(ProfiledNode, self).handleExpiredTimer(
                                  key, timerValues, expiredTimerInfo))
