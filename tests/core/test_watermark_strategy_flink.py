"""Flink's ``WatermarkStrategyTest`` and ``WatermarksWithIdlenessTest`` (flink-core,
``org.apache.flink.api.common.eventtime``), ported to flinkwin's ``WatermarkStrategy`` and to
the idleness timer of a stream graph's sources (``GraphOperator``), without Spark.

flinkwin has no ``WatermarksWithIdleness`` generator object: ``with_idleness`` is a setting of
the strategy, and a graph's operator (``flinkwin/operator/graph.py``) keeps, per source, the
processing time of its last micro-batch with elements. Flink's ``IdlenessTimer`` starts
counting at a periodic check that sees no new activity and declares the input idle once
*more* than the timeout has passed (``now - startOfInactivity > timeout``); in flinkwin the
periodic checks are the micro-batches (``docs/spark-semantics.md``, "Idle sources"): a source
is idle at a micro-batch more than ``timeout`` after its last one with elements (the first
micro-batch counts as activity, as Flink's first check starts the timer). The timer tests
observe the ``IdlenessTimer``'s answer (``checkIfIdle()``) as the idleness of the source's
channel that the graph's valves read, and once through a union's window.

Not ported: testLambdaTimestampAssignerSupplier, testClassTimestampAssignerUsingSupplier
(``TimestampAssignerSupplier``, a Java-only form PyFlink does not have) and the
``ClosureCleaner`` checks (Java serialization); testWithWatermarkAlignment: flinkwin refuses
``with_watermark_alignment`` (``tests/core/test_watermark_flink.py``).
"""

from __future__ import annotations

from typing import Any

import pytest
from graph_frames import frame, source

from flinkwin import Duration, Time, TumblingEventTimeWindows, WatermarkStrategy
from flinkwin.functions.builtin import sum_of
from flinkwin.operator import WindowOperator
from flinkwin.operator.graph import OPERATOR, UNION, GraphOperator, GraphPlan, NodeSpec
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.timestamps import TimestampAssigner
from flinkwin.watermark import BoundedOutOfOrdernessWatermarks


# ------------------------------------------------------------------ WatermarkStrategyTest
def test_default_timestamp_assigner() -> None:
    """Flink: WatermarkStrategyTest#testDefaultTimeStampAssigner: without
    ``withTimestampAssigner`` the strategy keeps the records' own timestamps (Flink's
    ``RecordTimestampAssigner``): flinkwin's strategy names no timestamp source."""
    strategy = WatermarkStrategy.for_monotonous_timestamps()
    assert strategy.timestamp_column is None
    assert isinstance(strategy.create_watermark_generator(), BoundedOutOfOrdernessWatermarks)


def test_lambda_timestamp_assigner() -> None:
    """Flink: WatermarkStrategyTest#testLambdaTimestampAssigner"""
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda event, timestamp: 42)
    assert strategy.timestamp_column.extract_timestamp(None, 13) == 42


class FortyTwo(TimestampAssigner):
    """The test's ``TestTimestampAssigner`` / anonymous ``SerializableTimestampAssigner``."""

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return 42


def test_anonymous_inner_timestamp_assigner() -> None:
    """Flink: WatermarkStrategyTest#testAnonymousInnerTimestampAssigner"""
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(FortyTwo())
    assert strategy.timestamp_column.extract_timestamp(None, 13) == 42


def test_class_timestamp_assigner() -> None:
    """Flink: WatermarkStrategyTest#testClassTimestampAssigner (Java's ``extractTimestamp``
    name answers too)."""
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(FortyTwo())
    assert strategy.timestamp_column.extractTimestamp(None, 13) == 42


def test_with_idleness_helper() -> None:
    """Flink: WatermarkStrategyTest#testWithIdlenessHelper: ``withIdleness`` keeps the default
    timestamp assigner and the base generator, and adds the idleness timeout (Flink wraps
    the generator in ``WatermarksWithIdleness``)."""
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_idleness(
        Duration.of_millis(7 * 24 * 3_600_000))
    assert strategy.timestamp_column is None
    assert strategy.idle_timeout_ms == 7 * 24 * 3_600_000
    generator = strategy.create_watermark_generator()
    generator.on_event(10)
    assert generator.current_watermark() == 9


def test_with_idleness_and_timestamp_assigner_in_either_order_keep_both() -> None:
    """Flink's ``WatermarkStrategyWithIdleness.withTimestampAssigner`` keeps the idleness, and
    ``withIdleness`` on a strategy with an assigner keeps the assigner (Flink:
    WatermarkStrategyTest#testWithWatermarkAlignment mixes builders so)."""
    one = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(5)) \
        .with_idleness(Duration.of_millis(200)).with_timestamp_assigner("ts")
    other = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(5)) \
        .with_timestamp_assigner("ts").with_idleness(Duration.of_millis(200))
    for strategy in (one, other):
        assert (strategy.timestamp_column, strategy.idle_timeout_ms,
                strategy.out_of_orderness_ms) == ("ts", 200, 5)


# ------------------------------------------------------------- WatermarksWithIdlenessTest
@pytest.mark.parametrize("timeout", [0, -1], ids=["zero", "negative"])
def test_zero_and_negative_timeout_are_refused(timeout: int) -> None:
    """Flink: WatermarksWithIdlenessTest#testZeroTimeout, #testNegativeTimeout:
    ``IllegalArgumentException`` (``WatermarkStrategy.withIdleness`` checks it too, "idleTimeout
    must be greater than zero"). flinkwin took both, and a timeout of 0 made the source idle
    in every micro-batch, even one bringing its elements: it never held a union back."""
    with pytest.raises(ValueError, match="greater than zero"):
        WatermarkStrategy.for_monotonous_timestamps().with_idleness(Duration.of_millis(timeout))


INFO = TaskInfo("Graph", 0, 1, 1)






def build_window(task_info: TaskInfo) -> WindowOperator:
    return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), sum_of("v"),
                          key_selector="k", task_info=task_info)


class Timer:
    """Source 1 (with ``withIdleness(timeout)``) and source 0 (without) in a union's window:
    ``checkIfIdle()`` is the idleness of source 1's channel at a micro-batch at ``now``."""

    def __init__(self, timeout_ms: int) -> None:
        nodes = (NodeSpec("union", UNION, ((("source", 0), 0), (("source", 1), 0))),
                 NodeSpec("window", OPERATOR, ((("node", 0), 0),), build=build_window))
        self.op = GraphOperator(GraphPlan((source(0), source(1, idle_timeout_ms=timeout_ms)), nodes,
                                          ("node", 1)), INFO)
        self.now = 1_000

    def batch(self, rows: list[tuple[int, str, int]], stamps: list[int]) -> None:
        """A micro-batch at ``now`` with ``rows`` (source 1's are its activity)."""
        self.op.advance_processing_time(self.now)
        self.op.process_batch(frame(rows), stamps)

    def advance(self, ms: int) -> None:
        """``clock.advanceTime(ms)``"""
        self.now += ms

    def check_if_idle(self) -> bool:
        """A micro-batch without elements at ``now``; whether source 1 is idle there."""
        self.batch([], [])
        return self.op._source_clocks(self.now)[("source", 1)][1]

    def activity(self) -> None:
        """``timer.activity()``: an element of source 1 in a micro-batch at ``now``."""
        self.batch([(1, "a", 0)], [0])


def idle_timer(timeout_ms: int) -> Timer:
    """``createTimerAndMakeIdle``: the timer started, then idle after ``timeout + 1``."""
    timer = Timer(timeout_ms)
    assert not timer.check_if_idle()  # start timer
    timer.advance(timeout_ms + 1)
    assert timer.check_if_idle()
    return timer


def test_initially_active() -> None:
    """Flink: WatermarksWithIdlenessTest#testInitiallyActive"""
    assert not Timer(10).check_if_idle()


def test_idle_without_events() -> None:
    """Flink: WatermarksWithIdlenessTest#testIdleWithoutEvents"""
    timer = Timer(10)
    timer.check_if_idle()  # start timer
    timer.advance(11)
    assert timer.check_if_idle()


def test_not_idle_at_exactly_the_timeout() -> None:
    """Flink's ``IdlenessTimer.checkIfIdle`` is ``now - startOfInactivity > timeout``, with
    the inactivity starting no earlier than the last activity: a source is not idle yet
    exactly ``timeout`` after its last element (flinkwin took it as idle there, ``>=``)."""
    timer = Timer(10)
    timer.check_if_idle()  # start timer
    timer.advance(10)
    assert not timer.check_if_idle()
    timer.advance(1)
    assert timer.check_if_idle()
    timer.activity()
    timer.advance(10)
    assert not timer.check_if_idle()


def test_repeated_idle_checks() -> None:
    """Flink: WatermarksWithIdlenessTest#testRepeatedIdleChecks"""
    timer = idle_timer(122)
    assert timer.check_if_idle()
    timer.advance(100)
    assert timer.check_if_idle()


def test_active_after_idleness() -> None:
    """Flink: WatermarksWithIdlenessTest#testActiveAfterIdleness"""
    timer = idle_timer(10)
    timer.activity()
    assert not timer.check_if_idle()


def test_idle_active_idle() -> None:
    """Flink: WatermarksWithIdlenessTest#testIdleActiveIdle"""
    timer = idle_timer(122)
    timer.activity()  # active again
    assert not timer.check_if_idle()
    timer.check_if_idle()  # start timer
    timer.advance(123)
    assert timer.check_if_idle()


def test_the_idle_source_stops_holding_the_union_back_only_past_the_timeout() -> None:
    """What the timer decides, through a union's window (Flink's ``WatermarksWithIdleness``
    marks the input idle, and the union's ``StatusWatermarkValve`` leaves it out): source 1
    stops at 2 (watermark 1), source 0 goes on; window [0, 10) fires only at the first
    micro-batch more than the timeout (10 ms) after source 1's last element."""
    timer = Timer(10)
    timer.batch([(0, "a", 1), (1, "a", 2)], [3, 2])
    window = timer.op.operators[1]
    assert window is not None
    for advance, ts in ((5, 20), (5, 30)):  # at +5 and +10: source 1 active, holding at 1
        timer.advance(advance)
        timer.batch([(0, "a", 4)], [ts])
        assert window.current_watermark == 1
        assert timer.op.drain_output() == []
    timer.advance(1)  # +11: idle, the union follows source 0's 29
    timer.batch([(0, "a", 8)], [40])
    assert window.current_watermark == 29
    assert [(tuple(v), ts) for v, ts in timer.op.drain_output()] == [
        (("a", 3), 9), (("a", 4), 29)]
