"""Timestamps and watermarks taken where ``assign_timestamps_and_watermarks`` is.

Flink assigns an element's timestamp and feeds its watermark generator in the
``TimestampsAndWatermarksOperator``, before any ``map``/``flat_map``/``filter`` after it: a
filtered-out element still advances the watermark, and a map's outputs keep their element's
timestamp. So before such a step flinkwin

* computes each row's timestamp into the hidden ``_fw_rts`` column (epoch ms; a
  ``TimestampAssigner`` runs in the element stage, a column is read by Spark), which the steps
  carry to their outputs;
* on a stream, before a ``filter`` or ``flat_map`` (which can drop elements), puts Spark's
  watermark there (``withWatermark``, see :mod:`flinkwin.spark.watermarks`), over every row,
  and marks the strategy ``watermarked_upstream``: the stateful stage downstream reads Spark's
  watermark and only marks its input with :func:`watermark_mark` (Spark requires a column
  with the watermark mark below an event-time-timeout stage). Before a ``map``, which keeps
  every element and its timestamp, the watermark is left to the stage downstream, which
  generates it from ``_fw_rts`` as from a source's own timestamps: the same watermark, and a
  stream graph then keeps that source's clock itself (its own per-operator watermarks,
  exact across restarts) as for any source.
"""

from __future__ import annotations

import copy
from types import SimpleNamespace

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType, TimestampType

from flinkwin.timestamps import TimestampAssigner
from flinkwin.watermark import WatermarkStrategy

from .elements import RECORD_TIMESTAMP_COLUMN
from .event_time import _event_time, _in_event_time_range, _with_watermark
from .inputs import EventTime
from .timestamps import quoted
from .watermarks import watermark_delay_ms, watermark_shift

_HELPER = "_fw_ts"
WATERMARK_COLUMN = "_fw_wm"


def carry_time(
    df: DataFrame, strategy: WatermarkStrategy, schema: StructType, times_before_1970: bool,
    every_element: bool = False,
) -> tuple[DataFrame, WatermarkStrategy]:
    """``df`` with its timestamps in ``_fw_rts`` and, on a stream whose next step can drop
    elements (not ``every_element``), Spark's watermark applied (shifted if the stream declares
    ``times_before_1970``, see :mod:`flinkwin.spark.watermarks`); and the strategy the stream
    carries on (reading ``_fw_rts``). ``schema`` is the elements' (for error messages). A
    ``TimestampAssigner`` strategy must have run already (its timestamps in ``_fw_rts``)."""
    if strategy.watermarked_upstream:
        return df, strategy
    staged = carry_timestamps(df, strategy, schema)
    carried = EventTime(RECORD_TIMESTAMP_COLUMN, "ms")
    following = copy.copy(strategy)
    following.timestamp_column = RECORD_TIMESTAMP_COLUMN
    if df.isStreaming and not every_element:
        shift = watermark_shift(times_before_1970)
        staged = _with_watermark(staged, carried, strategy.out_of_orderness_ms, shift)
        staged = staged.drop(WATERMARK_COLUMN)
        following.watermarked_upstream = True
    return staged, following


def carry_timestamps(df: DataFrame, strategy: WatermarkStrategy, schema: StructType
                     ) -> DataFrame:
    """``df`` with ``strategy``'s timestamps in ``_fw_rts`` (range-checked), and no watermark:
    what the elements carry past ``assign_timestamps_and_watermarks``, the ``recordTimestamp``
    Flink's ``TimestampsAndWatermarksOperator`` hands the next strategy's assigner (whose
    watermarks replace this one's). ``schema`` is the elements' (for error messages); a
    ``TimestampAssigner`` strategy must have run already (its timestamps in ``_fw_rts``)."""
    if isinstance(strategy.timestamp_column, TimestampAssigner):
        raise ValueError("carry_timestamps needs the TimestampAssigner's timestamps in _fw_rts")
    event_time, helper = _event_time(df, strategy)
    staged = df if helper is None else df.withColumn(_HELPER, helper)
    column = quoted(event_time.column)
    if event_time.unit == "us":  # floor to ms, exactly (no double)
        name = f"`{event_time.column}`"
        column = F.expr(f"({name} - pmod({name}, 1000)) div 1000")
    staged = staged.withColumn(RECORD_TIMESTAMP_COLUMN, column.cast("long"))
    if helper is not None:
        staged = staged.drop(_HELPER)
    carried = EventTime(RECORD_TIMESTAMP_COLUMN, "ms")
    shim = SimpleNamespace(input_schema=schema)
    checked = _in_event_time_range(
        shim, strategy, carried, quoted(RECORD_TIMESTAMP_COLUMN)  # type: ignore[arg-type]
    )
    staged = staged.withColumn(RECORD_TIMESTAMP_COLUMN, checked)
    return staged


def watermark_mark(df: DataFrame, strategy: WatermarkStrategy) -> DataFrame:
    """``df`` with the null ``_fw_wm`` column carrying Spark's watermark mark, for a watermark
    applied upstream (see module docstring)."""
    delay = watermark_delay_ms(strategy.out_of_orderness_ms)
    marked = df.withColumn(WATERMARK_COLUMN, F.lit(None).cast(TimestampType()))
    return marked.withMetadata(WATERMARK_COLUMN, {"spark.watermarkDelayMs": delay})


__all__ = ["carry_time", "carry_timestamps", "watermark_mark"]
