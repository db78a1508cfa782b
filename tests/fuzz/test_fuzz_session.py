"""Fuzz the persistent stream-JSON session: its input reader and its control protocol.

Inputs are batches of lines (corpus seeds, their mutations, a grammar of the protocol's
messages, arbitrary bytes) fed to a real :class:`headwire.cli.run.session.Session` in this
process, through a pipe and its reader thread (``--model scripted:done``) or line by line with
the fuzz tool and generated ``can_use_tool`` answers; a few batches go to ``python -m
headwire`` itself.  The invariants are :func:`tests.fuzz.drivers.check_session`'s.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from headwire.protocol.session_control import prompt_text as _prompt_text
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
    Captured,
    ToolPlan,
    acp_ambiguous,
    check_session,
    input_lines,
    run_session_driven,
    run_session_stdin,
)

ROOT = Path(__file__).resolve().parents[2]
SUBTYPES = (
    "initialize",
    "interrupt",
    "set_model",
    "set_permission_mode",
    "supported_commands",
    "mcp_server_status",
    "mcp_status",
    "get_context_usage",
    "get_available_models",
    "get_usage_info",
    "can_use_tool",
    "hook_callback",
    "mcp_message",
    "",
)
MODES = (
    "default",
    "plan",
    "auto-edit",
    "autoEdit",
    "yolo",
    "acceptEdits",
    "bypassPermissions",
    "dontAsk",
    "auto",
    "nonsense",
)


def request_id(c: Chooser) -> Any:
    """A request id: usually a short string, sometimes anything."""
    return c.pick(("r1", "r2", "$RID", "")) if c.integer(0, 4) else interesting_value(c)


def control_request(c: Chooser) -> dict[str, Any]:
    """A client ``control_request`` of any subtype with plausible and odd fields."""
    request: dict[str, Any] = {"subtype": c.pick(SUBTYPES)}
    for _ in range(c.integer(0, 3)):
        key = c.pick(
            (
                "model",
                "mode",
                "timeout",
                "hooks",
                "sdkMcpServers",
                "mcpServers",
                "agents",
                "tool_name",
                "input",
            )
        )
        if key == "timeout":
            request[key] = {"canUseTool": c.pick((0, 1, 50, -5, 1.5, "10", None, 10**9))}
        elif key == "mode":
            request[key] = c.pick(MODES)
        else:
            request[key] = c.pick((random_text(c, 4), None, {"x": 1}, [1]))
    return {"type": "control_request", "request_id": request_id(c), "request": request}


def control_answer(c: Chooser) -> dict[str, Any]:
    """A client ``control_response`` (answer to ``can_use_tool``), usually to ``$RID``."""
    inner: dict[str, Any] = {}
    behavior = c.pick(("allow", "deny", "ask", None))
    if behavior is not None:
        inner["behavior"] = behavior
    if c.integer(0, 1):
        inner["updatedInput"] = c.pick(({"n": 1}, {}, None, [1], "x", nested(c)))
    if c.integer(0, 1):
        inner["message"] = c.pick((random_text(c, 4), None, 7, big_text(c), nested(c)))
    if c.integer(0, 3) == 0:
        inner["interrupt"] = c.pick((True, False, 1, "yes"))
    body: dict[str, Any] = {
        "subtype": c.pick(("success", "success", "error", "other")),
        "request_id": "$RID" if c.integer(0, 5) else request_id(c),
    }
    if c.integer(0, 5):
        body["response"] = inner
    else:
        body["error"] = c.pick(
            ("denied", {"message": random_text(c, 4)}, None, 5, nested(c), {"message": nested(c)})
        )
    return {"type": "control_response", "response": body}


def user_message(c: Chooser) -> dict[str, Any]:
    """A ``user`` line: string or block content, or something that is neither."""
    kind = c.integer(0, 5)
    content: Any
    if kind <= 1:
        content = c.pick(("hi", "", " \n", random_text(c)))
    elif kind == 2:
        content = [
            {"type": "text", "text": c.pick(("a", "", random_text(c)))}
            for _ in range(c.integer(0, 3))
        ]
    elif kind == 3:
        content = [c.pick(({"type": "image", "source": {}}, "plain", 5, None, nested(c)))]
    else:
        content = interesting_value(c)
    message: Any = {"role": "user", "content": content} if c.integer(0, 5) else interesting_value(c)
    return {"type": "user", "session_id": "", "message": message, "parent_tool_use_id": None}


def session_message(c: Chooser) -> dict[str, Any]:
    """One message of the client's side of the protocol."""
    kind = c.integer(0, 9)
    if kind <= 2:
        return user_message(c)
    if kind <= 5:
        return control_request(c)
    if kind <= 6:
        return control_answer(c)
    if kind == 7:
        cancel: dict[str, Any] = {"type": "control_cancel_request"}
        if c.integer(0, 1):
            cancel["request_id"] = request_id(c)
        return cancel
    return {
        "type": c.pick(("assistant", "system", "result", "stream_event", 5, None)),
        "request_id": request_id(c),
    }


def session_lines(c: Chooser, most: int = 8) -> list[bytes]:
    """A batch of input lines (a line may hold newlines of its own)."""
    pool = seeds("session")
    return [unambiguous(fuzz_line(c, pool, session_message)) for _ in range(c.integer(1, most))]


def tool_texts(c: Chooser) -> list[tuple[str | None, str | None]]:
    """The fuzz tool's outputs: ``(display, error)`` pairs, some far over the budget."""
    outputs: list[tuple[str | None, str | None]] = []
    for _ in range(c.integer(1, 3)):
        text = big_text(c) if c.integer(0, 1) else random_text(c)
        kind = c.integer(0, 3)
        outputs.append(
            (None, text)
            if kind == 0
            else (c.pick((None, " ", "")), None)
            if kind == 1
            else (text, None)
        )
    return outputs


# -- in-process -------------------------------------------------------------------------------


@fuzz_settings(60)
@given(from_chooser(session_lines), st.booleans())
def test_every_stdin_line_is_handled(lines: list[bytes], trailing_newline: bool) -> None:
    """Batches through stdin: each line answered as documented, nothing else breaks."""
    stdin = b"\n".join(lines) + (b"\n" if trailing_newline else b"")
    run = run_session_stdin(stdin)
    check_session(input_lines(stdin), run)


def tool_case(c: Chooser) -> tuple[list[bytes], list[bytes], ToolPlan]:
    """Input lines ending in a prompt, ``can_use_tool`` answers, and the tool's outputs."""
    lines = session_lines(c)
    if c.integer(0, 1):
        lines.insert(0, INITIALIZE)
    lines.append(b'{"type":"user","message":{"role":"user","content":"run the tool"}}')
    pool = seeds("session")
    answers = [
        unambiguous(
            fuzz_line(c, pool, control_answer)
            if c.integer(0, 3) == 0
            else dumps(c, control_answer(c))
        )
        for _ in range(c.integer(0, 4))
    ]
    return lines, answers, ToolPlan(tool_texts(c))


INITIALIZE = b'{"type":"control_request","request_id":"init","request":{"subtype":"initialize"}}'


def unambiguous(line: bytes) -> bytes:
    """``line`` without the pieces whose reading depends on the stack depth (an escaped lone
    surrogate nested some 700 to 1,024 levels deep: the standard library reads it or not)."""
    return b"\n".join(p for p in line.split(b"\n") if not acp_ambiguous(p))


@fuzz_settings(60)
@given(from_chooser(tool_case))
def test_control_protocol_and_tool_results(case: tuple[list[bytes], list[bytes], ToolPlan]) -> None:
    """The control protocol with the fuzz tool: generated ``can_use_tool`` answers, bounded
    tool results of generated texts."""
    lines, answers, plan = case
    run, fed = run_session_driven(lines, answers, plan)
    check_session(fed, run, plan.texts())


def prompt_value(c: Chooser) -> Any:
    """A ``message`` member of a ``user`` line, or any value."""
    return user_message(c)["message"] if c.integer(0, 1) else interesting_value(c)


@fuzz_settings(300)
@given(from_chooser(prompt_value))
def test_prompt_text_returns_text_or_none(value: Any) -> None:
    """``_prompt_text`` of any parsed value: a string or ``None``, never an exception."""
    text = _prompt_text(value)
    assert text is None or isinstance(text, str)


# -- regressions ------------------------------------------------------------------------------


def test_deeply_nested_prompt_block_is_not_a_crash() -> None:
    """Finding: a content block nested deeper than orjson writes (255) raised out of
    ``handle_line`` and ended the session with a traceback.  It was then a bad line; since the
    writers write any depth (as ``JSON.stringify`` does), it is a prompt."""
    deep = b"[" * 300 + b"]" * 300
    stdin = (
        b'{"type":"user","message":{"content":[' + deep + b"]}}\n"
        b'{"type":"user","message":{"content":"hi"}}\n'
    )
    run = run_session_stdin(stdin)
    check_session(input_lines(stdin), run)


def test_interrupt_right_after_a_prompt_still_answers_it() -> None:
    """A prompt interrupted before its turn starts still gets its (error) result."""
    lines = [
        b'{"type":"user","message":{"content":"hi"}}',
        b'{"type":"control_request","request_id":"i","request":{"subtype":"interrupt"}}',
    ]
    run, fed = run_session_driven(lines, [], None)
    check_session(fed, run)


# -- the real CLI -----------------------------------------------------------------------------


def run_cli(argv: list[str], stdin: bytes, tmp: Path) -> Captured:
    """``python -m headwire ARGV`` in a private home, stdin given, 120 s at most."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HEADWIRE_"))}
    env.update(
        HOME=str(tmp),
        HEADWIRE_HOME=str(tmp / ".headwire"),
        PYTHONPATH=os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
    )
    done = subprocess.run(
        [sys.executable, "-m", "headwire", *argv],
        input=stdin,
        cwd=tmp,
        env=env,
        capture_output=True,
        timeout=120,
        check=False,
    )
    return Captured(done.stdout, done.stderr.decode("utf-8", "replace"), done.returncode)


def cli_batch(c: Chooser) -> list[bytes]:
    """About 25 lines for one CLI process, without the lines whose outcome depends on the
    reader's stack depth (:func:`~tests.fuzz.drivers.acp_ambiguous`)."""
    return [
        b"\n".join(p for p in line.split(b"\n") if not acp_ambiguous(p))
        for _ in range(5)
        for line in session_lines(c)
    ]


@fuzz_settings(3, shrink=False)
@given(from_chooser(cli_batch))
def test_the_cli_handles_every_line(lines: list[bytes]) -> None:
    """A batch of fuzzed lines through ``python -m headwire`` (the whole process)."""
    stdin = b"\n".join(lines) + b"\n"
    with tempfile.TemporaryDirectory(prefix="headwire-fuzz-cli-") as tmp:
        run = run_cli(
            [
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--model",
                "scripted:done",
            ],
            stdin,
            Path(tmp),
        )
    check_session(input_lines(stdin), run)


def _deep(depth: int = 1000) -> bytes:
    return b"[" * depth + b"]" * depth


def test_deeply_nested_control_fields_are_bad_lines_not_a_crash() -> None:
    """Finding: ``str()`` of a control field nested ~1,000 deep (orjson reads 1,024 levels)
    overflowed the stack and ended the session with a traceback."""
    stdin = (
        b"\n".join(
            [
                b'{"type":"control_request","request_id":"m","request":{"subtype":"set_permission_mode",'
                b'"mode":' + _deep() + b"}}",
                b'{"type":"control_request","request_id":"s","request":{"subtype":'
                + _deep()
                + b"}}",
                b'{"type":"control_response","response":{"subtype":"success","request_id":'
                + _deep()
                + b"}}",
                b'{"type":"user","message":{"content":"hi"}}',
            ]
        )
        + b"\n"
    )
    run = run_session_stdin(stdin)
    check_session(input_lines(stdin), run)


def test_deeply_nested_denials_are_not_a_crash() -> None:
    """Finding: ``str()`` of a ``can_use_tool`` denial's ``message`` or ``error`` nested ~1,000
    deep overflowed the stack inside the turn (an "Internal error" result and a traceback)."""
    deep = _deep().decode()
    answers = [
        f'{{"type":"control_response","response":{{"subtype":"success","request_id":"$RID",'
        f'"response":{{"behavior":"deny","message":{deep}}}}}}}'.encode(),
        f'{{"type":"control_response","response":{{"subtype":"error","request_id":"$RID",'
        f'"error":{{"message":{deep}}}}}}}'.encode(),
    ]
    for answer in answers:
        lines = [INITIALIZE, b'{"type":"user","message":{"content":"go"}}']
        run, fed = run_session_driven(lines, [answer], ToolPlan([("shown", None)]))
        check_session(fed, run, ["shown"])
        assert b"Internal error" not in run.stdout
