"""The distributed graph plan's routing shortcuts give exactly what the general paths give:
the key group of a remembered key (``key_group_of``), an untyped ``int`` key
(``pickled_key``), and which of a micro-batch's rows are still pushed after window nodes took
theirs in batches (``QuietBatches.routes``)."""

from __future__ import annotations

import enum
import pickle
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from flinkwin.keys import PickledKey, _identity, pickled_key
from flinkwin.operator.graph_batches import QuietBatches
from flinkwin.operator.graph_chain import _key_group, key_group_of


class Level(enum.IntEnum):
    LOW = 1


def _general_pickled_key(value: Any) -> Any:
    """pickled_key without its int shortcut: the general identity path."""
    identity = _identity(value)
    return PickledKey(value, identity) if type(identity).__name__ == "_Tag" else identity


@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_an_untyped_int_key_is_the_general_paths_key(value: int) -> None:
    fast, general = pickled_key(value), _general_pickled_key(value)
    assert fast == general and hash(fast) == hash(general)
    assert fast._identity == general._identity and fast.value is value
    assert pickle.loads(pickle.dumps(fast)) == general


def test_one_true_one_point_oh_and_an_int_enum_stay_four_untyped_keys() -> None:
    keys = [pickled_key(v) for v in (1, True, 1.0, Level.LOW)]
    assert len(set(keys)) == 4
    assert all(k == _general_pickled_key(v) for k, v in zip(keys, (1, True, 1.0, Level.LOW)))


KEYS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.text(max_size=5),
    st.booleans(),
    st.floats(allow_nan=True),
    st.binary(max_size=4),
    st.tuples(st.integers(), st.text(max_size=3)),
)


@settings(max_examples=300)
@given(st.lists(KEYS, max_size=30), st.integers(min_value=1, max_value=64))
def test_a_remembered_key_group_is_the_computed_one(values: list[Any], groups: int) -> None:
    # each value as a plain key and as an untyped one, asked twice (the second time from
    # the memory where the key's type allows), against the computation itself
    for value in values:
        for key in (value, pickled_key(value)):
            for _ in range(2):
                assert key_group_of(key, groups) == _key_group(key, groups)


def test_equal_keys_of_other_types_are_not_answered_from_an_int_keys_memory() -> None:
    for groups in (7, 16, 128):
        for value in (1, 5, 2**40):
            key_group_of(pickled_key(value), groups)  # remembered
            for other in (True if value == 1 else None, float(value), Level.LOW):
                if other is None:
                    continue
                key = pickled_key(other)
                assert key_group_of(key, groups) == _key_group(key, groups)


def _routes_row_by_row(
    batches: QuietBatches, sources: list[int], taken: list[list[tuple[int, int]]]
) -> list[tuple[int, tuple[int, ...]]]:
    """The rule routes implements, row by row (its earlier form)."""
    out = []
    seen = [0] * len(batches.nodes)
    for row, i in enumerate(sources):
        if not taken[i]:
            out.append((row, ()))
            continue
        position = seen[i]
        seen[i] += 1
        skip = tuple(j for j, count in taken[i] if position < count)
        readers, output = batches._readers[i]
        if not skip or output or not readers <= set(skip):
            out.append((row, skip))
    return out


@settings(max_examples=300)
@given(st.data())
def test_routes_push_exactly_the_rows_no_batch_took(data: st.DataObject) -> None:
    n_sources = data.draw(st.integers(1, 3))
    n_nodes = data.draw(st.integers(1, 4))
    consumers: dict[Any, list[tuple[int, int]]] = {}
    for i in range(n_sources):
        readers = data.draw(st.lists(st.integers(0, n_nodes - 1), unique=True, max_size=n_nodes))
        consumers[("source", i)] = [(j, 0) for j in readers]
    outputs = {("source", i) for i in range(n_sources) if data.draw(st.booleans())}
    batches = QuietBatches([None] * n_nodes, [None] * n_sources, consumers, outputs)
    sources = data.draw(st.lists(st.integers(0, n_sources - 1), max_size=40))
    taken: list[list[tuple[int, int]]] = []
    for i in range(n_sources):
        rows = sources.count(i)
        readers = [j for j, _ in consumers[("source", i)]]
        batched = data.draw(st.lists(st.sampled_from(readers), unique=True)) if readers else []
        taken.append([(j, data.draw(st.integers(0, rows))) for j in batched])
    got = list(batches.routes(np.array(sources, dtype=np.int64), taken))
    assert got == _routes_row_by_row(batches, sources, taken)
