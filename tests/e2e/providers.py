"""The three model providers as the tests drive them: fake server, environment, flags."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.fake_gemini import FakeGemini
from tests.fakes.fake_openai import FakeOpenAI

KEY = "sk-provider-test-key-7f3a9c"
"""The API key every provider test runs with (searched for in every output)."""


@dataclass(frozen=True)
class Provider:
    """One ``--auth-type``: its fake server and how a run points at it."""

    name: str
    fake: Callable[..., Any]
    key_var: str
    base_var: str
    base_suffix: str = ""

    def env(self, fake: Any, key: str = KEY) -> dict[str, str]:
        """The environment that points a run at ``fake`` with ``key``."""
        return {self.base_var: fake.base_url, self.key_var: key}

    def unreachable_env(self, key: str = KEY) -> dict[str, str]:
        """The environment of a run against a port where nothing listens."""
        return {self.base_var: "http://127.0.0.1:9" + self.base_suffix, self.key_var: key}

    def flags(self) -> list[str]:
        """``--auth-type NAME -m fake-model``."""
        return ["--auth-type", self.name, "-m", "fake-model"]

    @staticmethod
    def tool_results(fake: Any, request: int) -> list[str]:
        """The tool results the ``request``-th call (0-based) sent back to the model."""
        body = fake.requests[request]
        if isinstance(fake, FakeOpenAI):
            return [m["content"] for m in body["messages"] if m["role"] == "tool"]
        return list(fake.tool_result_texts(body))


PROVIDERS = {
    "openai": Provider("openai", FakeOpenAI, "OPENAI_API_KEY", "OPENAI_BASE_URL", "/v1"),
    "anthropic": Provider("anthropic", FakeAnthropic, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "gemini": Provider("gemini", FakeGemini, "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"),
}
NAMES = sorted(PROVIDERS)
