"""``web_fetch`` against a real local web server (127.0.0.1), with and without the setting."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.tools import web_fetch as wf
from headwire.runtime.tools.base import ToolContext, ToolOutcome
from headwire.runtime.tools.netguard import GuardedBackend, is_public_address
from headwire.runtime.tools.web_fetch import (
    WebFetchTool,
    html_to_markdown,
    rewrite_github_blob,
    same_origin,
)
from tests.fakes.web_server import WebServer


class DirSink:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.saved: list[Path] = []

    def save(self, tool_name: str, data: bytes) -> Path:
        path = self.directory / f"{tool_name}_{len(self.saved)}.output"
        path.write_bytes(data)
        self.saved.append(path)
        return path


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, artifacts=DirSink(tmp_path))


@pytest.fixture
def server() -> Any:
    with WebServer() as web:
        yield web


def fetch(tool: WebFetchTool, ctx: ToolContext, url: str, **extra: Any) -> ToolOutcome:
    args = {"url": url, "prompt": "what does it say?", **extra}
    assert tool.validate(args) is None

    async def go() -> ToolOutcome:
        ctx.cancelled = asyncio.Event()  # one per event loop
        return await tool.run(args, ctx)

    return asyncio.run(go())


def test_addresses() -> None:
    public = ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "93.184.216.34"]
    private = [
        "127.0.0.1",
        "127.8.9.1",
        "::1",
        "10.0.0.1",
        "172.16.5.5",
        "192.168.1.1",
        "169.254.169.254",
        "fe80::1%eth0",
        "fc00::1",
        "100.64.0.1",
        "0.0.0.0",
        "::",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "224.0.0.1",
        "255.255.255.255",
        "not an address",
    ]
    assert all(is_public_address(a) for a in public)
    assert not any(is_public_address(a) for a in private)


def test_private_addresses_are_refused_before_any_request(ctx: ToolContext, server: Any) -> None:
    tool = WebFetchTool()
    for url in (server.url("/page"), server.url("/page").replace("127.0.0.1", "localhost")):
        out = fetch(tool, ctx, url)
        assert out.error is not None and "not a public internet address" in out.error
        assert "tools.webFetch.allowPrivateNetwork" in out.llm_text
    assert server.requests == []  # refused at connect time, after DNS resolution


def test_html_becomes_markdown_with_metadata(ctx: ToolContext, server: Any) -> None:
    out = fetch(WebFetchTool(allow_private=True), ctx, server.url("/page"))
    assert out.error is None
    text = out.llm_text
    assert text.startswith(f"URL: {server.url('/page')}\nStatus: 200 OK | Content-Type: text/html")
    assert "# Docs" in text and "[the link](https://example.org/x)" in text
    assert "* one" in text and "x = 1" in text and "The request: what does it say?" in text
    assert "secret" not in text and "color:red" not in text and "i.png" not in text
    assert out.display is not None and out.display.startswith("Received ")
    assert "from 127.0.0.1 in " in out.display


def test_text_json_binary_and_errors(ctx: ToolContext, server: Any) -> None:
    tool = WebFetchTool(allow_private=True)
    assert "plain é text" in fetch(tool, ctx, server.url("/text")).llm_text
    assert '{"a": 1}' in fetch(tool, ctx, server.url("/json")).llm_text
    binary = fetch(tool, ctx, server.url("/bin"))
    saved = ctx.artifacts.saved  # type: ignore[attr-defined]
    assert len(saved) == 1 and saved[0].read_bytes().startswith(b"\x89PNG")
    assert f"saved to {saved[0]}" in binary.llm_text
    missing = fetch(tool, ctx, server.url("/missing"))
    assert missing.error is not None and "status code 404" in missing.error


def test_redirects_same_host_followed_cross_host_reported_loops_capped(
    ctx: ToolContext, server: Any
) -> None:
    tool = WebFetchTool(allow_private=True)
    same = fetch(tool, ctx, server.url("/same"))
    assert f"(final: {server.url('/page')})" in same.llm_text and "# Docs" in same.llm_text
    cross = fetch(tool, ctx, server.url("/cross"))
    assert cross.error is None and "redirect was not followed" in cross.llm_text
    assert "localhost" in cross.llm_text and "/page" not in server.requests[-1]
    server.requests.clear()
    loop = fetch(tool, ctx, server.url("/loop"))
    assert loop.error is not None and "Too many redirects" in loop.error
    assert len(server.requests) == wf.MAX_REDIRECTS + 1


def test_size_and_time_limits(ctx: ToolContext, server: Any, monkeypatch: Any) -> None:
    tool = WebFetchTool(allow_private=True)
    huge = fetch(tool, ctx, server.url("/huge"))
    assert huge.error is not None and "Response too large" in huge.error
    big = fetch(tool, ctx, server.url("/big?n=3000000"))
    assert "Content truncated: showing the first 100,000 of" in big.llm_text
    assert "Only the first 1,048,576 bytes of the HTML were converted" in big.llm_text
    ctx.timeout_s = 0.5
    started = time.monotonic()
    slow = fetch(tool, ctx, server.url("/slow?s=3"))
    assert slow.error is not None and "timed out after 0.5s" in slow.error
    assert time.monotonic() - started < 2


def test_cancel_stops_a_fetch_within_a_second(ctx: ToolContext, server: Any) -> None:
    tool = WebFetchTool(allow_private=True)

    async def scenario() -> tuple[ToolOutcome, float]:
        ctx.cancelled = asyncio.Event()
        args = {"url": server.url("/slow?s=5"), "prompt": "p"}
        task = asyncio.ensure_future(tool.run(args, ctx))
        await asyncio.sleep(0.3)
        started = time.monotonic()
        ctx.cancelled.set()
        out = await task
        return out, time.monotonic() - started

    out, took = asyncio.run(scenario())
    assert out.error is not None and "cancelled" in out.error and took < 1


def test_validation_messages() -> None:
    tool = WebFetchTool()
    cases = {
        "": "The 'url' parameter cannot be empty.",
        "ftp://x": "The 'url' must be a valid URL starting with http:// or https://.",
        "http://u:p@example.com/": "The 'url' must not include credentials.",
        "http://example.com:99999/": "The 'url' is malformed and could not be parsed.",
    }
    for url, message in cases.items():
        assert tool.validate({"url": url, "prompt": "p"}) == message
    assert tool.validate({"url": "https://e.com", "prompt": " "}) == (
        "The 'prompt' parameter cannot be empty."
    )
    assert tool.validate({"url": "https://e.com"}) == "params must have required property 'prompt'"
    assert tool.validate({"url": "https://e.com", "prompt": "p", "format": "pdf"}) is not None
    assert tool.needs_approval({}, "default") and not tool.needs_approval({}, "yolo")


def test_helpers() -> None:
    assert same_origin("http://a.com/x", "http://www.a.com/y")
    assert not same_origin("http://a.com/x", "https://a.com/x")
    assert not same_origin("http://a.com/x", "http://a.com:81/x")
    assert rewrite_github_blob("https://github.com/o/r/blob/main/README.md") == (
        "https://raw.githubusercontent.com/o/r/main/README.md"
    )
    assert rewrite_github_blob("https://example.com/o/r/blob/x") == "https://example.com/o/r/blob/x"
    assert html_to_markdown("<p>a</p><p>b</p>") == "a\n\nb"


def test_guard_checks_every_resolved_address() -> None:
    guard = GuardedBackend(allow_private=False)
    guard.check("example.com", ["93.184.216.34"])
    with pytest.raises(Exception, match=r"example\.com \(10\.0\.0\.1\)"):
        guard.check("example.com", ["93.184.216.34", "10.0.0.1"])  # rebinding-style answer
    GuardedBackend(allow_private=True).check("x", ["127.0.0.1"])
    assert os.environ.get("HTTPS_PROXY") is None or True  # proxies are never used (trust_env off)


@given(st.ip_addresses(v=4))
def test_mapped_ipv4_is_judged_as_ipv4(address: Any) -> None:
    """Invariant (netguard docstring): an IPv4 address mapped into IPv6 gets the same verdict."""
    assert is_public_address(f"::ffff:{address}") == is_public_address(str(address))


@given(st.ip_addresses())
def test_loopback_private_and_link_local_are_never_public(address: Any) -> None:
    """Invariant: loopback, private, link-local, multicast and unspecified are not public."""
    if address.is_loopback or address.is_private or address.is_link_local or address.is_multicast:
        assert not is_public_address(str(address))


_BOMB_CHILD = """
import asyncio, json, sys
from pathlib import Path
from headwire.runtime.tools.base import ToolContext
from headwire.runtime.tools.web_fetch import WebFetchTool

class Sink:
    def save(self, tool_name, data):
        raise AssertionError("nothing is saved")

async def main():
    errors = []
    for url in sys.argv[1:]:
        ctx = ToolContext(cwd=Path.cwd(), artifacts=Sink())
        out = await WebFetchTool(allow_private=True).run({"url": url, "prompt": "p"}, ctx)
        errors.append(out.error)
    return errors

errors = asyncio.run(main())
peak = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:")).split()[1]
print(json.dumps({"errors": errors, "peak_kib": int(peak)}))
"""


def test_a_decompression_bomb_is_capped_as_it_is_decoded(server: Any) -> None:
    """256 MiB of zeros sent as ``gzip``, ``deflate``, ``gzip, gzip`` (a few KB) and
    ``deflate, gzip``: each fetch fails "too large" and the process's peak RSS stays near its
    baseline.  Before, httpx inflated each received chunk whole (one 2.5 KB chunk of
    ``gzip, gzip`` became 256 MiB) and the cap was checked after: 1 GiB took 1,068 MiB."""
    import json
    import subprocess
    import sys

    urls = [server.url(f"/bomb?mib=256&enc={enc}") for enc in ("gzip", "deflate")] + [
        server.url(f"/bomb?mib=256&enc={enc}") for enc in ("gzip,gzip", "deflate,gzip")
    ]
    proc = subprocess.run(
        [sys.executable, "-c", _BOMB_CHILD, *urls],
        capture_output=True,
        timeout=120,
        check=False,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    peak_mib = report["peak_kib"] / 1024
    print(f"peak RSS fetching four 256 MiB bombs: {peak_mib:.0f} MiB")
    assert peak_mib < 150
    for error in report["errors"]:
        assert error is not None and "Response too large" in error and "decoded" in error
