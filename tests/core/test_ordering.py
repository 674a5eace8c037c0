"""``stable_order`` is exactly numpy's stable argsort, whichever radix path it takes."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from flinkwin.operator.ordering import stable_order

_BOUNDS = [1, 2, 255, 1 << 16, (1 << 16) + 1, 1 << 20, 1 << 32, (1 << 32) + 1, 1 << 62]


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_stable_order_equals_numpy_stable_argsort(data):
    bound = data.draw(st.sampled_from(_BOUNDS))
    dtype = data.draw(st.sampled_from([np.int64, np.int32, np.uint16, np.uint32]))
    if np.iinfo(dtype).max < bound - 1:
        bound = int(np.iinfo(dtype).max) + 1
    codes = data.draw(hnp.arrays(dtype, st.integers(0, 2000),
                                 elements=st.integers(0, bound - 1)))
    expected = np.argsort(codes, kind="stable")
    assert np.array_equal(stable_order(codes), expected)
    assert np.array_equal(stable_order(codes, bound), expected)


def test_stable_order_keeps_equal_codes_in_position_order_on_both_radix_paths():
    rng = np.random.default_rng(7)
    for bound in (300, 70_000, 5_000_000):
        codes = rng.integers(0, bound, 50_000)
        order = stable_order(codes, bound)
        assert np.array_equal(order, np.argsort(codes, kind="stable"))
        same = codes[order][1:] == codes[order][:-1]
        assert (order[1:][same] > order[:-1][same]).all()


def test_stable_order_falls_back_for_negative_codes_and_other_types():
    codes = np.array([3, -1, 2, -1, 0] * 100)
    assert np.array_equal(stable_order(codes), np.argsort(codes, kind="stable"))
    floats = np.array([0.5, -1.0, 0.5, 2.0] * 100)
    assert np.array_equal(stable_order(floats), np.argsort(floats, kind="stable"))
