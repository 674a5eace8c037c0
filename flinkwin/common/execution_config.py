"""``ExecutionConfig``: what ``env.get_config()`` returns (PyFlink's ``ExecutionConfig``).

It records the settings a port keeps. The parallelism is recorded only: Spark's parallelism is
its own setting. The max parallelism is flinkwin's number of key groups: a ``DataStream``
created afterwards without ``key_groups=`` uses it (see ``docs/porting.md``). The automatic
watermark interval and the global job parameters are recorded; flinkwin's watermarks advance
once per micro-batch whatever the interval (``docs/spark-semantics.md``).

Every method also has Flink's Java name (``setAutoWatermarkInterval``, ``enableObjectReuse``).

PyFlink's switches for its JVM runtime (object reuse, the closure cleaner, generic types, Kryo
and Avro, auto-generated uids, latency tracking, task cancellation, snapshot compression) are
recorded and read back, and change nothing: flinkwin's Python functions always get fresh
objects, as Flink's do without object reuse, and Spark serializes and compresses its state
itself.
"""

from __future__ import annotations

from typing import Any

#: Flink's ``ExecutionConfig.PARALLELISM_DEFAULT``: not set, the engine decides.
PARALLELISM_DEFAULT = -1


def _switches(name: str, read_negated: bool = False) -> tuple[Any, Any, Any]:
    """PyFlink's ``enable_<x>``, ``disable_<x>`` and its query for the recorded switch
    ``name`` (the query answers "disabled?" when ``read_negated``)."""

    def enable(self: ExecutionConfig) -> ExecutionConfig:
        return self._switch(name, True)

    def disable(self: ExecutionConfig) -> ExecutionConfig:
        return self._switch(name, False)

    def query(self: ExecutionConfig) -> bool:
        return self._switches[name] is not read_negated

    return enable, disable, query


class ExecutionConfig:
    """The execution settings of a :class:`StreamExecutionEnvironment`."""

    def __init__(self) -> None:
        self._parallelism = PARALLELISM_DEFAULT
        self._max_parallelism = PARALLELISM_DEFAULT
        self._auto_watermark_interval = 200
        self._global_job_parameters: dict[str, str] = {}
        self._switches = dict(_SWITCHES)
        self._intervals = dict(_INTERVALS)

    def set_parallelism(self, parallelism: int) -> ExecutionConfig:
        """Record the default parallelism (a positive int)."""
        if not isinstance(parallelism, int) or isinstance(parallelism, bool) or (
            parallelism < 1 and parallelism != PARALLELISM_DEFAULT
        ):
            raise ValueError(f"parallelism must be a positive int, got {parallelism!r}")
        self._parallelism = parallelism
        return self

    def get_parallelism(self) -> int:
        """The recorded parallelism, or -1 (``PARALLELISM_DEFAULT``) when none was set."""
        return self._parallelism

    def set_max_parallelism(self, max_parallelism: int) -> ExecutionConfig:
        """The number of key groups of the window stages of streams created afterwards."""
        if not isinstance(max_parallelism, int) or isinstance(max_parallelism, bool) or (
            max_parallelism < 1
        ):
            raise ValueError(f"max parallelism must be a positive int, got {max_parallelism!r}")
        self._max_parallelism = max_parallelism
        return self

    def get_max_parallelism(self) -> int:
        """The recorded max parallelism, or -1 when none was set."""
        return self._max_parallelism

    def set_auto_watermark_interval(self, interval: int) -> ExecutionConfig:
        """Record Flink's periodic watermark interval (milliseconds); see module docstring."""
        self._auto_watermark_interval = int(interval)
        return self

    def get_auto_watermark_interval(self) -> int:
        return self._auto_watermark_interval

    def set_global_job_parameters(self, global_job_parameters_dict: dict[str, str]) -> (
        ExecutionConfig
    ):
        """Record job parameters (a dict of strings)."""
        self._global_job_parameters = dict(global_job_parameters_dict)
        return self

    def get_global_job_parameters(self) -> dict[str, str]:
        return dict(self._global_job_parameters)

    def _switch(self, name: str, on: bool) -> ExecutionConfig:
        self._switches[name] = on
        return self

    def _interval(self, name: str, value: int) -> ExecutionConfig:
        if not isinstance(value, int) or isinstance(value, bool):
            raise ValueError(f"{name} must be an int (milliseconds), got {value!r}")
        self._intervals[name] = value
        return self

    enable_object_reuse, disable_object_reuse, is_object_reuse_enabled = _switches(
        "object_reuse")
    enable_closure_cleaner, disable_closure_cleaner, is_closure_cleaner_enabled = _switches(
        "closure_cleaner")
    enable_generic_types, disable_generic_types, has_generic_types_disabled = _switches(
        "generic_types", read_negated=True)
    enable_force_kryo, disable_force_kryo, is_force_kryo_enabled = _switches("force_kryo")
    enable_force_avro, disable_force_avro, is_force_avro_enabled = _switches("force_avro")
    enable_auto_generated_uids, disable_auto_generated_uids, has_auto_generated_uids_enabled = (
        _switches("auto_generated_uids"))

    def set_use_snapshot_compression(self, use_snapshot_compression: bool) -> ExecutionConfig:
        return self._switch("snapshot_compression", bool(use_snapshot_compression))

    def is_use_snapshot_compression(self) -> bool:
        return self._switches["snapshot_compression"]

    def set_latency_tracking_interval(self, interval: int) -> ExecutionConfig:
        return self._interval("latency_tracking_interval", interval)

    def get_latency_tracking_interval(self) -> int:
        return self._intervals["latency_tracking_interval"]

    def set_task_cancellation_interval(self, interval: int) -> ExecutionConfig:
        return self._interval("task_cancellation_interval", interval)

    def get_task_cancellation_interval(self) -> int:
        return self._intervals["task_cancellation_interval"]

    def set_task_cancellation_timeout(self, timeout: int) -> ExecutionConfig:
        return self._interval("task_cancellation_timeout", timeout)

    def get_task_cancellation_timeout(self) -> int:
        return self._intervals["task_cancellation_timeout"]


#: PyFlink's switches and Flink's defaults for them (see module docstring)
_SWITCHES = {
    "object_reuse": False, "closure_cleaner": True, "generic_types": True, "force_kryo": False,
    "force_avro": False, "auto_generated_uids": True, "snapshot_compression": False,
}
#: Flink's defaults: latency tracking off (0), cancellation every 30 s, timeout 180 s
_INTERVALS = {
    "latency_tracking_interval": 0, "task_cancellation_interval": 30_000,
    "task_cancellation_timeout": 180_000,
}



def _java_name(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


# Flink's Java names (``setAutoWatermarkInterval``, ``enableObjectReuse``...) for every method
for _name in [n for n in vars(ExecutionConfig) if not n.startswith("_")]:
    setattr(ExecutionConfig, _java_name(_name), getattr(ExecutionConfig, _name))

__all__ = ["PARALLELISM_DEFAULT", "ExecutionConfig"]
