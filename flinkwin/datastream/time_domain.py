"""PyFlink's ``pyflink.datastream.time_domain``: ``TimeDomain``."""

from flinkwin.functions.process import TimeDomain

__all__ = ["TimeDomain"]
