"""Headless Chromium driven over the Chrome DevTools Protocol, standard library only.

Chromium's ``--remote-debugging-pipe`` reads NUL-terminated JSON commands on fd 3 and writes
responses and events on fd 4, so no websocket library (or selenium/playwright) is needed.
:meth:`HeadlessChromium.load` opens a URL in the browser's tab, waits for its load event and returns
what the page reported as a problem: console errors/assertions, uncaught exceptions and
browser log errors (such as a resource that failed to load).
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--remote-debugging-pipe",
]


def find_chromium() -> str | None:
    """Debian's ``chromium`` (or Google Chrome's binary name), if installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageReport:
    url: str
    problems: list[str] = field(default_factory=list)
    title: str = ""


class HeadlessChromium:
    """One headless browser; use as a context manager."""

    def __init__(self, binary: str, timeout: float = 30.0) -> None:
        self.binary = binary
        self.timeout = timeout
        self._next_id = 0
        self._buffer = b""
        self._events: list[dict[str, Any]] = []
        self._session: str | None = None

    def __enter__(self) -> HeadlessChromium:
        self._profile = tempfile.TemporaryDirectory(prefix="flinkwin-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # The browser must find the pipe on fds 3 (its input) and 4 (its output); the shell
        # (bash: dash accepts single-digit fds only) moves them there, from fds above 10 so that no
        # redirection overwrites the other.
        child_r, child_w = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
                            for fd in (to_browser_r, from_browser_w))
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._log = open(os.path.join(self._profile.name, "chromium.log"), "wb")  # noqa: SIM115
        command = f'exec "$0" "$@" 3<&{child_r} 4>&{child_w}'
        self._process = subprocess.Popen(
            ["bash", "-c", command, self.binary, *CHROMIUM_FLAGS,
             f"--user-data-dir={self._profile.name}", "--window-size=1280,900", "about:blank"],
            pass_fds=(child_r, child_w),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self._log,
        )
        os.close(child_r)
        os.close(child_w)
        return self

    def __exit__(self, *exc: Any) -> None:
        with contextlib.suppress(Exception):  # the browser may be gone already
            self.call("Browser.close")
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_browser)
        os.close(self._from_browser)
        self._log.close()
        self._profile.cleanup()

    # ------------------------------------------------------------------ protocol
    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self._from_browser], [], [], remaining)
            if ready:
                chunk = os.read(self._from_browser, 1 << 20)
                if not chunk:
                    self._process.wait(timeout=5)
                    with open(self._log.name, "rb") as log:
                        tail = log.read()[-2000:].decode(errors="replace")
                    raise RuntimeError(
                        f"Chromium exited (code {self._process.returncode}):\n{tail}")
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)  # type: ignore[no-any-return]

    def call(self, method: str, params: dict[str, Any] | None = None,
             session: str | None = None) -> dict[str, Any]:
        """Send one command and return its result; events seen meanwhile are kept."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})  # type: ignore[no-any-return]
            self._events.append(reply)

    def _wait_for_event(self, method: str, session: str) -> None:
        deadline = time.monotonic() + self.timeout
        while True:
            for event in self._events:
                if event.get("method") == method and event.get("sessionId") == session:
                    return
            self._events.append(self._read_message(deadline))

    # ------------------------------------------------------------------ pages
    def _tab(self) -> str:
        """The session of the one tab all pages load in (created on first use)."""
        if self._session is None:
            target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            self._session = self.call(
                "Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log"):
                self.call(f"{domain}.enable", session=self._session)
        return self._session

    def load(self, url: str, screenshot: str | None = None, settle: float = 0.1) -> PageReport:
        """Navigate to ``url``, wait for its load event and ``settle`` seconds more
        (asynchronous loads such as the search index), optionally save a PNG screenshot, and
        report the page's problems."""
        session = self._tab()
        self._events = []
        self.call("Page.navigate", {"url": url}, session=session)
        self._wait_for_event("Page.loadEventFired", session)
        time.sleep(settle)
        report = PageReport(url)
        # this round trip also collects the events that arrived while settling
        report.title = self.call("Runtime.evaluate", {"expression": "document.title"},
                                 session=session)["result"].get("value", "")
        for event in self._events:
            if event.get("sessionId") == session:
                problem = _problem(event)
                if problem:
                    report.problems.append(problem)
        if screenshot:
            data = self.call("Page.captureScreenshot", {"format": "png"}, session=session)
            with open(screenshot, "wb") as out:
                out.write(base64.b64decode(data["data"]))
        return report


def _problem(event: dict[str, Any]) -> str | None:
    """A console error/assert, an uncaught exception or a browser log error, as text."""
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        args = " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"])
        return f"console.{params['type']}: {args}"
    if method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        text = details.get("exception", {}).get("description") or details.get("text")
        return f"uncaught exception: {text}"
    if method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        entry = params["entry"]
        return f"{entry.get('source')} error: {entry.get('text')} {entry.get('url', '')}".strip()
    return None
