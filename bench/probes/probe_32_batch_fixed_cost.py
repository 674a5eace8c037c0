"""Probe (issue 32, fixed cost per micro-batch, round 4): many tiny micro-batches of a tumbling
10 s sum keyed by user, flinkwin's ``toDF().writeStream.format("noop")`` against Spark's native
windowed aggregation, local[2], 2 shuffle partitions.

FILES JSON files of ROWS rows arrive one per micro-batch (each gives a data batch and a no-data
batch). Prints, over the last 30 progress reports, the mean of every ``durationMs`` phase and
the medians of ``triggerExecution`` and ``addBatch`` split into data and no-data batches; the
CPU seconds per file of the JVM and of the Python workers (robust to other load); with
``--rest``, the Spark UI's per-stage task metrics of the last jobs (run time, deserialization,
result serialization, CPU) by stage position; with ``--explain``, the last micro-batch's
physical plan and its node counts.

    cd <worktree> && PYTHONPATH=$PWD /work/main/.venv/bin/python \
        bench/probes/probe_32_batch_fixed_cost.py fw|native|noop [--files 25] [--rest] [--explain]

``noop`` is a plain ``applyInPandasWithState`` stage of the same shape without flinkwin; with
``--rest`` the SQL metrics' times of the last executions are printed too.

Set ``PROBE_OUT=<file>`` to append one JSON line of the figures (for alternating A/B runs).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
import urllib.request

import psutil

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402


def tree_cpu() -> dict[str, float]:
    """CPU seconds (user + system) so far of this process's descendants, by kind."""
    out = {"jvm": 0.0, "python": 0.0}
    for child in psutil.Process().children(recursive=True):
        try:
            t = child.cpu_times()
            kind = "jvm" if "java" in child.name() else "python"
            out[kind] += t.user + t.system
        except psutil.Error:
            pass
    return out


def jvm_threads() -> dict[str, float]:
    """CPU seconds so far of the JVM's threads, summed by thread name (digits dropped)."""
    out: dict[str, float] = {}
    tick = os.sysconf("SC_CLK_TCK")
    for child in psutil.Process().children(recursive=True):
        if "java" not in child.name():
            continue
        for tid in os.listdir(f"/proc/{child.pid}/task"):
            try:
                with open(f"/proc/{child.pid}/task/{tid}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")].rstrip("0123456789- ")
            fields = stat[stat.rindex(")") + 2:].split()
            out[name] = out.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def compilations(spark: SparkSession) -> int:
    """How many classes Spark's code generator has compiled so far (cache misses)."""
    return int(spark._jvm.org.apache.spark.metrics.source.CodegenMetrics
               .METRIC_COMPILATION_TIME().getCount())


def rest(url: str, path: str):
    with urllib.request.urlopen(url + "/api/v1" + path, timeout=30) as r:
        return json.load(r)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["fw", "native", "noop"])
    p.add_argument("--files", type=int, default=25)
    p.add_argument("--rows", type=int, default=20)
    p.add_argument("--rest", action="store_true")
    p.add_argument("--explain", action="store_true")
    a = p.parse_args()
    builder = (SparkSession.builder.master("local[2]")
               .config("spark.sql.shuffle.partitions", "2"))
    builder = builder.config("spark.ui.enabled", "true" if a.rest else "false")
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    root = tempfile.mkdtemp()
    src = os.path.join(root, "in")
    os.makedirs(src)
    schema = "user string, ts long, v long"
    df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(src)
    if a.mode == "fw":
        import flinkwin as fw

        strategy = fw.WatermarkStrategy.for_bounded_out_of_orderness(
            fw.Duration.of_seconds(1)).with_timestamp_assigner("ts")
        out = (fw.DataStream(df).assign_timestamps_and_watermarks(strategy).key_by("user")
               .window(fw.TumblingEventTimeWindows.of(fw.Time.seconds(10))).sum("v")).toDF()
    elif a.mode == "noop":
        out = _noop_stage(df)
    else:
        out = (df.withColumn("t", F.timestamp_millis("ts")).withWatermark("t", "1 second")
               .groupBy("user", F.window("t", "10 seconds")).agg(F.sum("v")))
    q = (out.writeStream.format("noop").outputMode("append")
         .option("checkpointLocation", os.path.join(root, "cp")).start())
    warm = max(1, a.files - 15)
    cpu0 = None
    t0 = 0.0
    for b in range(a.files):
        if b == warm:
            cpu0, t0, th0 = tree_cpu(), time.perf_counter(), jvm_threads()
            self0 = sum(psutil.Process().cpu_times()[:2])
            compiled0 = compilations(spark)
        with open(os.path.join(src, f"f{b:04d}.json"), "w") as f:
            for i in range(a.rows):
                f.write(f'{{"user": "u{i % 5}", "ts": {b * 4000 + i * 100}, "v": {i}}}\n')
        q.processAllAvailable()
    cpu1, t1, th1 = tree_cpu(), time.perf_counter(), jvm_threads()
    cpu1["driver python"] = sum(psutil.Process().cpu_times()[:2])
    cpu0["driver python"] = self0
    files = a.files - warm
    prog = q.recentProgress[-30:]
    mean = {}
    for pr in prog:
        for k, v in pr["durationMs"].items():
            mean[k] = mean.get(k, 0) + v / len(prog)
    data = [pr for pr in prog if pr["numInputRows"] > 0]
    empty = [pr for pr in prog if pr["numInputRows"] == 0]

    def med(rows, k):
        return statistics.median(pr["durationMs"].get(k, 0) for pr in rows) if rows else 0

    result = {
        "mode": a.mode,
        "flinkwin": os.path.dirname(sys.modules["flinkwin"].__file__)
        if "flinkwin" in sys.modules else "",
        "wall_per_file_ms": round(1000 * (t1 - t0) / files),
        "mean": {k: round(v) for k, v in sorted(mean.items(), key=lambda kv: -kv[1])},
        "median_trigger": med(prog, "triggerExecution"),
        "median_addBatch": med(prog, "addBatch"),
        "data_trigger": med(data, "triggerExecution"), "data_addBatch": med(data, "addBatch"),
        "nodata_trigger": med(empty, "triggerExecution"),
        "nodata_addBatch": med(empty, "addBatch"),
        "cpu_per_file_ms": {k: round(1000 * (cpu1[k] - cpu0[k]) / files) for k in cpu1},
        "codegen_compilations_per_file": round((compilations(spark) - compiled0) / files, 2),
        "load": os.getloadavg()[0],
    }
    print(json.dumps(result))
    threads = {k: 1000 * (v - th0.get(k, 0.0)) / files for k, v in th1.items()}
    print("JVM thread CPU ms per file:", {k: round(v) for k, v in
                                          sorted(threads.items(), key=lambda kv: -kv[1])
                                          if v >= 5})
    if os.environ.get("PROBE_OUT"):
        with open(os.environ["PROBE_OUT"], "a") as f:
            f.write(json.dumps(result) + "\n")
    if a.explain:
        plan = q._jsq.streamingQuery().lastExecution().executedPlan().toString()
        print(plan)
        lines = [ln for ln in plan.splitlines() if ln.strip()]
        print("executed plan nodes:", len(lines),
              "codegen stages:", sum("*(" in ln for ln in lines))
        last = q._jsq.streamingQuery().lastExecution()
        opt = last.optimizedPlan().toString()
        print("optimized plan nodes:", len([ln for ln in opt.splitlines() if ln.strip()]))
        print("analyzed plan nodes:",
              len([ln for ln in last.analyzed().toString().splitlines() if ln.strip()]))
        tracker = last.tracker()
        java = spark._jvm.scala.jdk.javaapi.CollectionConverters
        phases = java.asJava(tracker.phases())
        print("last batch's phases (ms):", {
            str(k): phases.get(k).durationMs() for k in phases.keySet()})
        rules = java.asJava(tracker.rules())
        top = sorted(((rules.get(k).totalTimeNs() / 1e6, str(k).split(".")[-1],
                       rules.get(k).numInvocations()) for k in rules.keySet()), reverse=True)
        print("rules' time in the last batch (ms, rule, invocations):",
              [(round(t, 2), n, i) for t, n, i in top[:12]],
              f"total {sum(t for t, _, _ in top):.1f} ms over {len(top)} rules")
        print("rules that changed the plan (rule, invocations, effective):",
              [(str(k).split(".")[-1], rules.get(k).numInvocations(),
                rules.get(k).numEffectiveInvocations())
               for k in rules.keySet() if rules.get(k).numEffectiveInvocations()])
    if a.rest:
        url = spark.sparkContext.uiWebUrl
        app = spark.sparkContext.applicationId
        jobs = sorted(rest(url, f"/applications/{app}/jobs"), key=lambda j: j["jobId"])[-30:]
        per = {}
        for job in jobs:
            for pos, sid in enumerate(sorted(job["stageIds"])):
                for st in rest(url, f"/applications/{app}/stages/{sid}?details=true"):
                    if st["status"] != "COMPLETE":
                        continue
                    kind = f"stage {pos} ({st['numTasks']} tasks)"
                    agg = per.setdefault(kind, {"n": 0, "wall": 0, "run": 0, "deser": 0,
                                                "cpu": 0, "resser": 0, "gc": 0})
                    agg["n"] += 1
                    agg["wall"] += _ms(st["completionTime"]) - _ms(st["submissionTime"])
                    for t in st.get("tasks", {}).values():
                        m = t.get("taskMetrics", {})
                        agg["run"] += m.get("executorRunTime", 0)
                        agg["deser"] += m.get("executorDeserializeTime", 0)
                        agg["cpu"] += m.get("executorCpuTime", 0) / 1e6
                        agg["resser"] += m.get("resultSerializationTime", 0)
                        agg["gc"] += m.get("jvmGcTime", 0)
        for kind, agg in sorted(per.items()):
            n = agg.pop("n")
            print(kind, "x", n, {k: round(v / n, 1) for k, v in agg.items()},
                  "(ms per stage: stage wall, tasks' sums)")
    if a.rest:
        _sql_metrics(url, app)
    q.stop()
    shutil.rmtree(root)


def _noop_stage(df):
    """A plain ``applyInPandasWithState`` of the same shape as flinkwin's stage (keyed by
    user, event-time timeout, one row out per group and batch), without flinkwin."""
    from pyspark.sql.streaming.state import GroupStateTimeout

    def fn(key, pdfs, state):
        import pandas as pd

        n = sum(len(pdf) for pdf in pdfs)
        if state.hasTimedOut:
            state.remove()
            return
        state.update((n,))
        state.setTimeoutTimestamp(max(state.getCurrentWatermarkMs(), 0) + 10000)
        yield pd.DataFrame({"user": [key[0]], "n": [n]})

    return (df.withColumn("t", F.timestamp_millis("ts")).withWatermark("t", "1 second")
            .groupBy("user").applyInPandasWithState(
                fn, "user string, n long", "n long", "append",
                GroupStateTimeout.EventTimeTimeout))


def _sql_metrics(url: str, app: str) -> None:
    """The SQL metrics of the last 20 executions' plan nodes (the last 4 values of each):
    the stateful operator's update, removal and commit times and the Python runner's."""
    sqls = rest(url, f"/applications/{app}/sql?details=true&offset=0&length=10000")
    acc: dict[tuple[str, str], list[str]] = {}
    for e in sorted(sqls, key=lambda e: e["id"])[-20:]:
        for node in e.get("nodes", []):
            for m in node.get("metrics", []):
                acc.setdefault((node["nodeName"], m["name"]), []).append(m["value"])
    for (n, m), vals in sorted(acc.items()):
        if m.startswith("time to"):
            print(f"{n} | {m} |", [v.replace("\n", " ") for v in vals[-4:]])


def _ms(stamp: str) -> float:
    from datetime import datetime

    return datetime.strptime(stamp.replace("GMT", "+0000"),
                             "%Y-%m-%dT%H:%M:%S.%f%z").timestamp() * 1000


if __name__ == "__main__":
    main()
