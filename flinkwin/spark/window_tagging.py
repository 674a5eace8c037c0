"""Window tagging for ``with_window=True``: every main output of a window stage arrives as
``Windowed(value, window)``, so the runtime can append the window's bounds as columns
(``window_start``, ``window_end``). A reduce/aggregate gets a pass-through window function (as
Flink users write ``reduce(f, ProcessWindowFunction)`` to see the window); a window function is
wrapped, its side outputs passed through untouched."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from flinkwin.functions.base import (
    AllWindowFunction,
    ProcessAllWindowFunction,
    ProcessWindowFunction,
    WindowFunction,
)
from flinkwin.functions.internal import iterate_outputs, open_function, resolve_window_function
from flinkwin.output_tag import OutputTag


class Windowed:
    """A main output paired with the window that produced it (for ``with_window=True``)."""

    __slots__ = ("value", "window")

    def __init__(self, value: Any, window: Any) -> None:
        self.value = value
        self.window = window


def _tag(outputs: Iterable[Any], window: Any) -> Iterator[Any]:
    for out in outputs:
        if type(out) is tuple and len(out) == 2 and isinstance(out[0], OutputTag):
            yield out  # a side output, passed through untouched
        else:
            yield Windowed(out, window)


class _Forwarding:
    """Opens and closes the wrapped user function."""

    fn: Any

    def open(self, runtime_context: Any) -> None:
        if self.fn is not None:
            open_function(self.fn, runtime_context)

    def close(self) -> None:
        close = getattr(self.fn, "close", None)
        if callable(close):
            close()


class _TagProcess(_Forwarding, ProcessWindowFunction):
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def process(self, key: Any, context: Any, elements: Iterable[Any]) -> Iterator[Any]:
        if self.fn is None:
            return _tag(elements, context.window())
        result = self.fn.process(key, context, elements)
        return _tag(iterate_outputs(result, f"{type(self.fn).__name__}.process"),
                    context.window())

    def clear(self, context: Any) -> None:
        if self.fn is not None:
            self.fn.clear(context)


class _TagProcessAll(_Forwarding, ProcessAllWindowFunction):
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def process(self, context: Any, elements: Iterable[Any]) -> Iterator[Any]:
        if self.fn is None:
            return _tag(elements, context.window())
        result = self.fn.process(context, elements)
        return _tag(iterate_outputs(result, f"{type(self.fn).__name__}.process"),
                    context.window())

    def clear(self, context: Any) -> None:
        if self.fn is not None:
            self.fn.clear(context)


class _TagApply(_Forwarding, WindowFunction):
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> Iterator[Any]:
        result = self.fn.apply(key, window, inputs)
        return _tag(iterate_outputs(result, f"{type(self.fn).__name__}.apply"), window)


class _TagApplyAll(_Forwarding, AllWindowFunction):
    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def apply(self, window: Any, inputs: Iterable[Any]) -> Iterator[Any]:
        result = self.fn.apply(window, inputs)
        return _tag(iterate_outputs(result, f"{type(self.fn).__name__}.apply"), window)


_TAGGERS = {
    "process": _TagProcess,
    "process_all": _TagProcessAll,
    "apply": _TagApply,
    "apply_all": _TagApplyAll,
}


def with_window_tagging(function: Any, keyed: bool) -> Any:
    """``function`` changed so every main output arrives as ``Windowed(value, window)``: a
    reduce/aggregate gets a pass-through window function (as Flink users write
    ``reduce(f, ProcessWindowFunction)`` to see the window); a window function is wrapped."""
    spec = resolve_window_function(function, has_evictor=False)
    incremental = spec.reduce_fn if spec.reduce_fn is not None else spec.agg_fn
    if spec.window_fn is None:
        tagger = _TagProcess(None) if keyed else _TagProcessAll(None)
        return (incremental, tagger)
    assert spec.window_kind is not None
    wrapped = _TAGGERS[spec.window_kind](spec.window_fn)
    return wrapped if incremental is None else (incremental, wrapped)



__all__ = ["Windowed", "with_window_tagging"]
