"""The documentation site's examples marked ``<!-- runnable: spark -->`` run on the shared local
Spark session and their asserts hold (the core examples run in ``tests/docs``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

_spec = importlib.util.spec_from_file_location(
    "doc_examples", Path(__file__).resolve().parents[1] / "docs" / "doc_examples.py")
assert _spec and _spec.loader
doc_examples = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(doc_examples)


def test_getting_started_has_a_spark_example() -> None:
    assert doc_examples.runnable_blocks(doc_examples.DOCS / "getting-started.md", "spark")


@pytest.mark.parametrize("page", doc_examples.pages_with_examples("spark"),
                         ids=lambda p: str(p.relative_to(doc_examples.DOCS)))
def test_page_spark_examples_run(page: Path, spark: Any) -> None:
    doc_examples.run_page(page, "spark", spark=spark)
