"""Choosing the provider: flags, settings and environment, in Qwen Code's order."""

from __future__ import annotations

import subprocess
import sys

import pytest

from headwire.runtime.models.anthropic import AnthropicModel
from headwire.runtime.models.gemini import GeminiModel
from headwire.runtime.models.openai import OpenAIModel
from headwire.runtime.models.scripted import ScriptedModel
from headwire.runtime.models.select import (
    ProviderChoice,
    ProviderConfigError,
    detect_auth_type,
    is_local_url,
    make_model,
    missing_key_warning,
    resolve_provider,
    select_model,
)
from tests.paths import SRC

FULL_ENV = {
    "OPENAI_API_KEY": "ko",
    "OPENAI_MODEL": "mo",
    "OPENAI_BASE_URL": "http://o/v1",
    "ANTHROPIC_API_KEY": "ka",
    "ANTHROPIC_MODEL": "ma",
    "ANTHROPIC_BASE_URL": "http://a",
    "GEMINI_API_KEY": "kg",
    "GEMINI_MODEL": "mg",
    "GOOGLE_GEMINI_BASE_URL": "http://g",
}


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        (FULL_ENV, "openai"),
        ({k: v for k, v in FULL_ENV.items() if k != "OPENAI_BASE_URL"}, "gemini"),
        (
            {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_MODEL": "m", "ANTHROPIC_BASE_URL": "u"},
            "anthropic",
        ),
        ({"ANTHROPIC_API_KEY": "k"}, "anthropic"),  # the only key there is
        ({"GEMINI_API_KEY": "k"}, "gemini"),
        ({"GEMINI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}, None),  # ambiguous
        ({"GEMINI_API_KEY": "k", "OPENAI_BASE_URL": "http://local/v1"}, None),
        ({"OPENAI_API_KEY": " ", "GEMINI_API_KEY": "k"}, "gemini"),  # blank is unset
        ({}, None),
    ],
)
def test_the_environment_selects_like_qwen_code(env: dict[str, str], expected: str | None) -> None:
    assert detect_auth_type(env) == expected


def test_flags_win_then_settings_then_the_environment() -> None:
    settings = ProviderChoice(
        auth_type="gemini", model="m-set", api_key="k-set", base_url="http://s"
    )
    config = resolve_provider(ProviderChoice(auth_type="anthropic"), FULL_ENV, settings)
    assert (config.auth_type, config.model, config.api_key, config.base_url) == (
        "anthropic",
        "ma",
        "ka",
        "http://a",
    )
    assert config.sources == {
        "auth_type": "--auth-type",
        "model": "ANTHROPIC_MODEL",
        "api_key": "ANTHROPIC_API_KEY",
        "base_url": "ANTHROPIC_BASE_URL",
    }
    config = resolve_provider(ProviderChoice(), {}, settings)
    assert (config.auth_type, config.model, config.api_key, config.base_url) == (
        "gemini",
        "m-set",
        "k-set",
        "http://s",
    )
    assert set(config.sources.values()) == {"settings"}
    flags = ProviderChoice(
        auth_type="gemini",
        model="m-flag",
        api_key="k-flag",
        base_url="http://f/",
        thinking_budget=9,
    )
    config = resolve_provider(flags, FULL_ENV, settings)
    assert (config.model, config.api_key, config.base_url, config.thinking_budget) == (
        "m-flag",
        "k-flag",
        "http://f",
        9,
    )
    assert "k-flag" not in repr(config)


def test_defaults_and_aliases() -> None:
    config = resolve_provider(ProviderChoice(), {"QWEN_MODEL": "q", "OPENAI_API_KEY": "k"})
    assert (config.auth_type, config.model, config.api_key) == ("openai", "q", "k")
    assert config.base_url == "https://api.openai.com/v1"
    config = resolve_provider(
        ProviderChoice(auth_type="gemini", model="g"), {"GEMINI_API_KEY": "k"}
    )
    assert config.base_url == "https://generativelanguage.googleapis.com"
    config = resolve_provider(
        ProviderChoice(auth_type="anthropic", model="c"), {"ANTHROPIC_API_KEY": "k"}
    )
    assert config.base_url == "https://api.anthropic.com"


@pytest.mark.parametrize(
    ("flags", "env", "message"),
    [
        (ProviderChoice(auth_type="vertex-ai", model="m"), {}, "use openai, anthropic or gemini"),
        (ProviderChoice(auth_type="anthropic"), {"ANTHROPIC_API_KEY": "k"}, "ANTHROPIC_MODEL"),
        (ProviderChoice(), {}, "OPENAI_MODEL or QWEN_MODEL"),
        (ProviderChoice(auth_type="gemini", model="m"), {}, "set GEMINI_API_KEY"),
        (ProviderChoice(model="m"), {}, "set OPENAI_API_KEY .* or OPENAI_BASE_URL"),
        (ProviderChoice(model="m", base_url="ftp://x"), {}, "http:// or https://"),
    ],
)
def test_configuration_errors(flags: ProviderChoice, env: dict[str, str], message: str) -> None:
    with pytest.raises(ProviderConfigError, match=message):
        resolve_provider(flags, env)


def test_a_local_endpoint_needs_no_key() -> None:
    config = resolve_provider(
        ProviderChoice(auth_type="anthropic", model="m", base_url="http://127.0.0.1:1"), {}
    )
    assert config.api_key is None


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:11434/v1", True),
        ("http://localhost:8000", True),
        ("http://[::1]:1/v1", True),
        ("http://192.168.1.20:1234/v1", True),
        ("http://10.0.0.5/v1", True),
        ("http://gpu.internal/v1", True),
        ("http://box.local:8080", True),
        ("https://api.openai.com/v1", False),
        ("https://8.8.8.8/v1", False),
        ("https://llm.example.com/v1", False),
    ],
)
def test_no_key_warning_for_a_local_or_private_server(url: str, local: bool) -> None:
    config = resolve_provider(ProviderChoice(model="m", base_url=url), {})
    assert is_local_url(url) is local
    assert (missing_key_warning(config) is None) is local


def test_the_model_classes() -> None:
    made = {
        kind: make_model(
            resolve_provider(ProviderChoice(auth_type=kind, model="m", api_key="k"), {})
        )
        for kind in ("openai", "anthropic", "gemini")
    }
    assert isinstance(made["openai"], OpenAIModel)
    assert isinstance(made["anthropic"], AnthropicModel)
    assert isinstance(made["gemini"], GeminiModel)
    choice = ProviderChoice(model="m", api_key="k", parse_text_tool_calls=True)
    text = make_model(resolve_provider(choice, {}))
    assert isinstance(text, OpenAIModel) and text.parse_text_tool_calls
    scripted = select_model(ProviderChoice(model="scripted:done", auth_type="gemini"), {})
    assert isinstance(scripted, ScriptedModel)
    assert isinstance(select_model(ProviderChoice(), {"OPENAI_MODEL": "scripted"}), ScriptedModel)


def test_only_the_chosen_provider_is_imported() -> None:
    code = (
        "import sys; from headwire.runtime.models.select import *; "
        "make_model(resolve_provider(ProviderChoice(auth_type='anthropic', model='m', "
        "api_key='k'), {})); "
        "print(sorted(m for m in sys.modules if m.startswith('headwire.runtime.models.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(SRC)},
    ).stdout
    assert "headwire.runtime.models.anthropic" in out
    assert "headwire.runtime.models.gemini" not in out
    assert "headwire.runtime.models.openai" not in out
