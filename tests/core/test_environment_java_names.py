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
