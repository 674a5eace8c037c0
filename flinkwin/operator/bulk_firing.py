"""The window operator's event-time timers fired a timestamp at a time: for
``EventTimeTrigger`` and ``ContinuousEventTimeTrigger`` (maybe purging) on non-merging
event-time windows without an evictor, advancing the watermark pops whole timer buckets and
emits exactly what the per-timer path (:meth:`WindowOperator._on_timer`) would."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flinkwin.errors import raise_failure
from flinkwin.functions.internal import AGGREGATING, REDUCING
from flinkwin.operator.vectorized import base_trigger
from flinkwin.time import MAX_LONG
from flinkwin.triggers.continuous_event_time import ContinuousEventTimeTrigger, next_fire_time
from flinkwin.triggers.event_time import EventTimeTrigger
from flinkwin.triggers.purging import PurgingTrigger

if TYPE_CHECKING:
    from flinkwin.operator.window_operator import WindowOperator


def can_fire_in_bulk(op: WindowOperator) -> bool:
    """True if event-time timers can fire a timestamp at a time: ``EventTimeTrigger`` or
    ``ContinuousEventTimeTrigger`` (maybe purging) on non-merging event-time windows without an
    evictor, whose timers touch only their own window (a continuous trigger's timer registers
    the window's next firing, later than itself)."""
    return (
        op.is_event_time
        and op.firings is None
        and not op.is_merging
        and op.evictor is None
        and type(base_trigger(op.trigger)) in (EventTimeTrigger, ContinuousEventTimeTrigger)
    )


def fire_event_timers_in_bulk(op: WindowOperator, watermark: int) -> None:
    """Fire every event-time timer <= ``watermark`` exactly as the per-timer path does for
    these triggers: FIRE at ``max_timestamp`` and, for ``ContinuousEventTimeTrigger``, at the
    window's pending fire time (registering the next one, ``min(time + interval,
    max_timestamp)``), emitting non-empty contents (purging under ``PurgingTrigger``); clear
    all state at the cleanup time."""
    purging = type(op.trigger) is PurgingTrigger
    trigger = base_trigger(op.trigger)
    continuous = type(trigger) is ContinuousEventTimeTrigger
    # the trigger's fire-time table (absent: no fire time pending)
    fire_times = op.partitioned_state.tables.get(trigger.state_desc.name, {}) if continuous else {}
    lateness = op.allowed_lateness
    contents = op.window_contents
    spec = op.spec
    output = op._output
    simple = spec.window_fn is None and spec.state_kind == REDUCING
    # an AggregateFunction's result is the output (what _emit_window_contents does, inline)
    get_result = (
        spec.agg_fn.get_result
        if spec.window_fn is None and spec.state_kind == AGGREGATING else None
    )
    has_clear = spec.window_kind in ("process", "process_all") and hasattr(spec.window_fn, "clear")
    timers = op.event_timers
    while (due := timers.pop_bucket_due(watermark)) is not None:
        ts, slots = due
        for slot in slots:
            key, window = slot
            max_ts = window.max_timestamp()
            fire = ts == max_ts
            if not fire and fire_times.get(slot) == ts:
                del fire_times[slot]
                try:
                    after = next_fire_time(ts, trigger.interval, max_ts, op.overflow)
                except Exception as exc:  # as the per-timer path reports a trigger's error
                    raise_failure(exc, key, window)
                fire_times[slot] = after
                timers.register(after, key, window)
                fire = True
            if fire:
                value = contents.get(slot)
                if value is not None:
                    if simple and type(value) is not tuple:
                        output.append((value, max_ts))
                        op.num_windows_fired += 1
                    elif get_result is not None:
                        op.current_key = key
                        op.num_windows_fired += 1
                        try:
                            result = get_result(value)
                            if type(result) is tuple:  # maybe (OutputTag, value)
                                op.emit_window_values(key, window, [result])
                            else:
                                output.append((result, max_ts))
                        except Exception as exc:
                            raise_failure(exc, key, window)
                    else:
                        op._emit_window_contents(key, window, slot, value)
                if purging:
                    contents.pop(slot, None)
            cleanup = max_ts + lateness
            if ts == (cleanup if cleanup <= MAX_LONG else MAX_LONG):
                contents.pop(slot, None)
                if continuous:
                    pending = fire_times.pop(slot, None)
                    if pending is not None:
                        timers.delete(pending, key, window)
                else:
                    timers.delete(max_ts, key, window)
                if has_clear:
                    try:
                        op._clear_all_state(key, window, slot, None)
                    except Exception as exc:
                        raise_failure(exc, key, window)


__all__ = ["can_fire_in_bulk", "fire_event_timers_in_bulk"]
