"""The tool interface the agent loop runs.

A tool returns a :class:`ToolOutcome` with two different texts: ``llm_text``, what the model is
told (the runtime bounds it under the model budget and points at the artifact), and
``display``, the semantic display string that headless wires show after projection.  Neither is
ever projected here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from headwire.records import dataclass, field

ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
"""ACP tool kinds; ``edit`` and ``execute`` need approval in the ``default`` mode."""

ApprovalMode = Literal["default", "plan", "auto-edit", "yolo"]


class ArtifactSink(Protocol):
    """Where a tool saves its full output (a private file, mode 0600)."""

    def save(self, tool_name: str, data: bytes) -> Path:
        """Write ``data`` to a new artifact file and return its path."""
        ...


@runtime_checkable
class TextArtifactSink(ArtifactSink, Protocol):
    """A sink that can also write a text's UTF-8 a piece at a time (no whole ``bytes`` copy);
    see :meth:`headwire.runtime.store.storage.ArtifactStore.save_text`."""

    def save_text(
        self, tool_name: str, text: str, surrogates: Literal["replace", "pass"] = "replace"
    ) -> Path:
        """Write ``text`` as UTF-8 to a new artifact file and return its path."""
        ...


@dataclass(slots=True)
class ToolContext:
    """What a running tool may use: the workspace, the artifact store and cancellation."""

    cwd: Path
    artifacts: ArtifactSink
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    timeout_s: float | None = None
    workspace_dirs: tuple[Path, ...] = ()
    allow_protected_writes: bool = False
    """Whether the file tools may write ``.git/`` and ``.headwire/`` (``--allow-protected-writes``;
    see :mod:`headwire.runtime.tools.protected`)."""
    call_id: str = ""
    """The tool call's id (``tool_use.id``)."""
    owner: Any = None
    """The agent running the call (the ``agent`` tool spawns its subagent from it)."""
    ask_model: Callable[[str], Awaitable[str | None]] | None = None
    """A side question to the session's model: one tool-free call on ``prompt`` whose text
    comes back (``None`` when it fails or says nothing); its usage counts toward the session's
    budget.  ``web_fetch`` answers its call's ``prompt`` about a page with it, as upstream."""
    progress: Callable[[dict[str, Any]], None] | None = None
    """Optional progress sink: MCP tools call it with ``{"type": "mcp_tool_progress",
    "progress": p, "total": t, "message": m}`` (``total``/``message`` only when known)."""


@dataclass(slots=True)
class ToolOutcome:
    """The result of one tool call.

    ``llm_text``: full model-facing text.  ``display``: the semantic display string (``None``
    when the tool has none; the wire then falls back to the model text).  ``error``: a short
    error message when the call failed; ``error_type`` one of ``execution_failed``,
    ``execution_denied``, ``invalid_tool_params``, ``tool_not_registered``, ``timeout``,
    ``cancelled``.  ``artifact``: the file holding the full output, when one was written.
    """

    llm_text: str
    display: str | None = None
    error: str | None = None
    error_type: str | None = None
    artifact: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    ran_input: dict[str, Any] | None = None
    """The input that actually ran when it differs from the model's (a client's
    ``updatedInput``); the recording and the wire report this one."""


class Tool(Protocol):
    """A built-in or MCP tool."""

    name: str
    display_name: str
    description: str
    parameters: dict[str, Any]
    kind: ToolKind

    def validate(self, args: dict[str, Any]) -> str | None:
        """Return an error message when ``args`` do not fit the schema, else ``None``."""
        ...

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Whether running this call under ``mode`` needs the user's approval."""
        ...

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Run the call; raise nothing for ordinary failures (return an outcome with ``error``)."""
        ...


def writes_files(tool: object) -> bool:
    """Whether ``tool`` writes files in the workspace (its class says ``writes_files = True``).

    Such a tool writes only through :mod:`headwire.runtime.tools.atomic` (workspace and
    protected-path checks, read before write, temporary file and rename); the write-path tests
    run every tool that says so through those checks.  Tools without the attribute write none.
    """
    return getattr(tool, "writes_files", False) is True
