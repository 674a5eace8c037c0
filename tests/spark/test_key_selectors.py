"""PyFlink's key selectors and TimestampAssigners on Spark, against the column-name fast path."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest
from pyspark.errors import PythonException
from spark_scenarios import run_stream, watermark, write_batches

from flinkwin import (
    DataStream,
    KeyedProcessFunction,
    KeySelector,
    ProcessWindowFunction,
    Time,
    TimestampAssigner,
    TumblingEventTimeWindows,
    Types,
    WatermarkStrategy,
)
from flinkwin.spark.elements import check_key, check_timestamp

SCHEMA = "user string, page string, ts long, clicks long"
ROWS = [
    ("u1", "p1", 1000, 1), ("u2", "p1", 2000, 2), ("u1", "p2", 3000, 4), ("u1", "p1", 12000, 8),
    ("u2", "p2", 4000, 16), ("u3", "p1", 11000, 32), ("u1", "p2", 500, 64),
]


class TsAssigner(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        assert record_timestamp == -(2**63)  # a DataFrame's rows carry no timestamp
        return value.ts


class UserKey(KeySelector):
    def get_key(self, value: Any) -> Any:
        return value["user"]


class KeyAndCount(ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        yield (repr(key), context.window().start, sum(e.clicks for e in elements))


def _results(stream: DataStream, key: Any, strategy: WatermarkStrategy, **kw: Any) -> list[Any]:
    keyed = stream.assign_timestamps_and_watermarks(strategy)
    keyed = keyed.key_by(*key) if isinstance(key, list) else keyed.key_by(key, **kw)
    out = keyed.window(TumblingEventTimeWindows.of(Time.seconds(10))).process(
        KeyAndCount(), output_schema="key string, start long, clicks long"
    )
    return sorted(tuple(r) for r in out.collect())


def test_key_selectors_and_timestamp_assigners_match_the_column_form(spark: Any) -> None:
    stream = DataStream(spark.createDataFrame(ROWS, SCHEMA))
    by_column = _results(stream, ["user"], watermark(0))
    assert by_column == [
        ("'u1'", 0, 69), ("'u1'", 10000, 8), ("'u2'", 0, 18), ("'u3'", 10000, 32)
    ]
    assigner = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(TsAssigner())
    assert _results(stream, lambda r: r.user, assigner, key_type=Types.STRING()) == by_column
    assert _results(stream, UserKey(), watermark(0)) == by_column
    assert _results(stream, lambda r: r[0], assigner) == by_column
    # a tuple-returning selector keys by the tuple, as keyBy("user", "page") does
    pairs = _results(stream, lambda r: (r.user, r.page), assigner)
    assert pairs == _results(stream, ["user", "page"], watermark(0))
    assert ("('u1', 'p1')", 0, 1) in pairs and ("('u1', 'p2')", 0, 68) in pairs


def test_key_selector_on_a_streaming_source(spark: Any, tmp_path: Path) -> None:
    batches = [[dict(zip(("user", "page", "ts", "clicks"), r)) for r in ROWS[:4]],
               [dict(zip(("user", "page", "ts", "clicks"), r)) for r in ROWS[4:]],
               [{"user": "u9", "page": "p", "ts": 30000, "clicks": 0}]]
    write_batches(tmp_path / "in", batches)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(TsAssigner())

    def build(stream: DataStream) -> Any:
        return stream.assign_timestamps_and_watermarks(strategy).key_by(
            lambda r: r.user, key_type=Types.STRING()
        ).window(TumblingEventTimeWindows.of(Time.seconds(10))).process(
            KeyAndCount(), output_schema="key string, start long, clicks long"
        )

    run = run_stream(spark, tmp_path / "in", tmp_path / "cp", SCHEMA, build)
    got = sorted((r["key"], r["start"], r["clicks"]) for rows in run.main.values() for r in rows)
    # batch 1 raises the watermark to 12 s: the late u1@500 and u2@4000 (batch 2) are dropped
    assert got == [("'u1'", 0, 5), ("'u1'", 10000, 8), ("'u2'", 0, 2), ("'u3'", 10000, 32)]


def test_bad_keys_and_timestamps_fail_naming_the_element(spark: Any) -> None:
    stream = DataStream(spark.createDataFrame(ROWS[:2], SCHEMA))
    window = TumblingEventTimeWindows.of(Time.seconds(10))

    def run(key: Any, strategy: WatermarkStrategy, **kw: Any) -> None:
        stream.assign_timestamps_and_watermarks(strategy).key_by(key, **kw).window(
            window).reduce(lambda a, b: a).collect()

    with pytest.raises(PythonException, match=r"returned \['u\d'\] \(list\) for element"):
        run(lambda r: [r.user], watermark(0))
    with pytest.raises(PythonException, match="does not match key_type Types.INT"):
        run(lambda r: r.user, watermark(0), key_type=Types.INT())
    texts = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(
        lambda value, record_timestamp: str(value.ts)
    )
    with pytest.raises(PythonException, match=r"extract_timestamp returned '\d+' \(str\)"):
        run(lambda r: r.user, texts)


def test_key_and_timestamp_checks() -> None:
    check_key(("a", 1, None, 2.5), Types.PICKLED_BYTE_ARRAY(), "e")
    check_key(("a", 1, None, 2.5), None, "e")
    check_key(("a", 1), Types.TUPLE([Types.STRING(), Types.INT()]), "e")
    with pytest.raises(TypeError, match="out of range for INT"):
        check_key(2**40, Types.INT(), "e")
    with pytest.raises(TypeError, match="expected an int, got bool"):
        check_key(True, Types.LONG(), "e")
    with pytest.raises(ValueError, match="Flink rejects null keys"):
        check_key(None, Types.STRING(), "e")
    with pytest.raises(ValueError, match="Flink rejects null keys"):
        check_key(None, None, "e")
    with pytest.raises(TypeError, match=r"keys must be str"):
        check_key(frozenset({"a"}), None, "e")
    assert check_timestamp(5, "e") == 5
    with pytest.raises(TypeError, match="must return a number of epoch milliseconds"):
        check_timestamp(True, "e")
    with pytest.raises(TypeError, match=r"returned nan \(float\)"):
        check_timestamp(float("nan"), "e")
    with pytest.raises(TypeError, match="within a Java long"):
        check_timestamp(2.0**63, "e")


# ------------------------------------------------------------- keys of several types
TYPED = "kind string, n long, ts long, clicks long"
#: the key 1 as an int, a float and a bool (PyFlink without key_type: three keys)
TYPED_ROWS = [("i", 1, 1000, 1), ("f", 1, 2000, 2), ("b", 1, 3000, 4),
              ("i", 1, 4000, 8), ("f", 1, 5000, 16), ("b", 1, 6000, 32)]


def typed_key(r: Any) -> Any:
    return {"i": r.n, "f": float(r.n), "b": bool(r.n)}[r.kind]


def _typed_results(stream: DataStream, **kw: Any) -> list[Any]:
    out = stream.assign_timestamps_and_watermarks(watermark(0)).key_by(typed_key, **kw).window(
        TumblingEventTimeWindows.of(Time.seconds(10))
    ).process(KeyAndCount(), output_schema="key string, start long, clicks long")
    return sorted(tuple(r) for r in out.collect())


def test_one_one_point_oh_and_true_are_three_keys_of_a_key_selector(spark: Any) -> None:
    # one key group: the three keys meet in one operator (the bytes Spark hashes differ)
    stream = DataStream(spark.createDataFrame(TYPED_ROWS, TYPED), key_groups=1)
    assert _typed_results(stream) == [("1", 0, 9), ("1.0", 0, 18), ("True", 0, 36)]
    numbers = DataStream(spark.createDataFrame(
        [r for r in TYPED_ROWS if r[0] != "b"], TYPED))
    # a declared DOUBLE converts 1 to 1.0: one key, as PyFlink's typed keys
    assert _typed_results(numbers, key_type=Types.DOUBLE()) == [("1.0", 0, 27)]


class RunningSum(KeyedProcessFunction):
    def process_element(self, value: Any, ctx: Any) -> Any:
        state = self.get_runtime_context().get_state(_SUM)
        total = (state.value() or 0) + value.clicks
        state.update(total)
        yield repr(ctx.get_current_key()), total


def _sum_state() -> Any:
    from flinkwin.datastream.state import ValueStateDescriptor

    return ValueStateDescriptor("sum", Types.LONG())


_SUM = _sum_state()


def test_three_keys_stay_three_across_micro_batches_of_a_graph_stage(
    spark: Any, tmp_path: Path
) -> None:
    """The keyed process function's state of 1, 1.0 and True is snapshotted after each
    micro-batch and restored for the next: still three keys."""
    names = ("kind", "n", "ts", "clicks")
    batches = [[dict(zip(names, r)) for r in TYPED_ROWS[:3]],
               [dict(zip(names, r)) for r in TYPED_ROWS[3:]]]
    write_batches(tmp_path / "in", batches)

    def build(stream: DataStream) -> Any:
        return stream.assign_timestamps_and_watermarks(watermark(0)).key_by(typed_key).process(
            RunningSum(), output_type="key string, n long"
        )

    run = run_stream(spark, tmp_path / "in", tmp_path / "cp", TYPED, build)
    got = [(r["key"], r["n"]) for b in sorted(run.main) for r in run.main[b]]
    assert got == [("1", 1), ("1.0", 2), ("True", 4), ("1", 9), ("1.0", 18), ("True", 36)]


SHARED = "user string, peer string, ts long, clicks long"
SHARED_ROWS = [
    (user, peer, ts, clicks)
    for i, user in enumerate(["alice", "bob", "carol", "dave", "erin", "frank"])
    for peer, ts, clicks in [(None, 1000 + i, 1), (user, 2000 + i, 2), (None, 3000 + i, 4)]
]


def peer_key(e: Any) -> Any:
    """(user, peer or user): one str object twice when peer is null, two equal ones else."""
    return (e.user, e.user if e.peer is None else e.peer)


def test_a_tuple_key_is_one_key_whether_or_not_its_values_are_one_object(spark: Any) -> None:
    # pickle's memo writes ("ab", <the same "ab">) unlike ("ab", <an equal "ab">): the bytes
    # Spark hashes into the key group must not tell the two apart (one key, one window)
    same, equal = "alice", "".join(["ali", "ce"])
    assert same is not equal
    assert pickle.dumps((same, same), 4) != pickle.dumps((same, equal), 4)
    stream = DataStream(spark.createDataFrame(SHARED_ROWS, SHARED))
    got = _results(stream, peer_key, watermark(0))
    users = ["alice", "bob", "carol", "dave", "erin", "frank"]
    assert got == sorted((repr((u, u)), 0, 7) for u in users)
