"""Keyed, window-scoped state: descriptors and handles with PyFlink's method names."""

from flinkwin.state.backend import (
    VOID_NAMESPACE,
    AggregatingState,
    AppendingState,
    KeyedStateStore,
    ListState,
    MapState,
    MergingState,
    ReducingState,
    State,
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
    "AppendingState",
    "KeyedStateStore",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "MergingState",
    "ReducingState",
    "ReducingStateDescriptor",
    "State",
    "StateDescriptor",
    "StateTables",
    "ValueState",
    "ValueStateDescriptor",
]
