"""Manual check: the official Anthropic and Google Gen AI SDKs read the fake servers' streams.

Not part of the suite (the SDKs are not dependencies).  Run it in an environment that has them
after changing a fake's wire format::

    pip install anthropic google-genai
    PYTHONPATH=. python tests/fakes/sdk_check.py

It streams a reply with thinking, text, two tool calls and cache usage from
:class:`~tests.fakes.fake_anthropic.FakeAnthropic` through ``anthropic.Anthropic`` and one with
a thought, text and a signed function call from :class:`~tests.fakes.fake_gemini.FakeGemini`
through ``google.genai.Client``, lists the models with both, and checks the error bodies parse
as the SDKs' own error types.  It prints what the SDKs saw and exits 1 on any difference.
"""

from __future__ import annotations

import sys
from typing import Any

from tests.fakes.fake_anthropic import FakeAnthropic
from tests.fakes.fake_gemini import FakeGemini


def check_anthropic() -> list[str]:
    import anthropic

    problems: list[str] = []
    usage = {
        "input_tokens": 5,
        "output_tokens": 7,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
    }
    reply = {
        "thinking": "Let me think.",
        "text": "Reading.",
        "tools": [{"name": "read_file", "args": {"path": "a.txt"}}, {"name": "ls"}],
        "usage": usage,
    }
    with FakeAnthropic([reply], require_api_key="k1") as fake:
        client = anthropic.Anthropic(api_key="k1", base_url=fake.base_url, max_retries=0)
        with client.messages.stream(
            model="fake-model", max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            message = stream.get_final_message()
        kinds = [block.type for block in message.content]
        if kinds != ["thinking", "text", "tool_use", "tool_use"]:
            problems.append(f"anthropic: blocks {kinds}")
        tool: Any = message.content[2]
        if tool.input != {"path": "a.txt"} or message.stop_reason != "tool_use":
            problems.append(f"anthropic: tool {tool!r}, stop {message.stop_reason}")
        if message.usage.cache_read_input_tokens != 100 or message.usage.output_tokens != 7:
            problems.append(f"anthropic: usage {message.usage!r}")
        if [m.id for m in client.models.list().data] != ["fake-model"]:
            problems.append("anthropic: model list")
        try:
            anthropic.Anthropic(
                api_key="bad", base_url=fake.base_url, max_retries=0
            ).messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
            problems.append("anthropic: a bad key was accepted")
        except anthropic.AuthenticationError:
            pass
        print("anthropic:", message.model_dump_json()[:300])
    return problems


def check_gemini() -> list[str]:
    from google import genai
    from google.genai import errors, types

    problems: list[str] = []
    reply = {
        "thinking": "Pondering.",
        "text": "Reading.",
        "tools": [{"name": "read_file", "args": {"path": "a.txt"}}],
        "thought_signature": "c2ln",
    }
    quota = {"error_status": 429, "retry_delay": "0.1s", "message": "slow"}
    with FakeGemini([reply, quota], require_api_key="g1") as fake:
        client = genai.Client(api_key="g1", http_options=types.HttpOptions(base_url=fake.base_url))
        chunks = list(client.models.generate_content_stream(model="fake-model", contents="hi"))
        parts = [p for c in chunks for p in (c.candidates[0].content.parts or [])]
        if not any(p.thought for p in parts) or not any(p.function_call for p in parts):
            problems.append(f"gemini: parts {parts!r}")
        call = next(p for p in parts if p.function_call)
        if call.function_call.args != {"path": "a.txt"} or call.thought_signature != b"sig":
            problems.append(f"gemini: call {call!r}")
        if chunks[-1].candidates[0].finish_reason != types.FinishReason.STOP:
            problems.append("gemini: finish reason")
        if [m.name for m in client.models.list()] != ["models/fake-model"]:
            problems.append("gemini: model list")
        try:
            list(client.models.generate_content_stream(model="fake-model", contents="hi"))
            problems.append("gemini: the 429 was not an error")
        except errors.ClientError as exc:
            if exc.code != 429:
                problems.append(f"gemini: 429 became {exc.code}")
        print("gemini:", [p.model_dump(exclude_none=True) for p in parts])
    return problems


def main() -> int:
    problems = check_anthropic() + check_gemini()
    for problem in problems:
        print("DIFFERENT:", problem)
    print("ok" if not problems else f"{len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
