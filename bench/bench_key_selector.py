"""What PyFlink's key selectors and TimestampAssigners cost against the column-name fast path.

Workload: ``--events`` events (default 200k) over ``--keys`` users (default 1000), a static
DataFrame cached in memory, an event-time tumbling 10 s window per user with the built-in
``sum("amount")`` on ``local[2]``. The same workload runs four ways in the same Spark session:

* ``keyBy("user")`` + ``withTimestampAssigner("ts")`` (column names: computed by Spark);
* ``key_by(lambda r: r.user)`` + ``withTimestampAssigner("ts")``;
* ``keyBy("user")`` + ``with_timestamp_assigner(MyTimestampAssigner())``;
* ``key_by(lambda r: r.user)`` + ``with_timestamp_assigner(MyTimestampAssigner())``.

A run counts and sums the output rows (``agg(count, sum)`` over the result). One warm-up run of
each form first; then the forms alternate ``--repeat`` times. Reported: each form's median
seconds and events/s, and its ratio to the column-name form (from the same run). The four
outputs are checked to be equal.

Usage::

    .venv/bin/python bench/bench_key_selector.py                 # print the results
    .venv/bin/python bench/bench_key_selector.py --write         # also append to docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
for _p in (REPO, REPO / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from bench_operator import the_command, write_report  # noqa: E402

import flinkwin as fw  # noqa: E402
from flinkwin import Time, TimestampAssigner, TumblingEventTimeWindows  # noqa: E402

FORMS = [
    ("keyBy(\"user\"), timestamp column", False, False),
    ("key_by(lambda r: r.user), timestamp column", True, False),
    ("keyBy(\"user\"), TimestampAssigner", False, True),
    ("key_by(lambda r: r.user), TimestampAssigner", True, True),
]


class MyTimestampAssigner(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value.ts  # type: ignore[no-any-return]


def build(df: Any, selector: bool, assigner: bool) -> Any:
    strategy = fw.WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        MyTimestampAssigner() if assigner else "ts"
    )
    stream = fw.DataStream(df).assign_timestamps_and_watermarks(strategy)
    keyed = stream.key_by(lambda r: r.user) if selector else stream.key_by("user")
    return keyed.window(TumblingEventTimeWindows.of(Time.seconds(10))).sum("amount")


def run_once(df: Any, selector: bool, assigner: bool) -> tuple[float, tuple[int, int]]:
    from pyspark.sql import functions as F

    result = build(df, selector, assigner).toDF()
    start = time.perf_counter()
    row = result.agg(F.count("*").alias("n"), F.sum("amount").alias("total")).first()
    return time.perf_counter() - start, (int(row.n), int(row.total))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--keys", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="append to docs/benchmarks.md")
    args = parser.parse_args(argv)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    spark = (
        SparkSession.builder.master("local[2]").appName("bench-key-selector")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.range(args.events, numPartitions=2).select(
        F.concat(F.lit("u"), (F.col("id") % args.keys).cast("string")).alias("user"),
        (F.col("id") * 3).alias("ts"),  # 3 ms apart: ~3,300 events per 10 s window
        (F.col("id") % 7).alias("amount"),
    ).cache()
    df.count()

    times: dict[str, list[float]] = {name: [] for name, _, _ in FORMS}
    outputs = {}
    for name, selector, assigner in FORMS:  # warm-up
        outputs[name] = run_once(df, selector, assigner)[1]
    if len(set(outputs.values())) != 1:
        raise SystemExit(f"the forms disagree: {outputs}")
    for _ in range(args.repeat):
        for name, selector, assigner in FORMS:
            seconds, out = run_once(df, selector, assigner)
            if out != outputs[name]:
                raise SystemExit(f"{name}: output changed between runs")
            times[name].append(seconds)
    spark.stop()

    base = statistics.median(times[FORMS[0][0]])
    lines = [
        f"## Key selectors and timestamp assigners ({datetime.date.today().isoformat()})",
        "",
        f"`{the_command()}`: {args.events:,} events, {args.keys:,} keys, static DataFrame, "
        f"tumbling 10 s `sum`, local[2], median of {args.repeat} runs after a warm-up.",
        "",
        "| form | median s | events/s | time vs column names |",
        "|---|---|---|---|",
    ]
    for name, _, _ in FORMS:
        median = statistics.median(times[name])
        lines.append(
            f"| {name} | {median:.2f} | {args.events / median:,.0f} | {median / base:.2f}x |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_report(text)


if __name__ == "__main__":
    main()
