"""Probe (issue 32, points 1, 2 and 4): on classic PySpark and on Spark Connect (a local Connect
server, ``SparkSession.builder.remote("local[2]")``), which ways of sizing a stream's stateful
stage hold when the USER starts the query with Spark's own ``df.writeStream...start()``:

* ``around``: the session's spark.sql.shuffle.partitions set just around start() (what flinkwin's
  own start() does), restored right after;
* ``listener``: a StreamingQueryListener that sets it in onQueryStarted;
* ``sized``: the DataFrame handed to the user is an instance of a subclass of its own class
  whose ``writeStream`` returns the same writer with ``start``/``toTable`` doing ``around``;
  also what is left of it after a transformation (``sized.select(...)``).

Each case prints the stateful operator's numShufflePartitions and the session's value after.

    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/probe_connect_and_sized_df.py classic
    PYTHONPATH=$PWD /work/main/.venv/bin/python bench/probes/probe_connect_and_sized_df.py connect
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

import pandas as pd  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql.streaming import StreamingQueryListener  # noqa: E402
from pyspark.sql.streaming.state import GroupStateTimeout  # noqa: E402

SP = "spark.sql.shuffle.partitions"


def count(key, frames, state):
    n = sum(len(f) for f in frames)
    yield pd.DataFrame({"k": [key[0]], "n": [n]})


_SIZED: dict[type, type] = {}


def sized(df, partitions: int):
    """``df`` as an instance of a subclass of its class whose writeStream sizes the query's
    state partitions at start (probe-only sketch of the idea)."""
    base = type(df)
    if base not in _SIZED:
        class SizedDataFrame(base):  # type: ignore[misc, valid-type]
            @property
            def writeStream(self):  # noqa: N802
                writer = super().writeStream
                writer.__class__ = _sized_writer(type(writer))
                writer._fw_partitions = self._fw_partitions
                return writer
        _SIZED[base] = SizedDataFrame
    out = object.__new__(_SIZED[base])
    out.__dict__.update(df.__dict__)
    out._fw_partitions = partitions
    return out


_WRITERS: dict[type, type] = {}


def _sized_writer(base: type) -> type:
    if base not in _WRITERS:
        class SizedWriter(base):  # type: ignore[misc, valid-type]
            def _around(self, method, *args, **kwargs):
                session = self._spark if hasattr(self, "_spark") else self._session
                before = session.conf.get(SP)
                session.conf.set(SP, str(self._fw_partitions))
                try:
                    return method(self, *args, **kwargs)
                finally:
                    session.conf.set(SP, before)

            def start(self, *args, **kwargs):
                return self._around(base.start, *args, **kwargs)

            def toTable(self, *args, **kwargs):  # noqa: N802
                return self._around(base.toTable, *args, **kwargs)
        _WRITERS[base] = SizedWriter
    return _WRITERS[base]


def main() -> None:
    mode = sys.argv[1]
    builder = SparkSession.builder.config("spark.ui.showConsoleProgress", "false")
    if mode == "connect":
        spark = builder.remote("local[2]").getOrCreate()
    else:
        spark = builder.master("local[2]").config("spark.ui.enabled", "false").getOrCreate()
    print("session class", type(spark).__module__)
    root = tempfile.mkdtemp(prefix="probe_connect_")
    data = os.path.join(root, "data")
    for i in range(2):
        spark.createDataFrame(pd.DataFrame({"k": range(20), "v": [i] * 20})) \
            .coalesce(1).write.mode("append").parquet(data)
    n = iter(range(100))

    def stage():
        return (spark.readStream.schema("k long, v long").option("maxFilesPerTrigger", 1)
                .parquet(data).groupBy("k").applyInPandasWithState(
                    count, "k long, n long", "n long", "append", GroupStateTimeout.NoTimeout))

    def go(df, label, before=None, after=None):
        w = (df.writeStream.format("noop").trigger(availableNow=True)
             .option("checkpointLocation", os.path.join(root, f"c{next(n)}")))
        if before:
            before()
        t0 = time.monotonic()
        q = w.start()
        took = time.monotonic() - t0
        if after:
            after()
        q.awaitTermination()
        ops = q.lastProgress["stateOperators"]
        print(f"{mode:7s} {label:34s} -> state partitions {ops[0]['numShufflePartitions']}; "
              f"session after: {spark.conf.get(SP)}; start() took {took:.2f}s", flush=True)

    spark.conf.set(SP, "200")
    go(stage(), "session 200")
    go(stage(), "around start() (4)",
       before=lambda: spark.conf.set(SP, "4"), after=lambda: spark.conf.set(SP, "200"))

    class Sizer(StreamingQueryListener):
        def onQueryStarted(self, event):
            spark.conf.set(SP, "4")
            time.sleep(2)

        def onQueryProgress(self, event):
            pass

        def onQueryIdle(self, event):
            pass

        def onQueryTerminated(self, event):
            pass

    sizer = Sizer()
    spark.streams.addListener(sizer)
    go(stage(), "listener onQueryStarted sets 4")
    spark.streams.removeListener(sizer)
    time.sleep(3)
    spark.conf.set(SP, "200")

    df = sized(stage(), 4)
    go(df, "sized DataFrame (4)")
    go(df.select("k", "n"), "sized DataFrame .select(...) (4)")
    spark.stop()


if __name__ == "__main__":
    main()
