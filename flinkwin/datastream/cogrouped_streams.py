"""``CoGroupedStreams``: a window co-group of two streams (Flink's ``CoGroupedStreams``)::

    first.co_group(second)
         .where(key)                  # the first input's key: column name(s), function, KeySelector
         .equal_to(key)               # the second input's key (Java's equalTo)
         .window(assigner)
         [.trigger(t)] [.evictor(e)] [.allowed_lateness(ms)]
         [.side_output_late_data(tag)]  # flinkwin's addition: late elements of either input
         .apply(co_group_function, output_schema=...)

Both inputs' elements go into one window operator as ``TaggedUnion.one``/``TaggedUnion.two``
(see :mod:`flinkwin.operator.cogroup`): the trigger and evictor see those, and so does the late
side output. ``co_group(first, second)`` is called once per key and window that holds elements
(of either input), with both inputs' elements in the window's order (arrival order, unless
session windows merged); outputs carry the window's ``max_timestamp()``. The builders are
immutable: each step returns a new object, as Flink's do.

The two keys must have the same type when both are known (Flink: ``The keys for the two inputs
are not equal``): column keys take their columns' types, a key selector the ``key_type`` given
with it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from flinkwin.assigners.base import MergingWindowAssigner, WindowAssigner
from flinkwin.errors import MERGING_TRIGGER_MESSAGE, UnsupportedOperationError
from flinkwin.evictors.base import Evictor
from flinkwin.functions.base import KeySelector
from flinkwin.functions.join import FlatJoinFunction, JoinFunction
from flinkwin.operator.cogroup import (
    COGROUP,
    CoGroupWindowFunction,
    WindowJoinSpec,
    is_co_group_function,
)
from flinkwin.output_tag import OutputTag
from flinkwin.spark.schema import _type_info_ddl
from flinkwin.time import TimeLike, to_millis
from flinkwin.triggers.base import Trigger
from flinkwin.types import RECORD_TYPE_NAMES, TypeInformation, declared_output


@dataclasses.dataclass(frozen=True)
class _KeyType:
    """A key's type as far as it is known: the Spark types of its columns (column keys) or
    the declared type information (key selectors)."""

    columns: tuple[str, ...] | None = None
    info: TypeInformation | None = None

    def __str__(self) -> str:
        if self.info is not None:
            return repr(self.info)
        assert self.columns is not None
        return self.columns[0] if len(self.columns) == 1 else f"({', '.join(self.columns)})"

    def differs(self, other: _KeyType) -> bool:
        """True when both types are known and differ (unknown or not comparable: False)."""
        if self.info is not None and other.info is not None:
            return self.info != other.info
        if self.columns is not None and other.columns is not None:
            return self.columns != other.columns
        columns = self.columns if self.columns is not None else other.columns
        info = self.info if self.info is not None else other.info
        if columns is None or info is None:
            return False
        info_columns = _info_columns(info)
        return info_columns is not None and len(info_columns) == len(columns) and (
            info_columns != columns
        )


def _info_columns(info: TypeInformation) -> tuple[str, ...] | None:
    """The Spark types (``simpleString``) of a key declared as ``info``, comparable with column
    keys' types: one for a basic type, one per field for a row or tuple (a key of several
    columns); None when that is not known (no Spark type, or a nested row, whose DDL is not
    written as ``simpleString``)."""
    if info.name in RECORD_TYPE_NAMES:
        fields = info.args[1] if info.name == "ROW_NAMED" else info.args[0]
    else:
        fields = [info]
    try:
        types = tuple(_type_info_ddl(f) for f in fields)
    except (ValueError, TypeError, IndexError, AttributeError):
        return None
    return None if any("struct<" in t for t in types) else types


def _key(stream: Any, key: Any, key_type: Any, method: str, which: str) -> _KeyType:
    """Check one input's key selector (``where``/``equal_to``) and return its type."""
    if key is None:
        raise TypeError(f"{method}() needs the {which} input's key selector, got None")
    if key_type is not None and not isinstance(key_type, TypeInformation):
        raise TypeError(f"key_type must be PyFlink type information, got {key_type!r}")
    if isinstance(key, str) or (
        isinstance(key, (list, tuple)) and key and all(isinstance(k, str) for k in key)
    ):
        if key_type is not None:
            raise TypeError("key_type is for a key selector; column keys take the column's type")
        names = [key] if isinstance(key, str) else list(key)
        schema = stream._schema()
        columns = schema.fieldNames()
        missing = [k for k in names if k not in columns]
        if missing:
            raise ValueError(
                f"{method}() column(s) {missing} not in the {which} input ({columns})"
            )
        return _KeyType(columns=tuple(schema[k].dataType.simpleString() for k in names))
    if isinstance(key, KeySelector) or (callable(key) and not isinstance(key, type)):
        return _KeyType(info=key_type)
    raise TypeError(
        f"{method}() takes a column name, a list of column names, a function or a KeySelector, "
        f"got {key!r}"
    )


def keyed_stream_key_type(stream: Any) -> _KeyType:
    """The key type of a ``KeyedStream`` (its key columns' Spark types, or its key selector's
    declared ``key_type``; unknown for a key selector without one)."""
    if stream._keys:
        schema = stream._schema()
        return _KeyType(columns=tuple(schema[k].dataType.simpleString() for k in stream._keys))
    return _KeyType(info=stream._key_type)


@dataclasses.dataclass(frozen=True)
class _Build:
    """Everything a two-input window operation has been given so far."""

    first: Any
    second: Any
    first_key: Any
    second_key: Any
    key_type: TypeInformation | None
    assigner: WindowAssigner
    trigger: Trigger | None = None
    evictor: Evictor | None = None
    allowed_lateness_ms: int = 0
    late_tag: OutputTag | None = None


class _TwoInputs:
    """``first.join(second)`` / ``first.co_group(second)``: ``where`` comes next."""

    #: the operation's name in messages (Java's method)
    _operation = "coGroup"

    def __init__(self, first: Any, second: Any) -> None:
        if first is None or second is None:
            raise TypeError(f"{self._operation}() needs two input streams, got None")
        self._first = first
        self._second = second

    def where(self, key_selector: Any, key_type: Any = None) -> Where:
        """The first input's key: column name(s), a function of the element or a
        ``KeySelector`` (with an optional ``key_type``, as Java's ``where(selector, type)``)."""
        return Where(self, key_selector, key_type)

    def _window_builder(self, build: _Build) -> Any:
        raise NotImplementedError


class Where:
    """Two streams with the first input's key: ``equal_to`` comes next."""

    def __init__(self, inputs: _TwoInputs, key_selector: Any, key_type: Any) -> None:
        self._inputs = inputs
        self._key = key_selector
        self._key_type_info = key_type
        self._type = _key(inputs._first, key_selector, key_type, "where", "first")

    def equal_to(self, key_selector: Any, key_type: Any = None) -> EqualTo:
        """The second input's key (as ``where``); its type must equal the first's when both
        are known."""
        other = _key(self._inputs._second, key_selector, key_type, "equal_to", "second")
        if self._type.differs(other):
            raise ValueError(
                f"The keys for the two inputs are not equal: first key = {self._type} , "
                f"second key = {other}"
            )
        return EqualTo(self, key_selector, key_type)

    equalTo = equal_to  # noqa: N815


class EqualTo:
    """Two streams with both keys: ``window`` comes next."""

    def __init__(self, where: Where, key_selector: Any, key_type: Any) -> None:
        self._where = where
        self._key = key_selector
        self._key_type_info = key_type

    def window(self, assigner: WindowAssigner) -> Any:
        """The windows the two inputs' elements are grouped in (per key)."""
        if not isinstance(assigner, WindowAssigner):
            raise TypeError(f"window() takes a WindowAssigner, got {type(assigner).__name__}")
        where = self._where
        inputs = where._inputs
        key_type = where._key_type_info if where._key_type_info is not None else (
            self._key_type_info
        )
        return inputs._window_builder(_Build(
            inputs._first, inputs._second, where._key, self._key, key_type, assigner
        ))


class WindowedTwoInputs:
    """The options of a two-input window operation (Flink's ``WithWindow``); ``apply``
    finishes it. Each option returns a new object."""

    def __init__(self, build: _Build) -> None:
        self._build = build

    def _with(self, **changes: Any) -> Any:
        return type(self)(dataclasses.replace(self._build, **changes))

    def trigger(self, trigger: Trigger) -> Any:
        """Replace the assigner's default trigger (it sees ``TaggedUnion`` elements)."""
        if not isinstance(trigger, Trigger):
            raise TypeError(f"trigger() takes a Trigger, got {type(trigger).__name__}")
        if isinstance(self._build.assigner, MergingWindowAssigner) and not trigger.can_merge():
            raise UnsupportedOperationError(MERGING_TRIGGER_MESSAGE)
        return self._with(trigger=trigger)

    def evictor(self, evictor: Evictor) -> Any:
        """Evict elements (``TaggedUnion``s) before/after the function runs."""
        if not isinstance(evictor, Evictor):
            raise TypeError(f"evictor() takes an Evictor, got {type(evictor).__name__}")
        return self._with(evictor=evictor)

    def allowedLateness(self, time_ms: TimeLike) -> Any:  # noqa: N802
        """Keep windows (and fire them again on late elements of either input) until the
        watermark passes ``window end + time_ms``."""
        millis = to_millis(time_ms, "allowed lateness")
        if millis < 0:
            raise ValueError("The allowed lateness cannot be negative.")
        return self._with(allowed_lateness_ms=millis)

    def sideOutputLateData(self, output_tag: OutputTag) -> Any:  # noqa: N802
        """Send elements of either input that arrive too late for every window to
        ``output_tag``, as ``TaggedUnion.one(element)``/``TaggedUnion.two(element)`` (Flink's
        join has no late side output: it drops them)."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"sideOutputLateData takes an OutputTag, got {output_tag!r}")
        if output_tag.type_info is not None:
            raise TypeError(
                f"sideOutputLateData({output_tag!r}) of a window join or coGroup: its late "
                "elements are TaggedUnions of both inputs, which no declared type describes: "
                "use an OutputTag without a type, and map the TaggedUnions to typed values "
                "(see docs/windows/joins.md)"
            )
        return self._with(late_tag=output_tag)

    allowed_lateness = allowedLateness
    side_output_late_data = sideOutputLateData

    @property
    def allowed_lateness_ms(self) -> int:
        """The allowed lateness set so far, in milliseconds (0 unless set)."""
        return self._build.allowed_lateness_ms

    def _finish(
        self, function: Any, kind: str, output_schema: Any, output_type: Any
    ) -> Any:
        declared_output(output_type, output_schema)  # one of them at most
        build = self._build
        spec = WindowJoinSpec(
            first=build.first,
            second=build.second,
            first_key=build.first_key,
            second_key=build.second_key,
            assigner=build.assigner,
            trigger=build.trigger,
            evictor=build.evictor,
            allowed_lateness_ms=build.allowed_lateness_ms,
            late_tag=build.late_tag,
            window_function=CoGroupWindowFunction(function, kind),
            function=function,
            kind=kind,
            output_schema=output_schema,
            output_type=output_type,
            key_type=build.key_type,
        )
        return build.first._window_join(spec)


class CoGroupedWithWindow(WindowedTwoInputs):
    """A co-group with keys and windows (Flink's ``CoGroupedStreams.WithWindow``)."""

    def apply(
        self, function: Any, output_type: Any = None, *, output_schema: Any = None
    ) -> Any:
        """Finish with ``function``: a ``CoGroupFunction`` (``co_group(first, second)``, or
        Java's ``coGroup``), any object with such a method, or a ``callable(first, second)``,
        returning or yielding the outputs. Declare the outputs' type with ``output_type`` (as
        Java's ``resultType``) or ``output_schema`` (a DDL string, StructType or type
        information); without one they are pickled Python values, as PyFlink's."""
        if not is_co_group_function(function):
            raise TypeError(
                "CoGroupedStreams.WithWindow.apply() takes a CoGroupFunction (or an object with "
                f"co_group(first, second), or a callable(first, second)), got "
                f"{_describe(function)}"
            )
        return self._finish(function, COGROUP, output_schema, output_type)


def _describe(function: Any) -> str:
    name = type(function).__name__
    if isinstance(function, (JoinFunction, FlatJoinFunction)):
        return f"{name}, a join function (that goes to join(...)...apply())"
    return f"{name} {function!r}"


class CoGroupedStreams(_TwoInputs):
    """Two streams to co-group in windows (see module docstring)."""

    _operation = "coGroup"
    Where = Where
    EqualTo = EqualTo
    WithWindow = CoGroupedWithWindow

    def _window_builder(self, build: _Build) -> CoGroupedWithWindow:
        return CoGroupedWithWindow(build)


__all__ = [
    "CoGroupedStreams", "CoGroupedWithWindow", "EqualTo", "Where", "WindowedTwoInputs",
]
