"""A transcript as text for a terminal (pure): ``headwire sessions show``.

Recorded text may hold escape sequences (a tool printed colours, or something hostile that
would move the cursor, retitle the window or rewrite the screen), so every string goes
through :func:`~headwire.printable.printable`, the one sanitizer (``^[`` for ESC, tabs as
spaces): nothing recorded reaches the terminal as a control sequence.  The only escapes
written are the renderer's own styles, and only with ``color=True``.  Long texts show a head
and a tail (:data:`PREVIEW_BYTES` for a tool's output, :data:`TEXT_BYTES` for prompts and
messages); ``export`` gives more.

Invariant (a hypothesis property in ``tests/unit/transcript/test_terminal.py``): with
``color=False`` the rendering holds no control character other than newline.
"""

from __future__ import annotations

from headwire.printable import printable
from headwire.transcript.excerpt import Excerpt, shrink
from headwire.transcript.model import Text, ToolCall, Transcript, Usage, brief_args

__all__ = [
    "PREVIEW_BYTES",
    "TEXT_BYTES",
    "render_terminal",
    "visible",
]

PREVIEW_BYTES = 600
"""Bytes of a tool's output the transcript shows (its start and, mostly, its end)."""

TEXT_BYTES = 4000
"""Bytes of a prompt or a message the transcript shows."""


def visible(text: str) -> str:
    """``text`` with tabs as spaces, through :func:`~headwire.printable.printable`."""
    return printable(text.replace("\t", "    "))


class _Style:
    def __init__(self, color: bool) -> None:
        self.color = color

    def _sgr(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and text else text

    def bold(self, text: str) -> str:
        return self._sgr("1", text)

    def dim(self, text: str) -> str:
        return self._sgr("2", text)

    def red(self, text: str) -> str:
        return self._sgr("31", text)

    def yellow(self, text: str) -> str:
        return self._sgr("33", text)

    def cyan(self, text: str) -> str:
        return self._sgr("36", text)


def _n(count: int) -> str:
    return f"{count:,}"


def _plural(count: int, noun: str) -> str:
    return f"{_n(count)} {noun}" + ("" if count == 1 else "s")


def _usage(usage: Usage) -> str:
    calls = usage.model_calls
    return (
        f"{_n(usage.input_tokens)} input, {_n(usage.output_tokens)} output tokens "
        f"over {_n(calls)} model call{'' if calls == 1 else 's'}"
    )


def _when(timestamp: str) -> str:
    return timestamp.replace("T", " ") + " UTC" if timestamp else "(unknown time)"


def _indent(text: str, prefix: str) -> str:
    return "\n".join(prefix + line if line else prefix.rstrip() for line in text.split("\n"))


class _Renderer:
    def __init__(self, color: bool) -> None:
        self.s = _Style(color)
        self.lines: list[str] = []

    def block(self, excerpt: Excerpt, budget: int, prefix: str, head_share: float) -> None:
        shown = shrink(excerpt, budget, head_share)
        head = visible(shown.head).rstrip("\n")
        if head:
            self.lines.append(_indent(head, prefix))
        if not shown.whole:
            note = f"… {_n(shown.omitted_bytes)} bytes not shown ({_n(shown.total_bytes)} in all) …"
            self.lines.append(prefix + self.s.dim(note))
            tail = visible(shown.tail).strip("\n")
            if tail:
                self.lines.append(_indent(tail, prefix))

    def entry(self, entry: Text | ToolCall, prefix: str) -> None:
        s = self.s
        if isinstance(entry, Text):
            if entry.role == "user":
                start = len(self.lines)
                self.block(entry.text, TEXT_BYTES, prefix + "       ", 0.8)
                if len(self.lines) > start:
                    body = self.lines[start][len(prefix) + 7 :]
                    self.lines[start] = prefix + s.cyan("task › ") + body
                return
            if entry.thinking is not None:
                self.lines.append(prefix + s.dim("thinking:"))
                self.block(entry.thinking, TEXT_BYTES // 4, prefix + s.dim("│ "), 0.2)
            if entry.text.total_bytes:
                self.block(entry.text, TEXT_BYTES, prefix, 0.8)
            return
        self.call(entry, prefix)

    def call(self, call: ToolCall, prefix: str) -> None:
        s = self.s
        brief = visible(brief_args(call.args))
        self.lines.append(f"{prefix}{s.bold('● ' + visible(call.name or '(unnamed)'))}  {brief}")
        result = call.result
        inner = prefix + "  "
        if call.children:
            self.lines.append(inner + s.dim("subagent:"))
            for child in call.children:
                self.entry(child, inner + s.dim("│ "))
        if result is None:
            self.lines.append(inner + s.red("⎿ no result recorded (the run was stopped)"))
        else:
            facts: list[str] = []
            if result.is_error:
                facts.append(s.red(f"error ({visible(result.error_type or 'failed')})"))
            if result.output is not None:
                facts.append(f"{_n(result.output.total_bytes)} bytes")
            if result.bounded:
                facts.append(
                    s.yellow(
                        f"bounded on the wire ({_n(result.display_json_bytes)} → "
                        f"{_n(result.wire_json_bytes)} JSON bytes)"
                    )
                )
            if result.artifact:
                gone = " (gone)" if result.artifact_missing else ""
                facts.append(f"artifact {visible(result.artifact)}{gone}")
            self.lines.append(inner + "⎿ " + (" · ".join(facts) or "no output"))
            shown = result.output if result.output is not None else result.wire
            if shown is not None and shown.total_bytes:
                self.block(shown, PREVIEW_BYTES, inner + "  ", 0.3)

    def render(self, t: Transcript) -> str:
        s = self.s
        self.lines += [
            f"{s.bold('Session')} {visible(t.session_id)}",
            f"{s.dim('Directory')}  {visible(t.cwd or '(not recorded)')}",
            f"{s.dim('Started')}    {_when(t.started)}",
            f"{s.dim('Turns')}      {_n(len(t.turns))} · {_plural(t.tool_calls, 'tool call')} · "
            + _usage(t.usage),
        ]
        for turn in t.turns:
            self.lines += ["", s.bold(f"── Turn {turn.number} · {_when(turn.started)} ──"), ""]
            start = len(self.lines)
            self.block(turn.prompt, TEXT_BYTES, "  ", 0.8)
            if len(self.lines) > start:
                self.lines[start] = s.cyan("›") + self.lines[start][1:]
            self.lines.append("")
            for entry in turn.entries:
                self.entry(entry, "")
            end = "ended normally"
            if turn.outcome is None:
                end = s.red("no result recorded (the run was stopped)")
            elif turn.outcome.is_error:
                end = s.red("ended with an error: " + visible(turn.outcome.error or ""))
            self.lines += ["", s.dim("usage: " + _usage(turn.usage) + " · ") + end]
        return "\n".join(self.lines) + "\n"


def render_terminal(transcript: Transcript, color: bool = False) -> str:
    """The transcript as terminal text (ANSI styles only when ``color``)."""
    return _Renderer(color).render(transcript)
