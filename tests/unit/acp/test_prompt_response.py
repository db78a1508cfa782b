"""``session/prompt``'s stop reason for each ending of a turn."""

from __future__ import annotations

from typing import Any

import pytest

from headwire import events as ev
from headwire.acp.server import prompt_response
from headwire.protocol import jsonrpc as rpc


def finished(**fields: Any) -> ev.TurnFinished:
    base: dict[str, Any] = {
        "text": "",
        "error": None,
        "subtype": "success",
        "num_turns": 1,
        "duration_ms": 0,
        "stats": ev.TurnStats(model="m"),
    }
    return ev.TurnFinished(**{**base, **fields})


@pytest.mark.parametrize(
    ("fields", "stop"),
    [
        ({}, "end_turn"),
        ({"stop_reason": "end_turn"}, "end_turn"),
        ({"stop_reason": "max_tokens"}, "max_tokens"),
        ({"stop_reason": "refusal"}, "refusal"),
        ({"error": "x", "subtype": "error_max_turns", "limit": "turns"}, "max_turn_requests"),
        ({"error": "x", "subtype": "error_max_budget_usd", "limit": "budget"}, "max_turn_requests"),
        ({"error": "x", "limit": "duration"}, "max_turn_requests"),
    ],
)
def test_stop_reasons(fields: dict[str, Any], stop: str) -> None:
    assert prompt_response(finished(**fields)) == {"stopReason": stop}


def test_a_failed_turn_is_an_error_response() -> None:
    with pytest.raises(rpc.RpcError) as caught:
        prompt_response(finished(error="model down", subtype="error_during_execution"))
    assert caught.value.code == rpc.INTERNAL_ERROR and caught.value.message == "model down"
