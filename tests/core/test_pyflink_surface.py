"""The PyFlink surface a window program calls besides the window itself, without Spark: the
execution environment's settings, the metric group of ``get_runtime_context()``, timestamps
returned as floats, and full-window functions called by method name as PyFlink calls them."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from flinkwin.common import Configuration
from flinkwin.datastream import (
    CheckpointingMode,
    ProcessWindowFunction,
    RuntimeExecutionMode,
    StreamExecutionEnvironment,
    TimeCharacteristic,
    WindowFunction,
)
from flinkwin.datastream.functions import AllWindowFunction, ProcessAllWindowFunction
from flinkwin.datastream.stream_execution_environment import stream_defaults
from flinkwin.errors import UnsupportedOperationError
from flinkwin.functions.internal import called_as, resolve_window_function
from flinkwin.metrics import Counter, MetricGroup
from flinkwin.operator.runtime_context import TaskInfo, TaskRuntimeContext
from flinkwin.timestamps import as_timestamp


def test_the_environment_is_the_process_one_and_keeps_its_configuration(
    env: StreamExecutionEnvironment,
) -> None:
    config = Configuration().set_string("state.backend.type", "hashmap").set_integer("x", 3)
    assert StreamExecutionEnvironment.get_execution_environment(config) is env
    assert env.get_configuration().get_string("state.backend.type", "") == "hashmap"
    assert env.get_configuration().get_integer("x", 0) == 3
    assert env.get_configuration().get_boolean("missing", True) is True


def test_a_ports_environment_lines_run_and_are_recorded(env: StreamExecutionEnvironment) -> None:
    assert env.get_parallelism() == -1
    assert env.set_parallelism(1) is env
    assert env.get_parallelism() == env.get_config().get_parallelism() == 1
    env.enable_checkpointing(10000, CheckpointingMode.AT_LEAST_ONCE)
    assert env.get_checkpoint_interval() == 10000
    assert env.get_checkpointing_mode() is CheckpointingMode.AT_LEAST_ONCE
    env.get_config().set_auto_watermark_interval(1000)
    assert env.get_config().get_auto_watermark_interval() == 1000
    env.add_jars("file:///opt/flink-connector-kafka.jar")
    env.set_stream_time_characteristic(TimeCharacteristic.EventTime)
    assert env.get_stream_time_characteristic() is TimeCharacteristic.EventTime
    env.set_buffer_timeout(5)
    env.disable_operator_chaining()
    assert not env.is_chaining_enabled()
    assert env.execute("job") is None


def test_the_execution_configs_runtime_switches_are_recorded_with_flinks_defaults(
    env: StreamExecutionEnvironment,
) -> None:
    """SideOutputITCase calls ``env.get_config().enable_object_reuse()``; PyFlink's other
    switches of its JVM runtime are recorded too, starting at Flink's defaults."""
    config = env.get_config()
    assert not config.is_object_reuse_enabled()
    assert config.enable_object_reuse() is config and config.is_object_reuse_enabled()
    assert not config.disable_object_reuse().is_object_reuse_enabled()
    assert config.is_closure_cleaner_enabled()
    assert not config.disable_closure_cleaner().is_closure_cleaner_enabled()
    assert not config.has_generic_types_disabled()
    assert config.disable_generic_types().has_generic_types_disabled()
    assert config.enable_force_kryo().is_force_kryo_enabled()
    assert config.enable_force_avro().is_force_avro_enabled()
    assert not config.disable_auto_generated_uids().has_auto_generated_uids_enabled()
    assert config.set_use_snapshot_compression(True).is_use_snapshot_compression()
    assert config.get_latency_tracking_interval() == 0
    assert config.set_latency_tracking_interval(500).get_latency_tracking_interval() == 500
    assert config.get_task_cancellation_interval() == 30_000
    assert config.set_task_cancellation_timeout(0).get_task_cancellation_timeout() == 0
    with pytest.raises(ValueError, match="latency_tracking_interval must be an int"):
        config.set_latency_tracking_interval("1s")  # type: ignore[arg-type]
    assert env.execute_async() is None


def test_the_runtime_mode_and_max_parallelism_become_the_defaults_of_later_streams(
    env: StreamExecutionEnvironment,
) -> None:
    assert stream_defaults() == (RuntimeExecutionMode.STREAMING, None)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH).set_max_parallelism(32)
    assert stream_defaults() == (RuntimeExecutionMode.BATCH, 32)


def test_environment_settings_flinkwin_cannot_honour_fail_clearly(
    env: StreamExecutionEnvironment,
) -> None:
    with pytest.raises(UnsupportedOperationError, match="checkpoint_location"):
        env.get_checkpoint_config()
    with pytest.raises(UnsupportedOperationError, match="current_timestamp"):
        env.set_stream_time_characteristic(TimeCharacteristic.IngestionTime)
    with pytest.raises(ValueError, match="positive int"):
        env.set_parallelism(0)
    with pytest.raises(ValueError, match="positive int"):
        env.set_max_parallelism(0)
    with pytest.raises(TypeError, match="RuntimeExecutionMode"):
        env.set_runtime_mode("BATCH")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="checkpoint interval"):
        env.enable_checkpointing(0)
    with pytest.raises(UnsupportedOperationError, match=r"from_source\(\): connectors"):
        env.from_source(object(), None, "kafka")
    with pytest.raises(UnsupportedOperationError, match="sources are Spark DataFrames"):
        env.add_source(object())
    with pytest.raises(UnsupportedOperationError, match="restarts are Spark's"):
        env.set_restart_strategy(object())


def test_the_runtime_context_gives_a_working_metric_group() -> None:
    context = TaskRuntimeContext(TaskInfo())
    group = context.get_metrics_group()
    assert group is context.getMetricGroup()
    counter = group.counter("seen")
    counter.inc()
    counter.inc(4)
    counter.dec()
    assert counter.get_count() == 4
    assert group.counter("seen") is counter  # the same name is the same counter, as in PyFlink
    group.gauge("queue", lambda: 7)
    meter = group.meter("rate", time_span_in_seconds=10)
    meter.mark_event()
    meter.mark_event(2)
    assert meter.get_count() == 3
    assert meter.get_rate() == pytest.approx(0.3)
    sizes = group.add_group("sizes").distribution("len")
    for value in (3, 1, 5):
        sizes.update(value)
    keyed = group.add_group("user", "alice").counter("clicks")
    keyed.inc()
    assert group.get_metrics() == {
        "seen": 4, "queue": 7, "rate": 3, "sizes.len": (3, 9, 1, 5), "user.alice.clicks": 1,
    }
    with pytest.raises(ValueError, match="already registered as a Counter"):
        group.meter("seen")
    assert isinstance(MetricGroup().counter("c"), Counter)


def test_timestamps_returned_as_floats_are_truncated_as_pyflink_does() -> None:
    # PyFlink writes extract_timestamp's result with its LONG coder, which converts with int()
    assert as_timestamp(1.9) == 1
    assert as_timestamp(-1.9) == -1
    assert as_timestamp(np.float64(1676461680000.75)) == 1676461680000
    assert as_timestamp(Decimal("12.5")) == 12
    assert as_timestamp(np.int64(5)) == 5
    assert as_timestamp(7) == 7
    for bad in (True, "12", float("nan"), float("inf"), None):
        assert as_timestamp(bad) is None


class _TwoArgProcess(ProcessWindowFunction):
    """A PyFlink program's ProcessWindowFunction written for window_all: PyFlink calls
    ``process(context, elements)`` on whatever ``AllWindowedStream.process`` gets."""

    def process(self, context: Any, elements: Any) -> Any:  # type: ignore[override]
        return [len(list(elements))]


class _TwoArgApply(WindowFunction):
    def apply(self, window: Any, inputs: Any) -> Any:  # type: ignore[override]
        return [window]


def test_full_window_functions_are_called_by_method_name_as_pyflink_calls_them() -> None:
    process = called_as(_TwoArgProcess(), "process_all")
    assert isinstance(process, ProcessAllWindowFunction)
    assert resolve_window_function(process, False).window_kind == "process_all"
    assert process.process(None, iter([1, 2, 3])) == [3]
    apply = called_as(_TwoArgApply(), "apply_all")
    assert isinstance(apply, AllWindowFunction)
    assert apply.apply("w", []) == ["w"]
    native = _TwoArgApply()
    assert called_as(native, "apply") is None  # apply(key, window, inputs) does not fit
    assert called_as(lambda a, b: a, "process_all") is None


def test_an_adapted_function_is_opened_closed_and_cleared_as_itself() -> None:
    calls: list[str] = []

    class Counting(ProcessWindowFunction):
        def open(self, runtime_context: Any) -> None:
            calls.append("open")
            self.get_runtime_context().get_metrics_group().counter("opened").inc()

        def process(self, context: Any, elements: Any) -> Any:  # type: ignore[override]
            return []

        def clear(self, context: Any) -> None:
            calls.append("clear")

        def close(self) -> None:
            calls.append("close")

    fn = Counting()
    adapted = called_as(fn, "process_all")
    context = TaskRuntimeContext(TaskInfo())
    adapted.open(context)
    adapted.clear(None)
    adapted.close()
    assert calls == ["open", "clear", "close"]
    assert fn.get_runtime_context() is context
    assert context.get_metrics_group().get_metrics() == {"opened": 1}


def test_a_triggers_metric_group_is_its_functions_metric_group() -> None:
    from flinkwin import EventTimeTrigger, TumblingEventTimeWindows
    from flinkwin.testing import WindowOperatorHarness

    class CountingTrigger(EventTimeTrigger):
        def on_element(self, element: Any, timestamp: int, window: Any, ctx: Any) -> Any:
            ctx.get_metric_group().counter("elements").inc()
            return super().on_element(element, timestamp, window, ctx)

    class Report(ProcessWindowFunction):
        def process(self, key: Any, context: Any, elements: Any) -> Any:
            group = self.get_runtime_context().get_metrics_group()
            return [(key, group.counter("elements").get_count())]

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), Report(), key_field="k",
                              trigger=CountingTrigger())
    h.process_elements([{"k": "a"}, {"k": "a"}, {"k": "b"}], [1, 2, 3])
    h.process_watermark(20)
    assert sorted(h.output()) == [("a", 3), ("b", 3)]


def test_an_aggregate_function_without_merge_cannot_be_instantiated_as_in_pyflink() -> None:
    """PyFlink's ``AggregateFunction.merge`` is abstract (as Flink's interface method): a class
    without it fails when it is instantiated, not when two session windows first merge."""
    from flinkwin.datastream.functions import AggregateFunction as PyFlinkNamed
    from flinkwin.functions import AggregateFunction

    assert PyFlinkNamed is AggregateFunction

    class CountOnly(AggregateFunction):
        def create_accumulator(self) -> int:
            return 0

        def add(self, value: object, accumulator: int) -> int:
            return accumulator + 1

        def get_result(self, accumulator: int) -> int:
            return accumulator

    with pytest.raises(TypeError, match="abstract method.*merge"):
        CountOnly()

    class Count(CountOnly):
        def merge(self, acc_a: int, acc_b: int) -> int:
            return acc_a + acc_b

    assert Count().merge(1, 2) == 3
