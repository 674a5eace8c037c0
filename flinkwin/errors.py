"""Exceptions named after the Java ones Flink throws in the same situations."""


class IllegalStateError(RuntimeError):
    """Flink's ``IllegalStateException``."""


class UnsupportedOperationError(RuntimeError):
    """Flink's ``UnsupportedOperationException``."""
