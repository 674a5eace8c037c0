"""Flink's watermark carried by Spark's, and the range of event time a stage accepts.

Spark's watermark starts at 0, never decreases and cannot go below 0, while Flink's is any
``long``. A stage therefore puts Spark's watermark on a helper column ``ts + S`` (``S`` =
:data:`WATERMARK_SHIFT_MS`) with delay ``D + 1`` ms: Spark's watermark is ``max(ts) - D - 1 + S``,
Flink's ``BoundedOutOfOrdernessWatermarks`` value shifted by ``S``. Spark's 0 means "no
watermark yet" (Flink's ``MIN_LONG``); any positive value ``w`` is Flink's watermark ``w - S``,
negative (before 1970) or not.

Event timestamps must lie in ``[-MAX_EVENT_TIME_MS, MAX_EVENT_TIME_MS]`` (about 126,000 years
either side of 1970): there ``ts + S`` is a valid Spark timestamp (epoch microseconds in a
``long``) and positive, so Spark's own microsecond-to-millisecond truncation is Flink's floor,
and every watermark a window needs is above Spark's 0. Static and streaming stages both
enforce this range (a timestamp outside fails the batch, naming the column, value and range).
"""

from __future__ import annotations

import re
from typing import Any

from flinkwin.time import MIN_LONG

#: The largest event timestamp (epoch milliseconds) a stage accepts; the smallest is its negation.
MAX_EVENT_TIME_MS = 4_000_000_000_000_000
#: The helper column's shift: Spark's watermark is Flink's plus this (see module docstring).
WATERMARK_SHIFT_MS = MAX_EVENT_TIME_MS + 1


def watermark_delay_ms(out_of_orderness_ms: int) -> int:
    """The ``withWatermark`` delay on the helper column ``ts + S`` that makes Spark's watermark
    Flink's ``max(ts) - out_of_orderness - 1``, shifted by ``S``."""
    return out_of_orderness_ms + 1


def flink_watermark(spark_watermark_ms: int) -> int:
    """Flink's watermark for Spark's (``GroupState.getCurrentWatermarkMs()``): ``MIN_LONG``
    (none yet) for Spark's initial 0, else the value less the helper column's shift."""
    if spark_watermark_ms <= 0:
        return MIN_LONG
    return spark_watermark_ms - WATERMARK_SHIFT_MS


_ISO = re.compile(r"([+-]?\d{4,})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{1,3}))?Z")


def progress_watermark(progress: dict[str, Any]) -> int:
    """Flink's watermark of a streaming query's progress (``query.lastProgress``): Spark
    reports its own, shifted one as ``eventTime.watermark``; ``MIN_LONG`` if there is none."""
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
    return flink_watermark(spark_ms)


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
    "MAX_EVENT_TIME_MS",
    "WATERMARK_SHIFT_MS",
    "flink_watermark",
    "progress_watermark",
    "watermark_delay_ms",
]
