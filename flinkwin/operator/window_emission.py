"""How a window operator emits a fired window (Flink's ``WindowOperator.emitWindowContents``,
``EvictingWindowOperator``'s with the evictor, and the ``InternalWindowFunction`` wrappers):
the window's contents through the window function, if any, and its outputs to the main
output (tagged with their firing when asked) or, for ``(OutputTag, value)``, a side output,
each with timestamp ``window.max_timestamp()``. A failed call is passed on by
:func:`flinkwin.errors.raise_failure`, naming the key and window."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from flinkwin.errors import raise_failure
from flinkwin.evictors.base import TimestampedValue
from flinkwin.functions.internal import AGGREGATING, REDUCING, iterate_outputs
from flinkwin.keys import user_key
from flinkwin.operator.contexts import ProcessContext
from flinkwin.operator.firings import Fired
from flinkwin.output_tag import OutputTag

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator


def fire(
    op: WindowOperator, key: Any, window: Any, slot: tuple[Any, Any], contents: Any,
    is_last: bool,
) -> None:
    """FIRE ``window``: its firing recorded (when firing metadata is tracked), then its
    contents emitted."""
    if op.firings is None:
        op._emit_window_contents(key, window, slot, contents)
        return
    op.current_firing = op.firings.fire(
        (key, window), window.max_timestamp(), op._clock(), is_last
    )
    try:
        op._emit_window_contents(key, window, slot, contents)
    finally:
        op.current_firing = None


def emit_window_contents(
    op: WindowOperator, key: Any, window: Any, slot: tuple[Any, Any], contents: Any
) -> None:
    """Emit FIREd ``window``'s ``contents`` (its state: a reduced value, an accumulator, or
    the elements), through the evictor when there is one."""
    try:
        spec = op.spec
        op.current_key = key
        op.num_windows_fired += 1
        if op.evictor is not None:
            op._emit_evicting(key, window, slot, contents)
        elif spec.state_kind == REDUCING:
            op.emit_window_values(key, window, [contents])
        elif spec.state_kind == AGGREGATING:
            op.emit_window_values(key, window, [spec.agg_fn.get_result(contents)])
        else:
            op.emit_window_values(key, window, list(contents))
    except Exception as exc:
        raise_failure(exc, key, window)


def fire_windows(
    op: WindowOperator, keys: Sequence[Any], windows: Sequence[Any],
    elements: Iterable[Sequence[Any]],
) -> None:
    """FIRE, in turn, windows of list state: ``keys[i]``'s window ``windows[i]`` with
    ``elements``' i-th (handed to the window function as it is), as a timer's FIRE does
    with each window's contents; one loop, the function's kind looked up once."""
    spec = op.spec
    fn = spec.window_fn
    if fn is None or spec.window_kind != "process":
        for key, window, values in zip(keys, windows, elements):
            op._fire_one(key, window, values)
        return
    where = f"{type(fn).__name__}.process"
    emit = op._emit_outputs
    key = window = None
    try:
        for key, window, values in zip(keys, windows, elements):
            op.current_key = key
            op.num_windows_fired += 1
            timestamp = window.max_timestamp()
            result = fn.process(user_key(key), ProcessContext(op, key, window), values)
            emit(iterate_outputs(result, where), timestamp)
    except Exception as exc:
        raise_failure(exc, key, window)


def fire_one(op: WindowOperator, key: Any, window: Any, elements: Sequence[Any]) -> None:
    """FIRE ``key``'s ``window`` with ``elements`` (``fire_windows``' per-window path)."""
    op.current_key = key
    op.num_windows_fired += 1
    try:
        op.emit_window_values(key, window, elements)
    except Exception as exc:
        raise_failure(exc, key, window)


def emit_evicting(
    op: WindowOperator, key: Any, window: Any, slot: tuple[Any, Any],
    contents: list[tuple[Any, int]],
) -> None:
    """Flink's ``EvictingWindowOperator``: evict before, reduce or aggregate what is left (if
    the function does), emit, evict after; the window keeps the elements left."""
    assert op.evictor is not None
    elements = [TimestampedValue(v, ts) for v, ts in contents]
    op.evictor.evict_before(elements, len(elements), window, op._evictor_ctx)
    values = [e.value for e in elements]
    spec = op.spec
    if spec.reduce_fn is not None:
        if values:
            reduced = values[0]
            for v in values[1:]:
                reduced = spec.reduce(reduced, v)
            values = [reduced]
    elif spec.agg_fn is not None:
        acc = spec.agg_fn.create_accumulator()
        for v in values:
            acc = spec.agg_fn.add(v, acc)
        values = [spec.agg_fn.get_result(acc)]
    op.emit_window_values(key, window, values)
    op.evictor.evict_after(elements, len(elements), window, op._evictor_ctx)
    if elements:
        op.window_contents[slot] = [(e.value, e.timestamp) for e in elements]
    else:
        op.window_contents.pop(slot, None)


def emit_window_values(
    op: WindowOperator, key: Any, window: Any, values: Sequence[Any]
) -> None:
    """Run the full-window function (if any) over ``values`` and emit its outputs with
    timestamp ``window.max_timestamp()``."""
    spec = op.spec
    timestamp = window.max_timestamp()
    fn = spec.window_fn
    if fn is None:
        outputs: Iterable[Any] = values
    else:
        kind = spec.window_kind
        if kind == "process":
            result = fn.process(user_key(key), ProcessContext(op, key, window), values)
        elif kind == "process_all":
            result = fn.process(ProcessContext(op, key, window), values)
        elif kind == "apply":
            result = fn.apply(user_key(key), window, values)
        else:
            result = fn.apply(window, values)
        method = "process" if kind in ("process", "process_all") else "apply"
        outputs = iterate_outputs(result, f"{type(fn).__name__}.{method}")
    op._emit_outputs(outputs, timestamp)


def emit_outputs(op: WindowOperator, outputs: Iterable[Any], timestamp: int) -> None:
    """Emit a window's ``outputs`` with ``timestamp``: ``(OutputTag, value)`` to that side
    output, the rest to the main output (as ``Fired(value, firing)`` when firings are
    tagged)."""
    firing = op.current_firing if op.tag_firings else None
    output = op._output
    for out in outputs:
        if type(out) is tuple and len(out) == 2 and isinstance(out[0], OutputTag):
            op.emit_side(out[0], out[1], timestamp)
        elif firing is not None:
            output.append((Fired(out, firing), timestamp))
        else:
            output.append((out, timestamp))


__all__ = [
    "emit_evicting", "emit_outputs", "emit_window_contents", "emit_window_values", "fire",
    "fire_one", "fire_windows",
]
