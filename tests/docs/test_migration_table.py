"""docs/migration.md covers every element of seed 000's window API listing and of PyFlink's
window API, each with a status; what it marks supported exists in flinkwin."""

from __future__ import annotations

import re

from doc_examples import DOCS

import flinkwin
import flinkwin.windows

# Seed 000 (/work/shared/seeds/000_*.txt): the keyed / non-keyed window pipeline listing
# (keyBy ... getSideOutput), the interfaces it prints (Window, TimeWindow, GlobalWindow,
# WindowAssigner, MergingWindowAssigner, Trigger) with their methods, and the operator classes
# it walks through (WindowOperator, InternalWindowFunction..., MergingWindowSet).
SEED_000 = [
    "keyBy", "window", "trigger", "evictor", "allowedLateness", "sideOutputLateData", "reduce",
    "aggregate", "fold", "process", "getSideOutput", "windowAll",
    "Window", "maxTimestamp", "TimeWindow", "GlobalWindow",
    "WindowAssigner", "assignWindows", "isEventTime", "getDefaultTrigger", "getWindowSerializer",
    "WindowAssignerContext", "getCurrentProcessingTime", "MergingWindowAssigner", "mergeWindows",
    "MergeCallback", "Trigger", "TriggerResult", "TriggerContext", "OnMergeContext", "onElement",
    "onEventTime", "onProcessingTime", "canMerge", "onMerge", "clear",
    "TumblingEventTimeWindows", "TumblingProcessingTimeWindows", "SlidingEventTimeWindows",
    "SlidingProcessingTimeWindows", "EventTimeSessionWindows", "ProcessingTimeSessionWindows",
    "DynamicEventTimeSessionWindows", "DynamicProcessingTimeSessionWindows",
    "WindowOperator", "EvictingWindowOperator", "processElement", "emitWindowContents",
    "registerCleanupTimer", "MergingWindowSet", "InternalWindowFunction",
    "InternalIterableProcessWindowFunction", "ProcessWindowFunction", "WindowFunction",
    "AggregateFunction", "ReduceFunction", "OutputTag",
]

# PyFlink, apache/flink flink-python/pyflink/datastream/window.py: its __all__, plus
# GlobalWindowSerializer and the methods of Trigger.TriggerContext / OnMergeContext.
PYFLINK_WINDOW_PY = [
    "Window", "TimeWindow", "CountWindow", "GlobalWindow", "TumblingProcessingTimeWindows",
    "TumblingEventTimeWindows", "SlidingProcessingTimeWindows", "SlidingEventTimeWindows",
    "ProcessingTimeSessionWindows", "EventTimeSessionWindows",
    "DynamicProcessingTimeSessionWindows", "DynamicEventTimeSessionWindows", "WindowAssigner",
    "MergingWindowAssigner", "CountTumblingWindowAssigner", "CountSlidingWindowAssigner",
    "TriggerResult", "Trigger", "EventTimeTrigger", "ProcessingTimeTrigger",
    "ContinuousEventTimeTrigger", "ContinuousProcessingTimeTrigger", "NeverTrigger",
    "PurgingTrigger", "CountTrigger", "TimeWindowSerializer", "CountWindowSerializer",
    "SessionWindowTimeGapExtractor", "GlobalWindows", "GlobalWindowSerializer",
    "get_current_processing_time", "get_metric_group", "get_current_watermark",
    "register_processing_time_timer", "register_event_time_timer",
    "delete_processing_time_timer", "delete_event_time_timer", "get_partitioned_state",
    "merge_partitioned_state", "on_element", "on_processing_time", "on_event_time",
    "can_merge", "on_merge", "assign_windows", "get_default_trigger", "get_window_serializer",
    "is_event_time", "merge_windows", "max_timestamp",
]

# PyFlink, apache/flink flink-python/pyflink/datastream/data_stream.py: the window methods of
# DataStream and KeyedStream, and every public method of WindowedStream and AllWindowedStream.
PYFLINK_DATA_STREAM_PY = [
    "DataStream.window_all", "DataStream.count_window_all", "KeyedStream.window",
    "KeyedStream.count_window", "get_side_output",
    *(f"{cls}.{method}" for cls in ("WindowedStream", "AllWindowedStream") for method in (
        "get_execution_environment", "get_input_type", "trigger", "allowed_lateness",
        "side_output_late_data", "reduce", "aggregate", "apply", "process")),
]

# PyFlink, apache/flink flink-python/pyflink/datastream/functions.py: the window function
# classes (public and internal) with their methods and contexts.
PYFLINK_FUNCTIONS_PY = [
    "ReduceFunction", "AggregateFunction", "create_accumulator", "add", "get_result", "merge",
    "KeySelector", "RuntimeContext", "open", "close", "WindowFunction", "AllWindowFunction",
    "ProcessWindowFunction", "ProcessWindowFunction.Context", "ProcessAllWindowFunction",
    "ProcessAllWindowFunction.Context", "window", "current_processing_time",
    "current_watermark", "window_state", "global_state", "PassThroughWindowFunction",
    "PassThroughAllWindowFunction", "InternalWindowFunction", "InternalWindowContext",
    "InternalSingleValueWindowFunction", "InternalSingleValueAllWindowFunction",
    "InternalIterableWindowFunction", "InternalIterableAllWindowFunction",
    "InternalProcessWindowContext", "InternalProcessAllWindowContext",
    "InternalSingleValueProcessWindowFunction", "InternalSingleValueProcessAllWindowFunction",
    "InternalIterableProcessWindowFunction", "InternalIterableProcessAllWindowFunction",
]

STATUSES = {"supported", "partial", "not supported"}


def _rows() -> list[tuple[set[str], str]]:
    """(names in backticks of the first cell, status) of every table row."""
    rows = []
    for line in (DOCS / "migration.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) != 4 or cells[0] in ("Flink / PyFlink", "---"):
            continue
        rows.append((set(re.findall(r"`([^`]+)`", cells[0])), cells[2]))
    return rows


def _status(name: str) -> str:
    statuses = [status for names, status in _rows() if name in names]
    assert statuses, f"{name} has no row in docs/migration.md"
    return statuses[0]


def test_every_row_has_a_status() -> None:
    rows = _rows()
    assert len(rows) > 40
    assert {status for _, status in rows} <= STATUSES


def test_table_covers_seed_000_listing() -> None:
    missing = [n for n in SEED_000 if not any(n in names for names, _ in _rows())]
    assert not missing, missing


def test_table_covers_pyflink_window_api() -> None:
    names = PYFLINK_WINDOW_PY + PYFLINK_DATA_STREAM_PY + PYFLINK_FUNCTIONS_PY
    missing = [n for n in names if not any(n in row for row, _ in _rows())]
    assert not missing, missing


def test_supported_pyflink_classes_exist_in_flinkwin() -> None:
    for name in PYFLINK_WINDOW_PY + PYFLINK_FUNCTIONS_PY + SEED_000:
        if name[0].isupper() and "." not in name and _status(name) == "supported":
            found = (hasattr(flinkwin, name) or hasattr(flinkwin.windows, name)
                     or hasattr(flinkwin.Trigger, name) or hasattr(flinkwin.WindowAssigner, name)
                     or hasattr(flinkwin.MergingWindowAssigner, name)
                     or name in ("WindowOperator", "MergingWindowSet", "EvictingWindowOperator"))
            assert found, name


def test_supported_stream_methods_exist_in_flinkwin() -> None:
    classes = {"DataStream": flinkwin.DataStream, "KeyedStream": flinkwin.KeyedStream,
               "WindowedStream": flinkwin.WindowedStream,
               "AllWindowedStream": flinkwin.AllWindowedStream}
    for name in PYFLINK_DATA_STREAM_PY:
        if "." in name and _status(name) == "supported":
            cls, method = name.split(".")
            assert callable(getattr(classes[cls], method, None)), name
    for name in ["keyBy", "windowAll", "trigger", "evictor", "allowedLateness",
                 "sideOutputLateData", "reduce", "aggregate", "process", "getSideOutput"]:
        assert _status(name) == "supported", name
        assert any(hasattr(c, name) for c in [*classes.values(), flinkwin.WindowResultStream]), name
