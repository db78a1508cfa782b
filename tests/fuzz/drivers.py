"""In-process drivers and oracles of the fuzz targets.

Each driver feeds one input to the real reader in this process and returns what it wrote;
each ``check_*`` function states the target's invariant and raises :class:`AssertionError`
on a finding.  The invariants (from the modules' docstrings):

* stream-JSON session (:class:`headwire.cli.run.session.Session`): the run ends (no hang)
  with exit code 0; every stdout line is one JSON object; every non-blank input line is handled:
  a bad line gets an error ``result`` (in its place in the turn queue, naming its line number)
  or, when it carried a string ``request_id``, an error ``control_response``, plus a stderr
  line ``stdin line N: ...``; every ``control_request`` with a ``request_id`` gets exactly one
  ``control_response``; every non-blank ``user`` prompt gets exactly one ``result``; no
  traceback reaches stderr;
* ACP (:class:`headwire.acp.server.AcpServer`): every request gets exactly one response with
  its id, every unusable line one error response; the only error codes are -32700, -32600,
  -32601, -32602 and -32002 (a request before initialize); no traceback;
* every tool result on either wire is the projection of the tool's text: at most 65,536 JSON
  bytes, the whole text when it fits, else a head prefix, the marker once and a tail suffix,
  and projecting it again changes nothing.

The drivers build the agent with :mod:`headwire.cli.build` (the CLI's own
flags, a private ``HEADWIRE_HOME``), and either keep the scripted model (``scripted:done``)
or, in *tool mode*, swap in :class:`FuzzModel`, which calls :class:`FuzzTool` once per prompt;
the tool's outputs are the generated texts, and its permission requests are answered with
generated (and mutated) answers.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

import orjson

from headwire.acp.server import AcpServer
from headwire.cli.build import open_acp_runtime
from headwire.cli.flags.agent import apply_compat, build_parser
from headwire.cli.run.session import Session
from headwire.io.writer import WireWriter
from headwire.projection import (
    ACP_TRUNCATION_MARKER,
    HEADLESS_TRUNCATION_MARKER,
    TOOL_RESULT_JSON_BYTE_BUDGET,
    project_acp_tool_call_update,
    project_json_string,
    project_tool_result_content,
)
from headwire.protocol import jsonrpc as rpc
from headwire.runtime.agent.loop import Agent
from headwire.runtime.models.base import (
    Finished,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ToolCall,
    Usage,
)
from headwire.runtime.models.openai import OpenAIModel
from headwire.runtime.tools.base import ApprovalMode, Tool, ToolContext, ToolOutcome
from headwire.wire import encode, loads

BUDGET = TOOL_RESULT_JSON_BYTE_BUDGET
TIMEOUT_S = 60.0
"""Longest one driven input may take before it counts as a hang."""
DOCUMENTED_ACP_ERRORS = frozenset({-32700, -32600, -32601, -32602, -32002})
SESSION_ARGV = (
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--model",
    "scripted:done",
)
ACP_ARGV = ("--acp", "--model", "scripted:done")


class Hang(AssertionError):
    """The reader did not finish within :data:`TIMEOUT_S`."""


# -- environment ------------------------------------------------------------------------------


@dataclass
class Home:
    """A private ``HEADWIRE_HOME`` and project directory for in-process runs."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="headwire-fuzz-")))

    @property
    def home(self) -> Path:
        """The data directory (recordings, artifacts)."""
        return self.root / "home"

    @property
    def project(self) -> Path:
        """The agent's working directory."""
        path = self.root / "project"
        path.mkdir(parents=True, exist_ok=True)
        return path

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        """Point ``HEADWIRE_HOME`` here while the block runs."""
        old = os.environ.get("HEADWIRE_HOME")
        os.environ["HEADWIRE_HOME"] = str(self.home)
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("HEADWIRE_HOME", None)
            else:
                os.environ["HEADWIRE_HOME"] = old

    def clean(self) -> None:
        """Drop recordings and artifacts written so far."""
        shutil.rmtree(self.home, ignore_errors=True)

    def remove(self) -> None:
        """Delete everything."""
        shutil.rmtree(self.root, ignore_errors=True)


_HOME: Home | None = None


def home() -> Home:
    """The process-wide fuzz home (created on first use, removed at exit)."""
    global _HOME
    if _HOME is None:
        import atexit

        _HOME = Home()
        atexit.register(_HOME.remove)
    return _HOME


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """The CLI's flags as ``headwire ARGV`` would see them."""
    args = build_parser().parse_args(list(argv))
    with contextlib.redirect_stderr(io.StringIO()):
        apply_compat(args)
    return args


# -- the fuzz model and tool ----------------------------------------------------------------


@dataclass
class ToolPlan:
    """What :class:`FuzzTool` returns, call after call (cycled): ``(display, error)`` pairs."""

    outputs: list[tuple[str | None, str | None]] = field(default_factory=list)
    calls: int = 0

    def next(self) -> tuple[str | None, str | None]:
        """The next output (``("ok", None)`` when there are none)."""
        if not self.outputs:
            return "ok", None
        out = self.outputs[self.calls % len(self.outputs)]
        self.calls += 1
        return out

    def texts(self) -> list[str]:
        """Every text the tool may show on the wire."""
        return ["ok", *(t for pair in self.outputs for t in pair if t is not None)]


class FuzzTool:
    """A tool that needs approval (kind ``edit``) and returns the planned texts."""

    name = "fuzz_tool"
    display_name = "FuzzTool"
    description = "Returns generated text."
    parameters: dict[str, Any] = {"type": "object"}  # noqa: RUF012
    kind = "edit"

    def __init__(self, plan: ToolPlan) -> None:
        self.plan = plan

    def validate(self, args: dict[str, Any]) -> str | None:
        """Every argument object is valid."""
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Always, unless the mode says otherwise."""
        return True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Return the next planned display (or error)."""
        display, error = self.plan.next()
        await asyncio.sleep(0)
        if error is not None:
            return ToolOutcome(llm_text=error, error=error, error_type="execution_failed")
        return ToolOutcome(llm_text="ok", display=display)


class FuzzModel:
    """Answers a user prompt with one :class:`FuzzTool` call, and a tool result with ``done``."""

    def __init__(self, name: str = "fuzz-model") -> None:
        self.name = name
        self.calls = 0

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """One tool call after a prompt, else the final answer."""
        self.calls += 1
        last = request.messages[-1] if request.messages else {}
        if last.get("role") == "user":
            yield ToolCall(f"call_fuzz_{self.calls}", FuzzTool.name, {"n": self.calls})
        else:
            yield TextDelta("done")
        yield Finished(Usage(input_tokens=5, output_tokens=1, total_tokens=6))


WIRE_FAILURES: list[str] = []
"""Model requests the OpenAI provider could not write or read back (see :class:`WireChecked`)."""
_PROVIDER = OpenAIModel("http://127.0.0.1:9/v1", None, "fuzz-model")


def as_read(value: Any) -> Any:
    """``value`` as a JSON round trip gives it back: adjacent surrogate pairs joined (the one
    code point they stand for), every number a double."""
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    if isinstance(value, dict):
        return {as_read(k): as_read(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_read(v) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return value


class WireChecked:
    """Wraps the agent's model: every request is first written as the OpenAI provider writes
    its body and read back by the text rule's reader; a failure is kept in WIRE_FAILURES (the
    checks assert it stays empty), so any text a channel brought in reaches a model server."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.name = model.name

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Check the request's wire form, then delegate."""
        try:
            body = loads(_PROVIDER._prepare(request).body)
            if as_read(body["messages"]) != as_read(request.messages):
                WIRE_FAILURES.append(f"messages changed on the wire: {request.messages!r:.300}")
        except Exception as exc:  # any failure to write or read is a finding
            WIRE_FAILURES.append(f"{type(exc).__name__}: {exc}")
        async for event in self.model.stream(request):
            yield event


def assert_wire_clean() -> None:
    """No model request failed to reach the wire since the last check."""
    failures, WIRE_FAILURES[:] = list(WIRE_FAILURES), []
    assert not failures, failures[:3]


def _tool_mode(agent: Agent, plan: ToolPlan | None) -> None:
    if plan is not None:
        agent.model = FuzzModel()
        agent.tools[FuzzTool.name] = cast(Tool, FuzzTool(plan))
    agent.model = cast(Any, WireChecked(agent.model))


# -- JSON helpers -----------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json(line: bytes) -> Any:
    """Parse one line as JSON the way the wires read it (:func:`headwire.wire.loads`: orjson,
    or the standard library for lone surrogate escapes)."""
    return loads(line)


def output_frames(stdout: bytes) -> list[Any]:
    """The stdout lines as JSON values; every line must be terminated and parse."""
    if not stdout:
        return []
    assert stdout.endswith(b"\n"), f"unterminated last stdout line: {stdout[-200:]!r}"
    return [parse_json(line) for line in stdout[:-1].split(b"\n")]


# -- projection -----------------------------------------------------------------------------


def positions_bytes(data: bytes, part: bytes) -> list[int]:
    """Every offset at which ``part`` (not empty) starts in ``data``."""
    found: list[int] = []
    start = data.find(part)
    while start >= 0:
        found.append(start)
        start = data.find(part, start + 1)
    return found


def utf16(text: str) -> bytes:
    """UTF-16LE code units: the identity of a JavaScript string (two surrogate code points
    and the astral character they form are the same units)."""
    return text.encode("utf-16-le", "surrogatepass")


def check_projected(
    original: str, out: str, budget: int = BUDGET, marker: str = HEADLESS_TRUNCATION_MARKER
) -> None:
    """The projection invariants of ``out = project_json_string(original, budget, marker)``,
    compared in UTF-16 code units."""
    size = len(encode(out))
    if len(encode(original)) <= budget:
        assert out == original, "a fitting text was changed"
        return
    assert size <= max(budget, 2), f"projected JSON is {size} bytes, budget {budget}"
    assert project_json_string(out, budget, marker) == out, "projection is not idempotent"
    if not marker or len(encode(marker)) > budget:
        return
    units, out_units, mark = utf16(original), utf16(out), utf16(marker)
    starts = [i for i in positions_bytes(out_units, mark) if i % 2 == 0]
    assert starts, "a truncated text lacks the marker"
    if mark not in units:
        assert len(starts) == 1, "the marker appears more than once"
    assert any(
        units.startswith(out_units[:i])
        and units.endswith(out_units[i + len(mark) :])
        and len(out_units) - len(mark) < len(units)
        for i in starts
    ), "the preview is not a head prefix + marker + tail suffix"


MODEL_PREVIEW_HEADER = "Tool output was too large and has been truncated.\n"
"""How the model-facing text of an output over its budget begins (``runtime/tools/output.py``)."""


def check_tool_result_content(content: Any, texts: Sequence[str]) -> None:
    """A headless ``tool_result.content``: the projection of one of ``texts``, or a short
    message of the runtime (a denial) that fits and carries no marker."""
    if content is None:
        return
    assert isinstance(content, str), f"tool_result content is {type(content).__name__}"
    assert len(encode(content)) <= BUDGET, "tool_result content over budget"
    for text in texts:
        if project_tool_result_content(text) == content:
            check_projected(text, content)
            return
    if content.startswith(MODEL_PREVIEW_HEADER):
        # a text longer than the model's budget and no display: the wire shows what the model
        # read (head, tail and the artifact's path), bounded like any other content
        return
    assert HEADLESS_TRUNCATION_MARKER not in content, "a truncated result of no known text"


def check_acp_update(update: Any, texts: Sequence[str]) -> None:
    """A ``tool_call_update`` on the ACP wire: both fields within budget, projection fixed."""
    if not isinstance(update, dict) or update.get("sessionUpdate") != "tool_call_update":
        return
    for key in ("content", "rawOutput"):
        if key in update:
            assert len(encode(update[key])) <= BUDGET, f"ACP {key} over budget"
    assert project_acp_tool_call_update(update) == update, "ACP projection is not idempotent"
    shown: list[Any] = [update.get("rawOutput")]
    for item in update.get("content") or []:
        block = item.get("content") if isinstance(item, dict) else None
        shown.append(block.get("text") if isinstance(block, dict) else None)
    for text in shown:
        if isinstance(text, str) and ACP_TRUNCATION_MARKER in text and texts:
            check_preview(text, texts, ACP_TRUNCATION_MARKER)


def check_preview(out: str, texts: Sequence[str], marker: str) -> None:
    """``out`` holds ``marker``: it is a head prefix + marker + tail suffix of one of
    ``texts`` (or one of them verbatim)."""
    if out in texts:
        return
    out_units, mark = utf16(out), utf16(marker)
    starts = [i for i in positions_bytes(out_units, mark) if i % 2 == 0]
    assert any(
        utf16(original).startswith(out_units[:i])
        and utf16(original).endswith(out_units[i + len(mark) :])
        for original in texts
        for i in starts
    ), "a truncated result that is no head + marker + tail of a known text"


# -- stream-JSON session ----------------------------------------------------------------------


@dataclass
class SessionExpect:
    """What a session must write for a list of input lines (the oracle's answer)."""

    results: int = 0
    rejected: list[int] = field(default_factory=list)
    """Line numbers that must get an error ``result`` naming them, in order."""
    noted: list[int] = field(default_factory=list)
    """Line numbers that must be named on stderr."""
    control_ids: Counter[str] = field(default_factory=Counter)


def _prompt_kind(message: Any) -> str:
    """``bad``, ``blank`` or ``prompt`` for an input ``user`` message (documented rules)."""
    if not isinstance(message, dict):
        return "bad"
    content = message.get("content")
    if isinstance(content, str):
        return "prompt" if content.strip() else "blank"
    if not isinstance(content, list):
        return "bad"
    parts: list[str] = []
    for block in content:
        if (
            isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ):
            parts.append(block["text"])
        else:  # written as JSON (lone surrogates as escapes, any depth): never blank
            parts.append("x")
    return "prompt" if "\n".join(parts).strip() else "blank"


def read_line(raw: bytes) -> Any:
    """The documented reading of an input line (the text rule, as ``JSON.parse``): orjson,
    else (an escaped lone surrogate) strict UTF-8 and the standard library; a line nested over
    orjson's 1,024 levels is refused.  Raises ``ValueError`` or ``RecursionError``."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if _too_deep(exc):
            raise
    return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)


def input_lines(data: bytes) -> list[bytes]:
    """The lines a reader splitting on ``\\n`` sees (a trailing empty piece is no line)."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def expect_session(lines: Sequence[bytes]) -> SessionExpect:
    """The documented routing of each input line, independent of the implementation."""
    out = SessionExpect()

    def bad(n: int, request_id: Any = None) -> None:
        out.noted.append(n)
        if isinstance(request_id, str):
            out.control_ids[request_id] += 1
        else:
            out.rejected.append(n)
            out.results += 1

    for n, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            message = read_line(raw)
        except (ValueError, RecursionError):
            bad(n)
            continue
        if not isinstance(message, dict):
            bad(n)
            continue
        kind = message.get("type")
        if not isinstance(kind, str):
            bad(n, message.get("request_id"))
        elif kind == "control_request":
            request_id, request = message.get("request_id"), message.get("request")
            if not isinstance(request_id, str) or not request_id:
                bad(n)
            elif not isinstance(request, dict):
                bad(n, request_id)
            else:
                out.control_ids[request_id] += 1
        elif kind == "user":
            prompt = _prompt_kind(message.get("message"))
            if prompt == "bad":
                bad(n)
            elif prompt == "prompt":
                out.results += 1
    return out


@dataclass
class Captured:
    """What one driven run wrote."""

    stdout: bytes
    stderr: str
    rc: int


class _Capture:
    """A binary stream that keeps what is written and shows each complete frame to a hook."""

    def __init__(self, on_frame: Any = None) -> None:
        self.buffer = bytearray()
        self.on_frame = on_frame
        self._seen = 0

    def write(self, data: bytes) -> int:
        """Append ``data``; call the hook for every frame it completes."""
        self.buffer += data
        if self.on_frame is not None:
            while (end := self.buffer.find(b"\n", self._seen)) >= 0:
                line = bytes(self.buffer[self._seen : end])
                self._seen = end + 1
                self.on_frame(line)
        return len(data)

    def flush(self) -> None:
        """Nothing to flush."""


def _feed(fd: int, data: bytes) -> None:
    """Thread body: write ``data`` to a pipe and close it."""
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    except OSError:
        pass
    finally:
        os.close(fd)


def run_session_stdin(data: bytes, argv: Sequence[str] = SESSION_ARGV) -> Captured:
    """Run a persistent session on ``data`` as its stdin (a pipe, read by its own thread)."""
    args = parse_args(argv)
    out = _Capture()
    err = io.StringIO()
    fuzz_home = home()

    async def main() -> int:
        session = await Session.open(args, WireWriter(cast(BinaryIO, out)), fuzz_home.project)
        read_fd, write_fd = os.pipe()
        feeder = threading.Thread(target=_feed, args=(write_fd, data), daemon=True)
        feeder.start()
        try:
            return await asyncio.wait_for(session.run(read_fd), TIMEOUT_S)
        except TimeoutError:
            raise Hang(f"session did not finish in {TIMEOUT_S} s") from None
        finally:
            feeder.join(TIMEOUT_S)
            os.close(read_fd)
            await session.aclose()

    with fuzz_home.active(), contextlib.redirect_stderr(err), production_recursion_limit():
        rc = asyncio.run(main())
    return Captured(bytes(out.buffer), err.getvalue(), rc)


def run_session_driven(
    lines: Sequence[bytes],
    answers: Sequence[bytes],
    plan: ToolPlan | None,
    argv: Sequence[str] = SESSION_ARGV,
) -> tuple[Captured, list[bytes]]:
    """Drive a session line by line on the event loop, answering its ``can_use_tool``
    requests with ``answers`` (``$RID`` replaced by the request id) in order; in tool mode
    when ``plan`` is given.  Returns what was written and every line handled, in order."""
    args = parse_args(argv)
    err = io.StringIO()
    fuzz_home = home()
    queue = list(answers)
    waiting = [0]
    holder: list[Session] = []
    fed: list[bytes] = []

    def deliver(line: bytes, answer: bool = False) -> None:
        if answer:
            waiting[0] -= 1
        fed.append(line)
        holder[0].handle_line(line)

    def on_frame(line: bytes) -> None:
        try:
            frame = parse_json(line)
        except ValueError:
            return
        if not (isinstance(frame, dict) and frame.get("type") == "control_request" and queue):
            return
        request_id = encode(str(frame.get("request_id")))[1:-1]
        answer = queue.pop(0).replace(b"$RID", request_id)
        loop = asyncio.get_running_loop()
        for piece in answer.split(b"\n"):
            waiting[0] += 1
            loop.call_soon(deliver, piece, True)

    out = _Capture(on_frame)

    async def main() -> int:
        session = await Session.open(args, WireWriter(cast(BinaryIO, out)), fuzz_home.project)
        _tool_mode(session.runtime.agent, plan)
        session.permission_timeout_s = 0.05
        holder.append(session)
        worker = asyncio.create_task(session.run_turns())
        try:
            async with asyncio.timeout(TIMEOUT_S):
                for raw in lines:
                    for piece in raw.split(b"\n"):  # as the stdin reader splits
                        deliver(piece)
                        await asyncio.sleep(0)
                while not _session_idle(session, waiting[0]):
                    await asyncio.sleep(0.001)
                session.input_closed = True
                session.perform(session.control.end_of_input())
                session.turns.put_nowait(None)
                await worker
        except TimeoutError:
            raise Hang(f"session did not finish in {TIMEOUT_S} s") from None
        finally:
            worker.cancel()
            await session.aclose()
        return 0

    with fuzz_home.active(), contextlib.redirect_stderr(err), production_recursion_limit():
        rc = asyncio.run(main())
    return Captured(bytes(out.buffer), err.getvalue(), rc), fed


def _session_idle(session: Session, waiting: int) -> bool:
    """No answer is still to be delivered, and no turn runs except one waiting for an answer
    that will not come (end of input denies it)."""
    if waiting:
        return False
    if any(not future.done() for future in session.waiting.values()):
        return True
    return session.turns.empty() and session.current is None


def strings_in(lines: Sequence[bytes]) -> list[str]:
    """Every string a client line could make the runtime show: string leaves, and ``str()``
    of ``message`` and ``error`` members (the texts of a denial)."""
    found: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                if key in ("message", "error") and not isinstance(item, str):
                    found.append(str(item))
                walk(item)

    for line in lines:
        for piece in line.split(b"\n"):
            try:
                walk(_loads_any(piece))
            except (ValueError, RecursionError):
                continue
    return found


def check_session(lines: Sequence[bytes], run: Captured, texts: Sequence[str] = ()) -> None:
    """The session invariants for the input ``lines`` (see the module docstring); ``texts``
    are the tool's outputs (tool results may also show texts the client sent)."""
    assert run.rc == 0, f"exit code {run.rc}"
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert_wire_clean()
    frames = output_frames(run.stdout)
    expect = expect_session(lines)
    results = [f for f in frames if isinstance(f, dict) and f.get("type") == "result"]
    responses = [f for f in frames if isinstance(f, dict) and f.get("type") == "control_response"]
    assert all(isinstance(f, dict) and isinstance(f.get("type"), str) for f in frames)
    assert len(results) == expect.results, (
        f"{len(results)} results for {expect.results} expected (rejected lines {expect.rejected})"
    )
    got_ids = Counter(str(f["response"].get("request_id")) for f in responses)
    assert got_ids == expect.control_ids, f"control_responses {got_ids} != {expect.control_ids}"
    named = [
        int(r["error"]["message"].split("line ", 1)[1].split(":", 1)[0])
        for r in results
        if r.get("is_error")
        and str(r.get("error", {}).get("message", "")).startswith(
            "Failed to parse stream-json line "
        )
    ]
    assert named == expect.rejected, f"error results name lines {named}, expected {expect.rejected}"
    for n in expect.noted:
        assert f"stdin line {n}:" in run.stderr, f"stderr does not name line {n}"
    texts = [*texts, *strings_in(lines)] if texts else []
    for frame in frames:
        if isinstance(frame, dict) and frame.get("type") == "user":
            for block in frame["message"]["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    check_tool_result_content(block.get("content"), texts)


# -- ACP ------------------------------------------------------------------------------------


def _valid_id(value: Any) -> bool:
    return value is None or (isinstance(value, str | int | float) and not isinstance(value, bool))


def _loads_any(line: bytes) -> Any:
    """JSON as JSON-RPC reads it: orjson, else strict UTF-8 and the standard library."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line.decode("utf-8"), parse_constant=_reject_constant)


PRODUCTION_RECURSION_LIMIT = 1000
"""CPython's default; hypothesis raises the limit while a test runs, the CLI does not."""
AMBIGUOUS_DEPTH = 700
"""Lines nested this deep that orjson refuses for another reason than depth are read by the
standard library, whose outcome depends on the depth of the caller's stack."""


@contextlib.contextmanager
def production_recursion_limit() -> Iterator[None]:
    """Run the block with the interpreter's default recursion limit, as the CLI does."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(PRODUCTION_RECURSION_LIMIT)
    try:
        yield
    finally:
        sys.setrecursionlimit(old)


def nesting_depth(line: bytes, at_least: int) -> bool:
    """Whether the JSON text ``line`` nests arrays and objects ``at_least`` levels deep
    (brackets inside strings do not count)."""
    if line.count(b"[") + line.count(b"{") < at_least:
        return False
    depth = 0
    in_string = escaped = False
    for byte in line:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth >= at_least:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


def _too_deep(exc: orjson.JSONDecodeError) -> bool:
    """Whether orjson refused a text for nesting over its 1,024 levels."""
    return "depth limit" in str(exc) or "recursion" in str(exc)


def acp_ambiguous(line: bytes) -> bool:
    """Whether the outcome of reading ``line`` depends on the stack depth (see
    :data:`AMBIGUOUS_DEPTH`); fuzzers leave such lines out."""
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        return not _too_deep(exc) and nesting_depth(line, AMBIGUOUS_DEPTH)
    return False


def expect_acp(line: bytes) -> tuple[str, Any]:
    """The documented classification of one line: ``("none", None)`` (blank, notification,
    response), ``("request", id)`` or ``("error", (id, code))``.

    A line orjson refuses as nested too deep (over 1,024 levels) is a parse error: the
    standard library's reader stops at the default recursion limit (1,000) first.
    """
    if not line.strip():
        return "none", None
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        if _too_deep(exc):
            return "error", (None, rpc.PARSE_ERROR)
    try:
        message = _loads_any(line)
    except (ValueError, RecursionError):
        return "error", (None, rpc.PARSE_ERROR)
    if not isinstance(message, dict):
        return "error", (None, rpc.INVALID_REQUEST)
    raw_id = message.get("id")
    valid = _valid_id(raw_id)
    if message.get("jsonrpc") != "2.0":
        return "error", (raw_id if valid else None, rpc.INVALID_REQUEST)
    if not valid:
        return "error", (None, rpc.INVALID_REQUEST)
    if "method" not in message:
        if "id" in message and ("result" in message or "error" in message):
            return "none", None
        return "error", (raw_id, rpc.INVALID_REQUEST)
    if not isinstance(message["method"], str):
        return "error", (raw_id, rpc.INVALID_REQUEST)
    if "id" not in message:
        return "none", None
    return "request", raw_id


def _id_key(value: Any) -> bytes:
    """An id as the wire writes it (so ``1e400`` and ``null`` compare as they are sent)."""
    return encode(value)


def run_acp_driven(
    lines: Sequence[bytes],
    answers: Sequence[bytes],
    plan: ToolPlan | None,
    argv: Sequence[str] = ACP_ARGV,
) -> tuple[Captured, list[bytes]]:
    """Drive an ACP server line by line on the event loop.

    ``$SID`` in a line becomes the id of the last session created, ``$CWD`` the project
    directory (JSON-escaped); ``session/request_permission`` requests are answered with
    ``answers`` in order (``$ID`` replaced by the request's id).  Returns what was written and
    the lines as fed (placeholders filled in), for :func:`check_acp`.
    """
    args = parse_args(argv)
    err = io.StringIO()
    fuzz_home = home()
    queue = list(answers)
    sessions: list[str] = []
    fed: list[bytes] = []
    waiting = [0]
    holder: list[AcpServer] = []
    cwd = encode(str(fuzz_home.project))[1:-1]

    def fill(line: bytes) -> bytes:
        if sessions:
            line = line.replace(b"$SID", sessions[-1].encode())
        return line.replace(b"$CWD", cwd)

    def deliver(line: bytes, answer: bool = False) -> None:
        if answer:
            waiting[0] -= 1
        fed.append(line)
        holder[0].handle_line(line)

    def on_frame(line: bytes) -> None:
        try:
            frame = parse_json(line)
        except ValueError:
            return
        if not isinstance(frame, dict):
            return
        result = frame.get("result")
        if isinstance(result, dict) and isinstance(result.get("sessionId"), str):
            sessions.append(result["sessionId"])
        if frame.get("method") == "session/request_permission" and queue:
            request = encode(frame.get("id"))
            answer = fill(queue.pop(0).replace(b'"$ID"', request).replace(b"$ID", request))
            loop = asyncio.get_running_loop()
            for piece in answer.split(b"\n"):
                waiting[0] += 1
                loop.call_soon(deliver, piece, True)

    out = _Capture(on_frame)

    async def build(ns: argparse.Namespace, cwd: Path, session_id: str, **kw: Any) -> Any:
        runtime = await open_acp_runtime(ns, cwd, session_id, **kw)
        _tool_mode(runtime.agent, plan)
        return runtime

    async def main() -> int:
        server = AcpServer(args, build, WireWriter(cast(BinaryIO, out)))
        holder.append(server)
        try:
            async with asyncio.timeout(TIMEOUT_S):
                for raw in lines:
                    for piece in raw.split(b"\n"):  # as the stdin reader splits
                        deliver(fill(piece))
                        for _ in range(3):
                            await asyncio.sleep(0)
                while not _acp_idle(server, waiting[0]):
                    await asyncio.sleep(0.001)
                await server.shutdown()
        except TimeoutError:
            raise Hang(f"ACP server did not finish in {TIMEOUT_S} s") from None
        return 0

    with fuzz_home.active(), contextlib.redirect_stderr(err), production_recursion_limit():
        rc = asyncio.run(main())
    return Captured(bytes(out.buffer), err.getvalue(), rc), fed


def _acp_idle(server: AcpServer, waiting: int) -> bool:
    """Every request answered, or waiting only for a permission answer that will not come."""
    if waiting:
        return False
    if any(not future.done() for future in server._waiting.values()):
        return True
    return not server._tasks


def check_acp(fed: Sequence[bytes], run: Captured, texts: Sequence[str] = ()) -> None:
    """The ACP invariants for the lines as fed (see the module docstring)."""
    assert run.rc == 0, f"exit code {run.rc}"
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert_wire_clean()
    frames = output_frames(run.stdout)
    expected: Counter[bytes] = Counter()
    expected_errors: Counter[tuple[bytes, int]] = Counter()
    for line in fed:
        for piece in line.split(b"\n"):
            kind, value = expect_acp(piece)
            if kind == "request":
                expected[_id_key(value)] += 1
            elif kind == "error":
                expected[_id_key(value[0])] += 1
                expected_errors[(_id_key(value[0]), value[1])] += 1
    responses = [f for f in frames if isinstance(f, dict) and "method" not in f]
    got = Counter(_id_key(f.get("id")) for f in responses)
    assert got == expected, f"responses by id {got} != expected {expected}"
    for frame in responses:
        assert frame.get("jsonrpc") == "2.0" and ("result" in frame) != ("error" in frame), frame
        if "error" in frame:
            code = frame["error"].get("code")
            assert code in DOCUMENTED_ACP_ERRORS, f"undocumented error {frame['error']}"
    got_errors = Counter(
        (_id_key(f.get("id")), f["error"]["code"])
        for f in responses
        if "error" in f and f["error"]["code"] in (-32700, -32600)
    )
    assert got_errors == expected_errors, f"parse/invalid errors {got_errors} != {expected_errors}"
    texts = [*texts, *strings_in(fed)] if texts else []
    for frame in frames:
        if isinstance(frame, dict) and frame.get("method") == "session/update":
            params = frame.get("params")
            assert isinstance(params, dict), frame
            check_acp_update(params.get("update"), texts)


__all__ = [
    "ACP_ARGV",
    "BUDGET",
    "SESSION_ARGV",
    "Captured",
    "FuzzModel",
    "FuzzTool",
    "Hang",
    "Home",
    "SessionExpect",
    "ToolPlan",
    "acp_ambiguous",
    "check_acp",
    "check_acp_update",
    "check_preview",
    "check_projected",
    "check_session",
    "check_tool_result_content",
    "expect_acp",
    "expect_session",
    "home",
    "input_lines",
    "output_frames",
    "parse_args",
    "parse_json",
    "positions_bytes",
    "production_recursion_limit",
    "run_acp_driven",
    "run_session_driven",
    "run_session_stdin",
    "strings_in",
    "utf16",
]
