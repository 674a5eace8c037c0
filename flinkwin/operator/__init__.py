"""The window operator, its timers, merging-window bookkeeping and snapshots; the interval join
operator."""

from flinkwin.operator.interval_join_operator import IntervalJoinOperator
from flinkwin.operator.merging_window_set import MergingWindowSet
from flinkwin.operator.snapshot import (
    SnapshotAuthenticationError,
    SnapshotBinding,
    SnapshotRestoreError,
    StatePickler,
)
from flinkwin.operator.timer_service import TimerQueue
from flinkwin.operator.window_operator import WindowOperator, make_key_selector

__all__ = [
    "IntervalJoinOperator",
    "MergingWindowSet",
    "SnapshotAuthenticationError",
    "SnapshotBinding",
    "SnapshotRestoreError",
    "StatePickler",
    "TimerQueue",
    "WindowOperator",
    "make_key_selector",
]
