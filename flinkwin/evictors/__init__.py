"""Evictors, one concept per module, named as in Flink."""

from flinkwin.evictors.base import Evictor, EvictorContext, TimestampedValue
from flinkwin.evictors.count import CountEvictor
from flinkwin.evictors.delta import DeltaEvictor
from flinkwin.evictors.time import TimeEvictor

__all__ = [
    "CountEvictor",
    "DeltaEvictor",
    "Evictor",
    "EvictorContext",
    "TimeEvictor",
    "TimestampedValue",
]
