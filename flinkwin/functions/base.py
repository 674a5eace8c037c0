"""User functions with PyFlink's Python signatures (and Java's type parameters).

- ``ReduceFunction.reduce(a, b)``: incremental; the window keeps one reduced element.
- ``AggregateFunction``: incremental; the window keeps one accumulator.
- ``ProcessWindowFunction.process(key, context, elements)``: sees all elements (or the single
  incremental result when combined with a reduce/aggregate) and the window context.
- ``WindowFunction.apply(key, window, inputs)``: the older, context-free form.
- ``ProcessAllWindowFunction`` / ``AllWindowFunction``: the same for non-keyed ``windowAll``.
Functions return (or yield) an iterable of outputs; each output is emitted with the window's
``max_timestamp()``.

Every function is a :class:`Function` (rich): ``open(runtime_context)`` runs once before the
first element, ``close()`` once at the end, and ``get_runtime_context()`` returns the context
handed to ``open``. The base classes are ``Generic`` exactly as PyFlink declares them
(``ProcessWindowFunction[IN, OUT, KEY, W]``...), plus Java's parameters where PyFlink has none
(``ReduceFunction[T]``, ``AggregateFunction[IN, ACC, OUT]``, ``KeySelector[IN, KEY]``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, Generic, TypeAlias, TypeVar

from flinkwin.functions.runtime_context import RuntimeContext
from flinkwin.java_hooks import JavaNamedHooks

T = TypeVar("T")
W = TypeVar("W")
IN = TypeVar("IN")
OUT = TypeVar("OUT")
ACC = TypeVar("ACC")
KEY = TypeVar("KEY")


class Function(JavaNamedHooks, ABC):  # noqa: B024 (PyFlink's Function has none either)
    """The base class of all user functions (Flink's ``RichFunction``). A subclass may name
    its methods as Java does (``createAccumulator``, ``onTimer``...: :mod:`flinkwin.java_hooks`)."""

    def open(self, runtime_context: RuntimeContext) -> None:
        """Called once before the first element (or timer) reaches this function."""
        return None

    def close(self) -> None:
        """Called once after the last call (at the end of a bounded job)."""
        return None

    def get_runtime_context(self) -> RuntimeContext:
        """The context handed to ``open`` (Java's ``RichFunction.getRuntimeContext``)."""
        context = self.__dict__.get("_flinkwin_runtime_context")
        if context is None:
            raise RuntimeError(
                f"{type(self).__name__}: the runtime context is only available once the "
                "function has been opened"
            )
        return context

    getRuntimeContext = get_runtime_context  # noqa: N815


class ReduceFunction(Function, Generic[T]):
    """Combines two elements into one of the same type."""

    @abstractmethod
    def reduce(self, value1: T, value2: T) -> T: ...


class AggregateFunction(Function, Generic[IN, ACC, OUT]):
    """Incremental aggregation through an accumulator."""

    _java_hooks = {"createAccumulator": "create_accumulator", "getResult": "get_result"}

    @abstractmethod
    def create_accumulator(self) -> ACC: ...

    @abstractmethod
    def add(self, value: IN, accumulator: ACC) -> ACC: ...

    @abstractmethod
    def get_result(self, accumulator: ACC) -> OUT: ...

    @abstractmethod
    def merge(self, acc_a: ACC, acc_b: ACC) -> ACC:
        """Two accumulators as one (abstract, as in PyFlink and Flink: a class without it
        cannot be instantiated). Called when merging windows (sessions) merge."""


class WindowContext(ABC, Generic[W]):
    """The context a ``ProcessWindowFunction`` (or ``ProcessAllWindowFunction``) sees."""

    @abstractmethod
    def window(self) -> W: ...

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

    def currentProcessingTime(self) -> int:  # noqa: N802 (Java names)
        return self.current_processing_time()

    def currentWatermark(self) -> int:  # noqa: N802
        return self.current_watermark()

    def windowState(self) -> Any:  # noqa: N802
        return self.window_state()

    def globalState(self) -> Any:  # noqa: N802
        return self.global_state()

    def firing(self) -> Any:
        """What this firing of the window is (a :class:`flinkwin.operator.firings.Firing`:
        timing, index, is_last...; Beam's ``PaneInfo``), when the window's result was built
        with ``with_firing=True`` (see ``docs/firings.md``)."""
        raise NotImplementedError("this context carries no firing metadata")


class ProcessWindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """Full-window function with context (keyed)."""

    Context: TypeAlias = WindowContext

    @abstractmethod
    def process(
        self, key: KEY, context: WindowContext[W], elements: Iterable[IN]
    ) -> Iterable[OUT]: ...

    def clear(self, context: WindowContext[W]) -> None:
        """Called when the window is purged at cleanup time."""
        return None


class ProcessAllWindowFunction(Function, Generic[IN, OUT, W]):
    """Full-window function with context (non-keyed ``windowAll``)."""

    Context: TypeAlias = WindowContext

    @abstractmethod
    def process(self, context: WindowContext[W], elements: Iterable[IN]) -> Iterable[OUT]: ...

    def clear(self, context: WindowContext[W]) -> None:
        return None


class WindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """Full-window function without context (keyed)."""

    @abstractmethod
    def apply(self, key: KEY, window: W, inputs: Iterable[IN]) -> Iterable[OUT]: ...


class AllWindowFunction(Function, Generic[IN, OUT, W]):
    """Full-window function without context (non-keyed)."""

    @abstractmethod
    def apply(self, window: W, inputs: Iterable[IN]) -> Iterable[OUT]: ...


class PassThroughWindowFunction(WindowFunction[IN, IN, KEY, W]):
    """PyFlink's ``PassThroughWindowFunction``: a window's elements, as they are."""

    def apply(self, key: KEY, window: W, inputs: Iterable[IN]) -> Iterable[IN]:
        return iter(inputs)


class PassThroughAllWindowFunction(AllWindowFunction[IN, IN, W]):
    """PyFlink's ``PassThroughAllWindowFunction``: a window's elements, as they are."""

    def apply(self, window: W, inputs: Iterable[IN]) -> Iterable[IN]:
        return iter(inputs)


class KeySelector(Function, Generic[IN, KEY]):
    """Extracts the key of an element."""

    _java_hooks = {"getKey": "get_key"}

    @abstractmethod
    def get_key(self, value: IN) -> KEY: ...


class NullByteKeySelector(KeySelector[Any, int]):
    """PyFlink's ``NullByteKeySelector``: one key (``0``) for every element, to run a keyed
    operator over a whole stream."""

    def get_key(self, value: Any) -> int:
        return 0


class FieldKeySelector(KeySelector):
    """Keys by one field (the key is the field's value) or several (the key is a tuple).

    Column keys are typed by their columns (they compare by value, see :mod:`flinkwin.keys`),
    and a null in any key field makes the key null, as the window stage's column keys are."""

    #: keys compare by value (flinkwin.keys.compares_by_value)
    column_keys = True

    def __init__(self, fields: str | Iterable[str]) -> None:
        self.fields = [fields] if isinstance(fields, str) else list(fields)
        if not self.fields:
            raise ValueError("keyBy needs at least one field")
        self.single = len(self.fields) == 1

    def get_key(self, value: Any) -> Any:
        if self.single:
            return value[self.fields[0]]
        key = tuple(value[f] for f in self.fields)
        return None if any(v is None for v in key) else key

    def __repr__(self) -> str:
        return f"FieldKeySelector({self.fields})"


class CallableKeySelector(KeySelector):
    """Keys by a user callable."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def get_key(self, value: Any) -> Any:
        return self.fn(value)
