"""End-to-end Spark benchmark: flinkwin against Spark's native windowed aggregation.

Workload: an event-time tumbling 10-minute ``sum(amount)`` per ``user`` on ``local[2]``; by
default 5M events over 10k keys, stored as 10 parquet files read one per micro-batch
(``maxFilesPerTrigger=1``), watermark 5 s, ``trigger(availableNow=True)``, append mode. In the
same run and Spark session, the same files go through

* **native**: ``withWatermark("ts", "5 seconds").groupBy(window("ts", "10 minutes"), "user")
  .agg(sum("amount"))``, hand-written Spark;
* **flinkwin**: ``DataStream(df).assignTimestampsAndWatermarks(forBoundedOutOfOrderness(5 s))
  .keyBy("user").window(TumblingEventTimeWindows.of(10 min)).sum("amount")`` with
  ``result.start(...)``.

Both write to a ``foreachBatch`` sink that reads every output row (one ``count``/``sum``
aggregate per batch) and nothing else. A run is timed from ``start()`` to the query's
termination, each run with a fresh checkpoint. A small warm-up of both pipelines runs first, so
JVM and Python-worker start-up are not counted; then native and flinkwin alternate ``--repeat``
times. Reported: each run's events/s, the median per pipeline, and flinkwin/native (ratio of the
medians; the bar is >= 0.5x). Both pipelines' output rows and totals are checked against each
other and against what the input implies.

Input: each file ``i`` covers 10 minutes of event time (``--span-minutes``), rows roughly in
time order with timestamps up to 4 s behind (out of order within the file, never late for the
5 s watermark); file modification times increase with ``i`` (Spark's file source takes files in
modification-time order).

Usage::

    .venv/bin/python bench/bench_spark.py                    # 5M events, print the results
    .venv/bin/python bench/bench_spark.py --events 300000 --repeat 1   # quick check
    .venv/bin/python bench/bench_spark.py --write            # also append to docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import datetime
import glob
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
for _p in (REPO, REPO / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from bench_operator import the_command, write_report  # noqa: E402

DEFAULT_OUTPUT = REPO / "docs" / "benchmarks.md"
SCHEMA = "user string, amount long, ts timestamp"
#: Event time of the first file: 2024-01-01 00:00:00 UTC, in epoch milliseconds.
T0_MS = 1_704_067_200_000
#: How far behind the in-order position an event's timestamp may be (< the watermark delay).
JITTER_MS = 4_000
BAR = 0.5


# ------------------------------------------------------------------------------------ input
def generate(
    directory: str, events: int, keys: int, batches: int, span_ms: int, seed: int
) -> None:
    """``batches`` parquet files ``part-XXXXX.parquet`` in ``directory`` (see module doc)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = pa.array([f"user_{k:05d}" for k in range(keys)], pa.string())
    per_file = -(-events // batches)
    os.makedirs(directory, exist_ok=True)
    base_mtime = time.time() - 10 * batches - 60
    done = 0
    for i in range(batches):
        n = min(per_file, events - done)
        if n <= 0:
            break
        done += n
        start = T0_MS + i * span_ms
        in_order = np.sort(rng.integers(start, start + span_ms, n, dtype=np.int64))
        jitter = rng.integers(0, JITTER_MS + 1, n, dtype=np.int64)
        jitter[rng.random(n) < 0.5] = 0  # half the events in order, half up to 4 s behind
        ts_ms = in_order - jitter
        table = pa.table(
            {
                "user": names.take(pa.array(rng.integers(0, keys, n, dtype=np.int64))),
                "amount": pa.array(rng.integers(1, 1_000, n, dtype=np.int64)),
                "ts": pa.array(ts_ms * 1_000, pa.timestamp("us", tz="UTC")),
            }
        )
        path = os.path.join(directory, f"part-{i:05d}.parquet")
        pq.write_table(table, path)
        # Distinct, increasing mtimes: Spark's file source orders by modification time.
        mtime = base_mtime + 10 * i
        os.utime(path, (mtime, mtime))


def input_files(directory: str) -> list[str]:
    return sorted(glob.glob(os.path.join(directory, "*.parquet")), key=os.path.getmtime)


@dataclass
class Expected:
    """What the input implies, assuming Spark processes one file per batch in mtime order."""

    events: int
    keys: int
    files: int
    late_rows: int
    native_rows: int
    native_sum: int
    flinkwin_rows: int
    flinkwin_sum: int


def expected_output(directory: str, window_ms: int, delay_ms: int) -> Expected:
    """Windows the final watermark closes: native emits a window when ``end <= watermark``,
    flinkwin (Flink) when ``end - 1 <= watermark``. ``late_rows`` counts events at or below
    the watermark of their batch (none in generated data; both pipelines would drop some)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    files = input_files(directory)
    if not files:
        raise SystemExit(f"no parquet files in {directory}")
    users, amounts, stamps = [], [], []
    late = 0
    max_ts: int | None = None
    for path in files:
        table = pq.read_table(path, columns=["user", "amount", "ts"])
        ts = pc.cast(table["ts"], pa.int64()).to_numpy() // 1_000  # microseconds -> millis
        if max_ts is not None:
            late += int((ts <= max_ts - delay_ms).sum())
        max_ts = max(int(ts.max()), max_ts if max_ts is not None else int(ts.max()))
        users.extend(table["user"].chunks)
        amounts.append(table["amount"].to_numpy())
        stamps.append(ts)
    assert max_ts is not None
    encoded = pc.dictionary_encode(pa.chunked_array(users).combine_chunks())
    codes = encoded.indices.to_numpy().astype(np.int64)
    ts_all = np.concatenate(stamps)
    amount_all = np.concatenate(amounts)
    window_index = ts_all // window_ms  # epoch-aligned, as both Spark and Flink align them
    win_end = (window_index + 1) * window_ms
    pair = codes * (int(window_index.max() - window_index.min()) + 1) + (
        window_index - window_index.min()
    )
    final_wm = max_ts - delay_ms

    def closed(mask: np.ndarray) -> tuple[int, int]:
        return len(np.unique(pair[mask])), int(amount_all[mask].sum())

    native_rows, native_sum = closed(win_end <= final_wm)
    flinkwin_rows, flinkwin_sum = closed(win_end - 1 <= final_wm)
    return Expected(
        events=len(ts_all),
        keys=len(encoded.dictionary),
        files=len(files),
        late_rows=late,
        native_rows=native_rows,
        native_sum=native_sum,
        flinkwin_rows=flinkwin_rows,
        flinkwin_sum=flinkwin_sum,
    )


# ------------------------------------------------------------------------------- pipelines
@dataclass
class Run:
    pipeline: str
    seconds: float
    events: int
    input_rows: int = 0
    batches: int = 0
    output_rows: int = 0
    output_sum: int = 0
    per_batch: list[int] = field(default_factory=list)
    batch_ms: list[int] = field(default_factory=list)

    @property
    def rate(self) -> float:
        return self.events / self.seconds


class CountingSink:
    """``fn(df, batch_id)`` reading every row once: one count/sum aggregate per batch."""

    def __init__(self) -> None:
        self.rows = 0
        self.total = 0
        self.per_batch: list[int] = []

    def __call__(self, df: Any, batch_id: int) -> None:
        from pyspark.sql import functions as F

        row = df.agg(F.count(F.lit(1)).alias("n"), F.sum("amount").alias("s")).collect()[0]
        n = int(row["n"])
        self.rows += n
        self.total += int(row["s"] or 0)
        self.per_batch.append(n)


def source(spark: Any, directory: str) -> Any:
    return spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).parquet(directory)


def start_native(spark: Any, args: Any, directory: str, checkpoint: str, sink: CountingSink):
    from pyspark.sql import functions as F

    windowed = (
        source(spark, directory)
        .withWatermark("ts", f"{args.delay_ms} milliseconds")
        .groupBy(F.window("ts", f"{args.window_minutes} minutes"), "user")
        .agg(F.sum("amount").alias("amount"))
    )
    return (
        windowed.writeStream.outputMode("append")
        .foreachBatch(sink)
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )


def start_flinkwin(spark: Any, args: Any, directory: str, checkpoint: str, sink: CountingSink):
    import flinkwin as fw
    from flinkwin.watermark import WatermarkStrategy

    result = (
        fw.DataStream(source(spark, directory), key_groups=args.key_groups)
        .assignTimestampsAndWatermarks(
            WatermarkStrategy.forBoundedOutOfOrderness(fw.Duration.ofMillis(args.delay_ms))
            .withTimestampAssigner("ts")
        )
        .keyBy("user")
        .window(fw.TumblingEventTimeWindows.of(fw.Time.minutes(args.window_minutes)))
        .sum("amount")
    )
    return result.start(
        main=sink, checkpoint_location=checkpoint, trigger={"availableNow": True}
    )


STARTERS = {"native": start_native, "flinkwin": start_flinkwin}


def run_once(spark: Any, args: Any, pipeline: str, directory: str, events: int) -> Run:
    checkpoint = tempfile.mkdtemp(prefix=f"fw-bench-{pipeline}-ckpt-", dir=args.workdir)
    sink = CountingSink()
    try:
        begin = time.perf_counter()
        query = STARTERS[pipeline](spark, args, directory, checkpoint, sink)
        query.awaitTermination()
        seconds = time.perf_counter() - begin
        if query.exception() is not None:
            raise RuntimeError(f"{pipeline} query failed: {query.exception()}")
        progress = query.recentProgress
    finally:
        shutil.rmtree(checkpoint, ignore_errors=True)
    return Run(
        pipeline=pipeline,
        seconds=seconds,
        events=events,
        input_rows=sum(int(p.get("numInputRows", 0) or 0) for p in progress),
        batches=len(progress),
        output_rows=sink.rows,
        output_sum=sink.total,
        per_batch=sink.per_batch,
        batch_ms=[int(p.get("durationMs", {}).get("triggerExecution", 0)) for p in progress],
    )


# ---------------------------------------------------------------------------------- report
def java_version() -> str:
    try:
        out = subprocess.run(
            ["java", "-version"], capture_output=True, text=True, timeout=30
        ).stderr
        return out.splitlines()[0].strip() if out else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def summarize(runs: list[Run]) -> dict[str, float]:
    medians = {
        p: statistics.median(r.rate for r in runs if r.pipeline == p) for p in STARTERS
    }
    medians["ratio"] = medians["flinkwin"] / medians["native"]
    return medians


def check_outputs(runs: list[Run], expected: Expected) -> list[str]:
    """Warnings (empty when all is consistent)."""
    warnings = []
    for r in runs:
        if r.input_rows != expected.events:
            warnings.append(
                f"{r.pipeline}: read {r.input_rows:,} input rows, expected {expected.events:,}"
            )
        want_rows = getattr(expected, f"{r.pipeline}_rows")
        want_sum = getattr(expected, f"{r.pipeline}_sum")
        if (r.output_rows, r.output_sum) != (want_rows, want_sum):
            warnings.append(
                f"{r.pipeline}: {r.output_rows:,} output rows summing to {r.output_sum:,}, "
                f"expected {want_rows:,} rows summing to {want_sum:,}"
            )
    outcomes = {(r.output_rows, r.output_sum) for r in runs}
    if len(outcomes) > 1:
        shown = ", ".join(f"{r.pipeline}={r.output_rows:,}/{r.output_sum:,}" for r in runs)
        warnings.append(f"pipelines disagree on output rows/sum: {shown}")
    if expected.late_rows:
        warnings.append(
            f"{expected.late_rows:,} input rows are at or below their batch's watermark: "
            "native and flinkwin handle late rows differently"
        )
    return warnings


def format_report(
    runs: list[Run], medians: dict[str, float], expected: Expected, info: dict[str, Any],
    warnings: list[str], command: str,
) -> str:
    """A markdown section for docs/benchmarks.md, in bench_operator.py's style."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    ratio = medians["ratio"]
    verdict = "met" if ratio >= BAR else "NOT met"
    lines = [
        f"## Spark end-to-end benchmark: flinkwin vs native ({now})",
        "",
        f"Command: `{command}`",
        "",
        f"Workload: event-time tumbling {info['window_minutes']}-minute `sum(amount)` per `user`, "
        f"{expected.events:,} events, {expected.keys:,} keys, {expected.files} parquet files "
        f"({info['origin']}) read one per micro-batch (`maxFilesPerTrigger=1`), watermark "
        f"{info['delay_ms']} ms, "
        f"`trigger(availableNow=True)`, append mode, `foreachBatch` sink aggregating every output "
        f"row; `{info['master']}`, `spark.sql.shuffle.partitions={info['partitions']}`, flinkwin "
        f"key groups {info['key_groups']}. Native: `withWatermark` + `groupBy(window(ts), user)"
        f".agg(sum(amount))`. Each run timed from `start()` to termination after a warm-up; "
        f"runs alternate. Machine: {platform.machine()}, nproc {os.cpu_count()}, load average "
        f"{info['load']} at start, Python {platform.python_version()}, PySpark "
        f"{info['pyspark']} (Spark {info['spark']}), {info['java']}, pandas {info['pandas']}, "
        f"pyarrow {info['pyarrow']}.",
        "",
        "| run | pipeline | seconds | events/s | micro-batches | output rows |",
        "| ---: | --- | ---: | ---: | ---: | ---: |",
    ]
    for i, r in enumerate(runs, 1):
        lines.append(
            f"| {i} | {r.pipeline} | {r.seconds:.2f} | {r.rate:,.0f} | {r.batches} | "
            f"{r.output_rows:,} |"
        )
    lines += [
        "",
        f"Median throughput: native {medians['native']:,.0f} events/s, flinkwin "
        f"{medians['flinkwin']:,.0f} events/s. flinkwin / native: **{ratio:.2f}x** "
        f"(bar: >= {BAR}x native: {verdict}).",
        "",
    ]
    if warnings:
        lines += ["Warnings:", ""] + [f"* {w}" for w in warnings] + [""]
    else:
        lines += [
            f"Outputs checked: both pipelines emitted {runs[0].output_rows:,} window results "
            f"with the same total, as the input implies.",
            "",
        ]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------ main
def spark_session(args: Any) -> Any:
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master(args.master)
        .appName("flinkwin-bench")
        .config("spark.driver.memory", args.driver_memory)
        .config("spark.sql.shuffle.partitions", str(args.partitions))
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=5_000_000)
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--batches", type=int, default=10, help="input files = micro-batches")
    parser.add_argument("--span-minutes", type=float, default=10.0,
                        help="event time covered by each file")
    parser.add_argument("--window-minutes", type=int, default=10)
    parser.add_argument("--delay-ms", type=int, default=5_000,
                        help="watermark delay (bounded out-of-orderness)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each pipeline (median)")
    parser.add_argument("--partitions", type=int, default=4, help="spark.sql.shuffle.partitions")
    parser.add_argument("--key-groups", type=int, default=None,
                        help="flinkwin key groups (default: flinkwin's default, 16)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--driver-memory", default="2g")
    parser.add_argument("--warmup-events", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--data", default=None,
                        help="input directory: reused if it holds parquet files, else generated")
    parser.add_argument("--workdir", default=None, help="where temp dirs go (default: system)")
    parser.add_argument("--verbose", action="store_true",
                        help="print each run's per-batch durations and output rows")
    parser.add_argument("--write", action="store_true", help=f"append to {DEFAULT_OUTPUT}")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    if args.key_groups is None:
        from flinkwin.datastream import DEFAULT_KEY_GROUPS

        args.key_groups = DEFAULT_KEY_GROUPS
    if args.delay_ms <= JITTER_MS:
        parser.error(f"--delay-ms must exceed the generator's {JITTER_MS} ms of disorder")
    span_ms = int(args.span_minutes * 60_000)
    window_ms = args.window_minutes * 60_000

    tmp = tempfile.mkdtemp(prefix="fw-bench-", dir=args.workdir)
    args.workdir = tmp
    try:
        data = args.data or os.path.join(tmp, "input")
        if args.data and input_files(args.data):
            origin = f"reused from `{data}`"
        else:
            print(f"generating {args.events:,} events over {args.keys:,} keys in "
                  f"{args.batches} files under {data} ...", flush=True)
            generate(data, args.events, args.keys, args.batches, span_ms, args.seed)
            origin = f"generated with seed {args.seed}, {args.span_minutes:g} minutes per file"
        expected = expected_output(data, window_ms, args.delay_ms)
        print(f"input: {expected.events:,} events, {expected.keys:,} keys, {expected.files} "
              f"files ({origin.replace('`', '')}); expected output rows: native "
              f"{expected.native_rows:,}, flinkwin {expected.flinkwin_rows:,}")
        warm = os.path.join(tmp, "warmup")
        generate(warm, args.warmup_events, min(args.keys, 1_000), 2, span_ms, args.seed + 1)

        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        spark = spark_session(args)
        print(f"Spark {spark.version}, {args.master}, shuffle partitions {args.partitions}, "
              f"flinkwin key groups {args.key_groups}; load average at start: {load}")
        print("warm-up ...", flush=True)
        for pipeline in STARTERS:
            run_once(spark, args, pipeline, warm, args.warmup_events)

        runs: list[Run] = []
        for i in range(args.repeat):
            for pipeline in STARTERS:
                r = run_once(spark, args, pipeline, data, expected.events)
                runs.append(r)
                print(f"run {i + 1} {pipeline:8s}: {r.events:>10,} events in {r.seconds:7.2f} s "
                      f"= {r.rate:>10,.0f} events/s ({r.batches} micro-batches, "
                      f"{r.output_rows:,} output rows)", flush=True)
                if args.verbose:
                    print(f"    per batch: ms {r.batch_ms}, output rows {r.per_batch}")
        medians = summarize(runs)
        warnings = check_outputs(runs, expected)
        import pandas as pd
        import pyarrow as pa
        import pyspark

        info = {
            "window_minutes": args.window_minutes,
            "delay_ms": args.delay_ms,
            "master": args.master,
            "partitions": args.partitions,
            "key_groups": args.key_groups,
            "load": load,
            "origin": origin,
            "pyspark": pyspark.__version__,
            "spark": spark.version,
            "java": java_version(),
            "pandas": pd.__version__,
            "pyarrow": pa.__version__,
        }
        spark.stop()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    ratio = medians["ratio"]
    print(f"median native  : {medians['native']:>12,.0f} events/s")
    print(f"median flinkwin: {medians['flinkwin']:>12,.0f} events/s")
    print(f"flinkwin/native: {ratio:.2f}x (bar >= {BAR}x: {'met' if ratio >= BAR else 'NOT met'})")
    if warnings:
        for w in warnings:
            print(f"WARNING: {w}")
    else:
        print(f"outputs: both pipelines emitted {runs[0].output_rows:,} rows with the same total "
              f"({runs[0].output_sum:,}), as expected from the input")
    if args.write:
        text = format_report(runs, medians, expected, info, warnings, the_command())
        write_report(text, args.output)
        print(f"appended to {args.output}")
    return {"runs": runs, "medians": medians, "expected": expected, "warnings": warnings}


if __name__ == "__main__":
    main()
