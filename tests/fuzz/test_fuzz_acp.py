"""Fuzz the ACP agent: the JSON-RPC line reader and the server's dispatch.

Inputs are batches of lines (corpus seeds from the unit tests and upstream's client, their
mutations, a grammar of ACP requests, notifications and responses, arbitrary bytes) fed to a
real :class:`headwire.acp.server.AcpServer` in this process, line by line on its event loop;
``$SID`` and ``$CWD`` are filled in with a live session and the project directory, so the
methods get past their parameter checks.  In tool mode every prompt calls the fuzz tool, whose
``session/request_permission`` requests get generated answers and whose generated outputs must
come out projected.  A few batches go to ``python -m headwire --acp`` itself.  Invariants:
:func:`tests.fuzz.drivers.check_acp`.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given

from headwire.protocol import jsonrpc as rpc
from headwire.wire import encode
from tests.fuzz.common import (
    Chooser,
    big_text,
    dumps,
    from_chooser,
    fuzz_line,
    fuzz_settings,
    interesting_value,
    nested,
    random_text,
    seeds,
)
from tests.fuzz.drivers import (
    ToolPlan,
    acp_ambiguous,
    check_acp,
    expect_acp,
    output_frames,
    production_recursion_limit,
    run_acp_driven,
)
from tests.fuzz.test_fuzz_session import run_cli, tool_texts

METHODS = (
    "initialize",
    "session/new",
    "session/load",
    "session/prompt",
    "session/set_mode",
    "session/cancel",
    "session/unknown",
    "authenticate",
    "",
)


def msg_id(c: Chooser) -> Any:
    """A request id: small integers and strings mostly, anything sometimes."""
    return (
        c.pick((1, 2, 3, "a", "b", 0, -1, 1.5, 2**53 + 1, None))
        if c.integer(0, 5)
        else (interesting_value(c))
    )


def session_id(c: Chooser) -> Any:
    """``$SID`` (the live session) mostly, else odd ids (long, traversing, not strings)."""
    return (
        "$SID"
        if c.integer(0, 3)
        else c.pick(("nope", "../../x", "a" * 300, "", 5, None, "\x00", random_text(c)))
    )


def cwd(c: Chooser) -> Any:
    """``$CWD`` (the project) mostly, else odd paths."""
    return (
        "$CWD"
        if c.integer(0, 3)
        else c.pick(("/", "relative", "", "/nonexistent/x", "/" + "a" * 5000, "/tmp\x00x", 7, None))
    )


def prompt_blocks(c: Chooser) -> Any:
    """``session/prompt``'s ``prompt``: content blocks, valid or not."""
    if not c.integer(0, 7):
        return interesting_value(c)
    blocks: list[Any] = []
    for _ in range(c.integer(0, 3)):
        kind = c.integer(0, 5)
        if kind <= 1:
            blocks.append({"type": "text", "text": c.pick(("hi", "", random_text(c), big_text(c)))})
        elif kind == 2:
            blocks.append(
                {"type": "resource_link", "uri": c.pick(("file:///x", 5, "")), "name": "x"}
            )
        elif kind == 3:
            blocks.append(
                {
                    "type": "resource",
                    "resource": c.pick(
                        ({"uri": "file:///a", "text": "t"}, {"uri": 1, "blob": "AA=="}, {})
                    ),
                }
            )
        elif kind == 4:
            blocks.append({"type": c.pick(("image", "audio", 5, None)), "data": ""})
        else:
            blocks.append(c.pick((5, None, "text", nested(c))))
    return blocks


def params(c: Chooser, method: str) -> Any:
    """Plausible (and odd) ``params`` for ``method``."""
    if not c.integer(0, 9):
        return interesting_value(c)
    if method == "initialize":
        return {
            "protocolVersion": c.pick((1, 1, 2, "1", None, 1.5, True, 2**64)),
            "clientCapabilities": c.pick(({}, {"fs": {"readTextFile": True}}, None)),
        }
    if method in ("session/new", "session/load"):
        p: dict[str, Any] = {
            "cwd": cwd(c),
            "mcpServers": c.pick(
                ([], [], [{"name": "x", "command": "true"}], "x", [{"noname": 1}], [5])
            ),
        }
        if method == "session/load":
            p["sessionId"] = session_id(c)
        return p
    if method == "session/prompt":
        return {"sessionId": session_id(c), "prompt": prompt_blocks(c)}
    if method == "session/set_mode":
        return {
            "sessionId": session_id(c),
            "modeId": c.pick(("default", "plan", "auto-edit", "yolo", "nope", 5, None)),
        }
    return {"sessionId": session_id(c)}


def acp_message(c: Chooser) -> Any:
    """One client message: a request, a notification, a stray response, or a broken one."""
    kind = c.integer(0, 9)
    if kind <= 5:
        method = c.pick(METHODS)
        return {"jsonrpc": "2.0", "id": msg_id(c), "method": method, "params": params(c, method)}
    if kind <= 7:
        method = c.pick(("session/cancel", "session/cancel", "initialized", "x"))
        return {"jsonrpc": "2.0", "method": method, "params": params(c, method)}
    if kind == 8:
        return {
            "jsonrpc": "2.0",
            "id": c.pick((0, 1, 7, "x")),
            "result": c.pick((None, {}, {"outcome": {"outcome": "cancelled"}})),
        }
    return {
        "jsonrpc": c.pick(("1.0", 2, None, "2.0")),
        "id": msg_id(c),
        "method": c.pick((5, None, "initialize", ["x"])),
    }


def permission_answer(c: Chooser) -> bytes:
    """An answer to ``session/request_permission`` (``$ID`` is the request's id)."""
    outcome: Any = c.pick(
        (
            {"outcome": "selected", "optionId": "proceed_once"},
            {"outcome": "selected", "optionId": "proceed_always"},
            {"outcome": "selected", "optionId": "cancel"},
            {"outcome": "selected", "optionId": c.pick(("x", 5, None))},
            {"outcome": "cancelled"},
            None,
            "selected",
            {},
        )
    )
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": "$ID"}
    if c.integer(0, 5):
        body["result"] = {"outcome": outcome} if c.integer(0, 5) else interesting_value(c)
    else:
        body["error"] = c.pick(
            (
                {"code": -32000, "message": "no"},
                "broken",
                None,
                5,
                nested(c),
                {"code": c.pick((1, "x", None)), "message": nested(c)},
            )
        )
    return dumps(c, body)


def unambiguous(line: bytes) -> bytes:
    """``line`` without the pieces whose reading depends on the stack depth."""
    return b"\n".join(p for p in line.split(b"\n") if not acp_ambiguous(p))


INIT = b'{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":1}}'
NEW = b'{"jsonrpc":"2.0","id":"new","method":"session/new","params":{"cwd":"$CWD","mcpServers":[]}}'


def acp_lines(c: Chooser, most: int = 8) -> list[bytes]:
    """A batch of lines, usually opened by ``initialize`` and ``session/new``."""
    pool = seeds("acp")
    lines = [unambiguous(fuzz_line(c, pool, acp_message)) for _ in range(c.integer(1, most))]
    if c.integer(0, 3):
        lines[:0] = [INIT, NEW]
    return lines


def acp_case(c: Chooser) -> tuple[list[bytes], list[bytes], ToolPlan | None]:
    """Lines, permission answers, and the fuzz tool's outputs (``None``: scripted model)."""
    lines = acp_lines(c)
    if not c.integer(0, 1):
        return lines, [], None
    lines.append(
        b'{"jsonrpc":"2.0","id":"p","method":"session/prompt",'
        b'"params":{"sessionId":"$SID","prompt":[{"type":"text","text":"go"}]}}'
    )
    pool = seeds("acp")
    answers = [
        unambiguous(fuzz_line(c, pool) if not c.integer(0, 4) else permission_answer(c))
        for _ in range(c.integer(0, 3))
    ]
    return lines, answers, ToolPlan(tool_texts(c))


@fuzz_settings(80)
@given(from_chooser(acp_case))
def test_every_acp_line_is_answered(case: tuple[list[bytes], list[bytes], ToolPlan | None]) -> None:
    """Each request one response, each unusable line one documented error, updates bounded."""
    lines, answers, plan = case
    run, fed = run_acp_driven(lines, answers, plan)
    check_acp(fed, run, plan.texts() if plan is not None else ())


@fuzz_settings(400)
@given(from_chooser(lambda c: unambiguous(fuzz_line(c, seeds("acp"), acp_message))))
def test_parse_message_classifies_every_line(line: bytes) -> None:
    """``parse_message`` never raises and agrees with the documented classification."""
    with production_recursion_limit():
        message = rpc.parse_message(line)
    kind, value = expect_acp(line)
    if kind == "error":
        assert isinstance(message, rpc.BadMessage)
        assert (encode(message.id), message.code) == (encode(value[0]), value[1])
    elif kind == "request":
        assert isinstance(message, rpc.Request) and encode(message.id) == encode(value)
    else:
        assert message is None or isinstance(message, rpc.Notification | rpc.Response)


# -- regressions ------------------------------------------------------------------------------


def test_deep_nesting_is_a_parse_error_not_a_crash() -> None:
    """Finding: a line nested past the recursion limit (after orjson refused it) raised
    ``RecursionError`` out of ``parse_message`` and killed the server."""
    for line in (
        b"[" * 100_000,
        b'{"a":' * 5000 + b"1" + b"}" * 5000,
        b"[" * 2000 + b'"\\ud800"' + b"]" * 2000,
    ):
        message = rpc.parse_message(line)
        assert isinstance(message, rpc.BadMessage) and message.code == rpc.PARSE_ERROR
    run, fed = run_acp_driven([b"[" * 100_000, INIT], [], None)
    check_acp(fed, run)


def test_overlong_session_id_and_cwd_are_invalid_params() -> None:
    """A ``sessionId`` or ``cwd`` too long for the file system is -32602, not -32603."""
    lines = [
        INIT,
        NEW,
        b'{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"'
        + b"a" * 300
        + b'","cwd":"$CWD","mcpServers":[]}}',
        b'{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/'
        + b"a/" * 3000
        + b'","mcpServers":[]}}',
    ]
    run, fed = run_acp_driven(lines, [], None)
    check_acp(fed, run)


# -- the real CLI -----------------------------------------------------------------------------


def no_mcp_servers(line: bytes) -> bytes:
    """``line`` with any ``mcpServers`` of a request emptied: the CLI would start them."""
    message = rpc.parse_message(line)
    if not isinstance(message, rpc.Request | rpc.Notification) or not isinstance(
        message.params, dict
    ):
        return line
    if message.params.get("mcpServers") in (None, []):
        return line
    value = json.loads(line.decode("utf-8", "surrogatepass"))
    value["params"]["mcpServers"] = []
    return encode(value)


def cli_batch(c: Chooser) -> list[bytes]:
    """About 25 lines for one ``--acp`` process."""
    return [line for _ in range(4) for line in acp_lines(c)]


@fuzz_settings(3, shrink=False)
@given(from_chooser(cli_batch))
def test_the_acp_cli_answers_every_line(lines: list[bytes]) -> None:
    """A batch through ``python -m headwire --acp``: exit 0, one answer per request."""
    with tempfile.TemporaryDirectory(prefix="headwire-fuzz-acp-") as tmp:
        project = encode(tmp)[1:-1]
        pieces = [
            no_mcp_servers(p.replace(b"$CWD", project)) for line in lines for p in line.split(b"\n")
        ]
        run = run_cli(["--acp", "--model", "scripted:done"], b"\n".join(pieces) + b"\n", Path(tmp))
    assert all(isinstance(f, dict) for f in output_frames(run.stdout))
    check_acp(pieces, run)


def test_deeply_nested_cancel_session_id_is_not_a_crash() -> None:
    """Finding: ``session/cancel`` with a ``sessionId`` nested ~1,000 deep overflowed the stack
    in ``repr()`` while noting the unknown session, and the server died."""
    deep = b"[" * 1000 + b"]" * 1000
    lines = [
        b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":' + deep + b"}}",
        INIT,
    ]
    run, fed = run_acp_driven(lines, [], None)
    check_acp(fed, run)


def test_deeply_nested_error_answers_are_not_a_crash() -> None:
    """Finding: ``str()`` of an answer's ``error`` (or ``error.message``) nested ~1,000 deep
    overflowed the stack: in ``parse_message`` (the server died) and in the permission request
    (the prompt failed with -32603 and a traceback)."""
    deep = b"[" * 1000 + b"]" * 1000
    assert isinstance(
        rpc.parse_message(b'{"jsonrpc":"2.0","id":7,"error":' + deep + b"}"), rpc.Response
    )
    prompt = (
        b'{"jsonrpc":"2.0","id":"p","method":"session/prompt",'
        b'"params":{"sessionId":"$SID","prompt":[{"type":"text","text":"go"}]}}'
    )
    for answer in (
        b'{"jsonrpc":"2.0","id":"$ID","error":' + deep + b"}",
        b'{"jsonrpc":"2.0","id":"$ID","error":{"code":1,"message":' + deep + b"}}",
    ):
        run, fed = run_acp_driven([INIT, NEW, prompt], [answer], ToolPlan([("shown", None)]))
        check_acp(fed, run, ["shown"])
        assert b'"stopReason":"end_turn"' in run.stdout
