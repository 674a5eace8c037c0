"""The documentation site: ``mkdocs build --strict`` succeeds, every page is in it, and every
built page renders in headless Chromium without console errors, uncaught exceptions or failed
resource loads. Chromium is Debian's ``chromium`` package (``.ci/run`` installs it); on a
developer machine without it the browser check skips and says so."""

from __future__ import annotations

import functools
import http.server
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_examples import DOCS
from headless_chromium import HeadlessChromium, find_chromium

# builds the site and runs a browser for a while: `make test` runs it beside the rest
pytestmark = pytest.mark.beside

ROOT = DOCS.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    started = time.monotonic()
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert build.returncode == 0, build.stdout + build.stderr
    print(f"mkdocs build --strict: {time.monotonic() - started:.1f} s")
    return out


def _html_pages(site: Path) -> list[str]:
    return sorted(str(p.relative_to(site)) for p in site.rglob("*.html")
                  if p.name != "404.html" and not p.name.startswith("_"))


def test_site_builds_strict_with_every_page(site: Path) -> None:
    pages = _html_pages(site)
    for md in DOCS.rglob("*.md"):
        assert str(md.relative_to(DOCS).with_suffix(".html")) in pages, md
    # the API reference is generated from the docstrings
    triggers = (site / "reference" / "triggers.html").read_text(encoding="utf-8")
    assert "ContinuousEventTimeTrigger" in triggers and "doc-heading" in triggers
    # the diagram and the benchmark plots are part of the site
    assert (site / "img" / "flink-vs-microbatch.svg").exists()
    assert list((site / "img").glob("bench_*.png"))


def test_notebooks_page_lists_every_notebook(site: Path) -> None:
    page = (site / "notebooks.html").read_text(encoding="utf-8")
    notebooks = sorted((ROOT / "notebooks").glob("*.ipynb"))
    assert notebooks
    for notebook in notebooks:
        assert f"notebooks/{notebook.name}" in page, notebook.name


def test_site_loads_nothing_from_other_hosts(site: Path) -> None:
    # the site must work offline: no fonts, scripts or styles from CDNs
    for page in _html_pages(site):
        html = (site / page).read_text(encoding="utf-8")
        for attribute in ('src="http', "href=\"https://fonts", "src='http"):
            assert attribute not in html, (page, attribute)


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def chromium() -> Iterator[HeadlessChromium]:
    binary = find_chromium()
    if binary is None:
        pytest.skip("headless Chromium is not installed (apt-get install chromium); "
                    ".ci/run installs it, so CI runs this check")
    with HeadlessChromium(binary) as browser:
        yield browser


def test_browser_check_reports_console_errors_and_missing_resources(
        site: Path, served: str, chromium: HeadlessChromium) -> None:
    # the check itself: a page with a console error, an exception and a missing image fails it
    (site / "_broken.html").write_text(
        "<html><body><img src='missing.png'>"
        "<script>console.error('boom'); null.x;</script></body></html>", encoding="utf-8")
    problems = " | ".join(chromium.load(served + "_broken.html").problems)
    assert "console.error: boom" in problems
    assert "uncaught exception" in problems
    assert "missing.png" in problems


def test_every_page_renders_without_console_errors(
        site: Path, served: str, chromium: HeadlessChromium) -> None:
    shots = Path(os.environ.get("FLINKWIN_SCREENSHOTS", site.parent / "screenshots"))
    shots.mkdir(parents=True, exist_ok=True)
    screenshots = {"index.html": "home.png", "windows/triggers.html": "triggers.png",
                   "concepts.html": "concepts.png", "migration.html": "migration.png"}
    started = time.monotonic()
    failures = {}
    for page in _html_pages(site):
        shot = screenshots.get(page)
        report = chromium.load(served + page, screenshot=str(shots / shot) if shot else None)
        if report.problems:
            failures[page] = report.problems
        assert report.title.endswith("flinkwin"), (page, report.title)
    print(f"browser check of {len(_html_pages(site))} pages: {time.monotonic() - started:.1f} s")
    assert not failures, json.dumps(failures, indent=1)
    for shot in screenshots.values():
        assert (shots / shot).stat().st_size > 10_000, shot  # a rendered page, not a blank one


def test_doc_mentions_become_relative_links() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from mkdocs_hooks import link_doc_mentions
    finally:
        sys.path.remove(str(ROOT))
    text = "see `docs/sinks.md` and `docs/no-such-page.md`"
    assert link_doc_mentions(text, "operations.md") == (
        "see [`docs/sinks.md`](sinks.md) and `docs/no-such-page.md`")
    assert "(../sinks.md)" in link_doc_mentions(text, "windows/triggers.md")
