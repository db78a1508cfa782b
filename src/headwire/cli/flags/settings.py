"""Settings, prompt files and ``--agents`` applied to the parsed flags.

Precedence, highest first: flags, ``--settings``, the project's ``.headwire/settings.json``,
the user's ``settings.json`` (merged by :mod:`headwire.runtime.config.settings`), then headwire's
defaults; the model name falls back to ``OPENAI_MODEL`` after the settings, as in Qwen Code.
:func:`prepare` runs once at start (validation, notes, ``env``, prompt files);
:func:`apply_settings` is the one place settings become flag values, for each session's working
directory.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from headwire.cli.flags.agent import split_list
from headwire.errors import UsageError
from headwire.io.stdio import warn
from headwire.runtime.agent.limits import clamp_subagent_depth
from headwire.runtime.agents.definitions import AgentDefinition, AgentFileError, agents_from_json
from headwire.runtime.config.settings import (
    Scope,
    Settings,
    SettingsError,
    dropped_notes,
    load_settings,
    split_models,
)
from headwire.runtime.store.storage import data_dir

_CACHE_ATTR = "_headwire_settings"


def is_trusted(cwd: Path, args: argparse.Namespace | None = None) -> bool:
    """Whether the folder ``cwd`` is trusted (:mod:`headwire.runtime.trust`: the user's trust
    list, ``--trust-project`` or ``HEADWIRE_TRUST_PROJECT=1``): what its project settings may
    then set is the trust table's say (:data:`headwire.runtime.trust.PROJECT_TABLE`)."""
    from headwire.cli.flags.trust import trusted_project

    return trusted_project(args if args is not None else argparse.Namespace(), data_dir(), cwd)


def _read_text(flag: str, value: str, cwd: Path) -> str:
    path = Path(os.path.expanduser(value))
    path = path if path.is_absolute() else cwd / path
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{flag}: cannot read {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{flag}: cannot read {path}: {exc}") from None


def read_prompt_files(args: argparse.Namespace, cwd: Path) -> None:
    """Fold ``--system-prompt-file`` / ``--append-system-prompt-file`` into the prompt flags."""
    if args.system_prompt_file:
        if args.system_prompt is not None:
            raise UsageError("--system-prompt and --system-prompt-file cannot be used together")
        args.system_prompt = _read_text("--system-prompt-file", args.system_prompt_file, cwd)
    if args.append_system_prompt_file:
        text = _read_text("--append-system-prompt-file", args.append_system_prompt_file, cwd)
        parts = [p for p in (args.append_system_prompt, text) if p and p.strip()]
        args.append_system_prompt = "\n\n".join(parts) or None


def apply_env(env: Mapping[str, str], environ: dict[str, str] | None = None) -> list[str]:
    """Set the settings' ``env`` variables the environment does not define; returns their
    names (the environment always wins)."""
    target = os.environ if environ is None else environ
    added = [name for name in env if name not in target]
    for name in added:
        target[name] = env[name]
    return added


def inline_agents(args: argparse.Namespace, *, quiet: bool = True) -> dict[str, AgentDefinition]:
    """The ``--agents`` subagents (empty without the flag); notes only when not ``quiet``."""
    if not args.agents:
        return {}
    try:
        return agents_from_json(args.agents, note=None if quiet else warn)
    except AgentFileError as exc:
        raise UsageError(str(exc)) from None


SETTING_SOURCES = ("user", "project", "local")
"""``--setting-sources`` values (Claude Code's); headwire has no ``local`` file, so ``local``
reads nothing."""


def setting_sources(args: argparse.Namespace) -> frozenset[Scope] | None:
    """The settings files ``--setting-sources`` chooses (``None``: the flag is absent, all
    load); an unknown source is a :class:`UsageError`."""
    value = getattr(args, "setting_sources", None)
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [n for n in names if n not in SETTING_SOURCES]
    if unknown:
        raise UsageError(
            f"--setting-sources: unknown source {unknown[0]!r} "
            f"(choose from {', '.join(SETTING_SOURCES)}, comma-separated)"
        )
    scopes: set[Scope] = set()
    if "user" in names:
        scopes.add("user")
    if "project" in names:
        scopes.add("project")
    return frozenset(scopes)


def _load(args: argparse.Namespace, cwd: Path) -> Settings:
    return load_settings(
        data_dir(),
        cwd,
        args.settings,
        trusted=is_trusted(cwd, args),
        files=setting_sources(args),
    )


def _prompted(args: argparse.Namespace) -> bool:
    """Whether the run was started with a prompt (``-p``, a prompt argument or piped stdin)
    rather than as the REPL."""
    stdin = sys.stdin
    return args.prompt is not None or bool(args.query) or stdin is None or not stdin.isatty()


def prepare(args: argparse.Namespace, cwd: Path) -> Settings:
    """Start-up: load and validate every settings layer for ``cwd`` (a bad file is a
    :class:`UsageError` naming the file and key), note what was not taken, apply ``env``,
    read the prompt files and check ``--agents``.  The result is cached on ``args``."""
    if args.settings and not args.settings.strip().startswith("{"):
        path = Path(os.path.expanduser(args.settings.strip()))
        args.settings = str(path if path.is_absolute() else cwd / path)
    try:
        settings = _load(args, cwd)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    strict = bool(getattr(args, "strict_mcp_config", False))
    for source, data in [] if strict else settings.mcp_sources():
        from headwire.runtime.mcp.config import parse_mcp_servers  # only with servers set

        problems = parse_mcp_servers(data, source)[1]
        if problems:
            raise UsageError(problems[0].replace("\n", "\\n").replace("\r", "\\r"))
    for note in dropped_notes(settings):
        warn(note)
    given = getattr(args, "output_format_given", False)  # output.format: the flag wins
    if settings.output_format and not given and not args.acp and _prompted(args):
        args.output_format = settings.output_format
    apply_env(settings.env)
    read_prompt_files(args, cwd)
    inline_agents(args, quiet=False)
    setattr(args, _CACHE_ATTR, (cwd.resolve(), settings))
    return settings


def settings_for(args: argparse.Namespace, cwd: Path) -> Settings:
    """The settings of a session in ``cwd``: the start-up ones for the start-up directory,
    else loaded for ``cwd`` (an ACP session elsewhere); a bad file is a UsageError."""
    cached = getattr(args, _CACHE_ATTR, None)
    if cached is not None and cached[0] == cwd.resolve():
        settings: Settings = cached[1]
        return settings
    try:
        return _load(args, cwd)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None


def apply_settings(args: argparse.Namespace, settings: Settings) -> argparse.Namespace:
    """A copy of ``args`` with what the flags left unset taken from ``settings``.

    ``--core-tools`` and ``--allowed-tools`` replace the settings' lists; ``--exclude-tools``
    adds to ``tools.exclude``; ``--fallback-model`` replaces ``modelFallbacks``;
    ``general.chatRecording: false`` is ``--no-session-persistence``.
    """
    out = argparse.Namespace(**vars(args))
    if not out.model and settings.model_name:
        out.model = settings.model_name
    if out.max_session_turns is None:
        out.max_session_turns = (
            settings.max_session_turns if settings.max_session_turns is not None else -1
        )
    if out.max_tool_calls is None:
        out.max_tool_calls = settings.max_tool_calls if settings.max_tool_calls is not None else -1
    if out.max_subagent_depth is None:
        out.max_subagent_depth = clamp_subagent_depth(settings.max_subagent_depth)
    if not out.yolo and not out.approval_mode and settings.approval_mode:
        out.approval_mode = settings.approval_mode
    if not split_list(out.core_tools) and settings.tools_core:
        out.core_tools = list(settings.tools_core)
    if settings.tools_exclude:
        out.exclude_tools = list(settings.tools_exclude) + list(out.exclude_tools or [])
    if not split_list(out.allowed_tools) and settings.tools_allowed:
        out.allowed_tools = list(settings.tools_allowed)
    if not settings.chat_recording:  # general.chatRecording: false
        out.no_session_persistence = True
    flag_models = split_models(",".join(out.fallback_model or []))
    out.fallback_model = list(flag_models or settings.model_fallbacks)
    return out
