"""The agent's model from its flags and the environment (:mod:`headwire.runtime.models.select`)."""

from __future__ import annotations

import argparse

from headwire.errors import ConfigError, UsageError
from headwire.runtime.config.settings import Settings
from headwire.runtime.environment import credential_environment
from headwire.runtime.models.base import Model
from headwire.runtime.models.generation import GenerationConfig
from headwire.runtime.models.select import ProviderChoice, select_model


def provider_flags(args: argparse.Namespace) -> ProviderChoice:
    """The provider values the command line gave (``None`` where a flag is absent)."""
    return ProviderChoice(
        auth_type=getattr(args, "auth_type", None),
        model=getattr(args, "model", None),
        base_url=getattr(args, "openai_base_url", None),
        api_key=getattr(args, "openai_api_key", None),
        parse_text_tool_calls=getattr(args, "parse_text_tool_calls", None),
        thinking_budget=getattr(args, "max_thinking_tokens", None),
    )


def provider_settings(settings: Settings) -> ProviderChoice:
    """The settings' provider values (``security.auth.*``, ``model.parseTextToolCalls``,
    ``model.thinkingBudget``); ``model.name`` reaches the run as the flag's default instead
    (:func:`headwire.cli.flags.settings.apply_settings`)."""
    return ProviderChoice(
        auth_type=settings.auth_type,
        model=settings.model_name,
        base_url=settings.base_url,
        api_key=settings.api_key,
        parse_text_tool_calls=settings.parse_text_tool_calls,
        thinking_budget=settings.thinking_budget,
        catalog=settings.catalog,
        dynamic_headers=settings.allow_dynamic_headers,
    )


def model_from_flags(
    args: argparse.Namespace,
    settings: ProviderChoice | None = None,
    generation: GenerationConfig | None = None,
    session_id: str | None = None,
) -> Model:
    """The run's model, its requests shaped by ``generation`` (``model.generationConfig``);
    ``session_id`` fills ``${session_id}`` in custom headers when the settings consent to it.
    A configuration problem is a :class:`UsageError` (exit code 2)."""
    try:
        return select_model(
            provider_flags(args),
            credential_environment(),
            settings,
            script=getattr(args, "script", None),
            generation=generation,
            session_id=session_id,
        )
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
