"""Shared checks of the run contract: one ``result`` per turn that never contradicts itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from headwire.errors import ExitCode

SUBTYPES = (
    "success",
    "error_during_execution",
    "error_max_turns",
    "error_max_budget_usd",
    "error_max_structured_output_retries",
)
FAKE_PRICE = {"inputPerMillionTokens": 5.0, "outputPerMillionTokens": 10.0}
"""The fake server's default usage (11 in, 3 out) at this price costs $0.000085 a call."""
CALL_USD = (11 * 5.0 + 3 * 10.0) / 1_000_000


def pricing(model: str, price: dict[str, float] | None = None) -> str:
    """A ``--settings`` value pricing ``model``."""
    return json.dumps({"modelPricing": {model: price or FAKE_PRICE}})


def messages_of(stdout: bytes) -> list[dict[str, Any]]:
    """Every message of a JSON (one array) or JSON Lines stdout."""
    text = stdout.decode()
    if text.lstrip().startswith("["):
        out: list[dict[str, Any]] = []
        for line in text.splitlines():
            if line.strip():
                out += json.loads(line)
        return out
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def turn_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results that end a turn (a subagent's interim result has ``parent_tool_use_id``)."""
    return [
        m for m in messages if m.get("type") == "result" and m.get("parent_tool_use_id") is None
    ]


def check_result(result: dict[str, Any], subtype: str) -> dict[str, Any]:
    """``subtype``, ``is_error`` and ``errors`` agree, and the stats go with them."""
    assert result["subtype"] == subtype, result
    failed = subtype != "success"
    assert result["is_error"] is failed
    if failed:
        assert result["errors"] == [result["error"]["message"]] and result["errors"][0]
        assert "structured_output" not in result
    else:
        assert "errors" not in result and "error" not in result
        assert isinstance(result["result"], str)
    assert "total_cost_usd" in result and isinstance(result["modelUsage"], dict)
    assert "stop_reason" in result
    return result


def one_result(stdout: bytes, subtype: str) -> dict[str, Any]:
    """Exactly one turn-ending result, and it is consistent."""
    results = turn_results(messages_of(stdout))
    assert len(results) == 1, results
    return check_result(results[0], subtype)


def expected_exit(subtype: str, *, limit: bool | str = False) -> int:
    """The README's exit-code matrix for a one-shot run (``limit="tool_calls"``: 55)."""
    if subtype == "success":
        return ExitCode.OK
    if limit == "tool_calls":
        return ExitCode.RUN_BUDGET
    return ExitCode.TURN_LIMIT if limit else ExitCode.ERROR


def write_lines(path: Path, lines: list[dict[str, Any]]) -> bytes:
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    path.write_bytes(data)
    return data
