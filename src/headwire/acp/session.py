"""One ACP session's state, its event subscriber (agent events -> ``session/update``) and the
parsing of ``session/*`` params.

:class:`SessionUpdates` subscribes to the session's event stream and builds its updates with
:class:`~headwire.acp.event_updates.EventUpdates` (the projection ``session/load`` replays
with); a finished call's update comes out of the ACP boundary
(:func:`headwire.boundary.acp_tool_result_update`) already projected.  Each update goes to an
:class:`UpdateSink`, the server, which frames and writes it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from headwire import events as ev
from headwire.acp.event_updates import EventUpdates
from headwire.protocol import jsonrpc as rpc
from headwire.protocol.messages import JsonDict
from headwire.records import dataclass, field
from headwire.runtime.agent.loop import Agent
from headwire.runtime.store.recording import Recorder
from headwire.runtime.tools.base import Tool

__all__ = [
    "AcpSession",
    "SessionUpdates",
    "UpdateSink",
    "cwd_param",
    "mcp_servers_param",
    "object_params",
    "prompt_text",
    "string_param",
]


class UpdateSink(Protocol):
    """Where a session's updates go (the server): it frames and writes them."""

    def send_update(self, session_id: str, update: dict[str, Any]) -> None:
        """Write one ``session/update`` payload."""
        ...

    def stop_turn(self, session: AcpSession, reason: str) -> None:
        """End the session's running turn, answering its prompt with ``reason``."""
        ...


@dataclass(eq=False)
class AcpSession:
    """One ACP session: an agent (conversation, tools, recording) and its running prompt."""

    id: str
    cwd: Path
    agent: Agent
    close: Callable[[], Awaitable[None]]
    mcp_servers: list[dict[str, Any]] = field(default_factory=list)
    history: Path | None = None
    """A loaded recording whose conversation is read back before the first prompt."""
    prompt_task: asyncio.Task[ev.TurnFinished] | None = None
    stop_reason: str | None = None
    """Set when the server itself ends the running turn (after a rejected permission)."""
    stop_after: str | None = None
    """The call whose result ends the turn (a rejected or cancelled permission request)."""
    stopping: bool = False
    """The running turn is being ended: no further agent event may reach the wire."""
    updates: SessionUpdates | None = None
    """The session's event subscriber (it knows the calls still open)."""
    recorder: Recorder | None = None
    """The session's recorder (its ``failed`` reason is noted on stderr after a prompt)."""


class SessionUpdates:
    """Subscribes to one session's events and sends them as ``session/update`` notifications.

    The updates come from :class:`~headwire.acp.event_updates.EventUpdates`, the projection
    ``session/load`` replays with too.  Once the server decided to end the turn
    (:attr:`AcpSession.stopping`), deltas and new calls are no longer sent (the turn stops at
    its next suspension point); a result that still arrives is sent, so no call the client saw
    is left without an answer.
    """

    def __init__(
        self,
        server: UpdateSink,
        session: AcpSession,
        tools: Mapping[str, Tool],
        artifact_info: Callable[[str], JsonDict | None] | None = None,
    ) -> None:
        self.server = server
        self.session = session
        self.tools = tools
        self.events = EventUpdates(tools, session.cwd, artifact_info=artifact_info)
        session.updates = self

    def __call__(self, event: ev.Event) -> None:
        """Handle one event of the session's stream."""
        session = self.session
        self.events.stopping = session.stopping
        for update in self.events.updates(event):
            self.server.send_update(session.id, update)
        if isinstance(event, ev.ToolFinished) and session.stop_after == event.response.call_id:
            session.stop_after = None
            self.server.stop_turn(session, "end_turn")

    def close_open_calls(self, text: str) -> None:
        """Answer every call the client saw start and got no result for (``failed``)."""
        for update in self.events.close_open(text):
            self.server.send_update(self.session.id, update)


def prompt_text(blocks: Any) -> str:
    """The prompt of ``session/prompt``: text blocks, resource links (``@uri``) and embedded
    text resources, joined by newlines; other content is invalid (not advertised)."""
    if not isinstance(blocks, list):
        raise rpc.RpcError.invalid_params("prompt must be an array of content blocks")
    parts: list[str] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif kind == "resource_link" and isinstance(block.get("uri"), str):
            parts.append("@" + block["uri"].removeprefix("file://"))
        elif kind == "resource" and isinstance(block.get("resource"), dict):
            resource = block["resource"]
            uri, text = resource.get("uri"), resource.get("text")
            if not isinstance(text, str):
                raise rpc.RpcError.invalid_params("only text resources can be embedded")
            parts.append(f"Content of {uri}:\n{text}" if isinstance(uri, str) else text)
        elif isinstance(kind, str):
            raise rpc.RpcError.invalid_params(f"unsupported or malformed {kind} content block")
        else:
            raise rpc.RpcError.invalid_params("each content block must be an object with a type")
    return "\n".join(parts)


def object_params(params: Any) -> dict[str, Any]:
    """``params`` as an object, or ``-32602``."""
    if not isinstance(params, dict):
        raise rpc.RpcError.invalid_params("params must be an object")
    return params


def string_param(params: dict[str, Any], key: str) -> str:
    """A required non-empty string member, or ``-32602``."""
    value = params.get(key)
    if not isinstance(value, str) or not value:
        raise rpc.RpcError.invalid_params(f"{key} must be a non-empty string")
    return value


def cwd_param(params: dict[str, Any]) -> Path:
    """``cwd``: an absolute path to an existing directory, or ``-32602``."""
    path = Path(string_param(params, "cwd"))
    if not path.is_absolute():
        raise rpc.RpcError.invalid_params("cwd must be an absolute path")
    try:
        is_dir = path.is_dir()
    except OSError:  # e.g. a name too long for the file system
        is_dir = False
    if not is_dir:
        raise rpc.RpcError.invalid_params(f"cwd is not a directory: {path}")
    return path


def mcp_servers_param(params: dict[str, Any]) -> list[dict[str, Any]]:
    """``mcpServers`` (optional, default none): objects with a ``name``, kept as sent."""
    servers = params.get("mcpServers", [])
    if not isinstance(servers, list) or not all(
        isinstance(s, dict) and isinstance(s.get("name"), str) for s in servers
    ):
        raise rpc.RpcError.invalid_params("mcpServers must be an array of objects with a name")
    return servers
