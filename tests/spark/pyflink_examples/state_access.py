"""PyFlink's ``state_access.py`` example (apache/flink
``flink-python/pyflink/examples/datastream``, Apache License 2.0), ported: ``pyflink``
became ``flinkwin`` in the imports. Nothing else changed."""

from flinkwin.common.typeinfo import Types
from flinkwin.datastream import StreamExecutionEnvironment
from flinkwin.datastream.functions import KeyedProcessFunction, RuntimeContext
from flinkwin.datastream.state import ValueStateDescriptor


class Sum(KeyedProcessFunction):

    def __init__(self):
        self.state = None

    def open(self, runtime_context: RuntimeContext):
        state_descriptor = ValueStateDescriptor("state", Types.PICKLED_BYTE_ARRAY())
        self.state = runtime_context.get_state(state_descriptor)

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        # retrieve the current count
        current = self.state.value()
        if current is None:
            current = 0

        # update the state's count
        current += value[1]
        self.state.update(current)

        yield value[0], current


def state_access_demo():
    env = StreamExecutionEnvironment.get_execution_environment()

    ds = env.from_collection(
        collection=[
            ('Alice', 110.1),
            ('Bob', 30.2),
            ('Alice', 20.0),
            ('Bob', 53.1),
            ('Alice', 13.1),
            ('Bob', 3.1),
            ('Bob', 16.1),
            ('Alice', 20.1)
        ])

    # apply the process function onto a keyed stream
    ds.key_by(lambda value: value[0]) \
      .process(Sum()) \
      .print()

    # submit for execution
    env.execute()


if __name__ == '__main__':
    state_access_demo()
