"""Probe (issue 31): where HotItems' time goes, measured inside Spark's Python worker.

Runs ``bench_hotitems.py``'s pipelines (HotItems, or its first stage alone) on a streaming file
source, with the function flinkwin hands to ``applyInPandasWithState`` wrapped (probe-only
instrumentation, nothing in flinkwin changes) so that each call records

* ``input_s``: draining the frames iterator, i.e. pyspark's Arrow-to-pandas conversion of the
  call's input;
* ``function_s``: flinkwin's function (restore, elements, operators, user code, output frame,
  snapshot), wall time and the thread's CPU time (``function_cpu_s``), under ``cProfile`` with
  ``--cprofile`` (timer: the thread's CPU time; the stats of all calls are merged);
* rows in and out, the batch id and the worker's pid.

and compares their sums with the micro-batches' ``triggerExecution`` from ``recentProgress``.

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/profile_hotitems.py \
        --pipeline hotitems --events 200000 [--cprofile]
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "bench")]
# the workers import bench_hotitems' user classes by module
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(REPO), str(REPO / "bench"), os.environ.get("PYTHONPATH", "")])

import bench_hotitems as hot  # noqa: E402
from bench_spark import spark_session  # noqa: E402
from pyspark.sql.pandas import group_ops  # noqa: E402

_original = group_ops.PandasGroupedOpsMixin.applyInPandasWithState


def instrumented(func, out_dir: str, profile: bool):  # type: ignore[no-untyped-def]
    def wrapped(key, frames, state):  # type: ignore[no-untyped-def]
        import cProfile
        import json
        import os
        import time

        from pyspark import TaskContext

        t0, c0 = time.perf_counter(), time.thread_time()
        frames = list(frames)
        t1, c1 = time.perf_counter(), time.thread_time()
        # CPU time of this thread: what the load of a shared machine does not inflate
        prof = cProfile.Profile(time.thread_time) if profile else None
        if prof is not None:
            prof.enable()
        out = list(func(key, iter(frames), state))
        if prof is not None:
            prof.disable()
        t2, c2 = time.perf_counter(), time.thread_time()
        ctx = TaskContext.get()
        batch = ctx.getLocalProperty("streaming.sql.batchId") if ctx else None
        name = f"{os.getpid()}-{time.monotonic_ns()}"
        if prof is not None:
            prof.dump_stats(os.path.join(out_dir, name + ".prof"))
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump({"batch": batch, "key": [int(k) for k in key],
                       "rows_in": sum(len(x) for x in frames),
                       "rows_out": sum(len(x) for x in out), "timed_out": state.hasTimedOut,
                       "input_s": t1 - t0, "function_s": t2 - t1,
                       "input_cpu_s": c1 - c0, "function_cpu_s": c2 - c1}, f)
        return iter(out)

    return wrapped


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pipeline", choices=["hotitems", "first_stage"], default="hotitems")
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument("--top", type=int, default=35, help="rows of the profile printed")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    args.partitions, args.driver_memory = 4, "2g"
    tmp = tempfile.mkdtemp(prefix="fw-prof-")
    out_dir = os.path.join(tmp, "calls")
    os.makedirs(out_dir)

    def capture(self, func, *a, **k):  # type: ignore[no-untyped-def]
        return _original(self, instrumented(func, out_dir, args.cprofile), *a, **k)

    group_ops.PandasGroupedOpsMixin.applyInPandasWithState = capture  # type: ignore[method-assign]
    try:
        data = os.path.join(tmp, "input")
        hot.generate(data, args.events, args.items, args.files, 10 * 60_000, 42)
        expected = hot.expected_output(data, 3)
        spark = spark_session(args)
        run_args = argparse.Namespace(workdir=tmp, top=3, master=args.master, seed=42)
        hot.warm_up(spark, run_args, [args.pipeline])
        for name in os.listdir(out_dir):  # the warm-up's calls
            os.remove(os.path.join(out_dir, name))
        begin = time.perf_counter()
        run = hot.run_once(spark, run_args, args.pipeline, data, expected, "profile")
        wall = time.perf_counter() - begin
        spark.stop()
        calls = []
        for name in sorted(os.listdir(out_dir)):
            if name.endswith(".json"):
                with open(os.path.join(out_dir, name)) as f:
                    calls.append(json.load(f))
        print(f"{args.pipeline}: {expected.events:,} events, {len(calls)} calls, wall "
              f"{wall:.1f} s, batches (triggerExecution ms) {run.batch_ms} = "
              f"{sum(run.batch_ms) / 1000:.1f} s, output {'correct' if run.ok else 'WRONG'}, "
              f"profiled: {args.cprofile}, load {os.getloadavg()}")
        by_batch: dict[str, list[float]] = {}
        for c in calls:
            b = by_batch.setdefault(str(c["batch"]), [0, 0, 0, 0, 0, 0])
            b[0] += 1
            b[1] += c["rows_in"]
            b[2] += c["rows_out"]
            b[3] += c["input_s"]
            b[4] += c["function_s"]
            b[5] += c["function_cpu_s"]
        print("batch | calls | rows in | rows out | input (pandas conversion) s | function s | "
              "function CPU s")
        for batch in sorted(by_batch, key=lambda b: int(b) if b.isdigit() else -1):
            n, rin, rout, t_in, t_fn, c_fn = by_batch[batch]
            print(f"{batch} | {n} | {rin:,} | {rout:,} | {t_in:.2f} | {t_fn:.2f} | {c_fn:.2f}")
        rows_in = sum(c["rows_in"] for c in calls)
        t_in = sum(c["input_s"] for c in calls)
        t_fn = sum(c["function_s"] for c in calls)
        c_fn = sum(c["function_cpu_s"] for c in calls)
        print(f"total: rows in {rows_in:,}, input conversion {t_in:.2f} s "
              f"({1e6 * t_in / max(rows_in, 1):.1f} us/row), function {t_fn:.2f} s "
              f"({1e6 * t_fn / expected.events:.1f} us/event), function CPU {c_fn:.2f} s "
              f"({1e6 * c_fn / expected.events:.1f} us/event); Spark's batches "
              f"{sum(run.batch_ms) / 1000:.1f} s")
        if args.cprofile:
            profs = [os.path.join(out_dir, n) for n in os.listdir(out_dir) if n.endswith(".prof")]
            stats = pstats.Stats(profs[0])
            for p in profs[1:]:
                stats.add(p)
            stats.strip_dirs()
            stats.sort_stats("cumulative").print_stats(args.top)
            stats.sort_stats("tottime").print_stats(args.top)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
