"""The stage's metrics (``docs/metrics.md``): the heartbeat rows that make Spark call every
key group in every micro-batch with input, so the state sizes are totals, and the observed
aggregation of the metrics rows each call returns."""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from .arrival import ARRIVAL_COLUMN, FIRST_IN_PARTITION
from .key_groups import label_list
from .outputs import METRIC_COLUMNS, METRICS, STATE_METRICS
from .runtime import HEARTBEAT_SEQUENCE, KEY_GROUP_COLUMN
from .timestamps import quoted, sql_name

_KG = KEY_GROUP_COLUMN
#: The position of a row among its copies (0: the row itself), dropped before the shuffle.
_COPY = "_fw_copy"


#: The most key groups that get heartbeats: each costs a Python call of the stage in every
#: micro-batch with input (about 1-4 ms on a 2-core machine), so beyond this a stage publishes
#: no state totals instead (docs/metrics.md); Flink's default max parallelism is 128.
HEARTBEAT_LIMIT = 256


def sends_heartbeats(key_groups: int) -> bool:
    """Whether a keyed stage of ``key_groups`` key groups sends heartbeats for its metrics."""
    return 1 < key_groups <= HEARTBEAT_LIMIT


def with_heartbeats(df: DataFrame, key_groups: int) -> DataFrame:
    """``df`` plus, after the first row of each input partition, one heartbeat row (a copy of
    it with arrival sequence ``HEARTBEAT_SEQUENCE``) for every key group: Spark then calls every
    key group in every micro-batch with input, and each reports the totals it holds (see
    ``docs/metrics.md``). ``df`` carries the rows' arrival sequence
    (:mod:`flinkwin.spark.arrival`), which tells the first rows in the JVM; marking the copies
    there sends no extra column through the shuffle."""
    # the labels as one constant array (a reference in generated code, however many), not
    # elements of the row's array: that code outgrows Java's 64 KB method limit at a few
    # thousand key groups, and Spark then interprets the expression
    groups = F.expr(
        f"CASE WHEN {FIRST_IN_PARTITION} THEN concat(array({sql_name(_KG)}), "
        f"array({label_list(key_groups)})) ELSE array({sql_name(_KG)}) END"
    )
    columns = [quoted(c) for c in df.columns if c != _KG]
    copy = F.col(_COPY)
    return (
        df.select(*columns, F.posexplode(groups).alias(_COPY, _KG))
        .withColumn(
            ARRIVAL_COLUMN,
            F.when(copy == 0, F.col(ARRIVAL_COLUMN)).otherwise(F.lit(HEARTBEAT_SEQUENCE)),
        )
        .drop(_COPY)
    )


def metric_aggregates(totals: bool = True) -> list[Column]:
    """The observed metrics: sums of the calls' metrics rows. The state totals stay null in
    a batch in which Spark called no key group (the stage's state did not change then), and
    in every batch without ``totals`` (a stage whose key groups get no heartbeats, so that
    Spark calls only some of them)."""
    return [
        F.expr(
            (f"sum({sql_name(c)})" if totals else "CAST(NULL AS BIGINT)")
            + f" AS {sql_name(n)}"
        ) if n in STATE_METRICS
        else F.expr(f"coalesce(sum({sql_name(c)}), 0) AS {sql_name(n)}")
        for n, c in zip(METRICS, METRIC_COLUMNS)
    ]


_OBSERVED = re.compile(r"CollectMetrics flinkwin(?:_(\d+))?,")


def observed_metrics_name(df: DataFrame) -> str:
    """The name of the stage's observed metrics: ``flinkwin``, or ``flinkwin_<n>`` for the
    ``n``-th window stage of one query (Spark rejects two observations of one name)."""
    try:
        plan = str(df._jdf.queryExecution().logical().toString())
    except Exception:  # noqa: BLE001 (no JVM plan to read, e.g. Spark Connect)
        return "flinkwin"
    stages = _OBSERVED.findall(plan)
    if not stages:
        return "flinkwin"
    return f"flinkwin_{max(int(n) if n else 1 for n in stages) + 1}"


__all__ = [
    "HEARTBEAT_LIMIT",
    "metric_aggregates",
    "observed_metrics_name",
    "sends_heartbeats",
    "with_heartbeats",
]
