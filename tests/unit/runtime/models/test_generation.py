"""``model.generationConfig``'s request controls: read from settings, resolved with the
environment, and put on each provider's requests (:mod:`headwire.runtime.models.generation`)."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.models.anthropic import AnthropicModel
from headwire.runtime.models.base import ModelRequest
from headwire.runtime.models.gemini import GeminiModel
from headwire.runtime.models.generation import (
    DEFAULT_MAX_RETRY_DELAY_S,
    DEFAULT_STREAM_IDLE_TIMEOUT_S,
    RESERVED_BODY_KEYS,
    GenerationConfig,
    GenerationConfigError,
)
from headwire.runtime.models.openai import OpenAIModel

REQUEST = ModelRequest("m", [{"role": "user", "content": "hi"}], [])


def _config(values: dict[str, Any]) -> GenerationConfig:
    return GenerationConfig.from_mapping("model.generationConfig", values)


def _body(model: Any) -> dict[str, Any]:
    body: dict[str, Any] = json.loads(model._prepare(REQUEST).body)
    return body


def test_nothing_set_gives_only_the_idle_timeout() -> None:
    """Qwen Code's 240 s between streamed bytes, however long ``timeout`` is."""
    expected = {"stream_idle_timeout_s": DEFAULT_STREAM_IDLE_TIMEOUT_S}
    assert DEFAULT_STREAM_IDLE_TIMEOUT_S == 240.0
    assert GenerationConfig().client_options({}) == expected
    assert _config({}).client_options({}) == expected
    assert _config({"timeout": 600000}).client_options({}) == {"timeout_s": 600.0, **expected}


def test_each_key_becomes_its_client_option() -> None:
    config = _config(
        {
            "timeout": 60000,
            "streamIdleTimeoutMs": 300000,
            "maxRetries": 5,
            "retryInitialDelayMs": 3000,
            "retryMaxDelayMs": 30000,
            "customHeaders": {"X-Client-Request-ID": "req-123"},
            "samplingParams": {"temperature": 0.2, "max_tokens": 4096},
            "extra_body": {"enable_thinking": True},
        }
    )
    assert config.client_options({}) == {
        "timeout_s": 60.0,
        "stream_idle_timeout_s": 300.0,
        "max_retries": 5,
        "retry_base_delay_s": 3.0,
        "max_retry_delay_s": 30.0,
        "extra_headers": {"X-Client-Request-ID": "req-123"},
        "sampling_params": {"temperature": 0.2, "max_tokens": 4096},
        "extra_body": {"enable_thinking": True},
    }


def test_zero_is_no_timeout() -> None:
    options = _config({"timeout": 0, "streamIdleTimeoutMs": 0}).client_options({})
    assert options == {"timeout_s": math.inf, "stream_idle_timeout_s": math.inf}


@pytest.mark.parametrize(
    ("setting", "variable", "expected"),
    [
        (60000, "5000", 5.0),  # QWEN_CODE_API_TIMEOUT_MS wins over the setting (as upstream)
        (None, "5000", 5.0),
        (60000, " 7000 ", 7.0),  # trimmed
        (60000, "5e3", 60.0),  # digits only: anything else is ignored
        (60000, "-1", 60.0),
        (60000, "", 60.0),
        (None, "0", math.inf),
    ],
)
def test_the_timeout_variable_wins_over_the_setting(
    setting: int | None, variable: str, expected: float
) -> None:
    env = {"QWEN_CODE_API_TIMEOUT_MS": variable}
    assert _config({"timeout": setting}).client_options(env)["timeout_s"] == expected


def test_the_idle_setting_wins_over_its_variable() -> None:
    env = {"QWEN_STREAM_IDLE_TIMEOUT_MS": "1000"}
    assert _config({}).client_options(env) == {"stream_idle_timeout_s": 1.0}
    options = _config({"streamIdleTimeoutMs": 9000}).client_options(env)
    assert options == {"stream_idle_timeout_s": 9.0}


@given(
    st.sampled_from(["samplingParams", "extra_body"]),
    st.sets(st.sampled_from(sorted(RESERVED_BODY_KEYS)), min_size=1),
)
def test_a_body_key_headwire_writes_is_refused(where: str, keys: set[str]) -> None:
    """No settings value can replace ``model``, ``messages``, ``tools``, ``stream`` or
    ``stream_options``; the message names the setting and every such key."""
    with pytest.raises(GenerationConfigError) as caught:
        _config({where: {key: 1 for key in keys} | {"temperature": 0.5}})
    message = str(caught.value)
    assert message.startswith(f"model.generationConfig.{where}: ")
    assert all(key in message for key in keys)
    with pytest.raises(GenerationConfigError):  # a library user is refused the same way
        OpenAIModel("http://127.0.0.1:9/v1", None, "m", sampling_params={k: 1 for k in keys})


def test_openai_sends_sampling_params_then_extra_body_as_they_are() -> None:
    model = OpenAIModel(
        "http://127.0.0.1:9/v1",
        None,
        "m",
        sampling_params={"temperature": 0.2, "top_p": 0.8, "max_completion_tokens": 99},
        extra_body={"enable_thinking": True, "temperature": 0.3},
        extra_headers={"X-Test": "1", "User-Agent": "mine"},
    )
    body = _body(model)
    assert body["model"] == "m" and body["stream"] is True and body["messages"]
    assert body["top_p"] == 0.8 and body["max_completion_tokens"] == 99
    assert body["enable_thinking"] is True
    assert body["temperature"] == 0.3  # extra_body is written after samplingParams
    headers = model._prepare(REQUEST).headers
    assert headers["X-Test"] == "1" and headers["User-Agent"] == "mine"


def test_anthropic_takes_its_sampling_keys_and_max_tokens() -> None:
    model = AnthropicModel(
        "http://127.0.0.1:9",
        "k",
        "claude",
        sampling_params={"temperature": 0.1, "top_k": 5, "max_tokens": 2048, "n": 3},
        extra_headers={"X-Test": "1"},
    )
    body = _body(model)
    assert body["max_tokens"] == 2048 and body["temperature"] == 0.1 and body["top_k"] == 5
    assert "n" not in body and "top_p" not in body
    assert model._prepare(REQUEST).headers["X-Test"] == "1"
    flag = AnthropicModel("http://127.0.0.1:9", "k", "claude", sampling_params={"max_tokens": True})
    assert _body(flag)["max_tokens"] == 8192  # a boolean is not a token count
    plain = _body(AnthropicModel("http://127.0.0.1:9", "k", "claude"))
    assert "temperature" not in plain and plain["max_tokens"] > 0


def test_gemini_puts_them_in_its_generation_config() -> None:
    model = GeminiModel(
        "http://127.0.0.1:9",
        "k",
        "gemini-2.0-flash",
        thinking_budget=128,
        sampling_params={"temperature": 0.4, "top_p": 0.9, "top_k": 7, "max_tokens": 512},
    )
    generation = _body(model)["generationConfig"]
    assert generation["temperature"] == 0.4 and generation["topP"] == 0.9
    assert generation["topK"] == 7 and generation["maxOutputTokens"] == 512
    assert generation["thinkingConfig"]["thinkingBudget"] == 128
    assert "generationConfig" not in _body(GeminiModel("http://127.0.0.1:9", "k", "gemini-1.5"))


def test_retry_waits_double_up_to_the_maximum_and_follow_a_server_within_it() -> None:
    model = OpenAIModel(
        "http://127.0.0.1:9/v1", None, "m", retry_base_delay_s=3.0, max_retry_delay_s=30.0
    )
    assert [model._retry_delay(n, None) for n in range(6)] == [3, 6, 12, 24, 30, 30]
    assert model._retry_delay(0, 25.0) == 25.0  # a server's Retry-After within the maximum
    assert model._retry_delay(0, 90.0) == 3.0  # beyond both maximums: the model's own wait
    default = OpenAIModel("http://127.0.0.1:9/v1", None, "m")
    assert default._retry_delay(200, None) == DEFAULT_MAX_RETRY_DELAY_S  # no overflow
    assert default._retry_delay(0, 59.0) == 59.0 and default._retry_delay(0, 61.0) == 0.5


def test_a_credential_header_is_a_secret_and_other_headers_are_not() -> None:
    """A gateway token in ``customHeaders`` is kept from tools and scrubbed from output like the
    API key; an ordinary header value is not (it would hide innocent text)."""
    from headwire.runtime.environment import registered_secrets

    OpenAIModel(
        "http://127.0.0.1:9/v1",
        None,
        "m",
        extra_headers={
            "Authorization": "Bearer gw-token-0123456789",
            "X-Portkey-Api-Key": "pk-abcdefghijkl",
            "X-Client-Request-ID": "req-123456789",
        },
    )
    secrets = registered_secrets()
    assert {"Bearer gw-token-0123456789", "gw-token-0123456789", "pk-abcdefghijkl"} <= secrets
    assert "req-123456789" not in secrets


@pytest.mark.parametrize(
    ("headers", "says"),
    [
        ({"Content-Length": "5"}, "Content-Length frames the HTTP request"),
        ({"host": "elsewhere.example"}, "host frames the HTTP request"),
        ({"Transfer-Encoding": "chunked"}, "frames the HTTP request"),
        ({"Bad Name": "x"}, "'Bad Name' is not an HTTP header name"),
        ({"X-Test": "a\r\nInjected: 1"}, "X-Test holds a control character"),
        ({"X-Test": "nul\x00"}, "X-Test holds a control character"),
        ({"X-Test": "café"}, "outside ASCII"),
        ({"X-Test": "lone \ud800"}, "outside ASCII"),
    ],
)
def test_a_header_http_does_not_allow_here_is_refused(headers: dict[str, str], says: str) -> None:
    """Refused when the settings are read (exit 2), not when the first request fails; a
    library user gets the same error from the client."""
    with pytest.raises(GenerationConfigError, match=re.escape(says)):
        _config({"customHeaders": headers})
    with pytest.raises(GenerationConfigError, match=re.escape(says)):
        OpenAIModel("http://127.0.0.1:9/v1", None, "m", extra_headers=headers)
    assert _config({"customHeaders": {"X-Test": "tab\tis fine", "Accept": "*/*"}})


def test_enable_cache_control_false_turns_anthropic_prompt_caching_off() -> None:
    """``enableCacheControl: false`` (Qwen Code's key) sends no ``cache_control`` mark; the
    default keeps them; another provider is not given the option."""
    from headwire.runtime.models.select import ProviderConfig, make_model

    assert _config({"enableCacheControl": False}).client_options({})["prompt_caching"] is False
    request = ModelRequest(
        "claude",
        [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
        [{"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}],
    )

    def marks(model: Any) -> int:
        body: bytes = model._prepare(request).body
        return body.count(b"cache_control")

    assert marks(AnthropicModel("http://127.0.0.1:9", "k", "claude")) > 0
    assert marks(AnthropicModel("http://127.0.0.1:9", "k", "claude", prompt_caching=False)) == 0
    options = _config({"enableCacheControl": False}).client_options({})
    for auth_type in ("openai", "gemini"):
        config = ProviderConfig(auth_type, "m", "http://127.0.0.1:9", api_key="k")
        assert make_model(config, **options)  # the option is not passed on: no TypeError


def test_the_session_id_placeholder_is_filled_with_consent_or_the_header_dropped() -> None:
    from headwire.runtime.models.generation import GenerationConfig, GenerationConfigError

    config = GenerationConfig.from_mapping(
        "g", {"customHeaders": {"X-Session": "s=${session_id};v=1", "X-Other": "o"}}
    )
    assert config.dynamic_headers() == ["X-Session"]
    given = config.client_options({}, session_id="abc-123")["extra_headers"]
    assert given == {"X-Session": "s=abc-123;v=1", "X-Other": "o"}
    assert config.client_options({})["extra_headers"] == {"X-Other": "o"}
    with pytest.raises(GenerationConfigError, match="control character"):
        config.client_options({}, session_id="a\r\nInjected: 1")
