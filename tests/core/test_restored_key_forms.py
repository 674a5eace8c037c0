"""A snapshot whose keys this flinkwin holds in another form under their declared key type is
refused by name, never split silently (``flinkwin.operator.snapshots.restored_keys``).

An earlier flinkwin kept an ``IntEnum`` member declared ``Types.INT()``, a ``Row`` declared
``Types.TUPLE``, a float declared ``Types.FLOAT()``, a zoned datetime declared
``Types.SQL_TIMESTAMP()``... as the key selector returned them; this one keys the value
PyFlink's coder of the type round-trips (:func:`flinkwin.declared_keys.declared_key`), which
Spark may hash into another key group than the state. The snapshots of the old code are made
here as it made them: by the operators with the key kept as returned (``old_key_forms``).
"""

from __future__ import annotations

import datetime
import decimal
import enum
import math
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

import flinkwin.declared_keys
import flinkwin.keys
from flinkwin import ProcessJoinFunction, Time, TumblingEventTimeWindows, Types
from flinkwin.functions.base import ProcessWindowFunction
from flinkwin.functions.builtin import sum_of
from flinkwin.functions.process import KeyedProcessFunction
from flinkwin.operator import IncompatibleKeyError, SnapshotRestoreError, WindowOperator
from flinkwin.operator.graph import OPERATOR, GraphOperator, GraphPlan, NodeSpec, SourceSpec
from flinkwin.operator.interval_join_operator import IntervalJoinOperator
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator
from flinkwin.operator.runtime_context import TaskInfo
from flinkwin.operator.snapshots.restored_keys import restore_keys
from flinkwin.record import Row
from flinkwin.state import ValueStateDescriptor
from flinkwin.time import MAX_LONG

PAIR = Types.TUPLE([Types.INT(), Types.INT()])


class Color(enum.IntEnum):
    RED = 1


@pytest.fixture
def old_key_forms(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], Any]]:
    """Operators built in this context hold keys as the key selector returned them (the
    earlier flinkwin's form); ``undo()`` restores this flinkwin's conversion."""
    real = flinkwin.declared_keys.declared_key
    monkeypatch.setattr(flinkwin.declared_keys, "declared_key", lambda key, key_type: key)
    yield lambda: monkeypatch.setattr(flinkwin.declared_keys, "declared_key", real)


class KeyAndValues(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Iterator[Any]:
        yield key, [e[1] for e in elements]


def window(key_type: Any) -> WindowOperator:
    return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), KeyAndValues(),
                          key_selector=lambda e: e[0], key_type=key_type)


class Counting(KeyedProcessFunction):
    def open(self, runtime_context: Any) -> None:
        self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

    def process_element(self, value: Any, ctx: Any) -> Iterator[Any]:
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        ctx.timer_service().register_event_time_timer(100)
        yield ctx.get_current_key(), n

    def on_timer(self, timestamp: int, ctx: Any) -> Iterator[Any]:
        yield ctx.get_current_key(), "timer"


def keyed_process(key_type: Any) -> KeyedProcessOperator:
    return KeyedProcessOperator(Counting(), lambda e: e[0], key_type=key_type)


class Pairs(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Iterator[Any]:
        yield left[1], right[1]


def interval_join(key_type: Any) -> IntervalJoinOperator:
    return IntervalJoinOperator(-5, 5, True, True, None, None, Pairs(), lambda e: e[0],
                                lambda e: e[0], key_type=key_type)


def test_a_window_snapshot_holding_an_int_enum_key_fails_to_restore_under_int(
    old_key_forms: Callable[[], Any],
) -> None:
    """Types.INT() keys an IntEnum member as its int (IntCoderImpl); the old snapshot's
    ``Color.RED`` would be hashed apart from the int its new elements are keyed by."""
    old = window(Types.INT())
    old.process_element((Color.RED, "a"), 1)
    snapshot = old.snapshot()
    old_key_forms()
    with pytest.raises(IncompatibleKeyError) as failure:
        window(Types.INT()).restore(snapshot)
    message = str(failure.value)
    assert "under the declared key type Types.INT()" in message
    assert "it holds the key <Color.RED: 1> (test_restored_key_forms.Color), now the key 1 (int)"\
        in message
    assert "This flinkwin version keys INT keys differently from the flinkwin that wrote the " \
        "checkpoint" in message
    assert "Start the pipeline from a new checkpoint location (see docs/operations.md, " \
        '"Compatible and incompatible changes")' in message
    assert isinstance(failure.value, SnapshotRestoreError)


def test_a_keyed_process_snapshot_holding_a_row_key_fails_to_restore_under_tuple(
    old_key_forms: Callable[[], Any],
) -> None:
    """Types.TUPLE keys a Row as the plain tuple of its values (TupleCoderImpl)."""
    old = keyed_process(PAIR)
    old.process_element((Row(1, 2), "a"), 1)
    snapshot = old.snapshot()
    old_key_forms()
    with pytest.raises(IncompatibleKeyError, match=(
        r"KeyedProcess: cannot restore .* under the declared key type "
        r"Types\.TUPLE\(\[Types\.INT\(\), Types\.INT\(\)\]\): it holds the key <Row\(1, 2\)> "
        r"\(flinkwin\.record\.Row\), now the key \(1, 2\) \(tuple\)\. This flinkwin version keys "
        r"TUPLE keys differently"
    )):
        keyed_process(PAIR).restore(snapshot)


def test_an_interval_join_snapshot_holding_a_float_key_fails_to_restore_under_float(
    old_key_forms: Callable[[], Any],
) -> None:
    """Types.FLOAT() keys a float as float32 rounds it (FloatCoderImpl): 0.1 is now
    0.10000000149011612. Keys a float32 holds exactly (0.5) were and are the same key."""
    old = interval_join(Types.FLOAT())
    old.process_element((0.5, "l"), 1, 0)
    old.process_element((0.1, "l"), 1, 0)
    snapshot = old.snapshot()
    old_key_forms()
    with pytest.raises(IncompatibleKeyError, match=(
        r"Types\.FLOAT\(\): it holds the key 0\.1 \(float\), now the key 0\.10000000149011612 "
        r"\(float\)\. This flinkwin version keys FLOAT keys differently"
    )) as failure:
        interval_join(Types.FLOAT()).restore(snapshot)
    assert "0.5" not in str(failure.value)


def test_a_zoned_sql_timestamp_key_and_others_fail_by_name_with_how_many_more(
    old_key_forms: Callable[[], Any],
) -> None:
    """SQL_TIMESTAMP keys the naive wall-clock time to the millisecond; the error shows the
    first keys it refuses and counts the others."""
    utc = datetime.timezone.utc
    keys = [datetime.datetime(2024, 1, 1, h, tzinfo=utc) for h in range(1, 6)]
    old = window(Types.SQL_TIMESTAMP())
    for key in [*keys, datetime.datetime(2024, 1, 1, 9)]:
        old.process_element((key, "a"), 1)
    snapshot = old.snapshot()
    old_key_forms()
    with pytest.raises(IncompatibleKeyError) as failure:
        window(Types.SQL_TIMESTAMP()).restore(snapshot)
    message = str(failure.value)
    assert (
        "it holds the key datetime.datetime(2024, 1, 1, 1, 0, tzinfo=datetime.timezone.utc) "
        "(datetime.datetime), now the key datetime.datetime(2024, 1, 1, 1, 0) "
        "(datetime.datetime); "
    ) in message
    assert "(and 2 more). This flinkwin version keys SQL_TIMESTAMP keys" in message


def run(operator: Callable[[], WindowOperator], elements: list[tuple[Any, Any]],
        snapshot_after: int | None) -> list[Any]:
    """The window outputs of ``elements`` (timestamps 1, 2...), the operator replaced by one
    restored from its snapshot after ``snapshot_after`` elements."""
    op = operator()
    for i, element in enumerate(elements):
        if i == snapshot_after:
            restored = operator()
            restored.restore(op.snapshot())
            op = restored
        op.process_element(element, i + 1)
    op.advance_watermark(MAX_LONG)
    return [value for value, _ in op.drain_output()]


CANONICAL = [
    (Types.INT(), [1, 2, 1]),
    (Types.STRING(), ["a", "b", "a"]),
    (PAIR, [(1, 2), (3, 4), (1, 2)]),
    (Types.ROW([Types.INT(), Types.INT()]), [Row(1, 2), Row(3, 4), Row(1, 2)]),
    (Types.ROW_NAMED(["a", "b"], [Types.INT(), Types.INT()]),
     [Row(a=1, b=2), Row(a=3, b=4), Row(a=1, b=2)]),
    (Types.FLOAT(), [0.5, float("nan"), -0.0, 0.5, float("nan"), 0.0]),
    (Types.DOUBLE(), [0.1, -0.0, 0.1, 0.0]),
    (Types.BIG_DEC(), [decimal.Decimal("1.0"), decimal.Decimal("1.00"), decimal.Decimal("1.0")]),
    (Types.SQL_TIMESTAMP(), [datetime.datetime(2024, 1, 1, 12, 0, 0, 5_000)] * 2),
    # TimestampCoderImpl's conversion moves this one a second on (int() of a negative
    # timestamp), and that key again if converted twice: a restored key is not converted again
    (Types.SQL_TIMESTAMP(), [datetime.datetime(1969, 12, 31, 23, 59, 58, 500_000)] * 2),
    (Types.SQL_DATE(), [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)] * 2),
]


@pytest.mark.parametrize(("key_type", "keys"), CANONICAL)
def test_a_snapshot_of_keys_in_their_types_form_restores_and_continues_exactly(
    key_type: Any, keys: list[Any],
) -> None:
    """Keys already as their declared type holds them restore as stored: the windows continue
    exactly as without the snapshot, after every element."""
    elements = [(k, i) for i, k in enumerate(keys)]
    expected = run(lambda: window(key_type), elements, None)
    for after in range(1, len(elements)):
        out = run(lambda: window(key_type), elements, after)
        assert repr(out) == repr(expected)
        assert [type(k) for (k, _) in out] == [type(k) for (k, _) in expected]


def test_old_keys_the_type_holds_as_they_are_restore_under_it(
    old_key_forms: Callable[[], Any],
) -> None:
    """Forms an earlier flinkwin kept that are the same key now restore and continue: a numpy
    integer (hashed as its int then too) and a plain ``Decimal`` (now compared as Java's
    ``BigDecimal``, same scale)."""
    int_keys = keyed_process(Types.INT())
    int_keys.process_element((np.int64(1), "a"), 1)
    decimals = window(Types.BIG_DEC())
    decimals.process_element((decimal.Decimal("1.0"), "a"), 1)
    snapshots = int_keys.snapshot(), decimals.snapshot()
    old_key_forms()
    restored = keyed_process(Types.INT())
    restored.restore(snapshots[0])
    restored.process_element((1, "b"), 2)
    restored.advance_watermark(MAX_LONG)
    assert [v for v, _ in restored.drain_output()] == [(1, 2), (1, "timer")]
    windows = window(Types.BIG_DEC())
    windows.restore(snapshots[1])
    [(key, _)] = windows.window_contents
    assert type(key) is flinkwin.declared_keys.JavaBigDecimal  # the key as this flinkwin holds it
    windows.process_element((decimal.Decimal("1.0"), "b"), 2)
    windows.process_element((decimal.Decimal("1.00"), "c"), 3)
    windows.advance_watermark(MAX_LONG)
    assert sorted((str(k), v) for (k, v), _ in windows.drain_output()) == [
        ("1.0", ["a", "b"]), ("1.00", ["c"])]


def test_canonical_keys_restore_as_the_stored_objects_without_a_per_key_conversion() -> None:
    """The common case costs one pass over the keys' classes: the stored list itself comes
    back (ints, strings, plain tuples of them, floats a float32 holds)."""
    largest = float(np.finfo(np.float32).max)
    for key_type, keys in [(Types.LONG(), [1, 2, 3]), (PAIR, [(1, 2), (3, 4)]),
                           (Types.FLOAT(), [0.5, 1.0, largest]), (Types.DOUBLE(), [0.1, 1e300])]:
        assert restore_keys(keys, True, key_type, "op") is keys
    java = [flinkwin.keys.flink_key(v) for v in (float("nan"), -0.0)]  # as snapshots hold them
    nan, negative_zero = restore_keys([*java], True, Types.FLOAT(), "op")
    assert math.isnan(nan) and math.copysign(1.0, negative_zero) < 0
    assert type(nan) is type(negative_zero) is flinkwin.keys.JavaDouble
    with pytest.raises(IncompatibleKeyError, match=r"it holds the key 3e\+39 \(float\), now the "
                       r"key inf"):
        restore_keys([0.5, 3.0e39], True, Types.FLOAT(), "op")
    with pytest.raises(IncompatibleKeyError, match=r"it holds the key 'a' \(str\), not a key of "
                       r"that type: expected an int, got str"):
        restore_keys(["a"], True, Types.INT(), "op")


class Name(str):
    pass


def test_a_graph_refuses_a_snapshot_whose_operator_holds_a_key_in_another_form(
    old_key_forms: Callable[[], Any],
) -> None:
    """A graph restores each operator's snapshot by that operator's rules: a ``str`` subclass
    an earlier flinkwin kept under Types.STRING() (now the plain ``str``) is refused."""
    def build(task_info: TaskInfo) -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)), sum_of("v"),
                              key_selector=lambda r: Name(r.k), key_type=Types.STRING(),
                              task_info=task_info)

    nodes = (NodeSpec("window", OPERATOR, ((("source", 0), 0),), build=build),)
    plan = GraphPlan((SourceSpec(("_fw_i0_0", "_fw_i0_1"), ("k", "v"), delay_ms=0),), nodes,
                     ("node", 0))
    old = GraphOperator(plan, TaskInfo("Graph", 0, 1, 1))
    old.process_batch(pd.DataFrame({"_fw_in": [0], "_fw_i0_0": ["a"], "_fw_i0_1": [1]}), [1])
    snapshot = old.snapshot()
    old_key_forms()
    with pytest.raises(IncompatibleKeyError, match=(
        r"Types\.STRING\(\): it holds the key 'a' \(test_restored_key_forms\.Name\), now the "
        r"key 'a' \(str\)\. This flinkwin version keys STRING keys differently"
    )):
        GraphOperator(plan, TaskInfo("Graph", 0, 1, 1)).restore(snapshot)


class IntervalKeyAndValues(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Iterator[Any]:
        yield type(key), key, [e["v"] for e in elements]


@pytest.mark.parametrize("columns", [("d",), ("k", "d")], ids=["interval", "with_a_string"])
def test_interval_column_keys_held_as_pandas_timedelta_restore_as_datetime_timedelta(
    columns: tuple[str, ...],
) -> None:
    """A flinkwin up to a49b90f keyed an interval column by the ``pandas.Timedelta`` PySpark
    handed it; this one by ``datetime.timedelta``. A snapshot holding the old form restores
    as one key with the new elements of that interval (one firing with every value), and the
    function sees ``datetime.timedelta``, as for keys of this flinkwin's own snapshots."""
    day = datetime.timedelta(days=1, microseconds=7)

    def op() -> WindowOperator:
        return WindowOperator(TumblingEventTimeWindows.of(Time.milliseconds(10)),
                              IntervalKeyAndValues(), key_selector=list(columns))

    old = op()
    old.process_element(Row(k="a", d=pd.Timedelta(day), v=1), 1)  # the old key form
    restored = op()
    restored.restore(old.snapshot())
    restored.process_element(Row(k="a", d=day, v=2), 2)
    restored.advance_watermark(MAX_LONG)
    [(kind, key, values)] = [value for value, _ in restored.drain_output()]
    assert values == [1, 2]
    held = key if len(columns) == 1 else key[1]
    assert type(held) is datetime.timedelta and held == day
    assert kind is (datetime.timedelta if len(columns) == 1 else type(key))
