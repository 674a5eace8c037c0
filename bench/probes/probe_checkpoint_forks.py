"""Where a small stateful micro-batch's time goes on a local disk: a flinkwin tumbling sum over
``--batches`` JSON files of five rows each (one per micro-batch, ``availableNow``, local[2], 2
shuffle partitions, checkpoint in a temporary directory), while a thread takes ``jstack`` of the
driver's JVM every 0.1 s and sorts the stacks of the executor tasks' threads and of the stream
execution thread: in ``readlink`` or ``chmod`` run as a child process by Hadoop's local file
system, waiting for a Python worker, waiting for a job, or other. ``--file-system-manager`` sets
``spark.sql.streaming.checkpointFileManagerClass`` to Spark's
``FileSystemBasedCheckpointFileManager`` for the session (docs/operations.md, "Checkpoint files
on a local disk").

Usage::

    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_checkpoint_forks.py --batches 60
    PYTHONPATH=$PWD .venv/bin/python bench/probes/probe_checkpoint_forks.py --batches 60 \
        --file-system-manager
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from pyspark.sql import SparkSession

from flinkwin import DataStream, Duration, Time, TumblingEventTimeWindows, WatermarkStrategy
from flinkwin.sinks import MemorySink

MANAGER = ("org.apache.spark.sql.execution.streaming.checkpointing."
           "FileSystemBasedCheckpointFileManager")
THREADS = {"executor task": '"Executor task launch', "stream execution": '"stream execution'}


def _kind(stack: str) -> str:
    if "FileUtil.readLink" in stack:
        return "readlink process"
    if "RawLocalFileSystem.setPermission" in stack:
        return "chmod process"
    if "hadoop.util.Shell" in stack:
        return "other process"
    if "PythonRunner" in stack or "PythonArrowOutput" in stack:
        return "waiting for Python"
    if "DAGScheduler.runJob" in stack:
        return "waiting for a job"
    return "other"


def _sample(pid: int, stop: threading.Event, counts: dict[str, Counter[str]]) -> None:
    while not stop.is_set():
        dump = subprocess.run(["jstack", str(pid)], capture_output=True, text=True).stdout
        for block in dump.split("\n\n"):
            for name, head in THREADS.items():
                if block.startswith(head):
                    counts[name][_kind(block)] += 1
        time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=60)
    parser.add_argument("--file-system-manager", action="store_true")
    args = parser.parse_args()
    os.environ["PYSPARK_PYTHON"] = sys.executable
    builder = (SparkSession.builder.master("local[2]")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false"))
    if args.file_system_manager:
        builder = builder.config("spark.sql.streaming.checkpointFileManagerClass", MANAGER)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    work = Path(tempfile.mkdtemp(prefix="fw-forks-"))
    rng = random.Random(1)
    (work / "in").mkdir()
    for i in range(args.batches):
        rows = [{"k": rng.choice("abcdef"), "ts": 1000 * i + rng.randint(0, 3000),
                 "v": rng.randint(1, 9)} for _ in range(5)]
        path = work / "in" / f"batch-{i:04d}.json"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        os.utime(path, (1_000_000 + 10 * i, 1_000_000 + 10 * i))
    df = spark.readStream.schema("k string, ts long, v long").option(
        "maxFilesPerTrigger", 1).json(str(work / "in"))
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_millis(2000)).with_timestamp_assigner("ts")
    result = (DataStream(df).assign_timestamps_and_watermarks(strategy).key_by("k")
              .window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("v"))
    pid = int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid())
    counts: dict[str, Counter[str]] = {name: Counter() for name in THREADS}
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=(pid, stop, counts), daemon=True)
    started = time.time()
    query = result.start(MemorySink("forks"), checkpoint_location=str(work / "ck"),
                         trigger={"availableNow": True})
    sampler.start()
    query.awaitTermination()
    elapsed = time.time() - started
    stop.set()
    sampler.join()
    batches = len(query.recentProgress)
    print(f"{batches} micro-batches in {elapsed:.1f} s: {1000 * elapsed / batches:.0f} ms each "
          f"(file system manager: {args.file_system_manager})")
    for name, counter in counts.items():
        total = sum(counter.values())
        shares = ", ".join(f"{kind} {100 * n / total:.0f}%" for kind, n in counter.most_common())
        print(f"{name} thread, {total} samples: {shares}")


if __name__ == "__main__":
    main()
