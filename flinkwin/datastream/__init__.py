"""PyFlink's ``pyflink.datastream`` package: the stream classes load on first use (they import
Spark; the core does not)."""

import importlib
from typing import Any

_LAZY = {
    "DataStream": "flinkwin.datastream.data_stream",
    "DEFAULT_KEY_GROUPS": "flinkwin.datastream.data_stream",
    "SinkContext": "flinkwin.datastream.data_stream",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'flinkwin.datastream' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
