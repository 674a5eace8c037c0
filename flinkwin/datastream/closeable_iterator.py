"""PyFlink's ``CloseableIterator``: what ``execute_and_collect()`` returns without a limit."""

from __future__ import annotations

from typing import Any


class CloseableIterator(list):  # type: ignore[type-arg]
    """The collected elements of a static stream (flinkwin collects them whole): a list, and
    the iterator PyFlink returns, with ``next(it)``/``it.next()``, ``close()`` and ``with
    ds.execute_and_collect() as results:``. Iterating with ``for`` starts from the first
    element each time, as a list does; ``next`` keeps its own position."""

    _position = 0

    def __next__(self) -> Any:
        if self._position >= len(self):
            raise StopIteration
        self._position += 1
        return self[self._position - 1]

    def next(self) -> Any:
        """The next element (PyFlink's ``next()``)."""
        return self.__next__()

    def close(self) -> None:
        """Nothing to release: the elements were collected whole; ``next`` is at the end."""
        self._position = len(self)

    def __enter__(self) -> CloseableIterator:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()


__all__ = ["CloseableIterator"]
