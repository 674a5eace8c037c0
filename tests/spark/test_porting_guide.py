"""The flinkwin pipeline of docs/porting.md runs as written and prints what PyFlink prints."""

from __future__ import annotations

from typing import Any

from flinkwin.common import Duration, Time, Types, WatermarkStrategy
from flinkwin.common.watermark_strategy import TimestampAssigner
from flinkwin.datastream import DataStream, OutputTag, StreamExecutionEnvironment
from flinkwin.datastream.window import TumblingEventTimeWindows

MINUTE = 60_000
CLICKS = [("ann", 1 * MINUTE, 1), ("bob", 2 * MINUTE, 2), ("ann", 4 * MINUTE, 4),
          ("ann", 6 * MINUTE, 8), ("bob", 3 * MINUTE, 16)]


class ClickTime(TimestampAssigner):
    def extract_timestamp(self, value: Any, record_timestamp: int) -> int:
        return value[1]  # type: ignore[no-any-return]


def test_porting_guide_pipeline(spark: Any, fresh_env: Any, capsys: Any) -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    clicks = DataStream(spark.createDataFrame(CLICKS, "f0 string, f1 long, f2 int"),  # source
                        type_info=Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()]))
    late = OutputTag("late", Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()]))
    totals = clicks \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(10))
            .with_timestamp_assigner(ClickTime())) \
        .key_by(lambda click: click[0], key_type=Types.STRING()) \
        .window(TumblingEventTimeWindows.of(Time.minutes(5))) \
        .allowed_lateness(Time.minutes(1).to_milliseconds()) \
        .side_output_late_data(late) \
        .reduce(lambda a, b: (a[0], a[1], a[2] + b[2]),
                output_type=Types.TUPLE([Types.STRING(), Types.LONG(), Types.INT()]))
    totals.print()                                                                   # sink
    totals.get_side_output(late).print()                                             # sink
    env.execute("clicks")
    printed = capsys.readouterr().out.splitlines()
    # a bounded source: no watermark before the end of input, so nothing is late
    assert sorted(printed) == ["(ann,360000,8)", "(ann,60000,5)", "(bob,120000,18)"]
