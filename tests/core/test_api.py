"""The public API surface (docs/api-contract.md): time arguments, argument validation with
Flink's messages, records, Flink (camelCase) and Python (snake_case) names, the function kinds
the harness accepts, side outputs from window functions, and clear errors for misuse."""

from __future__ import annotations

import datetime

import pytest

import flinkwin
from flinkwin import (
    AggregateFunction,
    AllWindowFunction,
    ContinuousEventTimeTrigger,
    CountEvictor,
    CountTrigger,
    DeltaEvictor,
    DeltaTrigger,
    Duration,
    DynamicEventTimeSessionWindows,
    EventTimeSessionWindows,
    EventTimeTrigger,
    GlobalWindow,
    GlobalWindows,
    NeverTrigger,
    OutputTag,
    ProcessAllWindowFunction,
    ProcessingTimeSessionWindows,
    ProcessWindowFunction,
    PurgingTrigger,
    Record,
    ReduceFunction,
    SlidingEventTimeWindows,
    SlidingProcessingTimeWindows,
    Time,
    TimeEvictor,
    TimestampedValue,
    TimeWindow,
    Trigger,
    TriggerResult,
    TumblingEventTimeWindows,
    TumblingProcessingTimeWindows,
    ValueStateDescriptor,
    WindowAssigner,
    WindowFunction,
)
from flinkwin.errors import UnsupportedOperationError, UserFunctionError
from flinkwin.functions.builtin import sum_of
from flinkwin.record import Row
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MAX_LONG, MIN_LONG, to_millis

# ---------------------------------------------------------------------------------------------
#  Time arguments
# ---------------------------------------------------------------------------------------------


class Ctx(WindowAssigner.WindowAssignerContext):
    """A WindowAssignerContext at processing time 0."""

    def get_current_processing_time(self):
        return 0


CTX = Ctx()


def test_time_factories_convert_to_milliseconds():
    assert Time.milliseconds(7).to_milliseconds() == 7
    assert Time.seconds(5).to_milliseconds() == 5_000
    assert Time.minutes(2).to_milliseconds() == 120_000
    assert Time.hours(1).to_milliseconds() == 3_600_000
    assert Time.days(1).to_milliseconds() == 86_400_000


def test_duration_factories_in_java_and_python_spelling():
    assert Duration.ofMillis(7).to_millis() == Duration.of_millis(7).to_millis() == 7
    assert Duration.ofSeconds(5).to_millis() == Duration.of_seconds(5).to_millis() == 5_000
    assert Duration.ofMinutes(2).toMillis() == Duration.of_minutes(2).to_millis() == 120_000
    assert Duration.ofHours(1).to_millis() == Duration.of_hours(1).to_millis() == 3_600_000
    assert Duration.ofDays(1).to_millis() == Duration.of_days(1).to_millis() == 86_400_000
    assert Time.seconds(5) == Duration.ofSeconds(5)


@pytest.mark.parametrize(
    "value",
    [Time.seconds(90), Duration.ofSeconds(90), datetime.timedelta(minutes=1, seconds=30), 90_000],
    ids=["Time", "Duration", "timedelta", "int"],
)
def test_every_time_form_is_the_same_milliseconds(value):
    assert to_millis(value) == 90_000


def test_timedelta_sub_second_precision_is_milliseconds():
    assert to_millis(datetime.timedelta(seconds=1, milliseconds=250)) == 1_250
    assert to_millis(datetime.timedelta(days=1)) == 86_400_000


@pytest.mark.parametrize("bad", [1.5, "5s", None, True])
def test_non_time_arguments_are_rejected_with_type_error(bad):
    with pytest.raises(TypeError, match="Time, Duration, timedelta or int"):
        to_millis(bad)


@pytest.mark.parametrize(
    "size", [Time.seconds(5), Duration.ofSeconds(5), datetime.timedelta(seconds=5), 5_000]
)
def test_assigners_accept_every_time_form(size):
    tumbling = TumblingEventTimeWindows.of(size)
    assert tumbling.assign_windows(None, 7_000, CTX) == [TimeWindow(5_000, 10_000)]
    sliding = SlidingEventTimeWindows.of(size, 1_000)
    assert sliding.assign_windows(None, 7_000, CTX)[0] == TimeWindow(7_000, 12_000)
    assert len(sliding.assign_windows(None, 7_000, CTX)) == 5
    session = EventTimeSessionWindows.withGap(size)
    assert session.assign_windows(None, 7_000, CTX) == [TimeWindow(7_000, 12_000)]
    assert ContinuousEventTimeTrigger.of(size).interval == 5_000
    assert TimeEvictor.of(size).window_size == 5_000


def test_allowed_lateness_accepts_every_time_form():
    for lateness in (Time.seconds(2), Duration.ofSeconds(2), datetime.timedelta(seconds=2), 2000):
        h = WindowOperatorHarness(
            TumblingEventTimeWindows.of(1_000), sum_of("v"), key_field="k",
            allowed_lateness=lateness,
        )
        assert h.operator.allowed_lateness == 2_000


# ---------------------------------------------------------------------------------------------
#  Assigner argument validation, with Flink's messages
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: TumblingEventTimeWindows.of(Time.seconds(5), Time.seconds(5)),
         "TumblingEventTimeWindows parameters must satisfy abs(offset) < size"),
        (lambda: TumblingEventTimeWindows.of(Time.seconds(5), Time.seconds(-6)),
         "TumblingEventTimeWindows parameters must satisfy abs(offset) < size"),
        (lambda: TumblingEventTimeWindows.of(0),
         "TumblingEventTimeWindows parameters must satisfy abs(offset) < size"),
        (lambda: TumblingProcessingTimeWindows.of(1_000, 1_000),
         "TumblingProcessingTimeWindows parameters must satisfy abs(offset) < size"),
        (lambda: SlidingEventTimeWindows.of(5_000, 1_000, 1_000),
         "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"),
        (lambda: SlidingEventTimeWindows.of(0, 1_000),
         "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"),
        (lambda: SlidingEventTimeWindows.of(5_000, 0),
         "SlidingEventTimeWindows parameters must satisfy abs(offset) < slide and size > 0"),
        (lambda: SlidingProcessingTimeWindows.of(5_000, 1_000, -1_000),
         "SlidingProcessingTimeWindows parameters must satisfy abs(offset) < slide and size > 0"),
        (lambda: EventTimeSessionWindows.withGap(0),
         "EventTimeSessionWindows parameters must satisfy 0 < size"),
        (lambda: EventTimeSessionWindows.with_gap(Time.seconds(-1)),
         "EventTimeSessionWindows parameters must satisfy 0 < size"),
        (lambda: ProcessingTimeSessionWindows.withGap(0),
         "ProcessingTimeSessionWindows parameters must satisfy 0 < size"),
    ],
)
def test_assigner_validation_messages_are_flinks(make, message):
    with pytest.raises(ValueError) as info:
        make()
    assert str(info.value) == message


def test_valid_offsets_just_inside_the_bounds_are_accepted():
    assert TumblingEventTimeWindows.of(5_000, 4_999).assign_windows(None, 0, CTX) == [
        TimeWindow(-1, 4_999)
    ]
    assert TumblingEventTimeWindows.of(5_000, -4_999).assign_windows(None, 0, CTX) == [
        TimeWindow(-4_999, 1)
    ]
    assert SlidingEventTimeWindows.of(5_000, 1_000, 999).assign_windows(None, 0, CTX)[0] == (
        TimeWindow(-1, 4_999)
    )


def test_dynamic_session_gap_must_be_positive_at_assignment():
    assigner = EventTimeSessionWindows.withDynamicGap(lambda element: element["gap"])
    assert isinstance(assigner, DynamicEventTimeSessionWindows)
    assert assigner.assign_windows({"gap": 3}, 10, CTX) == [TimeWindow(10, 13)]
    with pytest.raises(ValueError, match="Dynamic session time gap must satisfy 0 < gap"):
        assigner.assign_windows({"gap": 0}, 10, CTX)


def test_dynamic_session_gap_extractor_object_with_extract():
    class Extractor:
        def extract(self, element):
            return Time.seconds(element["gap_s"])

    assigner = EventTimeSessionWindows.with_dynamic_gap(Extractor())
    assert assigner.assign_windows({"gap_s": 2}, 1_000, CTX) == [TimeWindow(1_000, 3_000)]


def test_event_time_assigner_rejects_elements_without_timestamp():
    with pytest.raises(RuntimeError, match="Long.MIN_VALUE timestamp"):
        TumblingEventTimeWindows.of(1_000).assign_windows(None, MIN_LONG, None)


# ---------------------------------------------------------------------------------------------
#  Records
# ---------------------------------------------------------------------------------------------


def test_harness_hands_records_to_user_functions():
    seen = []

    def reduce(a, b):
        seen.append((isinstance(a, Record), isinstance(b, Record), a.v, b["v"], b[1]))
        return Record.of(("k", "v"), (a.k, a.v + b.v))

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), reduce, key_field="k")
    h.process_element({"k": "x", "v": 1}, 1)
    h.process_element({"k": "x", "v": 2}, 2)
    assert seen == [(True, True, 1, 2, 2)]
    h.process_watermark(9)
    assert h.output() == [{"k": "x", "v": 3}]


# ---------------------------------------------------------------------------------------------
#  Flink (camelCase) and Python (snake_case) names
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "owner, camel, snake",
    [
        (EventTimeSessionWindows, "withGap", "with_gap"),
        (EventTimeSessionWindows, "withDynamicGap", "with_dynamic_gap"),
        (ProcessingTimeSessionWindows, "withGap", "with_gap"),
        (ProcessingTimeSessionWindows, "withDynamicGap", "with_dynamic_gap"),
        (GlobalWindows, "createWithEndOfStreamTrigger", "create_with_end_of_stream_trigger"),
        (Duration, "ofSeconds", "of_seconds"),
        (Duration, "ofMillis", "of_millis"),
        (Duration, "toMillis", "to_millis"),
        (TriggerResult, "isFire", "is_fire"),
        (TriggerResult, "isPurge", "is_purge"),
        (TimeWindow, "maxTimestamp", "max_timestamp"),
        (TimeWindow, "mergeWindows", "merge_windows"),
        (TimestampedValue, "getValue", "get_value"),
        (TimestampedValue, "getTimestamp", "get_timestamp"),
        (OutputTag, "getId", "get_id"),
        (Record, "asDict", "as_dict"),
        (Trigger.TriggerContext, "registerEventTimeTimer", "register_event_time_timer"),
        (Trigger.TriggerContext, "getPartitionedState", "get_partitioned_state"),
        (Trigger.TriggerContext, "getCurrentWatermark", "get_current_watermark"),
        (Trigger.OnMergeContext, "mergePartitionedState", "merge_partitioned_state"),
    ],
)
def test_camel_case_and_snake_case_names_both_exist(owner, camel, snake):
    assert callable(getattr(owner, camel))
    assert callable(getattr(owner, snake))


def test_camel_and_snake_factories_build_equivalent_objects():
    assert EventTimeSessionWindows.withGap(5).session_timeout == 5
    assert EventTimeSessionWindows.with_gap(5).session_timeout == 5
    a = GlobalWindows.createWithEndOfStreamTrigger().get_default_trigger()
    b = GlobalWindows.create_with_end_of_stream_trigger().get_default_trigger()
    assert type(a) is type(b)
    assert type(a) is not NeverTrigger
    assert isinstance(GlobalWindows.create().get_default_trigger(), NeverTrigger)
    assert TimeWindow(0, 10).maxTimestamp() == TimeWindow(0, 10).max_timestamp() == 9
    assert GlobalWindow.get().max_timestamp() == MAX_LONG


def test_top_level_exports_the_contract_names():
    for name in (
        "TumblingEventTimeWindows TumblingProcessingTimeWindows SlidingEventTimeWindows "
        "SlidingProcessingTimeWindows EventTimeSessionWindows ProcessingTimeSessionWindows "
        "GlobalWindows WindowAssigner MergingWindowAssigner TimeWindow GlobalWindow Trigger "
        "TriggerResult EventTimeTrigger ProcessingTimeTrigger ContinuousEventTimeTrigger "
        "ContinuousProcessingTimeTrigger CountTrigger DeltaTrigger PurgingTrigger NeverTrigger "
        "Evictor CountEvictor TimeEvictor DeltaEvictor TimestampedValue ReduceFunction "
        "AggregateFunction ProcessWindowFunction WindowFunction ProcessAllWindowFunction "
        "AllWindowFunction OutputTag Record Time Duration Types ValueStateDescriptor "
        "ListStateDescriptor ReducingStateDescriptor AggregatingStateDescriptor "
        "MapStateDescriptor"
    ).split():
        assert hasattr(flinkwin, name), name


def test_constructor_forms_fixed_by_the_contract():
    assert NeverTrigger.create().on_element(None, 0, GlobalWindow.get(), None) is (
        TriggerResult.CONTINUE
    )
    assert isinstance(DeltaTrigger.of(1.0, lambda old, new: new - old), DeltaTrigger)

    class Delta:
        def get_delta(self, old, new):
            return new - old

    evictor = DeltaEvictor.of(1.0, Delta(), do_evict_after=True)
    assert evictor.do_evict_after is True
    assert CountEvictor.of(3, True).do_evict_after is True
    assert TimeEvictor.of(Time.seconds(1), do_evict_after=False).do_evict_after is False
    assert isinstance(PurgingTrigger.of(CountTrigger.of(2)), PurgingTrigger)


# ---------------------------------------------------------------------------------------------
#  GlobalWindows.createWithEndOfStreamTrigger
# ---------------------------------------------------------------------------------------------


def test_end_of_stream_trigger_fires_once_at_max_long_watermark():
    assigner = GlobalWindows.createWithEndOfStreamTrigger()
    h = WindowOperatorHarness(assigner, sum_of("v"), key_field="k")
    for i in range(5):
        h.process_element({"k": "a" if i % 2 else "b", "v": i}, i)
    h.process_watermark(MAX_LONG - 1)
    assert h.output() == []  # nothing before the end of input
    h.process_watermark(MAX_LONG)
    assert sorted(h.output_with_timestamps()) == [
        ({"k": "a", "v": 1 + 3}, MAX_LONG),
        ({"k": "b", "v": 0 + 2 + 4}, MAX_LONG),
    ]
    h.process_watermark(MAX_LONG)  # not greater than the current watermark: ignored
    assert len(h.output()) == 2


def test_plain_global_windows_never_fire_even_at_end_of_input():
    h = WindowOperatorHarness(GlobalWindows.create(), sum_of("v"), key_field="k")
    h.process_element({"k": "a", "v": 1}, 1)
    h.process_watermark(MAX_LONG)
    assert h.output() == []


# ---------------------------------------------------------------------------------------------
#  Window function kinds
# ---------------------------------------------------------------------------------------------


class KeyEcho(ProcessWindowFunction):
    def process(self, key, context, elements):
        w = context.window()
        return [(key, w.start, w.end, len(list(elements)))]


def test_process_window_function_gets_scalar_key_for_one_field():
    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), KeyEcho(), key_field="user")
    h.process_element({"user": "alice", "region": "eu"}, 1)
    h.process_watermark(9)
    assert h.output() == [("alice", 0, 10, 1)]
    assert h.output()[0][0] == "alice"  # not ("alice",)


def test_process_window_function_gets_tuple_key_for_several_fields():
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(10), KeyEcho(), key_field=["user", "region"]
    )
    h.process_element({"user": "alice", "region": "eu"}, 1)
    h.process_element({"user": "alice", "region": "us"}, 2)
    h.process_element({"user": "alice", "region": "eu"}, 3)
    h.process_watermark(9)
    assert sorted(h.output()) == [(("alice", "eu"), 0, 10, 2), (("alice", "us"), 0, 10, 1)]


def test_process_window_function_gets_key_selector_result_for_callable_key():
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(10), KeyEcho(), key_field=lambda r: r["user"].upper()
    )
    h.process_element({"user": "alice"}, 1)
    h.process_watermark(9)
    assert h.output() == [("ALICE", 0, 10, 1)]


def test_process_window_function_context_clocks():
    class Clocks(ProcessWindowFunction):
        def process(self, key, context, elements):
            yield (context.current_watermark(), context.current_processing_time())

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), Clocks(), key_field="k")
    h.set_processing_time(12_345)
    h.process_element({"k": 1}, 1)
    h.process_watermark(15)
    assert h.output() == [(15, 12_345)]


def test_window_all_passes_context_and_elements_to_process_all_window_function():
    calls = []

    class AllCount(ProcessAllWindowFunction):
        def process(self, context, elements):
            elements = list(elements)
            calls.append(len(elements))
            return [(context.window().start, sorted(e["user"] for e in elements))]

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), AllCount())  # non-keyed
    for i, user in enumerate(["c", "a", "b"]):
        h.process_element({"user": user}, i)
    h.process_element({"user": "d"}, 12)
    h.process_watermark(19)
    assert h.output() == [(0, ["a", "b", "c"]), (10, ["d"])]
    assert calls == [3, 1]  # one window for all keys


def test_window_function_apply_gets_key_window_and_inputs():
    class Apply(WindowFunction):
        def apply(self, key, window, inputs):
            return [(key, window, sum(i["v"] for i in inputs))]

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), Apply(), key_field="k")
    h.process_element({"k": "a", "v": 2}, 1)
    h.process_element({"k": "a", "v": 5}, 3)
    h.process_watermark(9)
    assert h.output() == [("a", TimeWindow(0, 10), 7)]


def test_all_window_function_apply_gets_window_and_inputs():
    class ApplyAll(AllWindowFunction):
        def apply(self, window, inputs):
            yield (window.start, len(list(inputs)))

    h = WindowOperatorHarness(SlidingEventTimeWindows.of(10, 5), ApplyAll())
    h.process_element({"v": 1}, 7)
    h.process_watermark(100)
    assert h.output() == [(0, 1), (5, 1)]


class Average(AggregateFunction):
    def create_accumulator(self):
        return (0, 0)

    def add(self, value, accumulator):
        return (accumulator[0] + value["v"], accumulator[1] + 1)

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return (a[0] + b[0], a[1] + b[1])


class Wrap(ProcessWindowFunction):
    def process(self, key, context, elements):
        elements = list(elements)
        yield (key, context.window().start, elements)


def test_aggregate_and_process_window_function_pair():
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(10), (Average(), Wrap()), key_field="k"
    )
    for ts, v in [(1, 1), (2, 2), (3, 6), (11, 10)]:
        h.process_element({"k": "a", "v": v}, ts)
    h.process_watermark(19)
    # the process function sees exactly one element: the aggregate's result
    assert h.output() == [("a", 0, [3.0]), ("a", 10, [10.0])]
    # incremental: the window keeps one accumulator, not the elements
    assert h.operator.spec.state_kind == "aggregating"


def test_reduce_and_process_window_function_pair():
    class Max(ReduceFunction):
        def reduce(self, a, b):
            return a if a["v"] >= b["v"] else b

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), (Max(), Wrap()), key_field="k")
    for ts, v in [(1, 4), (2, 9), (3, 6)]:
        h.process_element({"k": "a", "v": v}, ts)
    h.process_watermark(9)
    assert h.output() == [("a", 0, [{"k": "a", "v": 9}])]


def test_plain_callable_is_a_reduce_function():
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(10), lambda a, b: {"k": a["k"], "v": a["v"] * b["v"]},
        key_field="k",
    )
    for ts, v in [(1, 2), (2, 3), (3, 4)]:
        h.process_element({"k": "a", "v": v}, ts)
    h.process_watermark(9)
    assert h.output() == [{"k": "a", "v": 24}]


# ---------------------------------------------------------------------------------------------
#  Side outputs from window functions
# ---------------------------------------------------------------------------------------------

SMALL = OutputTag("small")
LATE = OutputTag("late")


def test_side_output_by_yielding_tag_value_pairs():
    class Split(ProcessWindowFunction):
        def process(self, key, context, elements):
            for e in elements:
                if e["v"] < 10:
                    yield SMALL, (key, e["v"])
                else:
                    yield (key, e["v"])

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), Split(), key_field="k")
    for ts, v in [(1, 5), (2, 50), (3, 7)]:
        h.process_element({"k": "a", "v": v}, ts)
    h.process_watermark(9)
    assert h.output() == [("a", 50)]
    assert h.side_output_with_timestamps(SMALL) == [(("a", 5), 9), (("a", 7), 9)]


def test_side_output_through_context_output():
    class Split(ProcessWindowFunction):
        def process(self, key, context, elements):
            total = 0
            for e in elements:
                total += e["v"]
                context.output(SMALL, e["v"])
            return [total]

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), Split(), key_field="k")
    for ts, v in [(1, 5), (2, 50)]:
        h.process_element({"k": "a", "v": v}, ts)
    h.process_watermark(9)
    assert h.output() == [55]
    assert h.side_output(SMALL) == [5, 50]
    assert h.side_output(OutputTag("other")) == []


def test_late_records_go_to_the_late_side_output_with_their_timestamp():
    h = WindowOperatorHarness(
        TumblingEventTimeWindows.of(10), sum_of("v"), key_field="k",
        allowed_lateness=5, late_output_tag=LATE,
    )
    h.process_element({"k": "a", "v": 1}, 1)
    h.process_watermark(12)
    assert h.output() == [{"k": "a", "v": 1}]
    h.process_element({"k": "a", "v": 2}, 3)  # late but within lateness: re-fires the window
    assert h.output() == [{"k": "a", "v": 1}, {"k": "a", "v": 3}]
    h.process_watermark(14)  # window cleaned up at 9 + 5 = 14
    h.process_element({"k": "a", "v": 4}, 4)  # 4 + 5 <= 14: late, no live window
    assert h.side_output_with_timestamps(LATE) == [({"k": "a", "v": 4}, 4)]
    assert h.num_late_records_dropped == 0


def test_late_records_without_side_output_are_counted_as_dropped():
    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), sum_of("v"), key_field="k")
    h.process_watermark(20)
    h.process_element({"k": "a", "v": 4}, 4)
    assert h.output() == []
    assert h.num_late_records_dropped == 1


# ---------------------------------------------------------------------------------------------
#  Clear errors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("result", [5, 3.5, "abc", {"a": 1}])
def test_non_iterable_process_result_is_a_type_error(result):
    class Bad(ProcessWindowFunction):
        def process(self, key, context, elements):
            return result

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), Bad(), key_field="k")
    h.process_element({"k": "a"}, 1)
    with pytest.raises(UserFunctionError, match="TypeError: Bad.process must return an iterable"):
        h.process_watermark(9)


def test_a_row_process_result_is_a_type_error_though_rows_are_tuples():
    class Bad(ProcessWindowFunction):
        def process(self, key, context, elements):
            return Row(k=key, n=len(elements))

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), Bad(), key_field="k")
    h.process_element({"k": "a"}, 1)
    with pytest.raises(UserFunctionError, match="TypeError: Bad.process must return an iterable"):
        h.process_watermark(9)


@pytest.mark.parametrize("shape", ["generator", "list", "tuple", "iterator", "none"])
def test_process_results_of_every_iterable_shape_give_the_same_outputs(shape):
    class Counts(ProcessWindowFunction):
        def process(self, key, context, elements):
            outputs = [(key, sum(e["v"] for e in elements)), (key, len(elements))]
            if shape == "generator":
                return (o for o in outputs)
            if shape == "tuple":
                return tuple(outputs)
            if shape == "iterator":
                return iter(outputs)
            return None if shape == "none" else outputs

    h = WindowOperatorHarness(TumblingEventTimeWindows.of(10), Counts(), key_field="k")
    h.process_element({"k": "a", "v": 2}, 1)
    h.process_element({"k": "a", "v": 5}, 3)
    h.process_watermark(9)
    assert h.output_with_timestamps() == (
        [] if shape == "none" else [(("a", 7), 9), (("a", 2), 9)]
    )


def test_negative_allowed_lateness_is_a_value_error():
    with pytest.raises(ValueError, match="The allowed lateness cannot be negative."):
        WindowOperatorHarness(
            TumblingEventTimeWindows.of(10), sum_of("v"), key_field="k", allowed_lateness=-1
        )
    with pytest.raises(ValueError, match="cannot be negative"):
        WindowOperatorHarness(
            TumblingEventTimeWindows.of(10), sum_of("v"), key_field="k",
            allowed_lateness=Time.seconds(-1),
        )


def test_merging_assigner_with_non_merging_trigger_is_unsupported():
    # Flink's WindowedStream.trigger(): "A merging window assigner cannot be used with a trigger
    # that does not support merging." DeltaTrigger (like every trigger not overriding canMerge)
    # cannot merge.
    with pytest.raises(UnsupportedOperationError, match="does not support merging"):
        WindowOperatorHarness(
            EventTimeSessionWindows.withGap(10), sum_of("v"), key_field="k",
            trigger=DeltaTrigger.of(1, lambda a, b: b.v - a.v),
        )

    class NoMerge(Trigger):
        def on_element(self, element, timestamp, window, ctx):
            return TriggerResult.CONTINUE

        def on_event_time(self, time, window, ctx):
            return TriggerResult.CONTINUE

        def on_processing_time(self, time, window, ctx):
            return TriggerResult.CONTINUE

    with pytest.raises(UnsupportedOperationError, match="does not support merging"):
        WindowOperatorHarness(
            ProcessingTimeSessionWindows.withGap(10), sum_of("v"), key_field="k",
            trigger=NoMerge(),
        )
    # a mergeable trigger is fine, also wrapped in PurgingTrigger
    WindowOperatorHarness(
        EventTimeSessionWindows.withGap(10), sum_of("v"), key_field="k",
        trigger=PurgingTrigger.of(EventTimeTrigger.create()),
    )


def test_per_window_state_in_merging_windows_is_unsupported():
    # Flink's WindowOperator.MergingWindowStateStore: "Per-window state is not allowed when
    # using merging windows." Global (per-key) state is allowed.
    class WindowStateUser(ProcessWindowFunction):
        def process(self, key, context, elements):
            context.global_state().get_state(ValueStateDescriptor("g")).update(1)
            context.window_state().get_state(ValueStateDescriptor("w")).update(1)
            return [key]

    h = WindowOperatorHarness(
        EventTimeSessionWindows.withGap(10), WindowStateUser(), key_field="k"
    )
    h.process_element({"k": "a"}, 1)
    with pytest.raises(
        UnsupportedOperationError,
        match="Per-window state is not allowed when using merging windows.",
    ):
        h.process_watermark(100)


def test_unsupported_operation_error_is_a_runtime_error():
    assert issubclass(UnsupportedOperationError, RuntimeError)


def test_function_of_the_wrong_kind_is_a_type_error():
    with pytest.raises(TypeError, match="window function"):
        WindowOperatorHarness(TumblingEventTimeWindows.of(10), 42, key_field="k")
    with pytest.raises(TypeError, match="pair"):
        WindowOperatorHarness(
            TumblingEventTimeWindows.of(10), (sum_of("v"), sum_of("v"), Wrap()), key_field="k"
        )
    with pytest.raises(TypeError, match="second item of a window function pair"):
        WindowOperatorHarness(
            TumblingEventTimeWindows.of(10), (sum_of("v"), sum_of("v")), key_field="k"
        )


def test_wrong_component_types_are_type_errors():
    with pytest.raises(TypeError, match="WindowAssigner"):
        WindowOperatorHarness("tumbling", sum_of("v"), key_field="k")
    with pytest.raises(TypeError, match="trigger must be a Trigger"):
        WindowOperatorHarness(
            TumblingEventTimeWindows.of(10), sum_of("v"), key_field="k", trigger="count"
        )
    with pytest.raises(TypeError, match="evictor must be an Evictor"):
        WindowOperatorHarness(
            TumblingEventTimeWindows.of(10), sum_of("v"), key_field="k", evictor=3
        )
