"""The Dual Output protocol: session_start first, session_end once, strict confirmations."""

from __future__ import annotations

import json
from itertools import count
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.errors import LocalProtocolError
from headwire.protocol import dual_output as dp


def new() -> dp.DualOutputProtocol:
    ids = count()
    return dp.DualOutputProtocol("s", lambda: f"u{next(ids)}")


def frames(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(x) for x in data.splitlines()]


def test_start_events_and_end_once() -> None:
    p = new()
    (start,) = frames(p.start("/w", "1.0"))
    assert start["subtype"] == "session_start" and start["data"]["protocol_version"] == 2
    assert frames(p.event({"type": "result"})) == [{"type": "result"}]
    (end,) = frames(p.end())
    assert end["subtype"] == "session_end"
    assert p.end() == b""
    with pytest.raises(LocalProtocolError):
        p.event({"type": "result"})


@pytest.mark.parametrize("allowed", ["false", "true", 1, 0, None, [True]])
def test_a_confirmation_must_be_a_json_boolean(allowed: Any) -> None:
    p = new()
    p.permission_request("r1", "write_file", "c1", {})
    outcome = p.receive_command(
        {"type": "confirmation_response", "request_id": "r1", "allowed": allowed}
    )
    assert isinstance(outcome, dp.Confirm) and outcome.allowed is False  # never a yes
    assert outcome.reply is not None
    assert frames(outcome.reply)[0]["response"]["subtype"] == "error"
    assert "r1" not in p.pending  # settled: a run never waits on a malformed answer


@pytest.mark.parametrize("allowed", [True, False])
def test_a_boolean_confirmation_settles_the_request(allowed: bool) -> None:
    p = new()
    p.permission_request("r1", "write_file", "c1", {})
    command = {"type": "confirmation_response", "request_id": "r1", "allowed": allowed}
    assert p.receive_command(command) == dp.Confirm("r1", allowed)
    unknown = p.receive_command(command)
    assert isinstance(unknown, dp.Reply)


def test_submit_and_unknown_commands() -> None:
    p = new()
    assert p.receive_command({"type": "submit", "text": "go"}) == dp.Submit("go")
    assert isinstance(p.receive_command({"type": "submit", "text": " "}), dp.Ignore)
    assert isinstance(p.receive_command({"type": "other"}), dp.Ignore)
    assert isinstance(p.receive_command([1]), dp.Ignore)


@given(st.lists(st.sampled_from(["event", "request", "answer", "bad"]), max_size=20))
def test_session_end_is_always_last_and_once(steps: list[str]) -> None:
    p = new()
    out = p.start("/", "v")
    n = 0
    for step in steps:
        if step == "event":
            out += p.event({"type": "assistant"})
        elif step == "request":
            n += 1
            out += p.permission_request(f"r{n}", "t", "c", {})
        elif step == "answer":
            cmd = p.receive_command(
                {"type": "confirmation_response", "request_id": f"r{n}", "allowed": True}
            )
            if isinstance(cmd, dp.Confirm):
                out += p.permission_outcome(cmd.request_id, cmd.allowed)
        else:
            cmd = p.receive_command(
                {"type": "confirmation_response", "request_id": "nope", "allowed": True}
            )
            assert isinstance(cmd, dp.Reply)
            out += cmd.frame
    out += p.end() + p.end()
    subtypes = [f.get("subtype") for f in frames(out)]
    assert subtypes[0] == "session_start" and subtypes[-1] == "session_end"
    assert subtypes.count("session_end") == 1
