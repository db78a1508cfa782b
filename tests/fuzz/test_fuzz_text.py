"""Fuzz the text rule at every boundary: names that are not UTF-8, lone surrogates on every
input channel, and the recording read back.

The rule (docs/reference.md, "Text at every boundary"): a lone surrogate is written as the escape
``\\udxxx`` and read back as the same surrogate; bytes that are not UTF-8 are refused with a
clear error on a client's channel, or read as U+FFFD from a server headwire drives.  Targets:

* file names of any bytes through ``glob``, ``list_directory``, ``grep_search`` and
  ``read_file``: every outcome is written by the wire encoder and the provider's body writer
  and read back equal, is recorded and read back equal, and every path ``glob`` lists names
  the file it found;
* model SSE bodies whose chunks hold any text (lone surrogates escaped or raw, invalid bytes,
  raw U+2028), through the real OpenAI client on an in-memory transport: text and tool
  arguments arrive as the chunks hold them, or the failure is a ``ModelError``;
* MCP stdio lines of any text: every line holding a JSON-RPC message becomes that message;
  a cut response that names its id answers its request; nothing raises;
* the recording: every record the recorder writes is read back equal, torn lines skipped;
* stdin and ACP prompts holding lone surrogates: each gets its answer, and the request it
  makes reaches the model's wire (the drivers' ``WireChecked`` model).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import httpx
from hypothesis import given
from mcp.shared.message import SessionMessage

from headwire.runtime.mcp.stdio import _parse
from headwire.runtime.models.base import ModelError, ModelRequest, TextDelta, ToolCall
from headwire.runtime.models.openai import OpenAIModel
from headwire.runtime.store.recording import Recorder, read_records
from headwire.runtime.tools.base import ToolContext, ToolOutcome
from headwire.runtime.tools.registry import builtin_tools
from headwire.wire import dumps, encode, loads
from tests.fuzz.common import (
    ATOMS,
    Chooser,
    from_chooser,
    fuzz_settings,
    nested,
    random_text,
    write_json,
)
from tests.fuzz.drivers import (
    ToolPlan,
    as_read,
    check_acp,
    check_session,
    home,
    input_lines,
    run_acp_driven,
    run_session_stdin,
)

LONE = ("\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00", "\udce9")
"""Lone surrogates; ``\\udce9`` is how Python names the byte 0xE9 of a file name."""


def any_text(c: Chooser, most: int = 10) -> str:
    """Adversarial text with a lone surrogate more often than not."""
    text = random_text(c, most)
    for _ in range(c.integer(0, 2)):
        at = c.integer(0, len(text))
        text = text[:at] + c.pick(LONE) + text[at:]
    return text


def json_text(c: Chooser, value: Any) -> bytes:
    """``value`` as a JSON line: all ASCII (every non-ASCII character escaped), as
    ``JSON.stringify`` writes it (raw UTF-8, lone surrogates as ``\\udxxx``), or raw with
    lone surrogates as the invalid bytes ``surrogatepass`` gives (a writer that does not
    escape them)."""
    style = c.integer(0, 2)
    if style == 0:
        return write_json(value, ascii_only=True, separators=(",", ":")).encode()
    if style == 1:
        return encode(value)
    return write_json(value, separators=(",", ":")).encode("utf-8", "surrogatepass")


def _bad_bytes_read(data: bytes) -> str:
    """How a server's bytes read (Node's decoder: U+FFFD for every invalid sequence)."""
    return data.decode("utf-8", "replace")


def _escaped_ok(text: str) -> bool:
    """Whether ``text`` survives being written raw: no lone surrogates in it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# -- file names that are not UTF-8 ---------------------------------------------------------------


def file_name(c: Chooser) -> bytes:
    """One file name: any bytes but ``/`` and NUL (Latin-1, raw surrogates, controls, ASCII)."""
    parts: list[bytes] = []
    for _ in range(c.integer(1, 4)):
        kind = c.integer(0, 3)
        if kind == 0:
            parts.append(bytes(c.integer(0x80, 0xFF) for _ in range(c.integer(1, 3))))
        elif kind == 1:
            parts.append(random_text(c, 3).encode("utf-8", "surrogatepass"))
        elif kind == 2:
            parts.append(c.pick((b"caf\xe9", b"\xed\xa0\x80", b"\xc3", b"a\nb", b"-x", b" ")))
        else:
            parts.append(c.pick((b"a", b".txt", b"py", b"*", b"[x]", b"?")))
    name = b"".join(parts).replace(b"/", b"_").replace(b"\0", b"_")[:200]
    return name if name not in (b"", b".", b"..") else b"x" + name


def file_case(c: Chooser) -> list[tuple[bytes, bytes]]:
    """A few files: ``(name, content)``; contents also hold bytes that are not UTF-8."""
    return [
        (
            file_name(c),
            c.pick(
                (
                    b"hello\n",
                    b"caf\xe9 au lait\n",
                    any_text(c).encode("utf-8", "surrogatepass") + b"\n",
                    b"\xff\xfe\x00binary",
                )
            ),
        )
        for _ in range(c.integer(1, 4))
    ]


class _Sink:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.count = 0

    def save(self, tool_name: str, data: bytes) -> Path:
        self.count += 1
        path = self.directory / f"{tool_name}_{self.count}.output"
        path.write_bytes(data)
        return path


def _run_tools(workspace: Path, names: list[str], ctx: ToolContext) -> list[ToolOutcome]:
    tools = {t.name: t for t in builtin_tools()}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("glob", {"pattern": "*"}),
        ("glob", {"pattern": "**/*"}),
        ("list_directory", {"path": str(workspace)}),
        ("grep_search", {"pattern": "."}),
        *(("read_file", {"file_path": str(workspace / n)}) for n in names),
    ]

    async def run_all() -> list[ToolOutcome]:
        out: list[ToolOutcome] = []
        for name, args in calls:
            problem = tools[name].validate(args)
            assert problem is None, (name, args, problem)
            out.append(await tools[name].run(args, ctx))
        return out

    return asyncio.run(run_all())


_PROVIDER = OpenAIModel("http://127.0.0.1:9/v1", None, "fuzz-model")


@fuzz_settings(60)
@given(from_chooser(file_case))
def test_file_names_of_any_bytes_cross_every_writer(files: list[tuple[bytes, bytes]]) -> None:
    """Every tool outcome over such names survives the wire encoder, the provider's body
    writer and the recording, and every path ``glob`` lists opens the file it found."""
    with tempfile.TemporaryDirectory(prefix="headwire-fuzz-names-") as tmp:
        root = Path(tmp)
        workspace, artifacts = root / "ws", root / "artifacts"
        workspace.mkdir()
        artifacts.mkdir()
        for name, content in files:
            (workspace / os.fsdecode(name)).write_bytes(content)
        names = sorted({os.fsdecode(name) for name, _ in files})
        ctx = ToolContext(cwd=workspace, artifacts=_Sink(artifacts))
        outcomes = _run_tools(workspace, names, ctx)
        recorder = Recorder(root / "home", workspace, "names")
        for outcome in outcomes:
            fields = [outcome.llm_text, outcome.display, outcome.error, outcome.extra]
            assert as_read(loads(encode(fields))) == as_read(fields)
            assert as_read(loads(dumps(fields))) == as_read(fields)
            message = {"role": "tool", "tool_call_id": "c", "content": outcome.llm_text}
            body = loads(_PROVIDER._prepare(ModelRequest("m", [message], [])).body)
            assert as_read(body["messages"]) == as_read([message])
            recorder.record("tool_result", message=message, display=outcome.display)
            for path in outcome.extra.get("paths", []) if outcome.error is None else []:
                assert os.path.lexists(path), path
        recorder.close()
        back = list(read_records(recorder.path))
        assert len(back) == len(outcomes)
        for record, outcome in zip(back, outcomes, strict=True):
            assert record["message"]["content"] == as_read(outcome.llm_text)
            assert record["display"] == as_read(outcome.display)
        listing = outcomes[2].llm_text
        assert all(n in listing for n in names), (names, listing)  # each name, as Python has it


# -- model SSE -------------------------------------------------------------------------------------


def sse_case(c: Chooser) -> tuple[list[bytes], list[tuple[str, Any]], list[int]]:
    """An SSE body's ``data:`` payloads, what each should yield, and where to cut the body
    into network chunks."""
    payloads: list[bytes] = []
    expected: list[tuple[str, Any]] = []
    role = {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
    payloads.append(json_text(c, role))
    for _ in range(c.integer(0, 4)):
        text = any_text(c) + c.pick(("", "\u2028", "\x85", "\x1c", "\u2029"))
        payload = json_text(c, {"choices": [{"index": 0, "delta": {"content": text}}]})
        payloads.append(payload)
        expected.append(("text", payload))
    if c.integer(0, 1):
        args = {"text": any_text(c)}
        raw = write_json(args, ascii_only=bool(c.integer(0, 1)), separators=(",", ":"))
        cut = c.integer(0, len(raw))
        head = {"index": 0, "id": "call_1", "function": {"name": "echo", "arguments": raw[:cut]}}
        tail = {"index": 0, "function": {"arguments": raw[cut:]}}
        for delta in (head, tail):
            payloads.append(
                json_text(c, {"choices": [{"index": 0, "delta": {"tool_calls": [delta]}}]})
            )
        expected.append(("args", args))
    finish = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
    payloads.append(json_text(c, finish))
    body_length = sum(len(p) + 8 for p in payloads) + 14
    cuts = sorted(c.integer(0, body_length) for _ in range(c.integer(0, 5)))
    return payloads, expected, cuts


def _payload_read(payload: bytes) -> Any:
    """A payload as the text rule reads a server's bytes: bad bytes as U+FFFD, escapes kept."""
    return json.loads(_bad_bytes_read(payload))


def _stream(body: bytes, cuts: list[int]) -> list[Any]:
    """Run the real client over ``body`` sent in chunks cut at ``cuts``."""
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]

    async def chunks() -> Any:
        for piece in pieces:
            yield piece

    async def main() -> list[Any]:
        def handler(request: httpx.Request) -> httpx.Response:
            return httpx.Response(
                200, headers={"content-type": "text/event-stream"}, content=chunks()
            )

        model = OpenAIModel("http://fuzz.invalid/v1", None, "m", max_retries=0)
        model._client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        model._client_loop = asyncio.get_running_loop()
        events: list[Any] = []
        try:
            async for event in model.stream(ModelRequest("m", [], [])):
                events.append(event)
        except ModelError as exc:
            events.append(exc)
        finally:
            await model.aclose()
        return events

    return asyncio.run(main())


@fuzz_settings(150)
@given(from_chooser(sse_case))
def test_sse_chunks_of_any_text_arrive_as_sent(
    case: tuple[list[bytes], list[tuple[str, Any]], list[int]],
) -> None:
    """Text deltas and tool arguments arrive as the chunks hold them (lone surrogates kept,
    invalid bytes as U+FFFD, raw line separators inside strings), whatever the chunking."""
    payloads, expected, cuts = case
    body = b"".join(b"data: " + p + b"\n\n" for p in payloads) + b"data: [DONE]\n\n"
    events = _stream(body, cuts)
    failures = [e for e in events if isinstance(e, Exception)]
    assert not failures, failures
    texts = "".join(e.text for e in events if isinstance(e, TextDelta))
    want = "".join(
        _payload_read(p)["choices"][0]["delta"]["content"] for k, p in expected if k == "text"
    )
    assert texts == want
    calls = [e for e in events if isinstance(e, ToolCall)]
    for kind, value in expected:
        if kind == "args":
            (call,) = calls
            assert as_read(call.args) == as_read(value) or not _escaped_ok(value["text"])


# -- MCP stdio lines -------------------------------------------------------------------------------


def mcp_case(c: Chooser) -> tuple[bytes, list[str] | None, Any]:
    """A server line, the texts it carries as read (``None``: not a complete message), and
    the id of a cut response."""
    msg_id: Any = c.pick((1, 7, "r-1", "x\u2028y", 0))
    texts = [any_text(c) for _ in range(c.integer(1, 3))]
    result = {"content": [{"type": "text", "text": t} for t in texts]}
    line = json_text(c, {"jsonrpc": "2.0", "id": msg_id, "result": result})
    kind = c.integer(0, 3)
    if kind == 0:  # a byte that is not UTF-8 inside the first text
        at = line.find(b'"text":"') + 8
        line = line[:at] + c.pick((b"\xe9", b"\xff", b"\xed\xa0\x80", b"\xc3")) + line[at:]
    if kind == 1:  # cut before its end
        return line[: c.integer(0, len(line) - 1)], None, msg_id
    read = json.loads(_bad_bytes_read(line))
    return line, [block["text"] for block in read["result"]["content"]], msg_id


@fuzz_settings(300)
@given(from_chooser(mcp_case))
def test_mcp_lines_of_any_text_are_read_as_node_reads_them(
    case: tuple[bytes, list[str] | None, Any],
) -> None:
    """A complete response becomes that response with its texts as read; a cut response that
    still names its id answers its request with an error; nothing raises."""
    line, texts, msg_id = case
    parsed = _parse(line)
    if texts is not None:
        assert isinstance(parsed, SessionMessage), parsed
        content = parsed.message.result["content"]  # type: ignore[union-attr]
        assert [block["text"] for block in content] == texts
        assert parsed.message.id == msg_id  # type: ignore[union-attr]
    elif isinstance(parsed, SessionMessage):
        message = parsed.message
        assert getattr(message, "id", None) == msg_id, message


# -- the recording ---------------------------------------------------------------------------------


def record_case(c: Chooser) -> list[Any]:
    """Records to write: any JSON values whose strings hold lone surrogates; ``None`` is a
    crash that tore the line being written."""
    out: list[Any] = []
    for _ in range(c.integer(1, 6)):
        if not c.integer(0, 5):
            out.append(None)
            continue
        out.append({"text": any_text(c), "value": record_value(c), "key\ud800": c.pick(ATOMS)})
    return out


NUMBERS = (0, -1, 2**53, 2**53 + 1, -(2**63), 2**64, 10**400, 0.1, -0.0, 1e21, 1e-7, 5e-324)
SPECIAL = (float("nan"), float("inf"), True, False, None)


def record_value(c: Chooser, depth: int = 0) -> Any:
    """A JSON-like value: texts with lone surrogates, odd numbers, NaN, nesting."""
    kind = c.integer(0, 5 if depth < 3 else 2)
    if kind == 0:
        return any_text(c)
    if kind == 1:
        return c.pick(NUMBERS)
    if kind == 2:
        return c.pick(SPECIAL)
    if kind == 3:
        return [record_value(c, depth + 1) for _ in range(c.integer(0, 3))]
    if kind == 4:
        keys = ("a", "b", "0", "1", "\ud800", "\udc00k", "caf\udce9")  # distinct once read
        return {c.pick(keys): record_value(c, depth + 1) for _ in range(c.integer(0, 3))}
    return nested(c)


_RECORDINGS = itertools.count()


@fuzz_settings(80)
@given(from_chooser(record_case))
def test_every_record_written_is_read_back(records: list[Any]) -> None:
    """Invariant: each record ``Recorder.record`` wrote is read back by ``read_records``, equal
    to what was written (any text, any depth), in order; a line torn by a crash is skipped,
    the next one is read."""
    fuzz_home = home()
    session_id = f"rec-{os.getpid()}-{next(_RECORDINGS)}"
    recorder = Recorder(fuzz_home.home, fuzz_home.project, session_id)
    try:
        written: list[Any] = []
        for record in records:
            if record is None:
                recorder.close()
                recorder.path.parent.mkdir(parents=True, exist_ok=True)
                with recorder.path.open("ab") as f:
                    f.write(b'{"type":"user","torn":"\\ud8')  # a crash mid-line
                continue
            recorder.record("user", **record)
            assert recorder.failed is None, recorder.failed  # any text, any depth is written
            written.append(record)
        recorder.close()
        back = list(read_records(recorder.path)) if recorder.path.exists() else []
    finally:
        recorder.close()
        recorder.path.unlink(missing_ok=True)
    assert len(back) == len(written)
    for got, want in zip(back, written, strict=True):
        for key, value in want.items():  # compared as written: any depth, NaN as null
            assert encode(got[key]) == encode(value)


# -- prompts holding lone surrogates on stdin and ACP ----------------------------------------------


def surrogate_prompts(c: Chooser) -> list[bytes]:
    """``user`` lines and ``session/prompt`` texts holding lone surrogates, escaped."""
    return [
        json_text(
            c,
            {
                "type": "user",
                "session_id": any_text(c, 2),
                "message": {"role": "user", "content": any_text(c) + "x"},
                "parent_tool_use_id": None,
            },
        )
        for _ in range(c.integer(1, 4))
    ]


@fuzz_settings(40)
@given(from_chooser(surrogate_prompts))
def test_stdin_prompts_with_lone_surrogates_are_answered(lines: list[bytes]) -> None:
    """Each escaped prompt gets its result and its request reaches the model's wire; a prompt
    written with raw surrogate bytes (not UTF-8) is one bad line with a clear error."""
    stdin = b"\n".join(lines) + b"\n"
    run = run_session_stdin(stdin)
    check_session(input_lines(stdin), run)


def acp_prompts(c: Chooser) -> tuple[list[bytes], list[bytes], ToolPlan | None]:
    """``initialize``, ``session/new``, then prompts whose texts hold lone surrogates."""
    lines = [
        b'{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}',
        b'{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":"$CWD","mcpServers":[]}}',
    ]
    for n in range(c.integer(1, 3)):
        prompt = [{"type": "text", "text": any_text(c) + "x"}]
        params = {"sessionId": "$SID", "prompt": prompt}
        line = json_text(
            c, {"jsonrpc": "2.0", "id": n, "method": "session/prompt", "params": params}
        )
        lines.append(line)
    plan = ToolPlan([(any_text(c), None)]) if c.integer(0, 1) else None
    return lines, [], plan


@fuzz_settings(30)
@given(from_chooser(acp_prompts))
def test_acp_prompts_with_lone_surrogates_are_answered(
    case: tuple[list[bytes], list[bytes], ToolPlan | None],
) -> None:
    """Each prompt gets one response (or, not UTF-8, one -32700), and every model request it
    made reached the wire."""
    lines, answers, plan = case
    run, fed = run_acp_driven(lines, answers, plan)
    check_acp(fed, run, plan.texts() if plan is not None else ())
