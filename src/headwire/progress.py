"""What a person watching a run sees: the agent's events as short notes (sans-IO).

:class:`ProgressFeed` turns the event stream (:mod:`headwire.events`) into :class:`Note`
values for a terminal: each tool call with its name and short arguments, its outcome (the
output's size, whether the wire bounded it, the artifact's path), a refused call with its
reason and the rule or flag that would allow it, the assistant's text, the subagents nested
under their calls.  It also knows what is live right now (the tool calls running, the text a
model call is streaming) so a renderer can draw a live region with elapsed times.  The clock
is passed in (``now``, in seconds); nothing here reads a clock or writes anything.  The
renderer lives in :mod:`headwire.cli.run.progress`.

Everything shown comes from tools and models and may hold terminal control sequences:
every string a note carries, and the streaming text of the live region, went through
:func:`~headwire.printable.printable`.
"""

from __future__ import annotations

from typing import Any, Literal

from headwire import events as ev
from headwire.boundary import EXECUTION_DENIED, select_display
from headwire.printable import printable
from headwire.projection import project_tool_result_content
from headwire.records import dataclass, field

NoteKind = Literal["call", "result", "failed", "denied", "delta", "text", "subagent", "summary"]

ARG_WIDTH = 72
"""Characters of a call's short arguments."""
TAIL_CHARS = 4000
"""Characters of the streaming text kept for the live region."""


def clip(text: str, width: int) -> str:
    """``text`` on one printable line of at most ``width`` characters (``…`` marks a cut)."""
    line = printable(text[: width * 4 + 1], one_line=True).strip()
    return line if len(line) <= width else line[: max(0, width - 1)] + "…"


_PATH_KEYS = ("file_path", "absolute_path", "path", "dir_path")


def short_args(name: str, args: dict[str, Any], width: int = ARG_WIDTH) -> str:
    """A call's arguments as a person reads them, on one printable line of at most ``width``
    characters: the shell command, the path (with the content's size for a write), the
    pattern, the subagent's description, else ``key=value`` pairs (each value clipped, nested
    values summarized, so a huge argument costs what a small one does)."""
    if isinstance(args.get("command"), str):
        return clip(args["command"], width)
    if name == "agent" and isinstance(args.get("description"), str):
        return clip(args["description"], width)
    parts: list[str] = []
    for key in ("pattern", *_PATH_KEYS):
        if isinstance(args.get(key), str):
            parts.append(args[key])
    if isinstance(args.get("content"), str):
        parts.append(f"({human_bytes(len(args['content'].encode('utf-8', 'replace')))})")
    if parts:
        return clip(" ".join(parts), width)
    pairs = [f"{key}={_value(value)}" for key, value in list(args.items())[:8]]
    return clip(" ".join(pairs), width)


def _value(value: Any) -> str:
    if isinstance(value, str):
        return repr(value[:40] + ("…" if len(value) > 40 else ""))
    if isinstance(value, dict):
        return "{…}" if value else "{}"
    if isinstance(value, list):
        return f"[{len(value)} items]"
    return str(value)[:40]


def human_bytes(size: int) -> str:
    """``12 bytes``, ``499,999 bytes``: exact, with thousands separators."""
    return f"{size:,} byte" + ("" if size == 1 else "s")


def duration(seconds: float) -> str:
    """``0.4s``, ``12.3s``, ``2m05s``."""
    if seconds < 60:
        return f"{max(0.0, seconds):.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs:02d}s"


DENIAL_CHARS = 2000
"""How much of a refusal the view shows: the reason and the advice after it, whole."""


def allow_hint(mode: str) -> str:
    """The REPL's hint under a call a person refused: none, except in plan mode.  (Without a
    person, the refusal itself ends with the policy's advice: the rules or flags that allow
    that exact call, :func:`headwire.runtime.policy.live.allow_hint`.)"""
    return "/approval-mode default asks before running it" if mode == "plan" else ""


@dataclass(frozen=True, slots=True)
class Note:
    """One thing to show: ``kind`` picks the style, ``depth`` the nesting (subagents),
    ``hint`` a dimmer second part; ``final`` marks the text of the turn's answer."""

    kind: NoteKind
    text: str
    depth: int = 0
    hint: str = ""
    final: bool = False


@dataclass(slots=True)
class Running:
    """A tool call that is running: what to show and since when."""

    call_id: str
    name: str
    summary: str
    depth: int
    since: float


@dataclass(slots=True)
class ProgressFeed:
    """Events in, notes out; see the module docstring.

    ``interactive``: a person answers approvals (the REPL), so hints name slash commands.
    """

    interactive: bool = False
    mode: str = "default"
    running: dict[str, Running] = field(default_factory=dict)
    streaming_since: float | None = None
    """When the current model call started, while it streams."""
    text_tail: str = ""
    """The end of the text the current model call has streamed (for the live region), through
    :func:`~headwire.printable.printable`."""
    _text: list[str] = field(default_factory=list)
    _depths: dict[str, int] = field(default_factory=dict)
    _calls: dict[str, tuple[str, dict[str, Any], float]] = field(default_factory=dict)
    _tools: int = 0

    def depth(self, parent: str | None) -> int:
        """Nesting of an event published by the agent working for ``parent``."""
        return 0 if parent is None else self._depths.get(parent, 1)

    def feed(self, event: ev.Event, now: float) -> list[Note]:
        """The notes ``event`` adds (and the live state it changes)."""
        depth = self.depth(event.parent)
        if isinstance(event, ev.TurnStarted):
            self.mode, self._tools = event.info.permission_mode, 0
            self.running.clear()
            return []
        if isinstance(event, ev.ModelCallStarted):
            self.streaming_since, self.text_tail = now, ""
            self._text.clear()
            return []
        if isinstance(event, ev.TextDelta):
            self._text.append(event.text)
            self.text_tail = printable(self.text_tail + event.text[-TAIL_CHARS:])[-TAIL_CHARS:]
            return [Note("delta", printable(event.text), depth)]
        if isinstance(event, ev.ModelCallFinished):
            return self._model_finished(event, depth)
        if isinstance(event, ev.ToolCallPending):
            self._calls[event.call_id] = (event.name, event.args, now)
            summary = short_args(event.name, event.args)
            return [Note("call", f"{clip(event.name, 40)}  {summary}".rstrip(), depth)]
        if isinstance(event, ev.ToolStarted):
            summary = short_args(event.name, event.args)
            self.running[event.call_id] = Running(
                event.call_id, clip(event.name, 40), summary, depth, now
            )
            return []
        if isinstance(event, ev.ToolFinished):
            return self._tool_finished(event, depth, now)
        if isinstance(event, ev.ToolAbandoned):
            self.running.pop(event.call_id, None)
            self._calls.pop(event.call_id, None)
            return [Note("failed", "cancelled", depth)]
        if isinstance(event, ev.SubagentStarted):
            self._depths[event.call_id] = depth + 1
            text = f"subagent {clip(event.subagent_type, 40)}: {clip(event.description, 60)}"
            return [Note("subagent", text, depth + 1)]
        if isinstance(event, ev.SubagentFinished):
            text = f"subagent {event.status} after {event.tool_uses} tool calls"
            return [Note("subagent", text, depth + 1)]
        if isinstance(event, ev.CompactionStarted):
            text = f"compacting the conversation (~{event.pre_tokens:,} tokens)"
            return [Note("summary", text, depth)]
        if isinstance(event, ev.CompactionFinished):
            text = (
                f"compacted: ~{event.pre_tokens:,} -> ~{event.post_tokens:,} tokens"
                f" in {duration(event.duration_ms / 1000)}"
            )
            return [Note("summary", text, depth)]
        if isinstance(event, ev.TurnFinished):
            return self._turn_finished(event)
        return []

    def _model_finished(self, event: ev.ModelCallFinished, depth: int) -> list[Note]:
        self.streaming_since, self.text_tail = None, ""
        text = "".join(self._text)
        self._text.clear()
        if not text.strip():
            return []
        final = depth == 0 and not event.message.get("tool_calls")
        return [Note("text", printable(text.strip("\n")), depth, final=final)]

    def _tool_finished(self, event: ev.ToolFinished, depth: int, now: float) -> list[Note]:
        response = event.response
        self.running.pop(response.call_id, None)
        since = self._calls.pop(response.call_id, (response.name, response.args, now))[2]
        self._tools += depth == 0
        if response.error_type == "cancelled":  # a call the turn's cancellation cut off
            return [Note("failed", "cancelled", depth)]
        if response.error_type == EXECUTION_DENIED and response.error is not None:
            # Without a person to ask, the refusal already ends with the policy's advice (the
            # rules that allow this exact call): it is shown whole, with no second guess.
            hint = allow_hint(self.mode) if self.interactive else ""
            return [Note("denied", "denied: " + clip(response.error, DENIAL_CHARS), depth, hint)]
        took = duration(now - since)
        if response.failed:
            error = response.error or response.part_error or "failed"
            return [Note("failed", f"failed in {took}: {clip(error, 200)}", depth)]
        return [Note("result", self._outcome(response, took), depth, self._artifact(event))]

    @staticmethod
    def _outcome(response: ev.ToolResponse, took: str) -> str:
        shown = select_display(response)
        if shown is None:
            return f"done in {took}, no output"
        size = len(shown) if shown.isascii() else len(shown.encode("utf-8", "surrogatepass"))
        bounded = project_tool_result_content(shown) is not shown
        wire = "bounded to 65,536 JSON bytes on the wire" if bounded else "whole on the wire"
        return f"{human_bytes(size)} in {took}, {wire}"

    @staticmethod
    def _artifact(event: ev.ToolFinished) -> str:
        return f"full output: {printable(event.artifact, one_line=True)}" if event.artifact else ""

    def _turn_finished(self, event: ev.TurnFinished) -> list[Note]:
        self.running.clear()
        self.streaming_since, self.text_tail = None, ""
        self._text.clear()
        usage = event.stats.usage
        parts = [
            f"{self._tools} tool call" + ("" if self._tools == 1 else "s"),
            duration(event.duration_ms / 1000),
            f"{usage.input_tokens:,} tokens in, {usage.output_tokens:,} out",
        ]
        return [Note("summary", " · ".join(parts))]


__all__ = [
    "Note",
    "ProgressFeed",
    "Running",
    "allow_hint",
    "clip",
    "duration",
    "human_bytes",
    "printable",
    "short_args",
]
