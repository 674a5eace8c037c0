"""The subtask of one key group of a graph stage: the user functions of every node of the
graph, opened once and closed once for all the ``GraphOperator`` objects built for the key group
(one per restore from a snapshot), as a window stage's
:class:`~flinkwin.operator.runtime_context.Subtask` does for its operators."""

from __future__ import annotations

import copy
from typing import Any

from flinkwin.operator.graph import OPERATOR
from flinkwin.operator.runtime_context import Subtask, TaskInfo


class GraphSubtask(Subtask):
    """Per node of ``plan`` a :class:`Subtask`: an operator node's is made by its builder
    (``node.build.subtask(task_info)``: the node's own copies of its functions, opened by the
    operators built with it); a step's (``map``, ``flat_map``, ``filter``) holds the step's own
    copy of its function and rich function (``steps[j]``), opened by the graph operator.
    :meth:`close` closes every node's subtask once, in the graph's order."""

    def __init__(self, plan: Any, info: TaskInfo) -> None:
        super().__init__(None, None, info)
        self.nodes: list[Subtask] = []
        #: per node, ``(function, rich)`` of a step; None for an operator node
        self.steps: list[tuple[Any, Any] | None] = []
        for node in plan.nodes:
            if node.kind == OPERATOR:
                self.nodes.append(node.build.subtask(info))
                self.steps.append(None)
                continue
            try:  # function and rich together, so a bound method stays bound to the copy
                step = copy.deepcopy((node.function, node.rich))
            except Exception:  # an uncopyable object (a lock, a client): share it
                step = (node.function, node.rich)
            self.nodes.append(Subtask(step[1], None, info))
            self.steps.append(step)

    def close(self) -> None:
        """Close every node's subtask (once); every one is closed even if one fails, and the
        first failure is raised."""
        if self.closed:
            return
        self.closed = True
        failure: BaseException | None = None
        for node in self.nodes:
            try:
                node.close()
            except Exception as exc:  # noqa: BLE001 (raised below, after the others)
                failure = failure or exc
        if failure is not None:
            raise failure


__all__ = ["GraphSubtask"]
