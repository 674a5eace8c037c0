"""Probe (issue 31 performance): where the distributed HotItems plan's time goes, per micro-batch
and per call.

Runs ``bench_hotitems.py``'s HotItems with ``set_parallelism(N)`` (the distributed graph: a
``transformWithStateInPandas`` per keyed node) once after a warm-up, and reports:

* per micro-batch, Spark's ``durationMs`` and each stateful operator's progress metrics
  (rows, ``commitTimeMs``, ``allUpdatesTimeMs`` and the RocksDB custom metrics);
* per Spark stage (REST API): tasks, the tasks' run time (sum and max: skew) and JVM CPU time;
* per keyed node, the Python calls (input pass and timer pass), their wall and CPU time
  (:mod:`chained_profiler` in place of ``ChainedNode``), and with ``--cprofile`` the merged
  cProfile of the calls on the threads' CPU clocks (which inflates per-call Python ~3x: read
  shares).

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/profile_31_distributed.py \
        --events 300000 [--cprofile] [--conf KEY=VALUE ...]
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
import urllib.request
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "bench"), str(REPO / "bench" / "probes")]
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(REPO), str(REPO / "bench"), str(REPO / "bench" / "probes"),
     os.environ.get("PYTHONPATH", "")])

import bench_hotitems as hot  # noqa: E402
from chained_profiler import ProfiledNode  # noqa: E402

from flinkwin.spark import graph_chained_nodes as graph_chained  # noqa: E402


def session(args: argparse.Namespace):  # type: ignore[no-untyped-def]
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    builder = (SparkSession.builder.master(args.master).appName("fw-prof-31")
               .config("spark.driver.memory", "2g")
               .config("spark.sql.shuffle.partitions", str(args.partitions))
               .config("spark.ui.enabled", "true").config("spark.ui.port", "0")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.session.timeZone", "UTC"))
    for item in args.conf:
        k, v = item.split("=", 1)
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def rest(spark, path: str):  # type: ignore[no-untyped-def]
    url = f"{spark.sparkContext.uiWebUrl}/api/v1/applications/{spark.sparkContext.applicationId}"
    with urllib.request.urlopen(url + path, timeout=30) as r:
        return json.loads(r.read())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=300_000)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--files", type=int, default=10)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument("--conf", action="append", default=[], help="session conf KEY=VALUE")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--restart", action="store_true",
                        help="stop after half the files, restart from the checkpoint with the "
                        "rest (the output is still checked against all files)")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="fw-prof31-")
    out_dir = os.path.join(tmp, "calls")
    os.makedirs(out_dir)
    original = graph_chained.ChainedNode

    def profiled(graph, j, takes_rows=False):  # type: ignore[no-untyped-def]
        node = ProfiledNode(graph, j, takes_rows)
        node.out_dir, node.profile = out_dir, args.cprofile
        return node

    graph_chained.ChainedNode = profiled  # type: ignore[misc,assignment]
    try:
        data = os.path.join(tmp, "input")
        hot.generate(data, args.events, args.items, args.files, 10 * 60_000, 42)
        expected = hot.expected_output(data, 3)
        spark = session(args)
        run_args = argparse.Namespace(workdir=tmp, top=3, master=args.master, seed=42,
                                      parallelism=args.parallelism)
        hot.warm_up(spark, run_args, ["hotitems"])
        for name in os.listdir(out_dir):
            os.remove(os.path.join(out_dir, name))
        stages_before = {s["stageId"] for s in rest(spark, "/stages")}
        load0 = os.getloadavg()

        sink = hot.CollectSink()
        checkpoint = tempfile.mkdtemp(prefix="ck-", dir=tmp)
        files = sorted(f for f in os.listdir(data) if f.endswith(".parquet"))
        runs = [files]
        if args.restart:
            half = len(files) // 2
            runs = [files[:half], files[half:]]
        feed = os.path.join(tmp, "feed")
        os.makedirs(feed)
        begin = time.perf_counter()
        progress = []
        for part in runs:
            for f in part:
                shutil.copy2(os.path.join(data, f), os.path.join(feed, f))
            source = spark.readStream.schema(hot.SCHEMA).option(
                "maxFilesPerTrigger", 1).parquet(feed)
            query = hot.hot_items(source, 3, args.parallelism).start(
                main=sink, checkpoint_location=checkpoint, trigger={"availableNow": True})
            query.awaitTermination()
            if query.exception() is not None:
                raise RuntimeError(str(query.exception()))
            progress += sorted(query.recentProgress, key=lambda p: p["batchId"])
        wall = time.perf_counter() - begin
        ok = sorted(sink.rows) == expected.top
        load1 = os.getloadavg()
        print(f"HotItems distributed p={args.parallelism} {args.master}: {args.events:,} events "
              f"wall {wall:.1f} s ({args.events / wall:,.0f} ev/s), output "
              f"{'correct' if ok else 'WRONG'} ({len(sink.rows)} rows, restart: "
              f"{args.restart}); load {load0[0]:.1f} -> {load1[0]:.1f}; "
              f"conf {args.conf}")
        print("\n## per micro-batch (ms): triggerExecution, addBatch | per stateful operator: "
              "rows total/updated, commitTimeMs, allUpdatesTimeMs, custom (ms metrics)")
        for p in progress:
            d = p["durationMs"]
            ops = []
            for o in p.get("stateOperators", []):
                custom = {k: v for k, v in o.get("customMetrics", {}).items()
                          if ("Time" in k or "time" in k) and v}
                ops.append(f"[{o['operatorName']} rows {o['numRowsTotal']}/"
                           f"{o['numRowsUpdated']} commit {o['commitTimeMs']} upd "
                           f"{o['allUpdatesTimeMs']} {custom}]")
            print(f"batch {p['batchId']} in {p['numInputRows']}: {d.get('triggerExecution')} "
                  f"{d.get('addBatch')} " + " ".join(ops))
        stages = [s for s in rest(spark, "/stages") if s["stageId"] not in stages_before
                  and s["status"] == "COMPLETE"]
        print("\n## Spark stages of the run, grouped by name and task count: count, task run "
              "s (sum), max task s per stage (sum), JVM CPU s")
        groups: dict = defaultdict(lambda: [0, 0.0, 0.0, 0.0])
        for s in stages:
            summary = rest(spark, f"/stages/{s['stageId']}/{s['attemptId']}/taskSummary"
                                  "?quantiles=1.0")
            g = groups[(s["name"][:60], s["numTasks"])]
            g[0] += 1
            g[1] += s["executorRunTime"] / 1000
            g[2] += summary["executorRunTime"][0] / 1000
            g[3] += s["executorCpuTime"] / 1e9
        for (name, tasks), (n, run, mx, cpu) in sorted(groups.items(), key=lambda x: -x[1][1]):
            print(f"{name} tasks={tasks}: {n} stages, run {run:.1f} s, max-task {mx:.1f} s, "
                  f"JVM cpu {cpu:.1f} s")
        spark.stop()
        calls = []
        for name in os.listdir(out_dir):
            if name.endswith(".json"):
                with open(os.path.join(out_dir, name)) as f:
                    calls.append(json.load(f))
        print("\n## Python calls of the keyed nodes: node kind: calls, wall s, CPU s, per batch")
        agg: dict = defaultdict(lambda: [0, 0.0, 0.0])
        for c in calls:
            a = agg[(c["node"], c["kind"])]
            a[0] += 1
            a[1] += c["wall_s"]
            a[2] += c["cpu_s"]
        batches = max(1, len({c["batch"] for c in calls}))
        for (node, kind), (n, w, cpu) in sorted(agg.items()):
            print(f"node {node} {kind}: {n} calls ({n / batches:.1f}/batch), wall {w:.2f} s, "
                  f"CPU {cpu:.2f} s")
        pieces: dict = defaultdict(lambda: [0.0, 0])
        for c in calls:
            for k, (sec, n) in c.get("pieces", {}).items():
                pieces[(c["node"], k)][0] += sec
                pieces[(c["node"], k)][1] += n
        for (node, k), (sec, n) in sorted(pieces.items()):
            print(f"  node {node} {k}: {n} calls, CPU {sec:.2f} s")
        per_batch: dict = defaultdict(lambda: [0.0, 0.0])
        for c in calls:
            per_batch[(c["batch"], c["node"])][1] += c["cpu_s"]
            per_batch[(c["batch"], c["node"])][0] = max(per_batch[(c["batch"], c["node"])][0],
                                                       c["cpu_s"])
        print("batch node: CPU s (largest one call) -- the skew")
        for (b, node), (mx, cpu) in sorted(per_batch.items(), key=lambda x: (int(x[0][0] or -1),
                                                                             x[0][1])):
            print(f"  {b} {node}: {cpu:.2f} ({mx:.2f})")
        if args.cprofile:
            profs = [os.path.join(out_dir, n) for n in os.listdir(out_dir) if n.endswith(".prof")]
            stats = pstats.Stats(profs[0])
            for p in profs[1:]:
                stats.add(p)
            stats.strip_dirs()
            stats.sort_stats("cumulative").print_stats(args.top)
            stats.sort_stats("tottime").print_stats(args.top)
    finally:
        graph_chained.ChainedNode = original  # type: ignore[misc]
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
