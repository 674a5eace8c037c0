"""Ports of Flink's window join / co-group tests, run on the window operator a join builds.

Sources (apache/flink):
* flink-tests/src/test/java/org/apache/flink/test/streaming/runtime/CoGroupJoinITCase.java:
  testCoGroup, testJoin, testSelfJoin. Each test source emits its elements with a punctuated
  watermark of ``timestamp - 1`` after each element and ``Long.MAX_VALUE`` when it finishes; the
  window operator sees the minimum of its two inputs' watermarks (the union of the two tagged
  streams). Flink runs the two sources concurrently, so the interleaving is not fixed and the
  test compares sorted results: we run several interleavings (one source first, the other
  first, alternating, seeded shuffles) and require the same sorted result from each.
  Java's ``Tuple.toString()`` ``(a,0)`` is reproduced by :func:`java_tuple`.
* flink-streaming-java/src/test/java/org/apache/flink/streaming/api/datastream/
  JoinedStreamsTest.java and CoGroupedStreamsTest.java: testDelegateToCoGrouped,
  testSetAllowedLateness (the builders' allowed lateness reaches the window operator).

Not ported: testCoGroupOperatorWithCheckpoint checks that Flink's ``UnionSerializer`` snapshots
its configuration (FLINK-6808); flinkwin has no serializers. Its observable point, a co-group
operator's state snapshots and restores, is covered by
``test_window_join.py::test_snapshot_and_restore_mid_window_keep_both_inputs``.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from flinkwin import Duration, Time, TumblingEventTimeWindows
from flinkwin.datastream.cogrouped_streams import CoGroupedStreams
from flinkwin.datastream.joined_streams import JoinedStreams
from flinkwin.functions import CoGroupFunction, JoinFunction
from flinkwin.operator.cogroup import TaggedUnion, WindowJoinSpec, build_operator
from flinkwin.operator.window_operator import WindowOperator
from flinkwin.time import MAX_LONG, MIN_LONG


class FakeStream:
    """Stands in for a DataStream: ``_window_join`` hands the finished spec back."""

    def _window_join(self, spec: WindowJoinSpec) -> WindowJoinSpec:
        return spec


def java_tuple(t: Sequence[Any]) -> str:
    """Java's ``Tuple2/Tuple3.toString()``: ``(a,0)``."""
    return "(" + ",".join(str(v) for v in t) + ")"


def run_sources(
    op: WindowOperator,
    source1: list[tuple[Any, ...]],
    source2: list[tuple[Any, ...]],
    order: Iterable[int],
    ts_field: int,
) -> list[tuple[Any, int]]:
    """Feed two punctuated sources into ``op`` in ``order`` (1: the next element of the first
    source, 2: of the second), each element followed by its source's watermark
    ``timestamp - 1``; the operator's watermark is the minimum of both inputs'. A source that
    has emitted everything emits ``Long.MAX_VALUE``. Returns the main output."""
    pending = {1: list(source1), 2: list(source2)}
    watermarks = {1: MIN_LONG, 2: MIN_LONG}

    def finish_if_done(side: int) -> None:
        if not pending[side]:
            watermarks[side] = MAX_LONG

    finish_if_done(1)
    finish_if_done(2)
    for side in order:
        element = pending[side].pop(0)
        timestamp = element[ts_field]
        tagged = TaggedUnion.one(element) if side == 1 else TaggedUnion.two(element)
        op.process_element(tagged, timestamp)
        watermarks[side] = timestamp - 1
        finish_if_done(side)
        op.advance_watermark(min(watermarks.values()))
    assert not pending[1] and not pending[2], "the order must drain both sources"
    op.advance_watermark(MAX_LONG)
    assert op.num_late_records_dropped == 0
    return op.drain_output()


def interleavings(n1: int, n2: int) -> list[list[int]]:
    """Source 1 first, source 2 first, alternating, and three seeded shuffles."""
    alternating: list[int] = []
    for i in range(max(n1, n2)):
        alternating += ([1] if i < n1 else []) + ([2] if i < n2 else [])
    orders = [[1] * n1 + [2] * n2, [2] * n2 + [1] * n1, alternating]
    rng = random.Random(20260425)
    for _ in range(3):
        shuffled = [1] * n1 + [2] * n2
        rng.shuffle(shuffled)
        orders.append(shuffled)
    return orders


# ------------------------------------------------------------------ testCoGroup

COGROUP_SOURCE1 = [
    ("a", 0), ("a", 1), ("a", 2),
    ("b", 3), ("b", 4), ("b", 5),
    ("a", 6), ("a", 7), ("a", 8),
]
COGROUP_SOURCE2 = [("a", 0), ("a", 1), ("b", 3), ("c", 6), ("c", 7), ("c", 8)]


class FirstSecondCoGroup(CoGroupFunction):
    """The test's co-group function: ``F:`` the first input's tuples, `` S:`` the second's."""

    def co_group(self, first: list[Any], second: list[Any]) -> list[str]:
        return [
            "F:" + "".join(java_tuple(t) for t in first)
            + " S:" + "".join(java_tuple(t) for t in second)
        ]


def cogroup_spec() -> WindowJoinSpec:
    return (
        CoGroupedStreams(FakeStream(), FakeStream())
        .where(lambda t: t[0])
        .equal_to(lambda t: t[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(3)))
        .apply(FirstSecondCoGroup())
    )


@pytest.mark.parametrize(
    "order", interleavings(len(COGROUP_SOURCE1), len(COGROUP_SOURCE2))
)
def test_co_group(order: list[int]) -> None:
    output = run_sources(
        build_operator(cogroup_spec()), COGROUP_SOURCE1, COGROUP_SOURCE2, order, ts_field=1
    )
    expected = [
        "F:(a,0)(a,1)(a,2) S:(a,0)(a,1)",
        "F:(b,3)(b,4)(b,5) S:(b,3)",
        "F:(a,6)(a,7)(a,8) S:",
        "F: S:(c,6)(c,7)(c,8)",
    ]
    assert sorted(v for v, _ in output) == sorted(expected)


def test_co_group_results_carry_the_windows_max_timestamp() -> None:
    order = interleavings(len(COGROUP_SOURCE1), len(COGROUP_SOURCE2))[2]
    output = run_sources(
        build_operator(cogroup_spec()), COGROUP_SOURCE1, COGROUP_SOURCE2, order, ts_field=1
    )
    assert sorted(output) == sorted([
        ("F:(a,0)(a,1)(a,2) S:(a,0)(a,1)", 2),
        ("F:(b,3)(b,4)(b,5) S:(b,3)", 5),
        ("F:(a,6)(a,7)(a,8) S:", 8),
        ("F: S:(c,6)(c,7)(c,8)", 8),
    ])


# --------------------------------------------------------------------- testJoin

JOIN_SOURCE1 = [
    ("a", "x", 0), ("a", "y", 1), ("a", "z", 2),
    ("b", "u", 3), ("b", "w", 5),
    ("a", "i", 6), ("a", "j", 7), ("a", "k", 8),
]
JOIN_SOURCE2 = [
    ("a", "u", 0), ("a", "w", 1),
    ("b", "i", 3), ("b", "k", 5),
    ("a", "x", 6), ("a", "z", 8),
]


class ConcatJoin(JoinFunction):
    """The test's join function: ``first + ":" + second``."""

    def join(self, first: Any, second: Any) -> str:
        return java_tuple(first) + ":" + java_tuple(second)


def join_spec() -> WindowJoinSpec:
    return (
        JoinedStreams(FakeStream(), FakeStream())
        .where(lambda t: t[0])
        .equalTo(lambda t: t[0])
        .window(TumblingEventTimeWindows.of(Time.of(3, "ms")))
        .apply(ConcatJoin())
    )


@pytest.mark.parametrize("order", interleavings(len(JOIN_SOURCE1), len(JOIN_SOURCE2)))
def test_join(order: list[int]) -> None:
    output = run_sources(
        build_operator(join_spec()), JOIN_SOURCE1, JOIN_SOURCE2, order, ts_field=2
    )
    expected = [
        "(a,x,0):(a,u,0)",
        "(a,x,0):(a,w,1)",
        "(a,y,1):(a,u,0)",
        "(a,y,1):(a,w,1)",
        "(a,z,2):(a,u,0)",
        "(a,z,2):(a,w,1)",
        "(b,u,3):(b,i,3)",
        "(b,u,3):(b,k,5)",
        "(b,w,5):(b,i,3)",
        "(b,w,5):(b,k,5)",
        "(a,i,6):(a,x,6)",
        "(a,i,6):(a,z,8)",
        "(a,j,7):(a,x,6)",
        "(a,j,7):(a,z,8)",
        "(a,k,8):(a,x,6)",
        "(a,k,8):(a,z,8)",
    ]
    assert sorted(v for v, _ in output) == sorted(expected)


def test_join_pairs_come_in_nested_loop_order_per_window() -> None:
    """Within one window's firing, Flink's JoinCoGroupFunction loops over the first input's
    elements, then the second's, each in arrival order."""
    order = [1] * len(JOIN_SOURCE1) + [2] * len(JOIN_SOURCE2)
    output = run_sources(
        build_operator(join_spec()), JOIN_SOURCE1, JOIN_SOURCE2, order, ts_field=2
    )
    window_0_2 = [v for v, ts in output if ts == 2]
    assert window_0_2 == [
        "(a,x,0):(a,u,0)", "(a,x,0):(a,w,1)",
        "(a,y,1):(a,u,0)", "(a,y,1):(a,w,1)",
        "(a,z,2):(a,u,0)", "(a,z,2):(a,w,1)",
    ]


# ----------------------------------------------------------------- testSelfJoin


def self_join_orders(n: int) -> list[list[int]]:
    """The tagged copies of one source reach the union in any interleaving; each copy is in
    source order."""
    return interleavings(n, n)


@pytest.mark.parametrize("order", self_join_orders(len(JOIN_SOURCE1)))
def test_self_join(order: list[int]) -> None:
    source = FakeStream()
    spec = (
        JoinedStreams(source, source)
        .where(lambda t: t[0])
        .equal_to(lambda t: t[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(3)))
        .apply(ConcatJoin())
    )
    assert spec.first is spec.second
    output = run_sources(build_operator(spec), JOIN_SOURCE1, JOIN_SOURCE1, order, ts_field=2)
    expected = [
        "(a,x,0):(a,x,0)",
        "(a,x,0):(a,y,1)",
        "(a,x,0):(a,z,2)",
        "(a,y,1):(a,x,0)",
        "(a,y,1):(a,y,1)",
        "(a,y,1):(a,z,2)",
        "(a,z,2):(a,x,0)",
        "(a,z,2):(a,y,1)",
        "(a,z,2):(a,z,2)",
        "(b,u,3):(b,u,3)",
        "(b,u,3):(b,w,5)",
        "(b,w,5):(b,u,3)",
        "(b,w,5):(b,w,5)",
        "(a,i,6):(a,i,6)",
        "(a,i,6):(a,j,7)",
        "(a,i,6):(a,k,8)",
        "(a,j,7):(a,i,6)",
        "(a,j,7):(a,j,7)",
        "(a,j,7):(a,k,8)",
        "(a,k,8):(a,i,6)",
        "(a,k,8):(a,j,7)",
        "(a,k,8):(a,k,8)",
    ]
    assert sorted(v for v, _ in output) == sorted(expected)


# ------------------------------------------- JoinedStreamsTest / CoGroupedStreamsTest


def test_joined_streams_delegate_to_co_grouped() -> None:
    """JoinedStreamsTest.testDelegateToCoGrouped: the join's allowed lateness is the window
    operator's."""
    with_lateness = (
        JoinedStreams(FakeStream(), FakeStream())
        .where(lambda e: e)
        .equal_to(lambda e: e)
        .window(TumblingEventTimeWindows.of(Duration.of_millis(1)))
        .allowed_lateness(Duration.of_millis(42))
    )
    spec = with_lateness.apply(lambda first, second: first + second, output_type=None)
    assert spec.allowed_lateness_ms == 42
    assert build_operator(spec).allowed_lateness == 42


def test_joined_streams_set_allowed_lateness() -> None:
    """JoinedStreamsTest.testSetAllowedLateness."""
    with_lateness = (
        JoinedStreams(FakeStream(), FakeStream())
        .where(lambda e: e)
        .equal_to(lambda e: e)
        .window(TumblingEventTimeWindows.of(Duration.of_millis(1)))
        .allowedLateness(Duration.of_millis(42))
    )
    assert with_lateness.allowed_lateness_ms == 42


def test_co_grouped_streams_delegate_to_co_grouped() -> None:
    """CoGroupedStreamsTest.testDelegateToCoGrouped: the co-group's allowed lateness is the
    window operator's."""
    with_lateness = (
        CoGroupedStreams(FakeStream(), FakeStream())
        .where(lambda e: e)
        .equalTo(lambda e: e)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(1)))
        .allowedLateness(Time.milliseconds(42))
    )
    spec = with_lateness.apply(lambda first, second: [""])
    assert spec.allowed_lateness_ms == 42
    assert build_operator(spec).allowed_lateness == 42


def test_co_grouped_streams_set_allowed_lateness() -> None:
    """CoGroupedStreamsTest.testSetAllowedLateness."""
    with_lateness = (
        CoGroupedStreams(FakeStream(), FakeStream())
        .where(lambda e: e)
        .equal_to(lambda e: e)
        .window(TumblingEventTimeWindows.of(Time.milliseconds(1)))
        .allowed_lateness(Time.milliseconds(42))
    )
    assert with_lateness.allowed_lateness_ms == 42
