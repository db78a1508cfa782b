"""The ACP connection's lifecycle as a state machine: initialize first, ids in flight."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.errors import LocalProtocolError
from headwire.protocol import acp_peer as peer
from headwire.protocol import jsonrpc as rpc
from headwire.protocol.lines import LineSplitter


def req(msg_id: Any, method: str, params: Any = None) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


INIT = req(1, "initialize", {"protocolVersion": 1})


def test_requests_before_initialize_are_refused() -> None:
    p = peer.AcpPeer()
    (action,) = p.receive_line(req(1, "session/new", {}))
    assert isinstance(action, peer.SendFrame)
    assert (
        action.message["error"]["code"] == peer.NOT_INITIALIZED and p.phase is peer.Phase.CONNECTED
    )
    (bad_init,) = p.receive_line(req(2, "initialize", {}))
    assert bad_init.message["error"]["code"] == rpc.INVALID_PARAMS  # type: ignore[union-attr]
    (ok,) = p.receive_line(INIT)
    assert isinstance(ok, peer.Dispatch) and p.phase is peer.Phase.READY
    (again,) = p.receive_line(req(3, "session/new", {}))
    assert isinstance(again, peer.Dispatch)


def test_unknown_methods_and_notifications() -> None:
    p = peer.AcpPeer()
    (action,) = p.receive_line(req(1, "session/fork"))
    assert action.message["error"] == {  # type: ignore[union-attr]
        "code": rpc.METHOD_NOT_FOUND,
        "message": "Method not found",
        "data": {"method": "session/fork"},
    }
    cancel = json.dumps(
        {"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}
    )
    assert p.receive_line(cancel.encode()) == [peer.Cancel("s")]
    (note,) = p.receive_line(b'{"jsonrpc":"2.0","method":"x/y"}')
    assert isinstance(note, peer.Warn)


def test_answers_are_matched_to_our_requests() -> None:
    p = peer.AcpPeer()
    p.receive_line(INIT)
    msg_id, frame = p.request("session/request_permission", {})
    assert frame.message["id"] == msg_id and p.outgoing == {msg_id: "session/request_permission"}
    answer = json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": {"ok": 1}}).encode()
    (resolved,) = p.receive_line(answer)
    assert isinstance(resolved, peer.Resolve) and resolved.response.result == {"ok": 1}
    (stale,) = p.receive_line(answer)
    assert isinstance(stale, peer.Warn)
    other, _ = p.request("x", {})
    assert p.end_of_input() == [peer.Abort(other)]
    with pytest.raises(LocalProtocolError):
        p.receive_line(INIT)


def test_each_request_is_answered_once() -> None:
    p = peer.AcpPeer()
    p.receive_line(INIT)
    p.respond(1, {})
    with pytest.raises(LocalProtocolError):
        p.respond(1, {})
    p.receive_line(req(7, "session/new", {}))
    p.receive_line(req(7, "session/new", {}))  # a reused id is answered twice
    p.respond(7, {})
    p.respond_error(7, rpc.RpcError(rpc.INTERNAL_ERROR, "x"))
    assert not p.incoming


@given(
    st.lists(
        st.sampled_from(
            [
                INIT,
                req(2, "session/new", {}),
                req(3, "nope"),
                b"junk",
                b"[]",
                b"",
                b'{"jsonrpc":"2.0","id":9,"result":1}',
                b'{"jsonrpc":"2.0","method":"session/cancel"}',
            ]
        ),
        max_size=10,
    )
)
def test_byte_at_a_time_equals_whole_lines(lines: list[bytes]) -> None:
    whole = peer.AcpPeer()
    expected = [a for raw in lines for a in whole.receive_line(raw)]
    fed = peer.AcpPeer()
    splitter = LineSplitter()
    got: list[peer.Action] = []
    data = b"".join(raw + b"\n" for raw in lines)
    for i in range(len(data)):
        for raw in splitter.feed(data[i : i + 1]):
            got += fed.receive_line(raw)
    assert got == expected and fed.phase is whole.phase
