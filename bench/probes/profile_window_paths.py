"""Probe (issue 32): where the user AggregateFunction and ProcessWindowFunction paths spend
their time, on the shapes of ``bench_suite.py`` (10k keys, tumbling 10 min, one parquet file
per micro-batch, ``local[2]``, 4 shuffle partitions).

Spark side: each micro-batch's ``durationMs`` from ``recentProgress``. Python side: the window
stage's function is wrapped so that each Python worker runs under ``cProfile`` from its first
call on (the pyspark serializers around the calls included); every worker dumps its profile
after each call, and the profiles are summed at the end. Also the arrival-sequence pass's
workers, the same way.

    PYTHONPATH=$PWD .venv/bin/python bench/probes/profile_window_paths.py \
        --workload aggregate_function --events 1000000
"""

from __future__ import annotations

import argparse
import glob
import os
import pstats
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent.parent
for _p in (REPO, REPO / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import bench_suite  # noqa: E402
from bench_spark import generate, spark_session  # noqa: E402


def profiled(function: Any, directory: str, tag: str) -> Any:
    """``function`` running under a per-process profiler dumped to ``directory``."""

    def call(*args: Any) -> Any:
        import cProfile
        import os as _os
        import sys as _sys

        prof = getattr(_sys, "_fw_probe_prof", None)  # one per worker process, across tasks
        if prof is None:
            prof = cProfile.Profile()
            _sys._fw_probe_prof = prof  # type: ignore[attr-defined]
            prof.enable()
        try:
            result = function(*args)
            if hasattr(result, "__next__"):
                result = list(result)
            return iter(result) if isinstance(result, list) else result
        finally:
            prof.create_stats()
            prof.dump_stats(f"{directory}/{tag}-{_os.getpid()}.prof")
            prof.enable()

    return call


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workload", default="aggregate_function")
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--top", type=int, default=35)
    parser.add_argument("--no-profile", action="store_true")
    args = parser.parse_args()
    ns = argparse.Namespace(master="local[2]", driver_memory="4g", partitions=4,
                            key_groups=None, workdir=None)
    spark = spark_session(ns)
    work = tempfile.mkdtemp(prefix="fw-prof-")
    data = os.path.join(work, "data")
    generate(data, args.events, args.keys, args.batches, 60_000 * 60, 42)
    profiles = os.path.join(work, "prof")
    os.makedirs(profiles)
    import flinkwin.spark.compiler as compiler

    if not args.no_profile:
        original = compiler.stream_function
        compiler.stream_function = lambda rt: profiled(original(rt), profiles, "stage")
    workload = bench_suite.Workload(args.workload, args.workload, "native", "x", args.events)
    # warm-up of each kind, then one measured run each; the profiles are those the workers
    # dumped in the last flinkwin run (cumulative since each worker's first call)
    for pipeline in ("native", "flinkwin", "native", "flinkwin"):
        if pipeline == "flinkwin":
            for f in glob.glob(f"{profiles}/*.prof"):
                os.remove(f)
        run = bench_suite.run_once(spark, ns, workload, pipeline, data)
        print(f"{pipeline}: {run.seconds:.2f} s, {run.rate:,.0f} ev/s, batch ms {run.batch_ms}")
    if not args.no_profile:
        files = glob.glob(f"{profiles}/*.prof")
        stats = pstats.Stats(*files)
        print(f"{len(files)} worker profiles")
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
