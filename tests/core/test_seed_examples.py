"""The worked examples of the seed documents (``/work/shared/seeds``), run through the harness.

* seed 004: a 5-minute tumbling event-time window with ``ContinuousEventTimeTrigger.of(2 min)``
  and values 1, 2, 3, 2 at 20:01..20:04 emits 3 then 8; wrapped in ``PurgingTrigger`` it emits
  3 then 5.
* seed 003: ``countWindow(4, 2)`` (GlobalWindows + CountEvictor.of(4) + CountTrigger.of(2)) keeps
  the newest 4 elements and fires every 2; ``countWindow(n)`` is GlobalWindows +
  PurgingTrigger.of(CountTrigger.of(n)).
* seed 004: the car example, GlobalWindows + DeltaTrigger (+ TimeEvictor) + ``max("speed")``.
* seed 001: the custom ``ThirtySecondsWindows`` assigner and ``OneSecondIntervalTrigger``.

Expected values are worked out by hand from Flink's semantics (comments show the derivation),
never by running flinkwin.
"""

from __future__ import annotations

import datetime
from typing import Any

from flinkwin import (
    ContinuousEventTimeTrigger,
    CountEvictor,
    CountTrigger,
    DeltaTrigger,
    EventTimeTrigger,
    GlobalWindows,
    ProcessWindowFunction,
    PurgingTrigger,
    Time,
    TimeEvictor,
    TimeWindow,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    Types,
    ValueStateDescriptor,
    WindowAssigner,
)
from flinkwin.functions.builtin import max_of, sum_of
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MAX_LONG

MINUTE = 60_000

# ---------------------------------------------------------------------------------------------
#  Seed 004: ContinuousEventTimeTrigger (3 then 8) and PurgingTrigger (3 then 5)
# ---------------------------------------------------------------------------------------------

# 2020-01-01 20:00:00 UTC; 20:00 is an even minute since the epoch, so the 2-minute interval
# boundaries fall on 20:00, 20:02, 20:04 as in the seed's figure.
T2000 = int(datetime.datetime(2020, 1, 1, 20, 0, tzinfo=datetime.timezone.utc).timestamp() * 1000)
WINDOW_MAX_TS = T2000 + 5 * MINUTE - 1  # window [20:00, 20:05) -> max timestamp 20:04:59.999


def _seed004_run(trigger: Trigger) -> tuple[WindowOperatorHarness, list[list[Any]]]:
    """Values 1, 2, 3, 2 at 20:01..20:04; after each element the watermark moves to its
    timestamp. Returns the harness and the sums emitted after each step."""
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.minutes(5)),
        sum_of("value"),
        key_field="key",
        trigger=trigger,
    )
    per_step = []
    for minute, value in zip([1, 2, 3, 4], [1, 2, 3, 2]):
        ts = T2000 + minute * MINUTE
        before = len(h.output())
        h.process_element({"key": "k", "value": value}, ts)
        h.process_watermark(ts)
        per_step.append([r["value"] for r in h.output()[before:]])
    return h, per_step


def test_seed004_continuous_event_time_trigger_emits_3_then_8():
    h, per_step = _seed004_run(ContinuousEventTimeTrigger.of(Time.minutes(2)))
    # 20:01: state 1, first fire time registered at 20:02; 20:02: state 3, timer fires -> 3;
    # 20:03: state 6, no timer; 20:04: state 8, timer fires -> 8 (an updatable sink shows 3 -> 8).
    assert per_step == [[], [3], [], [8]]
    assert h.output_with_timestamps() == [
        ({"key": "k", "value": 3}, WINDOW_MAX_TS),
        ({"key": "k", "value": 8}, WINDOW_MAX_TS),
    ]


def test_seed004_continuous_trigger_fires_again_at_window_end_with_full_sum():
    # Flink's ContinuousEventTimeTrigger also registers window.maxTimestamp() and FIREs there
    # ("time == window.maxTimestamp() -> FIRE"); the next interval timer (20:06) is capped at
    # the max timestamp, so the same single timer fires once more with the whole sum 8.
    h, _ = _seed004_run(ContinuousEventTimeTrigger.of(Time.minutes(2)))
    h.process_watermark(WINDOW_MAX_TS)
    assert h.output_with_timestamps() == [
        ({"key": "k", "value": 3}, WINDOW_MAX_TS),
        ({"key": "k", "value": 8}, WINDOW_MAX_TS),
        ({"key": "k", "value": 8}, WINDOW_MAX_TS),
    ]
    # the window is cleaned up at its max timestamp: nothing fires afterwards, no state is left
    h.process_watermark(T2000 + 60 * MINUTE)
    assert len(h.output()) == 3
    assert h.num_event_time_timers() == 0
    assert h.num_keyed_state_entries() == 0


def test_seed004_purging_continuous_trigger_emits_3_then_5():
    h, per_step = _seed004_run(PurgingTrigger.of(ContinuousEventTimeTrigger.of(Time.minutes(2))))
    # 20:02 fires 1+2 = 3 and purges; 20:03 and 20:04 accumulate 3+2 = 5, fired at 20:04.
    assert per_step == [[], [3], [], [5]]
    # append-only sinks can sum the deltas: 3 + 5 == 8
    assert sum(r["value"] for r in h.output()) == 8


def test_seed004_purging_continuous_trigger_emits_nothing_at_window_end():
    # At the window end the trigger FIREs (and purges) again, but the state was purged at 20:04
    # and nothing arrived since: a FIRE on an empty window emits nothing.
    h, _ = _seed004_run(PurgingTrigger.of(ContinuousEventTimeTrigger.of(Time.minutes(2))))
    h.process_watermark(WINDOW_MAX_TS)
    assert h.output_with_timestamps() == [
        ({"key": "k", "value": 3}, WINDOW_MAX_TS),
        ({"key": "k", "value": 5}, WINDOW_MAX_TS),
    ]
    assert h.num_event_time_timers() == 0
    assert h.num_keyed_state_entries() == 0


# ---------------------------------------------------------------------------------------------
#  Seed 003: countWindow(4, 2) and countWindow(n)
# ---------------------------------------------------------------------------------------------

# Seed 003's figure is not in the text, but its sentence fixes the sequence: "the first trigger
# fires when element 5 enters" (5 is the 2nd element), "the third trigger fires when element 2
# enters (the 6th element), evicting 5 and 2" (the two oldest: so the 1st element is 2), "sums the
# remaining 4 elements (22) and keeps 2, 4, 9, 7" (listed newest first as in the figure, which
# flows right to left: 3rd..6th elements are 7, 9, 4, 2; 7 + 9 + 4 + 2 == 22).
SEED003_ELEMENTS = [2, 5, 7, 9, 4, 2]


def _count_window(size: int, slide: int | None, function: Any) -> WindowOperatorHarness:
    """``keyBy("key").countWindow(size[, slide])`` exactly as Flink's KeyedStream builds it."""
    if slide is None:
        return WindowOperatorHarness(
            GlobalWindows.create(),
            function,
            key_field="key",
            trigger=PurgingTrigger.of(CountTrigger.of(size)),
        )
    return WindowOperatorHarness(
        GlobalWindows.create(),
        function,
        key_field="key",
        evictor=CountEvictor.of(size),
        trigger=CountTrigger.of(slide),
    )


def _feed(h: WindowOperatorHarness, values: list[int], key: str = "k", t0: int = 0) -> list[Any]:
    """Feed values one by one; return the outputs emitted after each element."""
    per_element = []
    for i, v in enumerate(values):
        before = len(h.output())
        h.process_element({"key": key, "value": v}, t0 + i)
        per_element.append(h.output()[before:])
    return per_element


def test_seed003_sliding_count_window_4_2_sums_newest_four_every_two():
    h = _count_window(4, 2, sum_of("value"))
    per_element = _feed(h, SEED003_ELEMENTS)
    sums = [[r["value"] for r in out] for out in per_element]
    # fires at the 2nd, 4th and 6th element: 2+5 = 7, 2+5+7+9 = 23, and with 6 elements the
    # CountEvictor drops the oldest two (2 and 5): 7+9+4+2 = 22 (the seed's number)
    assert sums == [[], [7], [], [23], [], [22]]
    # output timestamp of a GlobalWindow firing is its max timestamp, Long.MAX_VALUE
    assert [ts for _, ts in h.output_with_timestamps()] == [MAX_LONG] * 3


class _Contents(ProcessWindowFunction):
    """Emits the values the window function sees."""

    def process(self, key, context, elements):
        return [[e["value"] for e in elements]]


def test_seed003_sliding_count_window_keeps_2_4_9_7_for_the_next_logical_window():
    h = _count_window(4, 2, _Contents())
    _feed(h, SEED003_ELEMENTS)
    # the window function saw the newest 4 at each firing (evict-before)
    assert h.output() == [[2, 5], [2, 5, 7, 9], [7, 9, 4, 2]]
    # the evicted elements are gone for good: the next firing sees 7, 9, 4, 2 plus the two
    # new ones, evicts the oldest two again and keeps the newest 4 (4, 2, 1, 3)
    h.clear_output()
    _feed(h, [1, 3], t0=100)
    assert h.output() == [[4, 2, 1, 3]]


def test_seed003_sliding_count_window_is_per_key():
    h = _count_window(4, 2, sum_of("value"))
    for i, v in enumerate(SEED003_ELEMENTS):
        h.process_element({"key": "a", "value": v}, i)
        h.process_element({"key": "b", "value": 10 * v}, i)
    assert h.output() == [
        {"key": "a", "value": 7},
        {"key": "b", "value": 70},
        {"key": "a", "value": 23},
        {"key": "b", "value": 230},
        {"key": "a", "value": 22},
        {"key": "b", "value": 220},
    ]


def test_seed003_tumbling_count_window_fires_and_purges_every_n():
    h = _count_window(3, None, sum_of("value"))
    per_element = _feed(h, [1, 2, 3, 4, 5, 6, 7, 8])
    sums = [[r["value"] for r in out] for out in per_element]
    # every 3rd element FIRE_AND_PURGE: windows {1,2,3}, {4,5,6}; 7, 8 wait for a 3rd element
    assert sums == [[], [], [6], [], [], [15], [], []]
    h2 = _count_window(3, None, _Contents())
    _feed(h2, [1, 2, 3, 4, 5, 6, 7, 8, 9])
    assert h2.output() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]  # no overlap between windows


def test_seed003_count_windows_never_fire_on_watermarks():
    # GlobalWindows is not an event-time assigner and its window never ends: the end-of-input
    # watermark neither fires the pending elements nor cleans them up.
    h = _count_window(4, 2, sum_of("value"))
    _feed(h, [1, 2, 3])
    h.process_watermark(MAX_LONG)
    assert h.output() == [{"key": "k", "value": 3}]
    assert h.num_event_time_timers() == 0


# ---------------------------------------------------------------------------------------------
#  Seed 004: the car example (GlobalWindows + DeltaTrigger (+ TimeEvictor) + max("speed"))
# ---------------------------------------------------------------------------------------------

# Each car reports once a minute: (car_id, speed km/h, distance m, ts). The speed is the speed
# driven during the past minute, so the distance grows by speed * 1000 / 60 m per report (all
# speeds are multiples of 6, so distances are whole hundreds of metres).
CAR1_SPEEDS = [60, 90, 132, 108, 96, 90, 84, 78, 72, 72, 66, 72, 78, 84,
               90, 96, 102, 108, 114, 108, 102, 120, 90, 84, 96, 138, 102, 90]
CAR2_SPEEDS = [48, 54, 60, 78, 60, 54, 48, 60, 72, 66, 60, 54, 60, 66,
               72, 60, 54, 48, 60, 54, 60, 66, 60, 54, 48, 54]


def _reports(car_id: int, speeds: list[int]) -> list[dict[str, int]]:
    distance = 0
    out = []
    for minute, speed in enumerate(speeds):
        distance += speed * 1000 // 60
        out.append({"car_id": car_id, "speed": speed, "distance": distance, "ts": minute * MINUTE})
    return out


CAR1 = _reports(1, CAR1_SPEEDS)
CAR2 = _reports(2, CAR2_SPEEDS)


def _car_stream() -> list[dict[str, int]]:
    """Both cars interleaved in time order (car 1 first within a minute)."""
    out = []
    for minute in range(max(len(CAR1), len(CAR2))):
        for car in (CAR1, CAR2):
            if minute < len(car):
                out.append(car[minute])
    return out


def test_car_dataset_is_what_the_expectations_were_worked_out_on():
    # distances (m) per minute; the hand-worked expectations below rely on them
    assert [r["distance"] for r in CAR1] == [
        1000, 2500, 4700, 6500, 8100, 9600, 11000, 12300, 13500, 14700, 15800, 17000, 18300,
        19700, 21200, 22800, 24500, 26300, 28200, 30000, 31700, 33700, 35200, 36600, 38200,
        40500, 42200, 43700,
    ]
    assert [r["distance"] for r in CAR2] == [
        800, 1700, 2700, 4000, 5000, 5900, 6700, 7700, 8900, 10000, 11000, 11900, 12900, 14000,
        15200, 16200, 17100, 17900, 18900, 19800, 20800, 21900, 22900, 23800, 24600, 25500,
    ]


def _delta(old: Any, new: Any) -> float:
    return new.distance - old.distance


def _run_cars(evictor: Any = None) -> WindowOperatorHarness:
    h = WindowOperatorHarness(
        GlobalWindows.create(),
        max_of("speed"),
        key_field="car_id",
        trigger=DeltaTrigger.of(10000, _delta),
        evictor=evictor,
    )
    for r in _car_stream():
        h.process_element(r, r["ts"])
        h.process_watermark(r["ts"])
    return h


# Hand derivation (Flink: the element is added to the window state before the trigger sees it;
# the first element only becomes the reference; FIRE when distance - reference > 10000, strictly;
# the fired element becomes the new reference; nothing purges the GlobalWindow).
#
# car 1: reference min 0 (1000 m). min 6: 11000 - 1000 = 10000, not > 10000. min 7 (12300 m):
#   11300 -> FIRE #1, reference 12300. min 15 (22800 m): 10500 -> FIRE #2, reference 22800
#   (min 14: 21200 - 12300 = 8900). min 21 (33700 m): 10900 -> FIRE #3 (min 20: 8900), reference
#   33700. min 27 (43700 m): exactly 10000 -> no fire; the 138 km/h of min 25 is never emitted.
# car 2: reference min 0 (800 m). min 10 (11000 m): 10200 -> FIRE #1 (min 9: 9200), reference
#   11000. min 21 (21900 m): 10900 -> FIRE #2 (min 20: 9800), reference 21900; min 25: 3600.
#
# max("speed") is Flink's non-"By" aggregation: the first element of the window with the speed
# field replaced by the maximum.


def test_car_delta_trigger_max_speed_without_purge_is_cumulative():
    h = _run_cars()
    first1, first2 = CAR1[0], CAR2[0]
    # No PurgingTrigger: the window keeps everything since the start, so every firing emits the
    # maximum over all reports so far (car 1: 132 from min 2; car 2: 78 from min 3), as
    # Flink does for the seed's code - the seed's "section maximum" needs a purge (see below).
    assert h.output_with_timestamps() == [
        ((1, 132, first1["distance"], first1["ts"]), MAX_LONG),  # car 1 min 7
        ((2, 78, first2["distance"], first2["ts"]), MAX_LONG),  # car 2 min 10
        ((1, 132, first1["distance"], first1["ts"]), MAX_LONG),  # car 1 min 15
        ((1, 132, first1["distance"], first1["ts"]), MAX_LONG),  # car 1 min 21
        ((2, 78, first2["distance"], first2["ts"]), MAX_LONG),  # car 2 min 21
    ]


def test_car_delta_trigger_fires_exactly_when_ten_km_are_exceeded():
    class Fired(ProcessWindowFunction):
        def process(self, key, context, elements):
            elements = list(elements)
            return [(key, elements[-1]["ts"] // MINUTE, len(elements))]

    h = WindowOperatorHarness(
        GlobalWindows.create(),
        Fired(),
        key_field="car_id",
        trigger=DeltaTrigger.of(10000, _delta),
    )
    for r in _car_stream():
        h.process_element(r, r["ts"])
    # (car, minute of the firing element, window size): the firing element is the last element
    # of the window it fires, and an exact 10000 m delta (car 1 min 6 and min 27) does not fire
    assert h.output() == [(1, 7, 8), (2, 10, 11), (1, 15, 16), (1, 21, 22), (2, 21, 22)]


def test_car_delta_trigger_with_purging_gives_section_maxima():
    # The section maxima the seed describes ("each 10 km, the section's top speed"): with a
    # PurgingTrigger each window is the elements after the previous firing element up to and
    # including the firing element. The first section includes the first (reference) report.
    h = WindowOperatorHarness(
        GlobalWindows.create(),
        max_of("speed"),
        key_field="car_id",
        trigger=PurgingTrigger.of(DeltaTrigger.of(10000, _delta)),
    )
    for r in _car_stream():
        h.process_element(r, r["ts"])
    c1, c2 = CAR1, CAR2
    assert h.output() == [
        (1, 132, c1[0]["distance"], c1[0]["ts"]),  # car 1 mins 0-7: max 132 (min 2)
        (2, 78, c2[0]["distance"], c2[0]["ts"]),  # car 2 mins 0-10: max 78 (min 3)
        (1, 96, c1[8]["distance"], c1[8]["ts"]),  # car 1 mins 8-15: max 96 (the firing one)
        (1, 120, c1[16]["distance"], c1[16]["ts"]),  # car 1 mins 16-21: 120 (the firing one)
        (2, 72, c2[11]["distance"], c2[11]["ts"]),  # car 2 mins 11-21: max 72 (min 14)
    ]


def test_car_delta_trigger_with_time_evictor_keeps_last_15_minutes():
    h = _run_cars(evictor=TimeEvictor.of(Time.minutes(15)))
    c1, c2 = CAR1, CAR2
    # The TimeEvictor runs before the function at each firing and removes, for good, every
    # element with ts <= (max ts in the window) - 15 min; the max then covers the remaining
    # elements, the output record being the first remaining element with the max speed.
    # car 1 min 7: cutoff -8 min, all kept (mins 0-7): max 132, first = min 0
    # car 2 min 10: cutoff -5 min, all kept (mins 0-10): max 78, first = min 0
    # car 1 min 15: cutoff 0 -> min 0 evicted (ts <= 0), mins 1-15: max 132, first = min 1
    # car 1 min 21: cutoff 6 min -> mins 1-6 evicted, mins 7-21: max 120 (the firing element),
    #   first = min 7
    # car 2 min 21: cutoff 6 min -> mins 0-6 evicted (78 goes), mins 7-21: max 72, first = min 7
    assert h.output_with_timestamps() == [
        ((1, 132, c1[0]["distance"], c1[0]["ts"]), MAX_LONG),
        ((2, 78, c2[0]["distance"], c2[0]["ts"]), MAX_LONG),
        ((1, 132, c1[1]["distance"], c1[1]["ts"]), MAX_LONG),
        ((1, 120, c1[7]["distance"], c1[7]["ts"]), MAX_LONG),
        ((2, 72, c2[7]["distance"], c2[7]["ts"]), MAX_LONG),
    ]


def test_car_global_window_never_ends():
    # GlobalWindow.maxTimestamp() is Long.MAX_VALUE: no cleanup timer, and the unfinished
    # sections (car 1 after min 21, with its 138 km/h) are never emitted, even at end of input.
    h = _run_cars(evictor=TimeEvictor.of(Time.minutes(15)))
    n = len(h.output())
    h.process_watermark(MAX_LONG)
    assert len(h.output()) == n
    assert h.num_event_time_timers() == 0
    assert all(r["speed"] != 138 for r in h.output())


# ---------------------------------------------------------------------------------------------
#  Seed 001: a custom assigner (ThirtySecondsWindows) and trigger (OneSecondIntervalTrigger)
# ---------------------------------------------------------------------------------------------


class ThirtySecondsWindows(WindowAssigner):
    """Seed 001's custom assigner: 30-second tumbling event-time windows."""

    window_size = 30 * 1000

    def assign_windows(self, element, timestamp, context):
        start_time = timestamp - (timestamp % self.window_size)
        return [TimeWindow(start_time, start_time + self.window_size)]

    def get_default_trigger(self, env=None):
        return EventTimeTrigger.create()

    def is_event_time(self):
        return True


class CountPerWindow(ProcessWindowFunction):
    def process(self, key, context, elements):
        window = context.window()
        yield (key, window.start, window.end, sum(1 for _ in elements))


def test_seed001_thirty_seconds_windows_counts_per_sensor_and_window():
    h = WindowOperatorHarness(ThirtySecondsWindows(), CountPerWindow(), key_field="id")
    readings = [
        ("sensor_1", 1_000), ("sensor_2", 5_000), ("sensor_1", 29_999), ("sensor_1", 30_000),
        ("sensor_2", 12_000), ("sensor_1", 45_000), ("sensor_2", 61_000), ("sensor_1", 59_999),
    ]
    for sensor, ts in readings:
        h.process_element({"id": sensor, "temperature": 20.0}, ts)
    h.process_watermark(29_999)  # closes [0, 30000)
    assert sorted(h.output()) == [("sensor_1", 0, 30_000, 2), ("sensor_2", 0, 30_000, 2)]
    h.process_watermark(59_999)  # closes [30000, 60000)
    assert h.output()[2:] == [("sensor_1", 30_000, 60_000, 3)]
    h.process_watermark(89_999)
    assert h.output()[3:] == [("sensor_2", 60_000, 90_000, 1)]
    # emitted at the window's max timestamp, as for the built-in assigners
    assert [ts for _, ts in h.output_with_timestamps()][-2:] == [59_999, 89_999]


class OneSecondIntervalTrigger(Trigger):
    """Seed 001's early-firing trigger, ported line by line with PyFlink's signatures.

    The first element of a window registers a timer at the next full second of the watermark and
    one at the window end; every early timer FIREs and registers the next second (if before the
    window end); the window-end timer FIRE_AND_PURGEs. Python's ``%`` differs from Java's only
    for a negative watermark: at the initial Long.MIN_VALUE watermark the first early timer is
    MIN_LONG + 808 here and MIN_LONG + 1808 in Java, both fired by the first real watermark.
    """

    first_seen = ValueStateDescriptor("first-seen", Types.BOOLEAN())

    def on_element(self, element, timestamp, window, ctx):
        first_seen = ctx.get_partitioned_state(self.first_seen)
        if first_seen.value() is None:
            wm = ctx.get_current_watermark()
            ctx.register_event_time_timer(wm + (1000 - wm % 1000))
            ctx.register_event_time_timer(window.end)
            first_seen.update(True)
        return TriggerResult.CONTINUE

    def on_event_time(self, time, window, ctx):
        if time == window.end:
            return TriggerResult.FIRE_AND_PURGE
        wm = ctx.get_current_watermark()
        t = wm + (1000 - wm % 1000)
        if t < window.end:
            ctx.register_event_time_timer(t)
        return TriggerResult.FIRE

    def on_processing_time(self, time, window, ctx):
        return TriggerResult.CONTINUE

    def clear(self, window, ctx):
        ctx.get_partitioned_state(self.first_seen).clear()


def test_seed001_one_second_interval_trigger_fires_early_every_second():
    # The seed's job: keyBy(f0).timeWindow(5 s).trigger(OneSecondIntervalTrigger) counting the
    # elements; forMonotonousTimestamps makes the watermark (max timestamp - 1) follow each
    # element. Input lines "a 1", "a 2", "a 3.5", "a 4.5", "a 6" (seconds).
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(5)),
        CountPerWindow(),
        key_field="key",
        trigger=OneSecondIntervalTrigger(),
    )
    steps = []
    for ts in [1000, 2000, 3500, 4500, 6000]:
        before = len(h.output())
        h.process_element({"key": "a", "ts": ts}, ts)
        h.process_watermark(ts - 1)
        # ties between windows' timers have no defined order in Flink: compare each step sorted
        steps.append(sorted(h.output()[before:]))
    w1, w2 = ("a", 0, 5000), ("a", 5000, 10000)
    assert steps == [
        # a@1000: timers at (initial watermark's next second) and 5000; watermark 999 fires the
        # first (count 1) and registers 1000
        [(*w1, 1)],
        # watermark 1999 fires 1000 (count 2), registers 2000
        [(*w1, 2)],
        # watermark 3499 fires 2000 (count 3), registers 4000
        [(*w1, 3)],
        # watermark 4499 fires 4000 (count 4); the next second, 5000, is not < window end
        [(*w1, 4)],
        # a@6000 opens [5000, 10000) with timers 5000 (next second of watermark 4499) and
        # 10000. Watermark 5999: [0, 5000)'s cleanup timer 4999 (max timestamp + lateness 0)
        # reaches the trigger first: 4999 != end, so it FIREs (count 4) and then all the
        # window's state is cleared; its end timer 5000 then FIRE_AND_PURGEs an empty window
        # (no output). [5000, 10000)'s timer 5000 FIREs early with count 1.
        [(*w1, 4), (*w2, 1)],
    ]
    h.process_watermark(9_999)
    # watermark 9999: timer 6000 (count 1), then the cleanup timer 9999 (count 1 again)
    assert h.output()[-2:] == [(*w2, 1), (*w2, 1)]
    h.process_watermark(20_000)
    assert len(h.output()) == 8  # the end timer 10000 finds the window already cleaned up
    assert h.num_keyed_state_entries() == 0
    assert h.num_event_time_timers() == 0
