"""Flink's ``StatusWatermarkValve`` (ported from ``StatusWatermarkValveTest``, Flink 2.x): each
input call's output checked to be exactly what Flink's valve emits, and nothing else; and
``CombinedWatermarkStatus`` as a two-input operator combines its inputs."""

from __future__ import annotations

from flinkwin.operator.watermark_valve import (
    ACTIVE,
    IDLE,
    StatusWatermarkValve,
    combined_watermark,
)
from flinkwin.time import MIN_LONG


def wm(t: int) -> list[tuple[str, object]]:
    return [("watermark", t)]


def status(s: str) -> list[tuple[str, object]]:
    return [("status", s)]


def test_single_input_increasing_watermarks() -> None:
    valve = StatusWatermarkValve.of(1)
    assert valve.input_watermark(0, 0) == wm(0)
    assert valve.input_watermark(25, 0) == wm(25)


def test_single_input_decreasing_watermarks_yields_no_output() -> None:
    valve = StatusWatermarkValve.of(1)
    assert valve.input_watermark(25, 0) == wm(25)
    assert valve.input_watermark(18, 0) == []
    assert valve.input_watermark(42, 0) == wm(42)


def test_single_input_watermark_status_toggling() -> None:
    valve = StatusWatermarkValve.of(1)
    assert valve.input_status(False, 0) == []  # channels start active
    assert valve.input_status(True, 0) == status(IDLE)
    assert valve.input_status(True, 0) == []
    assert valve.input_status(False, 0) == status(ACTIVE)


def test_single_input_watermarks_intact_during_idleness() -> None:
    valve = StatusWatermarkValve.of(1)
    assert valve.input_watermark(25, 0) == wm(25)
    assert valve.input_status(True, 0) == status(IDLE)
    assert valve.input_watermark(50, 0) == []
    assert valve.watermarks[0] == 25
    assert valve.input_status(False, 0) == status(ACTIVE)
    assert valve.input_watermark(50, 0) == wm(50)


def test_multiple_input_yields_watermark_only_when_all_channels_receives_watermarks() -> None:
    valve = StatusWatermarkValve.of(3)
    assert valve.input_watermark(0, 0) == [] and valve.input_watermark(0, 1) == []
    assert valve.input_watermark(0, 2) == wm(0)


def test_multiple_input_increasing_watermarks() -> None:
    valve = StatusWatermarkValve.of(3)
    valve.input_watermark(0, 0)
    valve.input_watermark(0, 1)
    assert valve.input_watermark(0, 2) == wm(0)
    assert valve.input_watermark(12, 0) + valve.input_watermark(8, 2) + \
        valve.input_watermark(10, 2) == []
    assert valve.input_watermark(15, 1) == wm(10)
    assert valve.input_watermark(17, 2) == wm(12)
    assert valve.input_watermark(20, 0) == wm(15)


def test_multiple_input_decreasing_watermarks_yields_no_output() -> None:
    valve = StatusWatermarkValve.of(3)
    valve.input_watermark(25, 0)
    valve.input_watermark(10, 1)
    assert valve.input_watermark(17, 2) == wm(10)
    assert valve.input_watermark(12, 0) + valve.input_watermark(8, 1) + \
        valve.input_watermark(15, 2) == []


def test_multiple_input_watermark_status_toggling() -> None:
    valve = StatusWatermarkValve.of(2)
    assert valve.input_status(False, 0) + valve.input_status(False, 1) == []
    assert valve.input_status(True, 1) == []
    assert valve.input_status(True, 0) == status(IDLE)  # now all idle
    assert valve.input_status(True, 0) + valve.input_status(True, 1) == []
    assert valve.input_status(False, 1) == status(ACTIVE)
    assert valve.input_status(False, 0) == []


def test_multiple_input_watermark_advancing_with_partially_idle_channels() -> None:
    valve = StatusWatermarkValve.of(3)
    assert valve.input_watermark(15, 0) + valve.input_watermark(10, 1) == []
    assert valve.input_status(True, 2) == wm(10)
    assert valve.input_watermark(18, 1) == wm(15)
    assert valve.input_watermark(20, 0) == wm(18)


def test_multiple_input_watermark_advancing_as_channels_individually_become_idle() -> None:
    valve = StatusWatermarkValve.of(3)
    valve.input_watermark(25, 0)
    valve.input_watermark(10, 1)
    assert valve.input_watermark(17, 2) == wm(10)
    assert valve.input_status(True, 1) == wm(17)
    assert valve.input_status(True, 2) == wm(25)


def test_multiple_input_flush_max_watermark_and_watermark_status_once_all_inputs_become_idle(
) -> None:
    valve = StatusWatermarkValve.of(3)
    valve.input_watermark(10, 0)
    valve.input_watermark(5, 1)
    assert valve.input_watermark(3, 2) == wm(3)
    assert valve.input_status(True, 0) + valve.input_status(True, 1) == []
    assert valve.input_status(True, 2) == wm(10) + status(IDLE)


def test_multiple_input_watermark_realignment_after_resume_active() -> None:
    valve = StatusWatermarkValve.of(3)
    valve.input_watermark(10, 0)
    valve.input_watermark(7, 1)
    assert valve.input_watermark(3, 2) == wm(3)
    assert valve.input_status(True, 2) == wm(7)
    # active again behind the valve's output: not aligned until it catches up
    assert valve.input_status(False, 2) == [] and not valve.aligned[2]
    assert valve.input_watermark(5, 2) == [] and valve.watermarks[2] == 5
    assert valve.input_watermark(9, 2) == [] and valve.aligned[2]
    assert valve.input_watermark(12, 1) == wm(9)


def test_no_output_when_all_active_channels_are_unaligned() -> None:
    valve = StatusWatermarkValve.of(3)
    valve.input_watermark(10, 0)
    valve.input_watermark(7, 1)
    assert valve.input_status(True, 2) == wm(7)
    assert valve.input_status(False, 2) == []
    assert valve.input_status(True, 0) + valve.input_status(True, 1) == []


def test_a_valve_survives_its_json_form() -> None:
    valve = StatusWatermarkValve.of(3)
    valve.input_watermark(10, 0)
    valve.input_watermark(7, 1)
    valve.input_status(True, 2)
    valve.input_status(False, 2)
    again = StatusWatermarkValve.from_json(valve.to_json())
    assert again == valve
    assert again.input_watermark(8, 2) == [] and again.input_watermark(12, 1) == wm(8)


def test_a_two_input_operator_takes_the_minimum_of_its_active_inputs_and_stays_when_both_idle(
) -> None:
    # AbstractStreamOperator.processWatermark1/2 with CombinedWatermarkStatus: no alignment, no
    # flush when every input is idle
    assert combined_watermark([(MIN_LONG, False), (MIN_LONG, False)], MIN_LONG) == MIN_LONG
    assert combined_watermark([(10, False), (3, False)], MIN_LONG) == 3
    assert combined_watermark([(10, False), (3, True)], 3) == 10
    assert combined_watermark([(10, True), (3, True)], 10) == 10  # all idle: stays
    assert combined_watermark([(10, True), (5, False)], 10) == 10  # never goes back
    assert combined_watermark([(10, True), (12, False)], 10) == 12
