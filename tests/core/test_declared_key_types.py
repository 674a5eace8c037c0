"""A declared key type makes keys one key as PyFlink's coder of that type does.

PyFlink's ``key_by(selector, key_type)`` ships each key encoded by the coder of ``key_type``
(``pyflink/fn_execution/coder_impl_fast.pyx``, ``coders.from_type_info``); Flink keys the
decoded value, and the keyed Python function gets the value decoded from those bytes. So two
keys the coder writes to the same bytes are one key, handed to user functions as the decoded
value (:func:`flinkwin.declared_keys.declared_key`), in every keyed operator, across snapshots.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from flinkwin import ProcessJoinFunction, Time, TumblingEventTimeWindows, Types
from flinkwin.declared_keys import JavaBigDecimal, declared_key
from flinkwin.errors import KeyTypeError
from flinkwin.functions.base import ProcessWindowFunction
from flinkwin.functions.process import KeyedProcessFunction
from flinkwin.operator import WindowOperator
from flinkwin.operator.graph_chain import key_group_of
from flinkwin.operator.interval_join_operator import IntervalJoinOperator
from flinkwin.operator.keyed_process_operator import KeyedProcessOperator
from flinkwin.record import Row
from flinkwin.time import MAX_LONG

PAIR = Types.TUPLE([Types.INT(), Types.INT()])
ROW = Types.ROW([Types.INT(), Types.INT()])
NAMED = Types.ROW_NAMED(["a", "b"], [Types.INT(), Types.INT()])
UTC_PLUS_2 = datetime.timezone(datetime.timedelta(hours=2))


class Color(enum.IntEnum):
    RED = 1


class Name(str):
    pass


class KeyAndCount(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Iterator[Any]:
        yield key, len(list(elements))


def keys_in_a_window(key_type: Any, keys: list[Any]) -> list[tuple[Any, int]]:
    """(key handed to the window function, elements) per key, for elements keyed ``keys``."""
    op = WindowOperator(
        TumblingEventTimeWindows.of(Time.milliseconds(10)), KeyAndCount(),
        key_selector=lambda e: e[0], key_type=key_type,
    )
    for key in keys:
        op.process_element((key,), 1)
    op.advance_watermark(MAX_LONG)
    return [value for value, _ in op.drain_output()]


def test_a_row_and_a_tuple_declared_tuple_are_one_key_the_plain_tuple() -> None:
    """TupleCoderImpl writes ``value[i]`` field by field, so ``Row(1, 2)`` and ``(1, 2)`` are
    the same bytes; it decodes a plain tuple."""
    [(key, count)] = keys_in_a_window(PAIR, [Row(1, 2), (1, 2), Row(a=1, b=2)])
    assert (key, type(key), count) == ((1, 2), tuple, 3)


def test_a_row_and_a_tuple_declared_row_are_one_key_a_row() -> None:
    """RowCoderImpl writes ``value.get_fields_by_names(names)`` and decodes a ``Row``."""
    [(key, count)] = keys_in_a_window(ROW, [(1, 2), Row(1, 2), Row(f1=2, f0=1)])
    assert (repr(key), count) == ("<Row(1, 2)>", 3)


def test_rows_declared_row_named_are_taken_by_name() -> None:
    """``get_fields_by_names``: a named row's values are taken by the type's names, so
    ``Row(b=2, a=1)`` is ``Row(a=1, b=2)``; a tuple or an unnamed row by position."""
    [(key, count)] = keys_in_a_window(NAMED, [Row(b=2, a=1), Row(a=1, b=2), (1, 2), Row(1, 2)])
    assert (repr(key), type(key).__fields__, count) == ("Row(a=1, b=2)", ("a", "b"), 4)


def test_a_row_named_otherwise_than_its_declared_row_type_fails() -> None:
    """RowCoderImpl: ``get_fields_by_names`` raises for names the row does not have."""
    with pytest.raises(KeyTypeError, match=r"Field names \['x', 'y'\] do not match \['a', 'b'\]"):
        keys_in_a_window(NAMED, [Row(x=1, y=2)])
    with pytest.raises(KeyTypeError, match=r"do not match \['f0', 'f1'\]"):
        keys_in_a_window(ROW, [Row(a=1, b=2)])


def test_an_int_enum_member_and_its_int_are_one_int_key() -> None:
    """IntCoderImpl/BigIntCoderImpl write ``write_int32(value)``/``write_int64``: the int value
    (numpy integers too), decoded a plain ``int``."""
    for key_type in (Types.INT(), Types.LONG(), Types.SHORT(), Types.BYTE()):
        [(key, count)] = keys_in_a_window(key_type, [Color.RED, 1, np.int64(1)])
        assert (key, type(key), count) == (1, int, 3)


def test_float_keys_are_rounded_to_32_bits() -> None:
    """FloatCoderImpl: ``write_float`` (4 bytes), ``read_float`` decodes that float32 as a
    Python float; so ``0.1`` and float32's ``0.1`` are one key, handed back as
    ``0.10000000149011612``. ``DOUBLE`` keeps them apart."""
    rounded = float(np.float32(0.1))
    [(key, count)] = keys_in_a_window(Types.FLOAT(), [0.1, rounded, np.float32(0.1)])
    assert (key, type(key), count) == (0.10000000149011612, float, 3)
    assert len(keys_in_a_window(Types.DOUBLE(), [0.1, rounded])) == 2
    [(nan, n)] = keys_in_a_window(Types.FLOAT(), [float("nan"), float("nan")])
    assert math.isnan(nan) and n == 2  # Float.equals: every NaN one key
    assert len(keys_in_a_window(Types.FLOAT(), [0.0, -0.0])) == 2


def test_a_str_subclass_and_a_numpy_bool_are_their_plain_values() -> None:
    """CharCoderImpl writes ``value.encode('utf-8')`` and decodes a plain ``str``;
    BooleanCoderImpl writes ``write_byte(value)`` and decodes ``not not byte``."""
    [(key, count)] = keys_in_a_window(Types.STRING(), [Name("a"), "a", np.str_("a")])
    assert (key, type(key), count) == ("a", str, 3)
    [(flag, count)] = keys_in_a_window(Types.BOOLEAN(), [np.True_, True])
    assert (flag, type(flag), count) == (True, bool, 2)


def test_a_zoned_sql_timestamp_is_its_wall_clock_to_the_millisecond() -> None:
    """TimestampCoderImpl(3) (``Types.SQL_TIMESTAMP()``) writes
    ``int(value.replace(tzinfo=utc).timestamp()) * 1000 + microsecond // 1000``: the zone is
    dropped (12:00+02:00 and 12:00 UTC are one key, 10:00 UTC, the same instant, another) and
    so are the microseconds below the millisecond; it decodes a naive datetime."""
    noon = datetime.datetime(2024, 1, 1, 12, 0, 0, 5_250)
    keys = [noon.replace(tzinfo=UTC_PLUS_2), noon.replace(tzinfo=datetime.timezone.utc),
            noon.replace(microsecond=5_000), datetime.datetime(2024, 1, 1, 10, 0, 0, 5_250,
                                                              tzinfo=datetime.timezone.utc)]
    out = keys_in_a_window(Types.SQL_TIMESTAMP(), keys)
    assert out == [(datetime.datetime(2024, 1, 1, 12, 0, 0, 5_000), 3),
                   (datetime.datetime(2024, 1, 1, 10, 0, 0, 5_000), 1)]


def test_sql_date_and_time_keys_are_what_their_coders_write() -> None:
    """DateCoderImpl writes ``toordinal()`` (a datetime is its date); TimeCoderImpl the
    milliseconds of the day (no zone, no microseconds below the millisecond)."""
    day = datetime.date(2024, 1, 1)
    [(key, count)] = keys_in_a_window(Types.SQL_DATE(), [day, datetime.datetime(2024, 1, 1, 9)])
    assert (key, type(key), count) == (day, datetime.date, 2)
    times = [datetime.time(9, 0, 0, 1_999), datetime.time(9, 0, 0, 1_000, tzinfo=UTC_PLUS_2)]
    assert keys_in_a_window(Types.SQL_TIME(), times) == [(datetime.time(9, 0, 0, 1_000), 2)]


def test_big_decimal_keys_of_other_scales_are_two_keys() -> None:
    """BigDecimalCoderImpl writes ``str(value)`` and Java keys a ``BigDecimal``, whose
    ``equals`` compares the scale: ``1.0`` and ``1.00`` are two keys, ``1.0`` twice one."""
    out = keys_in_a_window(Types.BIG_DEC(), [decimal.Decimal("1.0"), decimal.Decimal("1.00"),
                                             decimal.Decimal("1.0")])
    assert sorted((str(k), n) for k, n in out) == [("1.0", 2), ("1.00", 1)]
    assert all(isinstance(k, decimal.Decimal) for k, _ in out)
    with pytest.raises(KeyTypeError, match="not a number Java's BigDecimal holds"):
        keys_in_a_window(Types.BIG_DEC(), [decimal.Decimal("NaN")])


def test_big_decimal_zeros_of_other_scales_are_two_keys_and_no_zero_is_negative() -> None:
    """``BigDecimal.equals``: ``0`` and ``0.0`` differ in scale (two keys); Java's
    ``BigDecimal`` has no negative zero (``-0.0`` is ``0.0``)."""
    zeros = [decimal.Decimal(s) for s in ("0", "0.0", "-0.0")]
    keys = [declared_key(z, Types.BIG_DEC()) for z in zeros]
    assert all(type(k) is JavaBigDecimal for k in keys)
    assert [str(k) for k in keys] == ["0", "0.0", "0.0"]
    assert keys[0] != keys[1] and keys[1] == keys[2]
    out = keys_in_a_window(Types.BIG_DEC(), zeros)
    assert sorted((str(k), n) for k, n in out) == [("0", 1), ("0.0", 2)]


def test_pickled_byte_array_keys_are_told_apart_by_their_pickled_bytes() -> None:
    """PickleCoderImpl: ``pickle.dumps(value)`` decides, so an IntEnum member and its int, a
    Row and a tuple, are two keys each (as a key selector without a key type)."""
    pickled = Types.PICKLED_BYTE_ARRAY()
    assert len(keys_in_a_window(pickled, [Color.RED, 1])) == 2
    assert len(keys_in_a_window(pickled, [Row(1, 2), (1, 2)])) == 2


def test_keys_already_as_their_type_holds_them_stay_themselves() -> None:
    """Checkpoints stay valid: a key already in its declared type's form is that same value
    (the same object), so it keeps its state and its key group."""
    values = [(7, Types.INT()), ("a", Types.STRING()), ((1, "a"), Types.TUPLE(
        [Types.INT(), Types.STRING()])), (Row(1, 2), ROW), (Row(a=1, b=2), NAMED)]
    for value, key_type in values:
        key = declared_key(value, key_type)
        assert key == value and type(key) is type(value)
        assert key is value or isinstance(value, tuple)


class CurrentKey(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Iterator[Any]:
        yield ctx.get_current_key(), value[1]


def test_a_keyed_process_function_gets_the_declared_types_key_across_a_snapshot() -> None:
    """``ctx.get_current_key()`` is the decoded key; a restored operator keeps the keys apart
    and together as before its snapshot (``BIG_DEC`` keys of two scales stay two)."""
    def operator() -> KeyedProcessOperator:
        return KeyedProcessOperator(CurrentKey(), lambda e: e[0], key_type=Types.BIG_DEC())

    op = operator()
    op.process_element((decimal.Decimal("1.0"), 1), 1)
    restored = operator()
    restored.restore(op.snapshot())
    restored.process_element((decimal.Decimal("1.00"), 2), 2)
    restored.process_element((decimal.Decimal("1.0"), 3), 3)
    keys = [k for (k, _), _ in restored.drain_output()]
    assert [str(k) for k in keys] == ["1.00", "1.0"]
    int_keys = KeyedProcessOperator(CurrentKey(), lambda e: e[0], key_type=Types.INT())
    int_keys.process_element((Color.RED, 1), 1)
    [((key, _), _)] = int_keys.drain_output()
    assert type(key) is int


def test_one_declared_key_is_in_one_key_group_of_a_distributed_graph() -> None:
    """A graph's keyed node places an element by its state key (:func:`key_group_of`): the
    forms of one declared key land in one key group."""
    forms = {PAIR: [Row(1, 2), (1, 2)], Types.INT(): [Color.RED, 1, np.int16(1)],
             Types.FLOAT(): [0.1, float(np.float32(0.1))]}
    for key_type, values in forms.items():
        groups = {key_group_of(declared_key(v, key_type), 128) for v in values}
        assert len(groups) == 1
    decimals = [declared_key(decimal.Decimal(s), Types.BIG_DEC()) for s in ("1.0", "1.00")]
    assert all(type(d) is JavaBigDecimal for d in decimals) and decimals[0] != decimals[1]


class Pairs(ProcessJoinFunction):
    def process_element(self, left: Any, right: Any, ctx: Any) -> Iterator[Any]:
        yield left[1], right[1]


def test_an_interval_join_pairs_the_forms_of_one_declared_key() -> None:
    """Both inputs of a join key by the declared type's value: ``Row(Color.RED, "a")`` on the
    left meets ``(1, "a")`` on the right under ``Types.TUPLE([Types.INT(), Types.STRING()])``."""
    op = IntervalJoinOperator(-1, 1, True, True, None, None, Pairs(), lambda e: e[0],
                              lambda e: e[0], key_type=Types.TUPLE([Types.INT(), Types.STRING()]))
    op.process_element((Row(Color.RED, "a"), "l"), 1, 0)
    op.process_element(((1, "a"), "r"), 1, 1)
    assert [v for v, _ in op.drain_output()] == [("l", "r")]
