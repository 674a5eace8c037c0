"""Port of Flink's ``TimeWindowTest``.

Source: apache/flink flink-streaming-java/src/test/java/org/apache/flink/streaming/runtime/
operators/windowing/TimeWindowTest.java

Skipped tests: none (both Flink test methods are ported).
"""

from flinkwin import TimeWindow

HOUR_MS = 60 * 60 * 1000
DAY_MS = 24 * HOUR_MS


def test_get_window_start_with_offset():
    """Port of TimeWindowTest#testGetWindowStartWithOffset."""
    start = TimeWindow.get_window_start_with_offset

    # [-21, -14), [-14, -7), [-7, 0), [0, 7), [7, 14), [14, 21)...
    offset = 0
    assert start(-8, offset, 7) == -14
    assert start(-7, offset, 7) == -7
    assert start(-6, offset, 7) == -7
    assert start(-1, offset, 7) == -7
    assert start(1, offset, 7) == 0
    assert start(6, offset, 7) == 0
    assert start(7, offset, 7) == 7
    assert start(8, offset, 7) == 7

    # [-11, -4), [-4, 3), [3, 10), [10, 17)...
    offset = 3
    assert start(-10, offset, 7) == -11
    assert start(-9, offset, 7) == -11
    assert start(-3, offset, 7) == -4
    assert start(-2, offset, 7) == -4
    assert start(-1, offset, 7) == -4
    assert start(1, offset, 7) == -4
    assert start(2, offset, 7) == -4
    assert start(3, offset, 7) == 3
    assert start(9, offset, 7) == 3
    assert start(10, offset, 7) == 10

    # [-16, -9), [-9, -2), [-2, 5), [5, 12), [12, 19)...
    offset = -2
    assert start(-12, offset, 7) == -16
    assert start(-7, offset, 7) == -9
    assert start(-4, offset, 7) == -9
    assert start(-3, offset, 7) == -9
    assert start(2, offset, 7) == -2
    assert start(-1, offset, 7) == -2
    assert start(1, offset, 7) == -2
    assert start(-2, offset, 7) == -2
    assert start(3, offset, 7) == -2
    assert start(4, offset, 7) == -2
    assert start(7, offset, 7) == 5
    assert start(12, offset, 7) == 12

    # for GMT+08:00
    offset = -8 * HOUR_MS
    size = DAY_MS
    assert start(1470902048450, offset, size) == 1470844800000


def _intersects(w0, w1):
    # Flink's helper: intersection must be symmetric.
    assert w0.intersects(w1) == w1.intersects(w0)
    return w0.intersects(w1)


def test_intersect():
    """Port of TimeWindowTest#testIntersect."""
    # must intersect with itself
    window = TimeWindow(10, 20)
    assert window.intersects(window)

    # windows are next to each other
    assert _intersects(window, TimeWindow(20, 30))

    # there is distance between the windows
    assert not _intersects(window, TimeWindow(21, 30))

    # overlaps by one
    assert _intersects(window, TimeWindow(19, 22))
