"""``modelProviders`` read into a catalog, and a run's model found in it (pure)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.models.catalog import RESPONSES, CatalogError, read_catalog
from headwire.runtime.models.generation import GenerationConfig
from headwire.runtime.models.select import (
    ProviderChoice,
    ProviderConfigError,
    missing_key_warning,
    resolve_provider,
)


def _entry(model: str = "m", **more: Any) -> dict[str, Any]:
    return {"id": model, **more}


def test_every_skipped_provider_and_entry_is_named() -> None:
    catalog = read_catalog(
        {
            "openai": [
                _entry("a", baseUrl="http://h/v1"),
                _entry("a", baseUrl="http://h/v1/"),  # the same route: skipped
                _entry("a", baseUrl="http://other/v1"),  # another server: kept
                _entry("img", imageOnly=True),
                _entry("voice", realtimeOnly=True),
            ],
            "openai-custom": [_entry("typo")],
            "vertex-ai": [_entry("v")],
            "qwen-oauth": [_entry("q")],
            "mine": [_entry("n")],
            "gw": [_entry("g")],
        },
        {"mine": "anthropic", "gw": "vertex-ai"},
    )
    assert [(e.provider, e.protocol, e.id, e.base_url) for e in catalog.entries] == [
        ("openai", "openai", "a", "http://h/v1"),
        ("openai", "openai", "a", "http://other/v1"),
        ("mine", "anthropic", "n", None),
    ]
    notes = "\n".join(catalog.notes)
    assert "modelProviders.openai[1]: a at that base URL is listed before" in notes
    assert "modelProviders.openai-custom: no providerProtocol maps it" in notes
    assert "modelProviders.vertex-ai: headwire does not speak Vertex AI" in notes
    assert "modelProviders.qwen-oauth: headwire does not speak Qwen OAuth" in notes
    assert "modelProviders.gw: headwire does not speak Vertex AI" in notes
    assert "img" not in notes and "voice" not in notes  # routes of another kind: no note


def test_which_api_an_openai_entry_speaks() -> None:
    catalog = read_catalog(
        {
            "openai": [_entry("r", wireApi="responses"), _entry("c", wireApi="chat-completions")],
            "openai-responses": [_entry("legacy"), _entry("chat", wireApi="chat-completions")],
            "openai2": [_entry("mapped")],
        },
        {"openai2": "openai-responses"},
    )
    apis = {e.id: e.wire_api for e in catalog.entries}
    assert apis == {
        "r": RESPONSES,
        "c": None,
        "legacy": RESPONSES,
        "chat": None,
        "mapped": RESPONSES,
    }


@pytest.mark.parametrize(
    ("providers", "message"),
    [
        ({"anthropic": [_entry(wireApi="responses")]}, "modelProviders.anthropic[0].wireApi"),
        (
            {"openai": [_entry(), _entry("x", generationConfig={"extra_body": {"model": "y"}})]},
            "modelProviders.openai[1].generationConfig.extra_body: model is written by headwire",
        ),
        (
            {"openai": [_entry(generationConfig={"customHeaders": {"Host": "evil"}})]},
            "modelProviders.openai[0].generationConfig.customHeaders: Host frames",
        ),
    ],
)
def test_an_entry_written_wrong_is_refused(providers: dict[str, Any], message: str) -> None:
    with pytest.raises(CatalogError, match=message.replace("[", r"\[").replace("]", r"\]")):
        read_catalog(providers)


ENV = {
    "OPENAI_API_KEY": "sk-usual",
    "ANTHROPIC_API_KEY": "sk-anthropic",
    "MY_KEY": "sk-entry",
    "OPENAI_BASE_URL": "http://env/v1",
}


def _settings(*entries: dict[str, Any], **more: Any) -> ProviderChoice:
    return ProviderChoice(catalog=read_catalog({"openai": list(entries)}), **more)


def test_an_entry_wins_over_flags_environment_and_settings() -> None:
    entry = _entry(envKey="MY_KEY", baseUrl="http://entry/v1/", generationConfig={"maxRetries": 1})
    flags = ProviderChoice(model="m", api_key="sk-flag", base_url="http://flag/v1")
    config = resolve_provider(flags, ENV, _settings(entry, api_key="s", base_url="http://s"))
    assert (config.base_url, config.api_key) == ("http://entry/v1", "sk-entry")
    assert config.sources["api_key"] == "MY_KEY"
    assert config.sources["base_url"] == "modelProviders.openai[0].baseUrl"
    assert config.entry is not None and config.entry.generation == GenerationConfig(max_retries=1)


def test_what_an_entry_leaves_out_comes_from_the_usual_places() -> None:
    bare = _settings(_entry(envKey="UNSET_VARIABLE"))
    config = resolve_provider(ProviderChoice(model="m"), ENV, bare)
    assert (config.base_url, config.api_key) == ("http://env/v1", "sk-usual")
    assert config.entry is not None
    empty = {**ENV, "UNSET_VARIABLE": "  "}  # empty counts as unset
    assert resolve_provider(ProviderChoice(model="m"), empty, bare).api_key == "sk-usual"


def test_only_an_entry_of_the_runs_protocol_and_exact_id_is_used() -> None:
    settings = ProviderChoice(
        catalog=read_catalog({"anthropic": [_entry("m", baseUrl="http://anthropic-entry")]})
    )
    config = resolve_provider(ProviderChoice(model="m", auth_type="openai"), ENV, settings)
    assert config.entry is None and config.base_url == "http://env/v1"
    config = resolve_provider(ProviderChoice(model="M", auth_type="anthropic"), ENV, settings)
    assert config.entry is None
    config = resolve_provider(ProviderChoice(model="m", auth_type="anthropic"), ENV, settings)
    assert config.entry is not None and config.base_url == "http://anthropic-entry"


def test_the_first_of_two_entries_with_one_id_is_used() -> None:
    settings = _settings(_entry(baseUrl="http://first"), _entry(baseUrl="http://second"))
    assert resolve_provider(ProviderChoice(model="m"), ENV, settings).base_url == "http://first"


def test_a_responses_entry_runs_on_the_responses_client() -> None:
    from headwire.runtime.models.responses import ResponsesModel
    from headwire.runtime.models.select import make_model

    settings = _settings(_entry(wireApi="responses", baseUrl="http://r/v1"))
    config = resolve_provider(ProviderChoice(model="m"), ENV, settings)
    assert config.entry is not None and config.entry.wire_api == RESPONSES
    model = make_model(config)
    assert isinstance(model, ResponsesModel) and model.base_url == "http://r/v1"


def test_an_entry_with_a_bad_base_url_is_refused() -> None:
    settings = _settings(_entry(baseUrl="ftp://x"))
    with pytest.raises(ProviderConfigError, match="must start with http"):
        resolve_provider(ProviderChoice(model="m"), ENV, settings)


def test_the_missing_key_warning_names_the_entrys_variable() -> None:
    settings = _settings(_entry(envKey="MY_KEY", baseUrl="https://gateway.example/v1"))
    config = resolve_provider(ProviderChoice(model="m"), {}, settings)
    warning = missing_key_warning(config)
    assert warning is not None and "MY_KEY (modelProviders.openai[0].envKey)" in warning


@given(
    st.lists(
        st.fixed_dictionaries(
            {"id": st.sampled_from(["a", "b"])},
            optional={"baseUrl": st.sampled_from(["http://x", "http://y/", "http://y"])},
        ),
        max_size=6,
    ),
    st.sampled_from(["a", "b"]),
)
def test_the_model_is_the_first_listed_entry_of_its_id(entries: list[Any], model: str) -> None:
    """Invariant: the entry used is the first in the settings' order whose id is the model;
    an entry repeating an earlier (id, baseUrl) never shadows it."""
    catalog = read_catalog({"openai": entries})
    found = catalog.find("openai", model)
    first = next((e for e in entries if e["id"] == model), None)
    assert (found is None) == (first is None)
    if found is not None and first is not None:
        assert found.base_url == first.get("baseUrl")


def test_a_chat_route_is_chosen_before_a_responses_route_of_the_same_model() -> None:
    """Qwen Code keeps both routes of one model and URL, and a run picks the chat one."""
    catalog = read_catalog(
        {
            "openai": [
                _entry("m", baseUrl="http://h/v1", wireApi="responses"),
                _entry("m", baseUrl="http://h/v1"),
            ]
        }
    )
    assert [e.wire_api for e in catalog.entries] == [RESPONSES, None] and not catalog.notes
    found = catalog.find("openai", "m")
    assert found is not None and found.wire_api is None
    config = resolve_provider(ProviderChoice(model="m"), ENV, ProviderChoice(catalog=catalog))
    assert config.entry is found
