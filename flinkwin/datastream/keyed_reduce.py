"""``KeyedStream``'s operations without a window, as PyFlink builds them from
``KeyedProcessFunction``s: ``reduce`` and its rolling aggregations (``sum``, ``min``, ``max``,
``min_by``, ``max_by``), holding the key's current value in keyed state, and the keyed
``map``/``flat_map``/``filter``, whose rich functions see the current key's state.

- ``STREAMING``: every element is combined with its key's current value
  (``reduce(current, element)``; a key's first element is its first value) and the new value is
  emitted, so each element yields one output, as Flink's ``StreamGroupedReduceOperator``.
- ``BATCH`` (a static DataFrame in ``BATCH``/``AUTOMATIC`` mode): only each key's final value
  is emitted, at the end of input (an event-time timer at ``MAX_LONG``), as PyFlink does.

The rolling aggregations follow PyFlink's ``KeyedStream._accumulate``: ``position`` is a field
index (or, for a Row, a field name) of a tuple, list or Row element, or 0 for a basic value;
``sum``/``min``/``max`` change that field of the current value and keep its other fields,
``min_by``/``max_by`` keep the whole element whose field is smaller/larger (the earlier one on
ties)."""

from __future__ import annotations

from typing import Any

from flinkwin.datastream.state import ValueStateDescriptor
from flinkwin.functions.base import Function, ReduceFunction
from flinkwin.functions.process import KeyedProcessFunction
from flinkwin.functions.transform import as_callable, function_label
from flinkwin.record import Row
from flinkwin.types import Types

MAX_LONG = 0x7FFFFFFFFFFFFFFF


class RollingReduce(KeyedProcessFunction):
    """The key's ``reduce`` of all its elements so far, emitted per element (``STREAMING``)
    or once at the end of input (``batch``)."""

    #: on a stream it registers no timers (a graph of such functions needs no timeouts)
    streams_without_timers = True

    def __init__(self, reduce_function: Any, batch: bool) -> None:
        if not isinstance(reduce_function, ReduceFunction) and not callable(reduce_function):
            raise TypeError(
                f"reduce takes a ReduceFunction or a callable(a, b), got {reduce_function!r}"
            )
        self._function = reduce_function
        self._batch = batch
        self._state: Any = None

    def _reduce(self, value1: Any, value2: Any) -> Any:
        if isinstance(self._function, ReduceFunction):
            return self._function.reduce(value1, value2)
        return self._function(value1, value2)

    def open(self, runtime_context: Any) -> None:
        if isinstance(self._function, ReduceFunction):
            self._function.open(runtime_context)
        self._state = runtime_context.get_state(
            ValueStateDescriptor("_reduce_state", Types.PICKLED_BYTE_ARRAY())
        )

    def close(self) -> None:
        if isinstance(self._function, ReduceFunction):
            self._function.close()

    def process_element(self, value: Any, ctx: Any) -> Any:
        current = self._state.value()
        if current is None:
            if self._batch:
                ctx.timer_service().register_event_time_timer(MAX_LONG)
            current = value
        else:
            current = self._reduce(current, value)
        self._state.update(current)
        if not self._batch:
            yield current

    def on_timer(self, timestamp: int, ctx: Any) -> Any:
        current = self._state.value()
        if current is not None:
            yield current


class Accumulate(ReduceFunction):
    """PyFlink's rolling ``sum``/``min``/``max``/``min_by``/``max_by`` of field ``position``."""

    KINDS = ("sum", "min", "max", "min_by", "max_by")

    def __init__(self, position: int | str, kind: str) -> None:
        if not isinstance(position, (int, str)) or isinstance(position, bool):
            raise TypeError(
                f"The field position must be of int or str type to locate the value to "
                f"calculate for {kind}, got {position!r}"
            )
        self._pos: Any = position
        self._kind = kind

    def _field(self, value: Any) -> Any:
        if isinstance(value, (tuple, list)):
            return value[self._pos]
        if self._pos != 0:
            raise TypeError(
                f"The {self._pos} field selected on a basic type. A field expression on a "
                f"basic type can only select the 0th field (which means selecting the entire "
                f"basic type)."
            )
        return value

    def reduce(self, value1: Any, value2: Any) -> Any:
        a, b = self._field(value1), self._field(value2)
        if self._kind == "min_by":
            return value2 if b < a else value1
        if self._kind == "max_by":
            return value2 if b > a else value1
        if self._kind == "sum":
            field = a + b
        elif self._kind == "min":
            field = b if b < a else a
        else:
            field = b if b > a else a
        if isinstance(value1, Row):
            if isinstance(self._pos, str):
                return value1.replace(self._pos, field)
            values = list(value1)
            values[self._pos] = field
            return tuple.__new__(type(value1), values)
        if isinstance(value1, tuple):
            values = list(value1)
            values[self._pos] = field
            return tuple(values)
        if isinstance(value1, list):
            updated = list(value1)
            updated[self._pos] = field
            return updated
        return field


class KeyedTransform(KeyedProcessFunction):
    """PyFlink's keyed ``map``/``flat_map``/``filter``: the function (a callable or a
    ``MapFunction``/``FlatMapFunction``/``FilterFunction``) per element, its ``open`` given the
    keyed runtime context."""

    #: on a stream it registers no timers (a graph of such functions needs no timeouts)
    streams_without_timers = True

    def __init__(self, function: Any, kind: str) -> None:
        self.label = f"{kind}({function_label(function)})"
        self._call = as_callable(function, kind, kind)
        self._rich = function if isinstance(function, Function) else None
        self._kind = kind

    def open(self, runtime_context: Any) -> None:
        if self._rich is not None:
            self._rich.open(runtime_context)

    def close(self) -> None:
        if self._rich is not None:
            self._rich.close()

    def process_element(self, value: Any, ctx: Any) -> Any:
        if self._kind == "map":
            yield self._call(value)
        elif self._kind == "flat_map":
            yield from self._call(value)
        elif self._call(value):
            yield value


__all__ = ["Accumulate", "KeyedTransform", "RollingReduce"]
