"""The window operator's batch path (flinkwin.operator.vectorized) against its
element-by-element path."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from flinkwin import Time, TumblingEventTimeWindows
from flinkwin.operator import WindowOperator


def test_a_window_function_gets_the_key_of_the_shaped_element() -> None:
    """A key column with an element converter (a nested, pickled or BIG_INT column): the
    batch path hands the window function the key of the converted element, as the
    element-by-element path does, not the column's raw value."""
    from flinkwin import ProcessWindowFunction
    from flinkwin.operator.element_rows import op_records

    class KeyAndElements(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            yield (key, [tuple(e) for e in elements])

    frame = pd.DataFrame({"k": ["a", "b", "a"], "v": np.arange(3, dtype=np.int64)})
    ts = np.array([1, 2, 3], dtype=np.int64)
    outputs = []
    for by_batch in (True, False):
        op = WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), KeyAndElements(),
                            key_selector="k", element_converters={"k": str.upper})
        if by_batch:
            op.process_batch(frame, ts)
        else:
            for record, t in zip(op_records(op, frame), ts.tolist()):
                op.process_element(record, t)
        op.advance_watermark(100)
        outputs.append([v for v, _ in op.drain_output()])
    assert outputs[0] == outputs[1] == [("A", [("A", 0), ("A", 2)]), ("B", [("B", 1)])]


def _pandas_datetimes(array: Any) -> list[Any]:
    return list(array.to_pydatetime())


def test_timestamp_columns_become_the_datetimes_pandas_builds() -> None:
    """``column_values`` builds a timestamp column's datetimes itself where it can: the result
    equals pandas' ``to_pydatetime`` object for object (type, ``tzinfo`` object, ``fold``),
    for every unit, with and without a zone, across the epoch, with nulls, sub-microsecond
    values and years datetime cannot hold (pandas' own answer or error), except that a null
    is None, as in a ``pyspark.sql.Row``, where pandas gives ``NaT`` (``NaT is None`` is
    False: a user's ``if row.t is None`` would take a null for a value)."""
    import warnings

    from flinkwin.operator.element_rows import column_values

    micros = np.array([0, 1, -1, 1_704_067_200_123_456, -62_135_596_800_000_000,
                       253_402_300_799_999_999, 86_399_999_999], dtype=np.int64)
    cases: list[pd.Series] = []
    for unit, per in (("s", 1_000_000), ("ms", 1_000), ("us", 1)):
        values = (micros // per).astype(f"datetime64[{unit}]")
        cases.append(pd.Series(values))
    nanos = micros[1:4] * 1000
    cases.append(pd.Series(nanos.astype("datetime64[ns]")))
    cases.append(pd.Series((nanos + 7).astype("datetime64[ns]")))  # nanoseconds: pandas' path
    with_null = pd.Series(micros.astype("datetime64[us]"))
    with_null[2] = pd.NaT
    cases.append(with_null)
    cases.append(pd.Series(np.zeros(0, dtype="datetime64[us]")))
    for naive in list(cases):
        cases.append(naive.dt.tz_localize("UTC"))
    ordinary = pd.Series(micros[:4].astype("datetime64[us]")).dt.tz_localize("UTC")
    for zone in ("Europe/Berlin", "America/New_York"):  # (pandas crashes on year 1 there)
        cases.append(ordinary.dt.tz_convert(zone))
    assert any(str(c.dtype) == "datetime64[us, UTC]" for c in cases)
    for column in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pandas warns about dropping nanoseconds
            expected = [None if v is pd.NaT else v for v in _pandas_datetimes(column.array)]
            got = column_values(column)
        assert got == expected
        assert (None in got) == bool(column.isna().any())
        for a, b in zip(got, expected):
            assert type(a) is type(b)
            if b is not None:
                assert a.tzinfo is b.tzinfo and a.fold == b.fold
        positions = np.arange(len(column))[::-1].copy()
        assert column_values(column, positions) == expected[::-1]


def test_timestamp_columns_datetime_cannot_hold_fail_as_in_pandas() -> None:
    from flinkwin.operator.element_rows import column_values

    beyond = pd.Series(np.array([253_402_300_800_000_000], dtype="datetime64[us]"))
    for column in (beyond, beyond.dt.tz_localize("UTC")):
        with np.testing.assert_raises(ValueError):
            column.array.to_pydatetime()
        with np.testing.assert_raises(ValueError):
            column_values(column)


def test_first_appearances_are_each_codes_first_row() -> None:
    from flinkwin.operator.batch_windows import _codes
    from flinkwin.operator.vectorized import first_appearances

    rng = np.random.default_rng(3)
    for n, k in ((1, 1), (10, 3), (10_000, 500), (1000, 5000)):
        codes = _codes([rng.integers(0, k, n)])
        assert np.array_equal(first_appearances(codes), np.unique(codes, return_index=True)[1])
    assert len(first_appearances(np.zeros(0, dtype=np.int64))) == 0


def test_elements_at_positions_are_the_elements_taken_from_the_whole_batch() -> None:
    """``_records(frame, rows=...)`` (the batch path builds the panes' elements in pane order)
    gives the elements ``_records(frame)`` gives at those positions: every column kind,
    atomic, pickled and tuple streams, converted columns."""
    import pickle

    from flinkwin.operator.element_rows import _records

    n = 7
    stamps = pd.Series(np.arange(n, dtype=np.int64) * 86_400_000_123, dtype="datetime64[us]")
    frame = pd.DataFrame({
        "s": [f"k{i % 3}" for i in range(n)],
        "i": np.arange(n, dtype=np.int64) - 3,
        "f": [0.5, float("nan"), -0.0, 1e300, 2.0, 3.0, 4.0],
        "b": [True, False] * 3 + [True],
        "n": pd.array([1, None, 3, 4, None, 6, 7], dtype="Int64"),
        "t": pd.array(["a", None, "c", "d", "e", "f", "g"], dtype="string"),
        "naive": stamps,
        "utc": stamps.dt.tz_localize("UTC"),
        "berlin": stamps.dt.tz_localize("UTC").dt.tz_convert("Europe/Berlin"),
        "nat": pd.Series([stamps[0], pd.NaT, *stamps[2:]]).dt.tz_localize("UTC"),
    })
    rows = np.array([6, 0, 3, 3, 1, 5], dtype=np.int64)

    def same(got: list, whole: list) -> None:
        expected = [whole[i] for i in rows.tolist()]
        assert repr(got) == repr(expected)
        assert [type(v) for v in got] == [type(v) for v in expected]

    for kwargs in ({}, {"tuple_elements": True}, {"converters": {"s": str.upper}}):
        same(_records(frame, rows=rows, **kwargs), _records(frame, **kwargs))
    for column in frame.columns:
        one = frame[[column]]
        same(_records(one, atomic=True, rows=rows), _records(one, atomic=True))
    pickled = pd.DataFrame({"p": [pickle.dumps({"v": i}) if i % 2 else None for i in range(n)]})
    same(_records(pickled, pickled=True, rows=rows), _records(pickled, pickled=True))


def test_column_values_at_positions_equal_the_whole_columns_values_for_every_dtype() -> None:
    """The positional read gives the values the whole-column read gives; a duration is a
    ``datetime.timedelta`` (numpy's ``tolist`` of ``timedelta64[ns]`` would give integers of
    nanoseconds, pandas' a ``Timedelta``) and a null one None (pandas: ``NaT``), exact beyond
    the nanoseconds' 292 years."""
    import datetime

    import pandas as pd

    from flinkwin.operator.element_rows import column_values

    rows = np.array([2, 0])
    big = datetime.timedelta(days=200_000, microseconds=7)
    micros = np.array([-7, (big // datetime.timedelta(microseconds=1))], dtype=np.int64)
    durations = np.concatenate([micros.astype("timedelta64[us]"),
                                np.array(["NaT"], dtype="timedelta64[us]")])
    assert column_values(pd.Series(durations)) == [
        datetime.timedelta(microseconds=-7), big, None]
    columns = [
        pd.Series([datetime.timedelta(microseconds=-7), datetime.timedelta(days=1),
                   datetime.timedelta(seconds=3)]),
        pd.Series(durations),
        pd.Series([1, 2, 3]),
        pd.Series([0.5, float("nan"), -1.0]),
        pd.Series([True, False, True]),
        pd.Series(["a", None, "c"]),
        pd.Series([1, None, 3], dtype="Int64"),
    ]
    for column in columns:
        whole = column_values(column)
        got = column_values(column, rows)
        assert [type(v) for v in got] == [type(whole[i]) for i in rows]
        assert [repr(v) for v in got] == [repr(whole[i]) for i in rows]
