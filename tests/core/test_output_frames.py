"""The stage's output frame, built without pandas' slow paths, is exactly what the slow paths
gave: ``arrow_to_pandas`` builds integer, boolean, float, string and UTC/naive timestamp columns
from their Arrow values and null masks (the other columns take Arrow's own conversion), and
``drain_frames_timed`` takes a state's fired rows without its bookkeeping columns."""

from __future__ import annotations

import collections
import datetime
from typing import Any

import numpy as np
import pandas as pd
import pandas.testing as pdt
import pyarrow as pa
import pytest

from flinkwin.operator.frames import drain_frames, drain_frames_timed
from flinkwin.spark.row_encoder import (
    RowEncoder,
    SchemaMismatchError,
    _arrow_to_pandas,
    arrow_to_pandas,
)

UTC = datetime.timezone.utc
BIG = 2**63 - 1
STAMPS = [
    datetime.datetime(2024, 1, 1, 12, 30, 0, 123456, tzinfo=UTC), None,
    datetime.datetime(1, 1, 1, tzinfo=UTC), datetime.datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC),
]


def _table() -> pa.Table:
    return pa.table({
        "i8": pa.array([1, None, -128, 127], pa.int8()),
        "i16": pa.array([1, 2, 3, 4], pa.int16()),
        "i32": pa.array([None, None, None, None], pa.int32()),
        "i64": pa.array([BIG, -BIG - 1, None, 0], pa.int64()),
        "flag": pa.array([True, None, False, True]),
        "f64": pa.array([float("nan"), None, 1.5, -0.0]),
        "f32": pa.array([1.5, None, float("inf"), 2.0], pa.float32()),
        "text": pa.array(["a", None, "", "ü"]),
        "utc": pa.array(STAMPS, pa.timestamp("us", tz="UTC")),
        "naive": pa.array([None, datetime.datetime(2024, 1, 1), datetime.datetime(1, 1, 1),
                           datetime.datetime(9999, 1, 1)], pa.timestamp("us")),
        "offset": pa.array(STAMPS, pa.timestamp("us", tz="+01:00")),
        "day": pa.array([datetime.date(2024, 1, 1), None, datetime.date(1, 1, 1), None]),
        "raw": pa.array([b"x", None, b"", b"y"]),
        "nested": pa.array([[1.0, None], None, [], [2.5]]),
        "dec": pa.array([1, None, 2, 3], pa.decimal128(10, 2)),
        "u64": pa.array([2**64 - 1, None, 0, 1], pa.uint64()),
    })


def _assert_same(table: pa.Table) -> None:
    fast, arrow = arrow_to_pandas(table), _arrow_to_pandas(table)
    pdt.assert_frame_equal(fast, arrow, check_exact=True)
    assert isinstance(fast.index, pd.RangeIndex)
    for name in fast.columns:
        assert fast[name].dtype == arrow[name].dtype, name
        if isinstance(fast[name].dtype, pd.DatetimeTZDtype):
            assert fast[name].dtype.tz is arrow[name].dtype.tz, name  # the same tz object
        assert fast[name].isna().tolist() == arrow[name].isna().tolist(), name
        if fast[name].dtype == object:
            assert [type(v) for v in fast[name]] == [type(v) for v in arrow[name]], name
        if fast[name].dtype.kind == "f":  # NaN is not null
            assert np.isnan(fast[name].to_numpy(dtype=float, na_value=0.0)).tolist() == (
                np.isnan(arrow[name].to_numpy(dtype=float, na_value=0.0)).tolist()
            )


def test_arrow_to_pandas_equals_arrows_own_conversion_for_every_type() -> None:
    table = _table()
    _assert_same(table)
    for i in range(table.num_columns):
        _assert_same(table.select([i]))


@pytest.mark.parametrize("part", ["empty", "schema_only", "slice", "chunked"])
def test_arrow_to_pandas_equals_arrows_own_conversion_on_empty_sliced_and_chunked_tables(
    part: str,
) -> None:
    table = _table()
    tables = {
        "empty": table.slice(0, 0), "schema_only": table.schema.empty_table(),
        "slice": table.slice(1, 2), "chunked": pa.concat_tables([table, table.slice(1, 2)]),
    }
    _assert_same(tables[part])


def test_arrow_to_pandas_columns_are_writable() -> None:
    """The stage writes the snapshot size into the metrics row of its output frame."""
    frame = arrow_to_pandas(pa.table({"n": pa.array([None, 5], pa.int64())}))
    frame.iat[1, 0] = 7
    assert frame["n"].tolist() == [pd.NA, 7]


def _parts() -> list[pd.DataFrame]:
    first = pd.DataFrame({
        "user": ["a", "b"], "amount": np.array([1, 2], dtype=np.int64),
        "n": pd.array([None, 3], dtype="Int64"),
        "_start": np.array([0, 10], dtype=np.int64), "_end": np.array([10, 20], dtype=np.int64),
        "_seq": np.array([5, 4], dtype=np.int64),
    }, index=[7, 3])
    second = first.iloc[[1]].assign(user="c", _end=np.int64(MAX_END))
    return [first, second]


MAX_END = 2**63 - 1


@pytest.mark.parametrize("count", [1, 2])
def test_drain_frames_timed_gives_the_rows_without_the_bookkeeping_and_their_timestamps(
    count: int,
) -> None:
    parts = _parts()[:count]
    whole = pd.concat(parts, ignore_index=True)
    expected = whole.drop(columns=["_start", "_seq", "_end"]).reset_index(drop=True)
    frame, stamps = drain_frames_timed(list(parts), ("_start", "_seq"), "_end")
    assert frame is not None
    pdt.assert_frame_equal(frame, expected, check_exact=True)
    assert stamps.dtype == np.int64
    assert stamps.tolist() == [e - 1 for e in whole["_end"].tolist()]
    untimed = drain_frames(list(parts), ("_start", "_seq"))
    pdt.assert_frame_equal(
        untimed, whole.drop(columns=["_start", "_seq"]).reset_index(drop=True), check_exact=True
    )


def test_drain_frames_timed_clears_the_parts_and_gives_none_without_rows() -> None:
    parts = _parts()
    drain_frames_timed(parts, (), "_end")
    assert parts == []
    frame, stamps = drain_frames_timed(parts, (), "_end")
    assert frame is None and stamps.dtype == np.int64 and not len(stamps)


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
@pytest.mark.parametrize("zone", [None, "UTC"])
def test_arrow_to_pandas_keeps_each_timestamp_unit_as_arrows_conversion(
    unit: str, zone: str | None,
) -> None:
    stamps = [datetime.datetime(2024, 1, 1, 12, tzinfo=UTC), None]
    if zone is None:
        stamps = [s and s.replace(tzinfo=None) for s in stamps]
    _assert_same(pa.table({"t": pa.array(stamps, pa.timestamp(unit, tz=zone))}))


def _encoder(fields: str) -> RowEncoder:
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    types = {"string": StringType(), "long": LongType()}
    schema = StructType([
        StructField(name, types[kind]) for name, kind in (f.split() for f in fields.split(", "))
    ])
    return RowEncoder(schema, "UTC", "output")


def test_plain_tuple_outputs_encode_as_each_value_does_alone() -> None:
    """A batch of plain tuples of the schema's width is taken as its rows (what ``to_row``
    makes of each); a batch mixing tuples with other values, and tuple subclasses, go value by
    value: the arrays are equal either way."""
    encoder = _encoder("user string, amount long, n long")
    Named = collections.namedtuple("Named", ["user", "amount", "n"])
    batches = [
        [("a", 1, 2), ("b", None, 3)],
        [("a", 1, 2), Named("b", 5, 6), {"user": "c", "amount": 7, "n": 8}],
        [Named("b", 5, 6)],
    ]
    for values in batches:
        one_by_one = [encoder.arrays([v]) for v in values]
        together = encoder.arrays(values)
        for i, array in enumerate(together):
            assert array.to_pylist() == [a[i].to_pylist()[0] for a in one_by_one]


@pytest.mark.parametrize("values", [[("a", 1)], [("a", 1, 2), ("b", 1, 2, 3)]])
def test_a_tuple_of_another_width_fails_naming_it(values: list[Any]) -> None:
    with pytest.raises(SchemaMismatchError, match=r"has 3 field\(s\) but the output"):
        _encoder("user string, amount long, n long").arrays(values)


@pytest.mark.parametrize("bad", [1.5, float("nan"), np.float64(2.5)])
def test_a_fractional_float_in_an_integer_field_fails(bad: Any) -> None:
    """Integer fields refuse floats with a fractional part and NaN (numpy's floats too),
    whether the outputs are scalars or tuples; whole floats are taken."""
    for encoder, values in (
        (_encoder("amount long"), [1, 2, bad]),
        (_encoder("user string, amount long"), [("a", 1), ("b", bad)]),
    ):
        with pytest.raises(SchemaMismatchError, match="truncated|NaN is not an integer"):
            encoder.arrays(values)
    assert _encoder("amount long").arrays([1, 2.0])[0].to_pylist() == [1, 2]
