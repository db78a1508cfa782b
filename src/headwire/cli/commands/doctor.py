"""``headwire doctor``: what a model endpoint supports, one line per check.

Chooses the provider, model, base URL and key exactly as a run would (same flags, same
variables, the same settings files: ``security.auth.*``, ``model.name``, ``env``, the
``modelProviders`` catalog and the model's ``generationConfig`` headers and body keys; see
:mod:`headwire.runtime.models.select`), then checks: the server is reachable,
the model is listed, answers stream, tool calls work, usage is reported.  Each check prints
``ok``, ``FAIL`` or ``?`` (could not tell) with what it saw.  The key is never printed.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, cast

from headwire.errors import ConfigError, ExitCode
from headwire.io.stdio import say, warn
from headwire.runtime.environment import credential_environment

if TYPE_CHECKING:
    from headwire.runtime.models.generation import GenerationConfig
    from headwire.runtime.models.select import ProviderChoice

_PROG = "headwire doctor"

_EPILOG = """\
exit status:
  0    every check passed
  1    a check failed, or the server cannot be reached (one line says so)
  2    usage error (no model, unknown --auth-type; with --sandbox: no sandbox configured)
"""

_MODEL_LISTS = {"openai": "/models", "anthropic": "/v1/models", "gemini": "/v1beta/models"}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description="Probe a model endpoint: reachable, model listed, streaming, tool calls, "
        "usage.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--auth-type",
        metavar="{openai,anthropic,gemini}",
        help="the provider (default: from the environment, else openai)",
    )
    parser.add_argument("-m", "--model", help="the model (default: the provider's variable)")
    parser.add_argument(
        "--base-url", "--openai-base-url", dest="base_url", help="the provider's base URL"
    )
    parser.add_argument(
        "--api-key", "--openai-api-key", dest="api_key", help="the provider's API key"
    )
    parser.add_argument(
        "--parse-text-tool-calls",
        action="store_true",
        default=None,
        help="openai: also read tool calls the model writes as text",
    )
    parser.add_argument(
        "--timeout", type=float, default=30.0, help="seconds to wait for each answer"
    )
    parser.add_argument(
        "--sandbox",
        action="store_true",
        help="instead: check the tool execution sandbox (tools.executionSandbox) holds: "
        "write outside the workspace, read under $HOME, reach 127.0.0.1, from inside it",
    )
    parser.add_argument(
        "--settings", help="settings JSON or file, as a run's --settings (over the files)"
    )
    return parser


def _settings(args: argparse.Namespace) -> tuple[ProviderChoice, GenerationConfig]:
    """The settings' provider values and ``model.generationConfig``, read as a run reads them
    (the user file, the project's as far as the folder is trusted, ``--settings``); their
    notes go to stderr and their ``env`` is applied.  A bad file raises ``ConfigError``."""
    from headwire.cli.flags.model import provider_settings
    from headwire.cli.flags.settings import apply_env, settings_for
    from headwire.runtime.config.settings import dropped_notes

    settings = settings_for(args, Path.cwd())  # a run's loader: the same layers and trust
    for note in dropped_notes(settings):
        warn(note)
    apply_env(settings.env)
    return provider_settings(settings), settings.generation


def run_doctor(argv: list[str]) -> int:
    """Probe the endpoint the flags and environment select; print one line per check."""
    from headwire.runtime.models.doctor import Check, ProbedModel, Unreachable, probe
    from headwire.runtime.models.http_base import display_url
    from headwire.runtime.models.select import (
        ProviderChoice,
        make_model,
        model_options,
        resolve_provider,
    )

    args = _parser().parse_args(argv)
    if args.sandbox:
        from headwire.cli.commands.doctor_sandbox import run_sandbox_doctor

        return run_sandbox_doctor(args.settings)
    flags = ProviderChoice(
        auth_type=args.auth_type,
        model=args.model,
        base_url=args.base_url,
        api_key=args.api_key,
        parse_text_tool_calls=args.parse_text_tool_calls,
    )
    try:
        chosen, generation = _settings(args)
        env = credential_environment()
        config = resolve_provider(flags, env, chosen)
    except ConfigError as exc:
        warn(f"{_PROG}: {exc}")
        return ExitCode.USAGE
    # the model's own headers and body keys, so the probe asks what a run would; no retries,
    # and each answer waited for --timeout seconds
    options = model_options(config, generation, env)
    options.update(max_retries=0, timeout_s=args.timeout, diagnostics=lambda _: None)
    model = make_model(config, **options)
    where = display_url(config.base_url)
    key = config.sources.get("api_key") if config.api_key else None
    say(
        f"{_PROG}: {config.auth_type} at {where}, model {config.model}"
        + (f" (key from {key})" if key else " (no key)"),
        flush=True,
    )

    async def go() -> list[Check]:
        try:
            return await probe(cast("ProbedModel", model), _MODEL_LISTS[config.auth_type])
        finally:
            aclose = getattr(model, "aclose", None)
            if aclose is not None:
                await aclose()

    try:
        checks = asyncio.run(go())
    except Unreachable as exc:
        say(f"{_PROG}: {config.auth_type}: {exc}")
        return ExitCode.ERROR
    except KeyboardInterrupt:
        warn(f"{_PROG}: interrupted")
        return ExitCode.INTERRUPTED
    failed = False
    for check in checks:
        mark = "ok" if check.ok is True else "FAIL" if check.ok is False else "?"
        failed = failed or check.ok is not True
        say(f"{mark:<5} {check.name:<11} {check.detail}")
    return ExitCode.ERROR if failed else ExitCode.OK
