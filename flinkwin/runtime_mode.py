"""``RuntimeExecutionMode``: Flink's execution modes, for a bounded (static) DataFrame.

- ``STREAMING`` (the default, as in PyFlink): each key's elements reach the window in arrival
  order, the DataFrame's row order (the rows within the source's partitions, partition by
  partition; see :mod:`flinkwin.spark.arrival`), and no watermark arrives before the end of
  input, which brings ``MAX_LONG``.
- ``BATCH``: each key's elements reach the window sorted by event time (stable), then the
  end-of-input watermark; Flink's batch mode sorts by key and timestamp the same way.
- ``AUTOMATIC``: ``BATCH`` for a static DataFrame, ``STREAMING`` for a streaming one.

A streaming DataFrame always runs in ``STREAMING`` mode, its elements in arrival order too;
``BATCH`` is refused, as Flink refuses an unbounded source in ``BATCH`` mode.
"""

from __future__ import annotations

import enum


class RuntimeExecutionMode(enum.Enum):
    """Flink's ``RuntimeExecutionMode`` (see module docstring)."""

    STREAMING = 0
    BATCH = 1
    AUTOMATIC = 2


def effective_mode(mode: RuntimeExecutionMode, streaming: bool) -> RuntimeExecutionMode:
    """STREAMING or BATCH for an input that is ``streaming`` or static."""
    if not isinstance(mode, RuntimeExecutionMode):
        raise TypeError(f"runtime_mode must be a RuntimeExecutionMode, got {mode!r}")
    if streaming:
        if mode is RuntimeExecutionMode.BATCH:
            raise ValueError(
                "RuntimeExecutionMode.BATCH needs bounded input; this DataFrame is streaming "
                "(use STREAMING or AUTOMATIC; Flink: Detected an UNBOUNDED source with the "
                "'execution.runtime-mode' set to 'BATCH')"
            )
        return RuntimeExecutionMode.STREAMING
    if mode is RuntimeExecutionMode.AUTOMATIC:
        return RuntimeExecutionMode.BATCH
    return mode


__all__ = ["RuntimeExecutionMode", "effective_mode"]
