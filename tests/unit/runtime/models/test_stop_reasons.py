"""Providers' finish reasons in Claude Code's words, and a server that says ``length``."""

from __future__ import annotations

import asyncio

import pytest

from headwire.runtime.models.base import Finished, ModelRequest, stop_reason_of
from headwire.runtime.models.openai import OpenAIModel
from tests.fakes.fake_openai import FakeOpenAI


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("stop", "end_turn"),
        ("tool_calls", "tool_use"),
        ("length", "max_tokens"),
        ("content_filter", "refusal"),
        ("end_turn", "end_turn"),
        ("max_tokens", "max_tokens"),
        ("refusal", "refusal"),
        ("MAX_TOKENS", "max_tokens"),
        ("SAFETY", "refusal"),
        ("STOP", "end_turn"),
        ("something_new", None),
        (None, None),
        ("", None),
    ],
)
def test_stop_reason_of(raw: str | None, reason: str | None) -> None:
    assert stop_reason_of(raw) == reason


@pytest.mark.parametrize(
    ("finish", "reason"), [("length", "max_tokens"), ("content_filter", "refusal")]
)
def test_an_openai_answer_cut_or_refused(finish: str, reason: str) -> None:
    async def main(url: str) -> list[object]:
        model = OpenAIModel(url, "k", "m")
        try:
            request = ModelRequest(model="m", messages=[{"role": "user", "content": "x"}], tools=[])
            return [e async for e in model.stream(request)]
        finally:
            await model.aclose()

    with FakeOpenAI([{"text": "partial", "finish_reason": finish}]) as fake:
        events = asyncio.run(main(fake.base_url))
    last = events[-1]
    assert isinstance(last, Finished) and last.stop_reason == reason
