"""Flink's watermark carried by Spark's, and the range of event time a stage accepts.

Spark's watermark starts at 0, never decreases and cannot go below 0, while Flink's is any
``long``. A streaming stage puts Spark's watermark on a helper column ``ts + S`` with delay
``D + 1`` ms, so Spark's watermark is ``max(ts) - D - 1 + S``: Flink's
``BoundedOutOfOrdernessWatermarks`` value shifted by ``S``. Two modes choose ``S``:

* **Ordinary (``S = 0``, the default).** Spark's watermark *is* Flink's, so Spark's progress
  (``eventTime.watermark``), its UI and every ``StreamingQueryListener`` show it as a normal
  timestamp. Spark's 0 means "no watermark yet" (Flink's ``MIN_LONG``) in micro-batch 0, and
  "``MIN_LONG``, or a watermark at or before the epoch" after it (the *uncertain* watermark:
  every element so far is at most ``D + 1`` ms after 1970). While it is uncertain the stage
  runs as under ``MIN_LONG``, which is exact for everything flinkwin decides itself (every
  window and timer of an element after the epoch is after it too); what the value would
  decide fails, naming the declaration below: an element at or before the epoch reaching a
  window or join, an event-time timer at or before the epoch (pending or registered), user
  code reading the watermark (:mod:`flinkwin.operator.watermark_guard`). Once Spark's
  watermark is past the epoch everything is exact, elements before 1970 included (late).
  A graph stage in one key group with two or more watermarked sources is the exception:
  its operators' watermarks are its own and Spark's is a wake-up clock, the micro-batch's
  timestamp (plus ``S``; :func:`flinkwin.spark.graph_compiler._wake_clock`).
* **Before 1970 (``S`` = :data:`WATERMARK_SHIFT_MS`), declared with
  ``DataStream(df, times_before_1970=True)``.** Every watermark a window needs is above
  Spark's 0, negative or not: any positive value ``w`` is Flink's ``w - S`` and 0 is "none
  yet". Spark's own view of the watermark is then shifted (it reads as a date about
  128,000 years ahead); :func:`progress_watermark` reads it back.

Event timestamps must lie in ``[-MAX_EVENT_TIME_MS, MAX_EVENT_TIME_MS]`` (about 126,000 years
either side of 1970): there ``ts + S`` is a valid Spark timestamp (epoch microseconds in a
``long``) and positive, so Spark's own microsecond-to-millisecond truncation is Flink's floor.
Static and streaming stages both enforce this range (a timestamp outside fails the batch,
naming the column, value and range); static stages need no declaration (they never use
Spark's watermark). In the ordinary mode no watermark can exceed ``MAX_EVENT_TIME_MS``, so a
larger one is a checkpoint written in the shifted mode (by an earlier flinkwin, which always
shifted, or with the declaration), which the stage refuses to continue undeclared.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from flinkwin.operator.watermark_guard import Uncertainty, UncertainWatermarkError
from flinkwin.time import MIN_LONG

#: The largest event timestamp (epoch milliseconds) a stage accepts; the smallest is its negation.
MAX_EVENT_TIME_MS = 4_000_000_000_000_000
#: The helper column's shift in the mode declared for times before 1970 (module docstring).
WATERMARK_SHIFT_MS = MAX_EVENT_TIME_MS + 1
#: The declaration a pipeline with event times at or before the epoch needs on a stream.
DECLARATION = "DataStream(df, times_before_1970=True)"
#: What the errors of an uncertain watermark ask for (module docstring).
REMEDY = (
    f"Declare {DECLARATION} for a stream whose event times may lie this close to 1970 or "
    "before it: Spark's watermark then carries Flink's exactly (see docs/spark-semantics.md, "
    "\"Watermarks\")"
)


class ShiftedWatermarkError(RuntimeError):
    """Spark's watermark is a shifted one (``times_before_1970``) but the stage does not
    declare that mode: the checkpoint was written by a pipeline that did."""


def spark_uncertainty(spark_watermark_ms: int) -> Uncertainty | None:
    """Whether Spark's watermark (ordinary mode) is uncertain in the running task (module
    docstring): 0 after micro-batch 0 stands for ``MIN_LONG`` or a time at or before the
    epoch. The caller decides whether it reads Spark's watermark in the ordinary mode."""
    if spark_watermark_ms > 0 or batch_id() == 0:
        return None
    return Uncertainty(REMEDY)


def check_after_epoch(frame: pd.DataFrame, timestamps: np.ndarray) -> None:
    """Fail on an element before the epoch met under the uncertain watermark: whether its
    windows are late is what that watermark would decide. An element at 0 is exact: every
    window holding it ends after 0, and one whose timers are at 0 (the only case the value
    decides) fails on its timer after the batch (``check_event_timer``)."""
    early = np.flatnonzero(timestamps < 0)
    if len(early):
        i = int(early[0])
        row = {c: _plain(frame[c].iloc[i]) for c in frame.columns}
        raise UncertainWatermarkError(
            f"element {row} has event time {int(timestamps[i])} ms, before "
            "1970-01-01T00:00:00Z, while the stream's watermark is uncertain (Long.MIN_VALUE "
            "or a time at or before the epoch: Spark's watermark cannot go below it). "
            + REMEDY
        )


def _plain(value: Any) -> Any:
    """A numpy scalar as the Python value it holds (for messages)."""
    return value.item() if isinstance(value, np.generic) else value


def batch_id() -> int | None:
    """The streaming query's micro-batch id, which Spark sets on the tasks it runs (None:
    not known)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    value = None if context is None else context.getLocalProperty("streaming.sql.batchId")
    return None if value is None else int(value)


def watermark_shift(times_before_1970: bool) -> int:
    """The helper column's shift ``S`` of a stage (see module docstring)."""
    return WATERMARK_SHIFT_MS if times_before_1970 else 0


def watermark_delay_ms(out_of_orderness_ms: int) -> int:
    """The ``withWatermark`` delay on the helper column ``ts + S`` that makes Spark's watermark
    Flink's ``max(ts) - out_of_orderness - 1``, shifted by ``S``."""
    return out_of_orderness_ms + 1


def flink_watermark(spark_watermark_ms: int, shift: int) -> int:
    """Flink's watermark for Spark's (``GroupState.getCurrentWatermarkMs()``) in the mode of
    shift ``shift``: ``MIN_LONG`` for Spark's 0 (none yet; in the ordinary mode possibly a
    watermark at or before the epoch, see module docstring), else the value less the shift.
    Raises :class:`ShiftedWatermarkError` for a shifted watermark met in the ordinary mode."""
    if spark_watermark_ms <= 0:
        return MIN_LONG
    if shift == 0 and spark_watermark_ms > MAX_EVENT_TIME_MS:
        raise ShiftedWatermarkError(
            f"Spark's watermark is {spark_watermark_ms} ms, beyond any event time flinkwin "
            f"accepts ({MAX_EVENT_TIME_MS} ms): this query's checkpoint was written with the "
            "watermark shifted for event times before 1970 (by an earlier flinkwin, which "
            "always shifted it, or by a pipeline declaring times_before_1970). Declare "
            f"{DECLARATION} to continue it, or start from a new checkpoint location"
        )
    return spark_watermark_ms - shift


_ISO = re.compile(r"([+-]?\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,3}))?Z")


def progress_watermark(progress: dict[str, Any], times_before_1970: bool = False) -> int:
    """Flink's watermark of a streaming query's progress (``query.lastProgress``), which
    reports Spark's as ``eventTime.watermark``; ``MIN_LONG`` if there is none (or, in the
    ordinary mode, while it is at or before the epoch, which Spark shows as 1970-01-01).
    ``times_before_1970`` is the pipeline's declaration (the watermark is then shifted)."""
    iso = progress.get("eventTime", {}).get("watermark")
    if iso is None:
        return MIN_LONG
    match = _ISO.fullmatch(iso)
    if match is None:
        raise ValueError(f"unexpected watermark format in the query progress: {iso!r}")
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    millis = int((match.group(7) or "0").ljust(3, "0"))
    days = _days_from_civil(year, month, day)
    spark_ms = ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis
    return flink_watermark(spark_ms, watermark_shift(times_before_1970))


def _days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date, for any year (Python's datetime
    stops at 9999; Spark prints the shifted watermark in years beyond)."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


__all__ = [
    "DECLARATION",
    "MAX_EVENT_TIME_MS",
    "REMEDY",
    "WATERMARK_SHIFT_MS",
    "ShiftedWatermarkError",
    "batch_id",
    "check_after_epoch",
    "flink_watermark",
    "progress_watermark",
    "spark_uncertainty",
    "watermark_delay_ms",
    "watermark_shift",
]
