"""A PyFlink program as a PyFlink user writes one (written for flinkwin's tests; the only
change from PyFlink is the package name in the imports): a ``KeyedProcessFunction`` keeping
each key's running total in ``ValueState``, yielding it for every element."""

from flinkwin.common.typeinfo import Types
from flinkwin.datastream import StreamExecutionEnvironment
from flinkwin.datastream.functions import KeyedProcessFunction, RuntimeContext
from flinkwin.datastream.state import ValueStateDescriptor


class RunningTotal(KeyedProcessFunction):

    def open(self, runtime_context: RuntimeContext):
        self.total = runtime_context.get_state(
            ValueStateDescriptor("total", Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        total = (self.total.value() or 0) + value[1]
        self.total.update(total)
        yield value[0], total


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    orders = env.from_collection([
        ("apples", 3), ("pears", 10), ("apples", 4), ("plums", 1), ("pears", 5), ("apples", 2),
    ])
    orders.key_by(lambda order: order[0]).process(RunningTotal()).print()
    env.execute("running totals")


if __name__ == '__main__':
    main()
