"""Wiring of Dual Output into a run: the side channel, its reverse channel, mirrored permissions.

The protocol (frames, commands, pending requests) is the sans-IO
:class:`~headwire.protocol.dual_output.DualOutputProtocol`; the descriptor is written by the
:class:`~headwire.io.dual_output.DualOutputBridge`.  Permission requests are mirrored as a
``control_request`` ``can_use_tool``, and their outcome as a ``control_response`` whose
``response`` is ``{"allowed": bool}``.  With ``--input-file`` an external
``confirmation_response`` can answer within :data:`PERMISSION_TIMEOUT_S`; otherwise the approval
mode's denial stands.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from headwire.io.dual_output import (
    DualOutputBridge,
    DualOutputError,
    open_json_fd,
    open_json_file,
    shares_stdout,
)
from headwire.io.input_file import InputFilePoller
from headwire.io.stdio import warn
from headwire.io.writer import WireWriter
from headwire.protocol import dual_output as dp
from headwire.protocol.messages import JsonDict
from headwire.runtime.ids import new_uuid
from headwire.runtime.policy.permissions import Decision, denial_message
from headwire.runtime.tools.base import ApprovalMode, Tool

PERMISSION_TIMEOUT_S = 60.0


class SidecarSink(Protocol):
    """Where sidecar frames go: a :class:`DualOutputBridge`, or stdout's own writer."""

    @property
    def active(self) -> bool:
        """Whether frames still go out."""
        ...

    def write(self, frame: bytes) -> None:
        """Write (or queue) one frame."""
        ...

    def close(self, last: bytes = b"") -> None:
        """Write ``last`` and stop."""
        ...


class StdoutSidecar:
    """The sidecar when it shares stdout's pipe (``--json-fd 3 3>&1``): its frames go through
    stdout's writer, so whole frames of both streams alternate and none is ever torn."""

    def __init__(self, writer: WireWriter) -> None:
        self.writer = writer

    @property
    def active(self) -> bool:
        """Whether stdout's reader is still there."""
        return not self.writer.closed

    def write(self, frame: bytes) -> None:
        """Queue one frame on stdout's writer."""
        self.writer.write(frame)

    def close(self, last: bytes = b"") -> None:
        """Queue ``last`` (stdout stays open)."""
        self.writer.write(last)


class DualOutput:
    """The side channel of one session and its reverse channel."""

    def __init__(
        self,
        bridge: SidecarSink,
        session_id: str,
        input_file: Path | None,
        approval_mode: Callable[[], ApprovalMode],
    ) -> None:
        self.bridge = bridge
        self.protocol = dp.DualOutputProtocol(session_id, new_uuid)
        self.approval_mode = approval_mode
        self.poller = InputFilePoller(input_file, self.on_command, warn) if input_file else None
        self.waiting: dict[str, asyncio.Future[bool]] = {}
        self.submits: asyncio.Queue[str] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self, cwd: str, version: str) -> None:
        """Write ``session_start`` and begin polling the reverse channel."""
        self.bridge.write(self.protocol.start(cwd, version))
        if self.poller is not None:
            self._task = asyncio.get_running_loop().create_task(self.poller.run())

    def emit(self, message: JsonDict) -> None:
        """Mirror one wire message."""
        if self.bridge.active and not self.protocol.ended:
            self.bridge.write(self.protocol.event(message))

    async def close(self) -> None:
        """Stop polling; write ``session_end`` once and close the channel."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self.bridge.close(self.protocol.end())

    def on_command(self, command: dict[str, Any]) -> None:
        """Handle one reverse-channel command."""
        outcome = self.protocol.receive_command(command)
        if isinstance(outcome, dp.Submit):
            self.submits.put_nowait(outcome.text)
        elif isinstance(outcome, dp.Confirm):
            if outcome.reply is not None:
                self.bridge.write(outcome.reply)
            future = self.waiting.get(outcome.request_id)
            if future is not None and not future.done():
                future.set_result(outcome.allowed)
        elif isinstance(outcome, dp.Reply):
            self.bridge.write(outcome.frame)

    async def ask(self, tool: Tool, call_id: str, args: dict[str, Any]) -> Decision:
        """Mirror a permission request and wait for an answer on the reverse channel."""
        request_id = new_uuid()
        self.bridge.write(self.protocol.permission_request(request_id, tool.name, call_id, args))
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
        self.bridge.write(self.protocol.permission_outcome(request_id, allowed))
        if allowed:
            return Decision(allow=True)
        return Decision(allow=False, message=denial_message(tool, self.approval_mode()))


def open_dual_output(
    args: argparse.Namespace,
    session_id: str,
    approval_mode: Callable[[], ApprovalMode],
    writer: WireWriter,
) -> DualOutput | None:
    """Open the side channel the flags ask for (``None`` when there is none); ``writer`` is
    stdout's, used when the side channel is stdout's own pipe."""
    if args.json_fd is not None and args.json_file is not None:
        raise DualOutputError("--json-fd and --json-file cannot be used together")
    if args.json_fd is None and args.json_file is None:
        if args.input_file:
            warn("headwire: note: --input-file has no effect without --json-fd or --json-file")
        return None
    input_file = Path(args.input_file) if args.input_file else None
    sink: SidecarSink
    if args.json_fd is not None and shares_stdout(args.json_fd):
        sink = StdoutSidecar(writer)
    else:
        fd = (
            open_json_fd(args.json_fd)
            if args.json_fd is not None
            else open_json_file(args.json_file)
        )
        sink = DualOutputBridge(fd, warn)
    return DualOutput(sink, session_id, input_file, approval_mode)
