"""``KeyedStream``: a stream partitioned by key columns or a key selector (Flink's
``KeyedStream``); ``window``/``countWindow`` make it a
:class:`~flinkwin.datastream.windowed_stream.WindowedStream`.

As in PyFlink, a ``KeyedStream`` is a ``DataStream`` of the elements it keys:
``execute_and_collect()``, ``toDF()``, ``print()``, ``add_sink()``, ``get_type()``,
``window_all()``, ``union()``... see those elements, while ``map``, ``flat_map``, ``filter``,
``reduce``, ``process`` and the rolling aggregations are keyed (they see the key's state), and
the operator hints PyFlink refuses on a keyed stream (``name``, ``uid``, ``set_parallelism``...)
raise as PyFlink's do."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from flinkwin.assigners.base import WindowAssigner
from flinkwin.datastream.data_stream import DataStream
from flinkwin.datastream.graph_stream import GraphResultStream
from flinkwin.datastream.interval_join import IntervalJoin, check_key_types
from flinkwin.datastream.keyed_reduce import Accumulate, KeyedTransform, RollingReduce
from flinkwin.datastream.windowed_stream import (
    WindowedStream,
    _count_window_state,
    _pyflink_count_window_state,
    _window_state,
    _WindowState,
)
from flinkwin.errors import UnsupportedOperationError
from flinkwin.functions.process import KeyedProcessFunction, ProcessFunction
from flinkwin.functions.transform import function_label
from flinkwin.runtime_mode import RuntimeExecutionMode, effective_mode
from flinkwin.spark.graph import combine, plan_of
from flinkwin.spark.graph_nodes import interval_join_node, process_node
from flinkwin.types import TypeInformation, declared_output

if TYPE_CHECKING:
    from pyspark.sql import DataFrame
    from pyspark.sql.streaming import StreamingQuery

    from flinkwin.datastream.windowed_stream import AllWindowedStream
    from flinkwin.watermark import WatermarkStrategy


class KeyedStream(DataStream):
    """A stream partitioned by key columns or by a key selector; a ``DataStream`` of the
    elements it keys (see module docstring)."""

    def __init__(
        self,
        stream: DataStream,
        keys: list[str] | None,
        key_selector: Any = None,
        key_type: TypeInformation | None = None,
    ) -> None:
        self._stream = stream
        self._keys = keys
        self._key_selector = key_selector
        self._key_type = key_type
        self._hints: dict[str, Any] = {}

    # the DataStream surface reads the keyed stream's elements: the stream it keys
    @property
    def _df(self) -> DataFrame:  # type: ignore[override]
        return self._stream._df

    @property
    def _key_groups(self) -> int:  # type: ignore[override]
        return self._stream._key_groups

    @property
    def _max_parallelism(self) -> int | None:  # type: ignore[override]
        return self._stream._max_parallelism

    @property
    def _watermark(self) -> WatermarkStrategy | None:  # type: ignore[override]
        return self._stream._watermark

    @property
    def _runtime_mode(self) -> RuntimeExecutionMode:  # type: ignore[override]
        return self._stream._runtime_mode

    @property
    def _type_info(self) -> TypeInformation | None:  # type: ignore[override]
        return self._stream._type_info

    @property
    def _plan(self) -> Any:
        return self._stream._plan

    def _keyed(self, state: _WindowState) -> _WindowState:
        """``state`` keyed by this stream's key selector (if it has one)."""
        return dataclasses.replace(
            state, key_selector=self._key_selector, key_type=self._key_type
        )

    def _state(self, assigner: Any) -> _WindowState:
        return self._keyed(_window_state(self._stream, self._keys, assigner))

    def window(self, window_assigner: WindowAssigner) -> WindowedStream:
        """Windows per key, assigned by ``window_assigner``."""
        return WindowedStream(self._state(window_assigner))

    def countWindow(self, size: int, slide: int | None = None) -> WindowedStream:  # noqa: N802
        """Java's ``countWindow`` (see ``DataStream.countWindowAll``)."""
        return WindowedStream(
            self._keyed(_count_window_state(self._stream, self._keys, size, slide))
        )

    def count_window(self, size: int, slide: int = 0) -> WindowedStream:
        """PyFlink's ``count_window``: ``CountTumblingWindowAssigner(size)``, or with a
        ``slide``: ``CountSlidingWindowAssigner(size, slide)``, which fires only full windows."""
        return WindowedStream(
            self._keyed(_pyflink_count_window_state(self._stream, self._keys, size, slide))
        )


    def process(
        self, func: Any, output_type: Any = None, *, output_schema: Any = None
    ) -> DataStream:
        """Flink's ``KeyedProcessOperator``: ``func.process_element(value, ctx)`` per element
        with the key's state and timers (``ctx.timer_service()``), ``func.on_timer(timestamp,
        ctx)`` when a timer fires; outputs are returned or yielded, side outputs yielded as
        ``(tag, value)`` or sent with ``ctx.output(tag, value)``. ``output_type`` (or
        ``output_schema``) as for ``map`` (None: pickled values). Runs in the stage of the
        stream's graph (see the porting guide, docs/porting.md)."""
        if not isinstance(func, (KeyedProcessFunction, ProcessFunction)):
            raise TypeError("KeyedProcessFunction is required for KeyedStream.")
        declared = declared_output(output_type, output_schema)
        plan = plan_of(self._stream)
        result = GraphResultStream(plan.with_node(process_node(func, self._key(), declared,
                                                               plan, self._key_type)))
        result._origin = getattr(func, "label", f"process({function_label(func)})")
        return result

    def map(
        self, func: Any, output_type: Any = None, *, output_schema: Any = None
    ) -> DataStream:
        """PyFlink's keyed ``map``: one output per element, from a function whose
        ``open(runtime_context)`` sees the current key's state (a ``KeyedProcessFunction``
        underneath, as in PyFlink); ``output_type``/``output_schema`` as for
        ``DataStream.map``."""
        return self.process(KeyedTransform(func, "map"),
                            declared_output(output_type, output_schema))

    def flat_map(
        self, func: Any, output_type: Any = None, *, output_schema: Any = None
    ) -> DataStream:
        """PyFlink's keyed ``flat_map`` (see ``map``)."""
        return self.process(KeyedTransform(func, "flat_map"),
                            declared_output(output_type, output_schema))

    def filter(self, func: Any) -> DataStream:
        """PyFlink's keyed ``filter`` (see ``map``): the elements, with this stream's type,
        for which ``func`` is true."""
        return self.process(KeyedTransform(func, "filter"), self._own_type())

    flatMap = flat_map  # noqa: N815

    def reduce(self, func: Any) -> Any:
        """Flink's rolling ``reduce`` without a window: ``func(current, value)`` (or a
        ``ReduceFunction``) per element, emitting the key's new value (in ``BATCH`` mode only
        each key's final value); the outputs have this stream's type, as in PyFlink
        (see :mod:`flinkwin.datastream.keyed_reduce`)."""
        batch = effective_mode(self._stream._runtime_mode, self._stream._public_df().isStreaming)
        return self.process(
            RollingReduce(func, batch is RuntimeExecutionMode.BATCH), self._own_type()
        )

    def _own_type(self) -> Any:
        """This stream's element type as an ``output_type`` (None: pickled values)."""
        head = plan_of(self._stream).head_type
        if head.pickled:
            return None
        return head.schema if head.type_info is None else head.type_info

    def _accumulate(self, position: int | str, kind: str) -> Any:
        return self.reduce(Accumulate(position, kind))

    def sum(self, position_to_sum: int | str = 0) -> Any:
        """The rolling sum of field ``position_to_sum`` per key (PyFlink's ``sum``)."""
        return self._accumulate(position_to_sum, "sum")

    def min(self, position_to_min: int | str = 0) -> Any:
        """The rolling minimum of field ``position_to_min`` per key, other fields from the
        key's first element (PyFlink's ``min``)."""
        return self._accumulate(position_to_min, "min")

    def max(self, position_to_max: int | str = 0) -> Any:
        """The rolling maximum of field ``position_to_max`` per key (PyFlink's ``max``)."""
        return self._accumulate(position_to_max, "max")

    def min_by(self, position_to_min_by: int | str = 0) -> Any:
        """The element with the smallest field ``position_to_min_by`` so far per key (the
        earlier one on ties; PyFlink's ``min_by``)."""
        return self._accumulate(position_to_min_by, "min_by")

    def max_by(self, position_to_max_by: int | str = 0) -> Any:
        """The element with the largest field ``position_to_max_by`` so far per key (the
        earlier one on ties; PyFlink's ``max_by``)."""
        return self._accumulate(position_to_max_by, "max_by")

    minBy = min_by  # noqa: N815
    maxBy = max_by  # noqa: N815

    def intervalJoin(self, other_stream: KeyedStream) -> Any:  # noqa: N802
        """Flink's interval join: ``a.key_by(...).interval_join(b.key_by(...))
        .between(lower, upper).process(ProcessJoinFunction, output_type)``: each pair of
        elements with equal keys where ``a.ts + lower <= b.ts <= a.ts + upper``, with
        timestamp ``max(a.ts, b.ts)`` (see docs/windows/interval-join.md)."""
        return IntervalJoin(self, other_stream)

    interval_join = intervalJoin

    def _key(self) -> Any:
        return self._key_selector if self._key_selector is not None else self._keys

    def _interval_join(self, spec: Any) -> Any:
        """The stream of a finished interval join (``spec.right`` is the other keyed stream)."""
        right = spec.right
        check_key_types(self, right)
        plan, heads = combine([plan_of(self._stream), plan_of(right._stream)])
        key_type = self._key_type if self._key_type is not None else right._key_type
        node = interval_join_node(spec, self._key(), right._key(), plan, heads, key_type)
        return GraphResultStream(plan.with_node(node))

    # --------------------------------------- the elements, as the stream they key
    def print(self, sink_identifier: str | None = None) -> StreamingQuery | None:
        """Print the elements, as PyFlink's ``KeyedStream.print()`` does (see
        ``DataStream.print``)."""
        return self._stream.print(sink_identifier)

    def add_sink(self, sink_func: Any) -> StreamingQuery | None:
        """Deliver the elements to ``sink_func``, as PyFlink's ``KeyedStream.add_sink`` does
        (see ``DataStream.add_sink``)."""
        return self._stream.add_sink(sink_func)

    def keyBy(  # noqa: N802
        self, *keys: Any, key_selector: Any = None, key_type: Any = None
    ) -> KeyedStream:
        """Key the elements anew (PyFlink's ``KeyedStream.key_by`` keys the stream it keyed)."""
        return self._stream.keyBy(*keys, key_selector=key_selector, key_type=key_type)

    def union(self, *streams: DataStream) -> DataStream:
        """The union of the elements with ``streams`` (see ``DataStream.union``)."""
        return self._stream.union(*streams)

    def join(self, other_stream: DataStream) -> Any:
        """A window join of the elements (see ``DataStream.join``)."""
        return self._stream.join(other_stream)

    def coGroup(self, other_stream: DataStream) -> Any:  # noqa: N802
        """A window coGroup of the elements (see ``DataStream.coGroup``)."""
        return self._stream.coGroup(other_stream)

    def windowAll(self, window_assigner: WindowAssigner) -> AllWindowedStream:  # noqa: N802
        """Windows over all the elements (see ``DataStream.windowAll``)."""
        return self._stream.windowAll(window_assigner)

    def countWindowAll(  # noqa: N802
        self, size: int, slide: int | None = None
    ) -> AllWindowedStream:
        """See ``DataStream.countWindowAll``."""
        return self._stream.countWindowAll(size, slide)

    def count_window_all(self, size: int, slide: int = 0) -> AllWindowedStream:
        """See ``DataStream.count_window_all``."""
        return self._stream.count_window_all(size, slide)

    def assignTimestampsAndWatermarks(  # noqa: N802
        self, watermark_strategy: Any
    ) -> DataStream:
        """The elements with timestamps and watermarks (a ``DataStream``, as in PyFlink)."""
        return self._stream.assignTimestampsAndWatermarks(watermark_strategy)

    # ------------------------------- the operator hints PyFlink refuses on a keyed stream
    def _hint(self, key: str, value: Any, kind: type) -> Any:
        if key == "partitioning":  # PyFlink's and Flink's message
            raise UnsupportedOperationError("Cannot override partitioning for KeyedStream.")
        raise UnsupportedOperationError(
            f"{_REFUSED_HINTS[key]} is not supported, as in PyFlink: set it on the operator "
            "after the keyed stream (its map, process, window function...)"
        )

    def get_name(self) -> str | None:
        """Refused, as PyFlink's ``KeyedStream.get_name``."""
        raise UnsupportedOperationError("Get name of KeyedStream is not supported.")

    key_by = keyBy
    co_group = coGroup
    window_all = windowAll
    assign_timestamps_and_watermarks = assignTimestampsAndWatermarks
    addSink = add_sink


#: PyFlink's messages for the operator hints a keyed stream refuses.
_REFUSED_HINTS = {
    "name": "Set name for KeyedStream",
    "uid": "Set uid for KeyedStream",
    "uid_hash": "Set uid hash for KeyedStream",
    "parallelism": "Set parallelism for KeyedStream",
    "max_parallelism": "Set max parallelism for KeyedStream",
    "buffer_timeout": "Set buffer timeout for KeyedStream",
    "chaining": "Chaining for KeyedStream",
    "slot_sharing_group": "Setting slot sharing group for KeyedStream",
    "description": "Set description for KeyedStream",
}


__all__ = ["KeyedStream"]
