"""A turn's ``result`` keeps Qwen Code's keys in its order, then headwire's additions in theirs.

Upstream's captures (``tests/data/upstream``) give the order of a result's keys; headwire
writes every one of them in that order and appends ``stats`` (JSON mode has it upstream, every
mode has it here), Claude Code's ``stop_reason``, ``total_cost_usd``, ``modelUsage`` and, with
``--json-schema``, ``structured_output``.
"""

from __future__ import annotations

import json

from headwire import events as ev
from headwire.headless import HeadlessEmitter
from tests.shapes import RESULT_ADDITIONS, SAMPLES


def upstream_result_keys() -> list[list[str]]:
    found: list[list[str]] = []
    for path in sorted(SAMPLES.glob("*.stdout.jsonl")):
        if path.name.endswith("-text.stdout.jsonl") or "-acp" in path.name:
            continue
        text = path.read_text().strip()
        messages = (
            json.loads(text)
            if text.startswith("[")
            else [json.loads(line) for line in text.splitlines() if line.strip()]
        )
        found += [list(m) for m in messages if isinstance(m, dict) and m.get("type") == "result"]
    return found


def result_of(**fields: object) -> dict[str, object]:
    out: list[dict[str, object]] = []
    emitter = HeadlessEmitter("s", lambda: "u", out.append)
    base: dict[str, object] = {
        "text": "done",
        "error": None,
        "subtype": "success",
        "num_turns": 1,
        "duration_ms": 1,
        "stats": ev.TurnStats(model="m"),
        "stop_reason": "end_turn",
    }
    emitter(ev.TurnFinished(**{**base, **fields}))  # type: ignore[arg-type]
    return out[0]


def test_success_keys_follow_upstream_then_the_additions() -> None:
    upstream = upstream_result_keys()
    assert upstream and all(k[:2] == ["type", "subtype"] for k in upstream)
    ours = list(result_of(structured=True, structured_output={"a": 1}))
    for keys in upstream:
        qwen = [k for k in keys if k not in RESULT_ADDITIONS]
        assert [k for k in ours if k in qwen] == qwen
    additions = [k for k in ours if k in RESULT_ADDITIONS]
    assert additions == list(RESULT_ADDITIONS)
    assert ours[-len(additions) :] == additions  # appended, nothing in between


def test_error_keys_keep_qwen_first() -> None:
    ours = list(result_of(error="boom", subtype="error_max_turns", limit="turns", text="so far"))
    assert ours[:10] == [
        "type",
        "subtype",
        "uuid",
        "session_id",
        "is_error",
        "duration_ms",
        "duration_api_ms",
        "num_turns",
        "usage",
        "permission_denials",
    ]
    assert ours[10:] == [
        "stats",
        "error",
        "errors",
        "result",
        "stop_reason",
        "total_cost_usd",
        "modelUsage",
        "headwire",
    ]


def test_the_exit_contract_follows_the_ending() -> None:
    """``result.headwire``: the exit code of the ending, and whether it is worth a retry."""
    assert result_of()["headwire"] == {"exit_code": 0, "retryable": False}
    limit = result_of(error="x", subtype="error_max_turns", limit="turns")
    assert limit["headwire"] == {"exit_code": 53, "retryable": False}
    failed = result_of(error="HTTP 503", subtype="error_during_execution", retryable=True)
    assert failed["headwire"] == {"exit_code": 1, "retryable": True}
    cancelled = result_of(error="c", subtype="error_during_execution", cancelled=True)
    assert cancelled["headwire"]["exit_code"] == 130
