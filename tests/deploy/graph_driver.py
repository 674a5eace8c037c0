"""Runs two stream graphs with a re-keying step on the Spark given on the command line and
writes what they produced, and on which executors their stages' tasks ran, as JSON: the cluster
test runs it on ``local[2]`` and on the two-worker standalone cluster and compares.

    python graph_driver.py --master local[2] WORK OUT.json
    python graph_driver.py --master spark://127.0.0.1:7077 WORK OUT.json

The graphs (issue 31, point 4), each asked to scale out with ``set_parallelism(2)`` (a graph
runs in one task by default):

* **HotItems** (``tests/spark/hot_items_driver.py``, shipped to the executors): a sliding hour
  of page views counted per item, then ``key_by(windowEnd).process(TopNHotItems(3))``;
* **a window join keyed by a function**: two streams joined in tumbling 10 s windows on a
  ``KeySelector`` defined in this script (pickled by value, as a notebook's classes are).

Each reads JSON files one per micro-batch (``maxFilesPerTrigger=1``), out of order with late
elements, in two steps: the second step is a restarted query on the same checkpoint. Results go
to parquet (flinkwin's ``FileSink``). The stages' executors come from Spark's REST API (the
driver's UI on a free port): for every stage of more than one task (the keyed stages run one
task per state partition; the file source reads one file per micro-batch in one task), the
executor ids of its tasks.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
HOT_ITEMS = HERE.parent / "spark" / "hot_items_driver.py"
sys.path.insert(0, str(HOT_ITEMS.parent))

from batch_files import write_batches  # noqa: E402
from hot_items_driver import USER_BEHAVIOR, hot_items  # noqa: E402

from flinkwin import (  # noqa: E402
    DataStream,
    Duration,
    JoinFunction,
    KeySelector,
    Time,
    TumblingEventTimeWindows,
    WatermarkStrategy,
)
from flinkwin.spark import FileSink  # noqa: E402

SIDE = "k string, v long, ts long"
HOUR_S = 3600


class Bucket(KeySelector):
    """The join key is computed: the key column's first letter, upper-cased (``a1`` and
    ``A7`` meet)."""

    def get_key(self, value: Any) -> str:
        return str(value.k)[0].upper()


class Pair(JoinFunction):
    def join(self, first: Any, second: Any) -> Any:
        return f"{first.k}:{first.v}+{second.k}:{second.v}@{first.ts}/{second.ts}"


def behavior_steps() -> list[list[list[dict[str, Any]]]]:
    """HotItems' input: two steps of files; 40 items, views over three hours in 5-minute
    slices, each file a little out of order, plus a few late views."""
    steps: list[list[list[dict[str, Any]]]] = [[], []]
    base = 1_511_658_000  # 2017-11-26 01:00:00 UTC, as Flink's UserBehavior.csv
    for f in range(12):
        rows = []
        for j in range(60):
            item = (j * 7 + f * 3) % 40 if j % 3 else j % 5  # items 0-4 are hot
            ts = base + f * 900 + (j * 37) % 900
            behavior = "pv" if j % 11 else "cart"
            rows.append({"userId": j, "itemId": item, "categoryId": 1,
                         "behavior": behavior, "timestamp": ts})
        rows.reverse()  # out of order within the file (monotonous watermark: some are late)
        steps[0 if f < 6 else 1].append(rows)
    return steps


def join_steps() -> tuple[list[list[dict[str, Any]]], list[list[dict[str, Any]]]]:
    """The join's two inputs, one file per micro-batch each, the second half after the
    restart; keys ``a..e`` in either case, some elements late."""
    left: list[list[dict[str, Any]]] = []
    right: list[list[dict[str, Any]]] = []
    for f in range(6):
        left.append([{"k": "abcde"[(i + f) % 5] + str(i), "v": 10 * f + i,
                      "ts": f * 7000 + (i * 1300) % 9000} for i in range(8)])
        right.append([{"k": "ABCDE"[(i * 2 + f) % 5] + str(i), "v": 100 * f + i,
                       "ts": f * 7000 + (i * 1700) % 9000} for i in range(8)])
    left[4].append({"k": "a-late", "v": -1, "ts": 1000})
    right[5].append({"k": "A-late", "v": -2, "ts": 2000})
    return left, right


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def session(master: str, ui_port: int) -> Any:
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master).appName("flinkwin-graph-cluster-test")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.ui.port", str(ui_port))
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
    )
    if master.startswith("spark://"):
        builder = (builder.config("spark.executor.memory", "512m")
                   .config("spark.executor.cores", "1").config("spark.cores.max", "2"))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    spark.sparkContext.addPyFile(str(HOT_ITEMS))
    return spark


def run_hot_items(spark: Any, work: Path) -> list[str]:
    source, out = work / "behavior", work / "hot_items"
    for step, files in enumerate(behavior_steps()):
        write_batches(source, files, first=6 * step)
        df = (spark.readStream.schema(USER_BEHAVIOR).option("maxFilesPerTrigger", 1)
              .json(str(source)))
        query = hot_items(DataStream(df)).set_parallelism(2).start(
            main=FileSink(str(out)), checkpoint_location=str(work / "hot_items_ck"),
            trigger={"availableNow": True})
        query.awaitTermination()
    return sorted(str(r[0]) for r in spark.read.parquet(str(out)).collect())


def run_join(spark: Any, work: Path) -> list[str]:
    left, right = join_steps()
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_seconds(2)).with_timestamp_assigner("ts")
    out = work / "join"
    for step in range(2):
        write_batches(work / "left", left[3 * step:3 * step + 3], first=3 * step)
        write_batches(work / "right", right[3 * step:3 * step + 3], first=3 * step)
        a, b = (DataStream(spark.readStream.schema(SIDE).option("maxFilesPerTrigger", 1)
                           .json(str(work / side))).assign_timestamps_and_watermarks(strategy)
                for side in ("left", "right"))
        joined = (a.join(b).where(Bucket()).equal_to(Bucket())
                  .window(TumblingEventTimeWindows.of(Time.seconds(10)))
                  .apply(Pair(), output_type="pair string").set_parallelism(2))
        query = joined.start(main=FileSink(str(out)), checkpoint_location=str(work / "join_ck"),
                             trigger={"availableNow": True})
        query.awaitTermination()
    return sorted(str(r[0]) for r in spark.read.parquet(str(out)).collect())


def stage_executors(spark: Any, ui_port: int) -> list[list[str]]:
    """The executor ids of the tasks of every stage that had more than one task."""
    app = spark.sparkContext.applicationId
    url = f"http://127.0.0.1:{ui_port}/api/v1/applications/{app}/stages?details=true"
    with urllib.request.urlopen(url, timeout=60) as r:
        stages = json.load(r)
    return [sorted({t["executorId"] for t in s.get("tasks", {}).values()})
            for s in stages if s.get("numTasks", 0) > 1 and s.get("status") == "COMPLETE"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--master", required=True)
    parser.add_argument("work", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    ui_port = free_port()
    spark = session(args.master, ui_port)
    work = args.work.resolve()
    result = {
        "hot_items": run_hot_items(spark, work),
        "join": run_join(spark, work),
        "stage_executors": stage_executors(spark, ui_port),
    }
    args.out.write_text(json.dumps(result, sort_keys=True, indent=1))
    spark.stop()


if __name__ == "__main__":
    main()
