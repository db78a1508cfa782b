"""The sans-I/O JSON-RPC framing of ``headwire --acp``."""

from __future__ import annotations

import json

import pytest

from headwire.protocol import jsonrpc as rpc
from headwire.wire import encode


def test_requests_notifications_and_responses_are_told_apart() -> None:
    req = rpc.parse_message(
        b'{"jsonrpc":"2.0","id":3,"method":"session/new","params":{"cwd":"/"}}\n'
    )
    assert req == rpc.Request(3, "session/new", {"cwd": "/"})
    note = rpc.parse_message(
        b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}'
    )
    assert note == rpc.Notification("session/cancel", {"sessionId": "s"})
    ok = rpc.parse_message(b'{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}')
    assert ok == rpc.Response(0, {"outcome": {"outcome": "cancelled"}}, None)
    err = rpc.parse_message(b'{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"no"}}')
    assert err == rpc.Response("a", None, {"code": -32601, "message": "no"})
    assert rpc.parse_message(b"  \n") is None
    # a null id is a request (answered with id null), not a notification
    assert rpc.parse_message(b'{"jsonrpc":"2.0","id":null,"method":"x"}') == rpc.Request(
        None, "x", None
    )


@pytest.mark.parametrize(
    ("line", "code", "msg_id"),
    [
        (b"not json", rpc.PARSE_ERROR, None),
        (b'{"jsonrpc":"2.0","id":1,', rpc.PARSE_ERROR, None),
        (b"\xff\xfe", rpc.PARSE_ERROR, None),
        (b"NaN", rpc.PARSE_ERROR, None),
        (b"[1,2]", rpc.INVALID_REQUEST, None),
        (b'"text"', rpc.INVALID_REQUEST, None),
        (b'{"id":4,"method":"initialize"}', rpc.INVALID_REQUEST, 4),
        (b'{"jsonrpc":"1.0","id":"x","method":"initialize"}', rpc.INVALID_REQUEST, "x"),
        (b'{"jsonrpc":"2.0","id":5}', rpc.INVALID_REQUEST, 5),
        (b'{"jsonrpc":"2.0","id":6,"method":7}', rpc.INVALID_REQUEST, 6),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"initialize"}', rpc.INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"initialize"}', rpc.INVALID_REQUEST, None),
    ],
)
def test_bad_lines(line: bytes, code: int, msg_id: object) -> None:
    bad = rpc.parse_message(line)
    assert isinstance(bad, rpc.BadMessage)
    assert (bad.code, bad.id) == (code, msg_id)
    frame = rpc.frame(rpc.error_response(bad.id, bad.code, bad.message, bad.data))
    parsed = json.loads(frame)
    assert parsed["id"] == msg_id and parsed["error"]["code"] == code and frame.endswith(b"}\n")


def test_lone_surrogate_escapes_are_valid_json() -> None:
    req = rpc.parse_message(b'{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"\\ud800x"}}')
    assert isinstance(req, rpc.Request) and req.params == {"t": "\ud800x"}
    # ... and they go back out as JSON.stringify writes them
    assert (
        rpc.frame(rpc.response(1, req.params))
        == b'{"jsonrpc":"2.0","id":1,"result":{"t":"\\ud800x"}}\n'
    )


def test_frames_are_one_line_in_upstream_key_order() -> None:
    frame = rpc.frame(
        rpc.notification("session/update", {"sessionId": "s", "update": {"text": "a\nb"}})
    )
    assert frame.count(b"\n") == 1 and frame.endswith(b"\n")
    assert (
        frame
        == encode(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": {"text": "a\nb"}},
            }
        )
        + b"\n"
    )
    assert rpc.frame(rpc.request(0, "session/request_permission", {})).startswith(
        b'{"jsonrpc":"2.0","id":0,"method":"session/request_permission"'
    )
    assert json.loads(rpc.frame(rpc.error_response(None, -32700, "Parse error"))) == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {"code": -32700, "message": "Parse error"},
    }


def test_rpc_error_helpers() -> None:
    missing = rpc.RpcError.method_not_found("session/fork")
    assert (missing.code, missing.data) == (-32601, {"method": "session/fork"})
    bad = rpc.RpcError.invalid_params("cwd must be absolute")
    assert (bad.code, bad.message, bad.data) == (
        -32602,
        "Invalid params",
        {"details": "cwd must be absolute"},
    )
