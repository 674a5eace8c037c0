"""The event generators of Flink's ``SessionWindowITCase`` (flink-tests,
``org.apache.flink.test.windowing.sessionwindows``), ported class by class with the same
pseudo-random draws, so a seed gives Flink's event sequence.

``LongRandomGenerator`` is ``java.util.Random`` (its 48-bit linear congruential generator,
``nextInt(bound)`` and ``nextLong()`` bit for bit) plus Flink's helpers. A
``ParallelSessionsEventGenerator`` interleaves the events of several in-flight sessions (for
random keys); each session (``SessionEventGeneratorImpl``) emits its timely events, then, once
the global watermark has passed the session's end, events late but within the allowed lateness,
then, once the watermark is past the lateness too, events too late to count. The global
watermark is the minimum of the sessions' local watermarks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

MAX_LONG = (1 << 63) - 1
_MASK48 = (1 << 48) - 1
_MULTIPLIER = 0x5DEECE66D


def _int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def _int64(v: int) -> int:
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >= 1 << 63 else v


class LongRandomGenerator:
    """``java.util.Random`` with Flink's ``LongRandomGenerator`` helpers."""

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ _MULTIPLIER) & _MASK48

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * _MULTIPLIER + 0xB) & _MASK48
        return _int32(self._seed >> (48 - bits))

    def next_int(self, bound: int) -> int:
        """``Random#nextInt(int bound)``."""
        r = self._next(31)
        m = bound - 1
        if bound & m == 0:
            return _int32((bound * r) >> 31)
        u = r
        r = u % bound
        while _int32(u - r + m) < 0:
            u = self._next(31)
            r = u % bound
        return r

    def next_long(self) -> int:
        """``Random#nextLong()``."""
        return _int64((self._next(32) << 32) + self._next(32))

    def random_long_between(self, min_inclusive: int, max_exclusive: int) -> int:
        if max_exclusive <= min_inclusive:
            raise ValueError(
                f"Error: min (found {min_inclusive}) must be < than max (found {max_exclusive})!")
        delta = max_exclusive - min_inclusive
        while True:
            bits = self.next_long() & MAX_LONG  # (nextLong() << 1) >>> 1
            generated_value = bits % delta
            if _int64(bits - generated_value + (delta - 1)) >= 0:
                return min_inclusive + generated_value

    def chose_random_index(self, collection: Sequence[Any]) -> int:
        return self.next_int(len(collection))

    def choose_random_element(self, collection: Sequence[Any]) -> Any:
        """The element at a random index of ``collection``'s iteration order (Flink iterates a
        ``HashSet<Integer>`` of ``0..n-1``, whose order is ascending)."""
        return collection[self.chose_random_index(collection)]


class Timing(Enum):
    """Event timing w.r.t. the global watermark (``SessionEventGeneratorImpl.Timing``)."""

    TIMELY = "TIMELY"
    IN_LATENESS = "IN_LATENESS"
    AFTER_LATENESS = "AFTER_LATENESS"


@dataclass(frozen=True)
class TestEventPayload:
    """The watermark an event was emitted under, its session's id (per key), its id in the
    session and its timing."""

    __test__ = False  # not a pytest class
    watermark: int
    session_id: int
    event_id: int
    timing: Timing


@dataclass(frozen=True)
class SessionEvent:
    session_key: Any
    event_value: TestEventPayload
    event_timestamp: int

    def as_record(self) -> dict[str, Any]:
        """The element as the window sees it: the key, the timestamp and the payload's fields."""
        p = self.event_value
        return {"session_key": self.session_key, "event_timestamp": self.event_timestamp,
                "session_id": p.session_id, "event_id": p.event_id, "timing": p.timing.value,
                "watermark": p.watermark}


#: ``GeneratorEventFactory#createEvent(key, sessionId, eventId, eventTimestamp,
#: globalWatermark, timing)``
GeneratorEventFactory = Callable[[Any, int, int, int, int, Timing], Any]


def session_event_factory(key: Any, session_id: int, event_id: int, event_timestamp: int,
                          global_watermark: int, timing: Timing) -> SessionEvent:
    """The ITCase's factory: ``SessionEvent.of(key, TestEventPayload.of(...), timestamp)``."""
    return SessionEvent(key, TestEventPayload(global_watermark, session_id, event_id, timing),
                        event_timestamp)


@dataclass(frozen=True)
class GeneratorConfiguration:
    allowed_lateness: int
    late_events_within_lateness: int
    late_events_after_lateness: int
    max_additional_session_gap: int


@dataclass(frozen=True)
class SessionConfiguration:
    key: Any
    session_id: int
    gap: int
    min_event_timestamp: int
    number_of_timely_events: int
    event_factory: GeneratorEventFactory

    def __post_init__(self) -> None:
        if self.number_of_timely_events <= 0 or self.gap <= 0:
            raise ValueError("numberOfTimelyEvents and gap must be > 0")

    def get_followup_session_configuration(self, start_timestamp: int) -> SessionConfiguration:
        return SessionConfiguration(self.key, self.session_id + 1, self.gap, start_timestamp,
                                    self.number_of_timely_events, self.event_factory)


@dataclass(frozen=True)
class SessionGeneratorConfiguration:
    session_configuration: SessionConfiguration
    generator_configuration: GeneratorConfiguration


class EventGenerator(Protocol):
    def generate_event(self, global_watermark: int) -> Any: ...
    def can_generate_event_at_watermark(self, global_watermark: int) -> bool: ...
    def has_more_events(self) -> bool: ...
    def get_local_watermark(self) -> int: ...
    def get_next_generator(self, global_watermark: int) -> EventGenerator: ...


class SessionEventGeneratorImpl:
    """Generates the timely, in-lateness and after-lateness events of one session."""

    def __init__(self, configuration: SessionGeneratorConfiguration,
                 random_generator: LongRandomGenerator) -> None:
        self.produced_events_count = 0
        self.configuration = configuration
        self.random_generator = random_generator
        session = configuration.session_configuration
        # pre-compute and store all timestamps for the timely events in this session
        self.ordered_timely_timestamps: list[int] = []
        self.min_timestamp = session.min_event_timestamp
        self._generate_ordered_timely_timestamps(self.min_timestamp,
                                                 session.number_of_timely_events)
        self.max_timestamp = self.ordered_timely_timestamps[-1]
        self.timing_aware_event_generator: EventGenerator = _TimelyGenerator(self)

    def can_generate_event_at_watermark(self, global_watermark: int) -> bool:
        return self.timing_aware_event_generator.can_generate_event_at_watermark(global_watermark)

    def generate_event(self, global_watermark: int) -> Any:
        if not self.has_more_events():
            raise RuntimeError("All events exhausted")
        self.produced_events_count += 1
        event = self.timing_aware_event_generator.generate_event(global_watermark)
        while not self.timing_aware_event_generator.has_more_events():
            self.timing_aware_event_generator = (
                self.timing_aware_event_generator.get_next_generator(global_watermark))
        return event

    def get_local_watermark(self) -> int:
        return self.timing_aware_event_generator.get_local_watermark()

    def has_more_events(self) -> bool:
        return self.produced_events_count < self._all_events_count()

    def _generate_ordered_timely_timestamps(self, min_timestamp: int, count: int) -> None:
        generated_timestamp = min_timestamp
        for _ in range(1, count):
            self.ordered_timely_timestamps.append(generated_timestamp)
            generated_timestamp += self.random_generator.random_long_between(0, self.gap - 1)
        self.ordered_timely_timestamps.append(generated_timestamp)

    def create_event_from_timestamp(self, event_timestamp: int, global_watermark: int,
                                    timing: Timing) -> Any:
        session = self.configuration.session_configuration
        return session.event_factory(session.key, session.session_id, self.produced_events_count,
                                     event_timestamp, global_watermark, timing)

    def generate_timely_in_session_timestamp(self) -> int:
        chosen = self.random_generator.chose_random_index(self.ordered_timely_timestamps)
        return self.ordered_timely_timestamps.pop(chosen)

    def generate_arbitrary_in_session_timestamp(self) -> int:
        return self.random_generator.random_long_between(self.min_timestamp,
                                                         self.max_timestamp + 1)

    def is_triggered(self, global_watermark: int) -> bool:
        """Whether the session's window has already fired at ``global_watermark``."""
        return global_watermark >= self.max_timestamp + self.gap - 1

    def is_after_lateness(self, global_watermark: int) -> bool:
        return global_watermark >= self.get_after_lateness_timestamp()

    def get_after_lateness_timestamp(self) -> int:
        return self.get_trigger_timestamp() + self.lateness

    def get_trigger_timestamp(self) -> int:
        return self.max_timestamp + self.gap - 1

    def get_key(self) -> Any:
        return self.configuration.session_configuration.key

    @property
    def gap(self) -> int:
        return self.configuration.session_configuration.gap

    @property
    def lateness(self) -> int:
        return self.configuration.generator_configuration.allowed_lateness

    def _late_events_count(self) -> int:
        return (self.configuration.session_configuration.number_of_timely_events
                + self.configuration.generator_configuration.late_events_within_lateness)

    def _all_events_count(self) -> int:
        return (self._late_events_count()
                + self.configuration.generator_configuration.late_events_after_lateness)

    def has_more_in_lateness_events(self) -> bool:
        return self.produced_events_count < self._late_events_count()

    def get_next_generator(self, global_watermark: int) -> SessionEventGeneratorImpl:
        generator_configuration = self.configuration.generator_configuration
        # compute the start timestamp for the next session
        max_additional_gap = generator_configuration.max_additional_session_gap
        next_start_time = max(
            self.get_after_lateness_timestamp()
            + self.random_generator.random_long_between(0, max_additional_gap),
            global_watermark)
        session = self.configuration.session_configuration.get_followup_session_configuration(
            next_start_time)
        return SessionEventGeneratorImpl(
            SessionGeneratorConfiguration(session, generator_configuration),
            self.random_generator)


class _TimelyGenerator:
    def __init__(self, outer: SessionEventGeneratorImpl) -> None:
        self.outer = outer

    def generate_event(self, global_watermark: int) -> Any:
        return self.outer.create_event_from_timestamp(
            self.outer.generate_timely_in_session_timestamp(), global_watermark, Timing.TIMELY)

    def get_local_watermark(self) -> int:
        return self.outer.ordered_timely_timestamps[0]

    def can_generate_event_at_watermark(self, global_watermark: int) -> bool:
        return True

    def has_more_events(self) -> bool:
        return bool(self.outer.ordered_timely_timestamps)

    def get_next_generator(self, global_watermark: int) -> EventGenerator:
        return _InLatenessGenerator(self.outer)


class _InLatenessGenerator:
    def __init__(self, outer: SessionEventGeneratorImpl) -> None:
        self.outer = outer

    def generate_event(self, global_watermark: int) -> Any:
        return self.outer.create_event_from_timestamp(
            self.outer.generate_arbitrary_in_session_timestamp(), global_watermark,
            Timing.IN_LATENESS)

    def get_local_watermark(self) -> int:
        return self.outer.get_after_lateness_timestamp() - 1

    def can_generate_event_at_watermark(self, global_watermark: int) -> bool:
        return self.outer.is_triggered(global_watermark)

    def has_more_events(self) -> bool:
        return self.outer.has_more_in_lateness_events()

    def get_next_generator(self, global_watermark: int) -> EventGenerator:
        return _AfterLatenessGenerator(self.outer)


class _AfterLatenessGenerator:
    def __init__(self, outer: SessionEventGeneratorImpl) -> None:
        self.outer = outer

    def generate_event(self, global_watermark: int) -> Any:
        return self.outer.create_event_from_timestamp(
            self.outer.generate_arbitrary_in_session_timestamp(), global_watermark,
            Timing.AFTER_LATENESS)

    def get_local_watermark(self) -> int:
        return self.outer.get_after_lateness_timestamp()

    def can_generate_event_at_watermark(self, global_watermark: int) -> bool:
        return self.outer.is_after_lateness(global_watermark)

    def has_more_events(self) -> bool:
        return True

    def get_next_generator(self, global_watermark: int) -> EventGenerator:
        raise RuntimeError("This generator has no successor")


class EventGeneratorFactory:
    """Produces the session event generators (a key's next session follows its latest)."""

    def __init__(self, generator_configuration: GeneratorConfiguration,
                 event_factory: GeneratorEventFactory, session_timeout: int,
                 timely_events_per_session: int, random_generator: LongRandomGenerator) -> None:
        if session_timeout < 0 or timely_events_per_session < 0:
            raise ValueError("sessionTimeout and timelyEventsPerSession must be >= 0")
        self.latest_generators_by_key: dict[Any, SessionEventGeneratorImpl] = {}
        self.generator_configuration = generator_configuration
        self.event_factory = event_factory
        self.random_generator = random_generator
        self.max_session_event_gap = session_timeout
        self.timely_events_per_session = timely_events_per_session
        self.produced_generators_count = 0

    def new_session_generator_for_key(self, key: Any,
                                      global_watermark: int) -> SessionEventGeneratorImpl:
        event_generator = self.latest_generators_by_key.get(key)
        if event_generator is None:
            session = SessionConfiguration(key, 0, self.max_session_event_gap, global_watermark,
                                           self.timely_events_per_session, self.event_factory)
            event_generator = SessionEventGeneratorImpl(
                SessionGeneratorConfiguration(session, self.generator_configuration),
                self.random_generator)
        else:
            event_generator = event_generator.get_next_generator(global_watermark)
        self.latest_generators_by_key[key] = event_generator
        self.produced_generators_count += 1
        return event_generator


class ParallelSessionsEventGenerator:
    """Interleaves the events of ``parallel_sessions`` in-flight sessions until
    ``session_count_limit`` sessions are generated; the watermark is the minimum of the
    sub-generators' watermarks (``MAX_LONG`` when all are exhausted)."""

    def __init__(self, keys: Sequence[Any], generator_factory: EventGeneratorFactory,
                 parallel_sessions: int, session_count_limit: int,
                 random_generator: LongRandomGenerator) -> None:
        if parallel_sessions <= 0 or not keys:
            raise ValueError("parallelSessions must be > 0 and keys not empty")
        self.session_keys = list(keys)
        self.random_generator = random_generator
        self.generator_factory = generator_factory
        self.session_count_limit = session_count_limit
        self.sub_generator_lists: list[SessionEventGeneratorImpl] = []
        self._init_parallel_session_generators(parallel_sessions)

    def next_event(self) -> Any:
        """The next generated event; None once the session limit is reached and every
        sub-generator is exhausted."""
        subs = self.sub_generator_lists
        if not subs:
            return None
        global_watermark = self.get_watermark()
        # iterates at most once over all sub-generators, starting at a random index, to find
        # one that can currently produce events
        choice = self.random_generator.chose_random_index(subs)
        for i in range(choice, choice + len(subs)):
            index = i % len(subs)
            sub_generator = subs[index]
            if sub_generator.can_generate_event_at_watermark(global_watermark):
                event = sub_generator.generate_event(global_watermark)
                if not sub_generator.has_more_events():
                    factory = self.generator_factory
                    if factory.produced_generators_count < self.session_count_limit:
                        subs[index] = factory.new_session_generator_for_key(
                            self.random_generator.choose_random_element(self.session_keys),
                            self.get_watermark())
                    else:
                        del subs[index]
                return event
        raise RuntimeError("Unable to find an open sub-generator that can produce events")

    def get_watermark(self) -> int:
        return min((g.get_local_watermark() for g in self.sub_generator_lists), default=MAX_LONG)

    def _init_parallel_session_generators(self, parallel_sessions: int) -> None:
        factory = self.generator_factory
        for _ in range(parallel_sessions):
            if factory.produced_generators_count >= self.session_count_limit:
                break
            self.sub_generator_lists.append(factory.new_session_generator_for_key(
                self.random_generator.choose_random_element(self.session_keys), 0))
