"""PyFlink's ``pyflink.common.constants``: the bounds of a Java long and the main output's
tag."""

from flinkwin.time import MAX_LONG, MIN_LONG

#: The largest value of a Java long, 2^63 - 1.
MAX_LONG_VALUE = MAX_LONG
#: The smallest value of a Java long, -2^63.
MIN_LONG_VALUE = MIN_LONG
#: The tag of the main output.
DEFAULT_OUTPUT_TAG = ""

__all__ = ["DEFAULT_OUTPUT_TAG", "MAX_LONG_VALUE", "MIN_LONG_VALUE"]
