"""Which model provider a run uses, from flags, settings and the environment (Qwen Code's rules).

The auth type (provider) is, in order: ``--auth-type``; the settings'
``security.auth.selectedType``; the environment as Qwen Code reads it (``OPENAI_API_KEY`` +
``OPENAI_MODEL`` + ``OPENAI_BASE_URL``, else ``GEMINI_API_KEY`` + ``GEMINI_MODEL``, else
``ANTHROPIC_API_KEY`` + ``ANTHROPIC_MODEL`` + ``ANTHROPIC_BASE_URL``); then, when no OpenAI
key or base URL is set and exactly one of ``ANTHROPIC_API_KEY`` / ``GEMINI_API_KEY`` is, that
provider; else ``openai``.

For that provider the model, key and base URL are each: the flag (``-m``,
``--openai-api-key``, ``--openai-base-url``, which Qwen Code applies to every auth type), else
the provider's variables, else the settings (``model.name``, ``security.auth.apiKey``,
``security.auth.baseUrl``), else the default base URL.  Empty values count as unset.  When
the model is an entry's id in the user's ``modelProviders`` (:mod:`.catalog`), that entry's
``baseUrl`` and the variable its ``envKey`` names come first, as in Qwen Code.

=========  ==================  ===============================  ==========================
auth type  key                 base URL                         model
=========  ==================  ===============================  ==========================
openai     ``OPENAI_API_KEY``  ``OPENAI_BASE_URL``              ``OPENAI_MODEL``,
                                                                ``QWEN_MODEL``
anthropic  ``ANTHROPIC_API_KEY`` ``ANTHROPIC_BASE_URL``         ``ANTHROPIC_MODEL``
gemini     ``GEMINI_API_KEY``  ``GOOGLE_GEMINI_BASE_URL``       ``GEMINI_MODEL``
=========  ==================  ===============================  ==========================

Provider modules are imported only by :func:`make_model`, for the provider chosen.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from headwire.errors import ConfigError
from headwire.io.stdio import warn
from headwire.records import dataclass, field
from headwire.runtime.models.base import Model
from headwire.runtime.models.catalog import RESPONSES, Catalog, CatalogEntry
from headwire.runtime.models.generation import GenerationConfig

AUTH_TYPES = ("openai", "anthropic", "gemini")


@dataclass(frozen=True, slots=True)
class ProviderEnv:
    """The environment variables of one auth type."""

    api_key: str
    base_url: str | None
    models: tuple[str, ...]
    default_base_url: str


PROVIDER_ENV: dict[str, ProviderEnv] = {
    "openai": ProviderEnv(
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        ("OPENAI_MODEL", "QWEN_MODEL"),
        "https://api.openai.com/v1",
    ),
    "anthropic": ProviderEnv(
        "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", ("ANTHROPIC_MODEL",), "https://api.anthropic.com"
    ),
    "gemini": ProviderEnv(
        "GEMINI_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        ("GEMINI_MODEL",),
        "https://generativelanguage.googleapis.com",
    ),
}


class ProviderConfigError(ConfigError):
    """The provider settings cannot be used; ``str()`` is the one-line message."""


@dataclass(frozen=True, slots=True)
class ProviderChoice:
    """Plain values from one source (flags, or the settings file); ``None`` = not given."""

    auth_type: str | None = None
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    parse_text_tool_calls: bool | None = None
    thinking_budget: int | None = None
    catalog: Catalog | None = None
    """``modelProviders`` (the settings only)."""
    dynamic_headers: bool = False
    """``outboundCorrelation.allowDynamicHeaderValues`` (the settings only)."""


@dataclass(frozen=True, slots=True)
class ProviderConfig:
    """Everything needed to build the model client; ``sources`` says where each value came
    from (``--model``, ``ANTHROPIC_MODEL``, ``settings``, ``default``…), for messages."""

    auth_type: str
    model: str
    base_url: str
    api_key: str | None = field(repr=False)
    parse_text_tool_calls: bool = False
    thinking_budget: int | None = None
    sources: dict[str, str] = field(default_factory=dict)
    entry: CatalogEntry | None = None
    """The ``modelProviders`` entry the model was found in, if any: its ``baseUrl``, key and
    ``generationConfig`` are the model's."""


def _given(value: str | None) -> str | None:
    return value.strip() if value is not None and value.strip() else None


def detect_auth_type(env: Mapping[str, str]) -> str | None:
    """The auth type the environment alone selects, or ``None``."""

    def has(*names: str) -> bool:
        return all(_given(env.get(name)) for name in names)

    if has("OPENAI_API_KEY", "OPENAI_BASE_URL") and (has("OPENAI_MODEL") or has("QWEN_MODEL")):
        return "openai"
    if has("GEMINI_API_KEY", "GEMINI_MODEL"):
        return "gemini"
    if has("ANTHROPIC_API_KEY", "ANTHROPIC_MODEL", "ANTHROPIC_BASE_URL"):
        return "anthropic"
    if not has("OPENAI_API_KEY") and not has("OPENAI_BASE_URL"):
        keyed = [kind for kind in ("anthropic", "gemini") if has(PROVIDER_ENV[kind].api_key)]
        if len(keyed) == 1:
            return keyed[0]
    return None


def resolve_provider(
    flags: ProviderChoice,
    env: Mapping[str, str],
    settings: ProviderChoice | None = None,
) -> ProviderConfig:
    """The provider configuration the rules of this module select.

    Raises :class:`ProviderConfigError` for an unknown auth type, a missing model, a base URL
    that is not http(s), or neither a key nor a base URL (the provider's public endpoint
    needs a key: nothing would be sent without one).
    """
    settings = settings or ProviderChoice()
    sources: dict[str, str] = {}
    auth_type = (_given(flags.auth_type) or "").lower() or None
    sources["auth_type"] = "--auth-type"
    if auth_type is None and _given(settings.auth_type):
        auth_type, sources["auth_type"] = _given(settings.auth_type), "settings"
    if auth_type is None:
        auth_type, sources["auth_type"] = detect_auth_type(env), "environment"
    if auth_type is None:
        auth_type, sources["auth_type"] = "openai", "default"
    if auth_type not in PROVIDER_ENV:
        raise ProviderConfigError(
            f"--auth-type {auth_type} is not supported; use openai, anthropic or gemini"
        )
    names = PROVIDER_ENV[auth_type]

    def pick(
        kind: str, flag: str | None, flag_name: str, variables: tuple[str, ...], setting: str | None
    ) -> str | None:
        if _given(flag):
            sources[kind] = flag_name
            return _given(flag)
        for variable in variables:
            if _given(env.get(variable)):
                sources[kind] = variable
                return _given(env.get(variable))
        if _given(setting):
            sources[kind] = "settings"
            return _given(setting)
        return None

    model = pick("model", flags.model, "--model", names.models, settings.model)
    if model is None:
        raise ProviderConfigError(
            f"No model given: pass --model or set {' or '.join(names.models)}"
        )
    entry = settings.catalog.find(auth_type, model) if settings.catalog is not None else None
    api_key = base_url = None
    if entry is not None and entry.env_key and _given(env.get(entry.env_key)):
        api_key, sources["api_key"] = _given(env.get(entry.env_key)), entry.env_key
    if entry is not None and entry.base_url:
        base_url, sources["base_url"] = _given(entry.base_url), f"{entry.where}.baseUrl"
    if api_key is None:
        api_key = pick(
            "api_key", flags.api_key, "--openai-api-key", (names.api_key,), settings.api_key
        )
    if base_url is None:
        base_vars = (names.base_url,) if names.base_url else ()
        base_url = pick(
            "base_url", flags.base_url, "--openai-base-url", base_vars, settings.base_url
        )
    if base_url is None:
        base_url, sources["base_url"] = names.default_base_url, "default"
    base_url = base_url.rstrip("/")
    if urlsplit(base_url).scheme not in ("http", "https"):
        from headwire.runtime.models.http_base import display_url

        raise ProviderConfigError(
            f"Invalid {auth_type} base URL {display_url(base_url)!r}: "
            "it must start with http:// or https://"
        )
    if api_key is None and sources["base_url"] == "default":
        raise ProviderConfigError(no_endpoint_message(auth_type))
    parse_text = flags.parse_text_tool_calls
    if parse_text is None:
        parse_text = settings.parse_text_tool_calls
    budget = (
        flags.thinking_budget if flags.thinking_budget is not None else settings.thinking_budget
    )
    return ProviderConfig(
        auth_type=auth_type,
        model=model,
        base_url=base_url,
        api_key=api_key,
        parse_text_tool_calls=bool(parse_text),
        thinking_budget=budget,
        sources=sources,
        entry=entry,
    )


def model_options(
    config: ProviderConfig,
    generation: GenerationConfig | None,
    env: Mapping[str, str],
    session_id: str | None = None,
) -> dict[str, Any]:
    """The client options of ``config``'s model: its ``modelProviders`` entry's
    ``generationConfig`` whole when it has one (Qwen Code's "impermeable" provider layer), else
    ``generation`` (``model.generationConfig``; ``None``: the defaults).  ``session_id`` fills
    ``${session_id}`` in custom headers (``None``: such headers are not sent)."""
    chosen = config.entry.generation if config.entry is not None else generation
    return (chosen or GenerationConfig()).client_options(env, session_id=session_id)


def make_model(config: ProviderConfig, **client_options: Any) -> Model:
    """The client for ``config`` (its module imported now, not before).

    ``client_options`` go to the client's constructor (``timeout_s``, ``max_retries``,
    ``diagnostics``…, :meth:`~headwire.runtime.models.generation.GenerationConfig.client_options`);
    ``extra_body`` only to OpenAI's (another provider's client notes that it is not sent).
    """
    if config.auth_type != "anthropic":
        client_options.pop("prompt_caching", None)  # only Anthropic's requests carry marks
    if config.auth_type != "openai":
        client_options.pop("tool_result_format", None)  # Anthropic and Gemini: their own form
    if config.auth_type != "openai" and client_options.pop("extra_body", None):
        note = (
            f"headwire: note: model.generationConfig.extra_body is sent to OpenAI-compatible "
            f"servers only, not with --auth-type {config.auth_type}"
        )
        if note not in _warned:
            _warned.add(note)
            warn(note)
    if config.auth_type == "anthropic":
        from headwire.runtime.models.anthropic import AnthropicModel

        return AnthropicModel(
            config.base_url,
            config.api_key,
            config.model,
            thinking_budget=config.thinking_budget,
            **client_options,
        )
    if config.auth_type == "gemini":
        from headwire.runtime.models.gemini import GeminiModel

        return GeminiModel(
            config.base_url,
            config.api_key,
            config.model,
            thinking_budget=config.thinking_budget,
            **client_options,
        )
    if config.entry is not None and config.entry.wire_api == RESPONSES:
        from headwire.runtime.models.responses import ResponsesModel

        client_options.pop("tool_result_format", None)  # outputs are function_call_output text
        return ResponsesModel(config.base_url, config.api_key, config.model, **client_options)
    from headwire.runtime.models.openai import OpenAIModel

    return OpenAIModel(
        config.base_url,
        config.api_key,
        config.model,
        parse_text_tool_calls=config.parse_text_tool_calls,
        **client_options,
    )


def scripted_spec(model: str | None, script: str | None, env: Mapping[str, str]) -> str | None:
    """The offline script to run (``--script``, or ``-m scripted[:NAME]``), or ``None``."""
    if script is not None:
        return script
    if model and (model == "scripted" or model.startswith("scripted:")):
        return model.partition(":")[2] or _given(env.get("HEADWIRE_SCRIPT")) or "demo"
    return None


def select_model(
    flags: ProviderChoice,
    env: Mapping[str, str],
    settings: ProviderChoice | None = None,
    *,
    script: str | None = None,
    generation: GenerationConfig | None = None,
    session_id: str | None = None,
    **client_options: Any,
) -> Model:
    """The model of a run: the scripted offline model when asked for, else the provider's
    client (:func:`resolve_provider`, then :func:`make_model` with :func:`model_options`, which
    ``client_options`` override).  ``session_id`` goes into custom headers only when the
    settings consent (``outboundCorrelation.allowDynamicHeaderValues``)."""
    named = _given(flags.model) or _given(env.get("OPENAI_MODEL"))
    spec = scripted_spec(named, script, env)
    if spec is not None:
        from headwire.runtime.models.scripted import ScriptedModel, load_script

        return ScriptedModel(load_script(spec), name=_given(flags.model) or "scripted")
    config = resolve_provider(flags, env, settings)
    if (note := missing_key_warning(config)) is not None and note not in _warned:
        _warned.add(note)
        warn(note)
    consented = settings is not None and settings.dynamic_headers
    options = model_options(config, generation, env, session_id if consented else None)
    if session_id and config.entry is not None and config.entry.wire_api == RESPONSES:
        options["cache_key"] = cache_key_for(session_id)
    return make_model(config, **{**options, **client_options})


def cache_key_for(session_id: str) -> str:
    """A Responses request's ``prompt_cache_key``: the same for every request of a session,
    so they share the server's prompt cache, and not the session id itself (a digest of it),
    which leaves the machine only where the settings consent."""
    import hashlib

    return "headwire:" + hashlib.sha256(session_id.encode()).hexdigest()[:32]


def no_endpoint_message(auth_type: str) -> str:
    """The error for a run with neither an API key nor a base URL: what to set."""
    names = PROVIDER_ENV[auth_type]
    return (
        f"No API key and no base URL for --auth-type {auth_type}: set {names.api_key} for "
        f"{names.default_base_url}, or {names.base_url} for another server (a local one, "
        "such as http://localhost:11434/v1, needs no key); or pass --openai-api-key / "
        "--openai-base-url, or security.auth.apiKey / security.auth.baseUrl in settings"
    )


_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa")


def is_local_url(url: str) -> bool:
    """Whether ``url``'s host is this machine or a private network (a literal loopback,
    private or link-local address, ``localhost``, or a name under a local-only suffix such as
    ``.local`` or ``.internal``): a server there is usually run without a key."""
    import ipaddress

    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if host == "localhost" or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


_warned: set[str] = set()
"""Warnings already given by this process (a REPL reopens its model on /resume and /clear)."""


def missing_key_warning(config: ProviderConfig) -> str | None:
    """The stderr line for a run whose model requests carry no API key, else ``None``: none
    for a local or private server (:func:`is_local_url`), and once per process."""
    if config.api_key or is_local_url(config.base_url):
        return None
    from headwire.runtime.models.http_base import display_url

    variable = PROVIDER_ENV[config.auth_type].api_key
    if config.entry is not None and config.entry.env_key:
        variable = f"{config.entry.env_key} ({config.entry.where}.envKey) or {variable}"
    return (
        f"headwire: warning: no API key (set {variable} or pass --openai-api-key); "
        f"requests to {display_url(config.base_url)} are sent without one"
    )
