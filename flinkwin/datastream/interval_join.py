"""``KeyedStream.intervalJoin``'s builders, Flink's ``KeyedStream.IntervalJoin`` and
``KeyedStream.IntervalJoined``:

``left.interval_join(right).between(lower, upper)`` joins the elements of one key with
``left.timestamp + lower <= right.timestamp <= left.timestamp + upper`` (event time only);
``.lower_bound_exclusive()``/``.upper_bound_exclusive()`` exclude a bound,
``.side_output_left_late_data(tag)``/``.side_output_right_late_data(tag)`` send late elements
of a side to a side output, and ``.process(ProcessJoinFunction)`` completes the join. Java's
camelCase names work too. The checks and messages are Flink's: bounds must be given, processing
time is refused at ``between``, and ``lower <= upper`` and the two streams' key types (when both
are known: key columns, a declared ``key_type``) are checked at ``process`` (where Flink builds
the operator). See :mod:`flinkwin.operator.interval_join_operator` for the semantics.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flinkwin.datastream.cogrouped_streams import keyed_stream_key_type
from flinkwin.errors import UnsupportedOperationError, UnsupportedTimeCharacteristicError
from flinkwin.operator.interval_join_operator import (
    IntervalJoinOperator,
    bound_millis,
    check_bounds,
)
from flinkwin.output_tag import OutputTag
from flinkwin.time import TimeLike
from flinkwin.types import declared_output


@dataclass(frozen=True)
class IntervalJoinSpec:
    """Everything ``IntervalJoined.process`` was given: what the left stream's
    ``_interval_join`` compiles. Bounds are the milliseconds given to ``between`` (the operator
    moves an exclusive bound by one)."""

    #: the right (other) keyed stream; the left one is the stream ``_interval_join`` is called on
    right: Any
    lower_bound: int
    upper_bound: int
    lower_bound_inclusive: bool
    upper_bound_inclusive: bool
    left_late_data_output_tag: OutputTag | None
    right_late_data_output_tag: OutputTag | None
    #: the ProcessJoinFunction
    function: Any
    output_schema: Any = None
    output_type: Any = None

    def create_operator(
        self, left_key_selector: Any, right_key_selector: Any, function: Any = None,
        **options: Any,
    ) -> IntervalJoinOperator:
        """The operator of this join, keyed by the given selectors, running ``function`` (a copy
        of the spec's, e.g. a subtask's; default: the spec's own); ``options`` are the operator's
        keyword arguments (``task_info``, ``overflow``, ``state_pickler``, ``subtask``)."""
        return IntervalJoinOperator(
            self.lower_bound, self.upper_bound, self.lower_bound_inclusive,
            self.upper_bound_inclusive, self.left_late_data_output_tag,
            self.right_late_data_output_tag, self.function if function is None else function,
            left_key_selector, right_key_selector, **options,
        )


def _check_join_function(function: Any) -> None:
    if function is None:
        raise TypeError("process() needs a ProcessJoinFunction, got None")
    process = getattr(function, "process_element", None)
    if isinstance(function, type) or not callable(process):
        raise TypeError(
            "an interval join's function must be a ProcessJoinFunction (an object with "
            f"process_element(left, right, ctx)), got {function!r}"
        )


class IntervalJoin:
    """Flink's ``KeyedStream.IntervalJoin``: two keyed streams waiting for ``between``."""

    def __init__(self, left: Any, right: Any) -> None:
        # inherent cycle: KeyedStream.interval_join builds this class
        from flinkwin.datastream.keyed_stream import KeyedStream

        for name, stream in (("left", left), ("right", right)):
            if not isinstance(stream, KeyedStream):
                raise TypeError(
                    f"an interval join joins two keyed streams; the {name} one is a "
                    f"{type(stream).__name__} (key_by it first)"
                )
        self._left = left
        self._right = right
        self._event_time = True

    def in_event_time(self) -> IntervalJoin:
        """Join in event time (the default and the only time an interval join supports)."""
        self._event_time = True
        return self

    def in_processing_time(self) -> IntervalJoin:
        """Ask for processing time: ``between`` then refuses, as Flink does."""
        self._event_time = False
        return self

    def between(self, lower_bound: TimeLike, upper_bound: TimeLike) -> IntervalJoined:
        """Join ``left.timestamp + lower_bound <= right.timestamp <= left.timestamp +
        upper_bound`` (both bounds inclusive; ``Time``, ``Duration``, ``timedelta`` or int
        milliseconds)."""
        if not self._event_time:
            raise UnsupportedTimeCharacteristicError(
                "Time-bounded stream joins are only supported in event time"
            )
        if lower_bound is None:
            raise TypeError("A lower bound needs to be provided for a time-bounded join")
        if upper_bound is None:
            raise TypeError("An upper bound needs to be provided for a time-bounded join")
        return IntervalJoined(
            self._left, self._right, bound_millis(lower_bound, "lower bound"),
            bound_millis(upper_bound, "upper bound"), True, True,
        )

    inEventTime = in_event_time  # noqa: N815 (Java names)
    inProcessingTime = in_processing_time  # noqa: N815


class IntervalJoined:
    """Flink's ``KeyedStream.IntervalJoined``: the two streams and their bounds, waiting for
    ``process``."""

    def __init__(
        self,
        left: Any,
        right: Any,
        lower_bound: int,
        upper_bound: int,
        lower_bound_inclusive: bool,
        upper_bound_inclusive: bool,
    ) -> None:
        self._left = left
        self._right = right
        self._lower_bound = lower_bound
        self._upper_bound = upper_bound
        self._lower_bound_inclusive = lower_bound_inclusive
        self._upper_bound_inclusive = upper_bound_inclusive
        self._left_late_tag: OutputTag | None = None
        self._right_late_tag: OutputTag | None = None

    def upper_bound_exclusive(self) -> IntervalJoined:
        """Exclude the upper bound."""
        self._upper_bound_inclusive = False
        return self

    def lower_bound_exclusive(self) -> IntervalJoined:
        """Exclude the lower bound."""
        self._lower_bound_inclusive = False
        return self

    def side_output_left_late_data(self, output_tag: OutputTag) -> IntervalJoined:
        """Send late left elements (``timestamp < watermark``) to the side output
        ``output_tag`` instead of dropping them."""
        self._left_late_tag = _tag(output_tag, "sideOutputLeftLateData")
        return self

    def side_output_right_late_data(self, output_tag: OutputTag) -> IntervalJoined:
        """Send late right elements (``timestamp < watermark``) to the side output
        ``output_tag`` instead of dropping them."""
        self._right_late_tag = _tag(output_tag, "sideOutputRightLateData")
        return self

    def process(
        self, process_join_function: Any, output_type: Any = None, *, output_schema: Any = None
    ) -> Any:
        """Complete the join with ``process_join_function`` (a ``ProcessJoinFunction``), called
        for each joined pair; ``output_schema`` (or PyFlink's ``output_type``) declares its
        outputs' type."""
        _check_join_function(process_join_function)
        declared_output(output_type, output_schema)  # one of them at most
        check_bounds(self._lower_bound, self._upper_bound)
        spec = IntervalJoinSpec(
            right=self._right,
            lower_bound=self._lower_bound,
            upper_bound=self._upper_bound,
            lower_bound_inclusive=self._lower_bound_inclusive,
            upper_bound_inclusive=self._upper_bound_inclusive,
            left_late_data_output_tag=self._left_late_tag,
            right_late_data_output_tag=self._right_late_tag,
            function=process_join_function,
            output_schema=output_schema,
            output_type=output_type,
        )
        return self._left._interval_join(spec)

    upperBoundExclusive = upper_bound_exclusive  # noqa: N815 (Java names)
    lowerBoundExclusive = lower_bound_exclusive  # noqa: N815
    sideOutputLeftLateData = side_output_left_late_data  # noqa: N815
    sideOutputRightLateData = side_output_right_late_data  # noqa: N815


def check_key_types(left: Any, right: Any) -> None:
    """Refuse two keyed streams whose key types are known and differ, as Flink's
    ``ConnectedStreams`` does when the join is built (Python's ``==`` would pair the long
    ``1`` with the double ``1.0``)."""
    first, second = keyed_stream_key_type(left), keyed_stream_key_type(right)
    if first.differs(second):
        raise UnsupportedOperationError(
            f"Key types if input KeyedStreams don't match: {first} and {second}."
        )


def _tag(output_tag: Any, method: str) -> OutputTag:
    if not isinstance(output_tag, OutputTag):
        raise TypeError(f"{method} takes an OutputTag, got {output_tag!r}")
    return output_tag


__all__ = ["IntervalJoin", "IntervalJoinSpec", "IntervalJoined", "check_key_types"]
