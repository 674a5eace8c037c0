"""Flink's ``ConnectedStreams``: two streams of possibly different types, processed by one
operator that sees the elements of both (``a.connect(b)``), with PyFlink's API.

``key_by(key_selector1, key_selector2)`` (or connecting two keyed streams) keys both inputs:
``process(KeyedCoProcessFunction)``, ``map(CoMapFunction)`` and ``flat_map(CoFlatMapFunction)``
then run with the keyed state and timers of each element's key, shared by the two inputs (the
rules-and-events pattern, or enriching one stream with the latest element of another). Not
keyed, ``process(CoProcessFunction)``, ``map`` and ``flat_map`` run without keyed state or
timers, in one task as a non-keyed ``process`` does. The operator's watermark is the
minimum of its inputs' (see :mod:`flinkwin.operator.co_process_operator`); the operator and
the graph around it run as one stage (docs/architecture.md, "Stream graphs"). Broadcast state
(``connect(broadcast_stream)``) is not supported.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from flinkwin.datastream.interval_join import check_key_types
from flinkwin.functions.base import Function
from flinkwin.functions.co import (
    CoFlatMapFunction,
    CoMapFunction,
    CoProcessFunction,
    KeyedCoProcessFunction,
)
from flinkwin.functions.internal import iterate_outputs, open_function
from flinkwin.types import declared_output


class ConnectedStreams:
    """Two connected streams (see module docstring); ``stream1`` and ``stream2`` as PyFlink
    names them."""

    def __init__(self, stream1: Any, stream2: Any) -> None:
        # inherent cycle: DataStream.connect builds this class
        from flinkwin.datastream.data_stream import DataStream

        for name, stream in (("first", stream1), ("second", stream2)):
            if not isinstance(stream, DataStream):
                raise TypeError(
                    f"connect() takes a DataStream; the {name} stream is a "
                    f"{type(stream).__name__}"
                )
        self.stream1 = stream1
        self.stream2 = stream2

    def key_by(
        self, key_selector1: Any, key_selector2: Any, key_type: Any = None
    ) -> ConnectedStreams:
        """Key the first input by ``key_selector1`` and the second by ``key_selector2`` (each a
        column name, a list of them, a function or a ``KeySelector``), with the common
        ``key_type`` if given; keyed streams are keyed anew."""
        from flinkwin.datastream.keyed_stream import KeyedStream

        first, second = (s._stream if isinstance(s, KeyedStream) else s
                         for s in (self.stream1, self.stream2))
        return ConnectedStreams(first.key_by(key_selector1, key_type=key_type),
                                second.key_by(key_selector2, key_type=key_type))

    def map(self, func: Any, output_type: Any = None, *, output_schema: Any = None) -> Any:
        """``func.map1`` for each element of the first input, ``map2`` for the second: one
        output each (a None result emits nothing, as in PyFlink)."""
        if not isinstance(func, CoMapFunction):
            raise TypeError("The input function must be a CoMapFunction!")
        return self._process(_CoMap(func), declared_output(output_type, output_schema))

    def flat_map(self, func: Any, output_type: Any = None, *, output_schema: Any = None) -> Any:
        """``func.flat_map1`` for each element of the first input, ``flat_map2`` for the
        second: any number of outputs each."""
        if not isinstance(func, CoFlatMapFunction):
            raise TypeError("The input must be a CoFlatMapFunction!")
        return self._process(_CoFlatMap(func), declared_output(output_type, output_schema))

    def process(self, func: Any, output_type: Any = None, *, output_schema: Any = None) -> Any:
        """``func.process_element1(value, ctx)`` for each element of the first input,
        ``process_element2`` for the second; keyed, ``func.on_timer(timestamp, ctx)`` when a
        timer fires. ``output_type`` (or ``output_schema``) as for ``DataStream.map`` (None:
        pickled values)."""
        if not isinstance(func, (CoProcessFunction, KeyedCoProcessFunction)):
            raise TypeError("The input must be a CoProcessFunction or KeyedCoProcessFunction!")
        return self._process(func, declared_output(output_type, output_schema))

    def _is_keyed_stream(self) -> bool:
        from flinkwin.datastream.keyed_stream import KeyedStream

        return isinstance(self.stream1, KeyedStream) and isinstance(self.stream2, KeyedStream)

    def _process(self, func: Any, declared: Any) -> Any:
        from flinkwin.datastream.graph_stream import GraphResultStream
        from flinkwin.datastream.keyed_stream import KeyedStream
        from flinkwin.functions.transform import function_label
        from flinkwin.spark.graph import combine, plan_of
        from flinkwin.spark.graph_nodes import co_process_node

        first, second = self.stream1, self.stream2
        keys = key_type = None
        if self._is_keyed_stream():
            check_key_types(first, second)
            keys = (first._key(), second._key())
            key_type = first._key_type if first._key_type is not None else second._key_type
            first, second = first._stream, second._stream
        else:
            if isinstance(func, KeyedCoProcessFunction):
                raise TypeError(
                    f"{type(func).__name__} is a KeyedCoProcessFunction: it runs on keyed "
                    "connected streams (connect(...).key_by(key_selector1, key_selector2))"
                )
            first, second = (s._stream if isinstance(s, KeyedStream) else s
                             for s in (first, second))
        plan, heads = combine([plan_of(first), plan_of(second)])
        result = GraphResultStream(plan.with_node(
            co_process_node(func, keys, declared, plan, heads, key_type)))
        result._origin = getattr(func, "label", f"process({function_label(func)})")
        return result

    keyBy = key_by  # noqa: N815 (Java names)
    flatMap = flat_map  # noqa: N815


class _Adapter(Function):
    """PyFlink's adapters of a ``CoMapFunction``/``CoFlatMapFunction`` as a co-process
    function (keyed or not: they use neither the key nor timers); ``open`` hands the user's
    function the runtime context (its keyed state on keyed inputs)."""

    #: on a stream it registers no timers (a graph of such functions needs no timeouts)
    streams_without_timers = True
    _KIND = ""
    _NAMES = ("", "")

    def __init__(self, function: Function) -> None:
        from flinkwin.functions.transform import function_label

        self.function = function
        self.label = f"{self._KIND}({function_label(function)})"

    def _flinkwin_where(self, method: str) -> str:
        name = self._NAMES[0 if method.endswith("1") else 1]
        return f"{type(self.function).__name__}.{name}"

    def open(self, runtime_context: Any) -> None:
        open_function(self.function, runtime_context)

    def close(self) -> None:
        self.function.close()


class _CoMap(_Adapter):
    _KIND, _NAMES = "co_map", ("map1", "map2")

    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any]:
        result = self.function.map1(value)  # type: ignore[attr-defined]
        return () if result is None else (result,)

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any]:
        result = self.function.map2(value)  # type: ignore[attr-defined]
        return () if result is None else (result,)


class _CoFlatMap(_Adapter):
    _KIND, _NAMES = "co_flat_map", ("flat_map1", "flat_map2")

    def process_element1(self, value: Any, ctx: Any) -> Iterable[Any]:
        return iterate_outputs(self.function.flat_map1(value),  # type: ignore[attr-defined]
                               self._flinkwin_where("1"))

    def process_element2(self, value: Any, ctx: Any) -> Iterable[Any]:
        return iterate_outputs(self.function.flat_map2(value),  # type: ignore[attr-defined]
                               self._flinkwin_where("2"))


__all__ = ["ConnectedStreams"]
