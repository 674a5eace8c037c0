"""The elements a distributed graph's keyed nodes hand each other (``flinkwin.operator.
emission_wire``): packed column by column, pickled by flinkwin, signed and checked before
unpickling; every value and field comes back exactly, in order."""

from __future__ import annotations

import pickle
from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyspark import cloudpickle

from flinkwin import OutputTag, Row
from flinkwin.operator import emission_wire
from flinkwin.operator.graph_chain import BEFORE, BETWEEN, ELEMENT, Emission
from flinkwin.operator.snapshots import SnapshotAuthenticationError, StatePickler

KEY = b"a key for the wire tests"
TAGS = [None, OutputTag("late"), OutputTag("side")]
VALUES = st.one_of(
    st.integers(-2**70, 2**70), st.floats(allow_nan=True), st.booleans(), st.none(),
    st.text(max_size=5), st.binary(max_size=5),
    st.decimals(allow_nan=False, places=2, min_value=-10, max_value=10),
    st.tuples(st.integers(), st.text(max_size=3)),
    st.builds(lambda a, b: Row(itemId=a, viewCount=b), st.integers(), st.integers()),
    st.integers(-5, 5).map(np.int64),
)
SMALL = st.one_of(st.integers(0, 3), st.just(True), st.integers(0, 3).map(np.int64))


def emissions(n: int, draw: Any) -> list[Emission]:
    node = draw(st.one_of(st.none(), st.integers(0, 3)))
    out = []
    for i in range(n):
        out.append(Emission(
            node, draw(SMALL), draw(SMALL), draw(st.sampled_from(TAGS)), draw(VALUES),
            draw(st.one_of(st.none(), st.integers(-2**63, 2**63 - 1))),
            draw(st.sampled_from([BEFORE, BETWEEN, ELEMENT])),
            (draw(st.integers(-1, 2)), draw(SMALL), i), (draw(SMALL), draw(SMALL)),
        ))
    return out


def exact(a: Any) -> Any:
    """A value with every type spelled out (``1 == True == 1.0``; NaN is not equal to itself)."""
    if isinstance(a, tuple):
        return (type(a).__name__, tuple(exact(x) for x in a))
    if isinstance(a, float) and a != a:
        return ("float", "nan")
    return (type(a).__name__, repr(a))


def carried(emitted: list[Emission], pickler: StatePickler) -> list[Emission]:
    return emission_wire.unpack(pickler.load(pickler.dump(emission_wire.pack(emitted))))


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(1, 12))
def test_emissions_cross_the_wire_with_exact_values_types_and_order(data: Any, n: int) -> None:
    emitted = emissions(n, data.draw)
    pickler = StatePickler(key=KEY, dumps=emission_wire.dumps)
    back = carried(emitted, pickler)
    assert [exact(e) for e in back] == [exact(e) for e in emitted]
    assert all(type(e) is Emission for e in back)
    assert [e.tag is None or isinstance(e.tag, OutputTag) for e in back] == [True] * n


def test_a_column_of_equal_values_of_different_types_is_sent_value_by_value() -> None:
    """``1``, ``True``, ``np.int64(1)`` and ``1.0`` are equal but not the same value: no
    column takes one for all."""
    emitted = [Emission(0, 0, kg, None, v, ts, BEFORE, (0, 0, i), (5, 5))
               for i, (kg, v, ts) in enumerate([(1, 1, 7), (True, 1.0, 7), (np.int64(1),
                                                                             Decimal(1), None)])]
    back = carried(emitted, StatePickler(key=KEY, dumps=emission_wire.dumps))
    assert [exact(e) for e in back] == [exact(e) for e in emitted]


def test_one_value_for_a_column_the_same_in_every_element() -> None:
    emitted = [Emission(2, 0, 3, None, i, 10 + i, BEFORE, (0, 1, i), (5, 6)) for i in range(50)]
    _, n, columns, values = emission_wire.pack(emitted)
    kinds = [kind for kind, _ in columns]
    assert n == 50 and values == list(range(50))
    assert kinds == [emission_wire.SAME] * 4 + [emission_wire.EACH] + [emission_wire.SAME] * 3 + [
        emission_wire.EACH] + [emission_wire.SAME] * 2
    assert emission_wire.unpack(emission_wire.pack(emitted)) == emitted


def test_what_pickle_cannot_name_goes_through_the_fallback() -> None:
    """A class defined in a function (as one in ``__main__`` reaches a Spark worker by value):
    the standard pickler cannot name it; the runtime's fallback (cloudpickle) carries it."""

    class Local:
        def __init__(self, x: int) -> None:
            self.x = x

    emitted = [Emission(None, 0, 0, None, Local(3), None, ELEMENT, (0, 0, 0), (0, 0))]
    with pytest.raises((pickle.PicklingError, AttributeError)):
        emission_wire.dumps(emission_wire.pack(emitted))
    pickler = StatePickler(key=KEY, dumps=lambda v: emission_wire.dumps(v, cloudpickle.dumps))
    (back,) = carried(emitted, pickler)
    assert type(back.value).__name__ == "Local" and back.value.x == 3


def test_the_wire_refuses_bytes_not_signed_under_its_key() -> None:
    """Checked before anything is unpickled: bytes signed under another key, or changed."""
    emitted = [Emission(1, 0, 0, None, "x", 1, BEFORE, (0, 0, 0), (0, 0))]
    blob = StatePickler(key=b"another key", dumps=emission_wire.dumps).dump(
        emission_wire.pack(emitted))
    mine = StatePickler(key=KEY, dumps=emission_wire.dumps)
    with pytest.raises(SnapshotAuthenticationError):
        mine.load(blob, "elements between a graph's stages")
    good = mine.dump(emission_wire.pack(emitted))
    with pytest.raises(SnapshotAuthenticationError):
        mine.load(good[:-1] + bytes([good[-1] ^ 1]), "elements between a graph's stages")


def test_a_payload_of_another_wire_format_is_refused() -> None:
    packed = emission_wire.pack([Emission(1, 0, 0, None, "x", 1, BEFORE, (0, 0, 0), (0, 0))])
    with pytest.raises(ValueError, match="wire format 99"):
        emission_wire.unpack((99, *packed[1:]))
    with pytest.raises(ValueError, match="malformed"):
        emission_wire.unpack((packed[0], 2, packed[2], packed[3]))
