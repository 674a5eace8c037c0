"""PyFlink's ``pyflink.datastream.checkpointing_mode``: ``CheckpointingMode``, accepted by
``env.enable_checkpointing(interval, mode)`` and recorded. A flinkwin query's state is
checkpointed by Spark at every micro-batch to the ``checkpoint_location`` given to ``start()``;
end-to-end exactly-once depends on the sink (``docs/sinks.md``)."""

from __future__ import annotations

import enum


class CheckpointingMode(enum.Enum):
    """Flink's checkpointing guarantees."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1


__all__ = ["CheckpointingMode"]
