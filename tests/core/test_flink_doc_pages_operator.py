"""Operator-level checks from porting Flink's DataStream documentation pages (the pages
themselves run end to end in ``tests/spark/test_flink_doc_pages.py``): the values a declared
``Types.SQL_TIMESTAMP()`` field hands to user functions, and the physical partitioning calls
of the Operators page."""

from __future__ import annotations

import datetime
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql.types import StringType, StructField, StructType, TimestampType

from flinkwin.common import Types
from flinkwin.datastream.operator_hints import OperatorHints
from flinkwin.errors import UnsupportedOperationError
from flinkwin.operator.element_rows import _records
from flinkwin.spark.nested import element_converters
from flinkwin.spark.row_encoder import RowEncoder
from flinkwin.spark.schema import _mark_pickled, value_schema


def test_a_declared_sql_timestamp_is_the_naive_utc_wall_clock_time() -> None:
    """Process Function page, Python tab: its ``MyTimestampAssigner`` computes ``value[0] -
    datetime.utcfromtimestamp(0)`` on a ``Types.SQL_TIMESTAMP()`` field. PyFlink's
    ``TimestampCoderImpl.internal_to_timestamp`` decodes one with
    ``datetime.utcfromtimestamp``: naive, UTC. Spark hands a ``timestamp`` column over as an
    instant (zoned, UTC); before, the element kept the zone and the subtraction failed
    (``can't subtract offset-naive and offset-aware datetimes``)."""
    schema = StructType([StructField("f0", TimestampType()), StructField("f1", StringType())])
    frame = pd.DataFrame({
        "f0": pd.to_datetime([90_000, 1_500], unit="ms", utc=True),
        "f1": ["a", "b"],
    })
    declared = Types.ROW([Types.SQL_TIMESTAMP(), Types.STRING()])
    rows = _records(frame, converters=element_converters(schema, declared))
    epoch = datetime.datetime.utcfromtimestamp(0)
    assert [r[0] - epoch for r in rows] == [
        datetime.timedelta(seconds=90), datetime.timedelta(milliseconds=1500)]
    assert all(r[0].tzinfo is None for r in rows)
    # without a declared type the column's value stays Spark's instant (zoned, UTC)
    plain = _records(frame, converters=element_converters(schema, None))
    assert plain[0][0] == datetime.datetime(1970, 1, 1, 0, 1, 30, tzinfo=datetime.timezone.utc)


@pytest.mark.parametrize("zone", ["UTC", "America/New_York"])
def test_a_declared_sql_timestamp_output_reads_naive_datetimes_as_utc(zone: str) -> None:
    """The other half: PyFlink's ``TimestampCoderImpl.timestamp_to_internal`` encodes a naive
    datetime as UTC (``replace(tzinfo=utc)``), so a value handed over as naive UTC (above)
    comes back as the same instant through a function's ``output_type`` declaring
    ``Types.SQL_TIMESTAMP()``, whatever the Spark session's time zone; a field declared by a
    DDL string keeps Spark's rule (a naive datetime is wall time in the session zone)."""
    naive = datetime.datetime(1970, 1, 1, 0, 1, 30)
    # what parse_schema makes of Types.ROW([SQL_TIMESTAMP, STRING]) and of SQL_TIMESTAMP()
    # (its DDL parsing needs a SparkContext; the marking is what matters here)
    row = _mark_pickled(StructType([StructField("f0", TimestampType()),
                                    StructField("f1", StringType())]),
                        [Types.SQL_TIMESTAMP(), Types.STRING()])
    whole = _mark_pickled(value_schema(StructType([StructField("value", TimestampType())])),
                          [Types.SQL_TIMESTAMP()])
    for schema, value in ((row, (naive, "a")), (whole, naive)):
        [column, *_] = RowEncoder(schema, zone, "map output").arrays([value])
        assert column.cast(pa.int64()).to_pylist() == [90_000_000]  # microseconds, UTC
    ddl = RowEncoder(StructType([StructField("f0", TimestampType())]), zone, "map output")
    shift = 0 if zone == "UTC" else 5 * 3600 * 1_000_000  # New York in January: UTC-5
    assert ddl.arrays([(naive,)])[0].cast(pa.int64()).to_pylist() == [90_000_000 + shift]


class Hinted(OperatorHints):
    def __init__(self) -> None:
        self._hints: dict[str, Any] = {}


@pytest.mark.parametrize("call", ["rebalance", "shuffle", "rescale", "forward", "global_"])
def test_physical_partitioning_is_recorded_and_returns_the_stream(call: str) -> None:
    """Operators page, Physical Partitioning (its Python tab): ``data_stream.shuffle()``,
    ``rebalance()``, ``rescale()`` (and Java's ``forward()``, ``global()``) choose only which
    parallel instance gets an element; flinkwin's operators keep no per-instance state, so
    the results are the same. Before, each fell through to the DataFrame (``'DataFrame'
    object has no attribute 'rebalance'``)."""
    stream = Hinted()
    assert getattr(stream, call)() is stream
    assert stream._hints["partitioning"] == call.rstrip("_")


def test_custom_partitioning_and_iterations_are_refused_naming_them() -> None:
    """Operators page: ``partition_custom(partitioner, key_selector)`` (its Python tab) and
    ``iterate()`` (Java only) are refused with an error naming them, not an
    ``AttributeError`` of the DataFrame."""
    partition = 3
    with pytest.raises(UnsupportedOperationError, match=r"partition_custom\(\)"):
        Hinted().partition_custom(lambda key, num_partition: key % partition, lambda x: x[0])
    with pytest.raises(UnsupportedOperationError, match=r"iterate\(\): iterations"):
        Hinted().iterate()
