"""A session recording as a person reads it: turns, messages, tool calls (pure data).

:mod:`headwire.transcript.builder` makes a :class:`Transcript` from the records of
``runtime/store/recording.py``; the renderers read it.  Every text in it is an
:class:`~headwire.transcript.excerpt.Excerpt` of at most :data:`EXCERPT_BYTES`.

What each tool call holds:

* ``wire``: ``tool_result.content`` as every headless wire carried it; ``bounded`` says whether
  the 65,536-byte bound cut it, ``display_json_bytes`` and ``wire_json_bytes`` are the JSON
  sizes before and after;
* ``output``: the full output, from the artifact when one was saved and can still be read,
  else from the recording's unprojected display;
* ``children``: what a subagent started by this call did, nested to any depth.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from headwire.records import dataclass, field
from headwire.transcript.excerpt import Excerpt

__all__ = [
    "EXCERPT_BYTES",
    "Outcome",
    "Text",
    "ToolCall",
    "ToolResult",
    "Transcript",
    "Turn",
    "Usage",
    "brief_args",
]

EXCERPT_BYTES = 65_536
"""Most UTF-8 bytes a transcript keeps of any one text (a renderer may show fewer)."""


@dataclass(slots=True)
class Usage:
    """Tokens, summed over model calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    total_tokens: int = 0
    model_calls: int = 0

    def add(self, usage: Any) -> None:
        """Add one recorded ``usage`` object (keys as in the recording)."""
        self.model_calls += 1
        if not isinstance(usage, dict):
            return
        self.input_tokens += _int(usage.get("input_tokens"))
        self.output_tokens += _int(usage.get("output_tokens"))
        self.cached_tokens += _int(usage.get("cache_read_input_tokens"))
        self.total_tokens += _int(usage.get("total_tokens"))


@dataclass(slots=True)
class Text:
    """A user prompt (of a subagent, inside a call) or an assistant message."""

    role: str
    text: Excerpt
    thinking: Excerpt | None
    timestamp: str


@dataclass(slots=True)
class ToolResult:
    """What a tool call returned: the wire view, the full output, the artifact."""

    is_error: bool
    error: str | None
    error_type: str | None
    wire: Excerpt | None
    wire_json_bytes: int
    display_json_bytes: int
    bounded: bool
    output: Excerpt | None
    output_source: str
    """``"artifact"``, ``"recording"``, or ``""`` when there is no output at all."""
    artifact: str | None
    artifact_missing: bool
    timestamp: str


@dataclass(slots=True)
class ToolCall:
    """One tool call of the model, its result, and the events of the subagent it started."""

    call_id: str
    name: str
    args: Excerpt
    timestamp: str
    result: ToolResult | None = None
    children: list[Text | ToolCall] = field(default_factory=list)


@dataclass(slots=True)
class Outcome:
    """The end of a turn (the recording's ``result`` record)."""

    is_error: bool
    error: str | None
    num_turns: int
    timestamp: str


@dataclass(slots=True)
class Turn:
    """One prompt of the user and everything it caused."""

    number: int
    prompt: Excerpt
    started: str
    entries: list[Text | ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    outcome: Outcome | None = None


@dataclass(slots=True)
class Transcript:
    """A whole recording."""

    session_id: str
    cwd: str | None = None
    turns: list[Turn] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    started: str = ""
    ended: str = ""
    unknown_records: int = 0

    def calls(self) -> Iterable[ToolCall]:
        """Every tool call, subagents' included, depth first."""
        stack: list[Text | ToolCall] = [
            e for t in reversed(self.turns) for e in reversed(t.entries)
        ]
        while stack:
            entry = stack.pop()
            if isinstance(entry, ToolCall):
                yield entry
                stack.extend(reversed(entry.children))


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


_BRIEF_KEYS = (
    "command",
    "file_path",
    "absolute_path",
    "path",
    "pattern",
    "url",
    "query",
    "prompt",
    "description",
)


def brief_args(args: Excerpt, limit: int = 160) -> str:
    """A one-line summary of a call's arguments: the value of its main parameter (``command``,
    ``file_path``, ``pattern``...) when there is one, else the start of the JSON."""
    text = args.head
    if args.whole:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            for key in _BRIEF_KEYS:
                if isinstance(value.get(key), str) and value[key].strip():
                    text = value[key]
                    break
    line = " ".join(text[: limit * 4].split())
    return line if len(line) <= limit and args.whole else line[:limit].rstrip() + " …"
