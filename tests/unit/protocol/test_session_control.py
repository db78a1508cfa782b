"""The session control protocol as a state machine: its table, bad lines, pending requests.

Fed byte-at-a-time through the line splitter and as whole lines, the machine decides the same
actions (hypothesis).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.errors import LocalProtocolError
from headwire.protocol import session_control as sc
from headwire.protocol.lines import LineSplitter


def line(message: Any) -> bytes:
    return json.dumps(message).encode()


def user(text: str) -> bytes:
    return line({"type": "user", "message": {"role": "user", "content": text}})


def control(request_id: str, subtype: str, **fields: Any) -> bytes:
    return line(
        {
            "type": "control_request",
            "request_id": request_id,
            "request": {"subtype": subtype, **fields},
        }
    )


def test_initialize_selects_sdk_mode() -> None:
    m = sc.SessionControl("s")
    (action,) = m.receive_line(control("i", "initialize"))
    assert action == sc.Control("i", "initialize", {"subtype": "initialize"})
    assert m.mode is sc.Mode.SDK
    assert m.receive_line(user("hi")) == [sc.QueuePrompt("hi")]
    assert m.mode is sc.Mode.SDK


def test_a_user_message_selects_direct_mode_which_refuses_control() -> None:
    m = sc.SessionControl("s")
    assert m.receive_line(user("hi")) == [sc.QueuePrompt("hi")]
    assert m.mode is sc.Mode.DIRECT
    warn, send = m.receive_line(control("c", "set_model", model="x"))
    assert isinstance(warn, sc.Warn) and isinstance(send, sc.Send)
    assert send.message["response"]["subtype"] == "error"
    interrupt, answer = m.receive_line(control("i", "interrupt"))
    assert interrupt == sc.Interrupt()
    assert answer.message["response"]["response"] == {"subtype": "interrupt"}  # type: ignore[union-attr]


def test_every_table_row_is_reachable() -> None:
    for (state, kind), (after, what) in sc.TRANSITIONS.items():
        m = sc.SessionControl("s")
        m.mode = state
        raw = {
            sc.Input.INITIALIZE: control("r", "initialize"),
            sc.Input.INTERRUPT: control("r", "interrupt"),
            sc.Input.CONTROL: control("r", "get_context_usage"),
            sc.Input.USER: user("x"),
        }[kind]
        actions = m.receive_line(raw)
        assert m.mode is after
        kinds = {type(a) for a in actions}
        expected = {
            "queue": {sc.QueuePrompt},
            "refuse": {sc.Warn, sc.Send},
            "answer": {sc.Control} if kind is not sc.Input.INTERRUPT else {sc.Interrupt, sc.Send},
        }[what]
        assert kinds == expected, (state, kind)


@pytest.mark.parametrize(
    ("raw", "rejected"),
    [
        (b"not json", True),
        (b"[1]", True),
        (b'{"no":"type"}', True),
        (b'{"request_id":"r"}', False),  # answered with an error control_response instead
        (line({"type": "control_request", "request_id": 5, "request": {}}), True),
        (line({"type": "user", "message": {"content": 5}}), True),
    ],
)
def test_bad_lines_keep_their_place(raw: bytes, rejected: bool) -> None:
    m = sc.SessionControl("s")
    actions = m.receive_line(raw)
    assert isinstance(actions[0], sc.Warn) and "stdin line 1" in actions[0].text
    assert isinstance(actions[1], sc.QueueRejection if rejected else sc.Send)


def test_pending_requests_resolve_abort_and_give_up() -> None:
    m = sc.SessionControl("s")
    m.receive_line(control("i", "initialize"))
    send = m.request_permission("p1", {"tool_name": "t"})
    assert send.message["request"]["subtype"] == "can_use_tool" and m.pending == {"p1"}
    answer = line(
        {"type": "control_response", "response": {"subtype": "success", "request_id": "p1"}}
    )
    (resolved,) = m.receive_line(answer)
    assert resolved == sc.Resolve("p1", {"subtype": "success", "request_id": "p1"})
    assert m.receive_line(answer)[0].__class__ is sc.Warn  # no longer pending
    m.request_permission("p2", {})
    m.request_permission("p3", {})
    assert m.receive_line(line({"type": "control_cancel_request", "request_id": "p2"})) == [
        sc.Abort("p2", "was cancelled by the client")
    ]
    cancel = m.give_up("p3")
    assert cancel is not None and cancel.message == {
        "type": "control_cancel_request",
        "request_id": "p3",
    }
    assert m.give_up("p3") is None
    m.request_permission("p4", {})
    assert m.end_of_input() == [sc.Abort(None, "got no answer: input closed")]
    assert m.closed and m.mode is sc.Mode.SDK  # the mode stays: asks after EOF know it
    with pytest.raises(LocalProtocolError):
        m.receive_line(user("late"))


def test_permission_requests_need_sdk_mode() -> None:
    m = sc.SessionControl("s")
    m.receive_line(user("x"))
    with pytest.raises(LocalProtocolError):
        m.request_permission("p", {})


LINES = st.lists(
    st.sampled_from(
        [
            user("hello"),
            user(""),
            control("a", "initialize"),
            control("b", "interrupt"),
            control("c", "set_model", model="m"),
            control("d", "nope"),
            b"garbage",
            b"",
            b'{"type":"control_response","response":{"request_id":"zz"}}',
            b'{"type":"control_cancel_request"}',
            b'{"type":"other"}',
        ]
    ),
    max_size=12,
)


@given(LINES)
def test_byte_at_a_time_equals_whole_lines(lines: list[bytes]) -> None:
    whole = sc.SessionControl("s")
    expected = [a for raw in lines for a in whole.receive_line(raw)]
    splitter = LineSplitter()
    fed = sc.SessionControl("s")
    got: list[sc.Action] = []
    data = b"".join(raw + b"\n" for raw in lines)
    for i in range(len(data)):
        for raw in splitter.feed(data[i : i + 1]):
            got += fed.receive_line(raw)
    assert got == expected and fed.mode is whole.mode and fed.lineno == whole.lineno == len(lines)
