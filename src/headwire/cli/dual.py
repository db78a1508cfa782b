"""Wiring of Dual Output into a run: the side channel, its reverse channel, mirrored permissions.

Permission requests are mirrored as a ``control_request`` ``can_use_tool`` (the shape of the
persistent session's), and their outcome as a ``control_response`` whose ``response`` is
``{"allowed": bool}``.  With ``--input-file`` an external ``confirmation_response`` can answer
within :data:`PERMISSION_TIMEOUT_S`; otherwise the approval mode's denial stands.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import uuid
from pathlib import Path
from typing import Any

from headwire.io.dual_output import DualOutputBridge, DualOutputError, open_json_fd, open_json_file
from headwire.io.input_file import InputFilePoller
from headwire.io.stdio import warn
from headwire.protocol import messages as m
from headwire.runtime.agent import Agent
from headwire.runtime.permissions import Decision, denial_message
from headwire.runtime.tools.base import Tool

PERMISSION_TIMEOUT_S = 60.0


class DualOutput:
    """The side channel of one session and its reverse channel."""

    def __init__(self, bridge: DualOutputBridge, input_file: Path | None) -> None:
        self.bridge = bridge
        self.poller = InputFilePoller(input_file, self.on_command, warn) if input_file else None
        self.waiting: dict[str, asyncio.Future[bool]] = {}
        self.submits: asyncio.Queue[str] = asyncio.Queue()
        self.agent: Agent | None = None
        self._task: asyncio.Task[None] | None = None

    def emit(self, message: m.JsonDict) -> None:
        """Mirror one wire message."""
        self.bridge.emit(message)

    def start(self) -> None:
        """Begin polling the reverse channel."""
        if self.poller is not None:
            self._task = asyncio.get_running_loop().create_task(self.poller.run())

    async def close(self) -> None:
        """Stop polling; emit ``session_end`` once and close the channel."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.bridge.close()

    def on_command(self, command: dict[str, Any]) -> None:
        """Handle one reverse-channel command."""
        if command.get("type") == "submit":
            text = command.get("text")
            if isinstance(text, str) and text.strip():
                self.submits.put_nowait(text)
            return
        request_id = command.get("request_id")
        future = self.waiting.get(str(request_id))
        if future is None or future.done():
            self.emit(
                m.control_error(str(request_id), "No pending permission request with this id")
            )
            return
        future.set_result(command.get("allowed") is True)  # strict: "false" is not a yes

    async def ask(self, tool: Tool, call_id: str, args: dict[str, Any]) -> Decision:
        """Mirror a permission request and wait for an answer on the reverse channel."""
        request_id = str(uuid.uuid4())
        self.emit(
            m.control_request(
                request_id,
                {
                    "subtype": "can_use_tool",
                    "tool_name": tool.name,
                    "tool_use_id": call_id,
                    "input": args,
                    "permission_suggestions": None,
                    "blocked_path": None,
                },
            )
        )
        allowed = False
        if self.poller is not None:
            future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
            self.waiting[request_id] = future
            try:
                allowed = await asyncio.wait_for(future, PERMISSION_TIMEOUT_S)
            except TimeoutError:
                allowed = False
            finally:
                self.waiting.pop(request_id, None)
        self.emit(m.control_success(request_id, {"allowed": allowed}))
        if allowed:
            return Decision(allow=True)
        mode = self.agent.config.approval_mode if self.agent else "default"
        return Decision(allow=False, message=denial_message(tool, mode))


def open_dual_output(
    args: argparse.Namespace, session_id: str, cwd: Path, version: str
) -> DualOutput | None:
    """Open the side channel the flags ask for (``None`` when there is none)."""
    if args.json_fd is not None and args.json_file is not None:
        raise DualOutputError("--json-fd and --json-file cannot be used together")
    if args.json_fd is None and args.json_file is None:
        if args.input_file:
            warn("headwire: note: --input-file has no effect without --json-fd or --json-file")
        return None
    fd = open_json_fd(args.json_fd) if args.json_fd is not None else open_json_file(args.json_file)
    bridge = DualOutputBridge(fd, session_id, str(cwd), version, warn)
    return DualOutput(bridge, Path(args.input_file) if args.input_file else None)
