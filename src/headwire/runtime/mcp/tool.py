"""One MCP server tool as a headwire :class:`~headwire.runtime.tools.base.Tool`.

Naming and texts follow Qwen Code 0.24.4: the tool is ``mcp__<server>__<tool>`` (made
provider-safe like upstream when needed), its display name ``<tool> (<server> MCP Server)``,
its kind ``read`` when the server marks it ``readOnlyHint`` and ``other`` otherwise.

Approval: an untrusted server's tools ask in every mode but ``yolo`` (upstream's default
``ask``); ``trust: true`` runs them without asking, except in ``plan`` mode where only a
trusted read-only tool runs.

A result whose model text exceeds the shell's threshold (30,000 characters) is saved whole as a
producer artifact (UTF-8, byte-exact) and the model gets the shell's truncation envelope; the
display stays the full text, as upstream shows it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any, Protocol

from headwire.errors import ToolError
from headwire.runtime.mcp.config import DEFAULT_TIMEOUT_MS
from headwire.runtime.mcp.results import error_display, error_text, render
from headwire.runtime.redact import redact
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.output import (
    save_text_artifact,
    truncated_envelope,
    unsaved_envelope,
)
from headwire.runtime.tools.paths import FAILED, check_args
from headwire.runtime.tools.shell import OUTPUT_THRESHOLD

MAX_TOOL_NAME_LENGTH = 63
_SAFE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
_UNSAFE_CHAR = re.compile(r"[^A-Za-z0-9_-]")
Progress = Callable[[dict[str, Any]], None]


class McpCallError(ToolError):
    """A call that produced no result: ``reason`` completes "MCP tool 'x' on server 'y'
    failed: ..."; ``error_type`` is the outcome's error type."""

    def __init__(self, reason: str, error_type: str = FAILED) -> None:
        super().__init__(reason)
        self.reason = reason
        self.error_type = error_type


class CallTarget(Protocol):
    """The connection a tool calls through.

    See :class:`~headwire.runtime.mcp.client.ServerConnection`.
    """

    async def call(
        self,
        tool: str,
        args: dict[str, Any],
        *,
        timeout_s: float,
        progress: Progress | None,
        cancelled: asyncio.Event,
    ) -> Any:
        """The SDK ``CallToolResult``; raises :class:`McpCallError`."""
        ...


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if not value:
            return out


def stable_name_hash(name: str) -> str:
    """Upstream's FNV-1a (32-bit, over UTF-16 code units) in base 36, padded to 7."""
    data = name.encode("utf-16-le", "surrogatepass")
    value = 2166136261
    for i in range(0, len(data), 2):
        value = ((value ^ (data[i] | data[i + 1] << 8)) * 16777619) & 0xFFFFFFFF
    return _base36(value).rjust(7, "0")


def provider_safe_name(name: str) -> str:
    """``name`` when providers accept it, else upstream's sanitized name plus a hash suffix."""
    if len(name) <= MAX_TOOL_NAME_LENGTH and _SAFE_NAME.match(name):
        return name
    sanitized = _UNSAFE_CHAR.sub("_", name)
    if not re.match(r"^[A-Za-z]", sanitized):
        sanitized = f"tool_{sanitized}"
    suffix = f"_{stable_name_hash(name)}"
    return sanitized[: MAX_TOOL_NAME_LENGTH - len(suffix)] + suffix


def mcp_tool_name(server: str, tool: str) -> str:
    """The registered name ``mcp__<server>__<tool>`` (provider-safe)."""
    return provider_safe_name(f"mcp__{server}__{tool}")


def _number(value: float) -> float | int:
    return int(value) if isinstance(value, float) and value.is_integer() else value


class McpTool:
    """A tool of a connected MCP server."""

    def __init__(
        self,
        target: CallTarget,
        server: str,
        tool: str,
        description: str,
        schema: dict[str, Any],
        *,
        trust: bool = False,
        read_only: bool = False,
        timeout_ms: int | None = None,
    ) -> None:
        self.target = target
        self.server_id = server
        self.server_tool_name = tool
        self.name = mcp_tool_name(server, tool)
        self.display_name = f"{tool} ({server} MCP Server)"
        self.description = description
        self.parameters: dict[str, Any] = schema or {"type": "object", "properties": {}}
        self.kind: ToolKind = "read" if read_only else "other"
        self.trust = trust
        self.read_only = read_only
        self.timeout_ms = timeout_ms

    def validate(self, args: dict[str, Any]) -> str | None:
        """Check ``args`` against the server's input schema: upstream's coercions ("12" ->
        12) first, then the whole JSON Schema; never raises (a bad schema is a refusal)."""
        from headwire.runtime.tools.schema import input_problem

        try:
            problem = check_args(self.parameters, args)
        except (TypeError, ValueError, AttributeError, RecursionError) as exc:
            problem = f"the tool's input schema cannot be applied: {type(exc).__name__}: {exc}"
        return problem or input_problem(self.parameters, args)

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Untrusted servers ask unless ``yolo``; plan mode runs only trusted read-only tools."""
        if mode == "yolo":
            return False
        if mode == "plan":
            return not (self.trust and self.read_only)
        return not self.trust

    def _timeout_ms(self, ctx: ToolContext) -> int:
        if self.timeout_ms is not None:
            return self.timeout_ms
        if ctx.timeout_s is not None and ctx.timeout_s > 0:
            return max(1, round(ctx.timeout_s * 1000))
        return DEFAULT_TIMEOUT_MS

    def _failure(self, reason: str, error_type: str) -> ToolOutcome:
        message = (
            f"MCP tool '{self.server_tool_name}' on server '{self.server_id}' failed: {reason}"
        )
        return ToolOutcome(
            llm_text=message,
            display=f"Error: {message}",
            error=message,
            error_type=error_type,
            extra={"server": self.server_id, "tool": self.server_tool_name},
        )

    def _progress_hook(self, ctx: ToolContext) -> Progress | None:
        hook = ctx.progress
        if hook is None:
            return None

        def report(update: dict[str, Any]) -> None:
            event: dict[str, Any] = {
                "type": "mcp_tool_progress",
                "progress": _number(update["progress"]),
            }
            if update.get("total") is not None:
                event["total"] = _number(update["total"])
            if update.get("message") is not None:
                message = update["message"]
                event["message"] = redact(message) if isinstance(message, str) else message
            hook(event)

        return report

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Call the tool; every failure is an outcome, never an exception."""
        if ctx.cancelled.is_set():
            return self._failure("cancelled before it started", "cancelled")
        timeout_ms = self._timeout_ms(ctx)
        try:
            result = await self.target.call(
                self.server_tool_name,
                args,
                timeout_s=timeout_ms / 1000,
                progress=self._progress_hook(ctx),
                cancelled=ctx.cancelled,
            )
        except McpCallError as exc:
            reason = (
                f"timed out after {timeout_ms} ms" if exc.error_type == "timeout" else exc.reason
            )
            return self._failure(reason, exc.error_type)
        if getattr(result, "is_error", False) is True:
            raw = result.model_dump(mode="json", by_alias=True, exclude_unset=True)
            text = error_text(self.server_tool_name, args, raw)
            return ToolOutcome(
                llm_text=text,
                display=error_display(self.server_tool_name),
                error=text,
                error_type=FAILED,
                extra={"server": self.server_id, "tool": self.server_tool_name},
            )
        rendered = render(
            self.server_tool_name,
            self.name,
            getattr(result, "content", None),
            getattr(result, "structured_content", None),
        )
        del result
        llm = rendered.model_text
        artifact = None
        if len(llm) > OUTPUT_THRESHOLD:
            artifact, unsaved = await save_text_artifact(ctx, self.name, llm)  # in pieces
            llm = (
                truncated_envelope(llm, artifact)
                if artifact is not None
                else unsaved_envelope(llm, str(unsaved))
            )
        extra = {
            "server": self.server_id,
            "tool": self.server_tool_name,
            "output_chars": len(rendered.model_text),
        }
        return ToolOutcome(llm_text=llm, display=rendered.display, artifact=artifact, extra=extra)
