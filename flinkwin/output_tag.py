"""``OutputTag``: names a side output (e.g. late data)."""

from __future__ import annotations

from typing import Any


class OutputTag:
    """A side-output name; two tags with the same id are the same output."""

    def __init__(self, tag_id: str, type_info: Any = None) -> None:
        if not isinstance(tag_id, str) or not tag_id:
            raise ValueError("OutputTag id must be a non-empty string")
        self.tag_id = tag_id
        self.type_info = type_info

    def get_id(self) -> str:
        return self.tag_id

    getId = get_id  # noqa: N815

    def __eq__(self, other: object) -> bool:
        return isinstance(other, OutputTag) and other.tag_id == self.tag_id

    def __hash__(self) -> int:
        return hash(("OutputTag", self.tag_id))

    def __repr__(self) -> str:
        return f"OutputTag({self.tag_id!r})"
