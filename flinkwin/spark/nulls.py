"""Nullable numeric columns travel to the window stage's workers exactly.

PySpark hands a stage's rows to pandas with one numpy array per column: an integer column that
holds a null in the chunk becomes float64 (a ``bigint`` above 2^53 is rounded) and a null in a
float column becomes NaN (indistinguishable from a NaN value). So before the shuffle every
nullable integral, ``float``, ``double`` and day-time interval input column travels with its
nulls in a separate bit mask (``_fw_null<j>``: bit ``i`` set when the ``i``-th such column of
the row is null; 62 columns per mask column), and integral columns (intervals: their
microseconds, :mod:`flinkwin.spark.timestamps`) with their nulls replaced by 0, so they arrive
as int64. The workers put the nulls back (:func:`restore_nulls`): a column with a null in the
batch becomes Python ints (or floats, NaN kept) and None; one without keeps its numpy dtype. The key
group is computed before, on Spark's own values.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DayTimeIntervalType,
    DoubleType,
    FloatType,
    IntegralType,
    StructType,
)

from flinkwin.operator.frames import float_objects

from .timestamps import quoted

MASK_PREFIX = "_fw_null"
#: the masked column types whose nulls travel as 0
_ZEROED = (IntegralType, DayTimeIntervalType)
_BITS = 62


@dataclass(frozen=True)
class NullMask:
    """Where a column's nulls travel: bit ``bit`` of mask column ``mask``."""

    column: str
    mask: str
    bit: int


def plan(schema: StructType) -> tuple[NullMask, ...]:
    """The masked columns of ``schema``: its nullable integral, float, double and day-time
    interval (microseconds on the wire, flinkwin.spark.timestamps) columns."""
    names = [
        f.name for f in schema.fields
        if f.nullable and isinstance(f.dataType, (*_ZEROED, FloatType, DoubleType))
    ]
    return tuple(
        NullMask(name, f"{MASK_PREFIX}{i // _BITS}", i % _BITS) for i, name in enumerate(names)
    )


def to_wire(df: DataFrame, masks: tuple[NullMask, ...], schema: StructType) -> DataFrame:
    """``df`` with the mask columns added and the masked integral columns' nulls set to 0."""
    terms: dict[str, list[Column]] = {}
    for m in masks:
        bit = F.when(quoted(m.column).isNull(), F.lit(1 << m.bit)).otherwise(F.lit(0))
        terms.setdefault(m.mask, []).append(bit.cast("bigint"))
    columns: dict[str, Column] = {}
    for mask, bits in terms.items():
        columns[mask] = functools.reduce(lambda a, b: a.bitwiseOR(b), bits)
    for m in masks:
        dtype = schema[m.column].dataType
        if isinstance(dtype, IntegralType):
            columns[m.column] = F.coalesce(quoted(m.column), F.lit(0).cast(dtype))
        elif isinstance(dtype, DayTimeIntervalType):  # bigint microseconds by now
            columns[m.column] = F.coalesce(quoted(m.column), F.lit(0).cast("bigint"))
    return df.withColumns(columns) if columns else df


def restore_nulls(
    values: np.ndarray, mask: NullMask, read_mask: Callable[[str], np.ndarray]
) -> np.ndarray:
    """A shipped column with its nulls back (see module docstring); ``read_mask`` returns a
    mask column's values for the same rows."""
    nulls = (read_mask(mask.mask).astype(np.int64, copy=False) >> mask.bit) & 1
    if not nulls.any():
        return values
    if values.dtype.kind == "f":
        return float_objects(values, nulls.astype(bool))
    out = values.astype(object)
    out[nulls.astype(bool)] = None
    return out


__all__ = ["MASK_PREFIX", "NullMask", "plan", "restore_nulls", "to_wire"]
