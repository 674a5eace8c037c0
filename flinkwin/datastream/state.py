"""PyFlink's ``pyflink.datastream.state``: keyed and window state descriptors and handles
(flinkwin's own home is :mod:`flinkwin.state`)."""

from typing import Any

from flinkwin.state import (
    AggregatingState,
    AggregatingStateDescriptor,
    ListState,
    ListStateDescriptor,
    MapState,
    MapStateDescriptor,
    ReducingState,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueState,
    ValueStateDescriptor,
)
from flinkwin.unsupported import missing


def __getattr__(name: str) -> Any:
    raise missing(__name__, name)


__all__ = [
    "AggregatingState",
    "AggregatingStateDescriptor",
    "ListState",
    "ListStateDescriptor",
    "MapState",
    "MapStateDescriptor",
    "ReducingState",
    "ReducingStateDescriptor",
    "StateDescriptor",
    "ValueState",
    "ValueStateDescriptor",
]
