"""Anthropic and Gemini keys get the same protection as the OpenAI key.

Sessions run against each API's fake server with a canary key in ``ANTHROPIC_API_KEY`` /
``GEMINI_API_KEY`` (or ``--openai-api-key``); the model runs ``env`` and echoes the variable.
stdout, stderr and every file under the run's directories are searched for the canary,
including runs that fail with a server echoing the key.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from headwire.runtime import environment
from headwire.runtime.models.anthropic import AnthropicModel
from headwire.runtime.models.gemini import GeminiModel
from tests.e2e.providers import PROVIDERS
from tests.security.helpers import run_headwire
from tests.security.test_secrets import _leaks, _tool_texts

CANARY = "sk-canary-provider-5c2e9a7f1d3b4e60"
PROVIDER_NAMES = ["anthropic", "gemini"]


def _shell(var: str) -> dict[str, Any]:
    return {"tool": "run_shell_command", "args": {"command": f"env; echo key=${var}"}}


@pytest.mark.parametrize("how", ["env", "flag"])
@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_a_working_session_leaks_no_key(tmp_path: Path, provider: str, how: str) -> None:
    spec = PROVIDERS[provider]
    env = {"MY_COPY_OF_THE_KEY": CANARY}
    flag: list[str] = []
    with spec.fake([_shell(spec.key_var), {"text": "done"}], require_api_key=CANARY) as fake:
        env.update(spec.env(fake, CANARY))
        if how == "flag":
            del env[spec.key_var]
            flag = ["--openai-api-key", CANARY]
        proc = run_headwire(
            [*spec.flags(), *flag, "--yolo", "-o", "stream-json", "-d", "-p", "print env"],
            tmp_path,
            env=env,
        )
    assert proc.returncode == 0, proc.stderr
    (text,) = _tool_texts(proc.lines())
    assert "PATH=" in text and "MY_COPY_OF_THE_KEY" not in text
    assert f"{spec.key_var}=" not in text and text.rstrip().endswith("key=")
    assert _leaks(tmp_path, proc.stdout, proc.stderr, CANARY) == []


FAILURES: dict[str, list[dict[str, Any]]] = {
    "bad-key-echoed": [],
    "500-echo": [{"error_status": 500, "message": "upstream rejected {key}", "retry_after": 0}] * 4,
    "raw-body-echo": [{"error_status": 503, "error_body": "gateway; key={key}", "retry_after": 0}]
    * 4,
}


@pytest.mark.parametrize("case", sorted(FAILURES))
@pytest.mark.parametrize("provider", PROVIDER_NAMES)
def test_failing_sessions_leak_no_key(tmp_path: Path, provider: str, case: str) -> None:
    spec = PROVIDERS[provider]
    replies = [
        {k: (v.format(key=CANARY) if isinstance(v, str) else v) for k, v in r.items()}
        for r in FAILURES[case]
    ]
    required = "sk-the-right-key-000000" if case == "bad-key-echoed" else None
    script: Any = {"replies": replies, "default": replies[-1]} if replies else []
    with spec.fake(script, require_api_key=required) as fake:
        proc = run_headwire(
            [*spec.flags(), "-d", "-o", "stream-json", "-p", "hello"],
            tmp_path,
            env=spec.env(fake, CANARY),
        )
    assert proc.returncode == 1, proc.stderr
    result = proc.lines()[-1]
    assert result["type"] == "result" and result["is_error"] is True
    assert "***" in result["error"]["message"]  # the echo is there, redacted
    assert _leaks(tmp_path, proc.stdout, proc.stderr, CANARY) == []


def test_provider_keys_are_scrubbed_from_tool_environments(monkeypatch: pytest.MonkeyPatch) -> None:
    base = {"ANTHROPIC_API_KEY": "a", "GEMINI_API_KEY": "g", "OPENAI_API_KEY": "o", "KEEP": "1"}
    assert environment.tool_environment(base) == {"KEEP": "1"}
    monkeypatch.setattr(environment, "_secret_values", set())
    AnthropicModel("http://127.0.0.1:1", "sk-anthropic-registered-1", "m")
    GeminiModel("http://127.0.0.1:1", "AIza-gemini-registered-2", "m")
    scrubbed = environment.tool_environment(
        {"A": "sk-anthropic-registered-1", "G": "x=AIza-gemini-registered-2", "KEEP": "1"}
    )
    assert scrubbed == {"KEEP": "1"}
