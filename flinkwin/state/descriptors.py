"""State descriptors: name a piece of keyed (and window-scoped) state and say how it combines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class StateDescriptor:
    """Base: a state's name; type information is accepted for PyFlink compatibility."""

    kind = "value"
    mergeable = False

    def __init__(self, name: str, type_info: Any = None) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("a state descriptor needs a non-empty name")
        self.name = name
        self.type_info = type_info

    def get_name(self) -> str:
        return self.name

    def getName(self) -> str:  # noqa: N802 (Java name)
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class ValueStateDescriptor(StateDescriptor):
    """A single value per key and namespace (``value()``, ``update(v)``, ``clear()``)."""

    kind = "value"


class ListStateDescriptor(StateDescriptor):
    """A list per key and namespace; merging concatenates (target first)."""

    kind = "list"
    mergeable = True


class MapStateDescriptor(StateDescriptor):
    """A map per key and namespace."""

    kind = "map"

    def __init__(self, name: str, key_type_info: Any = None, value_type_info: Any = None) -> None:
        super().__init__(name, (key_type_info, value_type_info))


class ReducingStateDescriptor(StateDescriptor):
    """A value folded with ``reduce_function(acc, new)``; merging reduces target with source."""

    kind = "reducing"
    mergeable = True

    def __init__(self, name: str, reduce_function: Any, type_info: Any = None) -> None:
        super().__init__(name, type_info)
        self.reduce_function: Callable[[Any, Any], Any] = (
            reduce_function.reduce if hasattr(reduce_function, "reduce") else reduce_function
        )
        if isinstance(reduce_function, type):
            self.reduce_function = reduce_function().reduce


class AggregatingStateDescriptor(StateDescriptor):
    """An accumulator driven by an ``AggregateFunction``; ``get()`` returns ``get_result(acc)``."""

    kind = "aggregating"
    mergeable = True

    def __init__(self, name: str, agg_function: Any, state_type_info: Any = None) -> None:
        super().__init__(name, state_type_info)
        self.agg_function = agg_function
