"""The operations of a :class:`~flinkwin.datastream.data_stream.DataStream` that build a
stream graph (Flink's multi-input and process transformations): ``union``, window ``join``
and ``coGroup``, ``process``, and steps (``map``...) inside a graph. Each returns a
:class:`~flinkwin.datastream.graph_stream.GraphResultStream`; the graph runs as one stage (see
:mod:`flinkwin.spark.graph`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flinkwin.datastream.cogrouped_streams import CoGroupedStreams
from flinkwin.datastream.joined_streams import JoinedStreams
from flinkwin.errors import UnsupportedOperationError
from flinkwin.functions.process import ProcessFunction
from flinkwin.functions.transform import function_label
from flinkwin.operator.graph import UNION, NodeSpec
from flinkwin.spark.graph import PlanNode, StreamPlan, StreamType, combine, plan_of
from flinkwin.spark.graph_nodes import process_node, window_join_node
from flinkwin.types import declared_output
from flinkwin.unsupported import TWO_INPUTS

if TYPE_CHECKING:
    from flinkwin.datastream.data_stream import DataStream


class GraphOperations:
    """Mixed into ``DataStream``: the graph-building operations (see module docstring)."""

    _plan: Any
    _origin: str | None

    def _graph_step(
        self, kind: str, rich: Any, function: Any, out_schema: Any, type_info: Any
    ) -> DataStream:
        """``map``/``flat_map``/``filter`` inside this stream's graph (see ``union``)."""
        plan = self._plan
        output = plan.head_type if out_schema is None else StreamType(out_schema, type_info)
        spec = NodeSpec(
            name=kind, kind=kind, inputs=((plan.head, 0),), function=function,
            rich=rich if not callable(rich) or hasattr(rich, "open") else None,
            shape=output.shape(),
        )
        return _graph_result(plan.with_node(PlanNode(spec, output)))

    def process(
        self, func: Any, output_type: Any = None, *, output_schema: Any = None
    ) -> DataStream:
        """Flink's ``ProcessOperator``: ``func.process_element(value, ctx)`` per element of a
        non-keyed stream (no keyed state, no timers); ``output_type``/``output_schema`` as for
        ``map``."""
        if not isinstance(func, ProcessFunction):
            raise TypeError("ProcessFunction is required for DataStream.")
        declared = declared_output(output_type, output_schema)
        plan = plan_of(self)
        result = _graph_result(plan.with_node(process_node(func, None, declared, plan)))
        result._origin = f"process({function_label(func)})"
        return result

    def union(self, *streams: DataStream) -> DataStream:
        """Flink's ``union``: one stream of this stream's and ``streams``' elements, which must
        be of the same type (same columns and types, same declared type). Each input keeps its
        own ``WatermarkStrategy``; the operators after the union see the minimum of their
        inputs' watermarks, as Flink's do (an input without a strategy holds it at
        ``Long.MIN_VALUE``). The union and everything
        after it run as one stage (see docs/architecture.md#stream-graphs)."""
        if not streams:
            raise TypeError("union takes at least one other stream")
        for other in streams:
            if not isinstance(other, GraphOperations):
                raise TypeError(f"union takes DataStreams, got {type(other).__name__}")
        plans = [plan_of(self), *(plan_of(s) for s in streams)]
        types = [p.head_type for p in plans]
        for t in types[1:]:
            if t.schema.simpleString() != types[0].schema.simpleString() or (
                t.type_info != types[0].type_info
            ):
                raise TypeError(
                    "Cannot union streams of different types: "
                    f"{_type_name(types[0])} and {_type_name(t)}"
                )
        plan, heads = combine(plans)
        spec = NodeSpec(name="union", kind=UNION, inputs=tuple((h, 0) for h in heads))
        result = _graph_result(plan.with_node(PlanNode(spec, types[0])))
        origins = [s._origin or "a stream" for s in (self, *streams)]
        result._origin = f"the union's inputs ({', '.join(origins)})"
        return result

    def join(self, other_stream: DataStream) -> Any:
        """Flink's window join: ``a.join(b).where(key_a).equal_to(key_b).window(assigner)
        .apply(JoinFunction, output_type)``; inner join of the elements of each window with
        equal keys, one result per pair (see docs/windows/joins.md)."""
        return JoinedStreams(self, other_stream)

    def coGroup(self, other_stream: DataStream) -> Any:  # noqa: N802
        """Flink's window coGroup: ``a.co_group(b).where(...).equal_to(...).window(...)
        .apply(CoGroupFunction, output_type)``: both inputs' elements of each window and key
        as two lists (see docs/windows/joins.md)."""
        return CoGroupedStreams(self, other_stream)

    co_group = coGroup

    def connect(self, ds: Any) -> Any:
        """Flink's ``connect``: this stream and ``ds`` (of any type) as
        :class:`~flinkwin.datastream.connected_streams.ConnectedStreams`, processed by one
        co-function (``key_by(k1, k2).process(KeyedCoProcessFunction)``, ``map``,
        ``flat_map``). A broadcast stream is refused."""
        from flinkwin.datastream.connected_streams import ConnectedStreams

        return ConnectedStreams(self, ds)

    def broadcast(self, *args: Any) -> Any:
        """Refused: broadcast streams are not supported (see the message)."""
        raise UnsupportedOperationError(f"broadcast(): {TWO_INPUTS}")

    def _window_join(self, spec: Any) -> DataStream:
        """The stream of a finished window join or coGroup (``spec.first`` is this stream)."""
        plan, heads = combine([plan_of(spec.first), plan_of(spec.second)])
        return _graph_result(plan.with_node(window_join_node(spec, plan, heads)))


def _graph_result(plan: StreamPlan) -> DataStream:
    """The stream whose head is ``plan``'s last node."""
    # inherent cycle: a GraphResultStream is a DataStream, which mixes in GraphOperations
    from flinkwin.datastream.graph_stream import GraphResultStream

    return GraphResultStream(plan)


def _type_name(stream_type: Any) -> str:
    info = stream_type.type_info
    return repr(info) if info is not None else stream_type.schema.simpleString()




__all__ = ["GraphOperations"]
