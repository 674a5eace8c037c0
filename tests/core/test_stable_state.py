"""Stable windows and restorable state: a staggered assigner's offset survives pickling (so every
Spark task and batch uses one offset), and a snapshot naming a class that moved fails clearly."""

from __future__ import annotations

import pickle
import sys
import types
from typing import Any

import pytest

from flinkwin import (
    AggregateFunction,
    Time,
    TimeWindow,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    WindowAssigner,
    WindowStagger,
)
from flinkwin.assigners.stagger import fix_stagger
from flinkwin.operator.snapshots import SnapshotRestoreError
from flinkwin.testing import WindowOperatorHarness


class Ctx(WindowAssigner.WindowAssignerContext):
    def __init__(self, now: int) -> None:
        self.now = now

    def get_current_processing_time(self) -> int:
        return self.now


# ------------------------------------------------------------------------------ stagger
@pytest.mark.parametrize("cls", [TumblingEventTimeWindows, TumblingProcessingTimeWindows])
def test_a_fixed_random_stagger_offset_survives_pickling(cls: Any) -> None:
    assigner = cls.of(Time.seconds(10), Time.milliseconds(0), WindowStagger.RANDOM)
    assert assigner.stagger_offset is None
    fixed = assigner.with_fixed_stagger(123)
    assert fixed is not assigner and assigner.stagger_offset is None  # the user's is untouched
    offset = fixed.stagger_offset
    assert offset is not None and 0 <= offset < 10_000
    copies = [pickle.loads(pickle.dumps(fixed)) for _ in range(20)]
    assert {c.stagger_offset for c in copies} == {offset}
    # the copies assign the same windows whatever processing time they first see
    ts = 10_000 + offset + 5
    event_time = cls is TumblingEventTimeWindows

    def ctx(i: int) -> Ctx:  # event time: any processing time; processing time: ts
        return Ctx(i * 7919 if event_time else ts)

    windows = {tuple(c.assign_windows("x", ts, ctx(i))) for i, c in enumerate(copies)}
    assert windows == {(TimeWindow(10_000 + offset, 20_000 + offset),)}


def test_an_unfixed_random_stagger_is_drawn_per_copy_as_in_flink() -> None:
    """Flink draws the offset at an assigner's first element: each unpickled copy (each Flink
    subtask, each flinkwin task before the fix) may draw another one."""
    assigner = TumblingEventTimeWindows.of(Time.seconds(10), Time.milliseconds(0),
                                           WindowStagger.RANDOM)
    drawn = set()
    for _ in range(20):
        copy = pickle.loads(pickle.dumps(assigner))
        copy.assign_windows("x", 5, Ctx(0))
        drawn.add(copy.stagger_offset)
    assert len(drawn) > 1


def test_natural_stagger_is_fixed_at_the_given_processing_time() -> None:
    assigner = TumblingEventTimeWindows.of(Time.milliseconds(5000), Time.milliseconds(0),
                                           WindowStagger.NATURAL)
    fixed = assigner.with_fixed_stagger(5150)
    assert fixed.stagger_offset == 150
    # a later first element does not move it (Flink would take the first element's time)
    assert list(fixed.assign_windows("x", 5300, Ctx(9999))) == [TimeWindow(5150, 10150)]
    assert fixed.with_fixed_stagger(42) is fixed


def test_a_recorded_stagger_offset_is_set_and_validated() -> None:
    assigner = TumblingProcessingTimeWindows.of(Time.seconds(1), Time.milliseconds(0),
                                                WindowStagger.RANDOM)
    restored = assigner.withStaggerOffset(250)
    assert list(restored.assign_windows("x", 0, Ctx(1300))) == [TimeWindow(1250, 2250)]
    for bad in (-1, 1000, 2.5, True):
        with pytest.raises(ValueError, match=r"stagger offset must be an int in \[0, 1000\)"):
            assigner.with_stagger_offset(bad)


def test_fix_stagger_leaves_other_assigners_alone() -> None:
    from flinkwin import SlidingEventTimeWindows

    sliding = SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5))
    assert fix_stagger(sliding, 0) is sliding
    aligned = fix_stagger(TumblingEventTimeWindows.of(Time.seconds(10)), 1234)
    assert aligned.stagger_offset == 0


# --------------------------------------------------------------------- moved classes
class Total(AggregateFunction):
    def create_accumulator(self) -> Any:
        return sys.modules["fw_moved_module"].Acc(0)

    def add(self, value: Any, acc: Any) -> Any:
        acc.n += value
        return acc

    def get_result(self, acc: Any) -> Any:
        return acc.n

    def merge(self, a: Any, b: Any) -> Any:
        a.n += b.n
        return a


def _module_with_acc(name: str = "Acc") -> types.ModuleType:
    module = types.ModuleType("fw_moved_module")

    class Acc:
        def __init__(self, n: int) -> None:
            self.n = n

    Acc.__module__, Acc.__qualname__, Acc.__name__ = "fw_moved_module", "Acc", "Acc"
    setattr(module, name, Acc)
    module.Acc = Acc  # type: ignore[attr-defined]
    return module


def _harness() -> WindowOperatorHarness:
    return WindowOperatorHarness(
        TumblingEventTimeWindows.of(Time.seconds(10)), Total()
    )


@pytest.mark.parametrize("moved", ["module", "class"])
def test_restoring_a_snapshot_whose_class_moved_names_the_class(
    moved: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "fw_moved_module", _module_with_acc())
    harness = _harness()
    harness.process_element(5, 1000)
    data = harness.snapshot()

    if moved == "module":
        monkeypatch.delitem(sys.modules, "fw_moved_module")
    else:  # the module is there, the class was renamed
        renamed = types.ModuleType("fw_moved_module")
        monkeypatch.setitem(sys.modules, "fw_moved_module", renamed)
    with pytest.raises(SnapshotRestoreError, match=r"refers to fw_moved_module\.Acc, which "
                       r"cannot be imported here .*make fw_moved_module\.Acc importable again"):
        _harness().restore(data)

    # put the class back under its old name: the same snapshot restores and continues
    monkeypatch.setitem(sys.modules, "fw_moved_module", _module_with_acc())
    restored = _harness()
    restored.restore(data)
    restored.process_element(7, 2000)
    restored.process_watermark(10_000)
    assert restored.output() == [12]
