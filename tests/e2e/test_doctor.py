"""``headwire doctor`` against each API's fake server, and against nothing at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import run_cli
from tests.e2e.providers import KEY, NAMES, PROVIDERS

GOOD = [{"text": "ready"}, {"tool": "doctor_echo", "args": {"text": "ping"}}]
CHECKS = ["reachable", "model", "streaming", "tool calls", "usage"]


def doctor(provider: str, fake: Any, tmp: Path, *extra: str, **env: str) -> Any:
    spec = PROVIDERS[provider]
    return run_cli(
        ["doctor", "--auth-type", provider, "-m", "fake-model", *extra],
        tmp,
        **{**spec.env(fake), **env},
    )


def report(stdout: bytes) -> dict[str, tuple[str, str]]:
    """``check name -> (mark, detail)`` from the report lines."""
    lines = stdout.decode().splitlines()[1:]
    return {line[6:17].strip(): (line[:5].strip(), line[18:]) for line in lines}


@pytest.mark.parametrize("provider", NAMES)
def test_a_working_endpoint_passes_every_check(tmp_path: Path, provider: str) -> None:
    with PROVIDERS[provider].fake(GOOD, require_api_key=KEY) as fake:
        proc = doctor(provider, fake, tmp_path)
        sent = [entry["reply_index"] for entry in fake.log if entry["method"] == "POST"]
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr
    header, *_ = proc.stdout.decode().splitlines()
    assert header.startswith(f"headwire doctor: {provider} at http://127.0.0.1:")
    assert header.endswith(f"model fake-model (key from {PROVIDERS[provider].key_var})")
    checks = report(proc.stdout)
    assert list(checks) == CHECKS and all(mark == "ok" for mark, _ in checks.values())
    assert checks["tool calls"][1] == 'doctor_echo called with {"text":"ping"}'
    assert checks["usage"][1] == "11 input, 3 output, 14 total tokens"
    assert sent == [0, 1]
    assert KEY not in proc.stdout.decode() + proc.stderr


@pytest.mark.parametrize("provider", NAMES)
def test_an_unreachable_endpoint_is_one_line(tmp_path: Path, provider: str) -> None:
    spec = PROVIDERS[provider]
    proc = run_cli(
        ["doctor", "--auth-type", provider, "-m", "m"], tmp_path, **spec.unreachable_env()
    )
    assert proc.returncode == 1
    _header, line = proc.stdout.decode().splitlines()
    assert line.startswith(f"headwire doctor: {provider}: Cannot reach model server at ")
    assert "Traceback" not in proc.stderr


def test_what_does_not_work_is_said(tmp_path: Path) -> None:
    script = [
        {"text": "ready", "usage": None},
        {
            "error_status": 400,
            "message": "registry.ollama.ai/library/gemma3:4b does not support tools",
        },
    ]
    with PROVIDERS["openai"].fake(script, model="another-model") as fake:
        proc = doctor("openai", fake, tmp_path)
    assert proc.returncode == 1
    checks = report(proc.stdout)
    assert checks["reachable"][0] == "ok" and checks["streaming"][0] == "ok"
    assert checks["model"] == ("FAIL", "fake-model is not among the 1 listed: another-model")
    mark, detail = checks["tool calls"]
    assert mark == "FAIL" and detail.startswith("Model server does not support tool calls")
    assert checks["usage"] == ("FAIL", "not reported by the server")


def test_a_model_that_answers_in_text_fails_the_tool_check(tmp_path: Path) -> None:
    with PROVIDERS["anthropic"].fake([{"text": "ready"}, {"text": "I would call it."}]) as fake:
        proc = doctor("anthropic", fake, tmp_path)
    assert proc.returncode == 1
    assert report(proc.stdout)["tool calls"] == (
        "FAIL",
        "the model answered in text instead of calling the tool",
    )


def test_text_tool_calls_count_when_asked_for(tmp_path: Path) -> None:
    written = '<tool_call>{"name": "doctor_echo", "arguments": {"text": "ping"}}</tool_call>'
    script = [{"text": "ready"}, {"text": written}]
    with PROVIDERS["openai"].fake(script) as fake:
        proc = doctor("openai", fake, tmp_path, "--parse-text-tool-calls")
    assert proc.returncode == 0, proc.stdout.decode()
    assert report(proc.stdout)["tool calls"][0] == "ok"


@pytest.mark.parametrize("provider", NAMES)
def test_a_bad_key_fails_the_answers_without_showing_it(tmp_path: Path, provider: str) -> None:
    wrong = "sk-doctor-wrong-key-1234567890"
    with PROVIDERS[provider].fake(GOOD, require_api_key=KEY) as fake:
        proc = doctor(provider, fake, tmp_path, **{PROVIDERS[provider].key_var: wrong})
    assert proc.returncode == 1
    checks = report(proc.stdout)
    assert checks["streaming"][0] == "FAIL" and "HTTP 40" in checks["streaming"][1]
    assert wrong not in proc.stdout.decode() + proc.stderr


def test_configuration_errors_are_usage_errors(tmp_path: Path) -> None:
    proc = run_cli(["doctor", "--auth-type", "vertex-ai", "-m", "m"], tmp_path)
    assert proc.returncode == 2
    assert "--auth-type vertex-ai is not supported" in proc.stderr
    proc = run_cli(["doctor", "--auth-type", "anthropic"], tmp_path)
    assert proc.returncode == 2 and "ANTHROPIC_MODEL" in proc.stderr


def test_a_call_written_as_text_is_answered_with_the_flag_that_reads_it(tmp_path: Path) -> None:
    written = '<tool_call>{"name": "doctor_echo", "arguments": {"text": "ping"}}</tool_call>'
    with PROVIDERS["openai"].fake([{"text": "ready"}, {"text": written}]) as fake:
        proc = doctor("openai", fake, tmp_path)
    assert proc.returncode == 1
    mark, detail = report(proc.stdout)["tool calls"]
    assert mark == "FAIL" and "--parse-text-tool-calls" in detail
    assert "model.parseTextToolCalls" in detail


def test_the_settings_files_choose_as_for_a_run(tmp_path: Path) -> None:
    """The user settings' model.name, its modelProviders entry (server, key from envKey,
    custom header) and a --settings value are what the doctor probes, as a run would."""
    import json

    from tests.fakes.fake_openai import FakeOpenAI

    with FakeOpenAI(GOOD, model="team-model", require_api_key="sk-entry-key") as fake:
        entry = {
            "id": "team-model",
            "envKey": "TEAM_KEY",
            "baseUrl": fake.base_url,
            "generationConfig": {"customHeaders": {"X-Team": "t1"}},
        }
        user = tmp_path / "home" / ".headwire"
        user.mkdir(parents=True)
        (user / "settings.json").write_text(
            json.dumps({"modelProviders": {"openai": [entry]}, "model": {"name": "team-model"}})
        )
        proc = run_cli(
            ["doctor", "--settings", '{"security": {"auth": {"selectedType": "openai"}}}'],
            tmp_path,
            TEAM_KEY="sk-entry-key",
        )
        headers = [{k.lower(): v for k, v in h.items()} for h in fake.request_headers]
    assert proc.returncode == 0, proc.stdout.decode() + proc.stderr
    header = proc.stdout.decode().splitlines()[0]
    assert header.endswith("model team-model (key from TEAM_KEY)"), header
    assert headers and all(h.get("x-team") == "t1" for h in headers)
    assert "sk-entry-key" not in proc.stdout.decode() + proc.stderr
