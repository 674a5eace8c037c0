"""Probe (issue 32): where a workload's time goes on each path that starts the query.

Paths: ``native`` (hand-written Spark, noop sink), ``start`` (flinkwin's ``start(main=...)``
with a counting ``foreachBatch``), ``todf`` (``result.toDF().writeStream.format("noop")``).
Each run prints its wall time, the CPU seconds of the whole process tree (the driver, Spark's
JVM, the Python daemon and workers: what a loaded machine barely changes) and Spark's
``recentProgress`` durations summed per phase over the micro-batches, so the paths can be
compared phase by phase.

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_32_paths.py --workload session \
        --events 1000000 --repeat 2 --paths native,start,todf
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
for _p in (REPO, REPO / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from bench_spark import generate  # noqa: E402
from bench_suite import (  # noqa: E402
    RowSink,
    _flinkwin_pipelines,
    _native_pipelines,
    _stream,
)


def tree_cpu(root: int) -> float:
    """CPU seconds (user + system, reaped children included) of ``root`` and its
    descendants, from /proc."""
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ticks = sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        stats[int(entry)] = (int(fields[1]), ticks / os.sysconf("SC_CLK_TCK"))
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0.0))[1]
        todo.extend(children.get(pid, ()))
    return total


PHASES = ("latestOffset", "getBatch", "queryPlanning", "addBatch", "walCommit",
          "commitOffsets", "triggerExecution")


def run(
    spark: Any, args: Any, path: str, directory: str
) -> tuple[float, float, Counter[str], int]:
    checkpoint = tempfile.mkdtemp(prefix="fw-p32-", dir=args.workdir)
    sink = RowSink()
    cpu = tree_cpu(os.getpid())
    begin = time.perf_counter()
    name = args.workload
    if path == "native":
        df = _native_pipelines()[name](spark, directory)
        query = (df.writeStream.format("noop").outputMode("append")
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
    else:
        flink = "continuous_baseline" if path.endswith("-plain") else name
        result = _flinkwin_pipelines()[flink](_stream(spark, directory, args.key_groups))
        if path.startswith("start"):
            query = result.start(main=sink, checkpoint_location=checkpoint,
                                 trigger={"availableNow": True})
        elif path.startswith("todf-fb"):
            query = (result.toDF().writeStream.foreachBatch(sink)
                     .option("checkpointLocation", checkpoint)
                     .trigger(availableNow=True).start())
        else:
            query = (result.toDF().writeStream.format("noop")
                     .option("checkpointLocation", checkpoint)
                     .trigger(availableNow=True).start())
    query.awaitTermination()
    seconds = time.perf_counter() - begin
    cpu = tree_cpu(os.getpid()) - cpu
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    phases: Counter[str] = Counter()
    batches = 0
    for p in query.recentProgress:
        if int(p.get("numInputRows", 0) or 0) == 0:
            continue
        batches += 1
        for k in PHASES:
            phases[k] += int(p["durationMs"].get(k, 0))
    shutil.rmtree(checkpoint, ignore_errors=True)
    return seconds, cpu, phases, batches


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", default="session")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--paths", default="native,start,todf")
    parser.add_argument("--key-groups", type=int, default=16)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[2]").config("spark.driver.memory", "4g")
             .config("spark.sql.shuffle.partitions", str(args.partitions))
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    args.workdir = tempfile.mkdtemp(prefix="fw-p32-", dir=args.workdir)
    directory = os.path.join(args.workdir, "data")
    generate(directory, args.events, args.keys, 10, 600_000, 42)
    warm = os.path.join(args.workdir, "warm")
    generate(warm, 50_000, 1000, 10, 600_000, 7)
    paths = args.paths.split(",")
    print(f"load average at start {os.getloadavg()}", flush=True)
    for p in paths:
        run(spark, args, p, warm)
    for i in range(args.repeat):
        for p in paths:
            seconds, cpu, phases, batches = run(spark, args, p, directory)
            detail = " ".join(f"{k}={v / 1000:.2f}" for k, v in phases.items())
            print(f"{args.workload} run {i + 1} {p:12s} {seconds:6.2f} s  cpu {cpu:6.2f} s  "
                  f"batches={batches} {detail}", flush=True)
    print(f"load average at end {os.getloadavg()}", flush=True)
    shutil.rmtree(args.workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
