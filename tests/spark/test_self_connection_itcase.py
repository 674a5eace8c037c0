"""Ports of Flink's ``SelfConnectionITCase``: one source read by two branches that meet again
through ``connect(...).map(CoMapFunction)``.

Source: apache/flink, flink-tests/src/test/java/org/apache/flink/test/streaming/runtime/
SelfConnectionITCase.java. ``fromElements(1, 3, 5)`` is ``from_collection`` (a static
DataFrame); ``TestListResultSink.getResult()`` sorted is the sorted output of
``execute_and_collect()``. The self union proper (``s.union(s)``) is ported in
``test_timestamp_itcase.py`` (testSelfUnionWatermarkPropagation).
"""

from __future__ import annotations

from typing import Any

import pytest

from flinkwin import CoMapFunction, OneTaskGraphWarning, Types
from flinkwin.datastream import StreamExecutionEnvironment

pytestmark = pytest.mark.filterwarnings(f"ignore::{OneTaskGraphWarning.__module__}."
                                        f"{OneTaskGraphWarning.__name__}")

EXPECTED = sorted(["x 1", "x 3", "x 5", "2", "4", "6"])


class StringsAndLongs(CoMapFunction):
    """The test's ``CoMapFunction<String, Integer|Long, String>``: the strings as they are,
    the numbers as strings."""

    def map1(self, value: Any) -> Any:
        return value

    def map2(self, value: Any) -> Any:
        return str(value)


@pytest.fixture
def env(spark: Any, fresh_env: StreamExecutionEnvironment) -> StreamExecutionEnvironment:
    return fresh_env


def test_different_data_stream_same_chain(env: StreamExecutionEnvironment) -> None:
    """Flink: SelfConnectionITCase#differentDataStreamSameChain (parallelism 1):
    ``src.map("x " + v)`` connected with ``src.map(v + 1)``, the ``CoMap`` giving the strings
    and ``str`` of the numbers."""
    env.set_parallelism(1)
    src = env.from_collection([1, 3, 5], type_info=Types.INT())
    string_map = src.map(lambda v: f"x {v}", output_type=Types.STRING())
    co_mapped = string_map.connect(src.map(lambda v: v + 1, output_type=Types.INT())).map(
        StringsAndLongs(), output_type=Types.STRING())
    assert sorted(co_mapped.execute_and_collect()) == EXPECTED


def test_different_data_stream_different_chain(env: StreamExecutionEnvironment) -> None:
    """Flink: SelfConnectionITCase#differentDataStreamDifferentChain (parallelism 3): the two
    branches keyed (by the string's length, by the long's value) before they meet; the
    ``CoMap`` on the connected keyed streams gives the strings and ``str`` of the longs."""
    env.set_parallelism(3)
    src = env.from_collection([1, 3, 5], type_info=Types.INT())
    string_map = src.flat_map(lambda v: [f"x {v}"], output_type=Types.STRING()).key_by(
        lambda s: len(s), key_type=Types.INT())
    long_map = src.map(lambda v: v + 1, output_type=Types.LONG()).key_by(
        lambda v: int(v), key_type=Types.INT())
    co_mapped = string_map.connect(long_map).map(StringsAndLongs(), output_type=Types.STRING())
    assert sorted(co_mapped.execute_and_collect()) == EXPECTED
