"""The ATIF renderer (:mod:`headwire.transcript.atif`): its invariants as properties over random
recordings, and the artifact reference for a long result."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.transcript.atif import render_atif
from tests.atif_check import check_structure

Record = dict[str, Any]


def _usage(n: int) -> Record:
    return {"input_tokens": n, "output_tokens": n // 2, "cache_read_input_tokens": n // 3}


@st.composite
def recordings(draw: st.DrawFn) -> list[Record]:
    """Records as the recorder writes them: turns of model calls with tool calls and results,
    some calls being subagents with their own records, some calls cut off (no result, or a
    partial assistant)."""
    records: list[Record] = []
    counter = iter(range(10_000))
    for _ in range(draw(st.integers(0, 3))):
        records.append({"type": "user", "message": {"role": "user", "content": "go"}})
        for _ in range(draw(st.integers(0, 3))):
            n = draw(st.integers(0, 500))
            ids = [f"c{next(counter)}" for _ in range(draw(st.integers(0, 3)))]
            calls = [
                {"id": i, "type": "function", "function": {"name": "glob", "arguments": "{}"}}
                for i in ids
            ]
            message = {"role": "assistant", "content": "t", "tool_calls": calls or None}
            records.append({"type": "assistant", "message": message, "usage": _usage(n)})
            for call_id in ids:
                if draw(st.booleans()):
                    records.append({"type": "task_started", "call_id": call_id})
                    records.append(
                        {
                            "type": "user",
                            "message": {"role": "user", "content": "p"},
                            "parent_tool_use_id": call_id,
                        }
                    )
                    records.append(
                        {
                            "type": "assistant",
                            "message": {"role": "assistant", "content": "child"},
                            "usage": _usage(draw(st.integers(0, 50))),
                            "parent_tool_use_id": call_id,
                        }
                    )
                if draw(st.booleans()):
                    tool = {"role": "tool", "tool_call_id": call_id, "content": "r"}
                    records.append({"type": "tool_result", "message": tool, "call_id": call_id})
        if draw(st.booleans()):
            records.append({"type": "partial_assistant", "content": "cut", "chunks": []})
        records.append({"type": "result", "subtype": "success", "total_cost_usd": None})
    return records


@settings(max_examples=60, deadline=None)
@given(recordings())
def test_invariants(records: list[Record]) -> None:
    doc = render_atif(records, session_id="s", version="v")
    check_structure(doc)  # step ids 1..n, source_call_id on its call's step, unique subagents
    main_calls = [
        r for r in records if r["type"] == "assistant" and not r.get("parent_tool_use_id")
    ]
    final = doc["final_metrics"]
    for key, src in (("prompt", "input_tokens"), ("completion", "output_tokens")):
        known = [r["usage"][src] for r in main_calls if r["usage"]["input_tokens"] > 0]
        steps_sum = sum(s.get("metrics", {}).get(f"{key}_tokens", 0) for s in doc["steps"])
        assert final.get(f"total_{key}_tokens", 0) == steps_sum
        assert steps_sum == sum(known)
    assert final["extra"]["model_calls"] == len(main_calls)
    refs = [
        ref["trajectory_id"]
        for step in doc["steps"]
        for result in step.get("observation", {}).get("results", [])
        for ref in result.get("subagent_trajectory_ref", [])
    ]
    subs = [s["trajectory_id"] for s in doc.get("subagent_trajectories", [])]
    answered = {r["call_id"] for r in records if r["type"] == "tool_result"}
    assert sorted(refs) == sorted(s for s in subs if s in answered)


def test_no_usage_is_null_never_zero() -> None:
    records = [
        {"type": "user", "message": {"content": "x"}},
        {"type": "assistant", "message": {"content": "y"}, "usage": _usage(0)},
    ]
    doc = render_atif(records, session_id="s", version="v")
    assert "metrics" not in doc["steps"][1]
    assert "total_prompt_tokens" not in doc["final_metrics"]


def test_long_result_refers_to_its_artifact() -> None:
    info = {"path": "/a/b.output", "sha256": "ab" * 32, "bytes": 500}
    call = {"id": "c", "function": {"name": "shell", "arguments": "{}"}}
    records = [
        {"type": "assistant", "message": {"content": "", "tool_calls": [call]}},
        {
            "type": "tool_result",
            "call_id": "c",
            "message": {"content": "x" * 200},
            "artifact": "/a/b.output",
        },
    ]
    doc = render_atif(
        records, session_id="s", version="v", inline_limit=100, artifact_info=lambda p: info
    )
    result = doc["steps"][0]["observation"]["results"][0]
    assert result["extra"]["artifact"] == info and info["sha256"] in result["content"]
    whole = render_atif(records, session_id="s", version="v", artifact_info=lambda p: info)
    assert whole["steps"][0]["observation"]["results"][0]["content"] == "x" * 200
