"""The site's runnable examples: Python code blocks marked ``<!-- runnable -->`` (run on the
core, no Spark) or ``<!-- runnable: spark -->`` (run with a Spark session named ``spark``).

A page's marked blocks run in order in one namespace, so a later block may use what an earlier
one defined; the blocks state their results with ``assert``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[2] / "docs"

_BLOCK = re.compile(
    r"<!-- runnable(?:: (?P<kind>\w+))? -->\s*\n```python\n(?P<code>.*?)\n```", re.S)


def runnable_blocks(page: Path, kind: str = "core") -> list[str]:
    """The code of ``page``'s blocks marked runnable for ``kind`` ("core" or "spark")."""
    text = page.read_text(encoding="utf-8")
    return [m["code"] for m in _BLOCK.finditer(text) if (m["kind"] or "core") == kind]


def pages_with_examples(kind: str = "core") -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if runnable_blocks(p, kind))


def run_page(page: Path, kind: str = "core", **names: Any) -> None:
    """Run the page's blocks in one namespace; a failing block names the page and block."""
    # A module name that is not importable: Spark pickles the page's classes by value.
    namespace: dict[str, Any] = {"__name__": f"docs_example_{page.stem}", **names}
    for i, code in enumerate(runnable_blocks(page, kind), start=1):
        compiled = compile(code, f"{page.relative_to(DOCS)} (runnable block {i})", "exec")
        exec(compiled, namespace)
