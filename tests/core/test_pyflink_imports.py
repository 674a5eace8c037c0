"""PyFlink programs port by one textual rule: the package name ``pyflink`` becomes ``flinkwin``.

The import statements below are PyFlink's own (apache/flink's window tests and window examples)
and those of public PyFlink window programs (tutorials, course companions, blogs); each is
ported by the rule and run. Those flinkwin honours import the same objects flinkwin's own
modules hold; the others raise an ``ImportError`` saying what to do instead. No mirror module
imports Spark.
"""

from __future__ import annotations

import subprocess
import sys
import typing
from typing import Any

import pytest

import flinkwin
from flinkwin.unsupported import missing

#: Imports of PyFlink window programs that flinkwin honours.
PORTED = [
    # apache/flink flink-python/pyflink/datastream/tests/test_window.py
    "from pyflink.common import Configuration",
    "from pyflink.common.time import Time",
    "from pyflink.common.typeinfo import Types",
    "from pyflink.common.watermark_strategy import WatermarkStrategy, TimestampAssigner",
    "from pyflink.datastream.data_stream import DataStream",
    "from pyflink.datastream.functions import (ProcessWindowFunction, WindowFunction, "
    "AggregateFunction,\n    ProcessAllWindowFunction)",
    "from pyflink.datastream.output_tag import OutputTag",
    "from pyflink.datastream.window import (TumblingEventTimeWindows,\n"
    "    SlidingEventTimeWindows, EventTimeSessionWindows,\n"
    "    CountSlidingWindowAssigner, SessionWindowTimeGapExtractor,\n"
    "    CountWindow, PurgingTrigger, EventTimeTrigger, TimeWindow,\n"
    "    GlobalWindows, CountTrigger)",
    # apache/flink flink-python/pyflink/examples/datastream/windowing/*.py (less the sinks)
    "from pyflink.common import Types, WatermarkStrategy, Time",
    "from pyflink.common import Types, WatermarkStrategy",
    "from pyflink.common import Types",
    "from pyflink.datastream import StreamExecutionEnvironment, ProcessWindowFunction",
    "from pyflink.datastream import StreamExecutionEnvironment, WindowFunction",
    "from pyflink.datastream.window import EventTimeSessionWindows, \\\n"
    "    SessionWindowTimeGapExtractor, TimeWindow",
    "from pyflink.datastream.window import SlidingEventTimeWindows, TimeWindow",
    "from pyflink.datastream.window import TumblingEventTimeWindows, TimeWindow",
    "from pyflink.datastream.window import CountWindow",
    # public PyFlink window programs
    "from pyflink.datastream import window",
    "import pyflink.datastream.window",
    "import pyflink.common.typeinfo",
    "from pyflink.datastream import StreamExecutionEnvironment",
    "from pyflink.datastream import StreamExecutionEnvironment, RuntimeExecutionMode",
    "from pyflink.datastream import StreamExecutionEnvironment, TimeCharacteristic, OutputTag",
    "from pyflink.datastream import StreamExecutionEnvironment, CheckpointingMode, "
    "WindowFunction",
    "from pyflink.datastream import RuntimeContext",
    "from pyflink.datastream import StreamExecutionEnvironment, FlatMapFunction, RuntimeContext",
    "from pyflink.datastream.execution_mode import RuntimeExecutionMode",
    "from pyflink.datastream.checkpointing_mode import CheckpointingMode",
    "from pyflink.datastream.time_characteristic import TimeCharacteristic",
    "from pyflink.datastream.stream_execution_environment import StreamExecutionEnvironment",
    "from pyflink.datastream.window import (\n    TumblingEventTimeWindows, "
    "SlidingEventTimeWindows,\n    EventTimeSessionWindows, GlobalWindows, CountTrigger,\n)",
    "from pyflink.datastream.window import Time, SlidingEventTimeWindows",
    "from pyflink.datastream.window import TumblingProcessingTimeWindows",
    "from pyflink.datastream.window import (\n    Window,\n    SlidingEventTimeWindows,\n"
    "    SlidingProcessingTimeWindows,\n)",
    "from pyflink.datastream.window import (\n    CountSlidingWindowAssigner,\n"
    "    CountTumblingWindowAssigner,\n    SlidingEventTimeWindows,\n"
    "    TumblingEventTimeWindows,\n    WindowAssigner,\n)",
    "from pyflink.datastream.window import EventTimeTrigger as FlinkEventTimeTrigger",
    "from pyflink.datastream.window import Trigger as FlinkTrigger",
    "from pyflink.datastream.functions import (\n    ProcessWindowFunction, AggregateFunction,\n"
    "    MapFunction, RuntimeContext,\n)",
    "from pyflink.datastream.functions import AggregateFunction, KeySelector",
    "from pyflink.datastream.functions import ProcessWindowFunction, ReduceFunction",
    "from pyflink.datastream.functions import MapFunction",
    "from pyflink.datastream.functions import ProcessWindowFunction, RuntimeContext",
    "from pyflink.datastream.state import ValueStateDescriptor",
    "from pyflink.datastream.state import MapStateDescriptor, ValueStateDescriptor",
    "from pyflink.common import (\n    WatermarkStrategy, Types, Time, Duration,\n)",
    "from pyflink.common import Types, Row",
    "from pyflink.common import Duration",
    "from pyflink.common import Time, Types",
    "from pyflink.common import WatermarkStrategy, Configuration, Duration",
    "from pyflink.common.time import Duration",
    "from pyflink.common.types import Row, RowKind",
    "from pyflink.common.watermark_strategy import (\n    TimestampAssigner,\n)",
    "from pyflink.common.typeinfo import TypeInformation",
    "from pyflink.common import Row",
    # process functions (PyFlink's keyed-state and timer examples)
    "from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext",
    "from pyflink.datastream import ProcessFunction",
    "from pyflink.datastream import KeyedProcessFunction, TimerService, TimeDomain",
    "from pyflink.datastream.functions import ProcessFunction, KeyedProcessFunction, "
    "TimerService",
    "from pyflink.datastream.timerservice import TimerService",
    "from pyflink.datastream.time_domain import TimeDomain",
]

#: Imports flinkwin refuses, with (part of) the reason it gives.
REFUSED = [
    ("from pyflink.datastream.connectors.file_system import FileSink, OutputFileConfig, "
     "RollingPolicy", "connectors are sources and sinks"),
    ("from pyflink.datastream.connectors.kafka import KafkaSource, KafkaOffsetsInitializer",
     "spark.readStream"),
    ("from pyflink.datastream.connectors import FlinkKafkaConsumer", "DataStream(df"),
    ("import pyflink.datastream.connectors.kafka", "connectors are sources and sinks"),
    ("from pyflink.datastream.formats.json import JsonRowDeserializationSchema",
     "formats and (de)serialization schemas"),
    ("from pyflink.common import Types, WatermarkStrategy, Time, Encoder", "formats"),
    ("from pyflink.common.serialization import SimpleStringSchema", "formats"),
    ("from pyflink.table import StreamTableEnvironment", "Spark SQL"),
    ("from pyflink.table.expressions import col", "Spark SQL"),
    ("from pyflink.datastream.state import ValueStateDescriptor, StateTtlConfig", "state TTL"),
    ("from pyflink.datastream import StreamExecutionEnvironment, CheckpointingMode, "
     "FsStateBackend", "checkpoints and state storage are Spark's"),
    ("from pyflink.datastream.state_backend import EmbeddedRocksDBStateBackend",
     "checkpointLocation"),
    ("from pyflink.datastream.slot_sharing_group import SlotSharingGroup, MemorySize",
     "slots and resources are Spark's"),
    ("from pyflink.common import RestartStrategies", "restarts are Spark's"),
    ("from pyflink.common import JobExecutionResult", "no job client"),
    ("from pyflink.datastream import BroadcastProcessFunction", "interval join"),
    ("from pyflink.datastream.functions import KeyedBroadcastProcessFunction",
     "broadcast streams and broadcast state are not supported"),
    ("from pyflink.datastream import SourceFunction", "sources are Spark DataFrames"),
    ("from pyflink.datastream.functions import Partitioner", "partitioning is Spark's"),
]


def port(statement: str) -> str:
    """The porting rule."""
    return statement.replace("pyflink", "flinkwin")


@pytest.mark.parametrize("statement", PORTED)
def test_pyflink_imports_port_by_replacing_the_package_name(statement: str) -> None:
    namespace: dict[str, Any] = {}
    exec(port(statement), namespace)  # noqa: S102 (the statements are the list above)
    names = [k for k in namespace if k != "__builtins__"]
    assert names
    for name in names:
        value = namespace[name]
        module = getattr(value, "__module__", None) or getattr(value, "__name__", "")
        assert module.startswith("flinkwin"), (statement, name, value)


@pytest.mark.parametrize(("statement", "reason"), REFUSED)
def test_refused_pyflink_imports_say_what_to_do_instead(statement: str, reason: str) -> None:
    with pytest.raises(ImportError, match="flinkwin does not provide pyflink") as raised:
        exec(port(statement), {})  # noqa: S102
    assert reason in str(raised.value)


def test_a_ported_module_import_reaches_the_names_written_out_in_full() -> None:
    import flinkwin.common.typeinfo
    import flinkwin.datastream.window
    from flinkwin.datastream import window

    assigner = window.SlidingEventTimeWindows.of(
        flinkwin.datastream.window.Time.milliseconds(5), window.Time.milliseconds(2)
    )
    assert isinstance(assigner, flinkwin.SlidingEventTimeWindows)
    assert flinkwin.common.typeinfo.Types.LONG() == flinkwin.Types.LONG()
    assert flinkwin.datastream.window.TumblingEventTimeWindows is flinkwin.TumblingEventTimeWindows


#: ``pyflink.datastream.__all__`` of PyFlink 2.1.
PYFLINK_DATASTREAM = [
    "StreamExecutionEnvironment", "DataStream", "KeyedStream", "WindowedStream",
    "ConnectedStreams", "BroadcastStream", "BroadcastConnectedStream", "DataStreamSink",
    "MapFunction", "CoMapFunction", "FlatMapFunction", "CoFlatMapFunction", "ReduceFunction",
    "FilterFunction", "ProcessFunction", "KeyedProcessFunction", "CoProcessFunction",
    "KeyedCoProcessFunction", "WindowFunction", "ProcessWindowFunction", "AggregateFunction",
    "BroadcastProcessFunction", "KeyedBroadcastProcessFunction", "RuntimeContext",
    "TimerService", "CheckpointingMode", "CheckpointConfig", "ExternalizedCheckpointRetention",
    "StateBackend", "HashMapStateBackend", "EmbeddedRocksDBStateBackend", "CustomStateBackend",
    "PredefinedOptions", "CheckpointStorage", "JobManagerCheckpointStorage",
    "FileSystemCheckpointStorage", "CustomCheckpointStorage", "RuntimeExecutionMode", "Window",
    "TimeWindow", "CountWindow", "GlobalWindow", "WindowAssigner", "MergingWindowAssigner",
    "TriggerResult", "Trigger", "TimeDomain", "KeySelector", "Partitioner", "SourceFunction",
    "SinkFunction", "SlotSharingGroup", "MemorySize", "OutputTag",
]
#: ``pyflink.common.__all__`` of PyFlink 2.1, plus the format schemas it installs.
PYFLINK_COMMON = [
    "Configuration", "ConfigOption", "ConfigOptions", "ExecutionConfig", "TypeInformation",
    "TypeSerializer", "Types", "SerializationSchema", "DeserializationSchema",
    "SimpleStringSchema", "ByteArraySchema", "Encoder", "CompletableFuture",
    "InputDependencyConstraint", "JobClient", "JobExecutionResult", "JobID", "JobStatus",
    "RestartStrategies", "RestartStrategyConfiguration", "Row", "RowKind", "WatermarkStrategy",
    "Duration", "Instant", "Time", "AssignerWithPeriodicWatermarksWrapper",
    "JsonRowDeserializationSchema", "JsonRowSerializationSchema", "CsvRowDeserializationSchema",
    "CsvRowSerializationSchema", "AvroRowDeserializationSchema", "AvroRowSerializationSchema",
]


@pytest.mark.parametrize(("module", "names"), [
    ("flinkwin.datastream", PYFLINK_DATASTREAM), ("flinkwin.common", PYFLINK_COMMON),
])
def test_every_pyflink_package_name_is_provided_or_refused_with_a_reason(
    module: str, names: list[str]
) -> None:
    for name in names:
        try:
            exec(f"from {module} import {name}", {})  # noqa: S102
        except ImportError as error:
            assert "flinkwin does not provide" in str(error), (name, error)


def test_unknown_names_stay_attribute_errors() -> None:
    assert not hasattr(flinkwin, "NoSuchThing")
    with pytest.raises(ImportError, match="cannot import name 'NoSuchThing'"):
        exec("from flinkwin.datastream.window import NoSuchThing", {})  # noqa: S102
    assert isinstance(missing("flinkwin.common", "Encoder"), ImportError)
    assert isinstance(missing("flinkwin.common", "Nope"), AttributeError)


def test_the_pyflink_layout_imports_no_spark() -> None:
    code = (
        "import sys\n"
        "import flinkwin.common, flinkwin.common.typeinfo, flinkwin.common.time\n"
        "import flinkwin.common.watermark_strategy, flinkwin.common.types\n"
        "import flinkwin.common.configuration, flinkwin.common.execution_config\n"
        "import flinkwin.datastream, flinkwin.datastream.window, flinkwin.datastream.functions\n"
        "import flinkwin.datastream.state, flinkwin.datastream.output_tag\n"
        "import flinkwin.datastream.execution_mode, flinkwin.datastream.checkpointing_mode\n"
        "import flinkwin.datastream.time_characteristic, flinkwin.metrics\n"
        "import flinkwin.datastream.stream_execution_environment\n"
        "from flinkwin.datastream import StreamExecutionEnvironment\n"
        "env = StreamExecutionEnvironment.get_execution_environment()\n"
        "env.set_parallelism(1)\n"
        "assert 'pyspark' not in sys.modules, sorted(m for m in sys.modules if 'spark' in m)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_porting_guide_lists_every_refused_import() -> None:
    from pathlib import Path

    from flinkwin.unsupported import MODULES, NAMES

    guide = (Path(__file__).resolve().parents[2] / "docs" / "porting.md").read_text()
    listed = guide[guide.index("## Imports that raise ImportError"):]
    for module in MODULES:
        pyflink = module.replace("flinkwin", "pyflink", 1)
        short = "." + pyflink.rsplit(".", 1)[1]
        assert f"`{pyflink}`" in listed or f"`{short}`" in listed, module
    for name in NAMES:
        assert f"`{name}`" in listed, name


def _every_public_name() -> list[tuple[str, str]]:
    from pyflink_names import PYFLINK_MODULES

    return [(module, name) for module, names in PYFLINK_MODULES.items() for name in names]


@pytest.mark.parametrize(("module", "name"), _every_public_name())
def test_every_public_name_of_pyflinks_datastream_and_common_modules_imports_or_says_what_to_do(
    module: str, name: str
) -> None:
    """``from pyflink.<module> import <name>`` ported by the rule gives flinkwin's object, or
    an ImportError naming the PyFlink name and what to write instead; never Python's bare
    "cannot import name" or "No module named"."""
    statement = port(f"from {module} import {name}")
    namespace: dict[str, Any] = {}
    try:
        exec(statement, namespace)  # noqa: S102 (PyFlink's own names, see pyflink_names.py)
    except ImportError as error:
        message = str(error)
        assert message.startswith("flinkwin does not provide pyflink."), (statement, message)
        assert ": " in message and len(message.split(": ", 1)[1]) > 20, message
        return
    value = namespace[name]
    origin = getattr(value, "__module__", None)
    assert origin is None or origin.startswith(("flinkwin", "typing")), (statement, value)


def test_a_custom_assigner_copied_from_pyflink_imports_its_helpers() -> None:
    """The imports of a window assigner and trigger written after PyFlink's own window.py
    (its type variables, ``mod_inverse``, ``long_to_int_with_bit_mixing``, ``Min``) port by
    the rule and behave as PyFlink's."""
    from flinkwin.datastream.window import (
        KEY,
        OUT,
        Min,
        T,
        TimeWindow,
        W,
        WindowAssigner,
        long_to_int_with_bit_mixing,
        mod_inverse,
    )

    assert all(isinstance(v, typing.TypeVar) for v in (T, W, KEY, OUT))
    assert [v.__name__ for v in (T, W, KEY, OUT)] == ["T", "W", "KEY", "OUT"]
    assert all(mod_inverse(x) * x % 2**32 == 1 for x in range(1, 2001, 2))
    assert mod_inverse(3) == -559_240_533_333_333  # PyFlink's value (unbounded ints)
    # the SplitMix64 finalizer on unbounded ints, as PyFlink's
    assert long_to_int_with_bit_mixing(0) == 0
    assert long_to_int_with_bit_mixing(1) == 0x6F3AB829F50116C1007ADB3B100B05E5
    assert Min().reduce(3, 2) == 2

    class EveryTenMillis(WindowAssigner[T, TimeWindow]):  # a program's own generic assigner
        def assign_windows(self, element: T, timestamp: int, context: Any) -> list[TimeWindow]:
            start = timestamp - timestamp % 10
            return [TimeWindow(start, start + 10)]

        def get_default_trigger(self, env: Any) -> Any:
            from flinkwin.datastream.window import EventTimeTrigger

            return EventTimeTrigger.create()

        def get_window_serializer(self) -> Any:
            from flinkwin.datastream.window import TimeWindowSerializer

            return TimeWindowSerializer()

        def is_event_time(self) -> bool:
            return True

    assert EveryTenMillis().assign_windows("x", 23, None) == [TimeWindow(20, 30)]


def test_pyflinks_simple_helpers_are_real() -> None:
    from flinkwin.common.constants import DEFAULT_OUTPUT_TAG, MAX_LONG_VALUE, MIN_LONG_VALUE
    from flinkwin.datastream.data_stream import WINDOW_STATE_NAME, CloseableIterator
    from flinkwin.datastream.functions import (
        NullByteKeySelector,
        PassThroughAllWindowFunction,
        PassThroughWindowFunction,
    )
    from flinkwin.datastream.state import AppendingState, MergingState, State
    from flinkwin.state import ListState, MapState, ReducingState, StateTables
    from flinkwin.state.descriptors import ListStateDescriptor

    assert (MAX_LONG_VALUE, MIN_LONG_VALUE, DEFAULT_OUTPUT_TAG) == (2**63 - 1, -(2**63), "")
    assert WINDOW_STATE_NAME == "window-contents"
    assert NullByteKeySelector().get_key(("a", 1)) == 0
    assert list(PassThroughWindowFunction().apply("k", None, [1, 2])) == [1, 2]
    assert list(PassThroughAllWindowFunction().apply(None, [1, 2])) == [1, 2]
    assert issubclass(ListState, MergingState) and issubclass(ReducingState, AppendingState)
    assert issubclass(MapState, State) and not issubclass(MapState, AppendingState)
    handle = StateTables().handle(ListStateDescriptor("l", None), "k", None)
    assert isinstance(handle, AppendingState)

    collected = CloseableIterator([1, 2, 3])
    assert collected == [1, 2, 3] and next(collected) == 1 and collected.next() == 2
    with collected as results:
        assert list(results) == [1, 2, 3]  # a for loop starts over, as over a list
    with pytest.raises(StopIteration):
        next(collected)  # closed
