"""The user functions of a window join and co-group (Flink's ``JoinFunction``,
``FlatJoinFunction`` and ``CoGroupFunction``), with Python signatures in PyFlink's style
(PyFlink itself has no window join):

- ``JoinFunction.join(first, second)`` returns one output for each pair of elements with the
  same key in the same window (a plain ``callable(first, second)`` works the same way);
- ``FlatJoinFunction.join(first, second)`` returns (or yields) any number of outputs per pair;
- ``CoGroupFunction.co_group(first, second)`` is called once per key and window with the lists
  of both inputs' elements (in the window's order, see :mod:`flinkwin.operator.cogroup`; one of
  them may be empty) and returns (or yields) the outputs. Java's method name ``coGroup`` works too.

They are rich functions (:class:`~flinkwin.functions.base.Function`): ``open(runtime_context)``
runs before the first call, ``close()`` at the end, and the runtime context's keyed state is the
join key's.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable
from typing import Generic, TypeVar

from flinkwin.functions.base import Function

IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")
OUT = TypeVar("OUT")


class JoinFunction(Function, Generic[IN1, IN2, OUT]):
    """One output per joined pair: ``join(first, second)``."""

    @abstractmethod
    def join(self, first: IN1, second: IN2) -> OUT: ...


class FlatJoinFunction(Function, Generic[IN1, IN2, OUT]):
    """Any number of outputs per joined pair: ``join(first, second)`` returns or yields them."""

    @abstractmethod
    def join(self, first: IN1, second: IN2) -> Iterable[OUT]: ...


class CoGroupFunction(Function, Generic[IN1, IN2, OUT]):
    """All elements of a key and window from both inputs at once:
    ``co_group(first, second)`` (two lists) returns or yields the outputs. A subclass may
    name the method ``coGroup`` as Java does instead."""

    _java_hooks = {"coGroup": "co_group"}

    @abstractmethod
    def co_group(self, first: list[IN1], second: list[IN2]) -> Iterable[OUT]: ...


__all__ = ["CoGroupFunction", "FlatJoinFunction", "JoinFunction"]
