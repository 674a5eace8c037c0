"""A PyFlink windowing program as a PyFlink user writes one (written for flinkwin's tests, on
the sample data of PyFlink's windowing examples; the only change from PyFlink is the package
name in the imports): elements per key in event-time sessions whose gap each element sets
(its second field, in ms)."""

from typing import Iterable

from flinkwin.common import Types, WatermarkStrategy
from flinkwin.common.watermark_strategy import TimestampAssigner
from flinkwin.datastream import ProcessWindowFunction, StreamExecutionEnvironment
from flinkwin.datastream.window import EventTimeSessionWindows, SessionWindowTimeGapExtractor, \
    TimeWindow


class SecondField(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp) -> int:
        return int(value[1])


class GapFromValue(SessionWindowTimeGapExtractor):
    def extract(self, element: tuple) -> int:
        return element[1]


class WindowSize(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
    def process(self, key: str, context: ProcessWindowFunction.Context[TimeWindow],
                elements: Iterable[tuple]) -> Iterable[tuple]:
        window = context.window()
        yield key, window.start, window.end, sum(1 for _ in elements)


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    readings = env.from_collection(
        [('hi', 1), ('hi', 2), ('hi', 3), ('hi', 4), ('hi', 8), ('hi', 9), ('hi', 15)],
        type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    stamped = readings.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(SecondField()))
    sizes = stamped.key_by(lambda r: r[0], key_type=Types.STRING()) \
        .window(EventTimeSessionWindows.with_dynamic_gap(GapFromValue())) \
        .process(WindowSize(), Types.TUPLE([Types.STRING(), Types.INT(), Types.INT(), Types.INT()]))
    sizes.print()
    env.execute()


if __name__ == '__main__':
    main()
