"""Keyed, window-scoped state: descriptors and handles with PyFlink's method names."""

from flinkwin.state.backend import (
    VOID_NAMESPACE,
    AggregatingState,
    KeyedStateStore,
    ListState,
    MapState,
    ReducingState,
    StateTables,
    ValueState,
)
from flinkwin.state.descriptors import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)

__all__ = [
    "VOID_NAMESPACE",
    "AggregatingState",
    "AggregatingStateDescriptor",
    "KeyedStateStore",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "ReducingState",
    "ReducingStateDescriptor",
    "StateDescriptor",
    "StateTables",
    "ValueState",
    "ValueStateDescriptor",
]
