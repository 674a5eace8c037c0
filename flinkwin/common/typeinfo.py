"""PyFlink's ``pyflink.common.typeinfo``: ``Types`` and ``TypeInformation``."""

from flinkwin.types import TypeInformation, Types

__all__ = ["TypeInformation", "Types"]
