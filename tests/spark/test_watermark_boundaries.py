"""The window-boundary scenario of ``tests/core/test_watermark_flink.py`` through Spark: Spark's
watermarks and every batch's outputs equal Flink's ``BoundedOutOfOrdernessWatermarks``
arithmetic written out there, and the harness replay of the same batches."""

from __future__ import annotations

import datetime
import importlib.util
from pathlib import Path
from typing import Any

from spark_scenarios import run_stream, watermark, write_batches

from flinkwin.time import MIN_LONG

_spec = importlib.util.spec_from_file_location(
    "flink_watermark_boundaries", Path(__file__).parents[1] / "core" / "test_watermark_flink.py"
)
assert _spec is not None and _spec.loader is not None
core = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(core)

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
MICROS = 999  # every timestamp carries 999 us beyond its millisecond: Flink's ms is the floor


def _iso(ms: int) -> str:
    instant = _EPOCH + datetime.timedelta(milliseconds=ms, microseconds=MICROS)
    return instant.isoformat().replace("+00:00", "Z")


def _as_row(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "ts": _iso(row["ts"])}


def _naive(ms: int) -> datetime.datetime:
    return (_EPOCH + datetime.timedelta(milliseconds=ms, microseconds=MICROS)).replace(
        tzinfo=None
    )


def test_window_boundaries_match_flinks_watermark_arithmetic(spark: Any, tmp_path: Path) -> None:
    steps = core.BOUNDARY_STEPS
    write_batches(tmp_path / "in", [[_as_row(s)] for s in steps])
    run = run_stream(
        spark, tmp_path / "in", tmp_path / "ck", "k string, ts timestamp, v long",
        lambda s: s.assignTimestampsAndWatermarks(watermark(core.D))
        .keyBy("k")
        .window(core.TumblingEventTimeWindows.of(
            core.Time.milliseconds(core.SIZE), core.Time.milliseconds(core.OFFSET)))
        .allowedLateness(core.L)
        .sideOutputLateData(core.LATE)
        .sum("v"),
        side_tags=[core.LATE],
    )
    # Flink's watermark before each batch (MIN_LONG = none yet), then the trailing no-data batch's
    assert run.watermarks == [MIN_LONG, *core.BOUNDARY_WATERMARKS[1:], core.FINAL_WATERMARK]

    def timestamps(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{**r, "ts": _naive(r["ts"])} for r in rows]

    n = len(steps) + 1
    assert run.main == {i: timestamps(core.BOUNDARY_MAIN.get(i, [])) for i in range(n)}
    assert run.sides["late"] == {i: timestamps(core.BOUNDARY_LATE.get(i, [])) for i in range(n)}

    # the harness under the watermarks Spark reported gives the same (test_watermark_flink.py
    # replays it under Flink's generator)
    harness = core.boundary_harness()
    main: dict[int, list[Any]] = {}
    late: dict[int, list[Any]] = {}
    for i, mark in enumerate(run.watermarks):
        harness.clear_output()
        if mark > MIN_LONG:
            harness.process_watermark(mark)
        if i < len(steps):
            harness.process_element(steps[i], steps[i]["ts"])
        main[i] = [r.asDict() for r in harness.output()]
        late[i] = [r.asDict() for r in harness.side_output(core.LATE)]
    assert main == {i: core.BOUNDARY_MAIN.get(i, []) for i in range(n)}
    assert late == {i: core.BOUNDARY_LATE.get(i, []) for i in range(n)}
