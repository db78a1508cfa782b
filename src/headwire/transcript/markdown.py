"""A transcript as Markdown (pure): ``headwire sessions export --format md``.

Recorded text goes only into fenced code blocks whose fence is longer than any run of
backticks inside, so nothing recorded is read as Markdown or HTML by a viewer; the headings
and notes around it are the renderer's own.  How much of each text it shows is
:func:`headwire.transcript.budget.page_cap`, as for the HTML page.

Invariant (a hypothesis property in ``tests/unit/transcript/test_markdown.py``): every
recorded text sits inside a fence that no line of it closes.
"""

from __future__ import annotations

import re

from headwire.transcript.budget import PAGE_TEXT_BYTES, page_cap
from headwire.transcript.excerpt import Excerpt, shrink
from headwire.transcript.model import Text, ToolCall, Transcript, Usage

__all__ = [
    "fence",
    "render_markdown",
]

_BACKTICKS = re.compile(r"`{3,}")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")


def fence(text: str) -> str:
    """A backtick fence longer than any run of three or more backticks in ``text``."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=2)
    return "`" * (longest + 1)


def _clean(text: str) -> str:
    return _CONTROL.sub("\ufffd", text)


def _n(count: int) -> str:
    return f"{count:,}"


def _usage(usage: Usage) -> str:
    calls = usage.model_calls
    return (
        f"{_n(usage.input_tokens)} input, {_n(usage.output_tokens)} output, "
        f"{_n(usage.cached_tokens)} cached tokens over {_n(calls)} model "
        f"call{'' if calls == 1 else 's'}"
    )


class _Doc:
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.out: list[str] = []

    def code(self, excerpt: Excerpt, indent: str, head_share: float = 0.2) -> None:
        shown = shrink(excerpt, self.cap, head_share)
        pieces = [shown.head] if shown.whole else [shown.head, shown.tail]
        for index, piece in enumerate(pieces):
            text = _clean(piece)
            mark = fence(text)
            body = "\n".join(indent + line for line in text.split("\n"))
            self.out += [f"{indent}{mark}text", body, f"{indent}{mark}", ""]
            if index == 0 and not shown.whole:
                self.out += [
                    f"{indent}*… {_n(shown.omitted_bytes)} bytes not shown "
                    f"({_n(shown.total_bytes)} in all) …*",
                    "",
                ]

    def entry(self, entry: Text | ToolCall, indent: str) -> None:
        if isinstance(entry, Text):
            label = "Assistant" if entry.role == "assistant" else "Subagent task"
            if entry.thinking is not None:
                self.out += [f"{indent}**{label} (thinking)**", ""]
                self.code(entry.thinking, indent, 0.8)
            if entry.text.total_bytes:
                self.out += [f"{indent}**{label}**", ""]
                self.code(entry.text, indent, 0.8)
            return
        self.call(entry, indent)

    def call(self, call: ToolCall, indent: str) -> None:
        result = call.result
        facts: list[str] = []
        if result is None:
            facts.append("no result recorded")
        else:
            if result.is_error:
                facts.append("error")
            if result.bounded:
                facts.append(
                    f"bounded on the wire: {_n(result.display_json_bytes)} → "
                    f"{_n(result.wire_json_bytes)} JSON bytes"
                )
        name = _clean(call.name or "(unnamed)").replace("`", "'")
        suffix = f" ({'; '.join(facts)})" if facts else ""
        self.out += [f"{indent}- Tool call `{name}`{suffix}", ""]
        inner = indent + "  "
        self.out += [f"{inner}Arguments:", ""]
        self.code(call.args, inner, 0.8)
        if call.children:
            self.out += [f"{inner}Subagent:", ""]
            for child in call.children:
                self.entry(child, inner + "  ")
        if result is not None:
            if result.wire is not None:
                self.out += [
                    f"{inner}Wire view (`tool_result.content`, "
                    f"{_n(result.wire_json_bytes)} JSON bytes):",
                    "",
                ]
                self.code(result.wire, inner)
            if result.output is not None:
                source = "artifact" if result.output_source == "artifact" else "recording"
                self.out += [
                    f"{inner}Full output ({_n(result.output.total_bytes)} bytes, from the "
                    f"{source}):",
                    "",
                ]
                self.code(result.output, inner)
            if result.artifact:
                gone = " (no longer on disk)" if result.artifact_missing else ""
                artifact = _clean(result.artifact).replace("`", "'")
                self.out += [f"{inner}Artifact: `{artifact}`{gone}", ""]

    def render(self, t: Transcript) -> str:
        session = _clean(t.session_id).replace("`", "'")
        cwd = _clean(t.cwd or "(not recorded)").replace("`", "'")
        self.out += [
            f"# Session `{session}`",
            "",
            f"- Directory: `{cwd}`",
            f"- Started: {_clean(t.started) or '(unknown)'} UTC",
            f"- Turns: {_n(len(t.turns))}; tool calls: {_n(t.tool_calls)}",
            f"- Tokens: {_usage(t.usage)}",
            "",
        ]
        for turn in t.turns:
            self.out += [f"## Turn {turn.number} ({_clean(turn.started)} UTC)", "", "**User**", ""]
            self.code(turn.prompt, "", 0.8)
            for entry in turn.entries:
                self.entry(entry, "")
            end = "ended normally"
            if turn.outcome is None:
                end = "no result recorded (the run was stopped)"
            elif turn.outcome.is_error:
                end = "ended with an error"
            self.out += [f"*Usage: {_usage(turn.usage)}; {end}.*", ""]
        return "\n".join(self.out).rstrip("\n") + "\n"


def render_markdown(transcript: Transcript, total: int = PAGE_TEXT_BYTES) -> str:
    """The transcript as Markdown, showing at most about ``total`` bytes of recorded text."""
    return _Doc(page_cap(transcript, total)).render(transcript)
