"""What a stage stores is sealed: one HMAC-SHA256 under the state key over all of a key group's
snapshot bytes, whatever its form, bound to the checkpoint, the stage and the key group, and
checked before anything in it is decoded (no Arrow, no pickle).

Every state form (the object operator, columnar aggregations, panes, sessions, continuous
panes, element lists, a stream graph's operators) is sealed the same way. The element lists of
a stream of pickled values hold pickles in a column that no inner signature covered: rewriting
it ran an attacker's code when the window fired.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from flinkwin import (
    AggregateFunction,
    ContinuousEventTimeTrigger,
    EventTimeSessionWindows,
    KeyedProcessFunction,
    ProcessAllWindowFunction,
    SlidingEventTimeWindows,
    Time,
    TumblingEventTimeWindows,
    Types,
    ValueStateDescriptor,
)
from flinkwin.functions.builtin import sum_of
from flinkwin.operator import (
    SnapshotAuthenticationError,
    SnapshotBinding,
    StatePickler,
    WindowOperator,
    states,
)
from flinkwin.operator.graph import OPERATOR, UNION, GraphOperator, GraphPlan, NodeSpec, SourceSpec
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.time import MAX_LONG

KEY = b"a test state key of 32 bytes...."
KEYED = StatePickler(key=KEY, source="the test key")
UNKEYED = StatePickler()
HERE = SnapshotBinding("query-1", "stage-1", "3")
_SEAL_HEAD = 8 + 32  # the seal's magic and HMAC-SHA256


class WritesMarker:
    """Unpickling this writes a file: what a malicious pickle in state would do."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (Path.write_text, (Path(self.path), "pwned"))


class Collect(ProcessAllWindowFunction):
    def process(self, context: Any, elements: Any) -> Any:
        yield list(elements)


class Acc:
    def __init__(self) -> None:
        self.total = 0


class Total(AggregateFunction):
    def create_accumulator(self) -> Acc:
        return Acc()

    def add(self, value: Any, acc: Acc) -> Acc:
        acc.total += value.v
        return acc

    def get_result(self, acc: Acc) -> int:
        return acc.total

    def merge(self, a: Acc, b: Acc) -> Acc:
        a.total += b.total
        return a


def _keyed(assigner: Any, function: Any = None, **options: Any) -> Callable[[], WindowOperator]:
    def factory() -> WindowOperator:
        return WindowOperator(assigner, function or sum_of("v"), key_selector="k", **options)

    return factory


def _pickled_values() -> Callable[[], WindowOperator]:
    """``window_all(...).process(F())`` over a stream of pickled values (``map(f)`` without an
    output type): the element-lists state."""
    def factory() -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), Collect(),
                              pickled_elements=True)

    return factory


class Sums(KeyedProcessFunction):
    """Sums ``v`` per key in keyed state; emits the sum when the element's timer fires."""

    def open(self, runtime_context: Any) -> None:
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))

    def process_element(self, value: Any, ctx: Any) -> Any:
        self.total.update((self.total.value() or 0) + value.v)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 10)
        return iter(())

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        yield (ctx.get_current_key(), self.total.value())


def _graph(process: bool = False) -> Callable[[], GraphOperator]:
    """A stream graph holding a window (an AggregateFunction's accumulators) or a keyed
    process function (keyed state and timers)."""
    def window(task_info: TaskInfo) -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), Total(),
                              key_selector="k", task_info=task_info)

    def keyed_process(task_info: TaskInfo) -> KeyedProcessOperator:
        return KeyedProcessOperator(Sums(), "k", task_info=task_info)

    source = SourceSpec(("_fw_i0_0", "_fw_i0_1"), ("k", "v"), delay_ms=0)
    nodes = (
        NodeSpec("union", UNION, ((("source", 0), 0),)),
        NodeSpec("operator", OPERATOR, ((("node", 0), 0),),
                 build=keyed_process if process else window),
    )
    plan = GraphPlan((source,), nodes, ("node", 1))
    return lambda: GraphOperator(plan, TaskInfo("Graph", 0, 1, 1))


_TUMBLING = TumblingEventTimeWindows.of(Time.milliseconds(10))
FORMS: dict[str, tuple[Callable[[], Any], str]] = {
    "object": (_keyed(_TUMBLING, Total()), states.OBJECT),
    "columnar": (_keyed(_TUMBLING), states.COLUMNAR),
    "panes": (
        _keyed(SlidingEventTimeWindows.of(Time.milliseconds(20), Time.milliseconds(10))),
        states.PANES,
    ),
    "sessions": (_keyed(EventTimeSessionWindows.with_gap(Time.milliseconds(5))), states.SESSIONS),
    "continuous": (
        _keyed(_TUMBLING, trigger=ContinuousEventTimeTrigger.of(Time.milliseconds(3))),
        states.CONTINUOUS,
    ),
    "lists": (_pickled_values(), states.LISTS),
    "graph of a window": (_graph(), "graph"),
    "graph of a keyed process function": (_graph(process=True), "graph"),
}


def _holding_state(form: str) -> tuple[Any, Callable[[], Any]]:
    """A state of ``form`` holding two elements in open windows."""
    factory, kind = FORMS[form]
    if kind == "graph":
        state = factory()
        frame = pd.DataFrame({"_fw_in": [0, 0], "_fw_i0_0": ["a", "b"], "_fw_i0_1": [1, 2]})
        state.process_batch(frame, [1, 2])
        return state, factory
    assert states.state_kind(factory(), True) == kind
    state = states.new_state(kind, factory)
    if kind == states.LISTS:
        frame = pd.DataFrame({"value": [pickle.dumps(1), pickle.dumps(2)]})
    else:
        frame = pd.DataFrame({"k": ["a", "b"], "v": np.array([1, 2], dtype=np.int64)})
    state.process_batch(frame, np.array([1, 2], dtype=np.int64))
    return state, factory


def _fired(state: Any) -> list[Any]:
    # (a graph's sources have watermarks of their own: the end of input fires everything)
    state.advance_watermark(MAX_LONG if isinstance(state, GraphOperator) else 100)
    if states.frame_outputs(state):
        frame = state.drain_main()
        return [] if frame is None else sorted(map(tuple, frame.itertuples(index=False)))
    return sorted(repr(v) for v, _ in state.drain_output())


def _flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 1]) + data[at + 1:]


@pytest.mark.parametrize("form", FORMS)
def test_every_state_form_restores_from_its_sealed_snapshot(form: str) -> None:
    state, factory = _holding_state(form)
    stored = states.sealed_snapshot(state, KEYED, HERE)
    restored = states.restore_sealed(stored, factory, KEYED, HERE)
    assert type(restored) is type(state)
    assert _fired(restored) == _fired(state) != []


@pytest.mark.parametrize("form", FORMS)
def test_a_changed_byte_anywhere_in_any_state_form_is_refused_before_decoding(
    form: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, factory = _holding_state(form)
    stored = states.sealed_snapshot(state, KEYED, HERE)

    def no_decoding(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("decoded a snapshot whose seal was not checked")

    monkeypatch.setattr(pa.ipc, "open_stream", no_decoding)
    monkeypatch.setattr(pickle, "loads", no_decoding)
    for at in (_SEAL_HEAD, len(stored) // 2, len(stored) - 1, 10):
        with pytest.raises(SnapshotAuthenticationError,
                           match=r"HMAC-SHA256 check of the stored state failed .*test key"):
            states.restore_sealed(_flipped(stored, at), factory, KEYED, HERE)


def _element_lists_with_value(sealed: bytes, value: bytes) -> bytes:
    """An element-lists snapshot (taken out of its seal) whose value column holds ``value``."""
    table = pa.ipc.open_stream(pa.py_buffer(sealed[_SEAL_HEAD:])).read_all()
    column = table.schema.get_field_index("value")
    table = table.set_column(column, "value", pa.array([value] * table.num_rows, pa.binary()))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as stream:
        stream.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


def test_a_pickle_written_into_the_element_lists_value_column_runs_no_code(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "marker"
    state, factory = _holding_state("lists")
    stored = states.sealed_snapshot(state, KEYED, HERE)
    tampered = _element_lists_with_value(stored, pickle.dumps(WritesMarker(str(marker))))
    # under the original seal, and with the seal stripped (as a snapshot of an older flinkwin)
    for attempt in (stored[:_SEAL_HEAD] + tampered, tampered):
        with pytest.raises(SnapshotAuthenticationError, match="refusing to decode it"):
            states.restore_sealed(attempt, factory, KEYED, HERE)
    assert not marker.exists()
    # decoded without the check (as before sealing), the window's firing runs the code
    unchecked = states.restore_state(tampered, factory)
    unchecked.advance_watermark(100)
    assert marker.read_text() == "pwned"


@pytest.mark.parametrize("elsewhere", [
    SnapshotBinding("query-1", "stage-1", "4"),
    SnapshotBinding("query-1", "stage-2", "3"),
    SnapshotBinding("query-2", "stage-1", "3"),
    SnapshotBinding("query-13", "stage-1", ""),
], ids=["another key group", "another stage", "another checkpoint", "shifted fields"])
def test_a_snapshot_replayed_into_another_key_group_stage_or_checkpoint_is_refused(
    elsewhere: SnapshotBinding,
) -> None:
    state, factory = _holding_state("lists")
    stored = states.sealed_snapshot(state, KEYED, HERE)
    with pytest.raises(SnapshotAuthenticationError,
                       match=f"key group {elsewhere.key_group or '-'}, stage"):
        states.restore_sealed(stored, factory, KEYED, elsewhere)


@pytest.mark.parametrize("form", FORMS)
def test_an_unsealed_snapshot_is_refused_under_a_state_key_and_read_as_before_without(
    form: str,
) -> None:
    """A snapshot of a flinkwin before sealing: refused under a configured key (nothing in it
    is decoded), read as it always was without one."""
    state, factory = _holding_state(form)
    old = state.snapshot()
    with pytest.raises(SnapshotAuthenticationError, match="carries no flinkwin seal.*test key"):
        states.restore_sealed(old, factory, KEYED, HERE)
    assert _fired(states.restore_sealed(old, factory, UNKEYED, HERE)) == _fired(state)


def test_without_a_state_key_the_seal_detects_corruption_and_misplacement() -> None:
    state, factory = _holding_state("columnar")
    stored = states.sealed_snapshot(state, UNKEYED, HERE)
    assert _fired(states.restore_sealed(stored, factory, UNKEYED, HERE)) == _fired(state)
    for attempt, binding in ((_flipped(stored, len(stored) - 1), HERE),
                             (stored, SnapshotBinding("query-1", "stage-1", "4"))):
        with pytest.raises(SnapshotAuthenticationError, match="no state key configured"):
            states.restore_sealed(attempt, factory, UNKEYED, binding)


def test_a_snapshot_sealed_under_another_key_or_none_is_refused() -> None:
    state, factory = _holding_state("sessions")
    other = StatePickler(key=b"another key of the same length..")
    for writer in (UNKEYED, other):
        stored = states.sealed_snapshot(state, writer, HERE)
        with pytest.raises(SnapshotAuthenticationError, match="written under another key"):
            states.restore_sealed(stored, factory, KEYED, HERE)


def test_bytes_that_are_not_a_snapshot_under_a_copied_seal_are_refused_not_decoded() -> None:
    state, factory = _holding_state("panes")
    stored = states.sealed_snapshot(state, KEYED, HERE)
    for attempt in (stored[:_SEAL_HEAD] + b"not arrow at all", stored[:_SEAL_HEAD], stored[:20]):
        with pytest.raises(SnapshotAuthenticationError, match="HMAC-SHA256 check"):
            states.restore_sealed(attempt, factory, KEYED, HERE)
