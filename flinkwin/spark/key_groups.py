"""Key groups, spread evenly over Spark's shuffle partitions.

A key belongs to key group ``g = pmod(hash(key columns), N)`` (Spark's Murmur3 ``hash``), as in
Flink a key belongs to one of ``maxParallelism`` key groups. Flink then gives each parallel
subtask a contiguous, equal range of key groups. Spark instead places a group by hashing the
grouping value again (``pmod(hash(value), spark.sql.shuffle.partitions)``); hashing the
numbers ``0 .. N-1`` spreads them unevenly (16 groups over 4 partitions land 3, 3, 4 and 6 per
partition), and a task with twice the rows of another holds up the whole micro-batch.

So the grouping value of group ``g`` is not ``g`` but a *label*: an int whose Murmur3 hash is
congruent to ``g`` modulo :data:`BALANCING_MODULUS`. Spark then sends group ``g`` to partition
``g mod P`` for every partition count ``P`` dividing the modulus (all of 1-10, 12, 14, 15, 16,
18, 20, 24, 25, 28, 30, 32, 40, 48, 50, 64, 100, 200 (Spark's default), 400, ...), i.e. round
robin, whatever ``P`` the checkpoint fixed. The labels depend on ``N`` only, so a restart with
another ``spark.sql.shuffle.partitions`` still finds every group's state.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np
from pyspark.sql import Column
from pyspark.sql import functions as F

from .timestamps import described_row, sql_name

#: Labels hash to ``g`` modulo this: 2^6 * 3^2 * 5^2 * 7.
BALANCING_MODULUS = 100_800
#: Spark's seed for ``hash(...)`` and for hash partitioning.
SPARK_HASH_SEED = 42
_CHUNK = 1 << 20


def _rotl32(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def murmur3_int(values: np.ndarray, seed: int = SPARK_HASH_SEED) -> np.ndarray:
    """Spark's ``hash(int_column)`` (``Murmur3_x86_32.hashInt``) of each value, as int32."""
    with np.errstate(over="ignore"):
        k1 = values.astype(np.int32).view(np.uint32) * np.uint32(0xCC9E2D51)
        k1 = _rotl32(k1, 15) * np.uint32(0x1B873593)
        h1 = np.uint32(seed) ^ k1
        h1 = _rotl32(h1, 13) * np.uint32(5) + np.uint32(0xE6546B64)
        h1 ^= np.uint32(4)
        h1 ^= h1 >> np.uint32(16)
        h1 *= np.uint32(0x85EBCA6B)
        h1 ^= h1 >> np.uint32(13)
        h1 *= np.uint32(0xC2B2AE35)
        h1 ^= h1 >> np.uint32(16)
    return h1.view(np.int32)


@functools.lru_cache(maxsize=16)
def key_group_labels(n: int) -> tuple[int, ...]:
    """The grouping value of each of ``n`` key groups (see module docstring): the smallest
    non-negative int whose hash is congruent to the group's index modulo the balancing modulus
    (for ``n`` above the modulus, groups ``g`` and ``g + modulus`` get successive such ints)."""
    if n < 1:
        raise ValueError(f"the number of key groups must be at least 1, got {n}")
    wanted = np.zeros(BALANCING_MODULUS, dtype=np.int64)
    counts = np.bincount(np.arange(n) % BALANCING_MODULUS, minlength=BALANCING_MODULUS)
    found: list[list[int]] = [[] for _ in range(BALANCING_MODULUS)]
    start = 0
    while (wanted < counts).any():
        candidates = np.arange(start, start + _CHUNK, dtype=np.int64)
        residues = murmur3_int(candidates).astype(np.int64) % BALANCING_MODULUS
        needed = wanted[residues] < counts[residues]
        for value, residue in zip(candidates[needed].tolist(), residues[needed].tolist()):
            if wanted[residue] < counts[residue]:
                found[residue].append(value)
                wanted[residue] += 1
        start += _CHUNK
    return tuple(found[g % BALANCING_MODULUS][g // BALANCING_MODULUS] for g in range(n))


def label_list(n: int) -> str:
    """The labels of ``n`` key groups as SQL literals, comma-separated."""
    return ", ".join(str(label) for label in key_group_labels(n))


def label_of(columns: Sequence[str], n: int) -> Column:
    """The label of the key group of a row keyed by the top-level ``columns``: group
    ``pmod(hash(columns), n)``, as one SQL text."""
    keys = ", ".join(sql_name(c) for c in columns)
    return F.expr(f"element_at(array({label_list(n)}), pmod(hash({keys}), {n}) + 1)")


def failing_on_null(
    columns: Sequence[str], row: Sequence[str], what: str, advice: str, column: Column
) -> Column:
    """``column``, failing on a row with a null in one of the key ``columns``, the row's
    ``row`` columns in the message: Flink rejects a null key ("Assigned key must not be
    null!"), Spark would group it."""
    null_key = F.expr(" OR ".join(f"{sql_name(c)} IS NULL" for c in columns))
    message = F.concat(
        F.lit(f"{what} {list(columns)}: null key in row "),
        described_row(row),
        F.lit(
            "; Flink rejects null keys (Assigned key must not be null!): filter such rows "
            f"out or replace the null (e.g. with coalesce) {advice}"
        ),
    )
    return F.when(null_key, F.raise_error(message)).otherwise(column)


__all__ = [
    "BALANCING_MODULUS",
    "failing_on_null",
    "key_group_labels",
    "label_list",
    "label_of",
    "murmur3_int",
]
