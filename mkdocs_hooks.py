"""MkDocs hooks: the Notebooks page lists the notebooks found in ``notebooks/`` at build time,
`docs/x.md` mentions become links, and the API reference drops the Sphinx roles of the
docstrings.

The page carries the marker ``<!-- notebooks -->``; each notebook becomes a row with its title
(the first Markdown heading) and its path. Notebooks are not executed by the site build (the
test suite runs them, ``tests/test_notebooks.py``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

MARKER = "<!-- notebooks -->"
NOTEBOOKS = Path(__file__).resolve().parent / "notebooks"


def notebook_title(path: Path) -> str:
    """The notebook's first Markdown heading, or its file name."""
    cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    for cell in cells:
        if cell.get("cell_type") != "markdown":
            continue
        source = cell.get("source", "")
        text = "".join(source) if isinstance(source, list) else source
        for line in text.splitlines():
            if line.startswith("#"):
                return line.lstrip("#").strip()
    return path.stem


def notebook_table(folder: Path = NOTEBOOKS) -> str:
    """A Markdown table of the notebooks in ``folder``, sorted by file name."""
    rows = ["| Notebook | File |", "|---|---|"]
    for path in sorted(folder.glob("*.ipynb")):
        rows.append(f"| {notebook_title(path)} | `notebooks/{path.name}` |")
    return "\n".join(rows)


# Sphinx roles in docstrings (":class:`~flinkwin.x.Y`") that mkdocstrings leaves as text
_ROLE = re.compile(
    r":(?:class|func|meth|mod|attr|data|exc|obj):<code>(?P<short>~?)(?P<target>[\w.]+)</code>"
)


def _reference(match: re.Match[str]) -> str:
    """A cross-reference as a link to the object's reference entry (mkdocs-autorefs resolves
    it, or leaves the name as text where the object has no entry); ``~`` shows the last part."""
    target = match["target"]
    title = target.rsplit(".", 1)[-1] if match["short"] else target
    if not target.startswith("flinkwin"):
        return f"<code>{title}</code>"
    return f'<autoref identifier="{target}" optional><code>{title}</code></autoref>'


def on_page_content(html: str, page: Any, **_: Any) -> str:
    """Turn the Sphinx roles of docstrings into links (no ``:class:`` or ``~`` shown)."""
    return _ROLE.sub(_reference, html)


# The pages name each other as `docs/page.md` (readable in the repository); on the site each such
# mention becomes a link to the page (mkdocs then validates it).
_DOC_MENTION = re.compile(r"`docs/([\w\-/]+\.md)`")
DOCS = Path(__file__).resolve().parent / "docs"


def link_doc_mentions(markdown: str, page_path: str) -> str:
    """Turn `docs/x.md` mentions of existing pages into links relative to ``page_path``."""
    depth = page_path.count("/")

    def link(match: re.Match[str]) -> str:
        target = match.group(1)
        if not (DOCS / target).exists():
            return match.group(0)
        return f"[`docs/{target}`]({'../' * depth}{target})"

    return _DOC_MENTION.sub(link, markdown)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, notebook_table())
    return link_doc_mentions(markdown, page.file.src_uri)
