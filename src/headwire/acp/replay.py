"""``session/load``: a recorded session replayed through the live projection, streamed.

The recording (:mod:`headwire.runtime.store.recording`, written by
:mod:`headwire.runtime.store.record_events`) is read one line at a time.  Each record is turned back
into the agent events it recorded (:meth:`Replayer.events_of`), and those go through the same
:class:`~headwire.acp.event_updates.EventUpdates` the live session's subscriber used, so the
replay sends what the live session sent: the same chunks, every tool call with its
``pending``/``in_progress``/``completed``/``failed`` updates (refused and cancelled calls
included), a subagent's inner calls tagged with their ``agent`` call, each result through the
one ACP boundary (:func:`headwire.boundary.acp_tool_result_update`).  Two differences, both by
design: each main-agent prompt is replayed as a ``user_message_chunk`` (live, the client sent
it), and ``available_commands_update`` follows the load's response instead of ``session/new``'s.

Records to events:

* ``user`` -> :class:`~headwire.events.UserPrompt`;
* ``assistant`` -> its deltas, cut by ``chunks``; ``partial_assistant`` (a stream a
  cancellation or a model error cut off) likewise;
* ``tool_pending`` / ``tool_started`` -> :class:`~headwire.events.ToolCallPending` /
  :class:`~headwire.events.ToolStarted`, with the arguments of the announcing ``assistant``;
* ``tool_result`` -> :class:`~headwire.events.ToolFinished`, or
  :class:`~headwire.events.ToolAbandoned` when ``abandoned`` (or, in older recordings, when it
  names no tool);
* ``task_started`` -> :class:`~headwire.events.SubagentStarted`; ``result`` -> the end of a turn;
* ``turn_stopped`` (the server ended the turn) -> nothing more of that turn but results;
* anything else -> nothing.

Older recordings (``assistant`` records without ``chunks``, no ``tool_pending``) still load:
their thought and text come as one chunk each and every call of a message is announced with it.
A call whose turn never ended (``kill -9`` mid-tool) is closed as ``failed`` with
:data:`INTERRUPTED_TEXT` where the next prompt starts (the session was resumed after the crash)
or at the end.

Memory stays flat: the only state kept across records is the calls still waiting for their
result, and :func:`replay` waits for the client to read once :data:`REPLAY_HIGH_WATER` bytes are
buffered, so a session of any length loads in the memory of its largest record.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import orjson

from headwire import events as ev
from headwire.acp.event_updates import EventUpdates
from headwire.runtime.store.recording import read_records
from headwire.runtime.tools.base import Tool
from headwire.wire import loads

__all__ = [
    "INTERRUPTED_TEXT",
    "READ_BUFFER_BYTES",
    "REPLAY_HIGH_WATER",
    "Replayer",
    "replay",
    "stream_records",
]

READ_BUFFER_BYTES = 1 << 20
"""Read buffer of the replay: recordings hold lines of hundreds of KB, which an 8 KB buffer
reassembles in many small reads."""

REPLAY_HIGH_WATER = 1 << 20
"""Bytes of replayed frames the writer may hold before the replay waits for the client."""

INTERRUPTED_TEXT = "Tool call was interrupted before it finished."
"""``content`` of a recorded call that has no recorded result."""

_YIELD_EVERY = 64
"""Updates between two returns to the event loop (so cancels and answers get in)."""
_WAIT_S = 0.002


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


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _deltas(chunks: Any, text: str, thinking: str, parent: str | None) -> Iterator[ev.Event]:
    """The deltas ``chunks`` describes, cut from the recorded ``text`` and ``thinking``."""
    source = {"text": text, "thinking": thinking}
    at = {"text": 0, "thinking": 0}
    for run in chunks if isinstance(chunks, list) else []:
        if not (isinstance(run, list) and len(run) == 2 and run[0] in source):
            continue
        kind, sizes = run
        whole = source[kind]
        for size in sizes if isinstance(sizes, list) else []:
            if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                continue
            start = at[kind]
            if size and start >= len(whole):  # the record lost its text: nothing to cut
                continue
            at[kind] = min(start + size, len(whole))
            yield _delta(kind, whole[start : at[kind]], parent)
    # whatever the sizes did not cover (a hand-edited record) still reaches the client
    for kind in ("thinking", "text"):
        if at[kind] < len(source[kind]):
            yield _delta(kind, source[kind][at[kind] :], parent)


def _delta(kind: str, text: str, parent: str | None) -> ev.TextDelta | ev.ThinkingDelta:
    if kind == "text":
        return ev.TextDelta(text=text, parent=parent)
    return ev.ThinkingDelta(text=text, parent=parent)


class Replayer:
    """Turns the records of one recording into ``session/update`` payloads, in order."""

    def __init__(self, tools: Mapping[str, Tool], cwd: Path) -> None:
        self.events = EventUpdates(tools, cwd, echo_prompts=True)
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}
        """Calls an ``assistant`` record asked for and not yet answered: id -> (name, args)."""

    def updates(self, record: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """The updates of one record, in wire order, one at a time (a record of a long answer
        holds thousands of deltas)."""
        kind = record.get("type")
        if kind == "turn_stopped":
            self.events.stopping = True
            return
        if kind == "user" and record.get("parent_tool_use_id") is None:
            # every live turn closes its calls when it ends: a call still open when the next
            # prompt starts was cut off by a crash (a resumed session goes on after it)
            yield from self.events.close_open(INTERRUPTED_TEXT)
        for event in self.events_of(record):
            yield from self.events.updates(event)

    def finish(self) -> list[dict[str, Any]]:
        """Close the calls that never got a recorded result (``failed``)."""
        self._calls.clear()
        return self.events.close_open(INTERRUPTED_TEXT)

    def events_of(self, record: Mapping[str, Any]) -> Iterator[ev.Event]:
        """The agent events one record holds."""
        kind = record.get("type")
        parent = _str(record.get("parent_tool_use_id"))
        message = record.get("message")
        if kind == "user" and not isinstance(message, dict):
            return
        message = message if isinstance(message, dict) else {}
        if kind == "user":
            yield ev.UserPrompt(text=_text(message.get("content")), message=message, parent=parent)
        elif kind == "assistant":
            yield from self._assistant(record, message, parent)
        elif kind == "partial_assistant":
            text, thinking = _text(record.get("content")), _text(record.get("reasoning_content"))
            yield from _deltas(record.get("chunks"), text, thinking, parent)
        elif kind in ("tool_pending", "tool_started"):
            call_id = _str(record.get("call_id"))
            if call_id is None:
                return
            name, args = self._calls.get(call_id, (_str(record.get("name")) or "unknown_tool", {}))
            name = _str(record.get("name")) or name
            event = ev.ToolCallPending if kind == "tool_pending" else ev.ToolStarted
            yield event(call_id=call_id, name=name, args=args, parent=parent)
        elif kind == "tool_result":
            yield from self._tool_result(record, message, parent)
        elif kind == "task_started":
            call_id, subagent_type = _str(record.get("call_id")), _str(record.get("subagent_type"))
            if call_id is not None and subagent_type is not None:
                yield ev.SubagentStarted(
                    task_id=_str(record.get("task_id")) or "",
                    call_id=call_id,
                    description=_str(record.get("description")) or "",
                    subagent_type=subagent_type,
                    prompt="",
                    parent=parent,
                )
        elif kind == "compaction":
            yield ev.CompactionFinished(
                trigger="manual" if record.get("trigger") == "manual" else "auto",
                pre_tokens=_int(record.get("pre_tokens")),
                post_tokens=_int(record.get("post_tokens")),
                duration_ms=_int(record.get("duration_ms")),
                parent=parent,
            )
        elif kind == "result" and parent is None:
            yield ev.TurnFinished(
                text="",
                error=None,
                subtype="success",
                num_turns=0,
                duration_ms=0,
                stats=ev.TurnStats(model=""),
            )

    def _assistant(
        self, record: Mapping[str, Any], message: Mapping[str, Any], parent: str | None
    ) -> Iterator[ev.Event]:
        text = _text(message.get("content"))
        thinking = _text(message.get("reasoning_content"))
        chunks = record.get("chunks")
        legacy = not isinstance(chunks, list)
        yield from _deltas([] if legacy else chunks, text, thinking, parent)
        calls = message.get("tool_calls")
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict) or not isinstance(call.get("id"), str):
                continue
            function = call.get("function")
            name = _str(function.get("name")) if isinstance(function, dict) else None
            name, args = name or "unknown_tool", _arguments(function)
            if legacy:  # no tool_pending records follow: announce the call now
                yield ev.ToolCallPending(call_id=call["id"], name=name, args=args, parent=parent)
            else:
                self._calls[call["id"]] = (name, args)

    def _tool_result(
        self, record: Mapping[str, Any], message: Mapping[str, Any], parent: str | None
    ) -> Iterator[ev.Event]:
        call_id = _str(record.get("call_id")) or _str(message.get("tool_call_id"))
        if call_id is None:
            return
        self._calls.pop(call_id, None)
        told = _text(message.get("content"))
        error = _str(record.get("error"))
        name = _str(record.get("name"))
        if record.get("abandoned") is True or name is None:
            yield ev.ToolAbandoned(call_id=call_id, message=error or told, parent=parent)
            return
        failed = bool(record.get("is_error"))
        args = record.get("args")
        display = _str(record.get("display"))
        response = ev.ToolResponse(
            call_id=call_id,
            name=name,
            args=args if isinstance(args, dict) else {},
            output=None if failed else told,
            part_error=told if failed and told else None,
            error=(error or "") if failed else None,
            error_type=_str(record.get("error_type")),
            display=display,
        )
        yield ev.ToolFinished(
            response=response,
            model_text=told,
            artifact=_str(record.get("artifact")),
            parent=parent,
        )


class ReplayWriter(Protocol):
    """What :func:`replay` watches of the writer: its backlog and whether the client left."""

    @property
    def buffered(self) -> int:
        """Bytes handed over and not yet written."""
        ...

    @property
    def closed(self) -> bool:
        """The client stopped reading."""
        ...


async def replay(
    path: Path,
    replayer: Replayer,
    send: Callable[[dict[str, Any]], None],
    writer: ReplayWriter,
) -> int:
    """Send every update of the recording at ``path``, one at a time; returns how many.

    Waits while more than :data:`REPLAY_HIGH_WATER` bytes are buffered for the client, so a
    slow reader holds the replay back instead of the replay filling memory; returns early once
    the client went away.
    """
    sent = 0
    for update in _all_updates(path, replayer):
        send(update)
        sent += 1
        if writer.buffered > REPLAY_HIGH_WATER:
            while writer.buffered > REPLAY_HIGH_WATER and not writer.closed:
                await asyncio.sleep(_WAIT_S)
        elif sent % _YIELD_EVERY == 0:
            await asyncio.sleep(0)
        if writer.closed:
            break
    return sent


def _all_updates(path: Path, replayer: Replayer) -> Iterator[dict[str, Any]]:
    for record in stream_records(path):
        yield from replayer.updates(record)
    yield from replayer.finish()


def _int(value: Any) -> int:
    """A recorded count (0 when it is not a non-negative integer)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
