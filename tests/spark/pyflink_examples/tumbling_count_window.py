"""PyFlink's example ``windowing/tumbling_count_window.py`` (apache/flink,
``flink-python/pyflink/examples/datastream``, Apache License 2.0), ported: ``pyflink``
became ``flinkwin`` in the imports, and the sink is ``print()`` alone (the ``--output``
FileSink branch and its ``FileSink``/``Encoder`` imports are gone). Nothing else changed."""

import sys

import argparse
from typing import Iterable


from flinkwin.common import Types
from flinkwin.datastream import StreamExecutionEnvironment, WindowFunction
from flinkwin.datastream.window import CountWindow


class SumWindowFunction(WindowFunction[tuple, tuple, str, CountWindow]):
    def apply(self, key: str, window: CountWindow, inputs: Iterable[tuple]):
        result = 0
        for i in inputs:
            result += i[0]
        return [(key, result)]


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument(
        '--output',
        dest='output',
        required=False,
        help='Output file to write results to.')

    argv = sys.argv[1:]
    known_args, _ = parser.parse_known_args(argv)
    output_path = known_args.output

    env = StreamExecutionEnvironment.get_execution_environment()
    # write all the data to one file
    env.set_parallelism(1)

    # define the source
    data_stream = env.from_collection([
        (1, 'hi'), (2, 'hello'), (3, 'hi'), (4, 'hello'), (5, 'hi'), (6, 'hello'), (6, 'hello')],
        type_info=Types.TUPLE([Types.INT(), Types.STRING()]))

    ds = data_stream.key_by(lambda x: x[1], key_type=Types.STRING()) \
        .count_window(2) \
        .apply(SumWindowFunction(), Types.TUPLE([Types.STRING(), Types.INT()]))

    # define the sink
    ds.print()

    # submit for execution
    env.execute()
