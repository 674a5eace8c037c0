"""PySpark's worker daemon, unchanged, under another module name, timing its collections.

``bench_fixed_cost.py --only gc`` points ``spark.python.daemon.module`` here for its "full
collection" runs: flinkwin changes the per-task collection only in workers forked by
``pyspark.daemon`` itself (see ``flinkwin.spark.daemon``), so the workers of this daemon keep
PySpark's full ``gc.collect()`` after every task, as before flinkwin changed it. When
``FW_BENCH_GC_LOG`` names a file, each worker appends one line per task to it: the
milliseconds a young-generation collection (``gc.collect(1)``, what flinkwin's workers run)
took, then the full collection PySpark runs.
"""

import gc
import os
import time
from types import SimpleNamespace

from pyspark import daemon


def _timed_collections() -> int:
    begin = time.perf_counter()
    gc.collect(1)
    young = time.perf_counter()
    collected = gc.collect()
    full = time.perf_counter()
    log = os.environ.get("FW_BENCH_GC_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"{(young - begin) * 1000:.3f} {(full - young) * 1000:.3f}\n")
    return collected


if __name__ == "__main__":
    daemon.gc = SimpleNamespace(collect=_timed_collections)  # type: ignore[assignment]
    daemon.manager()
