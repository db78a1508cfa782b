"""The compaction planning (:mod:`headwire.runtime.compaction`): its invariants as
properties."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.runtime import compaction as cp

Message = dict[str, Any]


@st.composite
def conversations(draw: st.DrawFn) -> list[Message]:
    """A conversation: user requests, assistant steps with their tool results, earlier
    summaries; the last unit is a request or a step with pending results."""
    out: list[Message] = [{"role": "user", "content": "original " + draw(st.text(max_size=200))}]
    for n in range(draw(st.integers(0, 25))):
        kind = draw(st.sampled_from(["step", "step", "step", "request", "summary", "text"]))
        if kind == "request":
            out.append({"role": "user", "content": draw(st.text(max_size=300))})
        elif kind == "summary":
            out.append(cp.summary_message(draw(st.text(max_size=500))))
        elif kind == "text":
            out.append({"role": "assistant", "content": draw(st.text(max_size=300))})
        else:
            calls = draw(st.integers(1, 3))
            ids = [f"c{n}_{i}" for i in range(calls)]
            out.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": "sh", "arguments": "{}"}}
                        for i in ids
                    ],
                }
            )
            for i in ids:
                size = draw(st.integers(0, 6_000))
                out.append({"role": "tool", "tool_call_id": i, "content": "x" * size})
    return out


def _tokens(messages: list[Message]) -> int:
    return sum(cp.estimate_tokens(m) for m in messages)


def _well_paired(messages: list[Message]) -> bool:
    asked: set[str] = set()
    for m in messages:
        if m.get("role") == "assistant":
            asked = {c["id"] for c in m.get("tool_calls") or []}
        elif m.get("role") == "tool":
            if m["tool_call_id"] not in asked:
                return False
        else:
            asked = set()
    return True


@settings(max_examples=200, deadline=None)
@given(conversations(), st.integers(200, 20_000), st.text(max_size=8_000))
def test_the_plan_keeps_the_request_and_the_last_unit_within_the_budget(
    messages: list[Message], budget: int, summary: str
) -> None:
    """Invariant: the new conversation keeps the first user request and the whole last unit
    (the pending tool results), pairs every tool result with its call, and, when the requests
    and the last unit fit in the budget, is within the budget."""
    plan = cp.plan_compaction(messages, budget)
    if plan is None:
        return
    new = cp.compacted(messages, plan, summary)
    assert messages[0] in new
    last_start = cp.units(messages)[-1][0]
    tail = messages[last_start:]
    assert new[len(new) - len(tail) :] == tail
    assert _well_paired(new)
    requests = [m for i, m in enumerate(messages[:last_start]) if i in plan.requests]
    mandatory = _tokens(tail) + cp.estimate_tokens(messages[0]) + _tokens(requests)
    summary_room = (cp.SUMMARY_MAX_CHARS + len(cp.SUMMARY_HEADER)) // cp.BYTES_PER_TOKEN + 8
    if mandatory + summary_room <= budget:
        assert _tokens(new) <= budget
    assert len(new) <= len(messages) + 1


@settings(max_examples=100, deadline=None)
@given(conversations())
def test_the_original_request_survives_repeated_compactions(messages: list[Message]) -> None:
    """Invariant: after any number of compactions the first request is still there, verbatim."""
    first = messages[0]
    for round_ in range(4):
        plan = cp.plan_compaction(messages, 1_000)
        if plan is None:
            break
        messages = cp.compacted(messages, plan, f"summary {round_}")
        messages.append({"role": "user", "content": f"next {round_}"})
    assert first in messages


@given(st.integers(1_000, 2_000_000), st.floats(0.01, 1.0))
def test_the_trigger_is_under_the_threshold_and_the_target_under_the_trigger(
    window: int, threshold: float
) -> None:
    """Invariant: target <= trigger <= threshold * window (at least 1)."""
    budget = cp.Budget(window, threshold)
    assert 1 <= budget.target <= budget.trigger <= max(1, threshold * window)


def test_overflow_messages_of_the_providers() -> None:
    for message in [
        "This model's maximum context length is 32000 tokens. However, your messages resulted "
        "in 33007 tokens.",
        "prompt is too long: 210000 tokens > 200000 maximum",
        "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).",
        "the request exceeds the available context size, try increasing it",
        '{"code":400,"type":"exceed_context_size_error","n_prompt_tokens":5000,"n_ctx":4096}',
    ]:
        assert cp.is_context_overflow(message), message
    assert not cp.is_context_overflow("rate limit exceeded")
    assert cp.window_in_error("maximum context length is 32000 tokens") == 32_000
    assert cp.window_in_error("prompt is too long: 210000 tokens > 200000 maximum") == 200_000
    assert cp.window_in_error('"n_prompt_tokens":5000,"n_ctx":4096') == 4_096


def test_window_from_listings() -> None:
    assert cp.window_from_listing({"data": [{"id": "m", "max_model_len": 32_000}]}, "m") == 32_000
    assert cp.window_from_listing({"data": [{"id": "x", "context_length": 8_192}]}, "m") == 8_192
    two = {"data": [{"id": "x", "context_length": 1}, {"id": "y", "context_length": 2}]}
    assert cp.window_from_listing(two, "m") is None
    gemini = {"models": [{"name": "models/g", "inputTokenLimit": 1_048_576}]}
    assert cp.window_from_listing(gemini, "g") == 1_048_576
    assert cp.window_from_listing({"data": [{"id": "m"}]}, "m") is None


@given(st.lists(st.integers(0, 5_000), max_size=30), st.integers(0, 60_000), st.integers(0, 8))
def test_clearing_keeps_the_latest_results(sizes: list[int], threshold: int, keep: int) -> None:
    """Invariant: clearing never touches the last ``max(1, keep)`` tool results and leaves
    nothing to clear when the total is under the threshold."""
    messages: list[Message] = [
        {"role": "tool", "tool_call_id": str(i), "content": "y" * s} for i, s in enumerate(sizes)
    ]
    cleared = cp.clear_old_tool_results(messages, threshold, keep)
    if sum(sizes) <= threshold:
        assert cleared == 0
    protected = max(1, keep)
    for message, size in list(zip(messages, sizes, strict=True))[-protected:]:
        assert message["content"] == "y" * size
