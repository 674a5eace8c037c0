"""``InternalTimerService``: per-operator timers keyed by (timestamp, key, namespace).

A timer is registered at most once per (timestamp, key, window); timers fire in timestamp
order, ties in registration order. Deleting a timer that does not exist is a no-op.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

TimerKey = tuple[int, Any, Any]


class TimerQueue:
    """One timer domain (event time or processing time) as a deduplicating priority queue."""

    def __init__(self) -> None:
        self._timers: dict[TimerKey, int] = {}
        self._heap: list[tuple[int, int, Any, Any]] = []
        self._seq = 0

    def register(self, timestamp: int, key: Any, namespace: Any) -> None:
        tk = (timestamp, key, namespace)
        if tk in self._timers:
            return
        self._seq += 1
        self._timers[tk] = self._seq
        heapq.heappush(self._heap, (timestamp, self._seq, key, namespace))

    def delete(self, timestamp: int, key: Any, namespace: Any) -> None:
        self._timers.pop((timestamp, key, namespace), None)

    def _drop_stale_head(self) -> None:
        heap = self._heap
        while heap:
            ts, seq, key, ns = heap[0]
            if self._timers.get((ts, key, ns)) == seq:
                return
            heapq.heappop(heap)

    def peek_timestamp(self) -> int | None:
        """The earliest pending timer's timestamp, or None."""
        self._drop_stale_head()
        return self._heap[0][0] if self._heap else None

    def pop_due(self, time: int) -> tuple[int, Any, Any] | None:
        """Remove and return the earliest timer with timestamp <= ``time``, or None."""
        self._drop_stale_head()
        if not self._heap or self._heap[0][0] > time:
            return None
        ts, _, key, ns = heapq.heappop(self._heap)
        del self._timers[(ts, key, ns)]
        return ts, key, ns

    def __len__(self) -> int:
        return len(self._timers)

    def __iter__(self) -> Iterator[TimerKey]:
        """Pending timers in firing order."""
        return iter(sorted(self._timers, key=lambda tk: (tk[0], self._timers[tk])))

    def count(self, namespace: Any = None, key: Any = None) -> int:
        return sum(
            1
            for (_, k, ns) in self._timers
            if (namespace is None or ns == namespace) and (key is None or k == key)
        )

    def items(self) -> list[tuple[int, Any, Any, int]]:
        """(timestamp, key, namespace, seq) for snapshots, in firing order."""
        return [(ts, k, ns, self._timers[(ts, k, ns)]) for (ts, k, ns) in self]

    def restore(self, items: list[tuple[int, Any, Any, int]]) -> None:
        self._timers = {(ts, k, ns): seq for ts, k, ns, seq in items}
        self._heap = [(ts, seq, k, ns) for ts, k, ns, seq in items]
        heapq.heapify(self._heap)
        self._seq = max((seq for *_, seq in items), default=0)
