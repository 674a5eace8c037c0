"""``IntervalJoinOperator``: Flink's interval join of two keyed streams, per key
(``left.intervalJoin(right).between(lower, upper).process(ProcessJoinFunction)``).

It emits exactly the pairs of a key's elements with
``left.timestamp + lower <= right.timestamp <= left.timestamp + upper``, as Flink's Java
``IntervalJoinOperator`` does, step for step:

- Bounds: an exclusive lower bound is used as ``lower + 1``, an exclusive upper bound as
  ``upper - 1`` (``lower <= upper`` is required of the bounds as given).
- An element without a timestamp (``None``, or ``MIN_LONG`` as in Flink) fails with
  :class:`~flinkwin.errors.FlinkError` carrying Flink's message.
- An element is late when ``timestamp < watermark``: it goes to its side's late-data output
  tag if one is set, else it is dropped (counted in ``num_late_records_dropped``); it joins
  nothing and is not buffered.
- Otherwise it is added to its side's buffer (per key, one bucket per timestamp, elements in
  arrival order) and joined with every element of the other side's buffer whose bucket is in
  range. Each pair goes to the ``ProcessJoinFunction``; its outputs carry the pair's timestamp
  ``max(left, right)``.
- Cleanup: a left element registers an event-time timer at ``ts + upper`` when ``upper > 0``,
  else at ``ts``; a right element at ``ts - lower`` when ``lower < 0``, else at ``ts``. When the
  watermark passes the timer, the bucket the element went into is removed (Flink's formula:
  left ``timer - upper`` when ``upper > 0``, else ``timer``; right ``timer + lower`` when
  ``lower <= 0``, else ``timer``). Elements of one bucket share one timer.

Bucket order: Flink iterates the other side's buffer (a ``MapState``) in its state backend's
order. On RocksDB that is serialized-key order: ascending for non-negative timestamps. On the
heap backend it is a Java ``HashMap``'s: ascending only while the timestamps are below the map's
capacity, otherwise hash order (epoch milliseconds are), which also changes when a checkpoint
copies or a restore rebuilds the map, so it cannot be reproduced. Flink's own tests accept any
order. flinkwin always joins buckets in ascending timestamp order (RocksDB's order), elements
of a bucket in arrival order (as every backend), also across snapshots: the set of results and
each result's timestamp are Flink's; only the order of the results one element produces may
differ from a heap-backend run.

This is a two-input operator: ``process_element(value, timestamp, 0)`` is Flink's
``processElement1`` (left), ``input_index=1`` ``processElement2`` (right). The watermark given to
``advance_watermark`` is the operator's combined watermark, the minimum of both inputs' (the
graph combines them, as Flink's ``AbstractStreamOperator.processWatermark1/2`` do). Timestamp
arithmetic is Java long arithmetic under the ``overflow`` policy (:mod:`flinkwin.longs`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from typing import Any

from flinkwin.declared_keys import state_key
from flinkwin.errors import OPERATOR_ERRORS, FlinkError, user_function_error
from flinkwin.functions.base import CallableKeySelector, FieldKeySelector, KeySelector
from flinkwin.functions.internal import iterate_outputs
from flinkwin.functions.process_join import ProcessJoinContext
from flinkwin.keys import compares_by_value
from flinkwin.longs import WRAP, check_policy, to_long
from flinkwin.operator.emissions import OrderedEmissions
from flinkwin.operator.lifecycle import UserFunctionLifecycle
from flinkwin.operator.runtime_context import OperatorRuntimeContext, Subtask, TaskInfo
from flinkwin.operator.snapshots import StatePickler, formats
from flinkwin.operator.snapshots.restored_keys import restore_keys
from flinkwin.operator.timer_service import TimerQueue
from flinkwin.operator.window_operator import make_key_selector
from flinkwin.output_tag import OutputTag
from flinkwin.record import to_record
from flinkwin.state.backend import StateTables
from flinkwin.time import MAX_LONG, MIN_LONG, TimeLike, to_millis

#: Flink's message for an element without a timestamp, word for word.
NO_TIMESTAMP_MESSAGE = (
    "Long.MIN_VALUE timestamp: Elements used in interval stream joins need to have timestamps "
    "meaningful timestamps."
)
#: Flink's ``IntervalJoinOperator`` precondition message.
BOUNDS_MESSAGE = "lowerBound <= upperBound must be fulfilled"

CLEANUP_LEFT = "CLEANUP_LEFT"
CLEANUP_RIGHT = "CLEANUP_RIGHT"
_SNAPSHOT_MAGIC = formats.written(formats.INTERVAL_JOIN).encode()


def bound_millis(value: TimeLike, what: str) -> int:
    """A bound as Java long milliseconds (``Time``, ``Duration``, ``timedelta`` or int)."""
    ms = to_millis(value, what)
    if not MIN_LONG <= ms <= MAX_LONG:
        raise ValueError(f"{what} {ms} ms does not fit a Java long")
    return ms


def check_bounds(lower_bound: int, upper_bound: int) -> None:
    """Flink's precondition on the bounds as given: ``lower_bound <= upper_bound``."""
    if lower_bound > upper_bound:
        raise ValueError(
            f"{BOUNDS_MESSAGE} (lower bound {lower_bound} ms, upper bound {upper_bound} ms)"
        )


class JoinBuffer:
    """One input's buffer (Flink's ``LEFT_BUFFER``/``RIGHT_BUFFER`` map state): per key,
    timestamp buckets of elements in arrival order, kept with the key's sorted bucket
    timestamps for range lookups."""

    __slots__ = ("buckets", "size", "sorted_timestamps")

    def __init__(self) -> None:
        self.buckets: dict[Any, dict[int, list[Any]]] = {}
        self.sorted_timestamps: dict[Any, list[int]] = {}
        #: buffered elements over all keys
        self.size = 0

    def add(self, key: Any, timestamp: int, value: Any) -> None:
        buckets = self.buckets.get(key)
        if buckets is None:
            buckets = self.buckets[key] = {}
            self.sorted_timestamps[key] = []
        bucket = buckets.get(timestamp)
        if bucket is None:
            buckets[timestamp] = [value]
            insort(self.sorted_timestamps[key], timestamp)
        else:
            bucket.append(value)
        self.size += 1

    def buckets_between(self, key: Any, low: int, high: int) -> list[tuple[int, list[Any]]]:
        """``key``'s buckets with ``low <= timestamp <= high``, in ascending timestamp order."""
        timestamps = self.sorted_timestamps.get(key)
        if not timestamps or low > high:
            return []
        buckets = self.buckets[key]
        first, last = bisect_left(timestamps, low), bisect_right(timestamps, high)
        return [(ts, buckets[ts]) for ts in timestamps[first:last]]

    def remove(self, key: Any, timestamp: int) -> None:
        """Remove ``key``'s bucket at ``timestamp`` (no-op if there is none)."""
        buckets = self.buckets.get(key)
        if buckets is None or timestamp not in buckets:
            return
        self.size -= len(buckets.pop(timestamp))
        timestamps = self.sorted_timestamps[key]
        del timestamps[bisect_left(timestamps, timestamp)]
        if not buckets:
            del self.buckets[key]
            del self.sorted_timestamps[key]

    def timestamps(self, key: Any) -> list[int]:
        """``key``'s bucket timestamps, ascending (Flink's ``getLeftBuffer().keys()``)."""
        return list(self.sorted_timestamps.get(key, ()))

    def restore(self, buckets: dict[Any, dict[int, list[Any]]]) -> None:
        self.buckets = buckets
        self.sorted_timestamps = {key: sorted(b) for key, b in buckets.items()}
        self.size = sum(len(bucket) for b in buckets.values() for bucket in b.values())


class JoinContext(ProcessJoinContext):
    """Flink's ``IntervalJoinOperator.ContextImpl``: re-pointed at each pair."""

    __slots__ = ("_op", "left_timestamp", "result_timestamp", "right_timestamp")

    def __init__(self, op: IntervalJoinOperator) -> None:
        self._op = op
        self.left_timestamp = MIN_LONG
        self.right_timestamp = MIN_LONG
        self.result_timestamp = MIN_LONG

    def get_left_timestamp(self) -> int:
        return self.left_timestamp

    def get_right_timestamp(self) -> int:
        return self.right_timestamp

    def get_timestamp(self) -> int:
        return self.result_timestamp

    def output(self, output_tag: OutputTag, value: Any) -> None:
        if output_tag is None:
            raise ValueError("OutputTag must not be null")
        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"output() takes an OutputTag, got {type(output_tag).__name__}")
        self._op.emit_side(output_tag, value, self.result_timestamp)


class IntervalJoinOperator(UserFunctionLifecycle, OrderedEmissions):
    """Flink's ``IntervalJoinOperator`` for all keys of one operator instance (see module
    docstring). The arguments are Java's, in Java's order, then the two key selectors (field
    names, a ``KeySelector`` or a callable, as ``key_by`` takes them)."""

    def __init__(
        self,
        lower_bound: TimeLike,
        upper_bound: TimeLike,
        lower_bound_inclusive: bool,
        upper_bound_inclusive: bool,
        left_late_data_output_tag: OutputTag | None,
        right_late_data_output_tag: OutputTag | None,
        function: Any,
        left_key_selector: Any,
        right_key_selector: Any,
        *,
        task_info: TaskInfo | None = None,
        overflow: str = WRAP,
        state_pickler: StatePickler | None = None,
        subtask: Subtask | None = None,
        key_type: Any = None,
    ) -> None:
        lower = bound_millis(lower_bound, "lower bound")
        upper = bound_millis(upper_bound, "upper bound")
        check_bounds(lower, upper)
        for name, tag in (("left", left_late_data_output_tag),
                          ("right", right_late_data_output_tag)):
            if tag is not None and not isinstance(tag, OutputTag):
                raise TypeError(f"the {name} late-data output tag must be an OutputTag")
        process = getattr(function, "process_element", None)
        if function is None or isinstance(function, type) or not callable(process):
            raise TypeError(
                "an interval join's function must be a ProcessJoinFunction (an object with "
                f"process_element(left, right, ctx)), got {function!r}"
            )
        self.overflow = check_policy(overflow)
        # Move the bounds by +1/-1 when exclusive, so that only inclusive bounds are checked.
        self.lower_bound = lower if lower_bound_inclusive else self._long(lower + 1, "lower + 1")
        self.upper_bound = upper if upper_bound_inclusive else self._long(upper - 1, "upper - 1")
        self.left_late_data_output_tag = left_late_data_output_tag
        self.right_late_data_output_tag = right_late_data_output_tag
        self.function = function
        left_selector = make_key_selector(left_key_selector)
        right_selector = make_key_selector(right_key_selector)
        if left_selector is None or right_selector is None:
            raise TypeError("an interval join joins keyed streams: give both key selectors")
        self.key_selectors: tuple[KeySelector, KeySelector] = (left_selector, right_selector)
        #: keys compare by value (a declared ``key_type``, column keys on both inputs) or by
        #: their type too (see flinkwin.keys.compares_by_value)
        self.keys_by_value = (
            compares_by_value(None, key_type) if key_type is not None
            else all(compares_by_value(s, None) for s in self.key_selectors)
        )
        self.key_type = key_type
        #: Pickles and signs the user objects of snapshots (see flinkwin.operator.snapshots).
        self.state_pickler = state_pickler or StatePickler()

        self.current_watermark = MIN_LONG
        self.current_processing_time = MIN_LONG
        self.num_late_records_dropped = 0
        #: The key being processed: keyed state of the runtime context refers to it.
        self.current_key: Any = None
        self.subtask = subtask
        info = task_info or TaskInfo(task_name="Interval Join")
        self.runtime_context = (
            OperatorRuntimeContext(self, info) if subtask is None
            else subtask.runtime_context(self)
        )
        self._opened = False

        self.left_buffer = JoinBuffer()
        self.right_buffer = JoinBuffer()
        #: keyed state of the function (``get_runtime_context().get_state(...)``)
        self.function_state = StateTables()
        self.event_timers = TimerQueue()
        self._reset_emissions()
        self._context = JoinContext(self)

    def _long(self, value: int, what: str) -> int:
        return value if MIN_LONG <= value <= MAX_LONG else to_long(value, self.overflow, what)

    # --------------------------------------------------------------- lifecycle

    def _rich_functions(self) -> list[Any]:
        """The join function, and the key selectors that are user ``KeySelector``s (PyFlink
        opens those too)."""
        plain = (FieldKeySelector, CallableKeySelector)
        selectors = [s for s in self.key_selectors if type(s) not in plain]
        return [self.function, *dict.fromkeys(selectors)]


    # ------------------------------------------------------------------ inputs

    def input_key(self, value: Any, input_index: int) -> Any:
        """The key an element of input ``input_index`` (0 left, 1 right) is held under (a
        null key fails as in Flink)."""
        record = to_record(value)
        side = "left" if input_index == 0 else "right"
        return state_key(
            self.key_selectors[input_index].get_key(record), self.keys_by_value, record,
            f"{self.runtime_context.get_task_name()} ({side} input)", self.key_type,
        )

    def process_element(self, value: Any, timestamp: int | None, input_index: int = 0) -> None:
        """Flink's ``processElement1`` (``input_index`` 0, left) or ``processElement2`` (1,
        right) for ``value`` with event ``timestamp`` (see module docstring)."""
        if input_index not in (0, 1):
            raise ValueError(f"an interval join has inputs 0 and 1, got input {input_index!r}")
        if not self._opened:
            self.open()
        is_left = input_index == 0
        record = to_record(value)
        key = self.input_key(record, input_index)
        if timestamp is None or timestamp == MIN_LONG:
            raise FlinkError(NO_TIMESTAMP_MESSAGE)
        ts = int(timestamp)
        if not MIN_LONG <= ts <= MAX_LONG:
            raise ValueError(f"timestamp {ts} does not fit a Java long")
        if self._is_late(ts):
            tag = self.left_late_data_output_tag if is_left else self.right_late_data_output_tag
            if tag is not None:
                self.emit_side(tag, record, ts)
            else:
                self.num_late_records_dropped += 1
            return
        self.current_key = key
        if is_left:
            ours, other = self.left_buffer, self.right_buffer
            relative_lower, relative_upper = self.lower_bound, self.upper_bound
        else:
            ours, other = self.right_buffer, self.left_buffer
            relative_lower = self._long(-self.upper_bound, "-upperBound")
            relative_upper = self._long(-self.lower_bound, "-lowerBound")
        ours.add(key, ts, record)
        low = self._long(ts + relative_lower, f"timestamp {ts} + {relative_lower}")
        high = self._long(ts + relative_upper, f"timestamp {ts} + {relative_upper}")
        for bucket_ts, elements in other.buckets_between(key, low, high):
            for element in elements:
                if is_left:
                    self._collect(key, record, element, ts, bucket_ts)
                else:
                    self._collect(key, element, record, bucket_ts, ts)
        cleanup = high if relative_upper > 0 else ts
        self.event_timers.register(cleanup, key, CLEANUP_LEFT if is_left else CLEANUP_RIGHT)

    def _is_late(self, timestamp: int) -> bool:
        watermark = self.current_watermark
        return watermark != MIN_LONG and timestamp < watermark

    def _collect(self, key: Any, left: Any, right: Any, left_ts: int, right_ts: int) -> None:
        result_ts = max(left_ts, right_ts)
        ctx = self._context
        ctx.left_timestamp, ctx.right_timestamp, ctx.result_timestamp = left_ts, right_ts, result_ts
        fn = self.function
        try:
            outputs = iterate_outputs(
                fn.process_element(left, right, ctx), f"{type(fn).__name__}.process_element"
            )
            for out in outputs:
                if type(out) is tuple and len(out) == 2 and isinstance(out[0], OutputTag):
                    self.emit_side(out[0], out[1], result_ts)
                else:
                    self.emit_main(out, result_ts)
        except OPERATOR_ERRORS:
            raise
        except Exception as exc:
            raise user_function_error(exc, key, None) from exc

    def advance_watermark(self, watermark: int) -> None:
        """Advance event time to the combined watermark; remove the buckets whose cleanup
        timers are ``<= watermark``. A watermark not above the current one is ignored."""
        watermark = int(watermark)
        if watermark <= self.current_watermark:
            return
        if not self._opened:
            self.open()
        self.current_watermark = watermark
        while (timer := self.event_timers.pop_due(watermark)) is not None:
            self._on_event_time(*timer)

    def _on_event_time(self, timer_ts: int, key: Any, namespace: str) -> None:
        if namespace == CLEANUP_LEFT:
            upper = self.upper_bound
            bucket = timer_ts if upper <= 0 else self._long(timer_ts - upper, "timer - upper")
            self.left_buffer.remove(key, bucket)
        elif namespace == CLEANUP_RIGHT:
            lower = self.lower_bound
            bucket = self._long(timer_ts + lower, "timer + lower") if lower <= 0 else timer_ts
            self.right_buffer.remove(key, bucket)
        else:
            raise RuntimeError(f"Invalid namespace {namespace}")

    def advance_processing_time(self, time: int) -> None:
        """Set processing time (the join has no processing-time timers)."""
        self.current_processing_time = int(time)
        if not self._opened:
            self.open()

    def next_event_time_timer(self) -> int | None:
        return self.event_timers.peek_timestamp()

    def next_processing_time_timer(self) -> int | None:
        return None

    # ------------------------------------------------------------------- state

    def state_size(self) -> tuple[int, int]:
        """(keys, elements): the distinct keys with buffered elements, and the buffered
        elements of both inputs."""
        keys = self.left_buffer.buckets.keys() | self.right_buffer.buckets.keys()
        return len(keys), self.left_buffer.size + self.right_buffer.size

    def holds_nothing(self) -> bool:
        """True when no element is buffered, no cleanup timer is pending and the function
        keeps no keyed state."""
        return not (
            self.left_buffer.buckets
            or self.right_buffer.buckets
            or len(self.event_timers)
            or self.function_state.num_entries()
        )

    def snapshot(self) -> bytes:
        """Both buffers, the cleanup timers, the function's keyed state and the clocks, as
        bytes signed by the state pickler."""
        state = {
            "bounds": (self.lower_bound, self.upper_bound),
            "watermark": self.current_watermark,
            "processing_time": self.current_processing_time,
            "dropped": self.num_late_records_dropped,
            "left": self.left_buffer.buckets,
            "right": self.right_buffer.buckets,
            "timers": self.event_timers.buckets(),
            "function_state": self.function_state.tables,
        }
        return _SNAPSHOT_MAGIC + self.state_pickler.dump(state)

    def restore(self, data: bytes) -> None:
        """Replace this operator's state with a ``snapshot()`` of an interval join with the
        same (effective) bounds."""
        if not data.startswith(_SNAPSHOT_MAGIC):
            raise ValueError("not a flinkwin interval join snapshot (or of another format)")
        state = self.state_pickler.load(data[len(_SNAPSHOT_MAGIC):], "interval join snapshot")
        bounds = (self.lower_bound, self.upper_bound)
        if tuple(state["bounds"]) != bounds:
            raise ValueError(
                "the interval join snapshot was taken with bounds (inclusive) "
                f"[{state['bounds'][0]}, {state['bounds'][1]}] ms, this join has "
                f"[{bounds[0]}, {bounds[1]}] ms: its cleanup timers would remove the wrong "
                "elements; start from a new checkpoint location to change the bounds"
            )
        self.current_watermark = state["watermark"]
        self.current_processing_time = state["processing_time"]
        self.num_late_records_dropped = state["dropped"]
        tables = state["function_state"]
        stored = list(
            {**state["left"], **state["right"]}.keys()
            | {slot[0] for _, slots in state["timers"] for slot in slots}
            | {slot[0] for table in tables.values() for slot in table}
        )
        key = dict(zip(stored, restore_keys(
            stored, self.keys_by_value, self.key_type, self.runtime_context.get_task_name()
        )))
        self.left_buffer.restore({key[k]: b for k, b in state["left"].items()})
        self.right_buffer.restore({key[k]: b for k, b in state["right"].items()})
        self.event_timers = TimerQueue()
        self.event_timers.restore_buckets(
            [(ts, (key[slot[0]], *slot[1:])) for ts, slots in state["timers"] for slot in slots]
        )
        self.function_state = StateTables()
        self.function_state.tables = {
            name: {(key[k], ns): v for (k, ns), v in table.items()}
            for name, table in tables.items()
        }

    def describe(self) -> dict[str, str]:
        """A summary of the operator's configuration (used by ``explain()``)."""
        return {
            "operator": "interval join",
            "bounds_ms": f"[{self.lower_bound}, {self.upper_bound}] (inclusive)",
            "function": type(self.function).__name__,
            "time": "event time",
        }


__all__ = [
    "BOUNDS_MESSAGE",
    "NO_TIMESTAMP_MESSAGE",
    "IntervalJoinOperator",
    "JoinBuffer",
    "bound_millis",
    "check_bounds",
]
