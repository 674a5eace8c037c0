"""The elements a distributed graph's keyed nodes hand each other, as bytes.

One emitting call of a :class:`~flinkwin.operator.graph_chain.ChainStep` sends a list of
:class:`~flinkwin.operator.graph_chain.Emission` s to one receiving node and key group. They
travel **column by column**: each of an emission's bookkeeping fields (input index, key group,
tag, timestamp, phase, emission order, the emitter's previous clocks) is one value when it is
the same for every element of the list (the usual case: one emitter, one receiver) and a list
otherwise; the elements' values are one list. The columns are pickled once by :func:`dumps`,
the standard library's pickler (its C implementation: no Python callback per object), falling
back to the runtime's pickler (cloudpickle's on Spark) for what pickle cannot name (classes and
functions defined in ``__main__`` or a notebook, which cloudpickle carries by value). Either
way the bytes are produced by flinkwin's own code and signed by the caller's
:class:`~flinkwin.operator.snapshots.StatePickler`, which checks the signature before
unpickling.

Values keep their exact types (pickle round trip); a column is taken as one value only when
every element holds an equal value of the same type (``tag``: the same object).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Any

from flinkwin.operator.graph_chain import Emission

#: the layout's version, first in every payload
WIRE_FORMAT = 1
#: one value for every element of the list: ``(SAME, value)``; else ``(EACH, values)``
SAME, EACH = 0, 1
_FIELDS = ("node", "input_index", "key_group", "tag", "timestamp", "phase",
           "origin", "subtask", "number", "previous_watermark", "previous_time")


def dumps(value: Any, fallback: Callable[[Any], bytes] | None = None) -> bytes:
    """``value`` pickled by the standard library's pickler, or by ``fallback`` (the Spark
    runtime gives cloudpickle's) when pickle cannot name one of its classes or functions (see
    module docstring); without a fallback that error is raised."""
    try:
        return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError):
        if fallback is None:
            raise
        return bytes(fallback(value))


def _column(values: Sequence[Any], identity: bool = False) -> tuple[int, Any]:
    first = values[0]
    kind = type(first)
    if identity:
        same = all(v is first for v in values)
    else:
        same = values.count(first) == len(values) and all(type(v) is kind for v in values)
    return (SAME, first) if same else (EACH, list(values))


def pack(emitted: Sequence[Emission]) -> tuple[Any, ...]:
    """``emitted`` (a non-empty list) as picklable columns (see module docstring)."""
    node, index, key_group, tag, value, timestamp, phase, order, previous = zip(*emitted)
    origin, subtask, number = zip(*order)
    watermark, time = zip(*previous)
    columns = tuple(
        _column(c, identity=name == "tag") for name, c in zip(_FIELDS, (
            node, index, key_group, tag, timestamp, phase, origin, subtask, number,
            watermark, time)))
    return (WIRE_FORMAT, len(emitted), columns, list(value))


def unpack(packed: Any) -> list[Emission]:
    """The emissions :func:`pack` packed, in their order."""
    version, n, columns, values = packed
    if version != WIRE_FORMAT:
        raise ValueError(f"elements between a graph's stages in wire format {version!r}, "
                         f"this flinkwin reads {WIRE_FORMAT}")
    if len(columns) != len(_FIELDS) or len(values) != n:
        raise ValueError("elements between a graph's stages: malformed columns")

    def column(i: int) -> Any:
        kind, data = columns[i]
        if kind == SAME:
            return repeat(data, n)
        if len(data) != n:
            raise ValueError("elements between a graph's stages: malformed columns")
        return data

    node, index, key_group, tag, timestamp, phase = (column(i) for i in range(6))
    order = _tuples(columns, 6, 9, column, n)
    previous = _tuples(columns, 9, 11, column, n)
    make: Callable[[Any], Emission] = Emission._make
    return list(map(make, zip(node, index, key_group, tag, values, timestamp, phase, order,
                              previous)))


def _tuples(columns: Any, lo: int, hi: int, column: Callable[[int], Any], n: int) -> Any:
    """Fields ``lo .. hi - 1`` zipped into tuples (one shared tuple when all are the same)."""
    if all(columns[i][0] == SAME for i in range(lo, hi)):
        return repeat(tuple(columns[i][1] for i in range(lo, hi)), n)
    return zip(*(column(i) for i in range(lo, hi)))


__all__ = ["WIRE_FORMAT", "dumps", "pack", "unpack"]
