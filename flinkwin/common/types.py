"""PyFlink's ``pyflink.common.types``: ``Row`` and ``RowKind``."""

from flinkwin.record import Row, RowKind

__all__ = ["Row", "RowKind"]
