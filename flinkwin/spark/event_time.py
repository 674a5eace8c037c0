"""Event time on Spark: the column a stage reads it from, range-checked, and Spark's watermark.

The watermark sits on a helper column ``ts + S`` (see :mod:`flinkwin.spark.watermarks`: ``S``
is 0 unless the stream declares ``times_before_1970``) with delay ``D + 1`` ms, so Spark's
watermark is Flink's ``BoundedOutOfOrdernessWatermarks`` value ``max(ts) - D - 1`` shifted by
``S`` (``ts`` in Flink's milliseconds: Spark floors the helper's microseconds to milliseconds
before taking the maximum). Once
Spark has taken the watermark's statistics, the helper column is replaced by nulls that keep
its watermark metadata: Spark requires that metadata on an input column of an
``EventTimeTimeout`` stage, and drops input rows whose such column is at or below the previous
watermark, which a null never is. So Spark drops no row at all; lateness is judged by the Flink
operator. A timestamp column travels once, as epoch microseconds (see
:class:`~flinkwin.spark.inputs.EventTime`); the workers rebuild the user's column from them.
Epoch-millisecond columns are used as they are.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import IntegralType, TimestampNTZType, TimestampType

from flinkwin.timestamps import TimestampAssigner
from flinkwin.watermark import WatermarkStrategy

from .elements import TIMESTAMP_COLUMN
from .inputs import EventTime
from .pipeline import PipelineError, WindowPipeline
from .timestamps import described_row, quoted
from .watermarks import MAX_EVENT_TIME_MS, WATERMARK_SHIFT_MS, watermark_delay_ms

_TS, _WM = "_fw_ts", "_fw_wm"


def _event_time(df: DataFrame, strategy: WatermarkStrategy) -> tuple[EventTime, Column | None]:
    """How event time is shipped, and the helper column's expression (None: a user column of
    epoch milliseconds is used as it is)."""
    spec = strategy.timestamp_column
    if isinstance(spec, TimestampAssigner):
        return EventTime(TIMESTAMP_COLUMN, "ms"), None
    if spec is None:
        raise PipelineError(
            "the WatermarkStrategy has no timestamp assigner, and the elements carry no "
            "timestamps to keep (Flink's default assigner keeps a record's timestamp; the rows "
            "of a DataFrame have none until a strategy with an assigner stamps them): use "
            ".withTimestampAssigner(\"<column>\")"
        )
    if isinstance(spec, str):
        if spec not in df.columns:
            raise PipelineError(
                f"timestamp column {spec!r} is not a column of the input ({df.columns})"
            )
        column = F.col(spec)
    else:
        column = spec
    dtype = df.select(column.alias("ts")).schema["ts"].dataType
    if isinstance(dtype, (TimestampType, TimestampNTZType)):
        # an instant, or a wall time read as UTC (unix_micros of a TIMESTAMP_NTZ is exact)
        rebuilt = spec if isinstance(spec, str) else None
        return EventTime(_TS, "us", rebuilt), F.unix_micros(column)
    if isinstance(dtype, IntegralType):
        if isinstance(spec, str) and dtype.typeName() == "long":
            return EventTime(spec, "ms"), None
        return EventTime(_TS, "ms"), column.cast("long")
    raise PipelineError(
        f"timestamp column {spec!r} has type {dtype.simpleString()}; it must be a timestamp "
        "or integral epoch milliseconds"
    )


def _in_event_time_range(
    pipeline: WindowPipeline, strategy: WatermarkStrategy, event_time: EventTime, column: Column
) -> Column:
    """``column`` (event time in ``event_time.unit``), failing on a row whose timestamp is
    outside ``[-MAX_EVENT_TIME_MS, MAX_EVENT_TIME_MS]`` (see :mod:`flinkwin.spark.watermarks`),
    with the column, the value and the range in the message. A null passes (it is handled
    later: an error or the null-timestamp side output)."""
    per_ms = 1 if event_time.unit == "ms" else 1000
    low, high = -MAX_EVENT_TIME_MS * per_ms, MAX_EVENT_TIME_MS * per_ms + per_ms - 1
    spec = strategy.timestamp_column
    if isinstance(spec, TimestampAssigner):
        source = f"the timestamp returned by {spec!r}"
    elif isinstance(spec, str):
        source = f"timestamp column {spec!r}"
    else:
        source = f"timestamp column {spec}"
    # unix_millis floors exactly (a division would go through a double)
    millis = column if per_ms == 1 else F.unix_millis(F.timestamp_micros(column))
    message = F.concat(
        F.lit(f"{source}: event time "),
        millis.cast("string"),
        F.lit(
            f" ms is outside the range flinkwin supports, [{-MAX_EVENT_TIME_MS}, "
            f"{MAX_EVENT_TIME_MS}] ms (about 126,000 years either side of 1970: Spark carries "
            "the watermark as a timestamp), in row "
        ),
        described_row(pipeline.input_schema.fieldNames()),
    )
    outside = (column < F.lit(low)) | (column > F.lit(high))
    return F.when(outside, F.raise_error(message)).otherwise(column)


def _with_watermark(
    staged: DataFrame, event_time: EventTime, out_of_orderness_ms: int, shift: int
) -> DataFrame:
    """``staged`` with Spark's watermark on the helper column ``ts + shift`` (delay ``D + 1``),
    and that column then nulled, keeping its watermark metadata (see the module docstring)."""
    per_ms = 1 if event_time.unit == "ms" else 1000
    shifted = quoted(event_time.column)
    if shift:
        shifted = shifted + F.lit(shift * per_ms)
    micros = shifted * F.lit(1000 // per_ms)
    staged = staged.withColumn(_WM, F.timestamp_micros(micros))
    return _watermark_on_helper(staged, watermark_delay_ms(out_of_orderness_ms))


def _with_wake_clock(staged: DataFrame, shift: int) -> DataFrame:
    """``staged`` with Spark's watermark on the micro-batch's timestamp plus ``shift`` (delay
    1 ms), as a wake-up clock: it advances after every micro-batch with rows (see
    :func:`flinkwin.spark.graph_compiler._wake_clock`)."""
    micros = F.unix_micros(F.current_timestamp()) + F.lit(shift * 1000)
    return _watermark_on_helper(staged.withColumn(_WM, F.timestamp_micros(micros)), 1)


def _watermark_on_helper(staged: DataFrame, delay_ms: int) -> DataFrame:
    """``staged`` with Spark's watermark on its helper column with delay ``delay_ms``, and the
    column then nulled, keeping its watermark metadata (see the module docstring)."""
    staged = staged.withWatermark(_WM, f"{delay_ms} milliseconds")
    # Spark's watermark mark on the column (EventTimeWatermark.delayKey), written out rather
    # than read back from the schema: a Spark Connect schema does not carry it
    metadata = {"spark.watermarkDelayMs": delay_ms}
    nulls = staged.withColumn(_WM, F.lit(None).cast(TimestampType()))
    return nulls.withMetadata(_WM, metadata)


def _spark_watermark(
    pipeline: WindowPipeline, strategy: WatermarkStrategy, streaming: bool
) -> str:
    """How Spark carries the watermark, for the summary."""
    delay = watermark_delay_ms(strategy.out_of_orderness_ms)
    if not streaming:
        return ""
    if pipeline.times_before_1970:
        return (
            f" (times_before_1970: Spark's watermark is it plus {WATERMARK_SHIFT_MS} ms, on "
            f"ts + {WATERMARK_SHIFT_MS} ms with delay {delay} ms)"
        )
    return (
        f" (Spark's watermark is it: on ts with delay {delay} ms; an element at or before 1970 "
        "fails while it is not past the epoch, see times_before_1970)"
    )


def _describe_event_time(event_time: EventTime) -> str:
    shipped = {
        "ms": f"{event_time.column} (epoch ms)",
        "us": f"{event_time.column} (epoch us)",
    }[event_time.unit]
    if event_time.rebuilt is not None:
        return f"shipped as {shipped}; {event_time.rebuilt!r} rebuilt in the workers"
    return f"shipped as {shipped}"
