"""Probe: a window stage's time per micro-batch as its key groups grow (Flink's max parallelism;
``key_groups=n`` or ``set_max_parallelism(n)``), one row per micro-batch, local[2].

Above ``flinkwin.spark.metrics.HEARTBEAT_LIMIT`` key groups a stage sends no heartbeats (see
docs/metrics.md); before that change every key group was called in every micro-batch with input.
Prints, per ``n``, the whole run and each micro-batch's ``triggerExecution`` (the first includes
the workers' start).

    PYTHONPATH=<tree> .venv/bin/python bench/probes/probe_many_key_groups.py 16 4096 32768
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

from pyspark.sql import SparkSession  # noqa: E402


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [16, 4096]
    spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    from flinkwin import Duration, Time, TumblingEventTimeWindows, WatermarkStrategy
    from flinkwin.datastream import DataStream
    from flinkwin.spark import MemorySink

    for n in sizes:
        root = Path(tempfile.mkdtemp())
        (root / "in").mkdir()
        for i, ts in enumerate((1, 500, 900)):
            (root / "in" / f"f{i}.json").write_text(json.dumps({"k": 1, "v": 1, "ts": ts}))
        df = (spark.readStream.schema("k long, v long, ts long").option("maxFilesPerTrigger", 1)
              .json(str(root / "in")))
        strategy = WatermarkStrategy.for_bounded_out_of_orderness(
            Duration.of_millis(0)).with_timestamp_assigner("ts")
        result = (DataStream(df, key_groups=n).assign_timestamps_and_watermarks(strategy)
                  .key_by("k").window(TumblingEventTimeWindows.of(Time.milliseconds(100)))
                  .sum("v"))
        start = time.perf_counter()
        query = result.start(main=MemorySink(f"kg{n}"), checkpoint_location=str(root / "ck"),
                             trigger={"availableNow": True})
        query.awaitTermination()
        batches = [p["durationMs"]["triggerExecution"] for p in query.recentProgress]
        print(json.dumps({"key_groups": n, "seconds": round(time.perf_counter() - start, 1),
                          "trigger_ms": batches, "load": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
