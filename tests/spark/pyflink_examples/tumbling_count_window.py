"""A PyFlink count-window program as a PyFlink user writes one (written for flinkwin's tests,
on the sample data of PyFlink's count-window example; the only change from PyFlink is the
package name in the imports): per key, the sum of every two elements."""

from typing import Iterable

from flinkwin.common import Types
from flinkwin.datastream import StreamExecutionEnvironment, WindowFunction
from flinkwin.datastream.window import CountWindow


class PairSum(WindowFunction[tuple, tuple, str, CountWindow]):
    def apply(self, key: str, window: CountWindow, inputs: Iterable[tuple]):
        yield key, sum(value for value, _ in inputs)


def main() -> None:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    numbers = env.from_collection(
        [(1, 'hi'), (2, 'hello'), (3, 'hi'), (4, 'hello'), (5, 'hi'), (6, 'hello'), (6, 'hello')],
        type_info=Types.TUPLE([Types.INT(), Types.STRING()]))
    numbers.key_by(lambda n: n[1], key_type=Types.STRING()) \
        .count_window(2) \
        .apply(PairSum(), Types.TUPLE([Types.STRING(), Types.INT()])) \
        .print()
    env.execute()


if __name__ == '__main__':
    main()
