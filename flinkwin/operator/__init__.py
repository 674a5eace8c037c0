"""Flink's operators, Spark-free, in layers, each depending at run time only on those listed
before it:

- :mod:`flinkwin.operator.snapshots`: state as signed, sealed, versioned bytes (the formats,
  the object operator's and the keyed process operator's snapshots);
- the object window operator: :mod:`~flinkwin.operator.window_operator` (``WindowOperator``)
  with its contexts, firings, lifecycle, runtime context, timers, merging-window set and its
  batch path (:mod:`~flinkwin.operator.vectorized`, :mod:`~flinkwin.operator.batch_windows`,
  :mod:`~flinkwin.operator.element_rows`);
- :mod:`flinkwin.operator.states`: the one interface to a key group's window state, whichever
  form it takes (the object operator or a columnar form: columnar, continuous, panes,
  sessions, lists), the forms behind it;
- the graph operator and the operators it runs besides windows: :mod:`~flinkwin.operator.graph`
  (with ``graph_batches``, ``graph_subtask``), :mod:`~flinkwin.operator.cogroup`,
  :mod:`~flinkwin.operator.keyed_process_operator`,
  :mod:`~flinkwin.operator.interval_join_operator`.
"""

from flinkwin.operator.interval_join_operator import IntervalJoinOperator
from flinkwin.operator.merging_window_set import MergingWindowSet
from flinkwin.operator.snapshots import (
    SnapshotAuthenticationError,
    SnapshotBinding,
    SnapshotRestoreError,
    StatePickler,
)
from flinkwin.operator.snapshots.restored_keys import IncompatibleKeyError
from flinkwin.operator.timer_service import TimerQueue
from flinkwin.operator.window_operator import WindowOperator, make_key_selector

__all__ = [
    "IncompatibleKeyError",
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
