"""Port of Flink's ``IntervalJoinOperatorTest`` and of the ``IntervalJoinITCase`` cases that run
on the operator itself.

Sources: apache/flink,
flink-streaming-java/src/test/java/org/apache/flink/streaming/api/operators/co/
IntervalJoinOperatorTest.java (JUnit 5, parameterized "lhs faster than rhs") and
flink-tests/src/test/java/org/apache/flink/test/streaming/runtime/IntervalJoinITCase.java.

Translation rules
-----------------
* Flink's ``KeyedTwoInputStreamOperatorTestHarness`` becomes :class:`Harness`: it keeps each
  input's watermark and advances the operator to their minimum when it rises (Flink's
  ``processWatermark1/2``), and records the output with the combined watermarks interleaved, so
  ``noLateRecords`` (``TestHarnessUtil.assertNoLateRecords``) checks what Flink checks.
* ``TestElem(ts, source)`` keyed by its ``key`` ("key") is the frozen dataclass :class:`Elem`;
  ``streamRecordOf(l, r)`` is ``((Elem(l, "lhs"), Elem(r, "rhs")), max(l, r))``.
* Flink's ``assertOutput`` checks the size and that every expected record is present; we check
  the multiset (stricter). The ITCase's ``expectInAnyOrder`` compares sorted lists, as here.
* ``operator.getLeftBuffer().keys()`` is ``op.left_buffer.timestamps("key")``.
* The ITCase runs its two sources concurrently; we run their elements and watermarks in
  several interleavings (one source first, the other first, alternating), with the periodic
  watermark of an ``AscendingTimestampExtractor`` (``timestamp - 1``) after each element and the
  final ``MAX_WATERMARK`` of a bounded source; every interleaving must give Flink's results.
* ``testFailsWithoutUpperBound``/``LowerBound``, ``testBoundsAreInclusiveByDefault`` and
  ``testExecutionFailsInProcessingTime`` test the ``between`` builder (see
  ``test_interval_join_builder.py``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from flinkwin import OutputTag, ProcessJoinFunction
from flinkwin.errors import FlinkError
from flinkwin.operator.interval_join_operator import (
    NO_TIMESTAMP_MESSAGE,
    IntervalJoinOperator,
)
from flinkwin.time import MAX_LONG, MIN_LONG


@dataclass(frozen=True)
class Elem:
    """Flink's ``TestElem``: equal when timestamp, key and source are."""

    ts: int
    source: str
    key: str = "key"

    def __repr__(self) -> str:
        return f"{self.source}:{self.ts}"


class PassthroughFunction(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Iterator[Any]:
        yield (left, right)


class WATERMARK:  # noqa: N801 (a marker in the recorded output)
    def __init__(self, value: int) -> None:
        self.value = value


class Harness:
    """Flink's ``KeyedTwoInputStreamOperatorTestHarness`` for an ``IntervalJoinOperator``."""

    def __init__(self, op: IntervalJoinOperator) -> None:
        self.op = op
        self.input_watermarks = [MIN_LONG, MIN_LONG]
        self.combined = MIN_LONG
        self.output: list[Any] = []
        self.side: dict[OutputTag, list[tuple[Any, int | None]]] = {}
        op.open()

    def _drain(self) -> None:
        self.output += self.op.drain_output()
        for tag, records in self.op.drain_side_outputs().items():
            self.side.setdefault(tag, []).extend(records)

    def process_element1(self, ts: int | None, source: str = "lhs") -> Harness:
        self.op.process_element(Elem(0 if ts is None else ts, source), ts, 0)
        self._drain()
        return self

    def process_element2(self, ts: int | None, source: str = "rhs") -> Harness:
        self.op.process_element(Elem(0 if ts is None else ts, source), ts, 1)
        self._drain()
        return self

    def _watermark(self, index: int, watermark: int) -> Harness:
        self.input_watermarks[index] = watermark
        combined = min(self.input_watermarks)
        if combined > self.combined:
            self.combined = combined
            self.op.advance_watermark(combined)
            self._drain()
            self.output.append(WATERMARK(combined))
        return self

    def process_watermark1(self, watermark: int) -> Harness:
        return self._watermark(0, watermark)

    def process_watermark2(self, watermark: int) -> Harness:
        return self._watermark(1, watermark)

    def records(self) -> list[tuple[Any, int | None]]:
        return [r for r in self.output if not isinstance(r, WATERMARK)]

    # JoinTestBuilder's assertions

    def and_expect(self, *expected: tuple[Any, int]) -> Harness:
        assert Counter(self.records()) == Counter(expected)
        return self

    def no_late_records(self) -> Harness:
        highest = MIN_LONG
        for record in self.output:
            if isinstance(record, WATERMARK):
                highest = record.value
            else:
                assert record[1] >= highest, (record, highest)
        return self

    def expect_late_records(self, tag: OutputTag, *expected: tuple[Any, int]) -> Harness:
        assert Counter(self.side.get(tag, [])) == Counter(expected)
        return self

    def assert_left_buffer_contains_only(self, *timestamps: int) -> Harness:
        assert self.op.left_buffer.timestamps("key") == sorted(timestamps)
        return self

    def assert_right_buffer_contains_only(self, *timestamps: int) -> Harness:
        assert self.op.right_buffer.timestamps("key") == sorted(timestamps)
        return self

    def assert_left_buffer_empty(self) -> Harness:
        return self.assert_left_buffer_contains_only()

    def assert_right_buffer_empty(self) -> Harness:
        return self.assert_right_buffer_contains_only()


def key_of(elem: Elem) -> str:
    return elem.key


def make_operator(
    lower: int,
    lower_inclusive: bool,
    upper: int,
    upper_inclusive: bool,
    left_late: OutputTag | None = None,
    right_late: OutputTag | None = None,
    function: Any = None,
) -> IntervalJoinOperator:
    return IntervalJoinOperator(
        lower, upper, lower_inclusive, upper_inclusive, left_late, right_late,
        function or PassthroughFunction(), key_of, key_of,
    )


def setup_harness(*args: Any) -> Harness:
    return Harness(make_operator(*args))


def stream_record_of(lhs_ts: int, rhs_ts: int) -> tuple[Any, int]:
    return (Elem(lhs_ts, "lhs"), Elem(rhs_ts, "rhs")), max(lhs_ts, rhs_ts)


@pytest.fixture(params=[True, False], ids=["lhs faster than rhs", "rhs faster than lhs"])
def lhs_faster_than_rhs(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


def process_elements_and_watermarks(
    h: Harness, lhs_faster: bool, start: int = 1, end: int = 4
) -> Harness:
    sides = [(h.process_element1, h.process_watermark1), (h.process_element2, h.process_watermark2)]
    for element, watermark in sides if lhs_faster else sides[::-1]:
        for i in range(start, end + 1):
            element(i)
            watermark(i)
    return h


# ------------------------------------------------------------------ IntervalJoinOperatorTest


def test_implementation_mirrors_correctly(lhs_faster_than_rhs: bool) -> None:
    lower_bound, upper_bound = 1, 3
    lower_inclusive, upper_inclusive = True, False
    h = setup_harness(lower_bound, lower_inclusive, upper_bound, upper_inclusive)
    process_elements_and_watermarks(h, lhs_faster_than_rhs).and_expect(
        stream_record_of(1, 2), stream_record_of(1, 3), stream_record_of(2, 3),
        stream_record_of(2, 4), stream_record_of(3, 4),
    ).no_late_records()

    h = setup_harness(-1 * upper_bound, upper_inclusive, -1 * lower_bound, lower_inclusive)
    process_elements_and_watermarks(h, lhs_faster_than_rhs).and_expect(
        stream_record_of(2, 1), stream_record_of(3, 1), stream_record_of(3, 2),
        stream_record_of(4, 2), stream_record_of(4, 3),
    ).no_late_records()


def test_negative_inclusive_and_negative_inclusive(lhs_faster_than_rhs: bool) -> None:
    process_elements_and_watermarks(setup_harness(-2, True, -1, True), lhs_faster_than_rhs) \
        .and_expect(
            stream_record_of(2, 1), stream_record_of(3, 1), stream_record_of(3, 2),
            stream_record_of(4, 2), stream_record_of(4, 3),
        ).no_late_records()


def test_negative_inclusive_and_positive_inclusive(lhs_faster_than_rhs: bool) -> None:
    process_elements_and_watermarks(setup_harness(-1, True, 1, True), lhs_faster_than_rhs) \
        .and_expect(
            stream_record_of(1, 1), stream_record_of(1, 2), stream_record_of(2, 1),
            stream_record_of(2, 2), stream_record_of(2, 3), stream_record_of(3, 2),
            stream_record_of(3, 3), stream_record_of(3, 4), stream_record_of(4, 3),
            stream_record_of(4, 4),
        ).no_late_records()


def test_positive_inclusive_and_positive_inclusive(lhs_faster_than_rhs: bool) -> None:
    process_elements_and_watermarks(setup_harness(1, True, 2, True), lhs_faster_than_rhs) \
        .and_expect(
            stream_record_of(1, 2), stream_record_of(1, 3), stream_record_of(2, 3),
            stream_record_of(2, 4), stream_record_of(3, 4),
        ).no_late_records()


def test_negative_exclusive_and_negative_exlusive(lhs_faster_than_rhs: bool) -> None:
    process_elements_and_watermarks(setup_harness(-3, False, -1, False), lhs_faster_than_rhs) \
        .and_expect(stream_record_of(3, 1), stream_record_of(4, 2)).no_late_records()


def test_negative_exclusive_and_positive_exlusive(lhs_faster_than_rhs: bool) -> None:
    process_elements_and_watermarks(setup_harness(-1, False, 1, False), lhs_faster_than_rhs) \
        .and_expect(
            stream_record_of(1, 1), stream_record_of(2, 2), stream_record_of(3, 3),
            stream_record_of(4, 4),
        ).no_late_records()


def test_positive_exclusive_and_positive_exlusive(lhs_faster_than_rhs: bool) -> None:
    process_elements_and_watermarks(setup_harness(1, False, 3, False), lhs_faster_than_rhs) \
        .and_expect(stream_record_of(1, 3), stream_record_of(2, 4)).no_late_records()


def fill_both_buffers(h: Harness) -> Harness:
    for ts in range(1, 6):
        h.process_element1(ts)
    for ts in range(1, 6):
        h.process_element2(ts)
    return h


def test_state_cleanup_negative_inclusive_negative_inclusive() -> None:
    h = fill_both_buffers(setup_harness(-1, True, 0, True))
    h.process_watermark1(1).process_watermark2(1) \
        .assert_left_buffer_contains_only(2, 3, 4, 5) \
        .assert_right_buffer_contains_only(1, 2, 3, 4, 5)
    h.process_watermark1(4).process_watermark2(4) \
        .assert_left_buffer_contains_only(5) \
        .assert_right_buffer_contains_only(4, 5)
    h.process_watermark1(6).process_watermark2(6) \
        .assert_left_buffer_empty().assert_right_buffer_empty()


def test_state_cleanup_negative_positive_negative_exlusive() -> None:
    h = fill_both_buffers(setup_harness(-2, False, 1, False))
    h.process_watermark1(1).process_watermark2(1) \
        .assert_left_buffer_contains_only(2, 3, 4, 5) \
        .assert_right_buffer_contains_only(1, 2, 3, 4, 5)
    h.process_watermark1(4).process_watermark2(4) \
        .assert_left_buffer_contains_only(5) \
        .assert_right_buffer_contains_only(4, 5)
    h.process_watermark1(6).process_watermark2(6) \
        .assert_left_buffer_empty().assert_right_buffer_empty()


def test_state_cleanup_positive_inclusive_positive_inclusive() -> None:
    h = fill_both_buffers(setup_harness(0, True, 1, True))
    h.process_watermark1(1).process_watermark2(1) \
        .assert_left_buffer_contains_only(1, 2, 3, 4, 5) \
        .assert_right_buffer_contains_only(2, 3, 4, 5)
    h.process_watermark1(4).process_watermark2(4) \
        .assert_left_buffer_contains_only(4, 5) \
        .assert_right_buffer_contains_only(5)
    h.process_watermark1(6).process_watermark2(6) \
        .assert_left_buffer_empty().assert_right_buffer_empty()


def test_state_cleanup_positive_exlusive_positive_exclusive() -> None:
    h = fill_both_buffers(setup_harness(-1, False, 2, False))
    h.process_watermark1(1).process_watermark2(1) \
        .assert_left_buffer_contains_only(1, 2, 3, 4, 5) \
        .assert_right_buffer_contains_only(2, 3, 4, 5)
    h.process_watermark1(4).process_watermark2(4) \
        .assert_left_buffer_contains_only(4, 5) \
        .assert_right_buffer_contains_only(5)
    h.process_watermark1(6).process_watermark2(6) \
        .assert_left_buffer_empty().assert_right_buffer_empty()


def test_restore_from_snapshot() -> None:
    h = setup_harness(-1, True, 1, True)
    for ts in (1, 2, 3):
        h.process_element1(ts).process_watermark1(ts)
        h.process_element2(ts).process_watermark2(ts)
    snapshot = h.op.snapshot()
    h.op.close()
    h.no_late_records().and_expect(
        stream_record_of(1, 1), stream_record_of(1, 2), stream_record_of(2, 1),
        stream_record_of(2, 2), stream_record_of(2, 3), stream_record_of(3, 2),
        stream_record_of(3, 3),
    )

    restored = make_operator(-1, True, 1, True)
    restored.restore(snapshot)
    h2 = Harness(restored)
    h2.process_element1(4).process_watermark1(4)
    h2.process_element2(4).process_watermark2(4)
    h2.no_late_records().and_expect(
        stream_record_of(3, 4), stream_record_of(4, 3), stream_record_of(4, 4)
    )


class _Checking(ProcessJoinFunction):
    """Runs ``check(left, right, ctx)`` for every pair and counts the pairs."""

    def __init__(self, check: Any) -> None:
        self.check = check
        self.calls = 0

    def process_element(self, left: Any, right: Any, ctx: Any) -> None:
        self.calls += 1
        self.check(left, right, ctx)


def _run_checking(check: Any, lhs_faster: bool) -> int:
    function = _Checking(check)
    process_elements_and_watermarks(
        Harness(make_operator(-1, True, 1, True, function=function)), lhs_faster
    )
    return function.calls


def test_context_correct_left_timestamp(lhs_faster_than_rhs: bool) -> None:
    def check(left: Elem, right: Elem, ctx: Any) -> None:
        assert ctx.get_left_timestamp() == left.ts
        assert ctx.getLeftTimestamp() == left.ts

    assert _run_checking(check, lhs_faster_than_rhs) == 10


def test_returns_correct_timestamp(lhs_faster_than_rhs: bool) -> None:
    def check(left: Elem, right: Elem, ctx: Any) -> None:
        assert ctx.get_timestamp() == max(left.ts, right.ts)
        assert ctx.getTimestamp() == max(left.ts, right.ts)

    assert _run_checking(check, lhs_faster_than_rhs) == 10


def test_context_correct_right_timestamp(lhs_faster_than_rhs: bool) -> None:
    def check(left: Elem, right: Elem, ctx: Any) -> None:
        assert ctx.get_right_timestamp() == right.ts
        assert ctx.getRightTimestamp() == right.ts

    assert _run_checking(check, lhs_faster_than_rhs) == 10


def test_fails_with_no_timestamps_left() -> None:
    h = setup_harness(0, True, 0, True)
    with pytest.raises(FlinkError) as raised:
        h.process_element1(None)
    assert str(raised.value) == NO_TIMESTAMP_MESSAGE
    assert str(raised.value) == (
        "Long.MIN_VALUE timestamp: Elements used in interval stream joins need to have "
        "timestamps meaningful timestamps."
    )
    with pytest.raises(FlinkError):
        h.process_element1(MIN_LONG)


def test_fails_with_no_timestamps_right() -> None:
    h = setup_harness(0, True, 0, True)
    with pytest.raises(FlinkError, match="Long.MIN_VALUE timestamp"):
        h.process_element2(None)
    with pytest.raises(FlinkError):
        h.process_element2(MIN_LONG)
    assert h.op.holds_nothing()


def test_discards_late_data() -> None:
    h = setup_harness(-1, True, 1, True)
    for ts in (1, 2, 3):
        h.process_element1(ts).process_element2(ts)
    h.process_watermark1(3).process_watermark2(3)
    h.process_element1(1)  # this element is late and should not be joined again
    for ts in (4, 5):
        h.process_element1(ts).process_element2(ts)
    h.and_expect(
        stream_record_of(1, 1), stream_record_of(1, 2), stream_record_of(2, 1),
        stream_record_of(2, 2), stream_record_of(2, 3), stream_record_of(3, 2),
        stream_record_of(3, 3), stream_record_of(3, 4), stream_record_of(4, 3),
        stream_record_of(4, 4), stream_record_of(4, 5), stream_record_of(5, 4),
        stream_record_of(5, 5),
    ).no_late_records()
    assert h.op.num_late_records_dropped == 1
    assert h.side == {}


def test_late_data() -> None:
    left_late_tag, right_late_tag = OutputTag("left_late"), OutputTag("right_late")
    h = setup_harness(-1, True, 1, True, left_late_tag, right_late_tag)
    h.process_element1(3).process_element2(3)
    h.process_watermark1(3).process_watermark2(3)
    h.process_element1(4).process_element2(4)
    h.process_element1(1)  # the left side element is late
    h.process_element2(2)  # the right side element is late
    h.process_element1(5).process_element2(5)
    h.and_expect(
        stream_record_of(3, 3), stream_record_of(3, 4), stream_record_of(4, 3),
        stream_record_of(4, 4), stream_record_of(4, 5), stream_record_of(5, 4),
        stream_record_of(5, 5),
    )
    h.expect_late_records(left_late_tag, (Elem(1, "lhs"), 1))
    h.expect_late_records(right_late_tag, (Elem(2, "rhs"), 2))
    assert h.op.num_late_records_dropped == 0


# ------------------------------------------------------------------------ IntervalJoinITCase


class CombineToStringJoinFunction(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> list[str]:
        return [f"({left[0]},{left[1]}):({right[0]},{right[1]})"]


Event = tuple[str, Any]  # ("element", value-with-timestamp) or ("watermark", ts)


def ascending_source(*values: tuple[str, int]) -> list[Event]:
    """``fromData(...).assignTimestampsAndWatermarks(AscendingTuple2TimestampExtractor)``:
    timestamp ``f1``, watermark ``timestamp - 1`` after each element."""
    events: list[Event] = []
    for value in values:
        events.append(("element", value))
        events.append(("watermark", value[1] - 1))
    return events


def interleavings(one: list[Event], two: list[Event]) -> list[list[tuple[int, Event]]]:
    """Source one first, source two first, and alternating, each ending with both sources'
    ``MAX_WATERMARK``."""
    a = [(0, e) for e in one]
    b = [(1, e) for e in two]
    alternating = [x for pair in zip(a, b) for x in pair] + a[len(b):] + b[len(a):]
    end = [(0, ("watermark", MAX_LONG)), (1, ("watermark", MAX_LONG))]
    return [a + b + end, b + a + end, alternating + end]


def run_it_case(
    one: list[Event], two: list[Event], lower: int, upper: int,
    lower_inclusive: bool = True, upper_inclusive: bool = True,
) -> list[list[str]]:
    results = []
    for events in interleavings(one, two):
        op = IntervalJoinOperator(
            lower, upper, lower_inclusive, upper_inclusive, None, None,
            CombineToStringJoinFunction(), lambda t: t[0], lambda t: t[0],
        )
        h = Harness(op)
        for side, (kind, item) in events:
            if kind == "element":
                op.process_element(item, item[1], side)
                h._drain()
            else:
                h._watermark(side, item)
        h.no_late_records()
        assert op.holds_nothing() and op.state_size() == (0, 0)
        assert op.num_late_records_dropped == 0
        results.append(sorted(value for value, _ in h.records()))
    return results


def expect_in_any_order(results: list[list[str]], *expected: str) -> None:
    for result in results:
        assert result == sorted(expected)


def test_can_join_over_same_key() -> None:
    source = ascending_source(*[("key", i) for i in range(6)])
    expect_in_any_order(
        run_it_case(source, source, 0, 0),
        "(key,0):(key,0)", "(key,1):(key,1)", "(key,2):(key,2)", "(key,3):(key,3)",
        "(key,4):(key,4)", "(key,5):(key,5)",
    )


def test_joins_correctly_with_multiple_keys() -> None:
    source = ascending_source(
        ("key1", 0), ("key2", 1), ("key1", 2), ("key2", 3), ("key1", 4), ("key2", 5)
    )
    # if it were not keyed then the boundaries [0; 1] would lead to the pairs (1, 1),
    # (1, 2), (2, 2), (2, 3)..., so that this is not happening is what we are testing here
    expect_in_any_order(
        run_it_case(source, source, 0, 1),
        "(key1,0):(key1,0)", "(key2,1):(key2,1)", "(key1,2):(key1,2)", "(key2,3):(key2,3)",
        "(key1,4):(key1,4)", "(key2,5):(key2,5)",
    )


def collect_with_timestamps(*items: int | str) -> list[Event]:
    """A ``SourceFunction`` calling ``collectWithTimestamp(("key", n), n)`` for each number and
    ``emitWatermark(5)`` for ``"W5"``."""
    return [
        ("watermark", int(item[1:])) if isinstance(item, str) else ("element", ("key", item))
        for item in items
    ]


def test_bounded_unordered_streams_still_join_correctly() -> None:
    one = collect_with_timestamps(5, 1, 4, 3, 2, "W5", 9, 8, 7, 6)
    two = collect_with_timestamps(2, 1, 3, 4, 5, "W5", 8, 7, 9, 6)
    expect_in_any_order(
        run_it_case(one, two, -1, 1),
        "(key,1):(key,1)", "(key,1):(key,2)", "(key,2):(key,1)", "(key,2):(key,2)",
        "(key,2):(key,3)", "(key,3):(key,2)", "(key,3):(key,3)", "(key,3):(key,4)",
        "(key,4):(key,3)", "(key,4):(key,4)", "(key,4):(key,5)", "(key,5):(key,4)",
        "(key,5):(key,5)", "(key,5):(key,6)", "(key,6):(key,5)", "(key,6):(key,6)",
        "(key,6):(key,7)", "(key,7):(key,6)", "(key,7):(key,7)", "(key,7):(key,8)",
        "(key,8):(key,7)", "(key,8):(key,8)", "(key,8):(key,9)", "(key,9):(key,8)",
        "(key,9):(key,9)",
    )


def test_bounds_can_be_exclusive() -> None:
    source = ascending_source(("key", 0), ("key", 1), ("key", 2))
    expect_in_any_order(
        run_it_case(source, source, 0, 2, lower_inclusive=False, upper_inclusive=False),
        "(key,0):(key,1)", "(key,1):(key,2)",
    )


def test_bounds_can_be_inclusive() -> None:
    source = ascending_source(("key", 0), ("key", 1), ("key", 2))
    expect_in_any_order(
        run_it_case(source, source, 0, 2),
        "(key,0):(key,0)", "(key,0):(key,1)", "(key,0):(key,2)", "(key,1):(key,1)",
        "(key,1):(key,2)", "(key,2):(key,2)",
    )

