"""The scripted offline model: replays a file of turns, for the Quick start and the tests.

A script is JSON Lines (or one JSON array); each entry answers one model call, in order:

``{"text": "done"}``, ``{"thinking": "...", "text": "..."}``,
``{"tool": "run_shell_command", "args": {...}}``, ``{"tools": [{"name": ..., "args": ...}]}``,
``{"error": "message"}`` (the call fails), ``{"delay_s": 0.5, ...}`` (sleep before answering).
Any entry may add ``"usage": {"input_tokens": N, "output_tokens": M, "cache_read_input_tokens":
K}`` (the call's reported usage; default 11 in, 3 out) and ``"stop_reason"`` (``max_tokens``,
``refusal``: why the answer stopped; default ``end_turn``, or ``tool_use`` with calls).

Entries are used in order by every model call of the process (a subagent's calls included); a
resumed session starts after the assistant turns it already recorded.
Past the end the model answers ``done``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson

from headwire.errors import ConfigError
from headwire.runtime.data import read_data
from headwire.runtime.models.base import (
    Finished,
    ModelError,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)
from headwire.wire import loads

BUILTIN_SCRIPTS = ("demo", "big-output", "done")
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_input_tokens")
DEFAULT_USAGE = Usage(input_tokens=11, output_tokens=3, cached_tokens=0, total_tokens=14)
"""What each scripted call reports when its entry gives no ``usage``."""
TEXT_CHUNK = 80
"""Characters per streamed text delta."""


class ScriptError(ConfigError):
    """The script file is not a list of turn objects; the message names the line."""


def parse_script(text: str, source: str = "<script>") -> list[dict[str, Any]]:
    """Parse a script (a JSON array, or JSON Lines with blank lines and ``#`` comments)."""
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            entries = loads(stripped)
        except orjson.JSONDecodeError as exc:
            raise ScriptError(f"{source}: not valid JSON: {exc}") from None
        numbered = list(enumerate(entries, 1))
    else:
        numbered = []
        for lineno, line in enumerate(text.split("\n"), 1):  # not at a raw U+2028 in a string
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            try:
                numbered.append((lineno, loads(line)))
            except orjson.JSONDecodeError as exc:
                raise ScriptError(f"{source}:{lineno}: not valid JSON: {exc}") from None
    turns: list[dict[str, Any]] = []
    for lineno, entry in numbered:
        if not isinstance(entry, dict):
            raise ScriptError(f"{source}:{lineno}: each turn must be a JSON object")
        tools = entry.get("tools", [])
        if "tool" in entry:
            tools = [{"name": entry["tool"], "args": entry.get("args", {})}]
        if not isinstance(tools, list) or not all(
            isinstance(t, dict)
            and isinstance(t.get("name"), str)
            and isinstance(t.get("args", {}), dict)
            for t in tools
        ):
            raise ScriptError(f"{source}:{lineno}: tools must be objects with a name and args")
        for key in ("text", "thinking", "error", "stop_reason"):
            if key in entry and not isinstance(entry[key], str):
                raise ScriptError(f"{source}:{lineno}: {key} must be a string")
        usage = entry.get("usage", {})
        if not isinstance(usage, dict) or not all(
            k in _USAGE_KEYS and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in usage.items()
        ):
            raise ScriptError(
                f"{source}:{lineno}: usage must map {', '.join(_USAGE_KEYS)} to counts"
            )
        turns.append({**entry, "tools": tools})
    return turns


def load_script(spec: str) -> list[dict[str, Any]]:
    """Load ``spec``: a built-in script name (``demo``) or a file path."""
    if spec in BUILTIN_SCRIPTS:
        text = read_data(f"{spec}.jsonl")
        return parse_script(text, spec)
    path = Path(spec)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScriptError(f"cannot read script {spec}: {exc.strerror}") from None
    return parse_script(text, spec)


class ScriptedModel:
    """A :class:`~headwire.runtime.models.base.Model` that answers from a script."""

    def __init__(self, turns: list[dict[str, Any]], name: str = "scripted") -> None:
        self.turns = turns
        self.name = name
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        # Position in the script: calls made by this process (subagents included), or the
        # assistant turns already recorded when a session was resumed.
        index = max(self.calls, sum(1 for m in request.messages if m.get("role") == "assistant"))
        self.calls = index + 1
        turn = self.turns[index] if index < len(self.turns) else {"text": "done", "tools": []}
        delay = turn.get("delay_s")
        if isinstance(delay, int | float) and delay > 0:
            await asyncio.sleep(float(delay))
        if "error" in turn:
            raise ModelError(str(turn["error"]))
        if turn.get("thinking"):
            yield ThinkingDelta(str(turn["thinking"]))
        text = str(turn.get("text", ""))
        # stream longer text in pieces, as a real model would
        for start in range(0, len(text), TEXT_CHUNK):
            yield TextDelta(text[start : start + TEXT_CHUNK])
        for n, tool in enumerate(turn["tools"], 1):
            yield ToolCall(
                f"call_scripted_{index + 1}_{n}", tool["name"], dict(tool.get("args", {}))
            )
        yield Finished(_usage(turn.get("usage")), _stop(turn))


def _usage(raw: Any) -> Usage:
    if not raw:
        return DEFAULT_USAGE
    inputs, outputs = int(raw.get("input_tokens", 0)), int(raw.get("output_tokens", 0))
    cached = int(raw.get("cache_read_input_tokens", 0))
    return Usage(
        input_tokens=inputs,
        output_tokens=outputs,
        cached_tokens=cached,
        total_tokens=inputs + outputs,
    )


def _stop(turn: dict[str, Any]) -> str:
    reason = turn.get("stop_reason")
    if isinstance(reason, str) and reason:
        return reason
    return "tool_use" if turn["tools"] else "end_turn"
