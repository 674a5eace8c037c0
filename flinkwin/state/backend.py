"""Keyed state: tables of ``(key, namespace) -> value`` per state name, and the state handles
user code sees (``ValueState``, ``ListState``, ``ReducingState``, ``AggregatingState``,
``MapState``).

Namespaces are windows (trigger and per-window state) or ``VOID_NAMESPACE`` (global state).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Any, Generic, TypeVar

from flinkwin.state.descriptors import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateDescriptor,
    ValueStateDescriptor,
)


class _VoidNamespace:
    """The namespace of non-windowed (global) keyed state."""

    def __repr__(self) -> str:
        return "VoidNamespace"

    def __reduce__(self) -> Any:
        return "VOID_NAMESPACE"


VOID_NAMESPACE = _VoidNamespace()


class StateTables:
    """All partitioned state of one operator: ``tables[name][(key, namespace)] = value``."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[tuple[Any, Any], Any]] = {}
        self.descriptors: dict[str, StateDescriptor] = {}

    def table(self, descriptor: StateDescriptor) -> dict[tuple[Any, Any], Any]:
        known = self.descriptors.get(descriptor.name)
        if known is not None and type(known) is not type(descriptor):
            raise ValueError(
                f"state {descriptor.name!r} was registered as {type(known).__name__}, "
                f"now requested as {type(descriptor).__name__}"
            )
        self.descriptors[descriptor.name] = descriptor
        return self.tables.setdefault(descriptor.name, {})

    def handle(self, descriptor: StateDescriptor, key: Any, namespace: Any) -> Any:
        table = self.table(descriptor)
        for base, handle_cls in _HANDLES.items():
            if isinstance(descriptor, base):
                return handle_cls(table, (key, namespace), descriptor)
        raise TypeError(f"unsupported state descriptor {descriptor!r}")

    def merge_namespaces(
        self, descriptor: StateDescriptor, key: Any, target: Any, sources: Iterable[Any]
    ) -> None:
        """Merge the sources' state into the target namespace (sources are removed)."""
        if not descriptor.mergeable:
            raise ValueError(
                "The given state descriptor does not refer to a mergeable state (MergingState)"
            )
        table = self.table(descriptor)
        tkey = (key, target)
        for source in sources:
            skey = (key, source)
            if skey == tkey or skey not in table:
                continue
            value = table.pop(skey)
            if tkey not in table:
                table[tkey] = value
            elif isinstance(descriptor, ListStateDescriptor):
                table[tkey] = table[tkey] + value
            elif isinstance(descriptor, ReducingStateDescriptor):
                table[tkey] = descriptor.reduce_function(table[tkey], value)
            else:
                assert isinstance(descriptor, AggregatingStateDescriptor)
                table[tkey] = descriptor.agg_function.merge(table[tkey], value)

    def num_entries(self, namespace: Any = None, *, any_namespace: bool = True) -> int:
        return sum(
            1
            for table in self.tables.values()
            for (_, ns) in table
            if any_namespace or ns == namespace
        )


IN = TypeVar("IN")
OUT = TypeVar("OUT")


class State(ABC):
    """PyFlink's ``State``: every state handle can be cleared."""

    @abstractmethod
    def clear(self) -> None: ...


class AppendingState(State, Generic[IN, OUT]):
    """PyFlink's ``AppendingState``: ``add`` values, ``get`` the result (a list, a reduced or
    aggregated value)."""

    @abstractmethod
    def get(self) -> OUT: ...

    @abstractmethod
    def add(self, value: IN) -> None: ...


class MergingState(AppendingState[IN, OUT]):
    """PyFlink's ``MergingState``: an appending state that merges when windows merge."""


class _Handle(State):
    def __init__(self, table: dict, slot: tuple[Any, Any], descriptor: StateDescriptor) -> None:
        self._table = table
        self._slot = slot
        self._descriptor = descriptor

    def clear(self) -> None:
        self._table.pop(self._slot, None)


class ValueState(_Handle):
    """``value()`` (None when unset), ``update(v)``, ``clear()``."""

    def value(self) -> Any:
        return self._table.get(self._slot)

    def update(self, value: Any) -> None:
        if value is None:
            self.clear()
        else:
            self._table[self._slot] = value


class ListState(_Handle, MergingState[Any, list[Any]]):
    """``get()`` (an empty list when unset), ``add``, ``add_all``, ``update``, ``clear``."""

    def get(self) -> list[Any]:
        return list(self._table.get(self._slot, ()))

    def add(self, value: Any) -> None:
        if value is None:
            raise ValueError("You cannot add null to a ListState.")
        self._table.setdefault(self._slot, []).append(value)

    def add_all(self, values: Iterable[Any]) -> None:
        for v in values:
            self.add(v)

    def update(self, values: Iterable[Any]) -> None:
        items = list(values)
        if items:
            self._table[self._slot] = items
        else:
            self.clear()

    def __iter__(self) -> Iterator[Any]:
        """PyFlink's ``for value in list_state``: the values of ``get()``."""
        return iter(self.get())

    addAll = add_all  # noqa: N815


class ReducingState(_Handle, MergingState[Any, Any]):
    """``get()`` (None when empty) and ``add(v)`` folding with the descriptor's reduce function."""

    _descriptor: ReducingStateDescriptor

    def get(self) -> Any:
        return self._table.get(self._slot)

    def add(self, value: Any) -> None:
        if self._slot in self._table:
            self._table[self._slot] = self._descriptor.reduce_function(
                self._table[self._slot], value
            )
        else:
            self._table[self._slot] = value


class AggregatingState(_Handle, MergingState[Any, Any]):
    """``get()`` returns ``get_result(acc)`` (None when empty); ``add(v)`` accumulates."""

    _descriptor: AggregatingStateDescriptor

    def get(self) -> Any:
        if self._slot not in self._table:
            return None
        return self._descriptor.agg_function.get_result(self._table[self._slot])

    def add(self, value: Any) -> None:
        fn = self._descriptor.agg_function
        acc = self._table[self._slot] if self._slot in self._table else fn.create_accumulator()
        self._table[self._slot] = fn.add(value, acc)


class MapState(_Handle):
    """A dict per key and namespace."""

    def _map(self, create: bool = False) -> dict:
        if create:
            return self._table.setdefault(self._slot, {})
        return self._table.get(self._slot, {})

    def get(self, key: Any) -> Any:
        return self._map().get(key)

    def put(self, key: Any, value: Any) -> None:
        self._map(True)[key] = value

    def put_all(self, mapping: dict) -> None:
        self._map(True).update(mapping)

    def remove(self, key: Any) -> None:
        m = self._map()
        m.pop(key, None)
        if not m:
            self.clear()

    def contains(self, key: Any) -> bool:
        return key in self._map()

    def items(self) -> Iterable[tuple[Any, Any]]:
        return list(self._map().items())

    def keys(self) -> Iterable[Any]:
        return list(self._map().keys())

    def values(self) -> Iterable[Any]:
        return list(self._map().values())

    def is_empty(self) -> bool:
        return not self._map()

    # PyFlink's MapState is also used as a dict: state[k], state[k] = v, del state[k],
    # k in state, for k in state (its keys)
    def __getitem__(self, key: Any) -> Any:
        return self.get(key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.put(key, value)

    def __delitem__(self, key: Any) -> None:
        self.remove(key)

    def __contains__(self, key: Any) -> bool:
        return self.contains(key)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.keys())

    def iterator(self) -> Iterator[tuple[Any, Any]]:
        """Java's ``iterator()``: the mappings, as ``(key, value)`` pairs."""
        return iter(self.items())

    # Java's names
    entries = items
    isEmpty = is_empty  # noqa: N815
    putAll = put_all  # noqa: N815


_HANDLES: dict[type, type] = {
    ValueStateDescriptor: ValueState,
    ListStateDescriptor: ListState,
    ReducingStateDescriptor: ReducingState,
    AggregatingStateDescriptor: AggregatingState,
    MapStateDescriptor: MapState,
}


class KeyedStateStore:
    """The state store handed to ``ProcessWindowFunction`` contexts (``window_state()`` and
    ``global_state()``): handles scoped to one key and one namespace."""

    def __init__(self, tables: StateTables, key: Any, namespace: Any) -> None:
        self._tables = tables
        self._key = key
        self._namespace = namespace

    def get_state(self, descriptor: ValueStateDescriptor) -> ValueState:
        return self._tables.handle(descriptor, self._key, self._namespace)

    def get_list_state(self, descriptor: ListStateDescriptor) -> ListState:
        return self._tables.handle(descriptor, self._key, self._namespace)

    def get_reducing_state(self, descriptor: ReducingStateDescriptor) -> ReducingState:
        return self._tables.handle(descriptor, self._key, self._namespace)

    def get_aggregating_state(self, descriptor: AggregatingStateDescriptor) -> AggregatingState:
        return self._tables.handle(descriptor, self._key, self._namespace)

    def get_map_state(self, descriptor: MapStateDescriptor) -> MapState:
        return self._tables.handle(descriptor, self._key, self._namespace)

    getState = get_state  # noqa: N815
    getListState = get_list_state  # noqa: N815
    getReducingState = get_reducing_state  # noqa: N815
    getAggregatingState = get_aggregating_state  # noqa: N815
    getMapState = get_map_state  # noqa: N815
