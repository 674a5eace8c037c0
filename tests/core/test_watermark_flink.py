"""Flink's ``BoundedOutOfOrdernessWatermarks`` (ported from ``BoundedOutOfOrdernessWatermarksTest``)
and the window boundaries it implies, replayed through the core harness."""

from __future__ import annotations

import pytest

from flinkwin import Duration, OutputTag, Time, TumblingEventTimeWindows, WatermarkStrategy
from flinkwin.errors import UnsupportedOperationError
from flinkwin.functions.builtin import sum_of
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MIN_LONG
from flinkwin.watermark import BoundedOutOfOrdernessWatermarks


def test_watermark_before_records() -> None:
    assert BoundedOutOfOrdernessWatermarks(10).current_watermark() == MIN_LONG


def test_watermark_after_event() -> None:
    generator = BoundedOutOfOrdernessWatermarks(10)
    generator.on_event(1337)
    assert generator.current_watermark() == 1326


def test_watermark_after_non_monotonous_events() -> None:
    generator = BoundedOutOfOrdernessWatermarks(10)
    for ts in (12345, 12300, 12340, 12280):
        generator.on_event(ts)
    assert generator.current_watermark() == 12334


def test_repeated_probe() -> None:
    generator = BoundedOutOfOrdernessWatermarks(10)
    generator.on_event(723456)
    generator.current_watermark()
    assert generator.current_watermark() == 723445


def test_monotonous_timestamps_trail_by_one_millisecond() -> None:
    generator = BoundedOutOfOrdernessWatermarks(0)  # forMonotonousTimestamps()
    generator.on_event(1_700_000_123_457)
    assert generator.current_watermark() == 1_700_000_123_456


# ----------------------------------------------------------------- window boundaries
# Window [S, E) off any round grid: tumbling 10 s with offset 3457 ms around 1_700_000_123_457.
SIZE, OFFSET, D, L = 10_000, 3_457, 2_000, 1_000
E = 1_700_000_133_457
S = E - SIZE
LATE = OutputTag("late")


def ev(ts: int, v: int) -> dict[str, int | str]:
    return {"k": "a", "ts": ts, "v": v}


#: One element per step; each is judged under the watermark of the steps before it, which is
#: Flink's ``max - D - 1`` (``MIN_LONG`` before any element).
BOUNDARY_STEPS = [
    ev(S, 1),
    ev(E - 1, 2),
    ev(E + D - 1, 4),           # watermark becomes E - 2: [S, E) stays open
    ev(E - 1, 8),               # on time
    ev(E + D, 16),              # watermark becomes E - 1: [S, E) closes
    ev(E + L + D - 1, 32),      # watermark E + L - 2: one below the cleanup time E - 1 + L
    ev(E - 1, 64),              # within the allowed lateness: fires [S, E) again
    ev(E + L + D, 128),         # watermark E + L - 1: the cleanup time
    ev(E - 1, 256),             # late: exactly at the allowed-lateness limit
    ev(E + SIZE + D, 512),      # watermark E + SIZE - 1 closes [E, E + SIZE)
]

#: Flink's arithmetic, written out: the watermark each step is judged under...
BOUNDARY_WATERMARKS = [
    MIN_LONG, S - D - 1, E - 1 - D - 1, E - 2, E - 2, E - 1, E + L - 2, E + L - 2,
    E + L - 1, E + L - 1,
]
#: ...the watermark after the last step...
FINAL_WATERMARK = E + SIZE - 1
#: ...what fires at the watermark before step i (index i) or at the final watermark (index
#: len(BOUNDARY_STEPS)); and the late elements, by step.
BOUNDARY_MAIN = {5: [ev(S, 11)], 6: [ev(S, 75)], 10: [ev(E + D - 1, 180)]}
BOUNDARY_LATE = {8: [ev(E - 1, 256)]}


def boundary_harness() -> WindowOperatorHarness:
    return WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.milliseconds(SIZE), Time.milliseconds(OFFSET)),
        sum_of("v"), key_field="k", allowed_lateness=L, late_output_tag=LATE,
    )


def test_the_expected_watermarks_are_flinks_generator() -> None:
    generator = BoundedOutOfOrdernessWatermarks(D)
    for step, expected in zip(BOUNDARY_STEPS, BOUNDARY_WATERMARKS):
        assert generator.current_watermark() == expected
        generator.on_event(step["ts"])  # type: ignore[arg-type]
    assert generator.current_watermark() == FINAL_WATERMARK


def test_boundaries_through_the_harness() -> None:
    """An element at ``end + D - 1`` leaves the window open, one at ``end + D`` closes it; a
    late element one below the lateness limit fires again, one at the limit is late."""
    harness = boundary_harness()
    generator = BoundedOutOfOrdernessWatermarks(D)
    main: dict[int, list[object]] = {}
    late: dict[int, list[object]] = {}
    for i, step in enumerate([*BOUNDARY_STEPS, None]):
        harness.clear_output()
        harness.process_watermark(generator.current_watermark())
        if step is not None:
            harness.process_element(step, step["ts"])  # type: ignore[arg-type]
            generator.on_event(step["ts"])  # type: ignore[arg-type]
        if harness.output():
            main[i] = [dict(r.asDict()) for r in harness.output()]
        if harness.side_output(LATE):
            late[i] = [dict(r.asDict()) for r in harness.side_output(LATE)]
    assert main == BOUNDARY_MAIN
    assert late == BOUNDARY_LATE
    assert harness.num_late_records_dropped == 0


def test_no_watermarks_generator_stays_at_long_min_value() -> None:
    """PyFlink's ``WatermarkStrategy.no_watermarks()`` (Flink's ``NoWatermarksGenerator``):
    events do not move the watermark; the strategy still takes a timestamp assigner."""
    strategy = WatermarkStrategy.no_watermarks().with_timestamp_assigner("ts")
    assert strategy.timestamp_column == "ts" and not strategy.emits_watermarks
    assert WatermarkStrategy.noWatermarks().emits_watermarks is False
    generator = strategy.create_watermark_generator()
    for ts in (5, 1_700_000_000_000, 3):
        generator.on_event(ts)
    assert generator.current_watermark() == MIN_LONG
    assert "no watermarks" in repr(strategy)
    assert WatermarkStrategy.for_monotonous_timestamps().emits_watermarks


def test_with_watermark_alignment_is_refused_naming_why() -> None:
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(20))
    with pytest.raises(UnsupportedOperationError, match="pauses a source split"):
        strategy.with_watermark_alignment("group", Duration.of_seconds(20))


def test_a_custom_watermark_generator_is_refused_naming_the_strategies_that_work() -> None:
    """Java's ``WatermarkStrategy.forGenerator(ctx -> new MyGenerator())``: an error saying why,
    not an ``AttributeError``."""
    for build in (WatermarkStrategy.for_generator, WatermarkStrategy.forGenerator):
        with pytest.raises(UnsupportedOperationError, match="for_bounded_out_of_orderness"):
            build(lambda ctx: None)
