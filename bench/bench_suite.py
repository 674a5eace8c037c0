"""The benchmark suite (issue 11): every workload against its best hand-written native Spark
equivalent in the same run and Spark session, plus scaling runs; writes a section of
``docs/benchmarks.md`` with a table and matplotlib plots.

Workloads (``local[2]``, parquet files read one per micro-batch, noop-like ``foreachBatch`` sink
reading every output row, ``availableNow``; see ``bench_spark.py`` for data and timing):

==================  =====================================================  ====================
workload            flinkwin                                               baseline
==================  =====================================================  ====================
tumbling            tumbling 10 min ``sum``                                native ``window`` sum
aggregate_function  tumbling 10 min, user ``AggregateFunction`` (sum)      native ``window`` sum
sliding             sliding 60 min / 1 min ``sum``                         native sliding sum
session             session gap 10 min ``sum``                             ``session_window`` sum
process_window      tumbling 10 min ``ProcessWindowFunction`` count+sum    native count+sum
continuous          1 h tumbling + ``ContinuousEventTimeTrigger(1 min)``   same without trigger
growing_keys        1-day tumbling sum, keys growing over 20 batches       native ``window`` sum
==================  =====================================================  ====================

Scaling: tumbling sum at several event counts (fixed keys) and key counts (fixed events).
Each flinkwin pipeline runs on the path ``--path`` names: ``start`` (flinkwin's own
``result.start(main=sink, ...)``), ``todf`` (Spark's idiom ``result.toDF().writeStream
.foreachBatch(sink)...start()``) or ``both`` (each workload gets a row per path; the
continuous trigger's baseline runs on the same path as the pipeline it is compared with).
For each pair the pipelines alternate ``--repeat`` times (after one warm-up run of each kind at
the start); reported: median
events/s each and the ratio of the medians, the peak state size (``memoryUsedBytes`` of the
stateful operator in Spark's progress, the same metric for both) and per-batch times.

Usage::

    .venv/bin/python bench/bench_suite.py --quick            # smoke run, ~10 min on 2 cores
    .venv/bin/python bench/bench_suite.py --write            # full run (~17 min, 2 idle cores)
    .venv/bin/python bench/bench_suite.py --only sliding,session --quick
    .venv/bin/python bench/bench_suite.py --only session,continuous --path both

The full sizes follow the issue: 2M events for tumbling and the AggregateFunction, 1M for the
others, 10k keys, 10 files; keys growing to 1M over 20 batches; 1M/5M/20M events and
1k/10k/100k/1M keys for scaling. ``--quick`` divides them (see ``SIZES``). Timings are noisy on
a shared machine: the report records the load average at start and end.
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
for _p in (REPO, REPO / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from bench_operator import the_command  # noqa: E402
from bench_spark import T0_MS, generate, input_files, java_version, spark_session  # noqa: E402

DEFAULT_OUTPUT = REPO / "docs" / "benchmarks.md"
IMAGES = REPO / "docs" / "img"
START, END = "<!-- bench-suite:start -->", "<!-- bench-suite:end -->"
SCHEMA = "user string, amount long, ts timestamp"
DELAY_MS = 5_000
MINUTE = 60_000

#: Full sizes and the ``--quick`` ones.
SIZES = {
    "full": {"main": 2_000_000, "other": 1_000_000, "keys": 10_000, "growing_keys": 1_000_000,
             "scale_events": [1_000_000, 5_000_000, 20_000_000],
             "scale_keys": [1_000, 10_000, 100_000, 1_000_000], "scale_keys_events": 2_000_000},
    "quick": {"main": 100_000, "other": 50_000, "keys": 2_000, "growing_keys": 20_000,
              "scale_events": [50_000, 100_000, 200_000],
              "scale_keys": [500, 2_000, 10_000], "scale_keys_events": 100_000},
}


# --------------------------------------------------------------------------- the pipelines
def _source(spark: Any, directory: str) -> Any:
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(directory)


def _native(spark: Any, directory: str, window: Callable[[Any], Any], count: bool = False):
    from pyspark.sql import functions as F

    aggs = [F.sum("amount").alias("amount")]
    if count:
        aggs.append(F.count(F.lit(1)).alias("n"))
    return (
        _source(spark, directory)
        .withWatermark("ts", f"{DELAY_MS} milliseconds")
        .groupBy(window(F.col("ts")), "user")
        .agg(*aggs)
    )


def _stream(spark: Any, directory: str, key_groups: int) -> Any:
    import flinkwin as fw
    from flinkwin.watermark import WatermarkStrategy

    return (
        fw.DataStream(_source(spark, directory), key_groups=key_groups)
        .assignTimestampsAndWatermarks(
            WatermarkStrategy.forBoundedOutOfOrderness(fw.Duration.ofMillis(DELAY_MS))
            .withTimestampAssigner("ts")
        )
        .keyBy("user")
    )


def _flinkwin_pipelines() -> dict[str, Callable[..., Any]]:
    import flinkwin as fw

    class UserSum(fw.AggregateFunction):
        def create_accumulator(self) -> int:
            return 0

        def add(self, value: Any, acc: int) -> int:
            return acc + value["amount"]

        def get_result(self, acc: int) -> int:
            return acc

        def merge(self, a: int, b: int) -> int:
            return a + b

    class CountSum(fw.ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            n = total = 0
            for e in elements:
                n += 1
                total += e["amount"]
            yield (key, total, n)

    tumbling = fw.TumblingEventTimeWindows.of(fw.Time.minutes(10))

    def hour(ds: Any, continuous: bool) -> Any:
        windowed = ds.window(fw.TumblingEventTimeWindows.of(fw.Time.hours(1)))
        if continuous:
            windowed = windowed.trigger(fw.ContinuousEventTimeTrigger.of(fw.Time.minutes(1)))
        return windowed.sum("amount")

    return {
        "tumbling": lambda ds: ds.window(tumbling).sum("amount"),
        "aggregate_function": lambda ds: ds.window(tumbling).aggregate(
            UserSum(), output_schema="amount long"),
        "sliding": lambda ds: ds.window(fw.SlidingEventTimeWindows.of(
            fw.Time.minutes(60), fw.Time.minutes(1))).sum("amount"),
        "session": lambda ds: ds.window(
            fw.EventTimeSessionWindows.withGap(fw.Time.minutes(10))).sum("amount"),
        "process_window": lambda ds: ds.window(tumbling).process(
            CountSum(), output_schema="user string, amount long, n long"),
        "continuous": lambda ds: hour(ds, True),
        "continuous_baseline": lambda ds: hour(ds, False),
        "growing_keys": lambda ds: ds.window(
            fw.TumblingEventTimeWindows.of(fw.Time.days(1))).sum("amount"),
    }


def _native_pipelines() -> dict[str, Callable[..., Any]]:
    from pyspark.sql import functions as F

    return {
        "tumbling": lambda s, d: _native(s, d, lambda ts: F.window(ts, "10 minutes")),
        "aggregate_function": lambda s, d: _native(s, d, lambda ts: F.window(ts, "10 minutes")),
        "sliding": lambda s, d: _native(s, d, lambda ts: F.window(ts, "60 minutes", "1 minute")),
        "session": lambda s, d: _native(s, d, lambda ts: F.session_window(ts, "10 minutes")),
        "process_window": lambda s, d: _native(
            s, d, lambda ts: F.window(ts, "10 minutes"), count=True),
        "growing_keys": lambda s, d: _native(s, d, lambda ts: F.window(ts, "1 day")),
    }


@dataclass
class Workload:
    name: str
    title: str
    baseline: str  # "native" or "flinkwin" (the continuous trigger's plain-window baseline)
    data: str  # key of the input directory
    events: int


@dataclass
class Run:
    workload: str
    pipeline: str
    seconds: float
    events: int
    output_rows: int
    batch_ms: list[int] = field(default_factory=list)
    state_bytes: list[int] = field(default_factory=list)
    state_rows: list[int] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.events / self.seconds


class RowSink:
    """``foreachBatch`` sink reading every output row once (one count per batch)."""

    def __init__(self) -> None:
        self.rows = 0

    def __call__(self, df: Any, batch_id: int) -> None:
        self.rows += df.count()


def run_once(spark: Any, args: Any, workload: Workload, pipeline: str, directory: str) -> Run:
    checkpoint = tempfile.mkdtemp(prefix="fw-suite-ckpt-", dir=args.workdir)
    sink = RowSink()
    name = "tumbling" if workload.name.startswith("scale_") else workload.name
    try:
        begin = time.perf_counter()
        if pipeline == "native":
            query = (
                _native_pipelines()[name](spark, directory).writeStream.outputMode("append")
                .foreachBatch(sink).option("checkpointLocation", checkpoint)
                .trigger(availableNow=True).start()
            )
        else:
            kind, todf, _ = pipeline.partition(TODF)
            flink_name = "continuous_baseline" if kind == "baseline" else name
            result = _flinkwin_pipelines()[flink_name](
                _stream(spark, directory, args.key_groups))
            if todf:  # Spark's idiom: the stage sized by toDF()'s writer (flinkwin.spark.sizing)
                query = (
                    result.toDF().writeStream.outputMode("append").foreachBatch(sink)
                    .option("checkpointLocation", checkpoint)
                    .trigger(availableNow=True).start()
                )
            else:
                query = result.start(
                    main=sink, checkpoint_location=checkpoint, trigger={"availableNow": True})
        query.awaitTermination()
        seconds = time.perf_counter() - begin
        if query.exception() is not None:
            raise RuntimeError(f"{name}/{pipeline} failed: {query.exception()}")
        progress = sorted(query.recentProgress, key=lambda p: p["batchId"])
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)
    batches = [p for p in progress if int(p.get("numInputRows", 0) or 0) > 0]
    return Run(
        workload=workload.name, pipeline=pipeline, seconds=seconds, events=workload.events,
        output_rows=sink.rows,
        batch_ms=[int(p["durationMs"].get("triggerExecution", 0)) for p in batches],
        state_bytes=[sum(int(o.get("memoryUsedBytes", 0)) for o in p.get("stateOperators", []))
                     for p in batches],
        state_rows=[sum(int(o.get("numRowsTotal", 0)) for o in p.get("stateOperators", []))
                    for p in batches],
    )


# ------------------------------------------------------------------------------- input data
def generate_growing(directory: str, keys: int, batches: int, seed: int) -> int:
    """``batches`` files within one day: file ``i`` has every key of block ``i`` once (keys
    grow to ``keys``) plus as many events of keys seen before. Returns the event count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    block = keys // batches
    os.makedirs(directory, exist_ok=True)
    base_mtime = time.time() - 10 * batches - 60
    span = 24 * 60 * MINUTE // (batches + 1)
    total = 0
    for i in range(batches):
        ids = np.concatenate([np.arange(i * block, (i + 1) * block),
                              rng.integers(0, (i + 1) * block, block)])
        n = len(ids)
        ts = np.sort(rng.integers(T0_MS + i * span, T0_MS + (i + 1) * span, n))
        table = pa.table({
            "user": pa.array(np.char.add("user_", ids.astype(str))),
            "amount": pa.array(rng.integers(1, 1_000, n, dtype=np.int64)),
            "ts": pa.array(ts * 1_000, pa.timestamp("us", tz="UTC")),
        })
        path = os.path.join(directory, f"part-{i:05d}.parquet")
        pq.write_table(table, path)
        os.utime(path, (base_mtime + 10 * i, base_mtime + 10 * i))
        total += n
    return total


def workloads(size: dict[str, Any]) -> list[Workload]:
    main, other = size["main"], size["other"]
    return [
        Workload("tumbling", "tumbling 10 min sum", "native", "main", main),
        Workload("aggregate_function", "user AggregateFunction (sum)", "native", "main", main),
        Workload("sliding", "sliding 60 min / 1 min sum", "native", "other", other),
        Workload("session", "session 10 min gap sum", "native", "other", other),
        Workload("process_window", "ProcessWindowFunction count+sum (native count+sum)",
                 "native", "other", other),
        Workload("continuous", "1 h tumbling + ContinuousEventTimeTrigger(1 min) "
                 "(baseline: same without it)", "baseline", "other", other),
    ]


# ---------------------------------------------------------------------------------- running
def warm_up(spark: Any, args: Any, warm: str) -> None:
    """One small run of each kind of pipeline first, so JVM and Python-worker start-up are not
    counted in the first workload."""
    tumbling = Workload("tumbling", "warm-up", "native", "warm", args.warmup_events)
    for p in ("native", *flinkwin_names(args)):
        run_once(spark, args, tumbling, p, warm)


#: Suffix of the pipeline names run through ``toDF().writeStream`` (``--path todf``).
TODF = "+toDF"


def flinkwin_names(args: Any) -> list[str]:
    """The flinkwin pipelines ``--path`` asks for: ``flinkwin`` (its start), ``flinkwin+toDF``."""
    return {"start": ["flinkwin"], "todf": ["flinkwin" + TODF],
            "both": ["flinkwin", "flinkwin" + TODF]}[args.path]


def pairs(args: Any, workload: Workload) -> list[tuple[str, str]]:
    """(baseline, flinkwin) pipeline names per path: native, or flinkwin without the trigger
    on the same path."""
    return [
        (workload.baseline if workload.baseline == "native"
         else workload.baseline + name.removeprefix("flinkwin"), name)
        for name in flinkwin_names(args)
    ]


def compare(spark: Any, args: Any, workload: Workload, directory: str, runs: list[Run]) -> None:
    pipelines = list(dict.fromkeys(p for pair in pairs(args, workload) for p in pair))
    for i in range(args.repeat):
        for p in pipelines:
            r = run_once(spark, args, workload, p, directory)
            runs.append(r)
            peak = max(r.state_bytes, default=0)
            print(f"{workload.name:20s} run {i + 1} {p:8s}: {r.rate:>10,.0f} ev/s "
                  f"({r.seconds:6.1f} s, {r.output_rows:,} rows, peak state "
                  f"{peak / 2**20:,.1f} MiB)", flush=True)


def median_rate(runs: list[Run], workload: str, pipeline: str) -> float:
    return statistics.median(r.rate for r in runs if r.workload == workload
                             and r.pipeline == pipeline)


def peak_state(runs: list[Run], workload: str, pipeline: str) -> int:
    return max((max(r.state_bytes, default=0) for r in runs
                if r.workload == workload and r.pipeline == pipeline), default=0)


# --------------------------------------------------------------------------------- reporting
BARS = {"tumbling": 0.8, "aggregate_function": 0.65, "sliding": 4.0, "session": 1.0,
        "process_window": 0.65, "continuous": 0.8, "session" + TODF: 0.85}


def plots(runs: list[Run], rows: list[tuple[str, str, float, float]], tag: str) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    IMAGES.mkdir(parents=True, exist_ok=True)
    names = []
    fig, ax = plt.subplots(figsize=(9, 4.5))
    labels = [r[0] for r in rows]
    x = np.arange(len(rows))
    ax.bar(x - 0.2, [r[2] for r in rows], 0.4, label="baseline (native Spark / plain window)")
    ax.bar(x + 0.2, [r[3] for r in rows], 0.4, label="flinkwin")
    ax.set_xticks(x, labels, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("events / s (median)")
    ax.set_title(f"Throughput ({tag})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    name = f"bench_throughput_{tag}.png"
    fig.savefig(IMAGES / name, dpi=110)
    plt.close(fig)
    names.append(name)

    growing = [r for r in runs if r.workload == "growing_keys"]
    if growing:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for p in ("native", "flinkwin"):
            mine = [r for r in growing if r.pipeline == p]
            if mine:
                r = mine[-1]
                ax.plot(np.array(r.state_bytes) / 2**20, r.batch_ms, marker="o", label=p)
        ax.set_xlabel("state size after the batch (MiB, memoryUsedBytes)")
        ax.set_ylabel("batch time (ms)")
        ax.set_title(f"1-day tumbling, keys growing over 20 batches ({tag})")
        ax.legend()
        fig.tight_layout()
        name = f"bench_state_{tag}.png"
        fig.savefig(IMAGES / name, dpi=110)
        plt.close(fig)
        names.append(name)
    return names


def report(
    runs: list[Run], suite: list[Workload], info: dict[str, Any], images: bool = True
) -> str:
    tag = info["tag"]
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        START,
        f"## Benchmark suite ({'QUICK smoke run, small sizes' if tag == 'quick' else 'full run'}"
        f", {now})",
        "",
        f"Command: `{info['command']}`",
        "",
        f"Load average at start {info['load_start']}, at end {info['load_end']} (2 cores; "
        f"anything above ~1 means other processes competed and the figures are noisy). "
        f"`local[2]`, shuffle partitions {info['partitions']}, flinkwin key groups "
        f"{info['key_groups']}, {info['repeat']} alternating runs per pipeline after a warm-up, "
        f"ratio of medians. PySpark {info['pyspark']}, {info['java']}. Suite time "
        f"{info['minutes']:.0f} min.",
        "",
        "| workload | events | baseline ev/s | flinkwin ev/s | flinkwin / baseline | bar | "
        "peak state baseline | peak state flinkwin |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    rows = []
    for w in suite:
        for baseline, name in pairs(info["args"], w):
            base = median_rate(runs, w.name, baseline)
            mine = median_rate(runs, w.name, name)
            ratio = mine / base
            bar = BARS.get(w.name if name == "flinkwin" else w.name + TODF)
            verdict = "" if bar is None else f">= {bar}x: {'met' if ratio >= bar else 'NOT met'}"
            title = w.title if name == "flinkwin" else f"{w.title}, `toDF().writeStream`"
            if name == "flinkwin":
                rows.append((w.name, w.title, base, mine))
            lines.append(
                f"| {title} | {w.events:,} | {base:,.0f} | {mine:,.0f} | **{ratio:.2f}x** | "
                f"{verdict} | {peak_state(runs, w.name, baseline) / 2**20:,.1f} MiB | "
                f"{peak_state(runs, w.name, name) / 2**20:,.1f} MiB |"
            )
    growing = [r for r in runs if r.workload == "growing_keys"]
    if growing:
        lines += ["", "Keys growing over 20 batches (1-day tumbling sum): last run of each "
                  "pipeline.", "",
                  "| pipeline | seconds | peak state | state rows | first 3 batches ms | "
                  "last 3 batches ms | last / first |", "| --- | ---: | ---: | ---: | --- | --- "
                  "| ---: |"]
        for p in ("native", flinkwin_names(info["args"])[0]):
            r = [x for x in growing if x.pipeline == p][-1]
            first, last = r.batch_ms[:3], r.batch_ms[-3:]
            lines.append(
                f"| {p} | {r.seconds:.1f} | {max(r.state_bytes) / 2**20:,.1f} MiB | "
                f"{max(r.state_rows):,} | {first} | {last} | "
                f"{statistics.mean(last) / statistics.mean(first):.2f}x |"
            )
    scaling = sorted({r.workload for r in runs if r.workload.startswith("scale")},
                     key=lambda n: (n.split("_")[1], int(n.split("_")[2])))
    if scaling:
        lines += ["", "Scaling (tumbling 10 min sum):", "",
                  "| run | native ev/s | flinkwin ev/s | flinkwin / native | peak state native "
                  "| peak state flinkwin |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for name in scaling:
            first = flinkwin_names(info["args"])[0]
            base, mine = median_rate(runs, name, "native"), median_rate(runs, name, first)
            label = name.replace("scale_events_", "events ").replace("scale_keys_", "keys ")
            lines.append(
                f"| {label} | {base:,.0f} | {mine:,.0f} | {mine / base:.2f}x | "
                f"{peak_state(runs, name, 'native') / 2**20:,.1f} MiB | "
                f"{peak_state(runs, name, first) / 2**20:,.1f} MiB |"
            )
    lines.append("")
    if images:  # the plots are files in docs/img: written only with --write
        first = flinkwin_names(info["args"])[0]
        for name in plots(runs, rows + [(n, n, median_rate(runs, n, "native"),
                                         median_rate(runs, n, first)) for n in scaling],
                          tag):
            lines += [f"![{name}](img/{name})", ""]
    lines.append(END)
    return "\n".join(lines) + "\n"


def write_section(text: str, path: Path) -> None:
    """Replace the suite's section of ``path`` (between the markers), or append it."""
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n\n"
    if START in old and END in old:
        head, rest = old.split(START, 1)
        new = head + text.rstrip("\n") + rest.split(END, 1)[1]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    path.write_text(new, encoding="utf-8")


# -------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> list[Run]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a smoke run")
    parser.add_argument("--only", default=None,
                        help="comma-separated workloads (also growing_keys, scaling)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--batches", type=int, default=None,
                        help="input files = micro-batches (default 10; 5 with --quick)")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--path", choices=("start", "todf", "both"), default="start",
                        help="how the flinkwin queries start: its start(), Spark's "
                        "toDF().writeStream, or each workload both ways")
    parser.add_argument("--key-groups", type=int, default=None)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--warmup-events", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--write", action="store_true", help=f"write into {DEFAULT_OUTPUT}")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    if args.key_groups is None:
        from flinkwin.datastream import DEFAULT_KEY_GROUPS

        args.key_groups = DEFAULT_KEY_GROUPS
    tag = "quick" if args.quick else "full"
    if args.batches is None:
        args.batches = 5 if args.quick else 10
    size = SIZES[tag]
    only = set(args.only.split(",")) if args.only else None
    suite = [w for w in workloads(size) if only is None or w.name in only]
    began = time.perf_counter()
    load_start = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    tmp = tempfile.mkdtemp(prefix="fw-suite-", dir=args.workdir)
    args.workdir = tmp
    runs: list[Run] = []
    span = 10 * MINUTE
    try:
        data = {}
        for key, events in (("main", size["main"]), ("other", size["other"])):
            if any(w.data == key for w in suite):
                data[key] = os.path.join(tmp, key)
                generate(data[key], events, size["keys"], args.batches, span, args.seed)
        warm = os.path.join(tmp, "warm")
        generate(warm, args.warmup_events, 1_000, 2, span, args.seed + 1)
        spark = spark_session(args)
        print(f"suite ({tag}), load average {load_start}", flush=True)
        warm_up(spark, args, warm)
        for w in suite:
            compare(spark, args, w, data[w.data], runs)
        if only is None or "growing_keys" in only:
            directory = os.path.join(tmp, "growing")
            events = generate_growing(directory, size["growing_keys"], 20, args.seed)
            grow = Workload("growing_keys", "1-day tumbling, keys growing", "native", "",
                            events)
            compare(spark, args, grow, directory, runs)
            shutil.rmtree(directory, ignore_errors=True)
        if only is None or "scaling" in only:
            cases = [(f"scale_events_{n}", n, size["keys"]) for n in size["scale_events"]]
            cases += [(f"scale_keys_{k}", size["scale_keys_events"], k)
                      for k in size["scale_keys"]]
            for name, events, keys in cases:
                directory = os.path.join(tmp, name)
                generate(directory, events, keys, args.batches, span, args.seed)
                assert input_files(directory)
                scale = Workload(name, name, "native", "", events)
                compare(spark, args, scale, directory, runs)
                shutil.rmtree(directory, ignore_errors=True)
        import pyspark

        info = {
            "tag": tag, "command": the_command(), "load_start": load_start,
            "load_end": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
            "partitions": args.partitions, "key_groups": args.key_groups,
            "repeat": args.repeat, "pyspark": pyspark.__version__, "java": java_version(),
            "minutes": (time.perf_counter() - began) / 60, "args": args,
        }
        spark.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = report(runs, suite, info, images=args.write)
    print(text)
    if args.write:
        write_section(text, args.output)
        print(f"wrote {args.output}")
    return runs


if __name__ == "__main__":
    main()
