"""Firing metadata (``context.firing()``, ``with_firing=True``): each value against cases of
Beam's ``PaneInfo`` semantics computed by hand (docs/firings.md)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
import pytest

from flinkwin import (
    ContinuousEventTimeTrigger,
    ContinuousProcessingTimeTrigger,
    CountTrigger,
    EventTimeSessionWindows,
    GlobalWindows,
    ProcessWindowFunction,
    PurgingTrigger,
    Time,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
)
from flinkwin.errors import IllegalStateError
from flinkwin.operator import WindowOperator, states
from flinkwin.operator.firings import Fired
from flinkwin.operator.snapshots import formats
from flinkwin.operator.snapshots.window import FORMAT_VERSION
from flinkwin.testing import WindowOperatorHarness

# (value, timing, index, nonspeculative_index, is_first, is_last)
Seen = tuple[Any, str, int, int, bool, bool]


class Describe(ProcessWindowFunction):
    """Emits (key, window start, sum of v, the firing's values)."""

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterable[Any]:
        f = context.firing()
        yield (key, getattr(context.window(), "start", None), sum(e["v"] for e in elements),
               f.timing, f.index, f.nonspeculative_index, f.is_first, f.is_last)


def op(assigner: Any, trigger: Any = None, lateness: int = 0) -> WindowOperator:
    return WindowOperator(assigner, Describe(), key_selector="k", trigger=trigger,
                          allowed_lateness=lateness, firing_metadata=True)


def fired(o: WindowOperator) -> list[tuple[Any, ...]]:
    return [v for v, _ in o.drain_output()]


def el(o: WindowOperator, ts: int, v: int = 1, k: str = "a") -> None:
    o.process_element({"k": k, "v": v}, ts)


TUMBLE = TumblingEventTimeWindows.of(Time.milliseconds(10))


def test_on_time_firing_without_lateness_is_first_and_last() -> None:
    o = op(TUMBLE)
    el(o, 1), el(o, 2, 2)
    o.advance_watermark(8)
    assert fired(o) == []
    o.advance_watermark(9)
    assert fired(o) == [("a", 0, 3, "ON_TIME", 0, 0, True, True)]
    assert o.firings is not None and o.firings.records == {}


def test_late_firings_with_allowed_lateness_count_on_and_the_last_is_unknown() -> None:
    o = op(TUMBLE, lateness=5)
    el(o, 1)
    o.advance_watermark(9)
    el(o, 3, 10)  # within the lateness: EventTimeTrigger fires at once
    el(o, 4, 100)
    o.advance_watermark(14)  # the cleanup time: no firing, the state is cleared
    el(o, 5, 1000)  # too late: dropped
    assert fired(o) == [
        ("a", 0, 1, "ON_TIME", 0, 0, True, False),
        ("a", 0, 11, "LATE", 1, 1, False, False),
        ("a", 0, 111, "LATE", 2, 2, False, False),
    ]
    assert o.num_late_records_dropped == 1 and not o.firings.records


def test_a_window_whose_first_element_is_late_fires_late_from_index_0() -> None:
    o = op(TUMBLE, lateness=5)
    el(o, 15)  # another window moves the watermark past [0, 10)
    o.advance_watermark(10)
    el(o, 3, 7)
    assert fired(o) == [("a", 0, 7, "LATE", 0, 0, True, False)]


def test_continuous_trigger_early_firings_then_on_time_whatever_the_watermark_steps() -> None:
    def run(watermarks: list[int]) -> list[tuple[Any, ...]]:
        o = op(TUMBLE, ContinuousEventTimeTrigger.of(Time.milliseconds(3)))
        el(o, 1)
        for w in watermarks:
            o.advance_watermark(w)
        return fired(o)

    # timers at 3, 6 and 9 (the max timestamp): a timer's firing sees its own time
    expected = [
        ("a", 0, 1, "EARLY", 0, -1, True, False),
        ("a", 0, 1, "EARLY", 1, -1, False, False),
        ("a", 0, 1, "ON_TIME", 2, 0, False, True),
    ]
    assert run([3, 6, 9]) == run([4, 20]) == run([100]) == expected


def test_purging_trigger_firings_are_increments_and_the_index_keeps_counting() -> None:
    o = op(TUMBLE, PurgingTrigger.of(ContinuousEventTimeTrigger.of(Time.milliseconds(5))),
           lateness=10)
    el(o, 1)
    o.advance_watermark(5)  # EARLY, purged
    el(o, 6, 2)
    o.advance_watermark(9)  # ON_TIME, purged
    el(o, 7, 4)  # late: the continuous trigger fires at once, only what came since
    o.advance_watermark(19)  # cleanup: no firing
    assert fired(o) == [
        ("a", 0, 1, "EARLY", 0, -1, True, False),
        ("a", 0, 2, "ON_TIME", 1, 0, False, False),
        ("a", 0, 4, "LATE", 2, 1, False, False),
    ]


def test_count_trigger_on_global_windows_fires_early_forever() -> None:
    o = op(GlobalWindows.create(), PurgingTrigger.of(CountTrigger.of(2)))
    for ts in range(5):
        el(o, ts)
    o.advance_watermark(2**63 - 1)  # the end of input: no timer, no firing
    assert [(f[3], f[4], f[5], f[7]) for f in fired(o)] == [
        ("EARLY", 0, -1, False), ("EARLY", 1, -1, False)
    ]


def test_count_trigger_on_an_event_time_window_fires_on_time_after_the_watermark() -> None:
    o = op(TUMBLE, CountTrigger.of(2), lateness=20)
    el(o, 1), el(o, 2)  # count 2: EARLY
    o.advance_watermark(9)  # CountTrigger does not fire on time
    el(o, 3), el(o, 4)  # first firing after the watermark passed: ON_TIME
    el(o, 5), el(o, 6)  # then LATE
    assert [(f[2], f[3], f[4], f[5]) for f in fired(o)] == [
        (2, "EARLY", 0, -1), (4, "ON_TIME", 1, 0), (6, "LATE", 2, 1)
    ]


def test_processing_time_windows_use_the_processing_clock() -> None:
    o = op(TumblingProcessingTimeWindows.of(Time.milliseconds(10)))
    o.advance_processing_time(3)
    el(o, 0)
    o.advance_processing_time(25)
    assert fired(o) == [("a", 0, 1, "ON_TIME", 0, 0, True, True)]
    c = op(TumblingProcessingTimeWindows.of(Time.milliseconds(10)), CountTrigger.of(1))
    c.advance_processing_time(3)
    el(c, 0)
    assert fired(c) == [("a", 0, 1, "EARLY", 0, -1, True, False)]


def test_processing_time_trigger_on_event_time_windows_is_early_then_late() -> None:
    hundred = TumblingEventTimeWindows.of(Time.milliseconds(100))
    o = op(hundred, ContinuousProcessingTimeTrigger.of(Time.milliseconds(5)), lateness=50)
    o.advance_processing_time(0)
    el(o, 1)
    o.advance_processing_time(5)  # watermark still before the window's end
    o.advance_watermark(99)  # the processing-time trigger does not fire on event time
    el(o, 2)
    o.advance_processing_time(10)  # the first firing after the watermark passed: ON_TIME
    el(o, 3)
    o.advance_processing_time(15)
    assert [(f[2], f[3], f[4], f[5], f[7]) for f in fired(o)] == [
        (1, "EARLY", 0, -1, False), (2, "ON_TIME", 1, 0, False), (3, "LATE", 2, 1, False)
    ]


SESSIONS = EventTimeSessionWindows.with_gap(Time.milliseconds(5))


def test_merging_sessions_start_a_new_merged_window_afresh() -> None:
    o = op(SESSIONS, lateness=10)
    el(o, 1)  # [1, 6)
    o.advance_watermark(5)
    el(o, 4, 10)  # [4, 9) merges with [1, 6) into the new window [1, 9): index 0 again
    o.advance_watermark(8)
    el(o, 2, 100)  # [2, 7) lies inside [1, 9): the same window, its record continues
    assert fired(o) == [
        ("a", 1, 1, "ON_TIME", 0, 0, True, False),
        ("a", 1, 11, "ON_TIME", 0, 0, True, False),
        ("a", 1, 111, "LATE", 1, 1, False, False),
    ]


def test_merging_sessions_early_firings_carry_over_the_pending_on_time_firing() -> None:
    o = op(SESSIONS, CountTrigger.of(1), lateness=100)
    el(o, 1)  # [1, 6): EARLY
    o.advance_watermark(20)
    el(o, 4)  # [4, 9) merges with [1, 6) into the new [1, 9), already behind the watermark:
    # its on-time firing is still pending (Beam merges the end-of-window hold)
    assert [(f[1], f[3], f[4]) for f in fired(o)] == [(1, "EARLY", 0), (1, "ON_TIME", 0)]


def test_firing_index_survives_a_snapshot_and_restore() -> None:
    def build() -> WindowOperator:
        return op(TUMBLE, ContinuousEventTimeTrigger.of(Time.milliseconds(3)))

    o = build()
    el(o, 1)
    o.advance_watermark(3)
    data = o.snapshot()
    assert states.restore_state(data, build).firings.records == o.firings.records
    restored = build()
    restored.restore(data)
    restored.advance_watermark(9)
    assert [f[4] for f in fired(o)] == [0]
    assert [(f[3], f[4]) for f in fired(restored)] == [("EARLY", 1), ("ON_TIME", 2)]
    assert FORMAT_VERSION == formats.written(formats.OBJECT) == "4"
    plain = WindowOperator(TUMBLE, Describe(), key_selector="k")
    with pytest.raises(ValueError, match="holds firing metadata"):
        plain.restore(data)


def test_tagged_outputs_carry_their_firing_and_columnar_forms_are_not_chosen() -> None:
    o = WindowOperator(TUMBLE, lambda a, b: {"k": a["k"], "v": a["v"] + b["v"]},
                       key_selector="k", tag_firings=True)
    assert states.state_kind(o, columnar_input=True) == states.OBJECT
    o.process_batch(pd.DataFrame({"k": ["a", "a", "b"], "v": [1, 2, 4]}), [1, 2, 3])
    o.advance_watermark(9)
    out = [v for v, _ in o.drain_output()]
    assert all(type(v) is Fired for v in out)
    assert [(v.value["v"], v.firing.timing, v.firing.index, v.firing.is_last) for v in out] == [
        (3, "ON_TIME", 0, True), (4, "ON_TIME", 0, True)
    ]


def test_batches_and_single_elements_give_the_same_firings() -> None:
    rows = [("a", 1, 1), ("b", 2, 3), ("a", 3, 12), ("a", 4, 4), ("b", 5, 15)]

    def run(batched: bool) -> list[tuple[Any, ...]]:
        o = op(TUMBLE, CountTrigger.of(2), lateness=30)
        if batched:
            o.process_batch(pd.DataFrame({"k": [r[0] for r in rows], "v": [r[1] for r in rows]}),
                            [r[2] for r in rows])
        else:
            for k, v, ts in rows:
                el(o, ts, v, k)
        o.advance_watermark(40)
        return fired(o)

    assert run(True) == run(False) == [("a", 0, 5, "EARLY", 0, -1, True, False)]


def test_context_firing_needs_firing_metadata() -> None:
    o = WindowOperator(TUMBLE, Describe(), key_selector="k")
    el(o, 1)
    with pytest.raises(Exception, match="with_firing=True") as info:
        o.advance_watermark(9)
    assert isinstance(info.value, IllegalStateError) or isinstance(
        info.value.__cause__, IllegalStateError
    )


def test_the_testing_harness_offers_firing_metadata() -> None:
    h = WindowOperatorHarness(TUMBLE, Describe(), key_field="k", firing_metadata=True,
                              trigger=CountTrigger.of(1))
    h.process_element({"k": "a", "v": 2}, 3)
    h.process_watermark(9)
    h.process_element({"k": "a", "v": 5}, 4)  # late-dropped: no allowed lateness
    assert [(r[2], r[3], r[4]) for r in h.output()] == [(2, "EARLY", 0)]


@pytest.mark.parametrize("case", ["continuous", "count", "sessions", "purging", "no lateness"])
def test_random_scripts_keep_the_firing_invariants_across_restores(case: str) -> None:
    """Per key and window: indices 0, 1, 2, ... with no gap; EARLY firings before the one
    ON_TIME, LATE ones after; nonspeculative_index -1 for EARLY, then 0, 1, ...; nothing after a
    last firing. A snapshot and restore at any point changes no firing."""
    import random

    def build() -> WindowOperator:
        if case == "sessions":
            return op(SESSIONS, CountTrigger.of(2), lateness=15)
        if case == "no lateness":
            return op(TUMBLE, ContinuousEventTimeTrigger.of(Time.milliseconds(3)))
        trigger = {
            "continuous": ContinuousEventTimeTrigger.of(Time.milliseconds(3)),
            "count": CountTrigger.of(2),
            "purging": PurgingTrigger.of(ContinuousEventTimeTrigger.of(Time.milliseconds(4))),
        }[case]
        return op(TUMBLE, trigger, lateness=7)

    for seed in range(30):
        rng = random.Random(seed)
        script: list[tuple[str, int, str]] = []
        wm = 0
        for _ in range(40):
            if rng.random() < 0.3:
                wm += rng.randint(0, 6)
                script.append(("wm", wm, ""))
            else:
                script.append(("el", max(0, wm + rng.randint(-12, 8)), rng.choice("ab")))
        script.append(("wm", wm + 100, ""))

        def run(
            restore_at: int | None, script: list[tuple[str, int, str]] = script
        ) -> list[tuple[Any, ...]]:
            o, out = build(), []
            for i, (what, t, k) in enumerate(script):
                if i == restore_at:
                    out += fired(o)
                    data, o = o.snapshot(), build()
                    o.restore(data)
                if what == "wm":
                    o.advance_watermark(t)
                else:
                    el(o, t, 1, k)
            return out + fired(o)

        plain = run(None)
        assert run(rng.randrange(len(script))) == plain, seed
        by_window: dict[tuple[Any, Any], list[tuple[Any, ...]]] = {}
        for f in plain:
            by_window.setdefault((f[0], f[1]), []).append(f)
        for fs in by_window.values():
            # a session's windows share a start only by merging into a new window, which
            # starts over at 0: split the sequence there
            runs: list[list[tuple[Any, ...]]] = []
            for f in fs:
                if f[4] == 0:
                    runs.append([])
                runs[-1].append(f)
            for seq in runs:
                assert [f[4] for f in seq] == list(range(len(seq))), seed
                timings = [f[3] for f in seq]
                order = {"EARLY": 0, "ON_TIME": 1, "LATE": 2}
                assert [order[t] for t in timings] == sorted(order[t] for t in timings), seed
                assert timings.count("ON_TIME") <= 1, seed
                non_early = [f[5] for f in seq if f[3] != "EARLY"]
                assert non_early == list(range(len(non_early))), seed
                assert all(f[5] == -1 for f in seq if f[3] == "EARLY"), seed
                assert not any(f[7] for f in seq[:-1]), seed
                if case == "no lateness":  # the on-time firing at the window's end is last
                    assert (seq[-1][3], seq[-1][7]) == ("ON_TIME", True), seed
