"""``run_shell_command``: run a command with ``bash -c`` in its own process group.

The child gets ``/dev/null`` as stdin and one pipe for stdout and stderr together.  Output is
read in 64 KiB chunks from an event-loop reader (never blocking the loop) and kept as raw
bytes up to 64 MiB (upstream's capture cap; the excess is counted and reported, not kept).
Cancellation (``ctx.cancelled``) and the timeout send SIGTERM to the whole group, then SIGKILL
after a grace period.

Texts follow Qwen Code 0.24.4: the model sees ``Command: ...\\nDirectory: ...\\nOutput: ...``
(or the timeout/cancel sentences); the display is the output itself.  When the model text
exceeds 30,000 characters the command's full raw output is saved byte-exact as an artifact,
the model gets upstream's "Tool output was too large..." envelope around a head/tail preview,
and the display gains upstream's footer ``"\\nOutput too long and was saved to: PATH"``.  When
the artifact cannot be written (disk full, unwritable data directory) the result still goes
out: the model gets the same preview with the reason instead of a path, the display the footer
``"Output too long and could not be saved: REASON"``.  The envelope and the saving are
:mod:`headwire.runtime.tools.output`'s, shared with the MCP tools and the agent.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import fcntl
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from headwire.records import dataclass, field
from headwire.runtime import sandbox
from headwire.runtime.environment import tool_environment
from headwire.runtime.telemetry import child_traceparent
from headwire.runtime.tools.background import start_background_pump
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.output import (
    save_artifact,
    truncated_envelope,
    unsaved_envelope,
)
from headwire.runtime.tools.paths import (
    FAILED,
    PathDenied,
    approval_needed,
    check_args,
    resolve_in_workspace,
)

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
OUTPUT_THRESHOLD = 30_000
MAX_CAPTURE_BYTES = 64 * 1024 * 1024
BINARY_SNIFF_BYTES = 512
"""Output with a NUL byte this early is binary (upstream's ``isBinary`` sample size)."""
LOOKS_BINARY_MIN_BYTES = 4096
"""Outputs up to this size are classified by upstream's sniff alone (upstream's sniff window)."""
LOOKS_BINARY_INVALID_RATIO = 4
"""A longer output is binary when more than 1 byte in this many is not valid UTF-8."""
CLASSIFY_CHUNK = 1 << 20
READ_CHUNK = 256 * 1024
PIPE_SIZE = 1024 * 1024
EOF_GRACE_S = 0.2
SAVED_FOOTER = "Output too long and was saved to: "
UNSAVED_FOOTER = "Output too long and could not be saved: "

_ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC
    r"|\x1b[@-Z\\-_]"  # two-byte escapes
)
_EXIT_ONE_OK = frozenset({"grep", "rg", "diff", "test", "[", "[["})

Reason = Literal["exit", "timeout", "cancelled"]


# ---------------------------------------------------------------------------------------------
# Running the process.


@dataclass(slots=True)
class _Capture:
    """The first ``limit`` bytes of the output, plus the total count.

    The bytes grow in one buffer (past glibc's mmap threshold, its own mapping, grown without
    copying and returned to the system as one block), not in chunks that a join would copy.
    """

    limit: int
    buffer: bytearray = field(default_factory=bytearray)
    total: int = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.limit - len(self.buffer)
        if room > 0:
            self.buffer += data if len(data) <= room else memoryview(data)[:room]


class _Pump:
    """Reads a non-blocking pipe from the event loop into a :class:`_Capture`."""

    def __init__(self, loop: asyncio.AbstractEventLoop, fd: int, capture: _Capture) -> None:
        self.loop, self.fd, self.capture = loop, fd, capture
        self.eof: asyncio.Future[None] = loop.create_future()
        os.set_blocking(fd, False)
        with contextlib.suppress(AttributeError, OSError):  # Linux: fewer, larger reads
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
        loop.add_reader(fd, self._on_readable)

    def _on_readable(self, rounds: int = 16) -> None:
        for _ in range(rounds):
            if self.eof.done():
                return
            try:
                chunk = os.read(self.fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self.close()
                return
            self.capture.add(chunk)

    def drain(self) -> None:
        """Take whatever is already buffered in the pipe."""
        self._on_readable(rounds=self.capture.limit // READ_CHUNK + 16)

    def close(self) -> None:
        if not self.eof.done():
            self.loop.remove_reader(self.fd)
            self.eof.set_result(None)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def _wait_exit(proc: subprocess.Popen[bytes]) -> int:
    """Wait for the child to exit (not for its pipe to close) and reap it."""
    loop = asyncio.get_running_loop()
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        while proc.poll() is None:
            await asyncio.sleep(0.02)
        return proc.returncode
    ready: asyncio.Future[None] = loop.create_future()

    def on_exit() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(pidfd, on_exit)
    try:
        await ready
    finally:
        loop.remove_reader(pidfd)
        os.close(pidfd)
    return proc.wait()


async def _wait_cancelled(event: asyncio.Event) -> None:
    """``event.wait()``, or polling when the event is bound to another loop."""
    try:
        await event.wait()
    except RuntimeError:
        while not event.is_set():
            await asyncio.sleep(0.05)


def _reap_later(proc: subprocess.Popen[bytes]) -> None:
    threading.Thread(target=proc.wait, name="headwire-reap", daemon=True).start()


@dataclass(slots=True)
class RunResult:
    """What a foreground run produced."""

    data: bytes
    total_bytes: int
    returncode: int | None
    reason: Reason
    spawn_error: str | None = None


def _shell() -> list[str]:
    bash = shutil.which("bash")
    return [bash, "-c"] if bash else ["/bin/sh", "-c"]


def _child_env(call_id: str = "") -> dict[str, str]:
    """headwire's environment without its own secrets (see :mod:`headwire.runtime.environment`);
    with telemetry on, ``TRACEPARENT`` names the tool call's span."""
    env = tool_environment()
    env["PAGER"] = "cat"
    traceparent = child_traceparent(call_id)
    if traceparent is not None:
        env["TRACEPARENT"] = traceparent
    return env


async def run_process(
    command: str,
    cwd: Path,
    timeout_s: float | None,
    cancelled: asyncio.Event,
    kill_grace_s: float,
    call_id: str = "",
    workspace: Path | None = None,
) -> RunResult:
    """Run ``command``; stop it (whole process group) on timeout or cancellation."""
    loop = asyncio.get_running_loop()
    try:
        proc = subprocess.Popen(
            sandbox.wrap([*_shell(), command], cwd, workspace),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=_child_env(call_id),
            start_new_session=True,
        )
    except OSError as exc:
        return RunResult(b"", 0, 1, "exit", spawn_error=str(exc))
    assert proc.stdout is not None
    capture = _Capture(MAX_CAPTURE_BYTES)
    pump = _Pump(loop, proc.stdout.fileno(), capture)
    exit_task = asyncio.ensure_future(_wait_exit(proc))
    cancel_task = asyncio.ensure_future(_wait_cancelled(cancelled))
    reason: Reason = "exit"
    try:
        done, _ = await asyncio.wait(
            {exit_task, cancel_task}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
        if exit_task not in done:
            reason = "cancelled" if cancelled.is_set() else "timeout"
            _signal_group(proc.pid, signal.SIGTERM)
            await asyncio.wait({exit_task}, timeout=kill_grace_s)
            _signal_group(proc.pid, signal.SIGKILL)  # also whatever ignored SIGTERM
            await asyncio.wait({exit_task}, timeout=5.0)
        await asyncio.wait({pump.eof}, timeout=EOF_GRACE_S)
        pump.drain()
    finally:
        cancel_task.cancel()
        if proc.poll() is None:
            _signal_group(proc.pid, signal.SIGKILL)
            _reap_later(proc)
        exit_task.cancel()
        pump.close()
        proc.stdout.close()
    data = bytes(capture.buffer)
    capture.buffer = bytearray()
    return RunResult(data, capture.total, proc.returncode, reason)


# ---------------------------------------------------------------------------------------------
# Texts.


def _format_size(size: int) -> str:
    kib, mib, gib = 1024.0, 1024.0**2, 1024.0**3
    if round(size / kib, 1) < 1024:
        return f"{size / kib:.1f} KB"
    if round(size / mib, 1) < 1024:
        return f"{size / mib:.1f} MB"
    return f"{size / gib:.2f} GB"


def is_binary(data: bytes) -> bool:
    """Upstream's binary sniff: a NUL byte among the first :data:`BINARY_SNIFF_BYTES` bytes."""
    return b"\x00" in data[:BINARY_SNIFF_BYTES]


def is_binary_output(data: bytes) -> bool:
    """Whether the shell's output is binary: :func:`is_binary`, or, past the first
    :data:`LOOKS_BINARY_MIN_BYTES` bytes, more than one byte in
    :data:`LOOKS_BINARY_INVALID_RATIO` that is not part of valid UTF-8 (random or compressed
    bytes, whatever their first bytes; text in a legacy 8-bit encoding stays well under it).

    Checked in :data:`CLASSIFY_CHUNK` slices with an incremental decoder, so the whole output
    is never held as a string; it stops as soon as the answer is certain."""
    if is_binary(data):
        return True
    size = len(data)
    if size <= LOOKS_BINARY_MIN_BYTES:
        return False
    limit = size // LOOKS_BINARY_INVALID_RATIO
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    view = memoryview(data)
    invalid = 0
    for start in range(0, size, CLASSIFY_CHUNK):
        piece = view[start : start + CLASSIFY_CHUNK]
        text = decoder.decode(piece, final=start + CLASSIFY_CHUNK >= size)
        # U+FFFD that was not in the bytes (an encoded U+FFFD is text; one split across two
        # slices is counted once too often, which cannot matter at this ratio)
        invalid += text.count("\ufffd") - data.count(b"\xef\xbf\xbd", start, start + CLASSIFY_CHUNK)
        del text
        if invalid > limit:
            return True
    return False


def strip_ansi(text: str) -> str:
    """``text`` without its ANSI escape sequences (CSI, OSC, two-byte escapes), as upstream
    strips them.  Every sequence starts with ESC or the C1 CSI, so text holding neither (most
    output) is returned after two C-level searches instead of a regular-expression scan."""
    if "\x1b" not in text and "\x9b" not in text:
        return text
    return _ANSI.sub("", text)


def output_text(result: RunResult) -> tuple[str, ...]:
    """The output as upstream shows it (UTF-8 with invalid bytes replaced, ANSI-stripped,
    trimmed), as parts: the text, then upstream's notice when the capture cap was hit.
    ``()`` when there is no output.

    Output that :func:`is_binary_output` is not decoded at all, as upstream stops decoding a
    stream once it sniffs binary: its text is empty (a 64 MiB binary dump would otherwise
    become a string of up to four bytes per byte, then copies of it)."""
    if is_binary_output(result.data):
        text = ""
    else:
        text = strip_ansi(result.data.decode("utf-8", errors="replace")).strip()
    if result.total_bytes <= len(result.data):
        return (text,) if text else ()
    kept = _format_size(len(result.data))
    notice = (
        f"[Output exceeded the maximum captured size of {kept}; captured the first "
        f"{kept} of {_format_size(result.total_bytes)} and discarded the rest.]"
    )
    return (text, "\n\n", notice) if text else (notice,)


def is_exit_error(command: str, code: int | None) -> bool:
    """Upstream's rule: any non-zero code is a failure, except 1 from grep/rg/diff/test."""
    if code is None or code == 0:
        return False
    if code >= 2 or re.search(r";|&&|\|\||\n", command):
        return True
    segment = command.rsplit("|", 1)[-1]
    try:
        tokens = [t for t in shlex.split(segment) if not re.match(r"^[A-Za-z_]\w*=", t)]
    except ValueError:
        return True
    return not tokens or os.path.basename(tokens[0]) not in _EXIT_ONE_OK


ReadOnlyCheck = Callable[[str], bool]
"""Whether a command line only reads (asks nothing): given to :class:`ShellTool` by whoever
builds it, from the permission layer (``shell_rules.is_read_only_command``); the tool itself
does not import that layer."""


def nothing_is_read_only(command: str) -> bool:
    """The check of a shell tool built without one: every command asks (unless ``yolo``)."""
    return False


@dataclass(frozen=True, slots=True)
class Texts:
    """The model text and display as parts (the output is one part, never copied twice)."""

    llm: tuple[str, ...]
    display: tuple[str, ...]
    error: str | None
    error_type: str | None
    failed: bool = False


def _texts(
    args: dict[str, Any], result: RunResult, output: tuple[str, ...], timeout_ms: int
) -> Texts:
    """Upstream's texts for a finished run, before any truncation."""
    command: str = args["command"]
    if result.reason == "timeout":
        summary = f"Command timed out after {timeout_ms}ms before it could complete."
        if output:
            return Texts(
                (summary, " Below is the output before it timed out:\n", *output),
                (summary, "\n", *output),
                summary,
                "timeout",
            )
        detail = f"{summary} There was no output before it timed out."
        return Texts((detail,), (detail,), summary, "timeout")
    if result.reason == "cancelled":
        message = "Command was cancelled by user before it could complete."
        if output:
            return Texts(
                (message, " Below is the output before it was cancelled:\n", *output),
                output,
                message,
                "cancelled",
            )
        return Texts(
            (f"{message} There was no output before it was cancelled.",),
            ("Command cancelled by user.",),
            message,
            "cancelled",
        )
    code = result.returncode
    signum = -code if code is not None and code < 0 else None
    exit_code = None if signum is not None else code
    head = f"Command: {command}\nDirectory: {args.get('directory') or '(root)'}\nOutput: "
    tail = (
        f"\nError: {result.spawn_error or '(none)'}"
        f"\nExit Code: {exit_code if exit_code is not None else '(none)'}"
        f"\nSignal: {signum if signum is not None else '(none)'}"
        "\nProcess Group PGID: (none)"
    )
    display: tuple[str, ...]
    if output:
        display = output
    elif signum is not None:
        display = (f"Command terminated by signal: {signum}",)
    elif result.spawn_error:
        display = (f"Command failed: {result.spawn_error}",)
    elif exit_code:
        display = (f"Command exited with code: {exit_code}",)
    else:
        display = ()
    failed = bool(result.spawn_error) or signum is not None or is_exit_error(command, exit_code)
    return Texts(
        (head, *(output or ("(empty)",)), tail), display, None, FAILED if failed else None, failed
    )


# ---------------------------------------------------------------------------------------------
# The tool.


class ShellTool:
    """Run a shell command in the workspace.

    ``read_only`` says whether a command only reads, so it runs without asking
    (:data:`ReadOnlyCheck`; the permission policy also resolves the paths against the
    workspace)."""

    name: str = "run_shell_command"
    display_name: str = "Shell"
    description: str = (
        "Executes a given shell command (as `bash -c <command>`) in a subprocess that leads its "
        "own process group, with an optional timeout.\n\n"
        "Use it for terminal operations (git, npm, builds, tests); prefer the dedicated tools "
        "for reading, writing, editing and searching files.\n"
        "- The command runs with stdin closed; stdout and stderr are returned together.\n"
        f"- `timeout` is in milliseconds (max {MAX_TIMEOUT_MS}); without it commands time out "
        f"after {DEFAULT_TIMEOUT_MS}ms. Use `is_background: true` for servers and watchers.\n"
        "- Prefer absolute paths over `cd`."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "Exact bash command to execute as `bash -c <command>`",
            },
            "is_background": {
                "type": "boolean",
                "description": (
                    "Optional: run the command in the background (default false). Set it for "
                    "long-running processes such as dev servers, watchers or daemons."
                ),
            },
            "timeout": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_TIMEOUT_MS,
                "description": f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS})",
            },
            "description": {
                "type": "string",
                "description": "Brief description of the command for the user (one sentence).",
            },
            "directory": {
                "type": "string",
                "description": (
                    "(OPTIONAL) The absolute path of the directory to run the command in; "
                    "defaults to the project root. Must be an existing directory inside the "
                    "workspace."
                ),
            },
        },
        "required": ["command"],
    }
    kind: ToolKind = "execute"
    kill_grace_s: float = 2.0

    def __init__(self, read_only: ReadOnlyCheck = nothing_is_read_only) -> None:
        self.read_only = read_only

    def validate(self, args: dict[str, Any]) -> str | None:
        """Schema check plus upstream's command, timeout and directory rules."""
        problem = check_args(self.parameters, args)
        if problem:
            return problem
        command: str = args["command"]
        if not command.strip():
            return "Command cannot be empty."
        stripped = command.rstrip()
        if (
            args.get("is_background")
            and stripped.endswith("&")
            and not stripped.endswith(("&&", "\\&"))
        ):
            return (
                'Background shell commands must not end with a bare "&". Remove the trailing '
                '"&" and rely on is_background: true instead.'
            )
        directory = args.get("directory")
        if directory and not os.path.isabs(directory):
            return "Directory must be an absolute path."
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Execution asks unless ``yolo``; plainly read-only commands never ask (parsed only
        when the mode would ask: ``yolo`` never loads the shell parser for this)."""
        if not approval_needed(self.kind, mode):
            return False
        command = args.get("command")
        return not (
            isinstance(command, str) and not args.get("is_background") and self.read_only(command)
        )

    def _cwd(self, args: dict[str, Any], ctx: ToolContext) -> Path | ToolOutcome:
        directory = args.get("directory")
        if not directory:
            return ctx.cwd
        message = (
            f"Directory '{directory}' is not within any of the registered workspace directories."
        )
        try:
            resolved = resolve_in_workspace(directory, ctx)
        except PathDenied:
            return ToolOutcome(
                llm_text=message,
                display=f"Error: {message}",
                error=message,
                error_type="execution_denied",
            )
        if not resolved.is_dir():
            message = f"Directory does not exist: {directory}"
            return ToolOutcome(
                llm_text=message,
                display=f"Error: {message}",
                error=message,
                error_type="invalid_tool_params",
            )
        return resolved

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Run the command in the foreground (or start it in the background)."""
        if ctx.cancelled.is_set():
            message = "Command was cancelled by user before it could start."
            return ToolOutcome(
                llm_text=message,
                display="Command cancelled by user.",
                error=message,
                error_type="cancelled",
            )
        cwd = self._cwd(args, ctx)
        if isinstance(cwd, ToolOutcome):
            return cwd
        if args.get("is_background"):
            return await self._background(args["command"], cwd, ctx)
        timeout_ms = self._timeout_ms(args, ctx)
        result = await run_process(
            args["command"],
            cwd,
            timeout_ms / 1000,
            ctx.cancelled,
            self.kill_grace_s,
            ctx.call_id,
            ctx.cwd,
        )
        output = (
            await asyncio.to_thread(output_text, result)
            if len(result.data) > 1 << 20
            else output_text(result)
        )
        texts = _texts(args, result, output, timeout_ms)
        del output
        artifact: Path | None = None
        unsaved: str | None = None
        if sum(map(len, texts.llm)) > OUTPUT_THRESHOLD:
            artifact, unsaved = await save_artifact(ctx, self.name, result.data)
        result.data = b""  # keep at most one copy of the output text from here on
        llm = "".join(texts.llm)
        display_parts = texts.display
        if artifact is not None or unsaved is not None:
            llm = (
                truncated_envelope(llm, artifact)
                if artifact is not None
                else unsaved_envelope(llm, str(unsaved))
            )
            footer = (
                SAVED_FOOTER + str(artifact)
                if artifact is not None
                else UNSAVED_FOOTER + str(unsaved)
            )
            display_parts = (*display_parts, "\n", footer) if any(display_parts) else (footer,)
        # Upstream reports a failed command with its (possibly truncated) model text.
        error = llm if texts.failed else texts.error
        extra = {"exit_code": result.returncode, "output_bytes": result.total_bytes}
        return ToolOutcome(
            llm_text=llm,
            display="".join(display_parts) or None,
            error=error,
            error_type=texts.error_type,
            artifact=artifact,
            extra=extra,
        )

    @staticmethod
    def _timeout_ms(args: dict[str, Any], ctx: ToolContext) -> int:
        if isinstance(args.get("timeout"), int):
            return int(args["timeout"])
        if ctx.timeout_s is not None and ctx.timeout_s > 0:
            return max(1, round(ctx.timeout_s * 1000))
        return DEFAULT_TIMEOUT_MS

    async def _background(self, command: str, cwd: Path, ctx: ToolContext) -> ToolOutcome:
        """Start ``command`` detached; its output is appended to an (initially empty) artifact
        by a pump thread, up to :data:`MAX_CAPTURE_BYTES`; headwire stops it when it exits."""
        path = await asyncio.to_thread(ctx.artifacts.save, self.name, b"")
        read_fd, write_fd = os.pipe()
        try:
            proc = subprocess.Popen(
                sandbox.wrap([*_shell(), command], cwd, ctx.cwd),
                stdin=subprocess.DEVNULL,
                stdout=write_fd,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=_child_env(ctx.call_id),
                start_new_session=True,
            )
        except OSError as exc:
            os.close(read_fd)
            message = f"Command failed: {exc}"
            return ToolOutcome(llm_text=message, display=message, error=message, error_type=FAILED)
        finally:
            os.close(write_fd)
        start_background_pump(proc, read_fd, path)
        shell_id = f"bg_{os.urandom(4).hex()}"
        llm = (
            f"Background shell started.\nid: {shell_id}\npid: {proc.pid}\n"
            f"output file: {path}\nRead the output file directly to view the captured "
            f"output. The command leads process group {proc.pid}; stop it with "
            f"`kill -- -{proc.pid}`."
        )
        display = f"Background shell {shell_id} started (pid {proc.pid})."
        return ToolOutcome(
            llm_text=llm,
            display=display,
            artifact=path,
            extra={"pid": proc.pid, "background_id": shell_id},
        )
