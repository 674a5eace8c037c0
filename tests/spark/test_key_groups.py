"""Key-group labels: Spark's own hash places key group g on shuffle partition g mod P."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pyspark.sql import functions as F

from flinkwin import DataStream, TumblingProcessingTimeWindows
from flinkwin.spark.key_groups import BALANCING_MODULUS, key_group_labels, murmur3_int
from flinkwin.spark.pipeline import key_group_column


def test_murmur3_int_matches_sparks_hash(spark: Any) -> None:
    values = [0, 1, -1, 42, 123456789, -987654321, 2**31 - 1, -(2**31)]
    rows = spark.createDataFrame([(v,) for v in values], "v int").select(
        "v", F.hash("v").alias("h")
    ).collect()
    expected = {r.v: r.h for r in rows}
    ours = murmur3_int(np.array(values, dtype=np.int64)).tolist()
    assert ours == [expected[v] for v in values]


@pytest.mark.parametrize("groups", [1, 7, 16, 128])
def test_labels_are_distinct_and_hash_to_their_group(groups: int) -> None:
    labels = key_group_labels(groups)
    assert len(set(labels)) == groups
    residues = murmur3_int(np.array(labels)).astype(np.int64) % BALANCING_MODULUS
    assert residues.tolist() == [g % BALANCING_MODULUS for g in range(groups)]


def test_labels_for_more_groups_than_the_modulus_stay_distinct() -> None:
    groups = BALANCING_MODULUS + 3
    labels = key_group_labels(groups)
    assert len(set(labels)) == groups
    residues = murmur3_int(np.array(labels[-3:])).astype(np.int64) % BALANCING_MODULUS
    assert residues.tolist() == [0, 1, 2]


def test_key_group_labels_rejects_zero_groups() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        key_group_labels(0)


@pytest.mark.parametrize("partitions", [2, 4, 16, 200])
def test_spark_places_group_g_on_partition_g_mod_p(spark: Any, partitions: int) -> None:
    labels = key_group_labels(16)
    rows = spark.createDataFrame([(g, label) for g, label in enumerate(labels)], "g int, l int")
    placed = rows.select("g", F.pmod(F.hash("l"), F.lit(partitions)).alias("p")).collect()
    assert {r.g: r.p for r in placed} == {g: g % partitions for g in range(16)}


def test_key_group_column_maps_each_key_to_the_label_of_its_group(spark: Any) -> None:
    df = spark.createDataFrame([(f"user{i}", i) for i in range(50)], "user string, ts long")
    stream = (
        DataStream(df, key_groups=8)
        .keyBy("user")
        .window(TumblingProcessingTimeWindows.of(1000))
        .sum("ts")
    )
    column = key_group_column(stream._pipeline)
    rows = df.select(
        F.pmod(F.hash("user"), F.lit(8)).alias("g"), column.alias("label")
    ).collect()
    labels = key_group_labels(8)
    assert all(r.label == labels[r.g] for r in rows)
    assert len({r.g for r in rows}) == 8
