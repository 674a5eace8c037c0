"""User window functions with PyFlink's Python signatures.

- ``ReduceFunction.reduce(a, b)``: incremental; the window keeps one reduced element.
- ``AggregateFunction``: incremental; the window keeps one accumulator.
- ``ProcessWindowFunction.process(key, context, elements)``: sees all elements (or the single
  incremental result when combined with a reduce/aggregate) and the window context.
- ``WindowFunction.apply(key, window, inputs)``: the older, context-free form.
- ``ProcessAllWindowFunction`` / ``AllWindowFunction``: the same for non-keyed ``windowAll``.
Functions return (or yield) an iterable of outputs; each output is emitted with the window's
``max_timestamp()``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any


class ReduceFunction(ABC):
    """Combines two elements into one of the same shape."""

    @abstractmethod
    def reduce(self, value1: Any, value2: Any) -> Any: ...


class AggregateFunction(ABC):
    """Incremental aggregation through an accumulator."""

    @abstractmethod
    def create_accumulator(self) -> Any: ...

    @abstractmethod
    def add(self, value: Any, accumulator: Any) -> Any: ...

    @abstractmethod
    def get_result(self, accumulator: Any) -> Any: ...

    def merge(self, acc_a: Any, acc_b: Any) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__}.merge is needed to merge session windows"
        )


class WindowContext(ABC):
    """The context a ``ProcessWindowFunction`` sees."""

    @abstractmethod
    def window(self) -> Any: ...

    @abstractmethod
    def current_processing_time(self) -> int: ...

    @abstractmethod
    def current_watermark(self) -> int: ...

    @abstractmethod
    def window_state(self) -> Any:
        """Keyed state scoped to this key and window (clean it up in ``clear``)."""

    @abstractmethod
    def global_state(self) -> Any:
        """Keyed state scoped to this key across all windows."""

    @abstractmethod
    def output(self, output_tag: Any, value: Any) -> None:
        """Emit ``value`` to the side output ``output_tag``."""


class ProcessWindowFunction(ABC):
    """Full-window function with context (keyed)."""

    Context = WindowContext

    @abstractmethod
    def process(self, key: Any, context: WindowContext, elements: Iterable[Any]) -> Iterable[Any]:
        ...

    def clear(self, context: WindowContext) -> None:
        """Called when the window is purged at cleanup time."""
        return None


class ProcessAllWindowFunction(ABC):
    """Full-window function with context (non-keyed ``windowAll``)."""

    Context = WindowContext

    @abstractmethod
    def process(self, context: WindowContext, elements: Iterable[Any]) -> Iterable[Any]: ...

    def clear(self, context: WindowContext) -> None:
        return None


class WindowFunction(ABC):
    """Full-window function without context (keyed)."""

    @abstractmethod
    def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterable[Any]: ...


class AllWindowFunction(ABC):
    """Full-window function without context (non-keyed)."""

    @abstractmethod
    def apply(self, window: Any, inputs: Iterable[Any]) -> Iterable[Any]: ...


class KeySelector(ABC):
    """Extracts the key of an element."""

    @abstractmethod
    def get_key(self, value: Any) -> Any: ...


class FieldKeySelector(KeySelector):
    """Keys by one field (the key is the field's value) or several (the key is a tuple)."""

    def __init__(self, fields: str | Iterable[str]) -> None:
        self.fields = [fields] if isinstance(fields, str) else list(fields)
        if not self.fields:
            raise ValueError("keyBy needs at least one field")
        self.single = len(self.fields) == 1

    def get_key(self, value: Any) -> Any:
        if self.single:
            return value[self.fields[0]]
        return tuple(value[f] for f in self.fields)

    def __repr__(self) -> str:
        return f"FieldKeySelector({self.fields})"


class CallableKeySelector(KeySelector):
    """Keys by a user callable."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def get_key(self, value: Any) -> Any:
        return self.fn(value)
