"""``model.generationConfig.reasoning`` end to end: a settings file, a real run against each
API's fake server, the request body it received.

The keys that carry thinking (OpenAI's ``reasoning``/``reasoning_effort``, Anthropic's
``thinking`` and ``output_config``, Gemini's ``thinkingConfig``) are compared with what
upstream Qwen Code 0.24.4 sent with the same settings, committed in
``tests/data/reasoning/upstream-0.24.4.json`` (with ``HEADWIRE_ORACLE_PKG_DIR`` upstream is
run live and must still send what the capture says; ``HEADWIRE_WRITE_CAPTURE=1`` rewrites
it).  Left out on purpose: upstream turns Anthropic's thinking on by default with a budget of
its own (an effort without ``budget_tokens`` gets 64,000 tokens) and sends ``temperature: 1``,
which headwire does not, so the Anthropic cases set ``budget_tokens`` or turn thinking off, and
their temperature is not compared.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import UPSTREAM_ENTRY, check_capture, each_case, env_for, needs_upstream
from tests.e2e.providers import PROVIDERS
from tests.paths import ROOT

CAPTURE = ROOT / "tests" / "data" / "reasoning" / "upstream-0.24.4.json"

_HIGH = {"effort": "high"}
_LOW_BUDGET = {"effort": "low", "budget_tokens": 5000}
_SAMPLING = {"temperature": 0.5}

CASES: dict[str, tuple[str, str, dict[str, Any]]] = {
    "openai effort": ("openai", "m", {"reasoning": _HIGH}),
    "openai effort and budget": ("openai", "m", {"reasoning": _LOW_BUDGET}),
    "openai off": ("openai", "m", {"reasoning": False}),
    "openai with sampling": ("openai", "m", {"reasoning": _HIGH, "samplingParams": _SAMPLING}),
    "gpt-5 effort": ("openai", "gpt-5", {"reasoning": _HIGH}),
    "gpt-5 with sampling": ("openai", "gpt-5", {"reasoning": _HIGH, "samplingParams": _SAMPLING}),
    "gpt-5.1 off": ("openai", "gpt-5.1", {"reasoning": False}),
    "gpt-5 off": ("openai", "gpt-5", {"reasoning": False}),
    "anthropic effort and budget": ("anthropic", "claude-sonnet-4-5", {"reasoning": _LOW_BUDGET}),
    "anthropic off": ("anthropic", "claude-sonnet-4-5", {"reasoning": False}),
    "gemini effort": ("gemini", "gemini-2.5-pro", {"reasoning": _HIGH}),
    "gemini effort and budget": ("gemini", "gemini-2.5-pro", {"reasoning": _LOW_BUDGET}),
    "gemini off": ("gemini", "gemini-2.5-pro", {"reasoning": False}),
}
_KEYS = ("reasoning", "reasoning_effort", "thinking", "output_config", "temperature")


def run_case(tmp: Path, which: str, case: str) -> dict[str, Any]:
    """The thinking keys of the first request of one run of ``which`` for ``case``."""
    provider, model, generation = CASES[case]
    spec = PROVIDERS[provider]
    home, proj = tmp / which / "home", tmp / which / "proj"
    proj.mkdir(parents=True)
    folder = ".qwen" if which == "upstream" else ".headwire"
    (home / folder).mkdir(parents=True)
    settings = {
        "model": {"generationConfig": generation},
        "security": {"auth": {"selectedType": provider}},
    }
    (home / folder / "settings.json").write_text(json.dumps(settings))
    argv = ["-m", model, "-o", "json", "-p", "hi"]
    with spec.fake([{"text": "done"}] * 4) as fake:
        if which == "upstream":
            env = {"PATH": os.environ["PATH"], "HOME": str(home), "NO_COLOR": "1"}
            command = ["node", str(UPSTREAM_ENTRY), *argv]
        else:
            env = env_for(home)
            command = [sys.executable, "-m", "headwire", *argv]
        env.update(spec.env(fake), LANG="C.UTF-8")
        done = subprocess.run(command, cwd=proj, env=env, capture_output=True, timeout=300)
        body = fake.requests[0] if fake.requests else {}
    assert done.returncode == 0, done.stderr.decode()[-2000:] + done.stdout.decode()[-500:]
    if provider == "gemini":
        return {"thinkingConfig": body.get("generationConfig", {}).get("thinkingConfig")}
    keys = _KEYS if provider == "openai" else _KEYS[:-1]  # upstream's Anthropic default: 1
    return {key: body[key] for key in keys if key in body}


def test_each_provider_gets_the_thinking_keys_upstream_sends(tmp_path: Path) -> None:
    """Without the oracle: headwire sends what the capture says upstream sent, case by case."""
    expected = json.loads(CAPTURE.read_text())
    for case in CASES:
        got = run_case(tmp_path / case.replace(" ", "-"), "headwire", case)
        assert got == expected[case], case


@pytest.mark.slow  # the Node CLI takes seconds to start
@needs_upstream
def test_upstream_sends_what_the_capture_says(tmp_path: Path) -> None:
    got = each_case(
        lambda case: run_case(tmp_path / case.replace(" ", "-"), "upstream", case), CASES
    )
    check_capture(CAPTURE, got)
