"""What flinkwin unpickles from state and when user functions open and close, without Spark.

Snapshots sign their pickled objects (HMAC-SHA256 under the pipeline's state key) and a restore
checks the signature before unpickling anything: a tampered snapshot, one written under another
key, or pickled bytes without flinkwin's signature are refused and never run code. The operators
built for one subtask over its life (one per restore) share its functions: ``open()`` runs once
before its first element, ``close()`` once.
"""

from __future__ import annotations

import copy
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest

from flinkwin import AggregateFunction, Time, TumblingEventTimeWindows, ValueStateDescriptor
from flinkwin.functions import KeyedProcessFunction, MapFunction
from flinkwin.operator import SnapshotAuthenticationError, StatePickler, WindowOperator
from flinkwin.operator.graph import MAP, OPERATOR, GraphOperator, GraphPlan, NodeSpec, SourceSpec
from flinkwin.operator.graph_subtask import GraphSubtask
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator
from flinkwin.operator.runtime_context import Subtask, TaskInfo
from flinkwin.record import Row
from flinkwin.types import Types

KEY = b"a test state key of 32 bytes...."


class Acc:
    def __init__(self) -> None:
        self.total = 0


class Total(AggregateFunction):
    """Sums ``v`` per window; counts its opens and closes, and its elements in keyed state
    obtained once in ``open`` (as PyFlink programs do)."""

    def __init__(self) -> None:
        self.opened = 0
        self.closed = 0
        self.seen: Any = None

    def open(self, runtime_context: Any) -> None:
        self.opened += 1
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen", None))

    def close(self) -> None:
        self.closed += 1

    def create_accumulator(self) -> Acc:
        return Acc()

    def add(self, value: Any, acc: Acc) -> Acc:
        self.seen.update((self.seen.value() or 0) + 1)
        acc.total += value.v
        return acc

    def get_result(self, acc: Acc) -> int:
        return acc.total

    def merge(self, a: Acc, b: Acc) -> Acc:
        a.total += b.total
        return a


class WritesMarker:
    """Unpickling this writes a file: what a malicious pickle in state would do."""

    def __init__(self, path: str) -> None:
        self.path = path

    def __reduce__(self) -> Any:
        return (Path.write_text, (Path(self.path), "pwned"))


def _operator(pickler: StatePickler | None = None, subtask: Subtask | None = None,
              function: Any = None) -> WindowOperator:
    if subtask is not None:
        function = subtask.function
    return WindowOperator(
        TumblingEventTimeWindows.of(Time.milliseconds(10)), function or Total(),
        key_selector="k", state_pickler=pickler, subtask=subtask,
    )


def _with_state(pickler: StatePickler) -> bytes:
    op = _operator(pickler)
    op.process_element(Row(k="a", v=1), 1)
    op.process_element(Row(k="b", v=2), 2)
    return op.snapshot()


def _replace_blob(snapshot: bytes, blob: bytes) -> bytes:
    """``snapshot`` with the meta row's pickled objects replaced by ``blob``."""
    table = pa.ipc.open_stream(pa.py_buffer(snapshot)).read_all()
    blobs = table.column("blob").to_pylist()
    blobs[0] = blob
    table = table.set_column(table.schema.get_field_index("blob"), "blob",
                             pa.array(blobs, pa.binary()))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as stream:
        stream.write_table(table)
    return sink.getvalue().to_pybytes()


def _meta_blob(snapshot: bytes) -> bytes:
    table = pa.ipc.open_stream(pa.py_buffer(snapshot)).read_all()
    return bytes(table.column("blob")[0].as_py())


# ------------------------------------------------------------------------ trust boundary
def test_a_snapshot_restores_under_the_key_it_was_written_with() -> None:
    pickler = StatePickler(key=KEY, source="the test key")
    restored = _operator(pickler)
    restored.restore(_with_state(pickler))
    restored.advance_watermark(100)
    assert sorted(v for v, _ in restored.drain_output()) == [1, 2]


def test_a_tampered_snapshot_is_refused_before_anything_is_unpickled(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    pickler = StatePickler(key=KEY, source="the test key")
    snapshot = _with_state(pickler)
    blob = _meta_blob(snapshot)
    # keep flinkwin's header (magic and signature) but swap the pickled objects
    evil = pickle.dumps(WritesMarker(str(marker)))
    tampered = _replace_blob(snapshot, blob[:36] + evil)  # 4 magic + 32 HMAC bytes
    with pytest.raises(SnapshotAuthenticationError, match=r"HMAC-SHA256 check .* \(the test key\)"):
        _operator(pickler).restore(tampered)
    assert not marker.exists()
    # the same bytes unpickled without the check would have run the code
    pickle.loads(evil)
    assert marker.read_text() == "pwned"


def test_a_snapshot_of_plain_pickled_objects_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    snapshot = _replace_blob(_with_state(StatePickler()),
                             pickle.dumps(WritesMarker(str(marker))))
    with pytest.raises(SnapshotAuthenticationError, match="carry no flinkwin signature"):
        _operator(StatePickler()).restore(snapshot)
    assert not marker.exists()


def test_a_snapshot_written_under_another_key_is_refused() -> None:
    snapshot = _with_state(StatePickler(key=KEY))
    other = StatePickler(key=b"another key of the same length..", source="spark.flinkwin.x")
    with pytest.raises(SnapshotAuthenticationError, match="spark.flinkwin.x"):
        _operator(other).restore(snapshot)
    # unkeyed snapshots are checked too (corruption), but under a public key
    with pytest.raises(SnapshotAuthenticationError):
        _operator(StatePickler()).restore(snapshot)


def test_the_state_key_never_appears_in_the_picklers_repr() -> None:
    assert "test state key" not in repr(StatePickler(key=KEY, source="the conf"))


class _Conf:
    def __init__(self, value: str | None) -> None:
        self.value = value

    def get(self, name: str, default: Any = None) -> Any:
        return self.value if name == "spark.flinkwin.state.secret" else default


class _Session:
    def __init__(self, value: str | None) -> None:
        self.conf = _Conf(value)


def test_a_configured_state_key_that_protects_nothing_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from flinkwin.operator.snapshots import UNKEYED
    from flinkwin.spark.state_key import CONF, ENV, StateKeyError, state_pickler

    assert CONF == "spark.flinkwin.state.secret"
    monkeypatch.delenv(ENV, raising=False)
    # flinkwin's public stand-in for "no key" (anyone can seal with it: an unsealed or
    # forged checkpoint would restore under it), a short key and an unresolved secret
    for value, message in ((UNKEYED.decode(), "public stand-in for 'no state key'"),
                           ("short", "holds 5 bytes"),
                           ("{{secrets/scope/key}}", "unresolved secret reference")):
        with pytest.raises(StateKeyError, match=message):
            state_pickler(_Session(value))  # type: ignore[arg-type]
    assert state_pickler(_Session(KEY.decode())).key == KEY  # type: ignore[arg-type]


def test_the_pickler_dumps_with_the_given_function() -> None:
    calls: list[Any] = []

    def dumps(value: Any) -> bytes:
        calls.append(value)
        return pickle.dumps(value)

    pickler = StatePickler(key=KEY, dumps=dumps)
    assert pickler.load(pickler.dump({"a": 1})) == {"a": 1} and calls == [{"a": 1}]


# ------------------------------------------------------------------------------ lifecycle
def test_a_subtask_opens_its_functions_once_across_restored_operators() -> None:
    subtask = Subtask(Total(), "k", TaskInfo(index_of_this_subtask=3))
    first = _operator(subtask=subtask)
    first.process_element(Row(k="a", v=1), 1)
    snapshot = first.snapshot()
    for ts in (2, 3, 4):  # each batch restores into a new operator, as a Spark worker may
        op = _operator(subtask=subtask)
        op.restore(snapshot)
        op.process_element(Row(k="a", v=ts), ts)
        snapshot = op.snapshot()
    function = subtask.function
    assert function.opened == 1 and function.closed == 0
    # the state handle obtained in open() follows the operator at work
    last = _operator(subtask=subtask)
    last.restore(snapshot)
    last.current_key = "a"
    assert function.seen.value() == 4
    last.advance_watermark(100)
    assert [v for v, _ in last.drain_output()] == [1 + 2 + 3 + 4]
    last.close()
    last.close()
    assert function.opened == 1 and function.closed == 1


def test_an_operator_without_a_subtask_opens_and_closes_its_own_functions() -> None:
    function = Total()
    op = _operator(function=function)
    op.process_element(Row(k="a", v=1), 1)
    op.close()
    assert (function.opened, function.closed) == (1, 1)


def test_closing_a_subtask_closes_every_function_even_if_one_fails() -> None:
    closed: list[str] = []

    class Failing(Total):
        def close(self) -> None:
            closed.append("function")
            raise OSError("connection already gone")

    subtask = Subtask(Failing(), "k", TaskInfo())
    _operator(subtask=subtask).process_element(Row(k="a", v=1), 1)
    with pytest.raises(OSError, match="already gone"):
        subtask.close()
    subtask.close()  # once only
    assert closed == ["function"]


def test_a_subtask_that_never_opened_closes_nothing() -> None:
    subtask = Subtask(Total(), "k", TaskInfo())
    _operator(subtask=subtask)
    subtask.close()
    assert subtask.function.opened == 0 and subtask.function.closed == 0



# ------------------------------------------------------------------- graph stage subtasks
class Counting(KeyedProcessFunction):
    """Counts its elements per key in keyed state obtained in ``open``."""

    def __init__(self) -> None:
        self.opened = self.closed = 0

    def open(self, runtime_context: Any) -> None:
        self.opened += 1
        self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.LONG()))

    def close(self) -> None:
        self.closed += 1

    def process_element(self, value: Any, ctx: Any) -> Any:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield (ctx.get_current_key(), n)


class Doubling(MapFunction):
    def __init__(self) -> None:
        self.opened = self.closed = 0

    def open(self, runtime_context: Any) -> None:
        self.opened += 1

    def close(self) -> None:
        self.closed += 1

    def map(self, value: Any) -> Any:
        return (value[0], value[1] * 2)


@dataclass(frozen=True)
class CountingBuilder:
    """A keyed process node (what flinkwin.spark.graph_nodes.ProcessBuilder builds)."""

    function: Any

    def subtask(self, task_info: TaskInfo) -> Subtask:
        return Subtask(copy.deepcopy(self.function), "k", task_info)

    def __call__(self, task_info: TaskInfo, subtask: Subtask | None = None) -> Any:
        if subtask is None:
            return KeyedProcessOperator(copy.deepcopy(self.function), "k", task_info=task_info)
        return KeyedProcessOperator(subtask.function, subtask.key_selector, task_info=task_info,
                                    subtask=subtask)


def _graph_plan(doubling: Doubling) -> GraphPlan:
    return GraphPlan(
        sources=(SourceSpec(columns=("k", "v"), names=("k", "v")),),
        nodes=(
            NodeSpec("process", OPERATOR, ((("source", 0), 0),),
                     build=CountingBuilder(Counting())),
            NodeSpec("map", MAP, ((("node", 0), 0),), function=doubling.map, rich=doubling),
        ),
        main=("node", 1),
    )


def _graph_batch(op: GraphOperator, key: str) -> list[Any]:
    op.process_batch(pd.DataFrame({"_fw_in": [0], "k": [key], "v": [1]}), [1])
    return [value for value, _ in op.drain_output()]


def test_a_graph_subtask_opens_its_functions_once_across_rebuilt_operators() -> None:
    plan = _graph_plan(Doubling())
    info = TaskInfo(task_name="Graph", index_of_this_subtask=2)
    subtask = GraphSubtask(plan, info)
    first = GraphOperator(plan, info, subtask)
    assert _graph_batch(first, "a") == [("a", 2)]
    snapshot = first.snapshot()
    outputs = []
    for _ in range(3):  # each micro-batch restores into a new operator, as a Spark worker may
        op = GraphOperator(plan, info, subtask)
        op.restore(snapshot)
        outputs += _graph_batch(op, "a")
        snapshot = op.snapshot()
    # the keyed state handle obtained in open() followed each rebuilt operator
    assert outputs == [("a", 4), ("a", 6), ("a", 8)]
    process, step = subtask.nodes[0].function, subtask.steps[1][1]  # type: ignore[index]
    assert (process.opened, process.closed, step.opened, step.closed) == (1, 0, 1, 0)
    # the plan's own objects are never opened: each subtask runs its own copies
    assert plan.nodes[1].rich.opened == 0
    op.close()
    subtask.close()  # once only
    assert (process.opened, process.closed, step.opened, step.closed) == (1, 1, 1, 1)


def test_a_graph_operator_without_a_subtask_opens_and_closes_its_own_functions() -> None:
    doubling = Doubling()
    op = GraphOperator(_graph_plan(doubling), TaskInfo(task_name="Graph"))
    assert _graph_batch(op, "a") == [("a", 2)]
    op.close()
    assert (doubling.opened, doubling.closed) == (1, 1)
