"""``getSideOutput``'s stream: an operator's side output, as a DataFrame and inside its graph.

A query on the side output itself (``toDF()``, a sink, ``execute_and_collect``) runs the
operator's stage writing that side output: its DataFrame. An operator, union or step after it
reads it inside the operator's graph (:attr:`SideOutputStream._plan`), as a Flink side output
is one more stream of the job: the operator runs once and feeds its main output and every
side output taken from it, in one stage (``odds.union(evens)`` of one operator's two side
outputs, a window over its late data, its result joined with a side output).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flinkwin.datastream.data_stream import DataStream


class SideOutputStream(DataStream):
    """A side output taken with ``getSideOutput`` (see module docstring)."""

    #: the operator's plan with this side output as its head, built when first read (the
    #: operator's checks run then, as for its result)
    _side_plan: Callable[[], Any]

    @property  # type: ignore[override]
    def _plan(self) -> Any:
        return self._side_plan()


__all__ = ["SideOutputStream"]
