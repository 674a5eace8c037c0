"""The functions of connected streams (``a.connect(b)``), with PyFlink's Python signatures
(``pyflink.datastream.functions``): ``CoMapFunction``, ``CoFlatMapFunction``,
``CoProcessFunction`` and ``KeyedCoProcessFunction``.

Method ``...1`` runs for each element of the first input, ``...2`` for each element of the
second; both see the same keyed state and timers (those of the element's key) on keyed
connected streams. Outputs are returned or yielded as for a process function, side outputs
yielded as ``(tag, value)`` or sent with ``ctx.output(tag, value)``. The operators running them
are in :mod:`flinkwin.operator.co_process_operator`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable
from typing import Any, Generic, TypeVar

from flinkwin.functions.base import Function
from flinkwin.functions.process import KeyedProcessFunction, ProcessFunction

IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")
OUT = TypeVar("OUT")
KEY = TypeVar("KEY")


class CoMapFunction(Function, Generic[IN1, IN2, OUT]):
    """One output per element of either input: ``map1`` for the first, ``map2`` for the second
    (a None result emits nothing, as in PyFlink)."""

    @abstractmethod
    def map1(self, value: IN1) -> OUT:
        """The output of an element of the first input."""

    @abstractmethod
    def map2(self, value: IN2) -> OUT:
        """The output of an element of the second input."""


class CoFlatMapFunction(Function, Generic[IN1, IN2, OUT]):
    """Any number of outputs per element of either input: ``flat_map1`` for the first,
    ``flat_map2`` for the second (Java's ``flatMap1``/``flatMap2``)."""

    _java_hooks = {"flatMap1": "flat_map1", "flatMap2": "flat_map2"}

    @abstractmethod
    def flat_map1(self, value: IN1) -> Iterable[OUT] | None:
        """Return (or yield) the outputs of an element of the first input."""

    @abstractmethod
    def flat_map2(self, value: IN2) -> Iterable[OUT] | None:
        """Return (or yield) the outputs of an element of the second input."""


class _TwoInputProcessFunction(Function):
    """What both co-process functions declare: a method per input, and ``on_timer``."""

    _java_hooks = {"processElement1": "process_element1",
                   "processElement2": "process_element2", "onTimer": "on_timer"}

    @abstractmethod
    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        """Process one element of the first input; return (or yield) its outputs."""

    @abstractmethod
    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any] | None:
        """Process one element of the second input; return (or yield) its outputs."""

    def on_timer(self, timestamp: int, ctx: Any) -> Iterable[Any] | None:
        """Called when a timer set with ``ctx.timer_service()`` fires (keyed connected
        streams only); return (or yield) outputs."""
        return None


class CoProcessFunction(_TwoInputProcessFunction, Generic[IN1, IN2, OUT]):
    """Processes the elements of two connected streams. On keyed connected streams it runs
    keyed (Java's ``ConnectedStreams.process(CoProcessFunction)`` on keyed inputs), with keyed
    state, timers and ``on_timer``; on non-keyed ones time can be queried but not timers set."""

    Context = ProcessFunction.Context
    OnTimerContext = ProcessFunction.OnTimerContext


class KeyedCoProcessFunction(_TwoInputProcessFunction, Generic[KEY, IN1, IN2, OUT]):
    """Processes the elements of two keyed connected streams with the keyed state and timers
    of the element's key (``ctx.get_current_key()``); ``on_timer`` runs with the timer's key
    current."""

    Context = KeyedProcessFunction.Context
    OnTimerContext = KeyedProcessFunction.OnTimerContext


__all__ = ["CoFlatMapFunction", "CoMapFunction", "CoProcessFunction", "KeyedCoProcessFunction"]
