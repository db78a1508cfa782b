"""``session/load``: a recorded session replayed as ``session/update`` payloads, record by record.

The recording (:mod:`headwire.runtime.recording`) is read one line at a time and each record is
turned into the updates a live client saw, in order:

* ``user`` -> ``user_message_chunk`` (the prompt text);
* ``assistant`` -> ``agent_thought_chunk`` (reasoning), ``agent_message_chunk`` (text), and one
  ``tool_call`` (``pending``) per tool call it made;
* ``tool_result`` -> ``tool_call_update`` (``completed`` or ``failed``) with the model text (or
  the error) as ``content`` and the full recorded display as ``rawOutput``, through the same
  ACP boundary as a live result (:func:`headwire.boundary.acp_tool_result_update`);
* ``result`` and unknown records -> nothing.

A call whose result never got recorded (a crash) is closed as ``failed`` at the end.  The only
state kept across records is the set of calls still waiting for their result, so memory does
not grow with the length of the session.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import orjson

from headwire.acp.updates import message_chunk, tool_call_result, tool_call_start, tool_meta
from headwire.boundary import acp_tool_result_update
from headwire.events import ToolResponse
from headwire.runtime.recording import read_records
from headwire.runtime.tools.base import Tool
from headwire.wire import loads

__all__ = ["INTERRUPTED_TEXT", "READ_BUFFER_BYTES", "Replayer", "stream_records"]

READ_BUFFER_BYTES = 1 << 20
"""Read buffer of the replay: recordings hold lines of hundreds of KB, which an 8 KB buffer
reassembles in many small reads."""

INTERRUPTED_TEXT = "Tool call was interrupted before it finished."
"""``content`` of a recorded call that has no recorded result."""


def stream_records(path: Path) -> Iterator[dict[str, Any]]:
    """The records of a recording, streamed with a large read buffer."""
    return read_records(path, READ_BUFFER_BYTES)


def _text(content: Any) -> str:
    """Text of a recorded message ``content``: a string, or the text parts of a block list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _arguments(function: Any) -> dict[str, Any]:
    raw = function.get("arguments") if isinstance(function, dict) else None
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = loads(raw)
        except orjson.JSONDecodeError:
            return {}
        return parsed if isinstance(parsed, dict) else {}
    return {}


class Replayer:
    """Turns the records of one recording into ``session/update`` payloads."""

    def __init__(self, tools: Mapping[str, Tool], cwd: Path) -> None:
        self.tools = tools
        self.cwd = cwd
        self._open: dict[str, str] = {}
        """Calls announced by an ``assistant`` record and not yet answered: id -> tool name."""

    def updates(self, record: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """The updates of one record, in wire order."""
        kind = record.get("type")
        message = record.get("message")
        message = message if isinstance(message, dict) else {}
        if kind == "user":
            text = _text(message.get("content"))
            if text:
                yield message_chunk("user_message_chunk", text)
        elif kind == "assistant":
            yield from self._assistant(message)
        elif kind == "tool_result":
            yield from self._tool_result(record, message)

    def _assistant(self, message: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        thought = message.get("reasoning_content")
        if isinstance(thought, str) and thought:
            yield message_chunk("agent_thought_chunk", thought)
        text = _text(message.get("content"))
        if text:
            yield message_chunk("agent_message_chunk", text)
        for call in message.get("tool_calls") or []:
            if not isinstance(call, dict) or not isinstance(call.get("id"), str):
                continue
            function = call.get("function")
            name = function.get("name") if isinstance(function, dict) else None
            name = name if isinstance(name, str) else "unknown_tool"
            self._open[call["id"]] = name
            yield tool_call_start(
                call["id"], name, self.tools.get(name), _arguments(function), self.cwd
            )

    def _tool_result(
        self, record: Mapping[str, Any], message: Mapping[str, Any]
    ) -> Iterator[dict[str, Any]]:
        call_id = record.get("call_id") or message.get("tool_call_id")
        if not isinstance(call_id, str):
            return
        opened = self._open.pop(call_id, None)
        name = record.get("name")
        name = name if isinstance(name, str) else (opened or "unknown_tool")
        error = record.get("error")
        failed = bool(record.get("is_error"))
        told = _text(message.get("content"))
        display = record.get("display")
        response = ToolResponse(
            call_id=call_id,
            name=name,
            args={},
            output=None if failed else told,
            part_error=told if failed and told else None,
            error=(error if isinstance(error, str) else "") if failed else None,
            display=display if isinstance(display, str) else None,
        )
        yield acp_tool_result_update(response, tool_meta(name, self.tools.get(name)))

    def finish(self) -> Iterator[dict[str, Any]]:
        """Close the calls that never got a recorded result (``failed``)."""
        pending, self._open = self._open, {}
        for call_id, name in pending.items():
            yield tool_call_result(
                call_id,
                name,
                self.tools.get(name),
                failed=True,
                text=INTERRUPTED_TEXT,
                display=None,
            )
