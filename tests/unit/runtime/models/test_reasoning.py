"""``generationConfig.reasoning`` in each provider's form (pure rules; the bodies upstream sends
are compared end to end in ``tests/e2e/test_reasoning.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.models.reasoning import (
    EFFORTS,
    anthropic_options,
    gemini_thinking,
    openai_keys,
)

LOCAL = "http://127.0.0.1:8000/v1"
DEEPSEEK = "https://api.deepseek.com/v1"
OPENROUTER = "https://openrouter.ai/api/v1"


@pytest.mark.parametrize(
    ("reasoning", "model", "url", "sampling", "expected"),
    [
        ({"effort": "high"}, "m", LOCAL, {}, {"reasoning": {"effort": "high"}}),
        ({"effort": "high"}, "m", LOCAL, {"top_p": 1}, {}),
        (False, "m", LOCAL, {}, {}),
        (None, "m", LOCAL, {}, {}),
        ({"effort": "medium"}, "deepseek-v4", DEEPSEEK, {}, {"reasoning_effort": "high"}),
        ({"effort": "xhigh"}, "deepseek-v4", DEEPSEEK, {}, {"reasoning_effort": "max"}),
        ({"effort": "max"}, "deepseek-v4", DEEPSEEK, {}, {"reasoning_effort": "max"}),
        (False, "deepseek-v4", DEEPSEEK, {}, {"thinking": {"type": "disabled"}}),
        (False, "deepseek-v4", "http://127.0.0.1/v1", {}, {}),  # self-hosted: its own knob
        (False, "qwen/qwen3", OPENROUTER, {}, {"reasoning": {"enabled": False}}),
        ({"effort": "low"}, "qwen/qwen3", OPENROUTER, {}, {"reasoning": {"effort": "low"}}),
        ({"effort": "low"}, "openai/gpt-5.1", OPENROUTER, {}, {"reasoning": {"effort": "low"}}),
        ({"effort": "low"}, "gpt-5.1", LOCAL, {"top_p": 1}, {"reasoning_effort": "low"}),
        ({"effort": "low"}, "gpt-5.1", LOCAL, {"reasoning_effort": "high"}, {}),
        (False, "gpt-5.1", LOCAL, {}, {"reasoning_effort": "none"}),
        (False, "gpt-5", LOCAL, {}, {}),  # always thinks
        (False, "openai/gpt-5-pro", OPENROUTER, {}, {}),
        ({"effort": "high"}, "gpt-4o", LOCAL, {}, {"reasoning": {"effort": "high"}}),
        ({"effort": "high"}, "gpt-50", LOCAL, {}, {"reasoning": {"effort": "high"}}),
    ],
)
def test_openai_forms(
    reasoning: Any, model: str, url: str, sampling: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert openai_keys(reasoning, model, url, sampling) == expected


@given(
    st.one_of(
        st.just(False),
        st.fixed_dictionaries({}, optional={"effort": st.sampled_from(EFFORTS)}),
    ),
    st.sampled_from(["m", "gpt-5.1", "gpt-5", "openai/gpt-5.2", "deepseek-chat"]),
    st.sampled_from([LOCAL, DEEPSEEK, OPENROUTER]),
    st.dictionaries(
        st.sampled_from(["temperature", "reasoning", "reasoning_effort", "thinking"]),
        st.integers(),
        max_size=2,
    ),
)
def test_a_sampling_key_is_never_replaced(
    reasoning: Any, model: str, url: str, sampling: dict[str, Any]
) -> None:
    """Invariant: the keys ``reasoning`` adds are never ones ``samplingParams`` set, and
    only thinking keys are added."""
    added = openai_keys(reasoning, model, url, sampling)
    assert set(added) <= {"reasoning", "reasoning_effort", "thinking"}
    assert not set(added) & set(sampling) or reasoning is False


def test_anthropic_and_gemini_forms() -> None:
    assert anthropic_options({"effort": "low", "budget_tokens": 5000}) == (5000, "low", False)
    assert anthropic_options({"effort": "max"}) == (None, "high", False)
    assert anthropic_options(False) == (None, None, True)
    assert anthropic_options(None) == (None, None, False)
    assert gemini_thinking({"effort": "max"}) == {"includeThoughts": True, "thinkingLevel": "HIGH"}
    assert gemini_thinking({}) == {
        "includeThoughts": True,
        "thinkingLevel": "THINKING_LEVEL_UNSPECIFIED",
    }
    assert gemini_thinking(False) == {"includeThoughts": False}
    assert gemini_thinking(None) is None


def test_the_anthropic_request_keeps_a_users_beta_flags_and_the_flags_budget_wins() -> None:
    from headwire.runtime.models.anthropic import AnthropicModel
    from headwire.runtime.models.base import ModelRequest

    model = AnthropicModel(
        "http://127.0.0.1:9",
        "k",
        "claude",
        thinking_budget=2048,
        reasoning={"effort": "xhigh", "budget_tokens": 9000},
        extra_headers={"Anthropic-Beta": "mine-1"},
    )
    prepared = model._prepare(
        ModelRequest(model="claude", messages=[{"role": "user", "content": "hi"}], tools=[])
    )
    import json

    body = json.loads(prepared.body)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["output_config"] == {"effort": "high"}
    assert prepared.headers["Anthropic-Beta"] == (
        "mine-1,interleaved-thinking-2025-05-14,effort-2025-11-24"
    )
    off = AnthropicModel("http://127.0.0.1:9", "k", "claude", reasoning=False)
    body = json.loads(off._prepare(ModelRequest(model="claude", messages=[], tools=[])).body)
    assert "thinking" not in body and "output_config" not in body
