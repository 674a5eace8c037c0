"""Choosing the columnar key-group state for an operator configuration.

One place decides which columnar equivalent of :class:`~flinkwin.operator.WindowOperator` a
configuration has (:class:`~flinkwin.operator.columnar.ColumnarAggregation` for tumbling and
sliding windows, :class:`~flinkwin.operator.sessions.SessionAggregation` for event-time
sessions), builds or restores it, and converts an operator back into it. All of them share
``ColumnarAggregation``'s interface (``accepts``/``process_batch``/``advance_watermark``/
``drain_*``/``snapshot``/``restore``/``to_operator``/``from_operator``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from flinkwin.operator import columnar, sessions
from flinkwin.operator.columnar import ColumnarAggregation, snapshot_format

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator

Factory = Callable[[], "WindowOperator"]


def state_class(op: WindowOperator) -> type[ColumnarAggregation] | None:
    """The columnar state class for ``op``'s configuration, or None."""
    if columnar.supports(op):
        return ColumnarAggregation
    if sessions.supports(op):
        return sessions.SessionAggregation
    return None


def supports(op: WindowOperator) -> bool:
    """True if ``op``'s configuration has a columnar equivalent."""
    return state_class(op) is not None


def describe(op: WindowOperator) -> str:
    """How ``explain()`` names the columnar state of ``op``'s configuration."""
    if state_class(op) is sessions.SessionAggregation:
        return "columnar sessions: one pandas frame per key group, batches merged per key"
    return "columnar panes: one pandas frame per key group"


def new_state(template: WindowOperator, factory: Factory) -> ColumnarAggregation:
    """An empty columnar state for ``template``'s configuration (one :func:`supports`)."""
    klass = state_class(template)
    assert klass is not None, "configuration without a columnar state"
    return klass(template, factory)


def restore_state(
    data: bytes, template: WindowOperator, factory: Factory
) -> ColumnarAggregation | None:
    """The columnar state in the snapshot ``data``, or None when ``data`` is another
    format (an operator snapshot)."""
    klass = state_class(template)
    if klass is None or snapshot_format(data) != klass.FORMAT:
        return None
    state = klass(template, factory)
    state.restore(data)
    return state


def from_operator(
    op: WindowOperator, factory: Factory, columns: list[str]
) -> ColumnarAggregation | None:
    """The columnar equivalent of ``op`` (see ``ColumnarAggregation.from_operator``), or
    None when its configuration or state has none."""
    klass = state_class(op)
    return None if klass is None else klass.from_operator(op, factory, columns)


__all__ = ["describe", "from_operator", "new_state", "restore_state", "state_class", "supports"]
