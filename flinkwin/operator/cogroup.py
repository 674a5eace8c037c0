"""Window join and co-group on the window operator, as Flink builds them
(``CoGroupedStreams``/``JoinedStreams``):

- each element of the first input becomes ``TaggedUnion.one(element)``, each of the second
  ``TaggedUnion.two(element)``, and both go into one :class:`WindowOperator`, in arrival order;
- the operator is keyed by a :class:`UnionKeySelector`: the first input's key selector for
  ``one`` elements, the second's for ``two`` elements; elements of both inputs meet when their
  keys are equal as Flink's ``equals`` finds them (:func:`flinkwin.keys.flink_key`);
- windows, triggers, evictors, allowed lateness and the late side output are the operator's and
  see the ``TaggedUnion`` elements (late elements reach the side output as ``TaggedUnion``);
- the window function is :class:`CoGroupWindowFunction`: it splits the window's elements into
  the first and the second input's and calls the co-group function. Each list is in the
  window's order: arrival order, except that when session windows merge, the merged windows'
  elements follow those of the window whose state survives, as Flink merges list state;
  a join is a co-group whose function runs the join function on every pair (for each element
  of the first input, for each element of the second), so a key with elements of one input
  only joins nothing;
- every output carries the window's ``max_timestamp()``.

:class:`WindowJoinSpec` is what ``join(...)``/``co_group(...)`` builders produce, and
:func:`build_operator` makes its operator.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from flinkwin.assigners.base import WindowAssigner
from flinkwin.evictors.base import Evictor
from flinkwin.functions.base import (
    CallableKeySelector,
    FieldKeySelector,
    KeySelector,
    WindowFunction,
)
from flinkwin.functions.internal import iterate_outputs, open_function
from flinkwin.functions.join import CoGroupFunction, FlatJoinFunction, JoinFunction
from flinkwin.operator.window_operator import WindowOperator, make_key_selector
from flinkwin.output_tag import OutputTag
from flinkwin.triggers.base import Trigger
from flinkwin.types import is_atomic_type

JOIN = "join"
FLAT_JOIN = "flat_join"
COGROUP = "cogroup"
KINDS = (JOIN, FLAT_JOIN, COGROUP)

_ONE, _TWO = 1, 2


class TaggedUnion:
    """An element of either input of a co-group: ``TaggedUnion.one(value)`` (first input) or
    ``TaggedUnion.two(value)`` (second input). Unlike Flink's, the side is an explicit tag, so
    a ``None`` element keeps its side."""

    __slots__ = ("_tag", "_value")

    def __init__(self, tag: int, value: Any) -> None:
        if tag not in (_ONE, _TWO):
            raise ValueError(f"a TaggedUnion's tag is 1 or 2, got {tag!r}")
        self._tag = tag
        self._value = value

    @staticmethod
    def one(value: Any) -> TaggedUnion:
        """An element of the first input."""
        return TaggedUnion(_ONE, value)

    @staticmethod
    def two(value: Any) -> TaggedUnion:
        """An element of the second input."""
        return TaggedUnion(_TWO, value)

    def is_one(self) -> bool:
        return self._tag == _ONE

    def is_two(self) -> bool:
        return self._tag == _TWO

    def get_one(self) -> Any:
        """The first input's element (None for an element of the second input)."""
        return self._value if self._tag == _ONE else None

    def get_two(self) -> Any:
        """The second input's element (None for an element of the first input)."""
        return self._value if self._tag == _TWO else None

    isOne = is_one  # noqa: N815
    isTwo = is_two  # noqa: N815
    getOne = get_one  # noqa: N815
    getTwo = get_two  # noqa: N815

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TaggedUnion):
            return NotImplemented
        return self._tag == other._tag and self._value == other._value

    def __hash__(self) -> int:
        return hash((self._tag, self._value))

    def __repr__(self) -> str:
        return f"TaggedUnion.{'one' if self._tag == _ONE else 'two'}({self._value!r})"

    def __reduce__(self) -> tuple[Any, tuple[int, Any]]:
        return (TaggedUnion, (self._tag, self._value))


def _is_user_selector(selector: Any) -> bool:
    return isinstance(selector, KeySelector) and type(selector) not in (
        FieldKeySelector, CallableKeySelector
    )


class UnionKeySelector(KeySelector):
    """Keys a ``TaggedUnion`` by the first input's key selector (``one``) or the second's
    (``two``). Each selector is a field name, a list of field names, a callable or a
    ``KeySelector``; a field name keys a stream of an atomic type (``atomic1``/``atomic2``) by
    the element itself, as ``key_by`` on such a stream does. User ``KeySelector``s are opened
    and closed with the operator's functions."""

    def __init__(self, key1: Any, key2: Any, atomic1: bool = False, atomic2: bool = False) -> None:
        selector1 = make_key_selector(key1)
        selector2 = make_key_selector(key2)
        if selector1 is None or selector2 is None:
            raise TypeError("a co-group needs a key selector for each input")
        self.key1: KeySelector = selector1
        self.key2: KeySelector = selector2
        self.atomic1 = bool(atomic1) and type(selector1) is FieldKeySelector
        self.atomic2 = bool(atomic2) and type(selector2) is FieldKeySelector
        #: both inputs keyed by columns: keys compare by value (flinkwin.keys)
        self.column_keys = type(selector1) is FieldKeySelector and (
            type(selector2) is FieldKeySelector
        )

    def get_key(self, value: Any) -> Any:
        if not isinstance(value, TaggedUnion):
            raise TypeError(
                f"a co-group's elements are TaggedUnions, got {type(value).__name__}: {value!r}"
            )
        if value.is_one():
            one = value.get_one()
            return one if self.atomic1 else self.key1.get_key(one)
        two = value.get_two()
        return two if self.atomic2 else self.key2.get_key(two)

    def open(self, runtime_context: Any) -> None:
        for selector in self._user_selectors():
            open_function(selector, runtime_context)

    def close(self) -> None:
        for selector in self._user_selectors():
            selector.close()

    def _user_selectors(self) -> list[KeySelector]:
        selectors = [self.key1] if _is_user_selector(self.key1) else []
        if _is_user_selector(self.key2) and self.key2 is not self.key1:
            selectors.append(self.key2)
        return selectors

    def __repr__(self) -> str:
        return f"UnionKeySelector({self.key1!r}, {self.key2!r})"


# --------------------------------------------------------------- user functions


def _function_name(function: Any) -> str:
    return getattr(function, "__qualname__", None) or type(function).__name__


def _method(function: Any, names: tuple[str, ...]) -> Any:
    """``function``'s first callable method of ``names``, or None."""
    if isinstance(function, type):
        return None
    for name in names:
        bound = getattr(function, name, None)
        if callable(bound):
            return bound
    return None


def join_kind(function: Any) -> str | None:
    """``"join"`` or ``"flat_join"`` for a function a join's ``apply`` takes, else None: a
    ``FlatJoinFunction`` (or a generator ``join``/callable) is flat, a ``JoinFunction`` (or any
    other object with ``join``, or a plain callable) returns one value per pair."""
    if isinstance(function, FlatJoinFunction):
        return FLAT_JOIN
    if isinstance(function, JoinFunction):
        return JOIN
    if isinstance(function, (CoGroupFunction, type)):
        return None
    method = _method(function, ("join",))
    if method is None:
        if not callable(function) or _method(function, ("co_group", "coGroup")) is not None:
            return None
        method = function
    return FLAT_JOIN if inspect.isgeneratorfunction(method) else JOIN


def is_co_group_function(function: Any) -> bool:
    """True for what a co-group's ``apply`` takes: a ``CoGroupFunction``, an object with
    ``co_group`` (or ``coGroup``), or a plain ``callable(first, second)``."""
    if isinstance(function, CoGroupFunction):
        return True
    if isinstance(function, (JoinFunction, FlatJoinFunction, type)):
        return False
    if _method(function, ("co_group", "coGroup")) is not None:
        return True
    return callable(function) and _method(function, ("join",)) is None


class _Wrapping:
    """Opens and closes the wrapped user function with the operator's runtime context (Flink's
    ``WrappingFunction``)."""

    function: Any

    def open(self, runtime_context: Any) -> None:
        open_function(self.function, runtime_context)

    def close(self) -> None:
        close = getattr(self.function, "close", None)
        if callable(close):
            close()


class JoinCoGroupFunction(_Wrapping, CoGroupFunction):
    """A join as a co-group: ``join(a, b)`` for each ``a`` of the first input, for each ``b``
    of the second, one output each (Flink's nested-loop ``JoinCoGroupFunction``)."""

    def __init__(self, function: Any) -> None:
        self.function = function

    def co_group(self, first: list[Any], second: list[Any]) -> Iterator[Any]:
        join = _method(self.function, ("join",)) or self.function
        for a in first:
            for b in second:
                yield join(a, b)

    def __repr__(self) -> str:
        return f"JoinCoGroupFunction({_function_name(self.function)})"


class FlatJoinCoGroupFunction(_Wrapping, CoGroupFunction):
    """A flat join as a co-group: ``join(a, b)``'s outputs for each pair, in nested-loop order
    (Flink's ``FlatJoinCoGroupFunction``)."""

    def __init__(self, function: Any) -> None:
        self.function = function

    def co_group(self, first: list[Any], second: list[Any]) -> Iterator[Any]:
        method = _method(self.function, ("join",))
        join = method or self.function
        where = _function_name(self.function) + (".join" if method is not None else "")
        for a in first:
            for b in second:
                yield from iterate_outputs(join(a, b), where)

    def __repr__(self) -> str:
        return f"FlatJoinCoGroupFunction({_function_name(self.function)})"


class CoGroupWindowFunction(_Wrapping, WindowFunction):
    """The window function of a co-group (Flink's ``CoGroupWindowFunction``): splits a window's
    ``TaggedUnion`` elements into the two inputs' lists, in the window's order, and calls
    ``co_group(first, second)``. ``kind`` says what ``function`` is (``"join"``,
    ``"flat_join"`` or ``"cogroup"``); a join function is wrapped into its co-group."""

    def __init__(self, function: Any, kind: str = COGROUP) -> None:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        if kind == COGROUP and not is_co_group_function(function):
            raise TypeError(
                "a co-group takes a CoGroupFunction (or an object with co_group(first, "
                f"second), or a callable(first, second)), got {type(function).__name__}"
            )
        if kind != COGROUP and join_kind(function) is None:
            raise TypeError(
                "a join takes a JoinFunction, a FlatJoinFunction or a callable(first, second), "
                f"got {type(function).__name__}"
            )
        join = _method(function, ("join",)) or function
        if kind == JOIN and inspect.isgeneratorfunction(join):
            raise TypeError(
                f"{_function_name(function)}.join yields: a JoinFunction returns one value per "
                "pair; yield any number of them from a FlatJoinFunction"
            )
        self.kind = kind
        self.user_function = function
        if kind == JOIN:
            self.function: Any = JoinCoGroupFunction(function)
        elif kind == FLAT_JOIN:
            self.function = FlatJoinCoGroupFunction(function)
        else:
            self.function = function

    def apply(self, key: Any, window: Any, inputs: Iterable[TaggedUnion]) -> Iterable[Any]:
        first: list[Any] = []
        second: list[Any] = []
        for value in inputs:
            if value.is_one():
                first.append(value.get_one())
            else:
                second.append(value.get_two())
        function = self.function
        method = _method(function, ("co_group", "coGroup"))
        if method is None:  # a plain callable(first, second)
            return iterate_outputs(function(first, second), _function_name(function))
        return iterate_outputs(
            method(first, second), f"{_function_name(function)}.{method.__name__}"
        )

    def __repr__(self) -> str:
        return f"CoGroupWindowFunction({self.kind}={_function_name(self.user_function)})"


# ------------------------------------------------------------------- the spec


@dataclass(frozen=True)
class WindowJoinSpec:
    """A finished window join or co-group: what ``DataStream._window_join`` runs.

    ``first_key``/``second_key`` are the key selectors as given to ``where``/``equal_to``
    (field name(s), callable or ``KeySelector``), ``key_type`` the declared key type (or
    None); ``window_function`` is the operator's :class:`CoGroupWindowFunction` around the
    user's ``function`` of ``kind``; ``output_schema``/``output_type`` are as given to
    ``apply`` (at most one is set)."""

    first: Any
    second: Any
    first_key: Any
    second_key: Any
    assigner: WindowAssigner
    trigger: Trigger | None
    evictor: Evictor | None
    allowed_lateness_ms: int
    late_tag: OutputTag | None
    window_function: CoGroupWindowFunction
    function: Any
    kind: str
    output_schema: Any = None
    output_type: Any = None
    key_type: Any = None

    def union_key_selector(self) -> UnionKeySelector:
        """The operator's key selector (a field name keys a stream of an atomic type by the
        element itself)."""
        return UnionKeySelector(
            self.first_key, self.second_key,
            atomic1=_atomic(self.first), atomic2=_atomic(self.second),
        )


def _atomic(stream: Any) -> bool:
    get_type = getattr(stream, "get_type", None)
    return callable(get_type) and is_atomic_type(get_type())


def build_operator(spec: WindowJoinSpec, **operator_kwargs: Any) -> WindowOperator:
    """The window operator of ``spec``: its assigner, trigger, evictor, allowed lateness and
    late-data tag, keyed by the spec's :class:`UnionKeySelector`, with the spec's
    :class:`CoGroupWindowFunction`. ``operator_kwargs`` go to :class:`WindowOperator`
    (``task_info``, ``overflow``, ``state_pickler``, ``subtask``...). Push elements as
    ``TaggedUnion.one(element)`` / ``TaggedUnion.two(element)``."""
    return WindowOperator(
        spec.assigner,
        spec.window_function,
        key_selector=spec.union_key_selector(),
        trigger=spec.trigger,
        evictor=spec.evictor,
        allowed_lateness=spec.allowed_lateness_ms,
        late_output_tag=spec.late_tag,
        key_type=spec.key_type,
        **operator_kwargs,
    )


__all__ = [
    "COGROUP",
    "FLAT_JOIN",
    "JOIN",
    "CoGroupWindowFunction",
    "FlatJoinCoGroupFunction",
    "JoinCoGroupFunction",
    "TaggedUnion",
    "UnionKeySelector",
    "WindowJoinSpec",
    "build_operator",
    "is_co_group_function",
    "join_kind",
]
