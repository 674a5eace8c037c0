"""``JoinedStreams``: a window join of two streams (Flink's ``JoinedStreams``)::

    first.join(second)
         .where(key).equal_to(key)
         .window(assigner)
         [.trigger(t)] [.evictor(e)] [.allowed_lateness(ms)] [.side_output_late_data(tag)]
         .apply(join_function, output_schema=...)

A join is a co-group (:mod:`flinkwin.datastream.cogrouped_streams`) whose function calls
``join(first, second)`` for every pair of elements of the two inputs with the same key in the
same window: for each element of the first input, for each element of the second (each in the
window's order, as for a co-group). A key with elements of one input only joins nothing (an
inner join). Outputs carry the window's ``max_timestamp()``.
"""

from __future__ import annotations

from typing import Any

from flinkwin.datastream.cogrouped_streams import (
    EqualTo,
    Where,
    WindowedTwoInputs,
    _Build,
    _TwoInputs,
)
from flinkwin.functions.join import CoGroupFunction
from flinkwin.operator.cogroup import join_kind


class JoinedWithWindow(WindowedTwoInputs):
    """A join with keys and windows (Flink's ``JoinedStreams.WithWindow``)."""

    def apply(
        self, function: Any, output_type: Any = None, *, output_schema: Any = None
    ) -> Any:
        """Finish with ``function``: a ``JoinFunction`` (``join(first, second)`` returns one
        output per pair), a ``FlatJoinFunction`` (``join`` returns or yields any number), or a
        ``callable(first, second)`` (one output per pair; a generator function yields any
        number). Declare the outputs' type with ``output_type`` (as Java's ``resultType``) or
        ``output_schema`` (a DDL string, StructType or type information); without one they are
        pickled Python values, as PyFlink's."""
        kind = join_kind(function)
        if kind is None:
            what = (
                f"{type(function).__name__}, a CoGroupFunction (that goes to "
                "co_group(...)...apply())" if isinstance(function, CoGroupFunction)
                else f"{type(function).__name__} {function!r}"
            )
            raise TypeError(
                "JoinedStreams.WithWindow.apply() takes a JoinFunction, a FlatJoinFunction or "
                f"a callable(first, second), got {what}"
            )
        return self._finish(function, kind, output_schema, output_type)


class JoinedStreams(_TwoInputs):
    """Two streams to join in windows (see module docstring)."""

    _operation = "join"
    Where = Where
    EqualTo = EqualTo
    WithWindow = JoinedWithWindow

    def _window_builder(self, build: _Build) -> JoinedWithWindow:
        return JoinedWithWindow(build)


__all__ = ["JoinedStreams", "JoinedWithWindow"]
