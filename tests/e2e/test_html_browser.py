"""The HTML export in a real headless browser (Debian's ``chromium``, installed by ``.ci/run``).

The page of a real recorded session (:mod:`tests.e2e.sessions_fixture`: a bounded 440 KB
output, hostile markup in a tool's output, a subagent, a denied call) is opened from a file
and inspected over the DevTools protocol: it renders with its stylesheet (the policy's hash
lets it in), every collapsible opens when its summary is clicked, and nothing the tools printed
runs or changes the layout: no script element, no image, the title unchanged, no link but the
artifact's ``file:`` URL, no horizontal overflow from the 440 KB line.  A screenshot of the
whole page, collapsibles closed, is saved next to it (``HEADWIRE_SCREENSHOT_DIR`` keeps a
copy: ``docs/session-export.png`` is one).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.e2e.browser import Browser, chromium
from tests.e2e.helpers import run_cli
from tests.e2e.sessions_fixture import make_session

pytestmark = pytest.mark.skipif(chromium() is None, reason="chromium is not installed")

INSPECT = """(() => {
  const details = [...document.querySelectorAll('details')];
  const closed = details.map(d => d.open);
  details.forEach(d => d.querySelector('summary').click());
  const turn = document.querySelector('section.turn');
  return {
    title: document.title,
    scripts: document.querySelectorAll('script').length,
    images: document.images.length,
    iframes: document.querySelectorAll('iframe, object, embed').length,
    links: [...document.querySelectorAll('a')].map(a => a.href),
    details: details.length,
    closed: closed,
    opened: details.map(d => d.open),
    openHeights: details.map(d => d.getBoundingClientRect().height),
    summaryHeights: details.map(d => d.querySelector('summary').getBoundingClientRect().height),
    turns: document.querySelectorAll('section.turn').length,
    calls: document.querySelectorAll('.call').length,
    nested: document.querySelectorAll('.children .call').length,
    bounded: document.querySelectorAll('.badge.bounded').length,
    denied: [...document.querySelectorAll('.badge.error')].map(b => b.textContent),
    bodyDisplay: getComputedStyle(document.body).display,
    turnBorder: getComputedStyle(turn).borderTopWidth,
    fitsWidth: document.documentElement.scrollWidth <= document.documentElement.clientWidth
      && [...document.querySelectorAll('.call')].every(c => c.scrollWidth <= c.clientWidth),
    hostileShown: [...document.querySelectorAll('pre')].some(
      p => p.textContent.includes('<script>document.title="pwned"</script>')
        && p.textContent.includes('</details></pre></div></section>')),
    mainChildren: document.querySelector('main').children.length,
    lastCallInsideTurn: !!document.querySelector('section.turn .call:last-of-type'),
  };
})()"""


def test_the_export_renders_opens_and_runs_nothing(tmp_path: Path) -> None:
    binary = chromium()
    assert binary is not None
    _, sid = make_session(tmp_path)
    page = tmp_path / "session.html"
    done = run_cli(["sessions", "export", sid, "--format", "html", "-o", str(page)], tmp_path)
    assert done.returncode == 0, done.stderr
    with Browser(binary) as browser:
        browser.open(page.resolve().as_uri(), width=1100, height=1400)
        state = browser.evaluate(INSPECT)
        log = [e for e in browser.events if e.get("method") == "Log.entryAdded"]
        browser.evaluate("document.querySelectorAll('details').forEach(d => d.open = false)")
        shot = tmp_path / "session.png"
        browser.screenshot(shot, full_page=True)
    assert state["title"] == f"headwire session {sid}"
    assert state["scripts"] == state["images"] == state["iframes"] == 0
    assert state["links"] and all(link.startswith("file:///") for link in state["links"])
    assert all(link.endswith(".output") for link in state["links"])
    assert state["details"] == page.read_text().count("<details") >= 7
    assert not any(state["closed"]) and all(state["opened"])
    assert all(o > s for o, s in zip(state["openHeights"], state["summaryHeights"], strict=True))
    assert state["turns"] == 2 and state["mainChildren"] == 2
    assert state["calls"] == 6 and state["nested"] == 1 and state["bounded"] == 1
    assert state["denied"] == ["execution_denied", "execution_denied"]
    assert state["bodyDisplay"] == "block" and state["turnBorder"] == "1px"
    assert state["fitsWidth"] and state["hostileShown"]
    assert not [e for e in log if "Content Security Policy" in str(e)], log
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keep = os.environ.get("HEADWIRE_SCREENSHOT_DIR")
    if keep:
        shutil.copy(shot, Path(keep) / "session-export.png")
