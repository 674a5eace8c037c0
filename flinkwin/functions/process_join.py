"""``ProcessJoinFunction``: the function of an interval join (Flink's Java
``ProcessJoinFunction<IN1, IN2, OUT>``, in PyFlink's Python style; PyFlink has none).

``process_element(left, right, ctx)`` is called once per joined pair and returns (or yields)
its outputs; each output carries the pair's timestamp, ``max(left, right)``. A yielded
``(OutputTag, value)`` pair goes to that side output, as ``ctx.output(tag, value)`` does.

The context gives the pair's timestamps: ``ctx.get_left_timestamp()``,
``ctx.get_right_timestamp()`` and ``ctx.get_timestamp()`` (the pair's, ``max`` of both), with
Java's camelCase names as aliases. Like every :class:`~flinkwin.functions.base.Function` it is
opened with ``open(runtime_context)`` (keyed state refers to the key of the pair being joined)
and closed with ``close()``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from flinkwin.functions.base import Function

if TYPE_CHECKING:
    from flinkwin.output_tag import OutputTag

IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")
OUT = TypeVar("OUT")


class ProcessJoinContext(ABC):
    """What ``ProcessJoinFunction.process_element`` sees of the pair being joined (Java's
    ``ProcessJoinFunction.Context``)."""

    @abstractmethod
    def get_left_timestamp(self) -> int:
        """The timestamp of the left element of the pair."""

    @abstractmethod
    def get_right_timestamp(self) -> int:
        """The timestamp of the right element of the pair."""

    @abstractmethod
    def get_timestamp(self) -> int:
        """The timestamp of the pair: the larger of the two."""

    @abstractmethod
    def output(self, output_tag: OutputTag, value: Any) -> None:
        """Emit ``value`` to the side output ``output_tag``, with the pair's timestamp."""

    def getLeftTimestamp(self) -> int:  # noqa: N802 (Java name)
        return self.get_left_timestamp()

    def getRightTimestamp(self) -> int:  # noqa: N802
        return self.get_right_timestamp()

    def getTimestamp(self) -> int:  # noqa: N802
        return self.get_timestamp()


class ProcessJoinFunction(Function, Generic[IN1, IN2, OUT]):
    """Called for every pair of an interval join (see module docstring)."""

    Context = ProcessJoinContext
    _java_hooks = {"processElement": "process_element"}

    @abstractmethod
    def process_element(
        self, left: IN1, right: IN2, ctx: ProcessJoinContext
    ) -> Iterable[OUT] | None:
        """The outputs for the joined pair ``(left, right)``: a list, or yield them."""


__all__ = ["ProcessJoinContext", "ProcessJoinFunction"]
