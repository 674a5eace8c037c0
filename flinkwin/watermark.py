"""``WatermarkStrategy``: where event timestamps come from and how far the watermark trails them.

The watermark is Flink's ``BoundedOutOfOrdernessWatermarks``:

    watermark = max(event timestamp seen so far) - out_of_orderness - 1

(``forMonotonousTimestamps()`` is an out-of-orderness of zero: ``max - 1``), so an element at
``t`` closes the windows whose ``max_timestamp`` is at most ``t - out_of_orderness - 1``.
``noWatermarks()`` is Flink's ``NoWatermarksGenerator``: the watermark stays ``MIN_LONG`` until
the end of bounded input (``MAX_LONG``, which Flink forwards whatever the strategy), so event-time
windows and timers fire only then. On a streaming DataFrame it is what a Flink job without
watermarks is: processing-time windows and timers work, elements keep their timestamps, and the
watermark stays ``MIN_LONG``; a window or graph that needs event time is refused there
(:data:`NO_WATERMARKS_ON_A_STREAM`), as it would never fire while its state grew.
:class:`BoundedOutOfOrdernessWatermarks` is that generator for the core; on Spark the compiler
makes Spark's own watermark, computed once per micro-batch from the data of the previous
batches, exactly this value (see ``docs/spark-semantics.md``). The timestamp comes from a
column of the input DataFrame: a Spark ``TIMESTAMP``/``TIMESTAMP_NTZ`` or an integral column of
epoch milliseconds (see ``docs/spark-semantics.md``), or a
:class:`TimestampAssigner` (PyFlink's form), which flinkwin calls once per element in a
vectorized stage before the window's shuffle (see :mod:`flinkwin.spark.elements`).
"""

from __future__ import annotations

import copy
from typing import Any

from flinkwin.time import MIN_LONG, TimeLike, to_millis
from flinkwin.timestamps import TimestampAssigner

#: Why an event-time window or graph on a streaming DataFrame under ``noWatermarks()`` is refused.
NO_WATERMARKS_ON_A_STREAM = (
    "WatermarkStrategy.no_watermarks() on a streaming DataFrame with event-time windows or "
    "timers: the watermark stays at Long.MIN_VALUE for ever, so (as in Flink on an unbounded "
    "source) no event-time window or timer would ever fire while their state grew. Use "
    "for_bounded_out_of_orderness(...) or for_monotonous_timestamps(), or processing-time "
    "windows and timers (which no_watermarks() leaves working); on a static DataFrame "
    "no_watermarks() works with event time too (windows fire at the end of input)"
)


class BoundedOutOfOrdernessWatermarks:
    """Flink's ``BoundedOutOfOrdernessWatermarks`` generator: tracks the maximum timestamp and
    emits ``max - out_of_orderness - 1`` (``MIN_LONG`` before the first event)."""

    def __init__(self, out_of_orderness_ms: int) -> None:
        if out_of_orderness_ms < 0:
            raise ValueError("maxOutOfOrderness cannot be negative")
        self.out_of_orderness_ms = int(out_of_orderness_ms)
        # as Flink: start so that the lowest watermark is Long.MIN_VALUE
        self.max_timestamp = MIN_LONG + self.out_of_orderness_ms + 1

    def on_event(self, timestamp: int) -> None:
        self.max_timestamp = max(self.max_timestamp, int(timestamp))

    def current_watermark(self) -> int:
        """The watermark ``onPeriodicEmit`` would emit now."""
        return self.max_timestamp - self.out_of_orderness_ms - 1

    onEvent = on_event  # noqa: N815
    currentWatermark = current_watermark  # noqa: N815


class NoWatermarksGenerator:
    """Flink's ``NoWatermarksGenerator``: emits no watermark (``MIN_LONG`` throughout)."""

    def on_event(self, timestamp: int) -> None:
        """Events do not move the watermark."""

    def current_watermark(self) -> int:
        return MIN_LONG

    onEvent = on_event  # noqa: N815
    currentWatermark = current_watermark  # noqa: N815


class _CallableTimestampAssigner(TimestampAssigner):
    """A plain function ``fn(value, record_timestamp)`` as a TimestampAssigner."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return self.fn(value, record_timestamp)  # type: ignore[no-any-return]

    def __repr__(self) -> str:
        return f"TimestampAssigner({getattr(self.fn, '__name__', self.fn)!r})"


class WatermarkStrategy:
    """Out-of-orderness bound plus the timestamp column (immutable; builders return copies)."""

    def __init__(self, out_of_orderness_ms: int, timestamp_column: Any = None) -> None:
        if out_of_orderness_ms < 0:
            raise ValueError("the out-of-orderness bound cannot be negative")
        self.out_of_orderness_ms = int(out_of_orderness_ms)
        self.timestamp_column = timestamp_column
        #: Where rows with a null timestamp go (None: the query fails); see withNullTimestamps.
        self.null_timestamp_tag: Any = None
        #: See withIdleness (None: an input never counts as idle).
        self.idle_timeout_ms: int | None = None
        #: Spark's watermark was applied where the timestamps were assigned, before a
        #: map/flat_map/filter (see flinkwin.spark.carried_time); set by flinkwin only.
        self.watermarked_upstream = False
        #: False for noWatermarks(): the watermark stays MIN_LONG until the end of input.
        self.emits_watermarks = True

    @staticmethod
    def forBoundedOutOfOrderness(max_out_of_orderness: TimeLike) -> WatermarkStrategy:  # noqa: N802
        """Watermark = max event timestamp - ``max_out_of_orderness`` - 1 ms (Flink's)."""
        return WatermarkStrategy(to_millis(max_out_of_orderness, "max out-of-orderness"))

    @staticmethod
    def forMonotonousTimestamps() -> WatermarkStrategy:  # noqa: N802
        """Timestamps never decrease: watermark = max event timestamp - 1 ms (Flink's)."""
        return WatermarkStrategy(0)

    @staticmethod
    def noWatermarks() -> WatermarkStrategy:  # noqa: N802
        """No watermarks (Flink's ``NoWatermarksGenerator``): elements keep their timestamps,
        the watermark stays ``MIN_LONG`` until the end of bounded input. On a static DataFrame
        event-time windows and timers fire at the end of input; a streaming DataFrame refuses
        it (they would never fire: see ``docs/spark-semantics.md``)."""
        strategy = WatermarkStrategy(0)
        strategy.emits_watermarks = False
        return strategy

    def create_watermark_generator(
        self,
    ) -> BoundedOutOfOrdernessWatermarks | NoWatermarksGenerator:
        """A fresh generator for this strategy (Flink's ``createWatermarkGenerator``)."""
        if not self.emits_watermarks:
            return NoWatermarksGenerator()
        return BoundedOutOfOrdernessWatermarks(self.out_of_orderness_ms)

    createWatermarkGenerator = create_watermark_generator  # noqa: N815

    def withTimestampAssigner(self, assigner: Any) -> WatermarkStrategy:  # noqa: N802
        """Where event timestamps come from: a column name or a ``pyspark.sql.Column`` (a Spark
        timestamp, or integral epoch milliseconds; computed by Spark, the fast path), or
        PyFlink's :class:`TimestampAssigner` (or a function ``fn(value, record_timestamp)``)
        returning epoch milliseconds, called once per element before the window."""
        if isinstance(assigner, (TimestampAssigner, str)):
            resolved: Any = assigner
        else:
            from pyspark.sql import Column

            if isinstance(assigner, Column):
                resolved = assigner
            elif callable(assigner) and not isinstance(assigner, type):
                resolved = _CallableTimestampAssigner(assigner)
            else:
                raise TypeError(
                    "withTimestampAssigner takes a column name, a pyspark Column or a "
                    f"TimestampAssigner, got {type(assigner).__name__}"
                )
        strategy = copy.copy(self)
        strategy.timestamp_column = resolved
        return strategy

    def withNullTimestamps(self, policy: Any) -> WatermarkStrategy:  # noqa: N802
        """What happens to a row whose timestamp column is null (flinkwin's addition; Flink
        records always carry a timestamp). ``"fail"`` (the default): the query fails with an
        error showing the row. An ``OutputTag``: such rows leave the window stage unchanged
        on that side output (``getSideOutput(tag)``, input columns), and reach no window."""
        from flinkwin.output_tag import OutputTag

        if policy != "fail" and not isinstance(policy, OutputTag):
            raise TypeError(
                f"withNullTimestamps takes \"fail\" or an OutputTag, got {policy!r}"
            )
        strategy = copy.copy(self)
        strategy.null_timestamp_tag = None if policy == "fail" else policy
        return strategy

    def withIdleness(self, timeout: TimeLike) -> WatermarkStrategy:  # noqa: N802
        """Flink's idle inputs. On an input of a stream graph (``union``, a join, an interval
        join): once the input has had no element for more than ``timeout`` of processing
        time (micro-batch times, compared as Flink's ``IdlenessTimer`` does; a timeout of zero
        or less is refused, as in Flink), it stops holding back the watermark of the
        operators reading it, until its next element (as Flink's ``StatusWatermarkValve``
        ignores an idle input; a watermark never goes back). With no input active the
        watermark stays. On a single window pipeline it changes nothing: Spark's watermark
        follows the maximum event time over all partitions, so no partition holds it back."""
        timeout_ms = to_millis(timeout, "idleness timeout")
        if timeout_ms <= 0:  # Flink's checkArgument, word for word
            raise ValueError("idleTimeout must be greater than zero")
        strategy = copy.copy(self)
        strategy.idle_timeout_ms = timeout_ms
        return strategy

    def withWatermarkAlignment(  # noqa: N802
        self, watermark_group: str, max_allowed_watermark_drift: TimeLike,
        update_interval: TimeLike | None = None,
    ) -> WatermarkStrategy:
        """Refused: Flink's alignment pauses reading a source split that runs ahead of its
        group's watermark, which changes which elements arrive late; Spark reads each
        micro-batch's offsets whole and cannot pause a partition."""
        from flinkwin.errors import UnsupportedOperationError

        raise UnsupportedOperationError(
            "WatermarkStrategy.with_watermark_alignment is not supported: Flink pauses a "
            "source split that runs ahead of the group's watermark (which changes what arrives "
            "late), and Spark reads each micro-batch's offsets whole. Remove the call, and "
            "bound how far a source can run ahead with the source's own rate limit "
            "(e.g. maxOffsetsPerTrigger) and the out-of-orderness bound"
        )

    @staticmethod
    def forGenerator(generator_supplier: Any) -> WatermarkStrategy:  # noqa: N802
        """Refused: a custom ``WatermarkGenerator`` (Java's ``forGenerator``) would need
        flinkwin to run user code for the watermark, which Spark computes (the maximum event
        time seen, less the bound, once per micro-batch)."""
        from flinkwin.errors import UnsupportedOperationError

        raise UnsupportedOperationError(
            "WatermarkStrategy.for_generator (a custom WatermarkGenerator) is not supported: "
            "Spark computes the watermark from the maximum event time it has seen, once per "
            "micro-batch. Use for_bounded_out_of_orderness(bound) (a periodic generator that "
            "trails the maximum timestamp, the common case) or for_monotonous_timestamps(); a "
            "punctuated generator's watermark cannot be reproduced (docs/spark-semantics.md)"
        )

    for_generator = forGenerator
    for_bounded_out_of_orderness = forBoundedOutOfOrderness
    no_watermarks = noWatermarks
    with_watermark_alignment = withWatermarkAlignment
    for_monotonous_timestamps = forMonotonousTimestamps
    with_timestamp_assigner = withTimestampAssigner
    with_idleness = withIdleness
    with_null_timestamps = withNullTimestamps

    def __repr__(self) -> str:
        column = self.timestamp_column
        nulls = "" if self.null_timestamp_tag is None else f", nulls to {self.null_timestamp_tag!r}"
        bound = (
            f"out_of_orderness={self.out_of_orderness_ms} ms" if self.emits_watermarks
            else "no watermarks"
        )
        return (
            f"WatermarkStrategy({bound}, "
            f"timestamp_column={column!r}{nulls})"
        )


__all__ = [
    "BoundedOutOfOrdernessWatermarks", "NoWatermarksGenerator", "TimestampAssigner",
    "WatermarkStrategy",
]
