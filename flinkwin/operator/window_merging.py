"""How a window operator merges windows (Flink's ``WindowOperator`` with a
``MergingWindowAssigner``): the key's
:class:`~flinkwin.operator.merging_window_set.MergingWindowSet`, and the merge function it
calls when windows merge, which merges their triggers, timers, firings and contents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flinkwin.errors import OPERATOR_ERRORS, UnsupportedOperationError, user_function_error
from flinkwin.functions.internal import LIST, REDUCING
from flinkwin.longs import LongOverflowError, located
from flinkwin.operator.merging_window_set import MergingWindowSet

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator


def merge_function(op: WindowOperator, key: Any) -> Any:
    """The function ``MergingWindowSet.add_window`` calls when windows merge for ``key``: their
    triggers, cleanup timers, firings and contents merge into the result's."""
    def merge(
        merge_result: Any,
        merged_windows: list[Any],
        state_window_result: Any,
        merged_state_windows: list[Any],
    ) -> None:
        if (
            op.is_event_time
            and merge_result.max_timestamp() + op.allowed_lateness <= op.current_watermark
        ):
            raise UnsupportedOperationError(
                "The end timestamp of an event-time window cannot become earlier than the "
                f"current watermark by merging. Current watermark: {op.current_watermark} "
                f"window: {merge_result}"
            )
        if (
            not op.is_event_time
            and merge_result.max_timestamp() <= op.current_processing_time
        ):
            raise UnsupportedOperationError(
                "The end timestamp of a processing-time window cannot become earlier than "
                "the current processing time by merging. Current processing time: "
                f"{op.current_processing_time} window: {merge_result}"
            )
        ctx = op._trigger_ctx
        ctx.key, ctx.window = key, merge_result
        ctx.merged_windows = merged_windows
        try:
            op.trigger.on_merge(merge_result, ctx)
            ctx.merged_windows = None
            for m in merged_windows:
                ctx.window = m
                op.trigger.clear(m, ctx)
                op._delete_cleanup_timer(key, m)
            if op.firings is not None:
                op.firings.merge(key, merge_result, merged_windows, op._clock())
            op._merge_contents(key, state_window_result, merged_state_windows)
        except OPERATOR_ERRORS:
            raise
        except Exception as exc:
            raise user_function_error(exc, key, merge_result) from exc

    return merge


def merge_contents(op: WindowOperator, key: Any, target: Any, sources: list[Any]) -> None:
    """Merge the contents of ``sources`` into ``target``'s, an overflow naming the window."""
    try:
        op._merge_slots(key, target, sources)
    except LongOverflowError as exc:
        raise located(exc, key, target) from None


def merge_slots(op: WindowOperator, key: Any, target: Any, sources: list[Any]) -> None:
    """Merge the contents of ``key``'s state windows ``sources`` into ``target``'s."""
    contents = op.window_contents
    tslot = (key, target)
    for source in sources:
        sslot = (key, source)
        if sslot == tslot or sslot not in contents:
            continue
        value = contents.pop(sslot)
        if tslot not in contents:
            contents[tslot] = value
        elif op.evictor is not None or op.spec.state_kind == LIST:
            contents[tslot] = contents[tslot] + value
        elif op.spec.state_kind == REDUCING:
            contents[tslot] = op.spec.reduce(contents[tslot], value)
        else:
            contents[tslot] = op.spec.agg_fn.merge(contents[tslot], value)


def merging_window_set(op: WindowOperator, key: Any) -> MergingWindowSet:
    """``key``'s merging window set, from its persisted state."""
    return MergingWindowSet(op.assigner, op.merging_state.get(key, []))


def persist(op: WindowOperator, key: Any, merging: MergingWindowSet) -> None:
    """Keep ``merging``'s state for ``key`` (none when it holds no windows)."""
    merging.persist()
    if merging.mapping:
        op.merging_state[key] = merging.state
    else:
        op.merging_state.pop(key, None)


__all__ = ["merge_contents", "merge_function", "merge_slots", "merging_window_set", "persist"]
