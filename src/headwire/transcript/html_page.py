"""A transcript as one self-contained HTML page (pure): ``headwire sessions export --format html``.

Everything in a transcript was written by models and tools, so the page treats all of it as
text: every recorded string is HTML-escaped (``&``, ``<``, ``>``, both quotes) and control
characters other than tab and newline become U+FFFD; no recorded string is put into a tag name,
an attribute name, a URL scheme, a style or a script.  The page has no script at all;
collapsibles are ``<details>``.  Its Content-Security-Policy (a ``<meta>`` tag right after
the charset) is :data:`CSP` plus the SHA-256 of its one inline stylesheet, so even markup that
slipped through escaping could not run, load or send anything.  The one link
built from the recording is the artifact's ``file:`` URL, made from an absolute path.

The page shows each turn with its usage, each tool call with its arguments, its wire view
(flagged with both byte counts when the headless bound cut it) and its full output behind a
``<details>`` (head and tail, with a link to the artifact when the output was saved), and the
events of a subagent nested under the call that started it.  How much of each text it shows is
:func:`headwire.transcript.budget.page_cap`.

Invariants (hypothesis properties in ``tests/unit/transcript/test_html_page.py``): for any
transcript, the page has exactly as many ``<details`` as ``</details>`` tags, no ``<script``,
and no recorded string appears unescaped.
"""

from __future__ import annotations

import base64
import hashlib
import html
from pathlib import PurePosixPath

from headwire.transcript.budget import PAGE_TEXT_BYTES, page_cap
from headwire.transcript.excerpt import Excerpt, shrink, utf8
from headwire.transcript.model import (
    Text,
    ToolCall,
    ToolResult,
    Transcript,
    Turn,
    Usage,
    brief_args,
)

__all__ = [
    "CSP",
    "STYLE",
    "render_html",
]

STYLE = """
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0;
  --bg: #ffffff; --soft: #f6f8fa; --user: #ddf4ff; --warn: #fff8c5; --err: #ffebe9;
  --accent: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--fg); background: var(--bg); }
header, main { max-width: 70rem; margin: 0 auto; padding: 1rem 1.5rem; }
header { border-bottom: 1px solid var(--line); }
h1 { font-size: 1.4rem; margin: 0.2rem 0 0.6rem; }
h2 { font-size: 1.1rem; margin: 0 0 0.6rem; display: flex; gap: 0.8rem; align-items: baseline; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 0.15rem 1rem; margin: 0; }
dl.meta dt { color: var(--muted); }
dl.meta dd { margin: 0; overflow-wrap: anywhere; }
.note { color: var(--muted); font-size: 0.85rem; margin: 0.6rem 0 0; }
section.turn { border: 1px solid var(--line); border-radius: 8px; padding: 1rem;
  margin: 0 0 1.2rem; }
.time { color: var(--muted); font-weight: normal; font-size: 0.85rem; }
.msg { margin: 0.5rem 0; padding: 0.5rem 0.75rem; border-radius: 6px; background: var(--soft); }
.msg.user { background: var(--user); }
.who { font-weight: 600; font-size: 0.8rem; text-transform: uppercase; color: var(--muted); }
pre, code { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { margin: 0.3rem 0; white-space: pre-wrap; overflow-wrap: anywhere; word-break: break-word; }
.msg pre.text { font: inherit; }
.call { margin: 0.6rem 0; border: 1px solid var(--line); border-left: 4px solid var(--accent);
  border-radius: 6px; padding: 0.5rem 0.75rem; overflow: hidden; }
.call.failed { border-left-color: #cf222e; }
.call-head { display: flex; flex-wrap: wrap; gap: 0.5rem; align-items: baseline; }
.tool { font-weight: 600; font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
.brief { color: var(--muted); overflow-wrap: anywhere; }
.badge { font-size: 0.75rem; border-radius: 1em; padding: 0.05rem 0.55rem;
  border: 1px solid var(--line); white-space: nowrap; }
.badge.bounded { background: var(--warn); }
.badge.error { background: var(--err); }
.label { font-size: 0.8rem; color: var(--muted); margin-top: 0.4rem; overflow-wrap: anywhere; }
pre.wire { max-height: 18rem; overflow: auto; background: var(--soft); padding: 0.4rem 0.6rem;
  border-radius: 4px; }
details { margin: 0.35rem 0; }
summary { cursor: pointer; color: var(--accent); font-size: 0.85rem; }
details > pre { background: var(--soft); padding: 0.4rem 0.6rem; border-radius: 4px;
  max-height: 32rem; overflow: auto; }
.omitted { color: var(--muted); font-style: italic; font-size: 0.8rem; margin: 0.2rem 0; }
.children { margin: 0.5rem 0 0.2rem 0.4rem; padding-left: 0.8rem;
  border-left: 2px dashed var(--line); }
.usage { color: var(--muted); font-size: 0.85rem; border-top: 1px solid var(--line);
  margin-top: 0.8rem; padding-top: 0.5rem; }
.usage .failed { color: #cf222e; }
"""
"""The page's only stylesheet (its hash is in the Content-Security-Policy)."""

CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; img-src 'none'"
"""The policy before the stylesheet's hash: nothing may load or run."""

_CONTROLS: dict[int, str] = {
    c: "\ufffd" for c in [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0x7F, 0xA0)]
}


def _esc(text: str) -> str:
    """``text`` as HTML text or attribute value (``&<>"'`` escaped), control characters but
    tab and newline replaced by U+FFFD (a lone surrogate becomes ``?`` when the page is
    encoded)."""
    return html.escape(text.translate(_CONTROLS), quote=True)


def _n(count: int) -> str:
    return f"{count:,}"


def _bytes(count: int) -> str:
    return f"{count:,} byte" + ("" if count == 1 else "s")


def _csp() -> str:
    digest = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
    return f"{CSP}; style-src 'sha256-{digest}'"


class _Page:
    def __init__(self, transcript: Transcript, total: int, version: str) -> None:
        self.transcript = transcript
        self.cap = page_cap(transcript, total)
        self.version = version
        self.parts: list[str] = []
        self.calls = 0

    def w(self, *pieces: str) -> None:
        self.parts.extend(pieces)

    def excerpt(self, excerpt: Excerpt, css: str, head_share: float = 0.2) -> None:
        """``excerpt`` within the page's cap, escaped, as ``<pre>``s around an omission note."""
        cap = self.cap
        shown = shrink(excerpt, cap, head_share)
        head, tail = _esc(shown.head), _esc(shown.tail)
        for _ in range(3):  # escaping may grow a text up to six times: cut until it fits
            grown = len(head) + len(tail)
            if grown <= cap + cap // 8:
                break
            shown = shrink(shown, max(1, shown.shown_bytes * cap // grown - 8), head_share)
            head, tail = _esc(shown.head), _esc(shown.tail)
        cls = f' class="{css}"' if css else ""
        self.w(f"<pre{cls}>", head, "</pre>")
        if not shown.whole:
            self.w(
                '<p class="omitted">… ',
                _bytes(shown.omitted_bytes),
                " not shown here (",
                _bytes(shown.total_bytes),
                " in all) …</p>",
            )
            if tail:
                self.w(f"<pre{cls}>", tail, "</pre>")

    def render(self) -> str:
        t = self.transcript
        title = f"headwire session {t.session_id}"
        self.w(
            '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n',
            f'<meta http-equiv="Content-Security-Policy" content="{_esc(_csp())}">\n',
            '<meta name="referrer" content="no-referrer">\n',
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n',
            f"<title>{_esc(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<header>\n",
            f'<h1>Session <code>{_esc(t.session_id)}</code></h1>\n<dl class="meta">',
        )
        rows = [
            ("Directory", t.cwd or "(not recorded)"),
            ("Started", _when(t.started)),
            ("Last record", _when(t.ended)),
            ("Turns", _n(len(t.turns))),
            ("Tool calls", _n(t.tool_calls)),
            ("Tokens", _usage_text(t.usage)),
        ]
        for key, value in rows:
            self.w(f"<dt>{key}</dt><dd>{_esc(value)}</dd>")
        self.w(
            '</dl>\n<p class="note">Exported by headwire ',
            _esc(self.version),
            ". Prompts, messages and tool output below come from the user, the model and its "
            "tools; they are shown as text and nothing in them runs. Long texts show their "
            "beginning and end.</p>\n</header>\n<main>\n",
        )
        for turn in t.turns:
            self.turn(turn)
        if not t.turns:
            self.w('<p class="note">This recording holds no turn.</p>\n')
        self.w("</main>\n</body>\n</html>\n")
        return "".join(self.parts)

    def turn(self, turn: Turn) -> None:
        self.w(
            f'<section class="turn" id="turn-{turn.number}">\n<h2>Turn {turn.number}',
            f' <span class="time">{_esc(_when(turn.started))}</span></h2>\n',
            '<div class="msg user"><div class="who">User</div>',
        )
        self.excerpt(turn.prompt, "text", 0.8)
        self.w("</div>\n")
        for entry in turn.entries:
            self.entry(entry)
        self.w('<div class="usage">', _esc(_usage_text(turn.usage)))
        outcome = turn.outcome
        if outcome is None:
            self.w(' · <span class="failed">no result recorded (the run was stopped)</span>')
        elif outcome.is_error:
            self.w(' · <span class="failed">ended with an error: ', _esc(outcome.error or ""))
            self.w("</span>")
        else:
            self.w(" · ended normally")
        self.w("</div>\n</section>\n")

    def entry(self, entry: Text | ToolCall) -> None:
        if isinstance(entry, Text):
            who = "Assistant" if entry.role == "assistant" else "Task"
            self.w(f'<div class="msg {"assistant" if who == "Assistant" else "user"}">')
            self.w(f'<div class="who">{who}</div>')
            if entry.thinking is not None:
                self.w("<details><summary>Thinking</summary>")
                self.excerpt(entry.thinking, "", 0.8)
                self.w("</details>")
            if entry.text.total_bytes:
                self.excerpt(entry.text, "text", 0.8)
            self.w("</div>\n")
            return
        self.call(entry)

    def call(self, call: ToolCall) -> None:
        self.calls += 1
        result = call.result
        failed = result is not None and result.is_error
        self.w(
            f'<div class="call{" failed" if failed else ""}" id="call-{self.calls}">',
            '<div class="call-head"><span class="tool">',
            _esc(call.name or "(unnamed tool)"),
            '</span><span class="brief">',
            _esc(brief_args(call.args)),
            "</span>",
        )
        if result is not None and result.bounded:
            self.w(
                '<span class="badge bounded">bounded on the wire: ',
                f"{_n(result.display_json_bytes)} → {_n(result.wire_json_bytes)} JSON bytes</span>",
            )
        if failed and result is not None:
            kind = result.error_type or "error"
            self.w(f'<span class="badge error">{_esc(kind)}</span>')
        if result is None:
            self.w('<span class="badge error">no result recorded</span>')
        self.w(
            "</div>\n<details><summary>Arguments (", _bytes(call.args.total_bytes), ")</summary>"
        )
        self.excerpt(call.args, "", 0.8)
        self.w("</details>\n")
        if call.children:
            self.w('<div class="label">Subagent</div><div class="children">\n')
            for child in call.children:
                self.entry(child)
            self.w("</div>\n")
        if result is not None:
            self.result(result)
        self.w("</div>\n")

    def result(self, result: ToolResult) -> None:
        if result.wire is None:
            self.w('<div class="label">Wire view: no content</div>\n')
        else:
            self.w(
                '<div class="label">Wire view: <code>tool_result.content</code>, ',
                _bytes(result.wire_json_bytes),
                " of JSON",
            )
            if result.bounded:
                self.w(" (bounded from ", _bytes(result.display_json_bytes), ")")
            self.w("</div>\n")
            self.excerpt(result.wire, "wire")
        output = result.output
        same = (
            output is not None
            and result.wire is not None
            and not result.bounded
            and result.output_source == "recording"
            and output == result.wire
        )
        if output is not None and not same:
            source = "the artifact" if result.output_source == "artifact" else "the recording"
            self.w(
                "<details><summary>Full output (",
                _bytes(output.total_bytes),
                f", from {source})</summary>",
            )
            self.excerpt(output, "")
            self.w("</details>\n")
        if result.artifact:
            self.w('<div class="label">Artifact: ')
            uri = _file_uri(result.artifact)
            if uri is not None and not result.artifact_missing:
                self.w(f'<a href="{_esc(uri)}" rel="noopener noreferrer">', _esc(result.artifact))
                self.w("</a>")
            else:
                self.w(f"<code>{_esc(result.artifact)}</code>")
            if result.artifact_missing:
                self.w(" (no longer on disk)")
            self.w("</div>\n")


def _file_uri(path: str) -> str | None:
    """The ``file:`` URL of an absolute path, else ``None`` (never another scheme)."""
    pure = PurePosixPath(path)
    if not pure.is_absolute() or "\x00" in path:
        return None
    try:
        return pure.as_uri()
    except ValueError:
        return None


def _when(timestamp: str) -> str:
    return timestamp.replace("T", " ") + " UTC" if timestamp else "(unknown)"


def _usage_text(usage: Usage) -> str:
    calls = usage.model_calls
    return (
        f"{_n(usage.input_tokens)} input, {_n(usage.output_tokens)} output, "
        f"{_n(usage.cached_tokens)} cached tokens over {_n(calls)} model "
        f"call{'' if calls == 1 else 's'}"
    )


def render_html(transcript: Transcript, version: str = "", total: int = PAGE_TEXT_BYTES) -> bytes:
    """The page for ``transcript`` as UTF-8, showing at most about ``total`` bytes of text."""
    return utf8(_Page(transcript, total, version).render())
