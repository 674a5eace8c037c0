"""PyFlink's functions for the stream around a window: map, flat_map, filter and sinks.

``MapFunction``, ``FlatMapFunction`` and ``FilterFunction`` are PyFlink's rich functions
(:class:`~flinkwin.functions.base.Function`): ``open(runtime_context)`` is called in each Spark
task before the first element and ``close()`` after the last (see
:mod:`flinkwin.spark.transforms`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

from flinkwin.functions.base import Function


class MapFunction(Function):
    """One output per element: ``map(value)``."""

    @abstractmethod
    def map(self, value: Any) -> Any: ...


class FlatMapFunction(Function):
    """Any number of outputs per element: ``flat_map(value)`` returns or yields them."""

    _java_hooks = {"flatMap": "flat_map"}

    @abstractmethod
    def flat_map(self, value: Any) -> Iterable[Any]: ...


class FilterFunction(Function):
    """Keeps the elements for which ``filter(value)`` is true."""

    @abstractmethod
    def filter(self, value: Any) -> bool: ...


class SinkFunction(ABC):
    """A sink called once per element: ``invoke(value, context)``. ``value`` has the shape a
    PyFlink sink sees: a tuple for ``Types.TUPLE`` output, a Row for rows (a DataFrame's rows),
    the value itself for a basic type; ``context.timestamp()`` is the element's timestamp
    (None when it has none)."""

    @abstractmethod
    def invoke(self, value: Any, context: Any) -> None: ...


def as_callable(function: Any, method: str, what: str) -> Any:
    """``function``'s ``method`` if it is such an object, else the function itself."""
    bound = getattr(function, method, None)
    if bound is not None and callable(bound) and not isinstance(function, type):
        return bound
    if callable(function) and not isinstance(function, type):
        return function
    raise TypeError(f"{what} takes a function or an object with {method}(), got {function!r}")


def function_label(function: Any) -> str:
    """How errors name a user function: a plain function's name (``<lambda>``), else its
    class's."""
    if isinstance(function, type) or not hasattr(function, "__name__"):
        return type(function).__name__
    return str(function.__name__)


__all__ = [
    "FilterFunction", "FlatMapFunction", "MapFunction", "SinkFunction", "as_callable",
    "function_label",
]
