"""The Dual Output reverse channel: ``--input-file PATH``, polled for JSON-line commands.

``{"type": "submit", "text": ...}`` queues a prompt for when the agent is idle;
``{"type": "confirmation_response", "request_id": ..., "allowed": bool}`` answers a mirrored
permission request (the first answer wins).  Lines appended to the file are read every 500 ms;
malformed lines are reported on stderr with their line number and skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from headwire.wire import loads

POLL_INTERVAL_S = 0.5


class InputFilePoller:
    """Reads new command lines from a file as they are appended."""

    def __init__(
        self, path: Path, on_command: Callable[[dict[str, Any]], None], warn: Callable[[str], None]
    ) -> None:
        self.path = path
        self.on_command = on_command
        self.warn = warn
        self.offset = 0
        self.lineno = 0
        self.partial = b""

    def poll(self) -> None:
        """Read and dispatch whatever complete lines were appended since the last poll."""
        try:
            with self.path.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return
        except OSError as exc:
            self.warn(f"headwire: --input-file {self.path}: {exc.strerror}")
            return
        self.offset += len(data)
        lines = (self.partial + data).split(b"\n")
        self.partial = lines.pop()
        for raw in lines:
            self.lineno += 1
            if not raw.strip():
                continue
            try:
                command = loads(raw)
            except orjson.JSONDecodeError:
                self.warn(f"headwire: --input-file line {self.lineno}: not valid JSON")
                continue
            if not isinstance(command, dict) or command.get("type") not in (
                "submit",
                "confirmation_response",
            ):
                self.warn(f"headwire: --input-file line {self.lineno}: unknown command")
                continue
            self.on_command(command)

    async def run(self) -> None:
        """Poll until cancelled."""
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                self.poll()
                await asyncio.sleep(POLL_INTERVAL_S)
