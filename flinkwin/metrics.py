"""PyFlink's ``pyflink.metrics``: the metric group user functions get from
``get_runtime_context().get_metrics_group()``, with counters, gauges, meters and distributions.

The metrics work as PyFlink's do inside the function (a counter counts, ``get_count()`` reads
it back, the same name gives the same metric) and live with the function instance: in the
Python worker of the Spark task running it, one group per task (a key group for a window
stage's functions), from ``open`` until the task ends. They are not reported to Spark's metrics
or to the query's progress; a function that wants them seen writes them out itself (a side
output, a log line in ``close()``). flinkwin's own operator metrics are in ``docs/metrics.md``.
"""

from __future__ import annotations

import time
from abc import ABC
from collections.abc import Callable
from typing import Any


class Metric(ABC):  # noqa: B024 (PyFlink's Metric has no abstract method either)
    """Base class of all metrics."""


class Counter(Metric):
    """A count that can be incremented and decremented."""

    def __init__(self) -> None:
        self._count = 0

    def inc(self, n: int = 1) -> None:
        self._count += n

    def dec(self, n: int = 1) -> None:
        self._count -= n

    def get_count(self) -> int:
        return self._count


class Meter(Metric):
    """Events marked over time: the count, and the rate over the last ``time_span_in_seconds``
    (Flink's ``MeterView``)."""

    def __init__(self, time_span_in_seconds: int = 60) -> None:
        if time_span_in_seconds < 1:
            raise ValueError(f"time_span_in_seconds must be positive, got {time_span_in_seconds}")
        self._span = time_span_in_seconds
        self._count = 0
        self._events: list[tuple[float, int]] = []

    def mark_event(self, value: int = 1) -> None:
        now = time.monotonic()
        self._count += value
        self._events.append((now, value))
        self._events = [e for e in self._events if e[0] > now - self._span]

    def get_count(self) -> int:
        return self._count

    def get_rate(self) -> float:
        """Events per second over the time span."""
        now = time.monotonic()
        return sum(v for t, v in self._events if t > now - self._span) / self._span


class Distribution(Metric):
    """Statistics of the values passed to ``update``: count, sum, min and max."""

    def __init__(self) -> None:
        self._count = 0
        self._sum = 0
        self._min: Any = None
        self._max: Any = None

    def update(self, value: int) -> None:
        self._count += 1
        self._sum += value
        self._min = value if self._min is None else min(self._min, value)
        self._max = value if self._max is None else max(self._max, value)

    def get_count(self) -> int:
        return self._count

    def get_sum(self) -> int:
        return self._sum

    def get_min(self) -> Any:
        return self._min

    def get_max(self) -> Any:
        return self._max


class MetricGroup:
    """A named container of metrics and subgroups (PyFlink's ``MetricGroup``)."""

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        self._scope = scope
        self._groups: dict[tuple[str, str | None], MetricGroup] = {}
        self._metrics: dict[str, Any] = {}

    def add_group(self, name: str, extra: str | None = None) -> MetricGroup:
        """A subgroup ``name``; with ``extra``, the key group ``name`` and its value group
        ``extra`` (the value group is returned), as PyFlink's."""
        key = (name, extra)
        if key not in self._groups:
            scope = self._scope + ((name,) if extra is None else (name, extra))
            self._groups[key] = MetricGroup(scope)
        return self._groups[key]

    def counter(self, name: str) -> Counter:
        return self._register(name, Counter)

    def gauge(self, name: str, obj: Callable[[], Any]) -> None:
        """Register ``obj``: the gauge's value is ``obj()`` when read (``get_metrics``)."""
        if not callable(obj):
            raise TypeError(f"gauge {name!r} takes a function returning its value, got {obj!r}")
        self._metrics[name] = obj

    def meter(self, name: str, time_span_in_seconds: int = 60) -> Meter:
        return self._register(name, Meter, time_span_in_seconds)

    def distribution(self, name: str) -> Distribution:
        return self._register(name, Distribution)

    def get_scope_components(self) -> tuple[str, ...]:
        return self._scope

    def get_metrics(self) -> dict[str, Any]:
        """The current values, by dotted name (``group.name``) over this group and its
        subgroups: a counter's or meter's count, a gauge's value, a distribution's
        ``(count, sum, min, max)``."""
        values: dict[str, Any] = {}
        for name, metric in self._metrics.items():
            full = ".".join(self._scope + (name,))
            if isinstance(metric, (Counter, Meter)):
                values[full] = metric.get_count()
            elif isinstance(metric, Distribution):
                values[full] = (metric.get_count(), metric.get_sum(), metric.get_min(),
                                metric.get_max())
            else:
                values[full] = metric()
        for group in self._groups.values():
            values.update(group.get_metrics())
        return values

    def _register(self, name: str, kind: type, *args: Any) -> Any:
        metric = self._metrics.get(name)
        if metric is None:
            metric = self._metrics[name] = kind(*args)
        elif not isinstance(metric, kind):
            raise ValueError(f"metric {name!r} is already registered as a {type(metric).__name__}")
        return metric


__all__ = ["Counter", "Distribution", "Meter", "Metric", "MetricGroup"]
