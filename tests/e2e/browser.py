"""Drive Debian's headless ``chromium`` over the DevTools protocol on a pipe (no library needed).

``--remote-debugging-pipe`` makes the browser read protocol commands on fd 3 and write answers
and events on fd 4, each message one JSON text ended by a NUL byte.  :class:`Browser` opens a
page, evaluates expressions in it (DevTools evaluation is not subject to the page's
Content-Security-Policy, so a test can inspect a page that runs no script of its own), and
takes screenshots.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--remote-debugging-pipe",
]


def chromium() -> str | None:
    """The chromium binary, if installed."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


class BrowserError(Exception):
    """The browser answered an error, or went away."""


class Browser:
    """One headless chromium with one page."""

    def __init__(self, binary: str, timeout: float = 30) -> None:
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="hw-chromium-")
        to_browser_r, to_browser_w = os.pipe()
        from_browser_r, from_browser_w = os.pipe()
        # above 9, so that they cannot be 3 or 4 themselves
        keep = tuple(
            fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser_r, from_browser_w)
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        # bash (dash takes only one-digit descriptors) puts our pipe ends on fds 3 and 4, then
        # becomes the browser
        place = f'exec "$@" 3<&{keep[0]} 4>&{keep[1]} {keep[0]}<&- {keep[1]}>&-'
        self.proc = subprocess.Popen(
            ["bash", "-c", place, "bash", binary, *FLAGS, f"--user-data-dir={self.profile}"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=keep,
        )
        for fd in keep:
            os.close(fd)
        self._out = to_browser_w
        self._in = from_browser_r
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise BrowserError("timed out waiting for the browser")
            chunk = os.read(self._in, 1 << 20)
            if not chunk:
                raise BrowserError("the browser closed the pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message: dict[str, Any] = json.loads(raw)
        return message

    def send(self, method: str, session: bool = True, **params: Any) -> dict[str, Any]:
        """Send a command and return its result (events seen meanwhile go to ``events``)."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session and self.session is not None:
            message["sessionId"] = self.session
        os.write(self._out, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            answer = self._read_message(deadline)
            if answer.get("id") == self._next_id:
                if "error" in answer:
                    raise BrowserError(f"{method}: {answer['error']}")
                result: dict[str, Any] = answer.get("result", {})
                return result
            self.events.append(answer)

    def wait_for(self, method: str) -> dict[str, Any]:
        """Wait for an event of ``method`` (one already received counts)."""
        deadline = time.monotonic() + self.timeout
        for index, event in enumerate(self.events):
            if event.get("method") == method:
                return self.events.pop(index)
        while True:
            event = self._read_message(deadline)
            if event.get("method") == method:
                return event
            self.events.append(event)

    def open(self, url: str, width: int = 1200, height: int = 900) -> None:
        """Open ``url`` in a new page and wait until it has loaded."""
        target = self.send("Target.createTarget", session=False, url="about:blank")
        attached = self.send(
            "Target.attachToTarget", session=False, targetId=target["targetId"], flatten=True
        )
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable")
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        self.send("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of ``expression`` in the page."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise BrowserError(str(result["exceptionDetails"]))
        return result["result"].get("value")

    def screenshot(self, path: Path, full_page: bool = False) -> None:
        """Save a PNG of the viewport (or of the whole page)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
            )
            params["clip"] = {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", **params)["data"]
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        """Close the browser and remove its profile."""
        with contextlib.suppress(BrowserError, OSError):
            self.send("Browser.close", session=False)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._out, self._in):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
