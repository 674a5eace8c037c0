"""Ports of Flink's ``SideOutputITCase`` programs on Spark (test names as in Flink): side
outputs of a ``ProcessFunction`` / ``KeyedProcessFunction`` taken with ``get_side_output``,
several consumers of one side output, side outputs of different types, a name clash, a tag the
function never emits, and unions of side outputs.

Source: apache/flink, flink-tests/src/test/java/org/apache/flink/test/streaming/runtime/
SideOutputITCase.java (master, JUnit 5 version). Its bounded ``fromData`` sources are
``from_collection`` (static DataFrames); ``TestListResultSink.getSortedResult()`` is the sorted
list of what a :class:`ListSink` received. The environment's parallelism is 3, as in Flink
(flinkwin runs a static graph in one task and says so with ``OneTaskGraphWarning``).

Ported elsewhere: testAllWindowLateArrivingEvents, testKeyedWindowLateArrivingEvents,
testProcessdWindowFunctionSideOutput and testProcessAllWindowFunctionSideOutput need Flink's
punctuated watermarks (``watermark = timestamp`` after every element), which neither flinkwin
nor PyFlink can declare; they run on the window operator in
``tests/core/test_side_output_itcase_flink.py``.

Not ported: testWatermarkForwarding reifies watermarks with a custom ``AbstractStreamOperator``
(``DataStream.transform``), which PyFlink's API does not have and flinkwin does not provide.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from flinkwin import (
    CoProcessFunction,
    KeyedCoProcessFunction,
    KeyedProcessFunction,
    KeySelector,
    OneTaskGraphWarning,
    OutputTag,
    ProcessFunction,
    SinkFunction,
    Types,
)
from flinkwin.datastream import DataStream, StreamExecutionEnvironment
from flinkwin.errors import UnsupportedOperationError

pytestmark = pytest.mark.filterwarnings(f"ignore::{OneTaskGraphWarning.__module__}."
                                        f"{OneTaskGraphWarning.__name__}")

#: ``SideOutputITCase.elements``
ELEMENTS = [1, 2, 5, 3, 4]
SIDEOUTS = ["sideout-1", "sideout-2", "sideout-3", "sideout-4", "sideout-5"]


class ListSink(SinkFunction):
    """Flink's ``TestListResultSink``."""

    def __init__(self) -> None:
        self.values: list[Any] = []

    def invoke(self, value: Any, context: Any) -> None:
        self.values.append(value)

    def sorted_result(self) -> list[Any]:
        """``getSortedResult()``."""
        return sorted(self.values)


class PassThroughWithSideOutput(ProcessFunction):
    """``out.collect(value)`` and ``ctx.output(tag, "sideout-" + value)``."""

    def __init__(self, tag: OutputTag) -> None:
        self.tag = tag

    def process_element(self, value: int, ctx: ProcessFunction.Context) -> Iterator[int]:
        yield value
        ctx.output(self.tag, f"sideout-{value}")


class PassThroughWithTwoSideOutputs(ProcessFunction):
    """``out.collect(value)``, ``ctx.output(tag1, "sideout-" + value)``, ``ctx.output(tag2,
    13)``."""

    def __init__(self, tag1: OutputTag, tag2: OutputTag) -> None:
        self.tag1, self.tag2 = tag1, tag2

    def process_element(self, value: int, ctx: ProcessFunction.Context) -> Iterator[int]:
        yield value
        ctx.output(self.tag1, f"sideout-{value}")
        ctx.output(self.tag2, 13)


class Identity(KeySelector):
    """The ITCase's anonymous ``KeySelector``: ``return value``."""

    def get_key(self, value: int) -> int:
        return value


def source(env: StreamExecutionEnvironment, elements: list[int] = ELEMENTS) -> DataStream:
    """``env.fromData(elements)``."""
    return env.from_collection(elements, type_info=Types.INT())


@pytest.fixture
def env(spark: Any, fresh_env: StreamExecutionEnvironment) -> StreamExecutionEnvironment:
    """``StreamExecutionEnvironment.getExecutionEnvironment()`` with ``setParallelism(3)``."""
    fresh_env.set_parallelism(3)
    return fresh_env


def multiple_consumers(env: StreamExecutionEnvironment) -> None:
    """The program and assertions of testSideOutputWithMultipleConsumers(WithObjectReuse)."""
    tag = OutputTag("side", Types.STRING())
    sink1, sink2, result = ListSink(), ListSink(), ListSink()
    stream = source(env).process(PassThroughWithSideOutput(tag), output_type=Types.INT())
    stream.get_side_output(tag).add_sink(sink1)
    stream.get_side_output(tag).add_sink(sink2)
    stream.add_sink(result)
    assert sink1.sorted_result() == SIDEOUTS
    assert sink2.sorted_result() == SIDEOUTS
    assert result.sorted_result() == [1, 2, 3, 4, 5]


def test_side_output_with_multiple_consumers(env: StreamExecutionEnvironment) -> None:
    """Flink: SideOutputITCase#testSideOutputWithMultipleConsumers"""
    multiple_consumers(env)


def test_side_output_with_multiple_consumers_with_object_reuse(
        env: StreamExecutionEnvironment) -> None:
    """Flink: SideOutputITCase#testSideOutputWithMultipleConsumersWithObjectReuse"""
    env.get_config().enable_object_reuse()
    multiple_consumers(env)


def test_different_side_output_types(env: StreamExecutionEnvironment) -> None:
    """Flink: SideOutputITCase#testDifferentSideOutputTypes"""
    env.get_config().enable_object_reuse()
    string_tag, int_tag = OutputTag("string", Types.STRING()), OutputTag("int", Types.INT())
    sink1, sink2, result = ListSink(), ListSink(), ListSink()
    stream = source(env).process(PassThroughWithTwoSideOutputs(string_tag, int_tag),
                                 output_type=Types.INT())
    stream.get_side_output(string_tag).add_sink(sink1)
    stream.get_side_output(int_tag).add_sink(sink2)
    stream.add_sink(result)
    assert sink1.sorted_result() == SIDEOUTS
    assert sink2.sorted_result() == [13, 13, 13, 13, 13]
    assert result.sorted_result() == [1, 2, 3, 4, 5]


def test_side_output_name_clash(env: StreamExecutionEnvironment) -> None:
    """Flink: SideOutputITCase#testSideOutputNameClash: ``getSideOutput`` of a tag whose id
    was already requested with another type throws UnsupportedOperationException, before
    the job runs. (Flink's test adds a sink to the first side output first; flinkwin's
    ``add_sink`` runs the job at once, which Flink's test never does, so the first side output
    is only taken here.)"""
    string_tag, int_tag = OutputTag("side", Types.STRING()), OutputTag("side", Types.INT())
    stream = source(env).process(PassThroughWithTwoSideOutputs(string_tag, int_tag),
                                 output_type=Types.INT())
    stream.get_side_output(string_tag)
    with pytest.raises(UnsupportedOperationError):
        stream.get_side_output(int_tag)


def test_process_function_side_output(env: StreamExecutionEnvironment) -> None:
    """Flink: SideOutputITCase#testProcessFunctionSideOutput"""
    tag = OutputTag("side", Types.STRING())
    side, result = ListSink(), ListSink()
    stream = source(env).process(PassThroughWithSideOutput(tag), output_type=Types.INT())
    stream.get_side_output(tag).add_sink(side)
    stream.add_sink(result)
    assert side.sorted_result() == SIDEOUTS
    assert result.sorted_result() == [1, 2, 3, 4, 5]


class KeyedPassThroughWithSideOutput(KeyedProcessFunction):
    """The ITCase's ``KeyedProcessFunction``: ``out.collect(value)`` and
    ``ctx.output(tag, "sideout-" + value)``."""

    def __init__(self, tag: OutputTag) -> None:
        self.tag = tag

    def process_element(self, value: int, ctx: KeyedProcessFunction.Context) -> Iterator[int]:
        yield value
        ctx.output(self.tag, f"sideout-{value}")


def test_keyed_process_function_side_output(env: StreamExecutionEnvironment) -> None:
    """Flink: SideOutputITCase#testKeyedProcessFunctionSideOutput"""
    tag = OutputTag("side", Types.STRING())
    side, result = ListSink(), ListSink()
    stream = (source(env).key_by(Identity())
              .process(KeyedPassThroughWithSideOutput(tag), output_type=Types.INT()))
    stream.get_side_output(tag).add_sink(side)
    stream.add_sink(result)
    assert side.sorted_result() == SIDEOUTS
    assert result.sorted_result() == [1, 2, 3, 4, 5]


def test_process_function_side_output_with_wrong_tag(env: StreamExecutionEnvironment) -> None:
    """Flink: SideOutputITCase#testProcessFunctionSideOutputWithWrongTag: the function emits
    to "other-side" only; the side output "side" is empty."""
    side_tag, other_tag = OutputTag("side", Types.STRING()), OutputTag("other-side",
                                                                      Types.STRING())
    side = ListSink()
    (source(env).process(PassThroughWithSideOutput(other_tag), output_type=Types.INT())
     .get_side_output(side_tag).add_sink(side))
    assert side.sorted_result() == []


class SplitOddEven(ProcessFunction):
    """Odd values to ``odds``, even ones to ``even``, every value to the main output."""

    def __init__(self, odd_tag: OutputTag, even_tag: OutputTag) -> None:
        self.odd_tag, self.even_tag = odd_tag, even_tag

    def process_element(self, value: int, ctx: ProcessFunction.Context) -> Iterator[int]:
        ctx.output(self.odd_tag if value % 2 != 0 else self.even_tag, value)
        yield value


def test_union_of_two_side_outputs(env: StreamExecutionEnvironment) -> None:
    """Flink: SideOutputITCase#testUnionOfTwoSideOutputs"""
    odd_tag, even_tag = OutputTag("odds", Types.INT()), OutputTag("even", Types.INT())
    stream = source(env, [1, 2, 3, 4]).process(SplitOddEven(odd_tag, even_tag),
                                                output_type=Types.INT())
    evens, odds = stream.get_side_output(even_tag), stream.get_side_output(odd_tag)
    streams = {
        "evens": evens,
        "odds": odds,
        "result": stream,
        "odds_u_evens": odds.union(evens),
        "evens_u_odds": evens.union(odds),
        "odds_u_odds": odds.union(odds),
        "evens_u_evens": evens.union(evens),
        "odds_u_evens_external": odds.union(source(env, [2, 4])),
    }
    results = {name: ListSink() for name in streams}
    for name, each in streams.items():
        each.add_sink(results[name])
    assert {name: s.sorted_result() for name, s in results.items()} == {
        "odds": [1, 3],
        "evens": [2, 4],
        "result": [1, 2, 3, 4],
        "odds_u_evens": [1, 2, 3, 4],
        "evens_u_odds": [1, 2, 3, 4],
        "odds_u_odds": [1, 1, 3, 3],
        "evens_u_evens": [2, 2, 4, 4],
        "odds_u_evens_external": [1, 2, 3, 4],
    }


# ------------------------------------------------ connected streams (co-process functions)
class SplitByInput(CoProcessFunction):
    """The ITCase's co-process functions: input 1's values below ``bound`` and input 2's from
    ``bound`` on pass, each also to a side output as ``"sideout<input>-"`` (with
    ``ctx.getCurrentKey() + "-"`` when ``with_key``) + value."""

    def __init__(self, bound: int, tags: tuple[OutputTag, OutputTag], with_key: bool) -> None:
        self.bound, self.tags, self.with_key = bound, tags, with_key

    def _pass(self, value: int, ctx: Any, channel: int) -> Iterator[int]:
        yield value
        key = f"{ctx.get_current_key()}-" if self.with_key else ""
        ctx.output(self.tags[channel - 1], f"sideout{channel}-{key}{value}")

    def process_element1(self, value: int, ctx: Any) -> Iterator[int]:
        if value < self.bound:
            yield from self._pass(value, ctx, 1)

    def process_element2(self, value: int, ctx: Any) -> Iterator[int]:
        if value >= self.bound:
            yield from self._pass(value, ctx, 2)


class KeyedSplitByInput(KeyedCoProcessFunction):
    """:class:`SplitByInput` as a ``KeyedCoProcessFunction`` (with the key in its outputs)."""

    def __init__(self, bound: int, tags: tuple[OutputTag, OutputTag]) -> None:
        self.split = SplitByInput(bound, tags, with_key=True)

    def process_element1(self, value: int, ctx: Any) -> Iterator[int]:
        return self.split.process_element1(value, ctx)

    def process_element2(self, value: int, ctx: Any) -> Iterator[int]:
        return self.split.process_element2(value, ctx)


def _co_process(env: StreamExecutionEnvironment, function: Any, keyed: bool,
                tags: tuple[OutputTag, ...]) -> tuple[list[Any], ...]:
    """``ds1.connect(ds2)`` (``ds1.keyBy(i -> i).connect(ds2.keyBy(i -> i))`` when ``keyed``)
    ``.process(function)``; the sorted results of each side output's sink and of the main."""
    ds1, ds2 = source(env), source(env)
    if keyed:
        ds1, ds2 = ds1.key_by(lambda i: i), ds2.key_by(lambda i: i)
    stream = ds1.connect(ds2).process(function, output_type=Types.INT())
    sinks = [ListSink() for _ in tags]
    for tag, sink in zip(tags, sinks):
        stream.get_side_output(tag).add_sink(sink)
    result = ListSink()
    stream.add_sink(result)
    return (*(sink.sorted_result() for sink in sinks), result.sorted_result())


def test_co_process_function_side_output(env: StreamExecutionEnvironment) -> None:
    """Flink: SideOutputITCase#testCoProcessFunctionSideOutput"""
    tag = OutputTag("side", Types.STRING())
    side, result = _co_process(env, SplitByInput(3, (tag, tag), False), False, (tag,))
    assert side == ["sideout1-1", "sideout1-2", "sideout2-3", "sideout2-4", "sideout2-5"]
    assert result == [1, 2, 3, 4, 5]


def test_co_process_function_side_output_with_multiple_consumers(
    env: StreamExecutionEnvironment,
) -> None:
    """Flink: SideOutputITCase#testCoProcessFunctionSideOutputWithMultipleConsumers"""
    tags = OutputTag("side1", Types.STRING()), OutputTag("side2", Types.STRING())
    side1, side2, result = _co_process(env, SplitByInput(4, tags, False), False, tags)
    assert side1 == ["sideout1-1", "sideout1-2", "sideout1-3"]
    assert side2 == ["sideout2-4", "sideout2-5"]
    assert result == [1, 2, 3, 4, 5]


def test_legacy_keyed_co_process_function_side_output(env: StreamExecutionEnvironment) -> None:
    """Flink: SideOutputITCase#testLegacyKeyedCoProcessFunctionSideOutput (a
    ``CoProcessFunction`` on keyed connected streams)"""
    tag = OutputTag("side", Types.STRING())
    side, result = _co_process(env, SplitByInput(3, (tag, tag), False), True, (tag,))
    assert side == ["sideout1-1", "sideout1-2", "sideout2-3", "sideout2-4", "sideout2-5"]
    assert result == [1, 2, 3, 4, 5]


def test_keyed_co_process_function_side_output(env: StreamExecutionEnvironment) -> None:
    """Flink: SideOutputITCase#testKeyedCoProcessFunctionSideOutput"""
    tag = OutputTag("side", Types.STRING())
    side, result = _co_process(env, KeyedSplitByInput(3, (tag, tag)), True, (tag,))
    assert side == ["sideout1-1-1", "sideout1-2-2", "sideout2-3-3", "sideout2-4-4",
                    "sideout2-5-5"]
    assert result == [1, 2, 3, 4, 5]


def test_legacy_keyed_co_process_function_side_output_with_multiple_consumers(
    env: StreamExecutionEnvironment,
) -> None:
    """Flink: SideOutputITCase#testLegacyKeyedCoProcessFunctionSideOutputWithMultipleConsumers"""
    tags = OutputTag("side1", Types.STRING()), OutputTag("side2", Types.STRING())
    side1, side2, result = _co_process(env, SplitByInput(4, tags, False), True, tags)
    assert side1 == ["sideout1-1", "sideout1-2", "sideout1-3"]
    assert side2 == ["sideout2-4", "sideout2-5"]
    assert result == [1, 2, 3, 4, 5]


def test_keyed_co_process_function_side_output_with_multiple_consumers(
    env: StreamExecutionEnvironment,
) -> None:
    """Flink: SideOutputITCase#testKeyedCoProcessFunctionSideOutputWithMultipleConsumers"""
    tags = OutputTag("side1", Types.STRING()), OutputTag("side2", Types.STRING())
    side1, side2, result = _co_process(env, KeyedSplitByInput(4, tags), True, tags)
    assert side1 == ["sideout1-1-1", "sideout1-2-2", "sideout1-3-3"]
    assert side2 == ["sideout2-4-4", "sideout2-5-5"]
    assert result == [1, 2, 3, 4, 5]
