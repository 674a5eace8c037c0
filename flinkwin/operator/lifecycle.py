"""The user functions' lifecycle, shared by the operators that run them (window, keyed process,
interval join): ``open`` once before the first call, ``close`` once at the end; with a
:class:`~flinkwin.operator.runtime_context.Subtask`, once for all the subtask's operators."""

from __future__ import annotations

from typing import Any

from flinkwin.functions.internal import open_function
from flinkwin.operator.runtime_context import Subtask


class UserFunctionLifecycle:
    """Mixed into an operator with ``_rich_functions()``, ``subtask``, ``runtime_context`` and
    ``_opened``."""

    subtask: Subtask | None
    runtime_context: Any
    _opened: bool

    def _rich_functions(self) -> list[Any]:
        raise NotImplementedError

    def open(self) -> None:
        """Open the user functions (and a ``KeySelector``) once, before their first call; with
        a subtask, once for all the subtask's operators."""
        if self._opened:
            return
        self._opened = True
        if self.subtask is not None:
            self.subtask.open(self, self._rich_functions())  # type: ignore[arg-type]
            return
        for fn in self._rich_functions():
            open_function(fn, self.runtime_context)

    def close(self) -> None:
        """Close the user functions (with a subtask, close the subtask)."""
        if self.subtask is not None:
            self.subtask.close()
            return
        if not self._opened:
            return
        self._opened = False
        for fn in self._rich_functions():
            close = getattr(fn, "close", None)
            if callable(close):
                close()


__all__ = ["UserFunctionLifecycle"]
