"""Every ``<!-- runnable -->`` example of the documentation site runs and its asserts hold."""

from __future__ import annotations

from pathlib import Path

import pytest
from doc_examples import DOCS, pages_with_examples, run_page, runnable_blocks


def test_each_window_family_page_has_runnable_examples() -> None:
    for name in ["assigners", "triggers", "evictors", "functions"]:
        assert len(runnable_blocks(DOCS / "windows" / f"{name}.md")) >= 2, name


@pytest.mark.parametrize("page", pages_with_examples(), ids=lambda p: str(p.relative_to(DOCS)))
def test_page_examples_run(page: Path) -> None:
    run_page(page)
