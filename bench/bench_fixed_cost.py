"""The fixed cost per micro-batch and the figures of the current table in docs/benchmarks.md.

Every workload runs its pipelines alternately in one Spark session (after one warm-up run of
each), on bench_spark.py's generated input (10k keys, parquet files read one per micro-batch,
``availableNow``, a ``foreachBatch`` sink counting every output row), and reports median
seconds; "ratio" is flinkwin's throughput over native's (native seconds / flinkwin seconds).

==========  ==============================================================================
workload    what runs
==========  ==============================================================================
floor       native tumbling 10 min sum, the same stage shape as flinkwin's with a no-op
            Python function (``applyInPandasWithState``, 16 key-group labels,
            ``EventTimeTimeout``, flinkwin's number of state partitions), and flinkwin's
            tumbling sum; at ``--events`` and at 16
            rows per micro-batch (the fixed cost per micro-batch), plus the cost per row
            (seconds beyond the 16-row runs, per event)
timeout     the no-op stage at 16 rows per micro-batch with ``EventTimeTimeout`` vs
            ``NoTimeout``: what the second Python session per state partition (for
            timed-out groups, run even when none is due) costs per micro-batch
gc          flinkwin tumbling with PySpark's full ``gc.collect()`` after every task (its
            workers forked by ``bench/full_gc_daemon.py``) vs flinkwin's young-generation
            collections, and native
defaults    a session left at Spark's defaults (no ``spark.sql.shuffle.partitions``: 200):
            native tumbling vs flinkwin tumbling in that same session (``--path``: started
            by flinkwin's ``start()``, by Spark's ``toDF().writeStream``, or both)
large       tumbling at ``--large-events`` (default 10M: 1M rows per micro-batch), paths as
            for defaults
combine     tumbling at ``--large-events`` with flinkwin's combining before the shuffle on
            and off (``spark.flinkwin.combine``), and native; each micro-batch's file read
            as ``--split`` input partitions (``spark.sql.files.maxPartitionBytes``)
==========  ==============================================================================

Usage (one Spark session at a time; ``--scale`` divides every size)::

    .venv/bin/python bench/bench_fixed_cost.py --only floor,timeout,gc --events 2000000
    .venv/bin/python bench/bench_fixed_cost.py --only defaults --events 2000000
    .venv/bin/python bench/bench_fixed_cost.py --only large --scale 4
    .venv/bin/python bench/bench_fixed_cost.py --only defaults,large --path both
    .venv/bin/python bench/bench_fixed_cost.py --only combine --split 4

Each workload prints its rows for the current table of docs/benchmarks.md (workload, flinkwin,
native, ratio, date, command).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for _p in (REPO, REPO / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from bench_operator import the_command  # noqa: E402
from bench_spark import generate  # noqa: E402
from bench_suite import (  # noqa: E402
    DELAY_MS,
    SCHEMA,
    RowSink,
    _flinkwin_pipelines,
    _native_pipelines,
    _stream,
)

WINDOW_MS = 600_000
#: flinkwin shifts Spark's watermark column by this much (see flinkwin.spark.watermarks)
SHIFT_MS = 36500 * 86_400_000
DAEMON_MODULE = "spark.python.daemon.module"
WORKLOADS = ("floor", "timeout", "gc", "defaults", "large", "combine")


def count_rows(key: Any, frames: Any, state: Any) -> Any:
    """The no-op stage function: counts its rows, keeps the count, wakes at the next
    watermark increase (as flinkwin's key groups do). Its workers collect as flinkwin's do."""
    import pandas as pd

    from flinkwin.spark.daemon import young_collections_only

    young_collections_only()

    n = sum(len(f) for f in frames)
    state.update((n,))
    state.setTimeoutTimestamp(max(state.getCurrentWatermarkMs(), 1))
    yield pd.DataFrame({"n": [n]})


def count_rows_no_timeout(key: Any, frames: Any, state: Any) -> Any:
    import pandas as pd

    from flinkwin.spark.daemon import young_collections_only

    young_collections_only()

    n = sum(len(f) for f in frames)
    state.update((n,))
    yield pd.DataFrame({"n": [n]})


class Bench:
    """One Spark session and the pipelines a workload alternates."""

    def __init__(self, args: Any, partitions: int | None) -> None:
        os.environ["PYSPARK_PYTHON"] = sys.executable
        os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
        bench_dir = str(REPO / "bench")  # the workers import full_gc_daemon from here
        path = os.environ.get("PYTHONPATH")
        if bench_dir not in (path or "").split(os.pathsep):
            os.environ["PYTHONPATH"] = bench_dir if not path else os.pathsep.join([bench_dir, path])
        from pyspark.sql import SparkSession

        builder = (
            SparkSession.builder.master(args.master).appName("flinkwin-bench-fixed-cost")
            .config("spark.driver.memory", args.driver_memory)
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.sql.session.timeZone", "UTC")
        )
        if partitions is not None:
            builder = builder.config("spark.sql.shuffle.partitions", str(partitions))
        self.spark = builder.getOrCreate()
        self.spark.sparkContext.setLogLevel("ERROR")
        self.args = args

    def stop(self) -> None:
        self.spark.stop()

    # ------------------------------------------------------------------------ pipelines
    def _start(self, df: Any, sink: RowSink) -> Any:
        checkpoint = tempfile.mkdtemp(prefix="fw-fixed-ckpt-", dir=self.args.workdir)
        return (
            df.writeStream.outputMode("append").foreachBatch(sink)
            .option("checkpointLocation", checkpoint).trigger(availableNow=True).start()
        )

    def native(self, directory: str, sink: RowSink) -> Any:
        return self._start(_native_pipelines()["tumbling"](self.spark, directory), sink)

    def flinkwin(self, directory: str, sink: RowSink) -> Any:
        checkpoint = tempfile.mkdtemp(prefix="fw-fixed-ckpt-", dir=self.args.workdir)
        result = _flinkwin_pipelines()["tumbling"](
            _stream(self.spark, directory, self.args.key_groups))
        return result.start(main=sink, checkpoint_location=checkpoint,
                            trigger={"availableNow": True})

    def flinkwin_to_df(self, directory: str, sink: RowSink) -> Any:
        """flinkwin's tumbling sum started by Spark's writer: ``toDF().writeStream``."""
        result = _flinkwin_pipelines()["tumbling"](
            _stream(self.spark, directory, self.args.key_groups))
        return self._start(result.toDF(), sink)

    def paths(self) -> dict[str, Callable[..., Any]]:
        """native and the flinkwin pipelines ``--path`` asks for."""
        flinkwin = {"flinkwin": self.flinkwin, "flinkwin toDF": self.flinkwin_to_df}
        chosen = {"start": ["flinkwin"], "todf": ["flinkwin toDF"],
                  "both": list(flinkwin)}[self.args.path]
        return {"native": self.native, **{name: flinkwin[name] for name in chosen}}

    def noop(self, directory: str, sink: RowSink, timeout: bool = True) -> Any:
        from pyspark.sql import functions as F
        from pyspark.sql.streaming.state import GroupStateTimeout

        import flinkwin as fw
        from flinkwin.spark.parallelism import stage_parallelism
        from flinkwin.spark.pipeline import key_group_column
        from flinkwin.spark.sizing import state_partitions

        source = self._source(directory)
        labels = key_group_column(
            fw.DataStream(source, key_groups=self.args.key_groups).keyBy("user")
            .window(fw.TumblingProcessingTimeWindows.of(fw.Time.minutes(10)))
            .sum("amount")._pipeline
        )
        staged = source.select(
            "user", "amount", labels.alias("_fw_kg"),
            F.timestamp_micros(F.unix_micros("ts") + F.lit(SHIFT_MS * 1000)).alias("_fw_wm"),
        ).withWatermark("_fw_wm", f"{SHIFT_MS + DELAY_MS} milliseconds")
        function, kind = (
            (count_rows, GroupStateTimeout.EventTimeTimeout) if timeout
            else (count_rows_no_timeout, GroupStateTimeout.NoTimeout)
        )
        stage = staged.groupBy("_fw_kg").applyInPandasWithState(
            function, "n long", "n long", "append", kind)
        # as many state partitions as flinkwin's stage would run (flinkwin.spark.parallelism)
        parallelism = stage_parallelism(self.spark, self.args.key_groups)
        with state_partitions(self.spark, parallelism):
            return self._start(stage, sink)

    def _source(self, directory: str) -> Any:
        return self.spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(
            directory)

    def with_daemon(self, module: str | None, starter: Callable[..., Any]) -> Callable[..., Any]:
        """``starter`` run with Python workers forked by daemon ``module`` (Spark reads the
        setting for every task it starts; a local session shares the driver's conf)."""
        conf = self.spark.sparkContext._jsc.sc().conf()

        def start(directory: str, sink: RowSink) -> Any:
            if module is None:
                conf.remove(DAEMON_MODULE)
            else:
                conf.set(DAEMON_MODULE, module)
            return starter(directory, sink)

        return start

    # --------------------------------------------------------------------------- timing
    def timed(self, starter: Callable[..., Any], directory: str) -> tuple[float, int]:
        sink = RowSink()
        begin = time.perf_counter()
        query = starter(directory, sink)
        query.awaitTermination()
        seconds = time.perf_counter() - begin
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))
        return seconds, sink.rows

    def compare(
        self, title: str, pipelines: dict[str, Callable[..., Any]], directory: str
    ) -> dict[str, list[float]]:
        """Median-ready times of every pipeline, alternating, after a warm-up run of each."""
        rows: dict[str, int] = {}
        for name, starter in pipelines.items():
            _, rows[name] = self.timed(starter, directory)
        times: dict[str, list[float]] = {name: [] for name in pipelines}
        for i in range(self.args.repeat):
            for name, starter in pipelines.items():
                seconds, n = self.timed(starter, directory)
                times[name].append(seconds)
                print(f"{title:28s} run {i + 1} {name:24s}: {seconds:7.2f} s "
                      f"({n:,} output rows)", flush=True)
        return times


def median(times: dict[str, list[float]], name: str) -> float:
    return statistics.median(times[name])


class Table:
    """Rows of the current table: workload, flinkwin, native, ratio, date, command."""

    def __init__(self) -> None:
        self.rows: list[str] = []
        self.notes: list[str] = []

    def add(self, workload: str, flinkwin_s: float, native_s: float, what: str = "") -> None:
        date = time.strftime("%Y-%m-%d", time.gmtime())
        self.rows.append(
            f"| {workload} | {flinkwin_s:.2f} s{what} | {native_s:.2f} s | "
            f"**{native_s / flinkwin_s:.2f}x** | {date} | `{the_command()}` |"
        )

    def print(self) -> None:
        print("\n| workload | flinkwin | native | ratio | date | command |")
        print("| --- | ---: | ---: | ---: | --- | --- |")
        print("\n".join(self.rows))
        for note in self.notes:
            print(f"- {note}")


def data(args: Any, name: str, events: int, keys: int = 10_000) -> str:
    directory = os.path.join(args.workdir, name)
    if not os.path.isdir(directory):
        generate(directory, events, keys, args.batches, WINDOW_MS, args.seed)
    return directory


def run_floor(args: Any, table: Table) -> None:
    bench = Bench(args, args.partitions)
    try:
        pipelines = {"native": bench.native, "no-op stage": bench.noop,
                     "flinkwin": bench.flinkwin}
        big = bench.compare(f"floor {args.events:,}", pipelines, data(args, "big", args.events))
        tiny_events = 16 * args.batches
        tiny = bench.compare("floor 16 rows/batch", pipelines,
                             data(args, "tiny", tiny_events, keys=16))
    finally:
        bench.stop()
    n = args.batches
    table.add(f"tumbling sum, {args.events:,} events, {n} micro-batches",
              median(big, "flinkwin"), median(big, "native"))
    table.add(f"no-op stateful stage (the floor), {args.events:,} events",
              median(big, "no-op stage"), median(big, "native"),
              what=" (no-op stage)")
    table.add(f"tumbling sum, 16 rows per micro-batch, {n} micro-batches",
              median(tiny, "flinkwin"), median(tiny, "native"))
    table.add(f"no-op stateful stage, 16 rows per micro-batch, {n} micro-batches",
              median(tiny, "no-op stage"), median(tiny, "native"), what=" (no-op stage)")
    per_batch = {p: median(tiny, p) / n for p in pipelines}
    per_row = {p: (median(big, p) - median(tiny, p)) / (args.events - tiny_events) * 1e6
               for p in pipelines}
    table.notes.append(
        "fixed cost per micro-batch (16-row runs / batches): "
        + ", ".join(f"{p} {s:.3f} s" for p, s in per_batch.items()))
    table.notes.append(
        "cost per row beyond the 16-row runs: "
        + ", ".join(f"{p} {us:.2f} µs" for p, us in per_row.items())
        + f"; flinkwin over the no-op stage {per_row['flinkwin'] - per_row['no-op stage']:.2f}"
        f" µs, the no-op stage over native {per_row['no-op stage'] - per_row['native']:.2f} µs")


def run_timeout(args: Any, table: Table) -> None:
    bench = Bench(args, args.partitions)
    try:
        from flinkwin.spark.parallelism import stage_parallelism

        bench_partitions = stage_parallelism(bench.spark, args.key_groups)
        pipelines = {
            "EventTimeTimeout": bench.noop,
            "NoTimeout": lambda d, s: bench.noop(d, s, timeout=False),
        }
        tiny = bench.compare("timeout 16 rows/batch", pipelines,
                             data(args, "tiny", 16 * args.batches, keys=16))
    finally:
        bench.stop()
    with_timeout, without = median(tiny, "EventTimeTimeout"), median(tiny, "NoTimeout")
    table.notes.append(
        f"no-op stage at 16 rows per micro-batch, {bench_partitions} state partitions: "
        f"EventTimeTimeout {with_timeout:.2f} s, NoTimeout {without:.2f} s: the timed-out "
        f"groups' Python session costs {(with_timeout - without) / args.batches:.3f} s per "
        "micro-batch (NoTimeout runs no batch without input, so windows would wait for "
        "the next input: not usable, measured only)")


def run_gc(args: Any, table: Table) -> None:
    log = os.environ["FW_BENCH_GC_LOG"]
    bench = Bench(args, args.partitions)
    try:
        pipelines = {
            "native": bench.native,
            "flinkwin, full gc": bench.with_daemon("full_gc_daemon", bench.flinkwin),
            "flinkwin": bench.with_daemon(None, bench.flinkwin),
        }
        big = bench.compare("gc", pipelines, data(args, "big", args.events))
    finally:
        bench.stop()
    full, young = median(big, "flinkwin, full gc"), median(big, "flinkwin")
    table.add(f"tumbling sum, {args.events:,} events, PySpark's full gc after every task",
              full, median(big, "native"), what=" (full gc)")
    table.notes.append(
        f"young-generation collections instead of PySpark's full gc: flinkwin {full:.2f} s "
        f"-> {young:.2f} s, {full / young:.2f}x")
    with open(log, encoding="utf-8") as f:
        timings = [tuple(map(float, line.split())) for line in f if line.strip()]
    runs = args.repeat + 1  # the warm-up ran on that daemon too
    young_ms, full_ms = [t[0] for t in timings], [t[1] for t in timings]
    table.notes.append(
        f"in the full-gc workers, per task: full collection median {statistics.median(full_ms):.1f}"
        f" ms (max {max(full_ms):.1f} ms), young collection median "
        f"{statistics.median(young_ms):.3f} ms; {len(timings) / runs:.0f} tasks and "
        f"{sum(full_ms) / 1000 / runs:.2f} s of full collections per run (CPU time of 2 cores)")


def run_defaults(args: Any, table: Table) -> None:
    bench = Bench(args, None)
    try:
        partitions = bench.spark.conf.get("spark.sql.shuffle.partitions")
        pipelines = bench.paths()
        big = bench.compare(f"defaults ({partitions} partitions)", pipelines,
                            data(args, "big", args.events))
    finally:
        bench.stop()
    for name in [n for n in pipelines if n != "native"]:
        table.add(f"tumbling sum, {args.events:,} events, session at Spark's defaults "
                  f"(spark.sql.shuffle.partitions {partitions}), {name}",
                  median(big, name), median(big, "native"))


def run_large(args: Any, table: Table) -> None:
    bench = Bench(args, args.partitions)
    try:
        pipelines = bench.paths()
        big = bench.compare(f"large {args.large_events:,}", pipelines,
                            data(args, "large", args.large_events))
    finally:
        bench.stop()
    for name in [n for n in pipelines if n != "native"]:
        table.add(f"tumbling sum, {args.large_events:,} events "
                  f"({args.large_events // args.batches:,} rows per micro-batch), {name}",
                  median(big, name), median(big, "native"))


def run_combine(args: Any, table: Table) -> None:
    bench = Bench(args, args.partitions)
    directory = data(args, "large", args.large_events)
    size = sum(f.stat().st_size for f in Path(directory).glob("*.parquet")) // args.batches
    bench.spark.conf.set("spark.sql.files.maxPartitionBytes", str(max(1, size // args.split)))
    conf = bench.spark.conf

    def flinkwin(combine: bool) -> Callable[..., Any]:
        def start(directory: str, sink: RowSink) -> Any:
            conf.set("spark.flinkwin.combine", str(combine).lower())
            return bench.flinkwin(directory, sink)
        return start

    try:
        pipelines = {"native": bench.native, "flinkwin combine on": flinkwin(True),
                     "flinkwin combine off": flinkwin(False)}
        big = bench.compare(f"combine {args.large_events:,}", pipelines, directory)
    finally:
        bench.stop()
    what = (f"{args.large_events:,} events ({args.large_events // args.batches:,} rows per "
            f"micro-batch, about {args.split} input partitions each)")
    table.add(f"tumbling sum, {what}, combining before the shuffle on",
              median(big, "flinkwin combine on"), median(big, "native"))
    table.add(f"tumbling sum, {what}, combining off",
              median(big, "flinkwin combine off"), median(big, "native"))


def main(argv: list[str] | None = None) -> Table:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default=",".join(WORKLOADS),
                        help=f"comma-separated workloads of {', '.join(WORKLOADS)}")
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--large-events", type=int, default=10_000_000)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="divide --events and --large-events by this")
    parser.add_argument("--batches", type=int, default=10, help="input files = micro-batches")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--partitions", type=int, default=4,
                        help="spark.sql.shuffle.partitions (all workloads but defaults)")
    parser.add_argument("--key-groups", type=int, default=16)
    parser.add_argument("--path", choices=("start", "todf", "both"), default="start",
                        help="defaults and large: flinkwin started by its start(), by "
                        "Spark's toDF().writeStream, or both")
    parser.add_argument("--split", type=int, default=4,
                        help="input partitions per micro-batch file (combine workload)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="4g")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--workdir", default=None)
    args = parser.parse_args(argv)
    only = args.only.split(",")
    unknown = set(only) - set(WORKLOADS)
    if unknown:
        parser.error(f"unknown workloads {sorted(unknown)}; choose from {WORKLOADS}")
    args.events = int(args.events / args.scale)
    args.large_events = int(args.large_events / args.scale)
    args.workdir = tempfile.mkdtemp(prefix="fw-fixed-", dir=args.workdir)
    # read by bench/full_gc_daemon.py in the workers (set before Spark's JVM starts)
    os.environ["FW_BENCH_GC_LOG"] = os.path.join(args.workdir, "gc.log")
    table = Table()
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    try:
        runners = {"floor": run_floor, "timeout": run_timeout, "gc": run_gc,
                   "defaults": run_defaults, "large": run_large, "combine": run_combine}
        for name in only:
            runners[name](args, table)
    finally:
        shutil.rmtree(args.workdir, ignore_errors=True)
    table.notes.append(f"load average {load} at start, "
                       f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} at end (2 cores)")
    table.print()
    return table


if __name__ == "__main__":
    main()
