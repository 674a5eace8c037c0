"""Arrival order: the order in which a key's elements reach the window in Flink's STREAMING mode.

A Spark source has no single order; flinkwin defines a micro-batch's (or a static DataFrame's)
arrival order as **the rows of each input partition in their order there, partitions in index
order**, and successive micro-batches in batch order. Every row gets its *arrival sequence*
before the window's shuffle, in column ``_fw_seq``: ``partition index << 33 | position in the
partition``, the value ``monotonically_increasing_id()`` gives a static DataFrame. The window
stage sorts each key group's rows by it (Spark's shuffle keeps no order), so a window function
sees a key's elements in this order, whatever the micro-batch boundaries.

"Input partition" means the partitions of the DataFrame handed to ``DataStream``: for a file
source, Spark's file splits (each file in order; several small files of one micro-batch may share
a partition); for Kafka, an offset range of one topic partition. Elements of different
partitions of one micro-batch interleave in Flink too (parallel source subtasks); flinkwin picks
partition index order.

Static input uses ``monotonically_increasing_id()`` itself. Spark refuses it in streaming
queries, so a stream computes the same value in a Python pass before the shuffle: in the
``mapInArrow`` stage of key selectors and timestamp assigners when there is one
(:mod:`flinkwin.spark.elements`), else in one pandas UDF of ``spark_partition_id()`` that counts
each partition's rows (:func:`with_arrival_sequence`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import LongType

from .timestamps import sql_name

#: The column holding each row's arrival sequence.
ARRIVAL_COLUMN = "_fw_seq"
#: Bits of the position within a partition (as in ``monotonically_increasing_id``).
POSITION_BITS = 33


def sequence(partition: int, start: int, count: int) -> np.ndarray:
    """The arrival sequence of ``count`` rows of ``partition`` from position ``start`` on."""
    base = (partition << POSITION_BITS) + start
    return np.arange(base, base + count, dtype=np.int64)


def _partition_sequence(partitions: Iterator[pd.Series]) -> Iterator[pd.Series]:
    """Per Arrow batch of one partition (its ``spark_partition_id()`` values): the rows'
    arrival sequence, counting positions across the partition's batches."""
    position = 0
    for ids in partitions:
        count = len(ids)
        partition = int(ids.iloc[0]) if count else 0
        yield pd.Series(sequence(partition, position, count))
        position += count


def with_arrival_sequence(df: DataFrame) -> DataFrame:
    """``df`` with its rows' arrival sequence in ``_fw_seq`` (see module docstring)."""
    if not df.isStreaming:
        return df.withColumn(ARRIVAL_COLUMN, F.monotonically_increasing_id())
    udf = F.pandas_udf(_partition_sequence, LongType())  # type: ignore[call-overload]
    return df.withColumn(ARRIVAL_COLUMN, udf.asNondeterministic()(F.spark_partition_id()))


#: True on the first row of each input partition (by its arrival sequence), as SQL text.
FIRST_IN_PARTITION = f"{sql_name(ARRIVAL_COLUMN)} % {1 << POSITION_BITS} = 0"


__all__ = [
    "ARRIVAL_COLUMN",
    "FIRST_IN_PARTITION",
    "POSITION_BITS",
    "sequence",
    "with_arrival_sequence",
]
