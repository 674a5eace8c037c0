"""The window functions of PyFlink's ``test_window.py`` (module level there), verbatim.

Ported from apache/flink ``flink-python/pyflink/datastream/tests/test_window.py`` (Apache
License 2.0); only the imports changed. Module level in PyFlink's file, kept in this module here
next to the ported test module.
"""

from typing import Iterable

from flinkwin import CountWindow, ProcessAllWindowFunction, ProcessWindowFunction, TimeWindow
from flinkwin import WindowFunction


class SumWindowFunction(WindowFunction[tuple, tuple, str, CountWindow]):

    def apply(self, key: str, window: CountWindow, inputs: Iterable[tuple]):
        result = 0
        for i in inputs:
            result += i[0]
        return [(key, result)]


class CountWindowProcessFunction(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):

    def process(self,
                key: str,
                context: ProcessWindowFunction.Context[TimeWindow],
                elements: Iterable[tuple]) -> Iterable[tuple]:
        return [(key, context.window().start, context.window().end, len([e for e in elements]))]


class CountAllWindowProcessFunction(ProcessAllWindowFunction[tuple, tuple, TimeWindow]):

    def process(self,
                context: 'ProcessAllWindowFunction.Context',
                elements: Iterable[tuple]) -> Iterable[tuple]:
        return [(context.window().start, context.window().end, len([e for e in elements]))]
