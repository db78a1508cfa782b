"""MCP stdio lines are read as Node's client reads them (lone surrogates, bytes not UTF-8)."""

from __future__ import annotations

import json

import mcp_types as types
from hypothesis import given
from mcp.shared.message import SessionMessage

from headwire.runtime.mcp.stdio import _parse
from headwire.wire import dumps
from tests.unit.wire.test_decode import any_text, join_pairs


def _result_line(msg_id: int, text: str) -> bytes:
    result = {"content": [{"type": "text", "text": text}]}
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}).encode()


@given(any_text())
def test_every_text_result_is_a_message(text: str) -> None:
    """Invariant: a line holding a JSON-RPC message, lone-surrogate escapes included, never
    comes back as an exception (the SDK would drop it and the call would wait)."""
    for line in (_result_line(7, text), dumps(json.loads(_result_line(7, text)))):
        parsed = _parse(line)
        assert isinstance(parsed, SessionMessage), parsed
        message = parsed.message
        assert isinstance(message, types.JSONRPCResponse)
        assert message.result["content"][0]["text"] == join_pairs(text)


def test_bytes_that_are_not_utf8_read_as_u_fffd() -> None:
    line = b'{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"caf\xe9"}]}}'
    parsed = _parse(line)
    assert isinstance(parsed, SessionMessage)
    assert isinstance(parsed.message, types.JSONRPCResponse)
    assert parsed.message.result["content"][0]["text"] == "caf\ufffd"


def test_an_unreadable_response_answers_its_request_with_an_error() -> None:
    parsed = _parse(b'{"jsonrpc":"2.0","id":"r-9","result":{"content":[{"type":"text","text":"cut')
    assert isinstance(parsed, SessionMessage)
    error = parsed.message
    assert isinstance(error, types.JSONRPCError) and error.id == "r-9"
    assert error.error.code == types.PARSE_ERROR and "not JSON-RPC" in error.error.message


def test_an_unreadable_request_or_line_without_id_stays_an_exception() -> None:
    assert isinstance(_parse(b'{"jsonrpc":"2.0","id":4,"method":"ping","params":'), Exception)
    assert isinstance(_parse(b"garbage"), Exception)


def test_a_large_line_read_apart_and_emptied_still_answers_its_request() -> None:
    """A line of a long text is consumed as it is read (its bytes freed early): a valid one is
    the message, one the SDK then refuses still answers its request instead of waiting."""
    text = "abc\\n\\u00e9\\ud83d\\ude00" * 200_000  # 4.6 MB of escapes and characters
    good = bytearray(b'{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"')
    good += text.encode() + b'"}]}}'
    parsed = _parse(good)
    assert isinstance(parsed, SessionMessage) and not good  # read, and its bytes gone
    assert isinstance(parsed.message, types.JSONRPCResponse)
    assert parsed.message.result["content"][0]["text"] == json.loads(f'"{text}"')
    bad = bytearray(b'{"jsonrpc":"2.0","id":6,"result":"' + text.encode() + b'"}')
    parsed = _parse(bad)
    assert isinstance(parsed, SessionMessage) and not bad
    error = parsed.message
    assert isinstance(error, types.JSONRPCError) and error.id == 6
    assert error.error.code == types.PARSE_ERROR and "not JSON-RPC" in error.error.message
