"""``StreamOperator``: what every operator of a stream graph offers the graph that runs it.

Flink's ``OneInputStreamOperator``/``TwoInputStreamOperator`` in Python form. A stateful stage
runs a small graph of operators (:mod:`flinkwin.operator.graph`) per key group; the graph pushes
each element into its operator with ``process_element(value, timestamp, input_index)``
(``input_index`` is 0 for one-input operators, 0 or 1 for ``processElement1``/``2`` of a
two-input operator), advances the clocks, and takes the operator's results with
``drain_output``/``drain_side_outputs`` after each step, handing them to the operators
downstream before they see the watermark that produced them (Flink's order: an operator emits
what a watermark fires before it forwards the watermark).

The :class:`~flinkwin.operator.WindowOperator` and the operators written for graphs
(:class:`~flinkwin.operator.keyed_process_operator.KeyedProcessOperator`,
:class:`~flinkwin.operator.interval_join_operator.IntervalJoinOperator`) all implement it.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from flinkwin.output_tag import OutputTag


@runtime_checkable
class StreamOperator(Protocol):
    """One operator of a stream graph (see module docstring).

    Clocks start at ``MIN_LONG`` (``flinkwin.time``). An operator keys its elements itself (by
    its key selector), so one instance serves every key of a key group.
    """

    #: the last watermark advanced to (``MIN_LONG``: none yet)
    current_watermark: int
    #: the last processing time advanced to (``MIN_LONG``: none yet)
    current_processing_time: int
    #: elements dropped as late (not sent to a side output) since the operator was built
    num_late_records_dropped: int

    def open(self) -> None:
        """Open the user functions (called once, before the first element or timer)."""

    def close(self) -> None:
        """Close the user functions (end of input or of the worker)."""

    def process_element(self, value: Any, timestamp: int | None, input_index: int = 0) -> None:
        """Process one element of input ``input_index`` with event ``timestamp`` (``None``:
        no timestamp)."""

    def advance_watermark(self, watermark: int) -> None:
        """Advance event time to ``watermark``, firing every event-time timer ``<=`` it in
        Flink's order; a watermark not above the current one is ignored."""

    def advance_processing_time(self, time: int) -> None:
        """Set processing time, firing every processing-time timer ``<= time``."""

    def next_event_time_timer(self) -> int | None:
        """The earliest pending event-time timer, or None."""

    def next_processing_time_timer(self) -> int | None:
        """The earliest pending processing-time timer, or None."""

    def drain_output(self) -> list[tuple[Any, int | None]]:
        """The main-output ``(value, timestamp)`` pairs emitted since the last drain, in order
        (``None``: the result carries no timestamp)."""

    def drain_side_outputs(self) -> dict[OutputTag, list[tuple[Any, int | None]]]:
        """Per side-output tag, the ``(value, timestamp)`` pairs emitted since the last drain
        (late data included), in order."""

    def state_size(self) -> tuple[int, int]:
        """(keys, entries) held: the distinct keys with state, and the state entries (windows,
        buffered elements...)."""

    def holds_nothing(self) -> bool:
        """True when nothing but the clocks is held (no state, no timers)."""

    def snapshot(self) -> bytes:
        """All state (keyed state, buffers, timers, clocks) as bytes ``restore`` takes back."""

    def restore(self, data: bytes) -> None:
        """Replace this operator's state with a ``snapshot()``."""


__all__ = ["StreamOperator"]
