"""Running hooks: a command in its own process group, or an HTTP POST, never blocking the loop.

:class:`HookRunner` is a session's hooks (built only when the settings configure some, so a run
without hooks never imports this module).  :meth:`HookRunner.fire` runs the hooks an event
selects concurrently, publishes one :class:`~headwire.events.HookRan` per run (the
``system``/``hook_response`` message on the stream-JSON wire) and returns their combined
:class:`~headwire.runtime.hooks.decide.Verdict`.

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
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from headwire import events as ev
from headwire.runtime import sandbox
from headwire.runtime.environment import tool_environment
from headwire.runtime.hooks.decide import (
    HookAnswer,
    HookSpec,
    Verdict,
    answer_from_json,
    combine,
    interpret,
    selected,
)
from headwire.runtime.telemetry import hook_tracer
from headwire.wire import encode

MAX_OUTPUT_BYTES = 1024 * 1024
"""What is kept of a hook's stdout and of its stderr (the rest is read and dropped)."""
_READ = 65536

SdkCall = Callable[[str, dict[str, Any], str | None, float], Awaitable[Mapping[str, Any]]]
"""Calls an SDK client's hook callback: ``await call(callback_id, input, tool_use_id, timeout_s)``
-> its JSON answer (raises when the client fails or does not answer in time)."""


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
        *sandbox.wrap([*_shell(), command], cwd),  # confined like a shell tool when one is on
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
    ) -> None:
        self.table = {event: list(specs) for event, specs in table.items()}
        self.cwd = cwd
        self.transcript_path = transcript_path
        self.allow_private_network = allow_private_network
        self.stop_cap = stop_cap
        self.sdk: SdkCall | None = None
        self._env: dict[str, str] | None = None

    def has(self, event: str) -> bool:
        """Whether any hook (or SDK callback) listens to ``event``."""
        return bool(self.table.get(event))

    def add_sdk_hooks(self, hooks: Mapping[str, Any], call: SdkCall) -> int:
        """Register an SDK client's callbacks (``initialize``'s ``hooks``: ``{event:
        [{"matcher", "hookCallbackIds", "timeout"}]}``, Claude's shape, timeout in seconds);
        they run with the settings' hooks of the same event.  Returns how many were added."""
        self.sdk = call
        count = 0
        for event, groups in hooks.items():
            for group in groups if isinstance(groups, list) else ():
                if not isinstance(group, Mapping):
                    continue
                matcher = group.get("matcher")
                timeout = group.get("timeout")
                seconds = 60.0
                if isinstance(timeout, (int, float)) and not isinstance(timeout, bool):
                    seconds = float(timeout) if timeout > 0 else seconds
                for callback_id in group.get("hookCallbackIds") or ():
                    if not isinstance(callback_id, str):
                        continue
                    spec = HookSpec(
                        event=str(event),
                        matcher=matcher if isinstance(matcher, str) else "",
                        kind="sdk",
                        command=callback_id,
                        name=f"sdk:{callback_id}",
                        timeout_s=seconds,
                        source="initialize",
                    )
                    self.table.setdefault(str(event), []).append(spec)
                    count += 1
        return count

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
        if not specs:
            return Verdict()
        data = self.payload(event, session_id, mode, fields)
        stdin = encode(data) + b"\n"
        jobs = [self._run(spec, data, stdin, publish, parent) for spec in specs]
        return combine(await asyncio.gather(*jobs))

    async def _run(
        self,
        spec: HookSpec,
        data: dict[str, Any],
        stdin: bytes,
        publish: ev.EventSink,
        parent: str | None,
    ) -> HookAnswer:
        started = time.monotonic()
        code: int | None = None
        out = err = ""
        tracer = hook_tracer()
        span, traceparent = (None, None)
        if tracer is not None:  # telemetry on: a qwen-code.hook span for this run
            tool = data.get("tool_name")
            use_id = data.get("tool_use_id")
            span, traceparent = tracer.start_hook(
                spec.event,
                tool if isinstance(tool, str) else None,
                use_id if isinstance(use_id, str) else None,
                parent,
            )
        try:
            if spec.kind == "sdk":
                answer, out, err, code = await self._call_sdk(spec, data)
            elif spec.kind == "http":
                answer, out, err, code = await self._post(spec, stdin)
            else:
                env = self.env(spec)
                if traceparent is not None:
                    env["TRACEPARENT"] = traceparent
                code, out, err = await run_command(
                    spec.command, stdin, cwd=self.cwd, env=env, timeout_s=spec.timeout_s
                )
                answer = interpret(spec.event, code, out, err)
        except asyncio.CancelledError:
            if tracer is not None:
                tracer.end_hook(span, "cancelled", None)
            self._publish(
                publish, spec.event, spec.label, "cancelled", None, out, err, started, parent
            )
            raise
        except OSError as exc:  # the shell cannot start: a non-blocking error
            err = f"cannot run the hook: {exc.strerror or exc}"
            answer = HookAnswer("error", reason=err)
        except Exception as exc:  # a bug: its span ends (as an error) before it propagates
            if tracer is not None:
                tracer.end_hook(span, "error", type(exc).__name__)
            raise
        if tracer is not None:
            tracer.end_hook(span, answer.outcome, answer.reason or err or None)
        self._publish(
            publish, spec.event, spec.label, answer.outcome, code, out, err, started, parent
        )
        return answer

    async def _call_sdk(
        self, spec: HookSpec, data: dict[str, Any]
    ) -> tuple[HookAnswer, str, str, int | None]:
        if self.sdk is None:
            return HookAnswer("error"), "", "no SDK client", None
        tool_use_id = data.get("tool_use_id")
        try:
            output = await self.sdk(
                spec.command,
                data,
                tool_use_id if isinstance(tool_use_id, str) else None,
                spec.timeout_s,
            )
        except TimeoutError:
            return HookAnswer("timeout"), "", f"timed out after {spec.timeout_s:g}s", None
        except Exception as exc:  # the client failed: a non-blocking error
            return HookAnswer("error", reason=str(exc)), "", str(exc), None
        return answer_from_json(spec.event, output), encode(dict(output)).decode(), "", 0

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
