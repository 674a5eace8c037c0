"""Flink's ``SessionWindowITCase`` end to end on Spark: the generated events of
``tests/core/test_session_window_itcase_flink.py`` (its generators, window function and checks)
as a stream of micro-batch files, restarted from its checkpoint in the middle; every firing
equals the one Flink's job (the core run, element by element) makes, and Flink's totals hold.

Two things stand in for Flink's source, which emits each event, then the generator's
watermark:

* **The watermark.** A flinkwin stream's watermark is Flink's ``BoundedOutOfOrdernessWatermarks``
  over the rows (``max - D - 1``), not a source's own. Each file ends with a marker row whose
  timestamp is the generator's watermark after the file's last event plus ``D + 1``, ``D`` the
  largest distance of an event ahead of its file's watermark; a ``filter`` after
  ``assign_timestamps_and_watermarks`` drops the markers, which still move the watermark (as
  an element a Flink filter drops after the watermark assigner does). So the watermark of each
  micro-batch is exactly the generator's after the previous file. The last marker stands for
  the end of input (Flink's ``MAX_LONG``): it passes every session's lateness.
* **The micro-batches** (a difference Spark forces, ``docs/spark-semantics.md``, "Sources that
  emit their own watermarks"): Spark moves the watermark once per micro-batch, and the generator
  emits a session's late events as soon as its watermark has passed the session. The files are
  cut where Flink's results need it (``micro_batches``: a late event comes in a later file than
  the events that moved the watermark past its session); in one file with the events before
  them, late events would join the on-time firing and events after the lateness would count
  (``test_session_windowing_in_micro_batches`` shows it on the operator).

Scaled down (seconds, not Flink's 20,000 sessions): Flink's seed and constants, 4 sessions
(80 events in 8 files, one key with two sessions).
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

from batch_files import write_batches
from pyspark import cloudpickle
from spark_scenarios import reported

from flinkwin import Duration, EventTimeSessionWindows, Time, Types, WatermarkStrategy
from flinkwin.datastream import DataStream
from flinkwin.datastream.window_result_stream import WindowResultStream
from flinkwin.spark import MemorySink
from flinkwin.spark.watermarks import progress_watermark
from flinkwin.time import MIN_LONG

_CORE = Path(__file__).parents[1] / "core"


def _core_module(name: str, file: str) -> ModuleType:
    """A module of tests/core, imported here and pickled by value (the Spark workers import
    only tests/spark)."""
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, _CORE / file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    cloudpickle.register_pickle_by_value(module)
    return module


_core_module("session_event_generators", "session_event_generators.py")
itcase = _core_module("session_window_itcase_core", "test_session_window_itcase_flink.py")

NUMBER_OF_SESSIONS = 4
#: the files the first query reads before it stops; the restart reads the rest
RESTART_AT = 4
SCHEMA = ("session_key int, event_timestamp long, session_id int, event_id int, timing string, "
          "watermark long")
#: the ``timing`` of the rows that carry the source's watermark
WATERMARK = "WATERMARK"
FIRING_TYPE = Types.TUPLE([Types.INT(), Types.LONG(), Types.LONG(), Types.INT(), Types.INT(),
                           Types.STRING()])


def source_files(batches: list[list[tuple[Any, int]]]) -> tuple[list[list[dict[str, Any]]], int]:
    """Each micro-batch's events and its watermark marker; the out-of-orderness ``D``."""
    last = max(evt.event_timestamp for batch in batches for evt, _ in batch)
    end_of_input = last + itcase.MAX_SESSION_EVENT_GAP_MS + itcase.ALLOWED_LATENESS_MS
    marks = [batch[-1][1] for batch in batches[:-1]] + [end_of_input]
    delay = max(0, max(evt.event_timestamp - mark - 1
                       for batch, mark in zip(batches, marks) for evt, _ in batch))
    files = [
        [evt.as_record() for evt, _ in batch]
        + [{"event_timestamp": mark + delay + 1, "timing": WATERMARK, "watermark": mark}]
        for batch, mark in zip(batches, marks)
    ]
    return files, delay


def session_windows(stream: DataStream, delay: int) -> WindowResultStream:
    """The ITCase's job: ``keyBy("sessionKey").window(EventTimeSessionWindows.withGap(...))
    .allowedLateness(...).apply(new ValidatingWindowFunction())``."""
    return (
        stream.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(delay))
            .with_timestamp_assigner("event_timestamp"))
        .filter(lambda evt: evt["timing"] != WATERMARK)
        .key_by("session_key")
        .window(EventTimeSessionWindows.with_gap(
            Time.milliseconds(itcase.MAX_SESSION_EVENT_GAP_MS)))
        .allowed_lateness(Time.milliseconds(itcase.ALLOWED_LATENESS_MS))
        .apply(itcase.ValidatingWindowFunction(), output_type=FIRING_TYPE)
    )


def _run(spark: Any, source: Path, checkpoint: Path, delay: int,
         name: str) -> tuple[Counter[Any], list[int]]:
    """The firings of one query over the files present, and the watermark of each of its
    micro-batches (as Spark's progress shows them)."""
    df = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source))
    sink = MemorySink(name)
    query = session_windows(DataStream(df), delay).start(
        main=sink, checkpoint_location=str(checkpoint), trigger={"availableNow": True})
    query.awaitTermination()
    progress = sorted(query.recentProgress, key=lambda p: p["batchId"])
    return Counter(tuple(r) for r in sink.rows()), [progress_watermark(p) for p in progress]


def test_session_windowing(spark: Any, tmp_path: Path) -> None:
    """Flink: SessionWindowITCase#testSessionWindowing"""
    source = list(itcase.session_event_source(
        itcase.create_generator(itcase.RANDOM_SEED, NUMBER_OF_SESSIONS)))
    files, delay = source_files(itcase.micro_batches(source))
    write_batches(tmp_path / "in", files[:RESTART_AT])
    before, marks_before = _run(spark, tmp_path / "in", tmp_path / "ck", delay,
                                "session_itcase_1")
    write_batches(tmp_path / "in", files[RESTART_AT:], first=RESTART_AT)
    after, marks_after = _run(spark, tmp_path / "in", tmp_path / "ck", delay,
                              "session_itcase_2")

    # each micro-batch ran under the watermark of the file before it (a trailing no-data
    # micro-batch brings the last one's); Spark reads one at or before 1970 as none yet
    marks = [reported(f[-1]["watermark"], False) for f in files]
    assert marks_before == [MIN_LONG] + marks[:RESTART_AT]
    assert marks_after == marks[RESTART_AT - 1:]

    flink, _ = itcase.run_test(itcase.RANDOM_SEED, NUMBER_OF_SESSIONS)
    assert before and after, "the restart is mid-stream: sessions fired on both sides of it"
    assert before + after == Counter(flink)
    itcase.check_totals(list((before + after).elements()), NUMBER_OF_SESSIONS)
