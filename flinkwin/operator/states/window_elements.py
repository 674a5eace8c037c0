"""A window's elements as :class:`~flinkwin.operator.states.lists.ColumnarLists` hands them to
a window function: a read-only sequence (:class:`WindowElements`) over rows of the firing
windows' frame, whose elements are built on first access, once for all the windows firing
together (:class:`_Records`), shaped as the operator's stream declares (tuples, Rows or pickled
values)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from flinkwin.operator.element_rows import op_records

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator


def _elements(frame: pd.DataFrame, op: WindowOperator) -> list[Any]:
    """The user-facing elements of ``frame``'s rows, shaped as the operator's stream declares
    (tuples, Rows or pickled values)."""
    return op_records(op, frame)


class _Records:
    """The elements of a frame's rows (with ``rows``, those at these positions; with
    ``columns``, of these columns), built on first use (one pass for all firing windows)."""

    __slots__ = ("frame", "op", "rows", "columns", "records")

    def __init__(
        self, frame: pd.DataFrame, op: WindowOperator, rows: np.ndarray | None = None,
        columns: Sequence[str] | None = None,
    ) -> None:
        self.frame: pd.DataFrame | None = frame
        self.op = op
        self.rows = rows
        self.columns = columns
        self.records: list[Any] | None = None

    def get(self) -> list[Any]:
        if self.records is None:
            assert self.frame is not None
            self.records = op_records(self.op, self.frame, self.rows, self.columns)
            self.frame = self.rows = None
        return self.records


class WindowElements(Sequence[Any]):
    """A window's elements in arrival order, as a read-only sequence whose elements are built
    on first access (iterating, indexing, ``list(...)``); ``len`` builds nothing. Pickles (and
    compares) as a list."""

    __slots__ = ("_source", "_lo", "_hi")

    def __init__(self, source: _Records, lo: int, hi: int) -> None:
        self._source, self._lo, self._hi = source, lo, hi

    def _list(self) -> list[Any]:
        return self._source.get()[self._lo : self._hi]

    def __len__(self) -> int:
        return self._hi - self._lo

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, int):
            size = self._hi - self._lo
            if not -size <= index < size:
                raise IndexError("window elements index out of range")
            return self._source.get()[self._lo + index % size]
        return self._list()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._list())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (list, tuple, WindowElements)):
            return self._list() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._list())

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (self._list(),))


__all__ = ["WindowElements"]
