"""Snapshot formats are versioned in one list (flinkwin.operator.snapshots.formats): every format
this flinkwin writes is released there, every released format stays readable, and a format it does
not know is refused naming it, before anything is decoded."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from flinkwin import AggregateFunction, Time, TumblingEventTimeWindows
from flinkwin.operator import (
    SnapshotAuthenticationError,
    StatePickler,
    WindowOperator,
    graph,
    states,
)
from flinkwin.operator.snapshots import formats
from flinkwin.operator.snapshots import process as process_snapshot
from flinkwin.operator.snapshots import window as snapshot
from flinkwin.operator.snapshots.formats import UnknownFormatError
from flinkwin.operator.states import columnar, continuous, panes, sessions
from flinkwin.operator.states import lists as element_lists

KEYED = StatePickler(key=b"a test state key of 32 bytes....", source="the test key")


class Acc:
    def __init__(self) -> None:
        self.total = 0


class Total(AggregateFunction):
    def create_accumulator(self) -> Acc:
        return Acc()

    def add(self, value: Any, acc: Acc) -> Acc:
        acc.total += value["v"]
        return acc

    def get_result(self, acc: Acc) -> int:
        return acc.total

    def merge(self, a: Acc, b: Acc) -> Acc:
        a.total += b.total
        return a


def test_every_format_this_flinkwin_writes_is_a_released_one() -> None:
    written = {
        formats.OBJECT: snapshot.FORMAT_VERSION, formats.COLUMNAR: columnar.FORMAT,
        formats.PANES: panes.FORMAT, formats.SESSIONS: sessions.FORMAT,
        formats.LISTS: element_lists.FORMAT, formats.CONTINUOUS: continuous.FORMAT,
        formats.GRAPH: graph.FORMAT, formats.PROCESS: process_snapshot.FORMAT,
    }
    for form, name in written.items():
        assert formats.written(form) == name
        assert name in formats.readable(form)
    assert {f.form for f in formats.RELEASED if f.written} == {*written, formats.INTERVAL_JOIN}
    names = [f.name for f in formats.RELEASED]
    assert len(names) == len(set(names))
    assert all(states.FORMATS[kind] == formats.written(kind) for kind in states.FORMATS)


def test_formats_2_and_3_of_the_operator_snapshot_stay_readable() -> None:
    assert formats.readable(formats.OBJECT) == ("2", "3", "4")
    assert not formats.check("2", formats.OBJECT).written
    assert not formats.check("3", formats.OBJECT).written


def _operator(pickler: StatePickler | None = None) -> WindowOperator:
    return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), Total(),
                          key_selector="k", state_pickler=pickler)


def _as_format_2(data: bytes) -> bytes:
    """A format-4 snapshot (of an operator without firing metadata: the columns of format 3)
    as format 2 wrote it: the same columns, its pickled objects without
    the signature (magic and HMAC-SHA256), ``flinkwin.format`` 2."""
    table = pa.ipc.open_stream(pa.py_buffer(data)).read_all()
    blobs = table.column("blob").to_pylist()
    blobs[0] = blobs[0][4 + 32:]
    table = table.set_column(table.schema.get_field_index("blob"), "blob",
                             pa.array(blobs, pa.binary()))
    table = table.replace_schema_metadata({"flinkwin.format": "2"})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _fired(op: WindowOperator) -> list[Any]:
    op.advance_watermark(100)
    return sorted(v for v, _ in op.drain_output())


def test_a_format_2_snapshot_restores_without_a_state_key_and_is_refused_under_one() -> None:
    op = _operator()
    for k, v, ts in (("a", 1, 1), ("b", 2, 2), ("a", 3, 12)):
        op.process_element({"k": k, "v": v}, ts)
    old = _as_format_2(op.snapshot())
    restored = _operator()
    restored.restore(old)
    assert _fired(restored) == _fired(op) == [1, 2, 3]
    state = states.restore_state(old, _operator)
    assert isinstance(state, WindowOperator) and _fired(state) == [1, 2, 3]
    with pytest.raises(SnapshotAuthenticationError, match=(
            r"format 2: its pickled objects carry no signature, while a state key is "
            r"configured \(the test key\)")):
        _operator(KEYED).restore(old)


def test_a_snapshot_of_an_unknown_format_is_refused_naming_it() -> None:
    op = _operator()
    op.process_element({"k": "a", "v": 1}, 1)
    table = pa.ipc.open_stream(pa.py_buffer(op.snapshot())).read_all()
    table = table.replace_schema_metadata({"flinkwin.format": "5"})
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    later = sink.getvalue().to_pybytes()
    with pytest.raises(UnknownFormatError, match=(
            r"format '5' is not one this flinkwin reads \('2', '3', '4', 'columnar-1'.*it was "
            r"written by a later flinkwin")):
        states.restore_state(later, _operator)
    with pytest.raises(UnknownFormatError, match="format '5'"):
        _operator().restore(later)
    with pytest.raises(ValueError, match="format 'columnar-1' holds columnar state, not object"):
        formats.check("columnar-1", formats.OBJECT, "window operator snapshot")
