"""``InternalTimerService``: per-operator timers keyed by (timestamp, key, namespace).

A timer is registered at most once per (timestamp, key, window); timers fire in timestamp
order, ties in registration order. Deleting a timer that does not exist is a no-op.

Timers are bucketed by timestamp (a FIFO ordered dict per timestamp, a heap of the distinct
timestamps): windows of many keys share their end timestamps, so registering costs a dict
insert, not a heap push.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

TimerKey = tuple[int, Any, Any]


class TimerQueue:
    """One timer domain (event time or processing time) as a deduplicating priority queue."""

    def __init__(self) -> None:
        self._buckets: dict[int, OrderedDict[tuple[Any, Any], None]] = {}
        self._heap: list[int] = []
        self._size = 0
        self._quiesced = False

    def quiesce(self) -> None:
        """Ignore every registration from now on (deletions still apply)."""
        self._quiesced = True

    def register(self, timestamp: int, key: Any, namespace: Any) -> None:
        if self._quiesced:
            return
        bucket = self._buckets.get(timestamp)
        if bucket is None:
            bucket = self._buckets[timestamp] = OrderedDict()
            heapq.heappush(self._heap, timestamp)
        slot = (key, namespace)
        if slot not in bucket:
            bucket[slot] = None
            self._size += 1

    def delete(self, timestamp: int, key: Any, namespace: Any) -> None:
        bucket = self._buckets.get(timestamp)
        if bucket is not None and bucket.pop((key, namespace), 0) is None:
            self._size -= 1
            if not bucket:
                del self._buckets[timestamp]

    def _head(self) -> int | None:
        heap, buckets = self._heap, self._buckets
        while heap and heap[0] not in buckets:
            heapq.heappop(heap)
        return heap[0] if heap else None

    def peek_timestamp(self) -> int | None:
        """The earliest pending timer's timestamp, or None."""
        return self._head()

    def pop_due(self, time: int) -> tuple[int, Any, Any] | None:
        """Remove and return the earliest timer with timestamp <= ``time``, or None."""
        head = self._head()
        if head is None or head > time:
            return None
        bucket = self._buckets[head]
        (key, namespace), _ = bucket.popitem(last=False)
        self._size -= 1
        if not bucket:
            del self._buckets[head]
        return head, key, namespace

    def pop_bucket_due(self, time: int) -> tuple[int, list[tuple[Any, Any]]] | None:
        """Remove and return all timers of the earliest timestamp if it is <= ``time``, as
        (timestamp, [(key, namespace), ...] in registration order), or None."""
        head = self._head()
        if head is None or head > time:
            return None
        bucket = self._buckets.pop(head)
        self._size -= len(bucket)
        return head, list(bucket)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[TimerKey]:
        """Pending timers in firing order."""
        for ts in sorted(self._buckets):
            for key, ns in self._buckets[ts]:
                yield ts, key, ns

    def count(self, namespace: Any = None, key: Any = None) -> int:
        return sum(
            1
            for (_, k, ns) in self
            if (namespace is None or ns == namespace) and (key is None or k == key)
        )

    def buckets(self) -> list[tuple[int, list[tuple[Any, Any]]]]:
        """(timestamp, [(key, namespace), ...]) in firing order, for snapshots."""
        return [(ts, list(self._buckets[ts])) for ts in sorted(self._buckets)]

    def restore_buckets(self, timers: list[tuple[int, tuple[Any, Any]]]) -> None:
        """Rebuild from (timestamp, (key, namespace)) pairs listed in firing order."""
        self.__init__()  # type: ignore[misc]
        buckets = self._buckets
        for ts, slot in timers:
            bucket = buckets.get(ts)
            if bucket is None:
                bucket = buckets[ts] = OrderedDict()
            bucket[slot] = None
        self._heap = sorted(buckets)
        self._size = sum(len(b) for b in buckets.values())


def quiesce_timers(op: Any) -> None:
    """BATCH mode's end of input, for an operator that has received all of its input: its
    timer services ignore timers registered from here on, i.e. by its timer callbacks (a
    trigger's ``on_event_time``, a process function's ``on_timer``), as Flink's
    ``BatchExecutionInternalTimeService`` does when a key's input ends ("Timer service is
    quiesced"). Not for a graph stage's operators: a node's timers are registered by the
    elements that reach it during the end of input."""
    for name in ("event_timers", "processing_timers"):
        queue = getattr(op, name, None)
        if isinstance(queue, TimerQueue):
            queue.quiesce()
