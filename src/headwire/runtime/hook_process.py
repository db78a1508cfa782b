"""Running hooks: a command in its own process group, or an HTTP POST, never blocking the loop.

:class:`HookRunner` is a session's hooks (built only when the settings configure some, so a run
without hooks never imports this module).  :meth:`HookRunner.fire` runs the hooks an event
selects concurrently, publishes one :class:`~headwire.events.HookRan` per run (the
``system``/``hook_response`` message on the stream-JSON wire) and returns their combined
:class:`~headwire.runtime.hooks.Verdict`.

A command hook runs as ``bash -c COMMAND`` (``sh`` without bash) in the session's folder, in a
new process group, with the event's JSON on stdin and the tools' environment (headwire's
credentials removed) plus ``QWEN_PROJECT_DIR``, ``CLAUDE_PROJECT_DIR``, ``GEMINI_PROJECT_DIR``
and ``HEADWIRE_PROJECT_DIR`` (the project folder) and the hook's own ``env``.  At its timeout,
or when the turn is cancelled, the whole group is killed and the run goes on.  An HTTP hook
POSTs the same JSON through the address guard of ``web_fetch``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from headwire import events as ev
from headwire.runtime.environment import tool_environment
from headwire.runtime.hooks import (
    HookAnswer,
    HookSpec,
    Verdict,
    answer_from_json,
    combine,
    interpret,
    selected,
)
from headwire.wire import encode

MAX_OUTPUT_BYTES = 1024 * 1024
"""What is kept of a hook's stdout and of its stderr (the rest is read and dropped)."""
_READ = 65536

SdkCallback = Callable[[str, dict[str, Any]], Any]
"""An SDK client's hook callbacks: ``await call(event, input)`` -> a list of JSON answers."""


async def _read_capped(stream: asyncio.StreamReader | None) -> bytes:
    if stream is None:
        return b""
    kept = bytearray()
    while chunk := await stream.read(_READ):
        if len(kept) < MAX_OUTPUT_BYTES:
            kept += chunk[: MAX_OUTPUT_BYTES - len(kept)]
    return bytes(kept)


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _shell() -> list[str]:
    bash = shutil.which("bash")
    return [bash, "-c"] if bash else ["/bin/sh", "-c"]


async def run_command(
    command: str, stdin: bytes, *, cwd: Path, env: Mapping[str, str], timeout_s: float
) -> tuple[int | None, str, str]:
    """``(exit code, stdout, stderr)`` of ``command``; the exit code is ``None`` when it ran
    past ``timeout_s`` (its process group is then killed, as on cancellation)."""
    proc = await asyncio.create_subprocess_exec(
        *_shell(),
        command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(cwd),
        env=dict(env),
        start_new_session=True,
    )

    async def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            proc.stdin.close()

    try:
        async with asyncio.timeout(timeout_s):
            _, out, err = await asyncio.gather(
                feed(), _read_capped(proc.stdout), _read_capped(proc.stderr)
            )
            code = await proc.wait()
    except TimeoutError:
        _kill_group(proc)
        await proc.wait()
        return None, "", f"timed out after {timeout_s:g}s"
    except BaseException:  # cancelled: the group dies, then the cancellation goes on
        _kill_group(proc)
        with contextlib.suppress(BaseException):
            await asyncio.wait_for(proc.wait(), 5)
        raise
    _kill_group(proc)  # nothing the hook started outlives it
    return code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


class HookRunner:
    """A session's hooks (see the module docstring)."""

    def __init__(
        self,
        table: Mapping[str, list[HookSpec]],
        *,
        cwd: Path,
        transcript_path: str = "",
        allow_private_network: bool = False,
        stop_cap: int = 8,
        sdk: SdkCallback | None = None,
        sdk_events: frozenset[str] = frozenset(),
    ) -> None:
        self.table = dict(table)
        self.cwd = cwd
        self.transcript_path = transcript_path
        self.allow_private_network = allow_private_network
        self.stop_cap = stop_cap
        self.sdk = sdk
        self.sdk_events = sdk_events
        self._env: dict[str, str] | None = None

    def has(self, event: str) -> bool:
        """Whether any hook (or SDK callback) listens to ``event``."""
        return bool(self.table.get(event)) or event in self.sdk_events

    def env(self, spec: HookSpec) -> dict[str, str]:
        """The environment of a command hook."""
        if self._env is None:
            base = tool_environment()
            project = str(self.cwd)
            for name in (
                "QWEN_PROJECT_DIR",
                "CLAUDE_PROJECT_DIR",
                "GEMINI_PROJECT_DIR",
                "HEADWIRE_PROJECT_DIR",
            ):
                base[name] = project
            self._env = base
        return {**self._env, **spec.env}

    def payload(
        self, event: str, session_id: str, mode: str, fields: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The JSON input of ``event``: the common fields, then the event's own."""
        return {
            "session_id": session_id,
            "transcript_path": self.transcript_path,
            "cwd": str(self.cwd),
            "hook_event_name": event,
            "timestamp": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "permission_mode": mode,
            **fields,
        }

    async def fire(
        self,
        event: str,
        target: str | None,
        fields: Mapping[str, Any],
        *,
        session_id: str,
        mode: str,
        publish: ev.EventSink,
        parent: str | None = None,
    ) -> Verdict:
        """Run the hooks ``event`` selects for ``target`` (concurrently); publish each run;
        return the combined verdict (no hooks: an empty verdict)."""
        specs = selected(self.table.get(event, ()), event, target)
        sdk = self.sdk if event in self.sdk_events else None
        if not specs and sdk is None:
            return Verdict()
        data = self.payload(event, session_id, mode, fields)
        stdin = encode(data) + b"\n"
        jobs = [self._run(spec, stdin, publish, parent) for spec in specs]
        if sdk is not None:
            jobs.append(self._sdk(sdk, event, target, data, publish, parent))
        answers: list[HookAnswer] = []
        for found in await asyncio.gather(*jobs):
            answers.extend(found)
        return combine(answers)

    async def _run(
        self, spec: HookSpec, stdin: bytes, publish: ev.EventSink, parent: str | None
    ) -> list[HookAnswer]:
        started = time.monotonic()
        code: int | None = None
        out = err = ""
        try:
            if spec.kind == "http":
                answer, out, err, code = await self._post(spec, stdin)
            else:
                code, out, err = await run_command(
                    spec.command, stdin, cwd=self.cwd, env=self.env(spec), timeout_s=spec.timeout_s
                )
                answer = interpret(spec.event, code, out, err)
        except asyncio.CancelledError:
            self._publish(
                publish, spec.event, spec.label, "cancelled", None, out, err, started, parent
            )
            raise
        except OSError as exc:  # the shell cannot start: a non-blocking error
            err = f"cannot run the hook: {exc.strerror or exc}"
            answer = HookAnswer("error", reason=err)
        self._publish(
            publish, spec.event, spec.label, answer.outcome, code, out, err, started, parent
        )
        return [answer]

    async def _post(self, spec: HookSpec, body: bytes) -> tuple[HookAnswer, str, str, int | None]:
        import json

        from headwire.runtime.tools.netguard import guarded_client

        headers = {"content-type": "application/json"}
        for key, value in spec.headers.items():
            headers[key] = _interpolate(value, spec.allowed_env_vars)
        url = _interpolate(spec.url, spec.allowed_env_vars)
        try:
            async with asyncio.timeout(spec.timeout_s):
                async with guarded_client(
                    allow_private=self.allow_private_network,
                    timeout_s=spec.timeout_s,
                    headers=headers,
                ) as client:
                    response = await client.post(url, content=body)
        except TimeoutError:
            return HookAnswer("timeout"), "", f"timed out after {spec.timeout_s:g}s", None
        except Exception as exc:  # refused address, connection error: non-blocking
            return HookAnswer("error", reason=str(exc)), "", f"{type(exc).__name__}: {exc}", None
        text = response.text[:MAX_OUTPUT_BYTES]
        if response.status_code >= 400:
            return HookAnswer("error", reason=text), text, "", response.status_code
        kind = response.headers.get("content-type", "")
        if "application/json" in kind and text.strip():
            try:
                data = json.loads(text)
            except ValueError:
                return HookAnswer("error", reason="the hook's JSON does not parse"), text, "", 0
            if isinstance(data, dict):
                return answer_from_json(spec.event, data), text, "", 0
        return HookAnswer("success", message=text.strip()), text, "", 0

    async def _sdk(
        self,
        call: SdkCallback,
        event: str,
        target: str | None,
        data: dict[str, Any],
        publish: ev.EventSink,
        parent: str | None,
    ) -> list[HookAnswer]:
        started = time.monotonic()
        try:
            results = await call(event, {**data, "_target": target})
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the client failed: a non-blocking error
            self._publish(publish, event, "sdk", "error", None, "", str(exc), started, parent)
            return []
        answers = [answer_from_json(event, r) for r in results if isinstance(r, Mapping)]
        for answer in answers:
            self._publish(
                publish,
                event,
                "sdk",
                answer.outcome,
                0,
                encode(answer.output or {}).decode(),
                "",
                started,
                parent,
            )
        return answers

    @staticmethod
    def _publish(
        publish: ev.EventSink,
        event: str,
        name: str,
        outcome: str,
        code: int | None,
        out: str,
        err: str,
        started: float,
        parent: str | None,
    ) -> None:
        publish(
            ev.HookRan(
                event=event,
                hook_name=name,
                outcome=outcome,
                exit_code=code,
                stdout=out,
                stderr=err,
                duration_ms=int((time.monotonic() - started) * 1000),
                parent=parent,
            )
        )


def _interpolate(text: str, allowed: tuple[str, ...]) -> str:
    """``${VAR}`` and ``$VAR`` replaced for the variables ``allowed`` names (others: empty)."""
    import re

    def value(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return os.environ.get(name, "") if name in allowed else ""

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)", value, text)


__all__ = ["MAX_OUTPUT_BYTES", "HookRunner", "run_command"]
