"""The environment's and its config's Flink Java names (``getExecutionEnvironment``,
``setParallelism``, ``setRuntimeMode``, ``getConfig().setAutoWatermarkInterval``...) are the
PyFlink-named methods, so the first lines of a ported Java program run as written."""

from __future__ import annotations

import pytest

from flinkwin.datastream import RuntimeExecutionMode
from flinkwin.datastream.stream_execution_environment import (
    StreamExecutionEnvironment,
    default_parallelism,
    stream_defaults,
)
from flinkwin.errors import UnsupportedOperationError


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> StreamExecutionEnvironment:
    monkeypatch.setattr(StreamExecutionEnvironment, "_current", None)
    return StreamExecutionEnvironment.getExecutionEnvironment()


def test_a_java_programs_environment_lines_set_what_the_pyflink_names_set(
    env: StreamExecutionEnvironment,
) -> None:
    assert env is StreamExecutionEnvironment.get_execution_environment()
    env.setParallelism(2)
    env.setMaxParallelism(8)
    env.setRuntimeMode(RuntimeExecutionMode.BATCH)
    env.enableCheckpointing(1000)
    env.setBufferTimeout(5)
    env.getConfig().setAutoWatermarkInterval(100).enableObjectReuse()
    assert (env.getParallelism(), env.getMaxParallelism(), env.getCheckpointInterval(),
            env.getBufferTimeout()) == (2, 8, 1000, 5)
    assert default_parallelism() == 2
    assert stream_defaults() == (RuntimeExecutionMode.BATCH, 8)
    config = env.get_config()
    assert config.get_auto_watermark_interval() == 100 and config.is_object_reuse_enabled()
    assert config.getAutoWatermarkInterval() == 100 and config.isObjectReuseEnabled()


def test_java_named_refusals_say_what_to_do_instead(env: StreamExecutionEnvironment) -> None:
    with pytest.raises(UnsupportedOperationError, match="checkpoint_location"):
        env.getCheckpointConfig()
    with pytest.raises(UnsupportedOperationError, match="addSource|add_source"):
        env.addSource(object())


def test_from_sequence_refuses_a_range_flink_refuses(env: StreamExecutionEnvironment) -> None:
    with pytest.raises(ValueError, match="fromSequence"):
        env.fromSequence(5, 4)


def test_a_windowed_stream_answers_to_its_java_names() -> None:
    from flinkwin import Time, TumblingEventTimeWindows
    from flinkwin.datastream.windowed_stream import WindowedStream

    assert WindowedStream.getExecutionEnvironment is WindowedStream.get_execution_environment
    assert WindowedStream.getInputType is WindowedStream.get_input_type
    assert TumblingEventTimeWindows.of(Time.seconds(1)).isEventTime()


def test_types_written_as_java_constants_and_varargs_are_pyflinks_types() -> None:
    """Java's ``Types.STRING`` (a constant) and ``Types.TUPLE(Types.STRING, Types.LONG)``
    (varargs) declare what PyFlink's ``Types.STRING()`` and ``Types.TUPLE([...])`` declare
    (before: an AttributeError on a function object, or a tuple type without fields)."""
    from flinkwin.spark.schema import _type_info_ddl
    from flinkwin.types import Types

    assert Types.STRING() == Types.STRING
    assert Types.TUPLE(Types.STRING, Types.LONG) == Types.TUPLE([Types.STRING(), Types.LONG()])
    assert Types.ROW(Types.INT, Types.DOUBLE) == Types.ROW([Types.INT(), Types.DOUBLE()])
    assert Types.ROW_NAMED(["w", "n"], Types.STRING, Types.LONG) == Types.ROW_NAMED(
        ["w", "n"], [Types.STRING(), Types.LONG()])
    assert Types.MAP(Types.STRING, Types.LIST(Types.LONG)) == Types.MAP(
        Types.STRING(), Types.LIST(Types.LONG()))
    assert _type_info_ddl(Types.TUPLE(Types.STRING, Types.LONG)) == (
        "struct<`f0` string, `f1` bigint>")
    assert _type_info_ddl(Types.LONG) == "bigint"
