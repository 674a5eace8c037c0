"""HotItems (issue 31): a graph with a re-keying step, against its own first stage alone, and on
one core against two.

Flink's HotItems example as a flinkwin user writes it (PyFlink's API, ``flinkwin`` imports):

* **first stage** (a window chain): ``key_by("itemId").window(SlidingEventTimeWindows.of(60 min,
  5 min)).aggregate(CountAgg(), WindowResultFunction())``, one ``(itemId, windowEnd,
  viewCount)`` row per item and window;
* **HotItems** (a graph): the same, then ``key_by("windowEnd").process(TopN(n))``: a
  ``KeyedProcessFunction`` collecting a window's counts in ``ListState`` and emitting the top
  ``n`` (by views, then item id) from an event-time timer at ``windowEnd + 1``. It runs at a
  graph's default parallelism 1 (one task); ``--parallelism N`` runs it with
  ``set_parallelism(N)`` as a distributed graph (each keyed operator in its own key groups
  over N tasks, docs/architecture.md, "Distributed graphs").

Input: ``--events`` views of ``--items`` items (skewed: item ``i`` weighs ``1 / (i + 10)``) in
``--files`` parquet files read one per micro-batch (``maxFilesPerTrigger=1``,
``trigger(availableNow=True)``), each file ``--span-minutes`` of event time, timestamps up to
4 s out of order, watermark ``forBoundedOutOfOrderness(5 s)`` on the ``ts`` column (no event is
late). Sinks: ``foreachBatch``; the first stage's reads every row into an exact checksum
(rows, sum of counts, counts weighted by item and by window), HotItems' collects its rows.

Two measurements, each with its own warm-up, runs timed from ``start()`` to termination with a
fresh checkpoint, ratio of the medians:

* ``session``: first stage and HotItems alternate ``--repeat`` times in one Spark session
  (``--master``); reported: HotItems' events/s over the first stage's (issue 31's bar: >= 0.7x);
* ``cores``: HotItems alone, ``--repeat`` runs in a subprocess on ``local[1]`` and then in one on
  ``local[2]`` (each its own Spark); reported: local[2] events/s over local[1]'s (bar: >= 1.6x).
  ``--cores-pipelines first_stage,hotitems`` measures the first stage alone the same way
  (alternating with HotItems): how far a second core takes the window chain HotItems starts
  with; ``native_first_stage`` the same counts in Spark's own windowed aggregation. Each run
  also reports the CPU its whole process tree used over its wall time ("cores busy", from
  ``/proc``): a ``local[1]`` run that keeps ``c`` cores busy (the task core plus the driver's
  query thread, the JIT and GC, the Python workers' own waits) can gain at most ``2 / c`` from
  a second core.

Every run's output is checked against numpy/pandas over the same files: the first stage's
checksum, HotItems' rows exactly. The script prints a table; it writes nothing to docs.

Usage::

    .venv/bin/python bench/bench_hotitems.py --quick          # small sizes, a few minutes
    .venv/bin/python bench/bench_hotitems.py                  # 1M events, 10k items
    .venv/bin/python bench/bench_hotitems.py --only session --repeat 1
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
for _p in (REPO, REPO / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from bench_spark import T0_MS, input_files, java_version, spark_session  # noqa: E402

from flinkwin import (  # noqa: E402
    AggregateFunction,
    Duration,
    KeyedProcessFunction,
    ListStateDescriptor,
    Row,
    SlidingEventTimeWindows,
    Time,
    Types,
    WatermarkStrategy,
    WindowFunction,
)
from flinkwin.datastream import DataStream  # noqa: E402

SCHEMA = "itemId long, userId long, ts timestamp"
COUNTS = "itemId long, windowEnd long, viewCount long"
TOP = "windowEnd long, rank int, itemId long, viewCount long"
SIZE_MS, SLIDE_MS = 60 * 60_000, 5 * 60_000
DELAY_MS, JITTER_MS = 5_000, 4_000
#: windowEnd's weight in the checksum: (windowEnd // SLIDE_MS) % WINDOW_MOD
WINDOW_MOD = 9_973
BARS = {"session": 0.7, "cores": 1.6}
SIZES = {
    "full": {"events": 1_000_000, "items": 10_000, "files": 10, "repeat": 2},
    "quick": {"events": 40_000, "items": 1_000, "files": 4, "repeat": 1},
}


# ------------------------------------------------------------------------- the user program
class CountAgg(AggregateFunction):
    """HotItems' ``CountAgg``: counts the views."""

    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, accumulator: int) -> int:
        return accumulator + 1

    def get_result(self, accumulator: int) -> int:
        return accumulator

    def merge(self, a: int, b: int) -> int:
        return a + b


class WindowResultFunction(WindowFunction):
    """HotItems' ``WindowResultFunction``: ``ItemViewCount(itemId, windowEnd, count)``."""

    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        yield Row(itemId=key, windowEnd=window.end, viewCount=next(iter(inputs)))


class TopN(KeyedProcessFunction):
    """HotItems' ``TopNHotItems``, emitting rows: a window's counts in ``ListState`` until the
    timer at ``windowEnd + 1`` emits the top ``n`` by views (ties: smaller item id first)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.items: Any = None

    def open(self, runtime_context: Any) -> None:
        self.items = runtime_context.get_list_state(
            ListStateDescriptor("items", Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value: Any, ctx: Any) -> None:
        self.items.add(value)
        ctx.timer_service().register_event_time_timer(value.windowEnd + 1)

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        items = sorted(self.items.get(), key=lambda v: (-v.viewCount, v.itemId))
        self.items.clear()
        for rank, v in enumerate(items[: self.n], 1):
            yield Row(windowEnd=timestamp - 1, rank=rank, itemId=v.itemId, viewCount=v.viewCount)


def first_stage(source: Any) -> Any:
    strategy = (WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(DELAY_MS))
                .with_timestamp_assigner("ts"))
    return (
        DataStream(source).assign_timestamps_and_watermarks(strategy)
        .key_by("itemId")
        .window(SlidingEventTimeWindows.of(Time.milliseconds(SIZE_MS), Time.milliseconds(SLIDE_MS)))
        .aggregate(CountAgg(), WindowResultFunction(), output_type=COUNTS)
    )


def native_first_stage(source: Any) -> Any:
    """The first stage in Spark's own windowed aggregation (the same counts, rows and watermark:
    a window is emitted when the watermark ``max - delay`` reaches its end, as Flink fires it
    when ``max - delay - 1`` reaches ``end - 1``)."""
    from pyspark.sql import functions as F

    return (
        source.withWatermark("ts", f"{DELAY_MS} milliseconds")
        .groupBy(F.window("ts", f"{SIZE_MS} milliseconds", f"{SLIDE_MS} milliseconds"),
                 "itemId")
        .count()
        .select("itemId", (F.unix_millis(F.col("window.end"))).alias("windowEnd"),
                F.col("count").alias("viewCount"))
    )


def hot_items(source: Any, n: int, parallelism: int | None = None) -> Any:
    """HotItems: the one-task graph stage (a graph's default), or with ``parallelism`` a
    distributed graph (each keyed operator in its own key groups over that many tasks)."""
    top = first_stage(source).key_by("windowEnd").process(TopN(n), output_type=TOP)
    return top if parallelism is None else top.set_parallelism(parallelism)


# ------------------------------------------------------------------------------ input data
def generate(directory: str, events: int, items: int, files: int, span_ms: int,
             seed: int) -> None:
    """``files`` parquet files (see module doc), modification times increasing with the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    weights = 1.0 / (np.arange(items) + 10.0)
    weights /= weights.sum()
    per_file = -(-events // files)
    os.makedirs(directory, exist_ok=True)
    base_mtime = time.time() - 10 * files - 60
    done = 0
    for i in range(files):
        n = min(per_file, events - done)
        done += n
        start = T0_MS + i * span_ms
        ts = np.sort(rng.integers(start, start + span_ms, n, dtype=np.int64))
        jitter = rng.integers(0, JITTER_MS + 1, n, dtype=np.int64)
        jitter[rng.random(n) < 0.5] = 0
        path = os.path.join(directory, f"part-{i:05d}.parquet")
        pq.write_table(pa.table({
            "itemId": pa.array(rng.choice(items, n, p=weights).astype(np.int64)),
            "userId": pa.array(rng.integers(0, 1_000_000, n, dtype=np.int64)),
            "ts": pa.array((ts - jitter) * 1_000, pa.timestamp("us", tz="UTC")),
        }), path)
        os.utime(path, (base_mtime + 10 * i, base_mtime + 10 * i))


@dataclass
class Expected:
    events: int
    first_checksum: list[int]
    top: list[list[int]]


def checksum(items: np.ndarray, ends: np.ndarray, counts: np.ndarray) -> list[int]:
    weights = (ends // SLIDE_MS) % WINDOW_MOD
    return [len(counts), int(counts.sum()), int((counts * items).sum()),
            int((counts * weights).sum())]


def expected_output(directory: str, n: int) -> Expected:
    """What Flink computes over the files, one file per micro-batch: the final watermark is
    ``max - delay - 1``; a window fires when ``end - 1 <= watermark``, its top N when the timer
    ``end + 1 <= watermark``. Fails if any event would be late (behind its batch's watermark)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    items, stamps = [], []
    watermark = None
    for path in input_files(directory):
        table = pq.read_table(path, columns=["itemId", "ts"])
        ts = pc.cast(table["ts"], pa.int64()).to_numpy() // 1_000
        if watermark is not None and (ts <= watermark).any():
            raise SystemExit(f"{path}: events behind the watermark; the check assumes none")
        watermark = max(int(ts.max()) - DELAY_MS - 1, watermark or int(ts.max()) - DELAY_MS - 1)
        items.append(table["itemId"].to_numpy())
        stamps.append(ts)
    assert watermark is not None
    item = np.concatenate(items)
    ts = np.concatenate(stamps)
    last_end = ts - ts % SLIDE_MS + SLIDE_MS
    ends = np.concatenate([last_end + k * SLIDE_MS for k in range(SIZE_MS // SLIDE_MS)])
    counts = (pd.DataFrame({"itemId": np.tile(item, SIZE_MS // SLIDE_MS), "windowEnd": ends})
              .groupby(["itemId", "windowEnd"]).size().rename("viewCount").reset_index())
    fired = counts[counts.windowEnd - 1 <= watermark]
    first = checksum(fired.itemId.to_numpy(), fired.windowEnd.to_numpy(),
                     fired.viewCount.to_numpy())
    topped = counts[counts.windowEnd + 1 <= watermark].sort_values(
        ["windowEnd", "viewCount", "itemId"], ascending=[True, False, True])
    topped = topped.groupby("windowEnd").head(n).copy()
    topped["rank"] = topped.groupby("windowEnd").cumcount() + 1
    top = topped[["windowEnd", "rank", "itemId", "viewCount"]].to_numpy().tolist()
    return Expected(len(ts), first, sorted(top))


# ------------------------------------------------------------------------------- the runs
_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def tree_cpu_seconds() -> float:
    """CPU seconds used so far by this process and all its descendants (the Spark JVM, its
    Python workers), from ``/proc`` (Linux; 0.0 elsewhere): what a run costs the machine, which
    bounds what a second core can give (a run on ``local[1]`` keeping ``c`` cores busy can be at
    most ``2 / c`` times faster on two)."""
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # after the name: state ppid ... utime(12) stime(13) cutime(14) cstime(15), 1-based 14-17
        stats[int(entry)] = (int(fields[1]), sum(int(x) for x in fields[11:15]) / _TICKS)
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(pid)
    total, todo = 0.0, [os.getpid()]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, (0, 0.0))[1]
        todo.extend(children.get(pid, []))
    return total


class ChecksumSink:
    """Reads every first-stage row once: one aggregate per micro-batch (see ``checksum``)."""

    def __init__(self) -> None:
        self.sums = [0, 0, 0, 0]

    def __call__(self, df: Any, batch_id: int) -> None:
        row = df.selectExpr(
            "count(1)", "sum(viewCount)", "sum(viewCount * itemId)",
            f"sum(viewCount * ((windowEnd div {SLIDE_MS}) % {WINDOW_MOD}))",
        ).collect()[0]
        self.sums = [a + int(b or 0) for a, b in zip(self.sums, row)]


class CollectSink:
    """Collects HotItems' rows (a few per window)."""

    def __init__(self) -> None:
        self.rows: list[list[int]] = []

    def __call__(self, df: Any, batch_id: int) -> None:
        self.rows.extend([list(r) for r in df.collect()])


@dataclass
class Run:
    part: str
    pipeline: str
    master: str
    seconds: float
    events: int
    batches: int
    ok: bool
    batch_ms: list[int] = field(default_factory=list)
    #: CPU seconds of the driver, its JVM and Python workers during the run
    cpu_seconds: float = 0.0

    @property
    def cores_busy(self) -> float:
        return self.cpu_seconds / self.seconds

    @property
    def rate(self) -> float:
        return self.events / self.seconds


def run_once(spark: Any, args: Any, pipeline: str, directory: str, expected: Expected,
             part: str = "warm-up") -> Run:
    source = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(directory)
    counting = pipeline in ("first_stage", "native_first_stage")
    sink: Any = ChecksumSink() if counting else CollectSink()
    checkpoint = tempfile.mkdtemp(prefix=f"fw-hot-{pipeline}-", dir=args.workdir)
    try:
        begin, cpu = time.perf_counter(), tree_cpu_seconds()
        if pipeline == "native_first_stage":
            query = (native_first_stage(source).writeStream.foreachBatch(sink)
                     .outputMode("append").option("checkpointLocation", checkpoint)
                     .trigger(availableNow=True).start())
        else:
            result = first_stage(source) if counting else hot_items(
                source, args.top, args.parallelism)
            query = result.start(main=sink, checkpoint_location=checkpoint,
                                 trigger={"availableNow": True})
        query.awaitTermination()
        seconds, cpu = time.perf_counter() - begin, tree_cpu_seconds() - cpu
        if query.exception() is not None:
            raise RuntimeError(f"{pipeline} failed: {query.exception()}")
        progress = sorted(query.recentProgress, key=lambda p: p["batchId"])
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)
    if counting:
        ok = sink.sums == expected.first_checksum
        got, want = sink.sums, expected.first_checksum
    else:
        ok = sorted(sink.rows) == expected.top
        got, want = f"{len(sink.rows)} rows", f"{len(expected.top)} rows"
    if not ok:
        print(f"WRONG OUTPUT: {pipeline} on {args.master}: got {got}, expected {want}",
              flush=True)
    return Run(part, pipeline, args.master, seconds, expected.events, len(progress), ok,
               [int(p["durationMs"].get("triggerExecution", 0)) for p in progress], cpu)


def warm_up(spark: Any, args: Any, pipelines: list[str]) -> None:
    """One small run of each pipeline: JVM and Python-worker start-up are not timed."""
    warm = os.path.join(args.workdir, "warm")
    if not input_files(warm):
        generate(warm, 20_000, 500, 2, 10 * 60_000, args.seed + 1)
    expected = expected_output(warm, args.top)
    for p in pipelines:
        run_once(spark, args, p, warm, expected)


def measure(args: Any, part: str, pipelines: list[str], data: str) -> list[Run]:
    """``--repeat`` alternating runs of ``pipelines`` in one Spark session on ``--master``."""
    expected = expected_output(data, args.top)
    spark = spark_session(args)
    try:
        warm_up(spark, args, pipelines)
        runs = []
        for i in range(args.repeat):
            for p in pipelines:
                r = run_once(spark, args, p, data, expected, part)
                runs.append(r)
                print(f"  {args.master} run {i + 1} {p:11s}: {r.seconds:7.1f} s = "
                      f"{r.rate:>9,.0f} events/s ({r.batches} batches, {r.cores_busy:.2f} "
                      f"cores busy, output {'correct' if r.ok else 'WRONG'})", flush=True)
    finally:
        spark.stop()
    return runs


def in_subprocess(args: Any, master: str, data: str) -> list[Run]:
    """HotItems measured in a fresh Python and Spark on ``master``."""
    command = [sys.executable, __file__, "--child", "--master", master, "--data", data,
               "--repeat", str(args.repeat), "--top", str(args.top), "--partitions",
               str(args.partitions), "--driver-memory", args.driver_memory,
               "--workdir", args.workdir, "--seed", str(args.seed),
               "--cores-pipelines", args.cores_pipelines] + (
                   [] if args.parallelism is None else ["--parallelism", str(args.parallelism)])
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{master} subprocess failed (exit {done.returncode})")
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    for line in done.stdout.splitlines():
        if not line.startswith("RESULT "):
            print(line, flush=True)
    return [Run(**r) for r in json.loads(lines[-1][len("RESULT "):])]


# -------------------------------------------------------------------------------- report
def median_rate(runs: list[Run], part: str, pipeline: str, master: str) -> float:
    return statistics.median(r.rate for r in runs if (r.part, r.pipeline, r.master)
                             == (part, pipeline, master))


def table(runs: list[Run], parts: list[str], args: Any) -> str:
    lines = ["| measurement | pipeline | master | runs (s) | cores busy | median events/s |",
             "| --- | --- | --- | --- | --- | ---: |"]
    for key in dict.fromkeys((r.part, r.pipeline, r.master) for r in runs):
        mine = [x for x in runs if (x.part, x.pipeline, x.master) == key]
        lines.append(f"| {' | '.join(key)} | {', '.join(f'{x.seconds:.1f}' for x in mine)} | "
                     f"{', '.join(f'{x.cores_busy:.2f}' for x in mine)} | "
                     f"{median_rate(runs, *key):,.0f} |")
    lines.append("")
    if "session" in parts:
        ratio = (median_rate(runs, "session", "hotitems", args.master)
                 / median_rate(runs, "session", "first_stage", args.master))
        lines.append(f"HotItems / its first stage alone ({args.master}, same session): "
                     f"**{ratio:.2f}x** (issue 31 bar >= {BARS['session']}x: "
                     f"{'met' if ratio >= BARS['session'] else 'NOT met'})")
    for pipeline in args.cores_pipelines.split(",") if "cores" in parts else []:
        ratio = (median_rate(runs, "cores", pipeline, "local[2]")
                 / median_rate(runs, "cores", pipeline, "local[1]"))
        bar = (f" (issue 31 bar >= {BARS['cores']}x: "
               f"{'met' if ratio >= BARS['cores'] else 'NOT met'})" if pipeline == "hotitems"
               else " (no bar)")
        one = statistics.median(r.cores_busy for r in runs if (r.part, r.pipeline, r.master)
                                == ("cores", pipeline, "local[1]"))
        lines.append(f"{pipeline} local[2] / local[1]: **{ratio:.2f}x**{bar}; on local[1] it "
                     f"keeps {one:.2f} cores busy, so two cores give it at most "
                     f"{2 / one:.2f}x" if one > 0 else f"{pipeline} local[2] / local[1]: "
                     f"**{ratio:.2f}x**{bar}")
    wrong = [r for r in runs if not r.ok]
    lines.append("Outputs: " + ("all runs correct (first stage checksum, HotItems rows equal "
                                "to pandas)" if not wrong else
                                f"{len(wrong)} run(s) WRONG: {[asdict(r) for r in wrong]}"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> list[Run]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one run each")
    parser.add_argument("--only", choices=["session", "cores"], default=None)
    parser.add_argument("--events", type=int, default=None)
    parser.add_argument("--items", type=int, default=None)
    parser.add_argument("--files", type=int, default=None, help="input files = micro-batches")
    parser.add_argument("--span-minutes", type=float, default=10.0,
                        help="event time covered by each file")
    parser.add_argument("--top", type=int, default=3, help="N of the top N")
    parser.add_argument("--repeat", type=int, default=None, help="runs per pipeline (median)")
    parser.add_argument("--master", default="local[2]", help="of the session measurement")
    parser.add_argument("--partitions", type=int, default=4, help="spark.sql.shuffle.partitions")
    parser.add_argument("--driver-memory", default="2g")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--data", default=None, help="input directory (reused if it has files)")
    parser.add_argument("--workdir", default=None, help="where temp dirs go (default: system)")
    parser.add_argument("--parallelism", type=int, default=None,
                        help="HotItems with set_parallelism(N): a distributed graph (default: "
                        "parallelism 1, the one-task graph stage)")
    parser.add_argument("--cores-pipelines", default="hotitems",
                        help="comma-separated pipelines of the cores measurement: hotitems, "
                        "first_stage (the window chain alone: how far a second core takes "
                        "the part HotItems starts with), native_first_stage (the same counts "
                        "in Spark's own windowed aggregation)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    size = SIZES["quick" if args.quick else "full"]
    for name in ("events", "items", "files", "repeat"):
        if getattr(args, name) is None:
            setattr(args, name, size[name])
    if args.child:  # one master's HotItems runs, for in_subprocess
        runs = measure(args, "cores", args.cores_pipelines.split(","), args.data)
        print("RESULT " + json.dumps([asdict(r) for r in runs]), flush=True)
        return runs

    parts = [args.only] if args.only else ["session", "cores"]
    load_start = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    tmp = tempfile.mkdtemp(prefix="fw-hot-", dir=args.workdir)
    args.workdir = tmp
    runs: list[Run] = []
    try:
        data = args.data or os.path.join(tmp, "input")
        if not input_files(data):
            generate(data, args.events, args.items, args.files, int(args.span_minutes * 60_000),
                     args.seed)
        expected = expected_output(data, args.top)
        print(f"HotItems: {expected.events:,} events, {args.items:,} items, "
              f"{len(input_files(data))} files, {expected.first_checksum[0]:,} window counts, "
              f"{len(expected.top):,} top-{args.top} rows expected; load average {load_start}",
              flush=True)
        if "session" in parts:
            runs += measure(args, "session", ["first_stage", "hotitems"], data)
        if "cores" in parts:
            for master in ("local[1]", "local[2]"):
                runs += in_subprocess(args, master, data)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    import pyspark

    load_end = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nload average at start {load_start}, at end {load_end}; PySpark "
          f"{pyspark.__version__}, {java_version()}, nproc {os.cpu_count()}")
    print(table(runs, parts, args))
    return runs


if __name__ == "__main__":
    main()
