"""PySpark's worker daemon, unchanged, under another module name.

``bench_fixed_cost.py --only gc`` points ``spark.python.daemon.module`` here for its "full
collection" runs: flinkwin changes the per-task collection only in workers forked by
``pyspark.daemon`` itself (see ``flinkwin.spark.daemon``), so the workers of this daemon keep
PySpark's full ``gc.collect()`` after every task, as before flinkwin changed it.
"""

from pyspark.daemon import manager

if __name__ == "__main__":
    manager()
