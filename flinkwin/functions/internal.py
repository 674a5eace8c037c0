"""How a window's contents are kept and turned into outputs (Flink's ``InternalWindowFunction``
and the window-state descriptor ``WindowedStream`` picks).

``resolve_window_function`` classifies what the user passed:
- a reduce (``ReduceFunction``, built-in aggregation or plain callable): REDUCING state;
- an ``AggregateFunction``: AGGREGATING state;
- a full-window function alone: LIST state;
- a ``(reduce_or_aggregate, window_function)`` pair: incremental state, the window function sees
  the single result;
- with an evictor, state is always LIST (with timestamps); the reduce/aggregate is applied to the
  remaining elements when the window fires.
"""

from __future__ import annotations

import contextlib
import inspect
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from flinkwin.functions.base import (
    AggregateFunction,
    AllWindowFunction,
    Function,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    ReduceFunction,
    WindowFunction,
)
from flinkwin.functions.builtin import BuiltinAggregation
from flinkwin.record import Row, checked_reduce_result

REDUCING = "reducing"
AGGREGATING = "aggregating"
LIST = "list"


def _is_aggregate(fn: Any) -> bool:
    return isinstance(fn, AggregateFunction) or (
        hasattr(fn, "create_accumulator") and hasattr(fn, "add") and hasattr(fn, "get_result")
    )


def _is_reduce(fn: Any) -> bool:
    return isinstance(fn, ReduceFunction) or hasattr(fn, "reduce") or (
        callable(fn) and not isinstance(fn, type) and not _window_kind(fn)
    )


def _window_kind(fn: Any) -> str | None:
    """'process', 'process_all', 'apply', 'apply_all' or None."""
    if isinstance(fn, ProcessAllWindowFunction):
        return "process_all"
    if isinstance(fn, ProcessWindowFunction):
        return "process"
    if isinstance(fn, AllWindowFunction):
        return "apply_all"
    if isinstance(fn, WindowFunction):
        return "apply"
    for method, keyed, non_keyed in (("process", "process", "process_all"),
                                     ("apply", "apply", "apply_all")):
        bound = getattr(fn, method, None)
        if bound is not None and callable(bound):
            try:
                n = len(inspect.signature(bound).parameters)
            except (TypeError, ValueError):
                n = 3
            return keyed if n >= 3 else non_keyed
    return None


@dataclass
class WindowFunctionSpec:
    """The resolved window function: state kind, incremental part and full-window part."""

    state_kind: str
    reduce_fn: Any = None
    agg_fn: Any = None
    window_fn: Any = None
    window_kind: str | None = None

    @property
    def builtin(self) -> BuiltinAggregation | None:
        return self.reduce_fn if isinstance(self.reduce_fn, BuiltinAggregation) else None

    def reduce(self, a: Any, b: Any) -> Any:
        """Apply the reduce function; its result is passed on as returned, as PyFlink does
        (see :func:`flinkwin.record.checked_reduce_result`)."""
        fn = self.reduce_fn
        return checked_reduce_result(fn.reduce(a, b) if hasattr(fn, "reduce") else fn(a, b), a)

    def describe(self) -> str:
        parts = []
        if self.reduce_fn is not None:
            parts.append(f"reduce={self.reduce_fn!r}")
        if self.agg_fn is not None:
            parts.append(f"aggregate={type(self.agg_fn).__name__}")
        if self.window_fn is not None:
            parts.append(f"{self.window_kind}={type(self.window_fn).__name__}")
        return ", ".join(parts)


def resolve_window_function(function: Any, has_evictor: bool) -> WindowFunctionSpec:
    """Classify ``function`` (see module docstring); raise a clear ``TypeError`` otherwise."""
    incremental: Any = None
    window_fn: Any = None
    if isinstance(function, (tuple, list)):
        if len(function) != 2:
            raise TypeError(
                "a window function pair must be (reduce_or_aggregate, window_function), "
                f"got {len(function)} items"
            )
        incremental, window_fn = function
        if _window_kind(window_fn) is None:
            raise TypeError(
                "the second item of a window function pair must be a ProcessWindowFunction or "
                f"WindowFunction, got {type(window_fn).__name__}"
            )
    elif _window_kind(function) is not None and not _is_aggregate(function):
        window_fn = function
    else:
        incremental = function

    reduce_fn = agg_fn = None
    if incremental is not None:
        if _is_aggregate(incremental):
            agg_fn = incremental
        elif _is_reduce(incremental):
            reduce_fn = incremental
        else:
            raise TypeError(
                "window function must be a ReduceFunction (or callable(a, b)), an "
                "AggregateFunction, a ProcessWindowFunction, a WindowFunction or a pair; "
                f"got {type(incremental).__name__}"
            )
    if has_evictor:
        kind = LIST
    elif reduce_fn is not None:
        kind = REDUCING
    elif agg_fn is not None:
        kind = AGGREGATING
    else:
        kind = LIST
    return WindowFunctionSpec(
        kind, reduce_fn, agg_fn, window_fn, _window_kind(window_fn) if window_fn else None
    )


#: What a window function usually returns: a generator (``yield``), a list or a plain tuple.
_PLAIN_ITERABLES = frozenset({types.GeneratorType, list, tuple})


def iterate_outputs(result: Any, where: str) -> Iterable[Any]:
    """The outputs of a user window function: an iterable (list, generator...) or None."""
    if type(result) in _PLAIN_ITERABLES:  # (the common results, without the ABC checks)
        return result
    if result is None:
        return ()
    if isinstance(result, (str, bytes, Mapping, Row)) or not isinstance(result, Iterable):
        raise TypeError(
            f"{where} must return an iterable of outputs (a list, or use yield), "
            f"got {type(result).__name__}: {result!r}"
        )
    return result


def function_kind(fn: Any) -> str | None:
    """What ``fn`` is, judged as ``resolve_window_function`` judges a single function:
    ``"aggregate"``, ``"reduce"``, a window kind (``"process"``, ``"process_all"``,
    ``"apply"``, ``"apply_all"``) or None (none of these)."""
    if _is_aggregate(fn):
        return "aggregate"
    kind = _window_kind(fn)
    if kind is not None:
        return kind
    return "reduce" if _is_reduce(fn) else None


class _CalledAs(Function):
    """A full-window function handed to the ``process``/``apply`` of the other kind of stream
    (a ``ProcessWindowFunction`` subclass after ``window_all``...). PyFlink calls whatever it is
    given by method name, so such a function works when its method takes the arguments that
    stream passes; this adapter makes flinkwin call it the same way."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def open(self, runtime_context: Any) -> None:
        open_function(self.fn, runtime_context)

    def close(self) -> None:
        close = getattr(self.fn, "close", None)
        if callable(close):
            close()

    def clear(self, context: Any) -> None:
        clear = getattr(self.fn, "clear", None)
        if callable(clear):
            clear(context)

    def __repr__(self) -> str:
        return repr(self.fn)


class _ProcessCalledAs(_CalledAs, ProcessWindowFunction):
    def process(self, key: Any, context: Any, elements: Any) -> Any:
        return self.fn.process(key, context, elements)


class _ProcessAllCalledAs(_CalledAs, ProcessAllWindowFunction):
    def process(self, context: Any, elements: Any) -> Any:  # type: ignore[override]
        return self.fn.process(context, elements)


class _ApplyCalledAs(_CalledAs, WindowFunction):
    def apply(self, key: Any, window: Any, inputs: Any) -> Any:
        return self.fn.apply(key, window, inputs)


class _ApplyAllCalledAs(_CalledAs, AllWindowFunction):
    def apply(self, window: Any, inputs: Any) -> Any:  # type: ignore[override]
        return self.fn.apply(window, inputs)


#: What each kind of full-window function is called with, as PyFlink calls it.
CALL_ARGUMENTS = {
    "process": ("key", "context", "elements"),
    "process_all": ("context", "elements"),
    "apply": ("key", "window", "inputs"),
    "apply_all": ("window", "inputs"),
}
_ADAPTERS: dict[str, type[_CalledAs]] = {
    "process": _ProcessCalledAs,
    "process_all": _ProcessAllCalledAs,
    "apply": _ApplyCalledAs,
    "apply_all": _ApplyAllCalledAs,
}


def called_as(fn: Any, kind: str) -> Any | None:
    """``fn`` as a full-window function of ``kind``, the way PyFlink calls it (its
    ``process``/``apply`` method by name, whatever its class), or None when that method is
    missing or does not take ``kind``'s arguments (:data:`CALL_ARGUMENTS`)."""
    method = getattr(fn, "process" if kind.startswith("process") else "apply", None)
    if isinstance(fn, type) or not callable(method) or _is_aggregate(fn):
        return None
    try:
        inspect.signature(method).bind(*CALL_ARGUMENTS[kind])
    except TypeError:
        return None
    except ValueError:  # no signature to inspect: call it as PyFlink would
        pass
    return fn if _window_kind(fn) == kind else _ADAPTERS[kind](fn)


def open_function(fn: Any, runtime_context: Any) -> None:
    """``fn.open(runtime_context)`` if ``fn`` has it; ``fn.get_runtime_context()`` returns the
    context from then on."""
    open_ = getattr(fn, "open", None)
    if not callable(open_):
        return
    with contextlib.suppress(AttributeError):  # no instance dict: no get_runtime_context
        fn.__dict__["_flinkwin_runtime_context"] = runtime_context
    open_(runtime_context)
