"""``OutputTag``: names a side output (e.g. late data)."""

from __future__ import annotations

from typing import Any

from flinkwin.errors import UnsupportedOperationError
from flinkwin.types import Types

#: Flink's message (``SingleOutputStreamOperator#getSideOutput``)
NAME_CLASH = (
    "A side output with a matching id was already requested with a different type. This is "
    "not allowed, side output ids need to be unique."
)


class OutputTag:
    """A side-output name; two tags with the same id are the same output.

    ``type_info`` is the side output's type: PyFlink type information (a list of types is
    ``Types.ROW`` of them, as in PyFlink), a DDL string or a StructType; without one (PyFlink's
    ``PICKLED_BYTE_ARRAY`` default) the values travel pickled and come back as they were
    emitted."""

    def __init__(self, tag_id: str, type_info: Any = None) -> None:
        if not isinstance(tag_id, str) or not tag_id:
            raise ValueError("OutputTag id must be a non-empty string")
        self.tag_id = tag_id
        self.type_info = Types.ROW(list(type_info)) if isinstance(type_info, list) else type_info

    def get_id(self) -> str:
        return self.tag_id

    getId = get_id  # noqa: N815

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OutputTag) and other.tag_id == self.tag_id

    def __hash__(self) -> int:
        return hash(("OutputTag", self.tag_id))

    def __repr__(self) -> str:
        return f"OutputTag({self.tag_id!r})"


def request_side_output(requested: dict[str, Any], tag: OutputTag) -> None:
    """Record that ``tag``'s side output was requested of one operator, whose earlier requests
    are ``requested`` (id -> type); as Flink's ``getSideOutput``, refuse a tag whose id was
    requested with another type (no type is PyFlink's default, ``PICKLED_BYTE_ARRAY``)."""
    type_info = Types.PICKLED_BYTE_ARRAY() if tag.type_info is None else tag.type_info
    if requested.setdefault(tag.tag_id, type_info) != type_info:
        raise UnsupportedOperationError(f"getSideOutput({tag!r}): {NAME_CLASH}")
