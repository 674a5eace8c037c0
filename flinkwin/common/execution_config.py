"""``ExecutionConfig``: what ``env.get_config()`` returns (PyFlink's ``ExecutionConfig``).

It records the settings a port keeps. The parallelism is recorded only: Spark's parallelism is
its own setting. The max parallelism is flinkwin's number of key groups: a ``DataStream``
created afterwards without ``key_groups=`` uses it (see ``docs/porting.md``). The automatic
watermark interval and the global job parameters are recorded; flinkwin's watermarks advance
once per micro-batch whatever the interval (``docs/spark-semantics.md``).
"""

from __future__ import annotations

#: Flink's ``ExecutionConfig.PARALLELISM_DEFAULT``: not set, the engine decides.
PARALLELISM_DEFAULT = -1


class ExecutionConfig:
    """The execution settings of a :class:`StreamExecutionEnvironment`."""

    def __init__(self) -> None:
        self._parallelism = PARALLELISM_DEFAULT
        self._max_parallelism = PARALLELISM_DEFAULT
        self._auto_watermark_interval = 200
        self._global_job_parameters: dict[str, str] = {}

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


__all__ = ["PARALLELISM_DEFAULT", "ExecutionConfig"]
