"""``TimeCharacteristic`` of PyFlink 1.x (``pyflink.datastream.time_characteristic``), for
programs that still call ``env.set_stream_time_characteristic(...)``.

Since Flink 1.12 event time is the default and the characteristic no longer chooses the
windows: the window assigner does (``TumblingEventTimeWindows`` or
``TumblingProcessingTimeWindows``). ``EventTime`` and ``ProcessingTime`` are accepted and
recorded; ``IngestionTime`` (the source stamps each element with its arrival time) is refused
with an error, since a Spark source assigns no such time: stamp the rows with
``current_timestamp()`` and use event time on that column.
"""

from __future__ import annotations

import enum


class TimeCharacteristic(enum.Enum):
    """Flink's (deprecated) time characteristic."""

    ProcessingTime = 0
    IngestionTime = 1
    EventTime = 2


__all__ = ["TimeCharacteristic"]
