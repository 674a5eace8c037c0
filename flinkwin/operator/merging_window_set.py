"""``MergingWindowSet``: tracks in-flight merging windows and the window holding each one's state.

When windows merge, one of the merged windows' state windows is kept as the state window of the
result (no state is copied to a new namespace); the others' state is merged into it. The mapping
``window -> state window`` is persisted per key.

Iteration order of merged windows follows Java's ``HashSet``/``HashMap`` over ``TimeWindow``'s
hash code, so the choice of state window and the order in which list states are concatenated
are Flink's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flinkwin.errors import IllegalStateError
from flinkwin.windows import GlobalWindow, TimeWindow

_MASK64 = (1 << 64) - 1


def _long_to_int_with_bit_mixing(value: int) -> int:
    v = value & _MASK64
    v = ((v ^ (v >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    v = ((v ^ (v >> 27)) * 0x94D049BB133111EB) & _MASK64
    v ^= v >> 31
    return v & 0xFFFFFFFF


def _java_hash(window: Any) -> int | None:
    if isinstance(window, TimeWindow):
        return _long_to_int_with_bit_mixing(window.start + window.end)
    if isinstance(window, GlobalWindow):
        return 0
    return None


def java_hash_order(items: list[Any]) -> list[Any]:
    """``items`` (in insertion order) in the order a Java ``HashSet`` would iterate them."""
    hashes = [_java_hash(w) for w in items]
    if any(h is None for h in hashes):
        return list(items)
    size = 16
    while len(items) > size * 3 // 4:
        size *= 2
    buckets = [(h ^ (h >> 16)) & (size - 1) for h in hashes]  # type: ignore[operator]
    order = sorted(range(len(items)), key=lambda i: buckets[i])
    return [items[i] for i in order]


MergeFunction = Callable[[Any, list[Any], Any, list[Any]], None]


class MergingWindowSet:
    """The window -> state-window mapping of one key (see module docstring)."""

    def __init__(self, window_assigner: Any, state: list[tuple[Any, Any]] | None = None) -> None:
        self.window_assigner = window_assigner
        self.state = state if state is not None else []
        self.mapping: dict[Any, Any] = dict(self.state)
        self.initial_mapping: dict[Any, Any] = dict(self.mapping)

    def persist(self) -> None:
        """Write the mapping back to the state list if it changed."""
        if self.mapping != self.initial_mapping:
            self.state[:] = list(self.mapping.items())
            self.initial_mapping = dict(self.mapping)

    def get_state_window(self, window: Any) -> Any:
        """The state window of an in-flight window, or None."""
        return self.mapping.get(window)

    def retire_window(self, window: Any) -> None:
        """Forget a window that was purged or is late."""
        if window not in self.mapping:
            raise IllegalStateError(f"Window {window} is not in in-flight window set.")
        del self.mapping[window]

    def add_window(self, new_window: Any, merge_function: Any) -> Any:
        """Add ``new_window``, merging it with in-flight windows as the assigner decides.

        Returns the window the new window now belongs to (the merge result, or itself).
        ``merge_function(merge_result, merged_windows, state_window_result,
        merged_state_windows)`` is called for every merge that involves existing state.
        """
        merge = merge_function.merge if hasattr(merge_function, "merge") else merge_function
        windows = list(self.mapping.keys())
        windows.append(new_window)
        merge_results: dict[Any, list[Any]] = {}

        def collect(to_be_merged: Iterable[Any], merge_result: Any) -> None:
            members: list[Any] = []
            for w in to_be_merged:
                if w not in members:
                    members.append(w)
            merge_results[merge_result] = java_hash_order(members)

        self.window_assigner.merge_windows(windows, _Callback(collect))

        result_window = new_window
        merged_new_window = False
        for merge_result in java_hash_order(list(merge_results)):
            merged_windows = merge_results[merge_result]
            if new_window in merged_windows:
                merged_windows.remove(new_window)
                merged_new_window = True
                result_window = merge_result
            if not merged_windows:
                continue
            merged_state_window = self.mapping.get(merged_windows[0])
            merged_state_windows = []
            for merged_window in merged_windows:
                res = self.mapping.pop(merged_window, None)
                if res is not None:
                    merged_state_windows.append(res)
            self.mapping[merge_result] = merged_state_window
            if merged_state_window in merged_state_windows:
                merged_state_windows.remove(merged_state_window)
            if not (merge_result in merged_windows and len(merged_windows) == 1):
                merge(
                    merge_result,
                    list(merged_windows),
                    self.mapping[merge_result],
                    merged_state_windows,
                )
        if not merge_results or (result_window == new_window and not merged_new_window):
            self.mapping[result_window] = result_window
        return result_window

    addWindow = add_window  # noqa: N815
    getStateWindow = get_state_window  # noqa: N815
    retireWindow = retire_window  # noqa: N815

    def __repr__(self) -> str:
        return f"MergingWindowSet({self.mapping})"


class _Callback:
    def __init__(self, fn: Callable[[Iterable[Any], Any], None]) -> None:
        self.merge = fn
