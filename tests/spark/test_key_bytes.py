"""The bytes a key selector's key is hashed by (flinkwin.spark.key_bytes): equal keys give the
same bytes whichever of their values are one Python object, and a key whose pickle refers back
to no value it already wrote hashes exactly as before (a checkpoint's keys keep their groups)."""

from __future__ import annotations

import datetime
import decimal
import enum
import pickle
import timeit
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from flinkwin.keys import flink_key, pickled_key, plain_key
from flinkwin.record import Row
from flinkwin.spark.key_bytes import key_bytes


def fresh(text: str) -> str:
    """A new object equal to ``text``, as Arrow gives one (CPython's shared one for the empty
    string and one Latin-1 char)."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


def fresh_bytes(data: bytes) -> bytes:
    """A new object equal to ``data``, as Arrow gives one (CPython's shared one for up to one
    byte)."""
    return data.decode("latin-1").encode("latin-1")


def test_a_value_twice_as_one_object_or_two_gives_the_same_bytes() -> None:
    s, t = "alice", fresh("alice")
    assert s is not t
    d, e = decimal.Decimal("1.50"), decimal.Decimal("1.50")
    when, when2 = datetime.datetime(2024, 1, 2, 3), datetime.datetime(2024, 1, 2, 3)
    day = datetime.date(2024, 1, 2)
    b, c = b"bytes", fresh_bytes(b"bytes")
    inner = ("x1", 2)
    pairs = [
        ((s, s), (s, t)),
        ((s, 1, s), (s, 1, t)),
        ((d, d), (d, e)),
        ((when, when), (when, when2)),
        ((day, day), (day, datetime.date(2024, 1, 2))),
        ((b, b), (b, c)),
        ((inner, inner), (inner, tuple(["x1", 2]))),
        (((s,), s), ((t,), s)),
        (Row(a=s, b=s), Row(a=s, b=t)),
        ((Row(a=s, b=1), Row(a=s, b=1)), (Row(a=s, b=1), Row(a=t, b=1))),
        (Row(s, s), Row(s, t)),
    ]
    for shared, distinct in pairs:
        assert shared == distinct
        assert pickle.dumps(shared, 4) != pickle.dumps(distinct, 4)  # what pickle alone does
        assert key_bytes(shared) == key_bytes(distinct), shared


def test_a_copied_one_char_string_hashes_as_the_one_cpython_shares() -> None:
    # numpy's str_ converts to a new str object, where Arrow and literals give CPython's one
    copied = plain_key(np.str_("a"))
    assert copied == "a" and copied is not "a"[:1]
    assert key_bytes((copied, "a")) == key_bytes(("a", "a")) == pickle.dumps(("a", "a"), 4)
    assert key_bytes(("", "")) == pickle.dumps(("", ""), 4)


def test_nan_and_negative_zero_keys_keep_their_bytes() -> None:
    for key in [(float("nan"), float("nan")), (-0.0, -0.0, 1.0), ("ab", -0.0)]:
        held = flink_key(key)
        assert key_bytes(held) == pickle.dumps(held, 4)
    assert key_bytes(flink_key((0.0, "a"))) != key_bytes(flink_key((-0.0, "a")))


KEYS_WITHOUT_SHARING = [
    "alice", "", "a", b"raw", 1, -(2**70), 1.5, True, None, decimal.Decimal("1.50"),
    datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, tzinfo=datetime.timezone.utc),
    datetime.time(1, 2), datetime.timedelta(seconds=3),
    ("alice", "bob"), ("alice", 1, 2.5, None, True), ((), ("x", "y")), ("a", "a", "", ""),
    (decimal.Decimal("1"), decimal.Decimal("2")),
    (datetime.date(2024, 1, 2), datetime.date(2024, 1, 3)),
    Row(user="alice", page="p1"), Row("alice", 3), (Row(a=1, b="x"), Row(a=2, b="y")),
]


def test_keys_without_a_value_twice_keep_the_bytes_they_had() -> None:
    for key in KEYS_WITHOUT_SHARING:
        assert key_bytes(key) == pickle.dumps(key, protocol=4), key


atoms = st.one_of(
    st.text(max_size=6).map(fresh), st.binary(max_size=4).map(fresh_bytes),
    st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(),
    st.decimals(allow_nan=False, allow_infinity=False),
)
keys = st.recursive(atoms, lambda inner: st.lists(inner, max_size=4).map(tuple), max_leaves=8)


@given(keys)
def test_any_key_built_of_distinct_values_keeps_its_bytes(key: Any) -> None:
    # text of one char or none is CPython's shared object, as in every key from Arrow
    assert key_bytes(key) == pickle.dumps(key, protocol=4)


@given(keys, st.randoms(use_true_random=False))
def test_sharing_equal_values_never_changes_the_bytes(key: Any, rnd: Any) -> None:
    pool: dict[Any, Any] = {}

    def share(value: Any) -> Any:  # one object per equal value, some of the time
        if isinstance(value, tuple):
            value = tuple(share(v) for v in value)
        if isinstance(value, (str, bytes, tuple, decimal.Decimal)) and rnd.random() < 0.7:
            return pool.setdefault((type(value), repr(value)), value)
        return value

    assert key_bytes(share(key)) == key_bytes(key)


def test_a_key_costs_little_more_than_its_pickle() -> None:
    # measured on a quiet machine: 0.3 us to pickle ("alice", "p1", 42), 0.3 us more to check
    # it (the selector, plain_key, flink_key and pickling cost about 2 us per element)
    key = ("alice", "p1", 42)
    runs = 20000
    plain = min(timeit.repeat(lambda: pickle.dumps(key, protocol=4), number=runs, repeat=5))
    ours = min(timeit.repeat(lambda: key_bytes(key), number=runs, repeat=5))
    assert ours / runs < 5e-6 and ours < 8 * plain, (ours / runs, plain / runs)


class Color(enum.IntEnum):
    RED = 1


def test_keys_one_to_the_operators_are_one_to_the_hash_and_apart_ones_apart() -> None:
    """The operators' key identity (flinkwin.keys.pickled_key) and the bytes the key group is
    hashed by agree: neither splits a key in two groups nor merges two by a hash collision."""
    utc = datetime.timezone.utc
    s = "alice"
    candidates = [
        (s, s), (s, fresh(s)), Row(s, s), Row(a=s, b=s), Row(b=s, a=s), (1, 2), Row(1, 2),
        Row(a=1, b=2), (1, 2.0), (True, 2), (np.int64(1), 2), Color.RED, 1, np.float64(-0.0),
        -0.0, 0.0, float("nan"), np.float32("nan"), (float("nan"), s), decimal.Decimal("1.0"),
        decimal.Decimal("1.00"), datetime.datetime(2024, 1, 1, 12, tzinfo=utc),
        datetime.datetime(2024, 1, 1, 13, tzinfo=datetime.timezone(datetime.timedelta(hours=1))),
        datetime.datetime(2024, 1, 1, 1), datetime.datetime(2024, 1, 1, 1, fold=1),
    ]
    for a in candidates:
        for b in candidates:
            one = pickled_key(plain_key(a)) == pickled_key(plain_key(b))
            same = key_bytes(flink_key(plain_key(a))) == key_bytes(flink_key(plain_key(b)))
            assert one == same, (a, b)
