"""A declared key type's forms of one key are one key on Spark, across micro-batches.

PyFlink encodes a key declared ``Types.TUPLE([...])`` field by field (``TupleCoderImpl``: a
``Row`` and a tuple of the same values are the same bytes) and a key declared ``Types.INT()``
as its int (``IntCoderImpl``: an ``IntEnum`` member is its value); Flink keys the decoded value.
So a key selector returning ``Row(Color.RED, n)`` for some elements and ``(1, n)`` for others
makes one key, in one key group, whatever micro-batch each element arrives in, and user
functions get the decoded key (a plain tuple, a ``Row`` for ``ROW``, an ``int``).
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

from spark_scenarios import run_stream, watermark, write_batches

from flinkwin import (
    DataStream,
    KeyedProcessFunction,
    ProcessWindowFunction,
    Time,
    TumblingEventTimeWindows,
    Types,
)
from flinkwin.record import Row
from flinkwin.spark.elements import check_key
from flinkwin.spark.key_bytes import key_bytes

SCHEMA = "form string, n long, ts long, clicks long"
NAMES = ("form", "n", "ts", "clicks")
#: key (1, n) in three forms, over two micro-batches, in one 10 s window per n (the third
#: batch's element advances the watermark past it)
BATCHES = [
    [("row", 5, 1000, 1), ("tuple", 5, 2000, 2), ("enum", 6, 2500, 64)],
    [("enum", 5, 3000, 4), ("row", 6, 3500, 128), ("tuple", 5, 4000, 8), ("tuple", 6, 4500, 256)],
    [("row", 5, 30000, 16)],
]
PAIR = Types.TUPLE([Types.INT(), Types.LONG()])
ROW = Types.ROW([Types.INT(), Types.LONG()])


class Color(enum.IntEnum):
    RED = 1


def form_key(e: Any) -> Any:
    """The key (1, n) as a Row holding an IntEnum, a plain tuple, or a tuple of the IntEnum."""
    return {"row": Row(Color.RED, e.n), "tuple": (1, e.n), "enum": (Color.RED, e.n)}[e.form]


class KeyAndClicks(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield repr(key), type(key[0]).__name__, context.window().start, sum(
            e.clicks for e in elements)


class RunningSum(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        from flinkwin.datastream.state import ValueStateDescriptor

        state = self.get_runtime_context().get_state(ValueStateDescriptor("sum", Types.LONG()))
        total = (state.value() or 0) + value.clicks
        state.update(total)
        yield repr(ctx.get_current_key()), total


def _write(directory: Path) -> None:
    write_batches(directory, [[dict(zip(NAMES, r)) for r in batch] for batch in BATCHES])


def _rows(run: Any, *fields: str) -> list[tuple[Any, ...]]:
    return [tuple(r[f] for f in fields) for b in sorted(run.main) for r in run.main[b]]


def test_the_forms_of_one_declared_key_hash_to_the_same_bytes() -> None:
    """The bytes Spark hashes a key into its key group by are the declared type's value's."""
    forms = [Row(Color.RED, 5), (1, 5), (Color.RED, 5)]
    for key_type in (PAIR, ROW):
        assert len({key_bytes(check_key(k, key_type, "e")) for k in forms}) == 1
    assert key_bytes(check_key((1, 5), PAIR, "e")) == key_bytes((1, 5))  # as before
    assert key_bytes(check_key(Row(1, 5), ROW, "e")) == key_bytes(Row(1, 5))


def test_a_row_a_tuple_and_an_int_enum_are_one_key_in_a_window_chain_across_batches(
    spark: Any, tmp_path: Path
) -> None:
    _write(tmp_path / "in")

    def build(stream: DataStream) -> Any:
        return stream.assign_timestamps_and_watermarks(watermark(0)).key_by(
            form_key, key_type=PAIR
        ).window(TumblingEventTimeWindows.of(Time.seconds(10))).process(
            KeyAndClicks(), output_type="key string, first string, start long, clicks long"
        )

    run = run_stream(spark, tmp_path / "in", tmp_path / "cp", SCHEMA, build)
    got = sorted(_rows(run, "key", "first", "start", "clicks"))
    assert got == [("(1, 5)", "int", 0, 15), ("(1, 6)", "int", 0, 448)]


def test_a_row_a_tuple_and_an_int_enum_are_one_key_after_a_union_across_batches(
    spark: Any, tmp_path: Path
) -> None:
    """A graph stage (a union before a keyed process function) keeps one state per key in its
    snapshot between micro-batches; the function gets the key as a ``Row`` (``ROW``)."""
    _write(tmp_path / "in")

    def build(stream: DataStream) -> Any:
        timed = stream.assign_timestamps_and_watermarks(watermark(0))
        rows = timed.filter(lambda e: e.form == "row")
        return rows.union(timed.filter(lambda e: e.form != "row")).key_by(
            form_key, key_type=ROW
        ).process(RunningSum(), output_type="key string, total long")

    run = run_stream(spark, tmp_path / "in", tmp_path / "cp", SCHEMA, build)
    totals: dict[str, list[int]] = {}
    for key, total in _rows(run, "key", "total"):
        totals.setdefault(key, []).append(total)
    assert {k: max(v) for k, v in totals.items()} == {"<Row(1, 5)>": 31, "<Row(1, 6)>": 448}
    assert {k: len(v) for k, v in totals.items()} == {"<Row(1, 5)>": 5, "<Row(1, 6)>": 3}
