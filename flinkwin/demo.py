"""The main job (``make demo``): Flink-style windows over a clickstream on local Spark.

An embedded source writes the clickstream as JSON files, one file per micro-batch, with events
out of order and a few arriving far too late. Three keyed event-time pipelines run on it:

1. tumbling 5-minute revenue per user, fired early every minute (``ContinuousEventTimeTrigger``)
   with 1 minute of allowed lateness, and late clicks sent to their own sink;
2. sliding 10-minute windows every 5 minutes: clicks and revenue per user (``AggregateFunction``);
3. session windows with a 3-minute gap: each user's sessions (``ProcessWindowFunction``).

Each pipeline is one streaming query (``trigger(availableNow=True)``) that writes its main output
and its late data to separate sinks. Run it with ``make demo`` or ``python -m flinkwin.demo``.
As a job module (:func:`build`), the same pipelines run through ``python -m flinkwin.job
--module flinkwin.demo`` with sinks, checkpoint and trigger from the command line (the
Databricks bundle in ``deploy/databricks`` does that).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Iterable
from datetime import datetime, timedelta, timezone
from typing import Any

from flinkwin import (
    AggregateFunction,
    ContinuousEventTimeTrigger,
    Duration,
    EventTimeSessionWindows,
    OutputTag,
    ProcessWindowFunction,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
)

USERS = ["ana", "bo", "chen", "dara", "eli"]
START = datetime(2026, 11, 22, 9, 0, tzinfo=timezone.utc)


def clickstream(batches: int = 6, per_batch: int = 40, seed: int = 7) -> list[list[dict]]:
    """Micro-batches of click events: mostly in order, some up to 20 s out of order, users taking
    breaks, and in the last batches a few clicks from long-closed windows (late data)."""
    rnd = random.Random(seed)
    out: list[list[dict]] = []
    clock = START
    for b in range(batches):
        batch = []
        # each batch (about four minutes) two users take a break, which ends their sessions
        active = [u for i, u in enumerate(USERS) if (i - b) % len(USERS) >= 2]
        for _ in range(per_batch):
            clock += timedelta(seconds=rnd.randint(1, 12))
            ts = clock - timedelta(seconds=rnd.choice([0, 0, 0, 3, 8, 20]))
            batch.append({"user": rnd.choice(active), "amount": rnd.randint(1, 50),
                          "ts": ts.isoformat()})
        if b >= batches - 2:
            for _ in range(3):
                old = START + timedelta(minutes=rnd.randint(0, 4), seconds=rnd.randint(0, 59))
                batch.append({"user": rnd.choice(USERS), "amount": rnd.randint(1, 50),
                              "ts": old.isoformat()})
        out.append(batch)
    return out


def write_source(
    directory: str, batches: Iterable[list[dict]], *, keep_existing: bool = False
) -> None:
    """One JSON file per micro-batch. Spark's file source orders files by modification time, so
    each file gets a distinct, increasing one (its batch number past a fixed base).
    ``keep_existing`` leaves files already there untouched (a restarted job adds new ones)."""
    base = 1_700_000_000
    for i, batch in enumerate(batches):
        path = os.path.join(directory, f"clicks-{i:03d}.json")
        if keep_existing and os.path.exists(path):
            continue
        with open(path, "w") as f:
            f.writelines(json.dumps(event) + "\n" for event in batch)
        os.utime(path, (base + i, base + i))


class ClicksAndRevenue(AggregateFunction):
    """(user, clicks, revenue) per window, incrementally."""

    def create_accumulator(self) -> tuple[Any, int, int]:
        return (None, 0, 0)

    def add(self, value: Any, acc: tuple[Any, int, int]) -> tuple[Any, int, int]:
        return (value.user, acc[1] + 1, acc[2] + value.amount)

    def get_result(self, acc: tuple[Any, int, int]) -> tuple[Any, int, int]:
        return acc

    def merge(self, a: tuple[Any, int, int], b: tuple[Any, int, int]) -> tuple[Any, int, int]:
        return (a[0] or b[0], a[1] + b[1], a[2] + b[2])


class Sessions(ProcessWindowFunction):
    """One row per session: user, start, end, clicks, revenue."""

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        clicks = list(elements)
        window = context.window()
        yield (key, _ts(window.start), _ts(window.end), len(clicks),
               sum(c.amount for c in clicks))


def _ts(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


def _spark() -> Any:
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]")
        .appName("flinkwin-demo")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    return spark


LATE = OutputTag("late-clicks")
SOURCE_SCHEMA = "user string, amount long, ts timestamp"


def pipelines(clicks: Any) -> dict[str, Any]:
    """The three window pipelines over a streaming DataFrame of clicks, by name."""
    import flinkwin as fw
    from flinkwin.watermark import WatermarkStrategy

    keyed = (
        fw.DataStream(clicks)
        .assignTimestampsAndWatermarks(
            WatermarkStrategy.forBoundedOutOfOrderness(Duration.ofSeconds(10))
            .withTimestampAssigner("ts")
        )
        .keyBy("user")
    )
    return {
        "tumbling_revenue": keyed.window(TumblingEventTimeWindows.of(Time.minutes(5)))
        .trigger(ContinuousEventTimeTrigger.of(Time.minutes(1)))
        .allowedLateness(Time.minutes(1))
        .sideOutputLateData(LATE)
        .sum("amount", with_window=True),
        "sliding_activity": keyed.window(
            SlidingEventTimeWindows.of(Time.minutes(10), Time.minutes(5))
        ).aggregate(
            ClicksAndRevenue(), output_schema="user string, clicks long, revenue long",
            with_window=True,
        ),
        "sessions": keyed.window(EventTimeSessionWindows.withGap(Time.minutes(3))).process(
            Sessions(),
            output_schema="user string, session_start timestamp, session_end timestamp, "
            "clicks long, revenue long",
        ),
    }


def read_clicks(spark: Any, source: str) -> Any:
    """The clickstream as a streaming DataFrame: one JSON file per micro-batch."""
    return spark.readStream.schema(SOURCE_SCHEMA).option("maxFilesPerTrigger", 1).json(source)


def build(spark: Any, params: dict[str, Any]) -> dict[str, Any]:
    """The demo as a job module for ``python -m flinkwin.job --module flinkwin.demo``.

    Params: ``source`` (required) the folder of click files; ``generate`` (default true)
    first writes the embedded clickstream's first ``batches`` files there (default all 6;
    files already there are kept, so a restart that raises ``batches`` adds only the new
    ones); ``pipelines`` a comma-separated subset of tumbling_revenue, sliding_activity,
    sessions (default all). Outputs: ``<pipeline>.main`` for each, and
    ``tumbling_revenue.late`` (the late clicks)."""
    from flinkwin.job import JobConfigError, Pipeline

    unknown = sorted(set(params) - {"source", "generate", "batches", "pipelines"})
    if unknown:
        raise JobConfigError(f"flinkwin.demo: unknown param(s) {unknown}")
    source = params.get("source")
    if not source:
        raise JobConfigError("flinkwin.demo needs --param source=<folder of click files>")
    generate = str(params.get("generate", "true")).lower()
    if generate not in ("true", "false"):
        raise JobConfigError(f"flinkwin.demo: generate={generate!r}, expected true or false")
    if generate == "true":
        stream = clickstream()
        try:
            count = int(params.get("batches", len(stream)))
        except ValueError:
            count = -1
        if not 0 < count <= len(stream):
            raise JobConfigError(
                f"flinkwin.demo: batches={params.get('batches')!r}, expected 1..{len(stream)}"
            )
        os.makedirs(source, exist_ok=True)
        write_source(source, stream[:count], keep_existing=True)
    built = pipelines(read_clicks(spark, source))
    chosen = [p.strip() for p in str(params.get("pipelines", ",".join(built))).split(",")]
    wrong = [p for p in chosen if p not in built]
    if wrong or not chosen:
        raise JobConfigError(f"flinkwin.demo: unknown pipeline(s) {wrong}; have {list(built)}")
    sides = {"tumbling_revenue": {"late": LATE}}
    return {name: Pipeline(built[name], sides.get(name, {})) for name in chosen}


def run(workdir: str) -> dict[str, list[Any]]:
    """Run the three pipelines over the embedded source; return each sink's rows."""
    from flinkwin.spark.sinks import FileSink, MemorySink

    spark = _spark()
    source = os.path.join(workdir, "source")
    os.makedirs(source)
    write_source(source, clickstream())
    streams = pipelines(read_clicks(spark, source))
    late_path = os.path.join(workdir, "late-clicks")
    sinks = {name: MemorySink(name) for name in streams}
    print(f"Running {len(streams)} streaming queries over {len(clickstream())} micro-batches "
          "of clicks (Spark starts in a few seconds; each batch is one line below).", flush=True)
    queries = {
        name: stream.start(
            sinks[name],
            {LATE: FileSink(late_path, format="parquet")} if name == "tumbling_revenue" else {},
            checkpoint_location=os.path.join(workdir, "checkpoints", name),
            trigger={"availableNow": True},
        )
        for name, stream in streams.items()
    }
    _follow(queries)
    results = {name: sink.rows() for name, sink in sinks.items()}
    results["late_clicks"] = spark.read.parquet(late_path).orderBy("ts").collect()
    return results


def _follow(queries: dict[str, Any]) -> None:
    """Wait for the queries, printing one line per finished micro-batch (Spark's progress)."""
    from flinkwin.spark.watermarks import progress_watermark
    from flinkwin.time import MIN_LONG

    seen: dict[str, int] = dict.fromkeys(queries, -1)
    while True:
        for name, query in queries.items():
            for progress in query.recentProgress:
                if progress["batchId"] > seen[name]:
                    seen[name] = progress["batchId"]
                    flink = progress_watermark(progress)
                    watermark = "none yet" if flink == MIN_LONG else _hm(_ts(flink))
                    print(f"  {name:<17} batch {progress['batchId']}: "
                          f"{progress['numInputRows']:>3} clicks in, watermark {watermark}",
                          flush=True)
        if not any(query.isActive for query in queries.values()):
            break
        time.sleep(0.5)
    for query in queries.values():
        query.awaitTermination()


def _hm(value: Any) -> Any:
    return value.strftime("%H:%M:%S") if isinstance(value, datetime) else value


def report(results: dict[str, list[Any]]) -> None:
    """Print what came out of each sink, the way a new user wants to see it."""
    firings: dict[tuple[str, Any], list[int]] = {}
    for row in results["tumbling_revenue"]:
        firings.setdefault((row.user, row.window_start), []).append(row.amount)
    print("\n== Tumbling 5-minute revenue per user, fired early every minute of event time")
    print("   (allowed lateness 1 min; each arrow is one emitted row, the last is final)")
    print("   The early-firing trigger has a timer per minute of event time. The watermark moves")
    print("   once per micro-batch (about four minutes of clicks), so one batch fires several")
    print("   timers at once: a run of equal values is those firings of one batch, as Flink")
    print("   would emit them if its watermark jumped the same way.")
    for (user, start), amounts in sorted(firings.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        print(f"   {_hm(start)} {user:<5} " + " -> ".join(map(str, amounts)))
    sections = [
        ("sliding_activity", "Sliding 10-minute windows every 5 minutes: clicks, revenue"),
        ("sessions", "Sessions per user (3-minute gap)"),
        ("late_clicks", "Late clicks of the tumbling pipeline, written to their own sink"),
    ]
    notes = {"late_clicks": (
        "   Late for the tumbling pipeline: past their window's end plus its 1 minute of\n"
        "   allowed lateness. The sliding and session pipelines declare no late output, so\n"
        "   Flink drops their late clicks (counted in numLateRecordsDropped).")}
    for name, title in sections:
        rows = results[name]
        print(f"\n== {title} ({len(rows)} rows)")
        if name in notes:
            print(notes[name])
        for row in rows[:12]:
            print("   " + ", ".join(f"{k}={_hm(v)}" for k, v in row.asDict().items()))
        if len(rows) > 12:
            print(f"   ... {len(rows) - 12} more")
    print("\n== Still open at the end of the input")
    print("   The source is drained but a stream has no end: windows and sessions whose end the")
    print("   last watermark has not passed stay in state, waiting for more clicks, exactly as in")
    print("   a Flink job whose source is idle (a bounded Flink job would fire them at its end).")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", help="where to keep source, sinks and checkpoints")
    args = parser.parse_args(argv)
    started = time.time()
    with tempfile.TemporaryDirectory(prefix="flinkwin-demo-") as tmp:
        workdir = args.workdir or tmp
        os.makedirs(workdir, exist_ok=True)
        results = run(workdir)
    report(results)
    print(f"\nflinkwin demo finished in {time.time() - started:.1f} s")
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    if session is not None:
        session.stop()  # its threads end before the interpreter's (Arrow's pools with them)
    return 0


if __name__ == "__main__":
    sys.exit(main())
