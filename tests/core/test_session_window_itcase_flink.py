"""Flink's ``SessionWindowITCase`` (flink-tests, ``org.apache.flink.test.windowing.
sessionwindows``), ported: randomized sessions of many keys through event-time session windows
with allowed lateness, every firing validated by the window function.

Source: apache/flink, ``SessionWindowITCase.java`` and its generators
(``session_event_generators.py`` here, the same pseudo-random draws). The data source
``SessionEventGeneratorDataSource`` emits each generated event with its timestamp, then the
generator's global watermark; :func:`session_event_source` yields the same pairs and
:func:`run_test` feeds them to the window operator element by element, watermark by watermark
(``keyBy("sessionKey").window(EventTimeSessionWindows.withGap(1000 ms)).allowedLateness(500
ms).apply(new ValidatingWindowFunction())``). ``ValidatingWindowFunction`` makes Flink's
checks; Flink adds each firing's counts of timely and in-lateness events to two accumulators,
here each firing emits them (with its key, window and event ids) and the test sums them: every
session fires once on time and once per in-lateness event (``(5 + 1) * 10`` timely events
counted per session) and the ``k``-th late firing holds ``k`` late events (``15`` per session).

Flink runs 20,000 sessions with seed 1234567; here Flink's seed and two more run 400 sessions
each (the core suite stays fast), with Flink's other constants; ``run_test(1234567, 20_000)``,
Flink's whole configuration (400,000 events), passes too, in about 30 s. Flink's
``PURGE_WINDOW_ON_FIRE`` branch (a constant ``false``, "should currently always be set to
false") is not ported. The Spark end-to-end run of the same program is
``tests/spark/test_session_window_itcase.py``.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from session_event_generators import (
    EventGeneratorFactory,
    GeneratorConfiguration,
    LongRandomGenerator,
    ParallelSessionsEventGenerator,
    SessionEvent,
    Timing,
    session_event_factory,
)

from flinkwin import EventTimeSessionWindows, Time, WindowFunction
from flinkwin.errors import UserFunctionError
from flinkwin.testing import WindowOperatorHarness
from flinkwin.time import MIN_LONG

# seed for the pseudo random engine of this test
RANDOM_SEED = 1234567
# number of sessions generated in the test (Flink: 20_000)
NUMBER_OF_SESSIONS = 400
# max. allowed gap between two events of one session
MAX_SESSION_EVENT_GAP_MS = 1_000
# the allowed lateness after the watermark
ALLOWED_LATENESS_MS = 500
# maximum additional gap we randomly add between two sessions
MAX_ADDITIONAL_SESSION_GAP_MS = 5_000
# number of timely events per session
EVENTS_PER_SESSION = 10
# number of late events per session inside lateness
LATE_EVENTS_PER_SESSION = 5
# number of late events per session after lateness (will be dropped)
MAX_DROPPED_EVENTS_PER_SESSION = 5
# number of different session keys
NUMBER_OF_DIFFERENT_KEYS = 20
# number of parallel in-flight sessions generated in the test stream
PARALLEL_SESSIONS = 10

#: the fields of each firing's output (Flink adds the two counts to its accumulators)
FIRING_FIELDS = ("session_key", "window_start", "window_end", "on_time_count", "late_count",
                 "event_ids")


class ValidatingWindowFunction(WindowFunction):
    """Window function that performs correctness checks for this test case; emits the firing's
    counts (Flink's ``SESSION_COUNTER_ON_TIME_KEY``/``SESSION_COUNTER_LATE_KEY`` accumulators)."""

    def apply(self, key: Any, window: Any, inputs: Iterable[Any]) -> list[tuple[Any, ...]]:
        session_events = list(inputs)
        # sets to track uniqueness of ids (Flink's bit-sets)
        on_time_bits: set[int] = set()
        late_within_bits: set[int] = set()
        on_time_count = 0
        late_count = 0
        for evt in session_events:
            if evt["timing"] == Timing.TIMELY.value:
                on_time_count += 1
                on_time_bits.add(evt["event_id"])
            elif evt["timing"] == Timing.IN_LATENESS.value:
                late_count += 1
                late_within_bits.add(evt["event_id"] - EVENTS_PER_SESSION)
            else:
                raise AssertionError(f"Illegal event type in window {window}: {evt}")
        if len(session_events) >= EVENTS_PER_SESSION:  # on time events case or non-purging
            # check that the expected amount if events is in the window
            assert on_time_count == EVENTS_PER_SESSION, (window, session_events)
            # check that no duplicate events happened
            assert len(on_time_bits) == on_time_count, (window, session_events)
            assert len(late_within_bits) == late_count, (window, session_events)
        else:
            raise AssertionError(
                f"Event count for session window {window} is too low: {session_events}")
        ids = ",".join(str(i) for i in sorted(e["event_id"] for e in session_events))
        return [(key, window.start, window.end, on_time_count, late_count, ids)]


def create_generator(seed: int = RANDOM_SEED,
                     number_of_sessions: int = NUMBER_OF_SESSIONS,
                     number_of_keys: int = NUMBER_OF_DIFFERENT_KEYS,
                     parallel_sessions: int = PARALLEL_SESSIONS) -> ParallelSessionsEventGenerator:
    """``SessionEventGeneratorDataSource#createGenerator`` (keys ``0..n-1``, a ``HashSet``
    Flink iterates in ascending order)."""
    random_generator = LongRandomGenerator(seed)
    keys = list(range(number_of_keys))
    generator_configuration = GeneratorConfiguration(
        ALLOWED_LATENESS_MS, LATE_EVENTS_PER_SESSION, MAX_DROPPED_EVENTS_PER_SESSION,
        MAX_ADDITIONAL_SESSION_GAP_MS)
    event_generator_factory = EventGeneratorFactory(
        generator_configuration, session_event_factory, MAX_SESSION_EVENT_GAP_MS,
        EVENTS_PER_SESSION, random_generator)
    return ParallelSessionsEventGenerator(keys, event_generator_factory, parallel_sessions,
                                          number_of_sessions, random_generator)


def session_event_source(
        generator: ParallelSessionsEventGenerator) -> Iterator[tuple[SessionEvent, int]]:
    """``SessionEventGeneratorDataSource#run``: each event (collected with its timestamp) and
    the watermark the source emits after it."""
    while (evt := generator.next_event()) is not None:
        yield evt, generator.get_watermark()


def session_window_harness() -> WindowOperatorHarness:
    return WindowOperatorHarness(
        EventTimeSessionWindows.with_gap(Time.milliseconds(MAX_SESSION_EVENT_GAP_MS)),
        ValidatingWindowFunction(),
        key_field="session_key",
        allowed_lateness=Time.milliseconds(ALLOWED_LATENESS_MS),
    )


def run_test(seed: int, number_of_sessions: int, **generator_args: Any
             ) -> tuple[list[tuple[Any, ...]], WindowOperatorHarness]:
    """The job, element by element and watermark by watermark: the firings' outputs and the
    harness after the end of input."""
    harness = session_window_harness()
    for evt, watermark in session_event_source(
            create_generator(seed, number_of_sessions, **generator_args)):
        harness.process_element(evt.as_record(), evt.event_timestamp)
        harness.process_watermark(watermark)
    harness.close()
    return [tuple(o) for o in harness.output()], harness


def micro_batches(source: list[tuple[SessionEvent, int]]) -> list[list[tuple[SessionEvent, int]]]:
    """The source's events (with the watermark after each) cut into as few micro-batches as
    keep Flink's results when each batch's elements meet one watermark, the one after the
    previous batch's last element (Spark's model): a batch ends before an in-lateness event
    whose session's end that watermark has not passed (it would join the on-time firing
    instead of firing late) and before an after-lateness event whose session's lateness it has
    not passed (it would be counted instead of dropped)."""
    last_timely: dict[tuple[Any, int], int] = {}
    for evt, _ in source:
        if evt.event_value.timing is Timing.TIMELY:
            session = (evt.session_key, evt.event_value.session_id)
            last_timely[session] = max(last_timely.get(session, evt.event_timestamp),
                                       evt.event_timestamp)
    batches: list[list[tuple[SessionEvent, int]]] = []
    watermark = MIN_LONG
    for evt, after in source:
        end = last_timely[(evt.session_key, evt.event_value.session_id)] + (
            MAX_SESSION_EVENT_GAP_MS - 1)
        needed = {Timing.TIMELY: MIN_LONG, Timing.IN_LATENESS: end,
                  Timing.AFTER_LATENESS: end + ALLOWED_LATENESS_MS}[evt.event_value.timing]
        if not batches or watermark < needed:
            watermark = batches[-1][-1][1] if batches else MIN_LONG
            batches.append([])
        batches[-1].append((evt, after))
    return batches


def replay_micro_batches(batches: list[list[tuple[SessionEvent, int]]]
                         ) -> tuple[list[tuple[Any, ...]], WindowOperatorHarness]:
    """The job as Spark runs it: per micro-batch, the watermark after the previous batch, then
    the batch's elements; the source's last watermark at the end."""
    harness = session_window_harness()
    for batch in batches:
        for evt, _ in batch:
            harness.process_element(evt.as_record(), evt.event_timestamp)
        harness.process_watermark(batch[-1][1])
    harness.close()
    return [tuple(o) for o in harness.output()], harness


def check_totals(firings: list[tuple[Any, ...]], number_of_sessions: int) -> None:
    """Flink's end-of-job checks of the two accumulators."""
    # remember that late events within lateness will each trigger a window!
    assert sum(f[3] for f in firings) == (
        (LATE_EVENTS_PER_SESSION + 1) * number_of_sessions * EVENTS_PER_SESSION)
    assert sum(f[4] for f in firings) == (
        number_of_sessions * (LATE_EVENTS_PER_SESSION * (LATE_EVENTS_PER_SESSION + 1) // 2))


@pytest.mark.parametrize("seed", [RANDOM_SEED, 42, 20_170_222])
def test_session_windowing(seed: int) -> None:
    """Flink: SessionWindowITCase#testSessionWindowing"""
    firings, harness = run_test(seed, NUMBER_OF_SESSIONS)
    check_totals(firings, NUMBER_OF_SESSIONS)
    # beyond Flink's checks: every session fired 1 + 5 times, each late firing had one late
    # event more, every event after the lateness was dropped, and no state is left
    assert len(firings) == NUMBER_OF_SESSIONS * (LATE_EVENTS_PER_SESSION + 1)
    assert harness.num_late_records_dropped == NUMBER_OF_SESSIONS * MAX_DROPPED_EVENTS_PER_SESSION
    assert harness.num_keyed_state_entries() == 0
    assert harness.num_event_time_timers() == 0


def test_session_windowing_in_micro_batches() -> None:
    """Not a Flink test: the difference Spark's micro-batches force. Flink's source emits the
    watermark after every event, and the generator emits a session's late events as soon as
    that watermark has passed the session's end (or its lateness). Spark moves the watermark
    once per micro-batch, so a late event must come in a later micro-batch than the events
    that moved the watermark past its session: batches cut there (:func:`micro_batches`, as
    ``tests/spark/test_session_window_itcase.py`` writes its files) give Flink's firings,
    while evenly cut batches meet older watermarks and break Flink's checks (an event after the
    lateness is counted in a firing)."""
    source = list(session_event_source(create_generator(RANDOM_SEED, 40)))
    flink, _ = run_test(RANDOM_SEED, 40)
    firings, harness = replay_micro_batches(micro_batches(source))
    assert Counter(firings) == Counter(flink)
    assert harness.num_late_records_dropped == 40 * MAX_DROPPED_EVENTS_PER_SESSION
    even = [source[i:i + 100] for i in range(0, len(source), 100)]
    with pytest.raises(UserFunctionError, match="Illegal event type in window"):
        replay_micro_batches(even)


def test_generators_give_flinks_event_sequence() -> None:
    """Not a Flink test: Flink's generator classes (``ParallelSessionsEventGenerator`` and the
    rest, compiled with Java 17) with the ITCase's seed and configuration (20,000 sessions)
    start with these 2,000 events, written ``key sessionId eventId timestamp watermark timing``
    and the watermark the source emits after it; their SHA-256 (the whole 400,000 events were
    compared, for this seed and for 42)."""
    first = [
        f"{e.session_key} {e.event_value.session_id} {e.event_value.event_id} "
        f"{e.event_timestamp} {e.event_value.watermark} {e.event_value.timing.value} {w}\n"
        for (e, w), _ in zip(session_event_source(create_generator(RANDOM_SEED, 20_000)),
                             range(2000))
    ]
    assert first[:3] == ["14 0 1 3221 0 TIMELY 0\n", "14 0 2 2225 0 TIMELY 0\n",
                         "6 1 1 6758 0 TIMELY 0\n"]
    assert hashlib.sha256("".join(first).encode()).hexdigest() == (
        "fc1b929421dd0c6ce9d65baafcd8d87147fde3af2c9049a4a02fe735f467fd7a")


def test_long_random_generator_is_java_util_random() -> None:
    """The generators' ``java.util.Random``: the first draws of ``new Random(1234567)``, as
    Java 17 gives them (``nextInt(10)``, ``nextLong()``, ``nextInt(20)``, ``nextLong()``...)."""
    r = LongRandomGenerator(RANDOM_SEED)
    draws = [(r.next_int(bound), r.next_long()) for bound in (10, 20, 3)]
    assert draws == [(6, -6749250865724111202), (18, 8025209512674943304),
                     (0, -1014915675782098209)]
