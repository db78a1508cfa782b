"""Agent events -> ACP ``session/update`` payloads: the one projection live and replay share.

:class:`EventUpdates` is pure (no I/O): each event of a session's stream goes in, the updates a
client sees come out.  The live subscriber (:class:`headwire.acp.session.SessionUpdates`) feeds
it the agent's events as they happen; ``session/load`` (:mod:`headwire.acp.replay`) feeds it the
same events read back from the recording.  Live and replay are equal because they are the same
code on the same events:

* :class:`~headwire.events.TextDelta` / :class:`~headwire.events.ThinkingDelta` ->
  ``agent_message_chunk`` / ``agent_thought_chunk``, one per delta;
* :class:`~headwire.events.ToolCallPending` -> ``tool_call`` (``pending``);
  :class:`~headwire.events.ToolStarted` -> ``tool_call_update`` (``in_progress``);
* :class:`~headwire.events.ToolFinished` -> ``tool_call_update`` (``completed``/``failed``)
  through the ACP boundary (:func:`headwire.boundary.acp_tool_result_update`, projected);
* :class:`~headwire.events.ToolAbandoned` (a cancelled call) and the end of a turn
  (:class:`~headwire.events.TurnFinished`) close every call still open as ``failed`` with
  :data:`CANCELLED_TEXT`; when an ``agent`` call ends, its subagent's open calls close first;
* :class:`~headwire.events.CompactionFinished` -> ``agent_thought_chunk`` saying so, with
  ``_meta.headwire.compaction`` ``{trigger, pre_tokens, post_tokens, duration_ms}`` (ACP has
  no compaction update; a replay shows the recording's ``compaction`` records the same way);
* :class:`~headwire.events.UserPrompt` of the main agent -> ``user_message_chunk``, only when
  ``echo_prompts`` is set (a replay: live, the client sent the prompt itself).

A subagent's events (``parent`` set) carry upstream's subagent ``_meta``: message chunks
``{parentToolCallId, subagentType}``, tool frames ``{toolName, provenance: "subagent",
serverId?, parentToolCallId, subagentType}`` (Qwen Code 0.24.4's keys and order), so a client
can nest the inner calls under the ``agent`` call; their results are bounded like any other.

Once :attr:`EventUpdates.stopping` is set (the server ended the turn), deltas and new calls are
dropped; results, cancellations and the turn's end still go out, so no call the client saw is
left open.  Memory holds only the calls still open and the subagent types of the session.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from headwire import events as ev
from headwire.acp.updates import message_chunk, tool_call_in_progress, tool_call_start, tool_meta
from headwire.boundary import (
    acp_result_update,
    acp_tool_result_update,
    bound_record,
    project_acp_update,
)
from headwire.runtime.tools.base import Tool

__all__ = ["CANCELLED_TEXT", "EventUpdates", "subagent_meta"]

JsonDict = dict[str, Any]

CANCELLED_TEXT = "Operation cancelled."
"""``content`` of a call that a cancellation or a stopped turn left unfinished."""


def subagent_meta(base: JsonDict, parent: str, subagent_type: str | None) -> JsonDict:
    """A subagent tool frame's ``_meta``: ``base`` (``toolName``, ``serverId``) with upstream's
    ``provenance: "subagent"``, ``parentToolCallId`` and ``subagentType``, in upstream's order."""
    meta: JsonDict = {"toolName": base["toolName"], "provenance": "subagent"}
    if "serverId" in base:
        meta["serverId"] = base["serverId"]
    meta["parentToolCallId"] = parent
    if subagent_type is not None:
        meta["subagentType"] = subagent_type
    return meta


class EventUpdates:
    """One session's events in, its ``session/update`` payloads out (see the module doc)."""

    def __init__(
        self,
        tools: Mapping[str, Tool],
        cwd: Path,
        *,
        echo_prompts: bool = False,
        artifact_info: Callable[[str], JsonDict | None] | None = None,
    ):
        self.tools = tools
        self.artifact_info = artifact_info
        """Set with ``--include-bound-records``: a result the headless bound cuts carries
        ``_meta.toolResultBound`` (the facts of the stream-JSON ``tool_result_bound`` record)."""
        self.cwd = cwd
        self.echo_prompts = echo_prompts
        self.stopping = False
        """The turn is being ended: no further delta or new call reaches the client."""
        self._open: dict[str, tuple[str, str | None]] = {}
        """Calls announced with ``tool_call`` and not answered: id -> (tool name, parent)."""
        self._subagents: dict[str, str] = {}
        """``agent`` call id -> the subagent type it started (for the inner frames' ``_meta``)."""

    @property
    def open_calls(self) -> dict[str, str]:
        """Calls the client saw start and has no result for: id -> tool name."""
        return {call_id: name for call_id, (name, _) in self._open.items()}

    def updates(self, event: ev.Event) -> list[JsonDict]:
        """The updates one event sends, in wire order (often none)."""
        if isinstance(event, ev.ToolFinished):
            return self._finished(event)
        if isinstance(event, ev.ToolAbandoned):
            return self._close_tree(event.call_id, event.message)
        if isinstance(event, ev.TurnFinished):
            return self.close_open(CANCELLED_TEXT) if event.parent is None else []
        if isinstance(event, ev.SubagentStarted):
            self._subagents[event.call_id] = event.subagent_type
            return []
        if isinstance(event, ev.UserPrompt):
            if event.parent is not None or not self.echo_prompts:
                return []
            self.stopping = False  # a new turn (live, the server resets it when a prompt comes)
            return [message_chunk("user_message_chunk", event.text)]
        if self.stopping:
            return []
        if isinstance(event, ev.TextDelta):
            return [self._chunk("agent_message_chunk", event.text, event.parent)]
        if isinstance(event, ev.ThinkingDelta):
            return [self._chunk("agent_thought_chunk", event.text, event.parent)]
        if isinstance(event, ev.CompactionFinished):
            text = (
                f"Compacted the conversation: ~{event.pre_tokens:,} -> "
                f"~{event.post_tokens:,} tokens."
            )
            update = self._chunk("agent_thought_chunk", text, event.parent)
            compaction = {
                "trigger": event.trigger,
                "pre_tokens": event.pre_tokens,
                "post_tokens": event.post_tokens,
                "duration_ms": event.duration_ms,
            }
            update["_meta"] = {**update.get("_meta", {}), "headwire": {"compaction": compaction}}
            return [update]
        if isinstance(event, ev.ToolCallPending):
            self._open[event.call_id] = (event.name, event.parent)
            update = tool_call_start(
                event.call_id, event.name, self.tools.get(event.name), event.args, self.cwd
            )
            return [self._tagged(update, event.name, event.parent)]
        if isinstance(event, ev.ToolStarted):
            update = tool_call_in_progress(
                event.call_id, event.name, self.tools.get(event.name), event.args, self.cwd
            )
            return [self._tagged(update, event.name, event.parent)]
        return []

    def close_open(self, text: str) -> list[JsonDict]:
        """``failed`` updates with ``text`` for every call still open, in the order they
        opened (a subagent's inner calls before their ``agent`` call)."""
        out: list[JsonDict] = []
        while self._open:
            out += self._close_tree(next(iter(self._open)), text)
        return out

    # -- helpers --------------------------------------------------------------------------------

    def _meta(self, name: str, parent: str | None) -> JsonDict:
        base = tool_meta(name, self.tools.get(name))
        if parent is None:
            return base
        return subagent_meta(base, parent, self._subagents.get(parent))

    def _tagged(self, update: JsonDict, name: str, parent: str | None) -> JsonDict:
        if parent is not None:
            update["_meta"] = self._meta(name, parent)
        return update

    def _chunk(self, kind: str, text: str, parent: str | None) -> JsonDict:
        update = message_chunk(kind, text)
        if parent is not None:
            meta: JsonDict = {"parentToolCallId": parent}
            subagent_type = self._subagents.get(parent)
            if subagent_type is not None:
                meta["subagentType"] = subagent_type
            update["_meta"] = meta
        return update

    def _finished(self, event: ev.ToolFinished) -> list[JsonDict]:
        response = event.response
        out = self._close_children(response.call_id, CANCELLED_TEXT)
        self._open.pop(response.call_id, None)
        self._subagents.pop(response.call_id, None)
        update = acp_tool_result_update(response, self._meta(response.name, event.parent))
        info = self.artifact_info
        if info is not None:
            path = event.artifact
            record = bound_record(
                response,
                session_id="",
                parent_tool_use_id=event.parent,
                artifact=lambda: None if path is None else info(path),
            )
            if record is not None:
                update["_meta"] = {
                    **update.get("_meta", {}),
                    "toolResultBound": {
                        k: record[k]
                        for k in ("original_json_bytes", "shown_json_bytes", "artifact")
                    },
                }
        out.append(update)
        return out

    def _close_children(self, call_id: str, text: str) -> list[JsonDict]:
        out: list[JsonDict] = []
        for child in [c for c, (_, parent) in self._open.items() if parent == call_id]:
            out += self._close_tree(child, text)
        return out

    def _close_tree(self, call_id: str, text: str) -> list[JsonDict]:
        """Close ``call_id`` (if open) after the open calls of its subagent."""
        out = self._close_children(call_id, text)
        opened = self._open.pop(call_id, None)
        self._subagents.pop(call_id, None)
        if opened is not None:
            name, parent = opened
            update = acp_result_update(
                call_id, failed=True, text=text, display=None, meta=self._meta(name, parent)
            )
            out.append(project_acp_update(update))
        return out
