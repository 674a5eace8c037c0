"""PyFlink's window API surface on the core: Generic base classes, count windows and their
assigners, window serializers, the runtime context of rich functions and assigners,
``get_default_trigger(env)`` and ``TimeWindow``'s repr.

PyFlink counterparts: ``pyflink/datastream/tests/test_window.py`` (``test_count_tumbling_window``,
``test_count_sliding_window``) and ``pyflink/datastream/window.py`` itself."""

from __future__ import annotations

import io
import textwrap
import typing
from collections.abc import Iterable

import pytest

from flinkwin import (
    AggregateFunction,
    AllWindowFunction,
    CountSlidingWindowAssigner,
    CountTrigger,
    CountTumblingWindowAssigner,
    CountWindow,
    CountWindowSerializer,
    Evictor,
    GlobalWindow,
    KeySelector,
    MergingWindowAssigner,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    ReduceFunction,
    RuntimeContext,
    TimestampAssigner,
    TimeWindow,
    TimeWindowSerializer,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    ValueStateDescriptor,
    WindowAssigner,
    WindowFunction,
)
from flinkwin.assigners.base import WindowAssignerContext
from flinkwin.testing import WindowOperatorHarness
from flinkwin.windows import GlobalWindowSerializer

# ------------------------------------------------------------------------------ generics


class SumProcess(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
    def process(
        self,
        key: str,
        context: ProcessWindowFunction.Context[TimeWindow],
        elements: Iterable[tuple],
    ) -> Iterable[tuple]:
        yield key, context.window().start, sum(e[1] for e in elements)


class EveryElementTrigger(Trigger[tuple, TimeWindow]):
    def on_element(
        self, element: tuple, timestamp: int, window: TimeWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        return TriggerResult.FIRE

    def on_processing_time(
        self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(
        self, time: int, window: TimeWindow, ctx: Trigger.TriggerContext
    ) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_merge(self, window: TimeWindow, ctx: Trigger.OnMergeContext) -> None:
        return None

    def clear(self, window: TimeWindow, ctx: Trigger.TriggerContext) -> None:
        return None


@pytest.mark.parametrize(
    ("base", "arity"),
    [
        (Trigger, 2),
        (WindowAssigner, 2),
        (MergingWindowAssigner, 2),
        (ProcessWindowFunction, 4),
        (ProcessWindowFunction.Context, 1),
        (ProcessAllWindowFunction, 3),
        (ProcessAllWindowFunction.Context, 1),
        (WindowFunction, 4),
        (AllWindowFunction, 3),
        (ReduceFunction, 1),
        (AggregateFunction, 3),
        (KeySelector, 2),
        (TimestampAssigner, 1),
        (Evictor, 2),
    ],
)
def test_base_classes_subscript_as_in_pyflink(base, arity):
    alias = base[tuple([int] * arity)]
    assert typing.get_origin(alias) is base
    assert typing.get_args(alias) == tuple([int] * arity)

    class Sub(alias):  # subclassing the subscripted base works
        pass

    assert issubclass(Sub, base)


def test_subscripted_user_classes_run_in_the_operator():
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(10), SumProcess(), key_field="k",
        trigger=EveryElementTrigger(),
    )
    h.process_element({"k": "a", "v": 2}, 1)
    h.process_element({"k": "a", "v": 3}, 2)
    assert h.output() == [("a", 0, 2), ("a", 0, 5)]


def test_mypy_understands_the_generic_bases(tmp_path):
    api = pytest.importorskip("mypy.api")
    source = tmp_path / "user_program.py"
    source.write_text(textwrap.dedent('''
        from typing import Iterable
        from flinkwin import ProcessWindowFunction, ReduceFunction, TimeWindow, Trigger

        class Sum(ReduceFunction[tuple]):
            def reduce(self, value1: tuple, value2: tuple) -> tuple:
                return value1[0], value1[1] + value2[1]

        class Process(ProcessWindowFunction[tuple, str, str, TimeWindow]):
            def process(self, key: str, context: ProcessWindowFunction.Context[TimeWindow],
                        elements: Iterable[tuple]) -> Iterable[str]:
                window: TimeWindow = context.window()
                wrong: int = context.window()
                yield f"{key} {window.start}"

        def watermark(ctx: Trigger.TriggerContext) -> int:
            return ctx.get_current_watermark()

        from typing import Any, Collection, Tuple
        from flinkwin import (AggregateFunction, Evictor, KeySelector, TimestampAssigner,
                              WindowAssigner, MergingWindowAssigner)

        class Average(AggregateFunction[Tuple[str, int], Tuple[int, int], float]):
            def create_accumulator(self) -> Tuple[int, int]:
                return 0, 0
            def add(self, value: Tuple[str, int], accumulator: Tuple[int, int]) -> Tuple[int, int]:
                return accumulator[0] + value[1], accumulator[1] + 1
            def get_result(self, accumulator: Tuple[int, int]) -> float:
                return accumulator[0] / accumulator[1]

        class First(KeySelector[tuple, str]):
            def get_key(self, value: tuple) -> str:
                return str(value[0])

        class Second(TimestampAssigner[tuple]):
            def extract_timestamp(self, value: tuple, record_timestamp: int) -> int:
                return int(value[1])

        class Tens(WindowAssigner[tuple, TimeWindow]):
            def assign_windows(self, element: tuple, timestamp: int,
                               context: WindowAssigner.WindowAssignerContext
                               ) -> Collection[TimeWindow]:
                start = timestamp - timestamp % 10
                return [TimeWindow(start, start + 10)]
            def get_default_trigger(self, env: Any) -> Trigger[tuple, TimeWindow]:
                raise NotImplementedError
            def is_event_time(self) -> bool:
                return True

        def merge(cb: MergingWindowAssigner.MergeCallback[TimeWindow], w: TimeWindow) -> None:
            cb.merge([w], w)

        class KeepAll(Evictor[tuple, TimeWindow]):
            def evict_before(self, elements: Any, size: int, window: TimeWindow,
                             evictor_context: Evictor.EvictorContext) -> None:
                return None
            def evict_after(self, elements: Any, size: int, window: TimeWindow,
                            evictor_context: Evictor.EvictorContext) -> None:
                return None
    '''))
    out, err, status = api.run([str(source), "--no-error-summary", "--follow-imports=silent"])
    errors = [line for line in out.splitlines() if "error:" in line]
    assert len(errors) == 1, out + err
    assert "user_program.py:13" in errors[0] and "TimeWindow" in errors[0]


# ------------------------------------------------------------------------- count windows


def _sum_apply():
    class Sum(WindowFunction[tuple, tuple, str, CountWindow]):
        def apply(self, key, window, inputs):
            values = [e[1] for e in inputs]
            yield key, window.id, sum(values), len(values)

    return Sum()


def test_count_tumbling_window_fires_every_size_elements_per_key():
    h = WindowOperatorHarness(
        CountTumblingWindowAssigner.of(2), _sum_apply(), key_field="k"
    )
    for k, v in [("a", 1), ("b", 10), ("a", 2), ("a", 3), ("b", 20), ("a", 4), ("a", 5)]:
        h.process_element({"k": k, "v": v})
    assert h.output() == [("a", 0, 3, 2), ("b", 0, 30, 2), ("a", 1, 7, 2)]
    h.process_watermark(2**63 - 1)
    h.close()
    assert len(h.output()) == 3  # the partial window ("a", 5) never fires


def test_count_sliding_window_fires_only_full_windows():
    """PyFlink's CountSlidingWindowAssigner(size=3, slide=2): windows [0,2], [2,4], [4,6]..."""
    h = WindowOperatorHarness(
        CountSlidingWindowAssigner.of(3, 2), _sum_apply(), key_field="k"
    )
    for v in range(1, 8):
        h.process_element({"k": "a", "v": v})
    # window 0 holds elements 1..3, window 1 elements 3..5, window 2 elements 5..7
    assert h.output() == [("a", 0, 6, 3), ("a", 1, 12, 3), ("a", 2, 18, 3)]


def test_count_sliding_window_with_slide_larger_than_size_skips_elements():
    h = WindowOperatorHarness(CountSlidingWindowAssigner.of(1, 2), _sum_apply(), key_field="k")
    for v in range(1, 6):
        h.process_element({"k": "a", "v": v})
    assert h.output() == [("a", 0, 1, 1), ("a", 1, 3, 1), ("a", 2, 5, 1)]


def test_count_assigner_state_survives_snapshot_and_restore():
    h = WindowOperatorHarness(CountTumblingWindowAssigner.of(3), _sum_apply(), key_field="k")
    h.process_element({"k": "a", "v": 1})
    h.process_element({"k": "a", "v": 2})
    data = h.snapshot()
    restored = WindowOperatorHarness(
        CountTumblingWindowAssigner.of(3), _sum_apply(), key_field="k"
    )
    restored.restore(data)
    restored.process_element({"k": "a", "v": 3})
    restored.process_element({"k": "a", "v": 4})
    assert restored.output() == [("a", 0, 6, 3)]
    # the assigner's count, window 1 holding 4 and its trigger's count
    assert restored.num_keyed_state_entries() == 3


def test_count_windows_are_purged_once_fired():
    h = WindowOperatorHarness(CountTumblingWindowAssigner.of(2), _sum_apply(), key_field="k")
    for v in range(6):
        h.process_element({"k": "a", "v": v})
    assert h.num_keyed_state_entries() == 1  # only the assigner's count is left


def test_count_assigners_reject_non_positive_sizes():
    with pytest.raises(ValueError, match="count window size must be a positive int"):
        CountTumblingWindowAssigner.of(0)
    with pytest.raises(ValueError, match="count window slide must be a positive int"):
        CountSlidingWindowAssigner.of(3, 0)


def test_count_window_is_a_pyflink_window():
    w = CountWindow(3)
    assert repr(w) == "CountWindow(id=3)"
    assert w == CountWindow(3) and w != CountWindow(4) and hash(w) == hash(CountWindow(3))
    assert w.max_timestamp() == 2**63 - 1
    assert repr(CountTumblingWindowAssigner.of(5)) == "CountTumblingWindowAssigner(5)"
    assert repr(CountSlidingWindowAssigner.of(5, 2)) == "CountSlidingWindowAssigner(5, 2)"


# --------------------------------------------------------------------------- serializers


@pytest.mark.parametrize(
    ("serializer", "window", "size"),
    [
        (TimeWindowSerializer(), TimeWindow(-5, 10), 16),
        (CountWindowSerializer(), CountWindow(7), 8),
        (GlobalWindowSerializer(), GlobalWindow.get(), 1),
    ],
)
def test_window_serializers_round_trip_in_flinks_layout(serializer, window, size):
    stream = io.BytesIO()
    serializer.serialize(window, stream)
    assert len(stream.getvalue()) == size
    stream.seek(0)
    assert serializer.deserialize(stream) == window


def test_time_window_serializer_writes_big_endian_start_then_end():
    stream = io.BytesIO()
    TimeWindowSerializer().serialize(TimeWindow(1, 2), stream)
    assert stream.getvalue() == (1).to_bytes(8, "big") + (2).to_bytes(8, "big")


def test_built_in_assigners_declare_their_window_serializer():
    assert TumblingEventTimeWindows.of(5).get_window_serializer() == TimeWindowSerializer()
    assert CountTumblingWindowAssigner.of(5).get_window_serializer() == CountWindowSerializer()


def test_time_window_prints_as_pyflink():
    assert repr(TimeWindow(0, 5)) == "TimeWindow(start=0, end=5)"


# ------------------------------------------------------------------ get_default_trigger


class _PyFlinkStyleAssigner(WindowAssigner[tuple, TimeWindow]):
    """As PyFlink users write them: ``get_default_trigger(self, env)``."""

    def assign_windows(self, element, timestamp, context):
        return [TimeWindow(timestamp - timestamp % 10, timestamp - timestamp % 10 + 10)]

    def get_default_trigger(self, env):
        return CountTrigger.of(2)

    def get_window_serializer(self):
        return TimeWindowSerializer()

    def is_event_time(self):
        return True


class _JavaStyleAssigner(_PyFlinkStyleAssigner):
    def get_default_trigger(self):  # type: ignore[override]
        return CountTrigger.of(2)


@pytest.mark.parametrize("assigner", [_PyFlinkStyleAssigner(), _JavaStyleAssigner()])
def test_default_trigger_is_called_as_the_assigner_declares_it(assigner):
    h = WindowOperatorHarness(assigner, lambda a, b: (a[0], a[1] + b[1]), key_field="k")
    h.process_element({"k": "a", "v": 1}, 1)
    h.process_element({"k": "a", "v": 2}, 2)
    assert h.output() == [("a", 3)]


# ---------------------------------------------------------------------- runtime context


class CountingProcess(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
    """Keeps a per-key running total in keyed state obtained in ``open``, as PyFlink programs
    do."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def open(self, runtime_context: RuntimeContext) -> None:
        self.events.append(f"open {runtime_context.get_task_name_with_subtasks()}")
        self.total = runtime_context.get_state(ValueStateDescriptor("total"))

    def process(self, key, context, elements):
        total = (self.total.value() or 0) + sum(e[1] for e in elements)
        self.total.update(total)
        yield key, total

    def close(self) -> None:
        self.events.append("close")


def test_rich_function_open_keyed_state_and_close():
    fn = CountingProcess()
    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), fn, key_field="k")
    for k, v, ts in [("a", 1, 1), ("b", 5, 2), ("a", 2, 11), ("b", 1, 12), ("a", 3, 21)]:
        h.process_element({"k": k, "v": v}, ts)
    h.process_watermark(100)
    h.close()
    assert sorted(h.output()) == [("a", 1), ("a", 3), ("a", 6), ("b", 5), ("b", 6)]
    assert fn.events == ["open Window (1/1)", "close"]
    assert fn.get_runtime_context().get_index_of_this_subtask() == 0
    assert fn.get_runtime_context().getNumberOfParallelSubtasks() == 1


def test_keyed_state_of_the_runtime_context_survives_snapshot():
    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), CountingProcess(), key_field="k")
    h.process_element({"k": "a", "v": 4}, 1)
    h.process_watermark(9)
    restored = WindowOperatorHarness(
        TumblingEventTimeWindows.of(10), CountingProcess(), key_field="k"
    )
    restored.restore(h.snapshot())
    restored.process_element({"k": "a", "v": 1}, 11)
    restored.process_watermark(19)
    assert restored.output() == [("a", 5)]


def test_get_runtime_context_before_open_fails_clearly():
    with pytest.raises(RuntimeError, match="only available once the function has been opened"):
        CountingProcess().get_runtime_context()


def test_assigner_context_gives_the_runtime_context():
    class CountingAssigner(_PyFlinkStyleAssigner):
        def assign_windows(self, element, timestamp, context: WindowAssignerContext):
            state = context.get_runtime_context().get_state(ValueStateDescriptor("n"))
            n = (state.value() or 0) + 1
            state.update(n)
            return [TimeWindow(n, n + 1)]

    h = WindowOperatorHarness(
        CountingAssigner(), lambda a, b: a, key_field="k", trigger=EveryElementTrigger()
    )
    for k in "aab":
        h.process_element({"k": k, "v": 0}, 1)
    assert [w for w in h.operator.window_contents] == [
        ("a", TimeWindow(1, 2)), ("a", TimeWindow(2, 3)), ("b", TimeWindow(1, 2))
    ]


def test_runtime_context_offers_every_keyed_state_kind():
    from flinkwin import (
        AggregatingStateDescriptor,
        ListStateDescriptor,
        MapStateDescriptor,
        ReducingStateDescriptor,
    )

    class Count(AggregateFunction[int, int, int]):
        def create_accumulator(self) -> int:
            return 0

        def add(self, value: int, accumulator: int) -> int:
            return accumulator + 1

        def get_result(self, accumulator: int) -> int:
            return accumulator

        def merge(self, acc_a: int, acc_b: int) -> int:
            return acc_a + acc_b

    class States(WindowFunction[tuple, tuple, str, TimeWindow]):
        def open(self, runtime_context: RuntimeContext) -> None:
            self.seen = runtime_context.get_list_state(ListStateDescriptor("seen"))
            self.last = runtime_context.get_map_state(MapStateDescriptor("last"))
            self.total = runtime_context.get_reducing_state(
                ReducingStateDescriptor("total", lambda a, b: a + b)
            )
            self.windows = runtime_context.get_aggregating_state(
                AggregatingStateDescriptor("windows", Count())
            )

        def apply(self, key, window, inputs):
            for e in inputs:
                self.seen.add(e.v)
                self.total.add(e.v)
            self.last.put("start", window.start)
            self.windows.add(1)
            yield key, self.seen.get(), self.last.get("start"), self.total.get(), self.windows.get()

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), States(), key_field="k")
    for k, v, ts in [("a", 1, 1), ("b", 7, 2), ("a", 2, 12)]:
        h.process_element({"k": k, "v": v}, ts)
    h.process_watermark(100)
    assert sorted(h.output()) == [
        ("a", [1], 0, 1, 1), ("a", [1, 2], 10, 3, 2), ("b", [7], 0, 7, 1)
    ]
    with pytest.raises(TypeError, match="expected a ValueStateDescriptor"):
        h.operator.runtime_context.get_state(ListStateDescriptor("x"))


class PyFlinkSumWindowFunction(WindowFunction[tuple, tuple, str, CountWindow]):
    """``SumWindowFunction`` of PyFlink's ``test_window.py``, verbatim."""

    def apply(self, key: str, window: CountWindow, inputs: Iterable[tuple]):
        result = 0
        for i in inputs:
            result += i[0]
        return [(key, result)]


def _pyflink_count_run(assigner: WindowAssigner, data: list[tuple]) -> list[tuple]:
    h = WindowOperatorHarness(assigner, PyFlinkSumWindowFunction(), key_field=lambda x: x[1])
    for element in data:
        h.process_element(element)
    h.process_watermark(2**63 - 1)
    return sorted(h.output())


def test_count_tumbling_window():
    """PyFlink ``test_window.py::test_count_tumbling_window`` (``count_window(3)``)."""
    data = [(1, "hi"), (2, "hello"), (3, "hi"), (4, "hello"), (5, "hi"), (6, "hello"),
            (6, "hello")]
    assert _pyflink_count_run(CountTumblingWindowAssigner(3), data) == sorted(
        [("hi", 9), ("hello", 12)]
    )


def test_count_sliding_window():
    """PyFlink ``test_window.py::test_count_sliding_window``."""
    data = [(1, "hi"), (2, "hello"), (3, "hi"), (4, "hello"), (5, "hi"), (6, "hello")]
    assert _pyflink_count_run(CountSlidingWindowAssigner(2, 1), data) == sorted(
        [("hello", 6), ("hi", 8), ("hi", 4), ("hello", 10)]
    )


def test_key_selector_is_opened_and_closed_with_the_window_operator():
    """PyFlink opens a ``KeySelector`` (a rich ``Function``) like the window function."""
    calls = []

    class Key(KeySelector):
        def open(self, runtime_context):
            calls.append(("open", runtime_context.get_task_name()))

        def get_key(self, value):
            assert calls, "get_key before open"
            return value["k"]

        def close(self):
            calls.append(("close",))

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), lambda a, b: a, key_field=Key())
    h.process_element({"k": "x", "v": 1}, 1)
    h.close()
    assert calls == [("open", "Window"), ("close",)]


def test_map_filter_flat_map_functions_are_rich_functions():
    from flinkwin import FilterFunction, FlatMapFunction, Function, MapFunction
    from flinkwin.operator.runtime_context import TaskInfo, TaskRuntimeContext

    assert all(issubclass(c, Function) for c in (MapFunction, FlatMapFunction, FilterFunction))
    context = TaskRuntimeContext(TaskInfo("map", 1, 2, 2))
    assert context.get_task_name_with_subtasks() == "map (2/2)"
    with pytest.raises(RuntimeError, match="only available on a keyed stream"):
        context.get_state(ValueStateDescriptor("s", None))
