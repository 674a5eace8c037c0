"""``RuntimeContext``: what a rich function learns in ``open`` (PyFlink's method names).

Task information and keyed state scoped to the key currently being processed (Flink's
``getRuntimeContext().getState(...)``). The operator provides the implementation
(:class:`flinkwin.operator.runtime_context.OperatorRuntimeContext`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any


class RuntimeContext(ABC):
    """Task information and keyed state of the running function."""

    @abstractmethod
    def get_task_name(self) -> str: ...

    @abstractmethod
    def get_number_of_parallel_subtasks(self) -> int: ...

    @abstractmethod
    def get_max_number_of_parallel_subtasks(self) -> int: ...

    @abstractmethod
    def get_index_of_this_subtask(self) -> int: ...

    @abstractmethod
    def get_attempt_number(self) -> int: ...

    @abstractmethod
    def get_task_name_with_subtasks(self) -> str: ...

    @abstractmethod
    def get_job_parameter(self, key: str, default_value: str) -> str: ...

    @abstractmethod
    def get_metrics_group(self) -> Any:
        """The function's :class:`~flinkwin.metrics.MetricGroup`."""

    @abstractmethod
    def get_state(self, state_descriptor: Any) -> Any:
        """A ``ValueState`` of the current key."""

    @abstractmethod
    def get_list_state(self, state_descriptor: Any) -> Any: ...

    @abstractmethod
    def get_map_state(self, state_descriptor: Any) -> Any: ...

    @abstractmethod
    def get_reducing_state(self, state_descriptor: Any) -> Any: ...

    @abstractmethod
    def get_aggregating_state(self, state_descriptor: Any) -> Any: ...

    def getTaskName(self) -> str:  # noqa: N802 (Java names)
        return self.get_task_name()

    def getNumberOfParallelSubtasks(self) -> int:  # noqa: N802
        return self.get_number_of_parallel_subtasks()

    def getMaxNumberOfParallelSubtasks(self) -> int:  # noqa: N802
        return self.get_max_number_of_parallel_subtasks()

    def getIndexOfThisSubtask(self) -> int:  # noqa: N802
        return self.get_index_of_this_subtask()

    def getAttemptNumber(self) -> int:  # noqa: N802
        return self.get_attempt_number()

    def getTaskNameWithSubtasks(self) -> str:  # noqa: N802
        return self.get_task_name_with_subtasks()

    def getMetricGroup(self) -> Any:  # noqa: N802
        return self.get_metrics_group()

    def getState(self, state_descriptor: Any) -> Any:  # noqa: N802
        return self.get_state(state_descriptor)

    def getListState(self, state_descriptor: Any) -> Any:  # noqa: N802
        return self.get_list_state(state_descriptor)

    def getMapState(self, state_descriptor: Any) -> Any:  # noqa: N802
        return self.get_map_state(state_descriptor)

    def getReducingState(self, state_descriptor: Any) -> Any:  # noqa: N802
        return self.get_reducing_state(state_descriptor)

    def getAggregatingState(self, state_descriptor: Any) -> Any:  # noqa: N802
        return self.get_aggregating_state(state_descriptor)
