"""``OutputTag``: names a side output (e.g. late data)."""

from __future__ import annotations

from typing import Any

from flinkwin.types import Types


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
