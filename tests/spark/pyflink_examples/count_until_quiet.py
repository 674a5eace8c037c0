"""A PyFlink program as a PyFlink user writes one (written for flinkwin's tests; the only
change from PyFlink is the package name in the imports): event time from a
``TimestampAssigner``, a ``KeyedProcessFunction`` counting each key's elements and setting an
event-time timer one second after each, the timer reporting the key's count."""

from flinkwin.common import Duration, WatermarkStrategy
from flinkwin.common.typeinfo import Types
from flinkwin.common.watermark_strategy import TimestampAssigner
from flinkwin.datastream import StreamExecutionEnvironment
from flinkwin.datastream.functions import KeyedProcessFunction, RuntimeContext
from flinkwin.datastream.state import ValueStateDescriptor


class FirstField(TimestampAssigner):

    def extract_timestamp(self, value, record_timestamp: int) -> int:
        return value[0]


class CountUntilQuiet(KeyedProcessFunction):

    def open(self, runtime_context: RuntimeContext):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        self.count.update((self.count.value() or 0) + 1)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)

    def on_timer(self, timestamp: int, ctx: 'KeyedProcessFunction.OnTimerContext'):
        yield f"{ctx.get_current_key()} at {timestamp}: {self.count.value()}"


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    events = env.from_collection(
        [(500, "x"), (700, "y"), (1200, "x"), (4000, "y"), (4100, "x")],
        type_info=Types.TUPLE([Types.LONG(), Types.STRING()]))
    events = events.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(500))
        .with_timestamp_assigner(FirstField()))
    events.key_by(lambda e: e[1], key_type=Types.STRING()) \
        .process(CountUntilQuiet(), output_type=Types.STRING()) \
        .print()
    env.execute("count until quiet")


if __name__ == '__main__':
    main()
