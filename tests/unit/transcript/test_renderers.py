"""The renderings of a transcript: HTML page, Markdown, terminal text (all pure)."""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.transcript import (
    build_transcript,
    render_html,
    render_json,
    render_markdown,
    render_terminal,
)
from headwire.transcript.html_page import STYLE
from headwire.transcript.long_lines import parse_long_line
from headwire.transcript.markdown import fence
from headwire.wire import encode
from tests.strategies import adversarial_text

HOSTILE = (
    '<script>document.title="pwned"</script>\n</details></pre></div></section>\n'
    '<a href="javascript:alert(1)">x</a> <img src=x onerror="alert(2)">\n'
    "<style>body{display:none}</style> ]]> <!-- \x1b]0;title\x07 \x1b[2J ``` \r\n"
)


def session(display: str, prompt: str = "go", text: str = "done") -> list[dict[str, Any]]:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "run", "arguments": encode({"command": display[:50]}).decode()},
    }
    return [
        {"type": "user", "message": {"role": "user", "content": prompt}, "cwd": "/p"},
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": text, "tool_calls": [call]},
        },
        {
            "type": "user",
            "message": {"role": "user", "content": display},
            "parent_tool_use_id": "c1",
        },
        {
            "type": "tool_result",
            "message": {"role": "tool", "tool_call_id": "c1", "content": display},
            "call_id": "c1",
            "is_error": False,
            "display": display,
            "artifact": "/home/u/.headwire/tmp/x/run_1.output",
        },
        {"type": "result", "is_error": False, "num_turns": 1},
    ]


MARKUP = ["<", ">", "&", '"', "'", "</details>", "<script>", "<a href='javascript:x'>", "-->", "`"]


def hostile_text(atoms: int = 60) -> st.SearchStrategy[str]:
    """Adversarial text with markup mixed in."""
    return st.lists(st.one_of(adversarial_text(3), st.sampled_from(MARKUP)), max_size=atoms).map(
        "".join
    )


def tags(page: str) -> dict[str, int]:
    """How many times each tag opens and closes in ``page``."""
    counts: dict[str, int] = {}
    for name in re.findall(r"<(/?[a-zA-Z!][a-zA-Z0-9]*)", page):
        counts[name.lower()] = counts.get(name.lower(), 0) + 1
    return counts


def neutral(text: str) -> str:
    """``text`` without markup characters, every other byte as it was."""
    return re.sub(r"[<>&\"']", "_", text)


def check_html(records: list[dict[str, Any]], *texts: str) -> str:
    """The page of ``records`` has the same tags as the page of the same records with the
    recorded texts stripped of markup: recorded text adds no element and closes none."""
    page = render_html(build_transcript("s", records)).decode()
    plain = render_html(build_transcript("s", session(*(neutral(t) for t in texts)))).decode()
    assert tags(page) == tags(plain)
    assert "<script" not in page.lower()
    assert page.count("<details") == page.count("</details>")
    assert 'href="javascript' not in page.lower()
    return page


def test_hostile_output_is_text_only_and_the_policy_allows_only_the_stylesheet() -> None:
    page = check_html(session(HOSTILE, HOSTILE, HOSTILE), HOSTILE, HOSTILE, HOSTILE)
    digest = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    csp = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    assert csp is not None
    assert csp.group(1) == (
        f"default-src &#x27;none&#x27;; base-uri &#x27;none&#x27;; form-action &#x27;none&#x27;;"
        f" img-src &#x27;none&#x27;; style-src &#x27;sha256-{digest}&#x27;"
    )
    assert page.index("Content-Security-Policy") < page.index("<style>")
    assert page.count("<style>") == 1 and f"<style>{STYLE}</style>" in page
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in page
    assert "\x1b" not in page and "\x07" not in page
    assert 'href="file:///home/u/.headwire/tmp/x/run_1.output"' in page


@settings(max_examples=150, deadline=None)
@given(hostile_text(), hostile_text(20), hostile_text(20))
def test_any_recorded_text_is_escaped_in_the_page(display: str, prompt: str, text: str) -> None:
    check_html(session(display, prompt, text), display, prompt, text)


@settings(max_examples=150, deadline=None)
@given(hostile_text(), hostile_text(20))
def test_the_terminal_rendering_holds_no_control_character(display: str, prompt: str) -> None:
    t = build_transcript("s", session(display + HOSTILE, prompt))
    out = render_terminal(t, color=False)
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]", out)
    colored = render_terminal(t, color=True)
    assert "\x1b]" not in colored and "\x1b[2J" not in colored


@settings(max_examples=150, deadline=None)
@given(adversarial_text(), st.integers(0, 6))
def test_markdown_fences_are_never_closed_by_recorded_text(display: str, ticks: int) -> None:
    display = display + "\n" + "`" * ticks + "text\n" + "`" * ticks
    t = build_transcript("s", session(display))
    md = render_markdown(t)
    mark = fence(display)
    assert len(mark) > ticks
    open_fence: str | None = None
    for line in md.split("\n"):
        stripped = line.strip()
        run = re.match(r"`{3,}", stripped)
        if open_fence is None and run:
            open_fence = run.group()
        elif open_fence is not None and stripped == open_fence:
            open_fence = None
    assert open_fence is None


def test_json_export_is_the_model_with_its_format() -> None:
    import orjson

    doc = orjson.loads(render_json(build_transcript("s", session("out\ud800put"))))
    assert doc["format"] == "headwire.transcript/1"
    call = doc["transcript"]["turns"][0]["entries"][1]
    assert call["name"] == "run" and call["result"]["wire"]["head"].startswith("out")


def test_two_hundred_five_megabyte_results_make_a_page_under_five_megabytes() -> None:
    display = ("compiling module <x> & linking objects: ok\n" * 120_000)[:5_000_000]
    line = encode(session(display)[3])
    lazy = parse_long_line(line, 0, len(line))
    assert lazy is not None
    records: list[dict[str, Any]] = [{"type": "user", "message": {"role": "user", "content": "go"}}]
    for i in range(200):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "run", "arguments": "{}"}}
        records.append(
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
            }
        )
        records.append({**lazy, "call_id": f"c{i}", "message": {"content": "x"}})
    page = render_html(build_transcript("s", records))
    assert len(page) < 5_000_000
    text = page.decode()
    assert text.count("bounded on the wire: 5,") == 200
    assert text.count("<details") == text.count("</details>") >= 400
