"""Where a run is assembled: flags -> model, tools, MCP servers, recorder, agent, event stream.

Every front end (a one-shot run, a persistent session, the REPL, each ACP session) gets its
:class:`Runtime` from :func:`build_runtime`, the one place the object graph is built; nothing
is patched after construction.  A front end then subscribes its own consumers to
:attr:`Runtime.events` (the recorder is already subscribed, first)::

    plan = plan_session(args, cwd)                    # new, --resume, --continue, --session-id
    runtime = await build_runtime(args, cwd, plan, ask=...)
    runtime.events.subscribe(HeadlessEmitter(...))    # or SessionUpdates for ACP
    finished = await runtime.agent.run_turn(prompt)
    await runtime.aclose()

Bad flags or configuration raise :class:`~headwire.errors.UsageError` before anything runs.
"""

from __future__ import annotations

import argparse
import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from headwire import __version__
from headwire.cli.flags.agent import split_list
from headwire.errors import UsageError
from headwire.events import Broadcast
from headwire.io.stdio import warn
from headwire.records import dataclass, field
from headwire.runtime.agent.context_keeper import ContextSettings
from headwire.runtime.agent.loop import Agent, AgentConfig, AskPermission
from headwire.runtime.agents.definitions import load_agents
from headwire.runtime.agents.tool import AgentTool
from headwire.runtime.config.settings import Settings
from headwire.runtime.models.base import Model, Usage
from headwire.runtime.store.record_events import RecordingSubscriber
from headwire.runtime.store.recording import (
    Recorder,
    RecordingError,
    conversation_of,
    latest_session,
    resolve_session,
)
from headwire.runtime.store.storage import ArtifactStore, data_dir
from headwire.runtime.tools.base import ApprovalMode, Tool

if TYPE_CHECKING:
    from headwire.runtime.config.output_styles import OutputStyle
    from headwire.runtime.hooks.runner import HookRunner
    from headwire.runtime.skills import Skill
    from headwire.runtime.telemetry import TelemetryConfig

Closer = Callable[[], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class SessionPlan:
    """Which session a run continues: its id, the conversation recorded so far and the usage
    per model its last result saved (the cost totals go on from there); ``fork_from`` is the
    recording a ``--fork-session`` copy starts from."""

    session_id: str
    conversation: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, Usage] = field(default_factory=dict)
    fork_from: Path | None = None


def _resumed(session_id: str, path: Path) -> SessionPlan:
    from headwire.runtime.agent.meter import recorded_usage

    return SessionPlan(session_id, conversation_of(path), recorded_usage(path))


def _found(args: argparse.Namespace, cwd: Path, root: Path) -> Path | None:
    """The recording ``--resume`` (an id, a unique prefix, ``latest`` or nothing) or
    ``--continue`` names; ``--continue`` with none says so and starts a new session, as Claude
    Code and Qwen Code do."""
    resume = getattr(args, "resume", None)
    if resume:
        return resolve_session(root, cwd, resume)
    if getattr(args, "continue_", False):
        latest = latest_session(root, cwd)
        if latest is None:
            warn("headwire: note: no session in this folder to continue; starting a new one")
        return latest
    return None


def plan_session(args: argparse.Namespace, cwd: Path, root: Path | None = None) -> SessionPlan:
    """The session ``--resume``, ``--continue`` or ``--session-id`` names (else a new one);
    with ``--fork-session``, a new id whose recording starts as a copy of the resumed one."""
    root = data_dir() if root is None else root
    fork = bool(getattr(args, "fork_session", False))
    if fork and not (getattr(args, "resume", None) or getattr(args, "continue_", False)):
        raise UsageError("--fork-session needs --resume or --continue (the session to fork)")
    try:
        path = _found(args, cwd, root)
        if path is not None:
            plan = _resumed(path.stem, path)
            if not fork:
                return plan
            new_id = getattr(args, "session_id", None) or str(uuid.uuid4())
            return SessionPlan(new_id, plan.conversation, plan.usage, fork_from=path)
    except RecordingError as exc:
        raise UsageError(str(exc)) from None
    return SessionPlan(getattr(args, "session_id", None) or str(uuid.uuid4()))


def build_model(
    args: argparse.Namespace, settings: Settings | None = None, session_id: str | None = None
) -> Model:
    """The model the flags ask for: scripted (offline) or a provider's server
    (:func:`headwire.cli.flags.model.model_from_flags`, the settings' ``security.auth.*`` and
    ``model.*`` under the flags and the environment), wrapped with its ``--fallback-model``
    list when there is one.  With a ``modelProviders`` catalog it is a
    :class:`~headwire.runtime.models.routed.RoutedModel`: renamed (``set_model``,
    ``/model``) to a model of another route, it takes that route's server, key and settings.
    ``session_id`` is the session's, for ``${session_id}`` in custom headers."""
    model = _provider_model(args, settings, session_id)
    if settings is None or not settings.catalog.entries or model.name.startswith("scripted"):
        return model
    if getattr(args, "script", None) is not None:
        return model
    from headwire.cli.flags.model import provider_flags, provider_settings
    from headwire.runtime.environment import credential_environment
    from headwire.runtime.models.catalog import CatalogEntry
    from headwire.runtime.models.routed import RoutedModel
    from headwire.runtime.models.select import ProviderConfigError, resolve_provider

    choice = provider_settings(settings)

    def named(name: str) -> argparse.Namespace:
        return argparse.Namespace(**{**vars(args), "model": name})

    def route(name: str) -> object:
        """The catalog entry ``name`` runs on (``None``: none); a name that cannot run gets
        a route of its own, so that renaming to it builds, and so refuses, it."""
        try:
            flags = provider_flags(named(name))
            return resolve_provider(flags, credential_environment(), choice).entry
        except ProviderConfigError as exc:
            return str(exc)

    def window(name: str) -> int | None:
        """``contextWindowSize`` for ``name``: its entry's (whole), else the top level's."""
        entry = route(name)
        chosen = entry.generation if isinstance(entry, CatalogEntry) else settings.generation
        return chosen.context_window

    listed: dict[str, tuple[str, str]] = {}  # the first entry of each id, in order
    for entry in settings.catalog.entries:
        if isinstance(route(entry.id), CatalogEntry):  # of the run's provider, usable
            listed.setdefault(entry.id, (entry.id, entry.label or entry.id))
    choices = tuple(listed.values())
    return RoutedModel(
        model,
        route,
        lambda name: _provider_model(named(name), settings, session_id),
        window,
        choices,
    )


def _provider_model(
    args: argparse.Namespace, settings: Settings | None, session_id: str | None = None
) -> Model:
    """:func:`build_model` without the catalog's rerouting."""
    from headwire.cli.flags.model import model_from_flags, provider_settings

    choice = provider_settings(settings) if settings is not None else None
    generation = settings.generation if settings is not None else None
    model = model_from_flags(args, choice, generation, session_id)
    fallbacks = list(getattr(args, "fallback_model", None) or [])
    if not fallbacks:
        return model
    if args.script is not None or model.name.startswith("scripted"):
        warn("headwire: note: --fallback-model does not apply to the scripted model")
        return model
    from headwire.runtime.models.fallback import FallbackModel

    others = [
        model_from_flags(
            argparse.Namespace(**{**vars(args), "model": name}), choice, generation, session_id
        )
        for name in fallbacks
    ]
    return FallbackModel(model, others, warn)


async def close_model(model: Model) -> None:
    """Release the model's connections (an HTTP client)."""
    aclose = getattr(model, "aclose", None)
    if aclose is not None:
        await aclose()


async def check_flags(args: argparse.Namespace) -> None:
    """Fail fast on flags that cannot work (the model's setup), before serving anything."""
    from headwire.cli.flags.settings import settings_for

    await close_model(build_model(args, settings_for(args, Path.cwd())))


@dataclass
class Runtime:
    """The object graph of one session, and how to take it down."""

    agent: Agent
    events: Broadcast
    recorder: Recorder
    closers: list[Closer] = field(default_factory=list)
    telemetry: Any = None
    """The OpenTelemetry subscriber when telemetry is on (its ``fields`` get the trace id)."""

    async def aclose(self) -> None:
        """Stop the MCP servers, release the model, close the recording (each step runs even
        when an earlier one fails)."""
        errors: list[BaseException] = []
        for close in reversed(self.closers):
            try:
                await close()
            except Exception as exc:
                errors.append(exc)
        self.recorder.close()
        if errors:
            raise errors[0]


def context_settings(settings: Settings) -> ContextSettings:
    """The context-management settings (``model.generationConfig.contextWindowSize``: a model
    of the ``modelProviders`` catalog has its entry's, :attr:`RoutedModel.configured_window`;
    ``context.autoCompactThreshold``, ``context.clearContextOnIdle.*``)."""
    default = ContextSettings()
    chars = settings.tool_results_chars_threshold
    return ContextSettings(
        window=settings.generation.context_window,
        threshold=settings.auto_compact_threshold or default.threshold,
        clear_chars=default.clear_chars if chars is None else chars,
        clear_keep=max(1, settings.tool_results_keep or default.clear_keep),
        idle_minutes=(
            default.idle_minutes
            if settings.tool_results_idle_minutes is None
            else settings.tool_results_idle_minutes
        ),
    )


def approval_mode(args: argparse.Namespace) -> ApprovalMode:
    """``--yolo`` or ``--approval-mode`` (default ``default``)."""
    mode: ApprovalMode = "yolo" if args.yolo else (args.approval_mode or "default")
    return mode


async def _mcp_tools(
    args: argparse.Namespace,
    cwd: Path,
    acp_servers: Sequence[dict[str, Any]] | None,
    settings: Settings,
) -> tuple[list[Tool], Callable[[], list[dict[str, Any]]], Closer | None]:
    """Connect the MCP servers (the settings files and ``--mcp-config``, only ``--mcp-config``
    with ``--strict-mcp-config``, or what an ACP client sent): their tools after
    ``--exclude-tools``, their live statuses, their closer (nothing of MCP is loaded when no
    server is configured anywhere)."""
    strict = bool(getattr(args, "strict_mcp_config", False))
    configured = acp_servers or getattr(args, "mcp_config", None)
    if not configured and (strict or not settings.mcp_sources()):
        return [], lambda: [], None
    from headwire.runtime.mcp.setup import McpConfigError, mcp_tools, start_acp_mcp, start_mcp

    try:
        if acp_servers is None:
            manager = await start_mcp(
                [] if strict else settings.mcp_sources(),  # --strict-mcp-config
                cwd,
                getattr(args, "mcp_config", None),
                debug=bool(getattr(args, "debug", False)),
                version=__version__,
            )
        else:
            manager = (
                await start_acp_mcp(list(acp_servers), version=__version__) if acp_servers else None
            )
    except McpConfigError as exc:
        raise UsageError(str(exc)) from None
    if manager is None:
        return [], lambda: [], None
    return mcp_tools(manager, split_list(args.exclude_tools)), manager.statuses, manager.aclose


async def _sandbox(settings: Settings, cwd: Path) -> dict[str, Any] | None:
    """Probe and switch on the configured tool execution sandbox (``None``: none configured,
    and nothing is probed); raises :class:`~headwire.runtime.sandbox.SandboxUnavailable`."""
    if not settings.execution_sandbox:
        return None
    from headwire.runtime import sandbox

    policy = sandbox.policy_from_settings(settings.execution_sandbox, cwd)
    assert policy is not None
    sandbox.activate(policy, await sandbox.probe(policy))
    return policy.describe(enforced=True)


TELEMETRY_FLAGS = (
    "telemetry",
    "telemetry_target",
    "telemetry_otlp_endpoint",
    "telemetry_otlp_protocol",
    "telemetry_log_prompts",
    "telemetry_outfile",
)


def _telemetry(
    args: argparse.Namespace, settings: Settings, session_id: str
) -> asyncio.Future[Any] | None:
    """The telemetry subscriber being built on a thread (importing OpenTelemetry takes a few
    hundred milliseconds: it overlaps the rest of the build), ``None`` when telemetry is off
    (then OpenTelemetry is never imported).  A missing extra or an outfile that cannot be
    written raises here, at once."""
    import os

    from headwire.runtime.telemetry import check_installed, open_outfile, telemetry_config

    config = telemetry_config(
        settings.telemetry,
        os.environ,
        {name: getattr(args, name, None) for name in TELEMETRY_FLAGS},
        propagate=settings.propagate_trace_context,
    )
    if not config.enabled:
        return None
    check_installed(config)
    for line in config.warnings:
        warn(f"headwire: note: telemetry: {line}")
    fd = open_outfile(config.outfile) if config.outfile else None
    return asyncio.ensure_future(
        asyncio.to_thread(_start_telemetry, config, session_id, __version__, fd)
    )


def _start_telemetry(
    config: TelemetryConfig, session_id: str, version: str, outfile_fd: int | None = None
) -> Any:
    """The exporter subscriber for ``config`` (imports OpenTelemetry, on a thread); raises
    :class:`~headwire.errors.UsageError` (one line) when the extra is not installed."""
    import os

    try:
        from headwire.runtime.otel_export import OtelSubscriber
    except ImportError as exc:
        raise UsageError(
            f"telemetry is enabled but OpenTelemetry is not installed ({exc.name}): "
            "pip install 'headwire[telemetry]', or turn telemetry.enabled off"
        ) from None
    return OtelSubscriber(
        config,
        session_id=session_id,
        version=version,
        caller=os.environ.get("TRACEPARENT"),
        outfile_fd=outfile_fd,
    )


def _no_mcp(
    args: argparse.Namespace,
    acp_servers: Sequence[dict[str, Any]] | None,
    settings: Settings,
) -> tuple[list[Tool], Callable[[], list[dict[str, Any]]], Closer | None]:
    """No MCP server starts while the sandbox is on (it would run with the user's full
    rights); one note when some were configured."""
    if acp_servers or settings.mcp_sources() or getattr(args, "mcp_config", None):
        warn(
            "headwire: note: MCP servers are not started while tools.executionSandbox is on "
            "(they would run outside the sandbox)"
        )
    return [], lambda: [], None


async def build_runtime(
    args: argparse.Namespace,
    cwd: Path,
    plan: SessionPlan,
    *,
    ask: AskPermission | None = None,
    acp_servers: Sequence[dict[str, Any]] | None = None,
) -> Runtime:
    """Build a session's whole graph from the flags (see the module docstring).

    ``acp_servers``: the ``mcpServers`` an ACP client sent (then the settings files and
    ``--mcp-config`` are not read).
    """
    from headwire.cli.flags.contract import contract_config
    from headwire.cli.flags.permissions import core_names, only_tools, policy_from_args
    from headwire.cli.flags.settings import apply_settings, inline_agents, settings_for
    from headwire.cli.flags.trust import project_agents_dir, trusted_project
    from headwire.runtime.config.context_files import load_context
    from headwire.runtime.config.prompt import output_language_rule
    from headwire.runtime.policy.rules import split_rules
    from headwire.runtime.policy.shell_rules import is_read_only_command
    from headwire.runtime.tools.registry import canonical_name
    from headwire.runtime.tools.toolset import ToolOptions, session_tools

    settings = settings_for(args, cwd)
    args = apply_settings(args, settings)
    sandbox = await _sandbox(settings, cwd)  # before anything runs: it holds, or the run stops
    building = _telemetry(args, settings, plan.session_id)
    root = data_dir()
    model = build_model(args, settings, plan.session_id)
    closers: list[Closer] = [lambda: close_model(model)]
    try:
        contract = contract_config(args, model, settings.model_pricing, plan.usage)
        policy = policy_from_args(args, cwd)
        core = core_names(args)
        only = only_tools(args)  # --tools: narrows whatever else offers a built-in tool
        if only is not None and not core:
            core = sorted(only)
        options = ToolOptions(
            list_directory=settings.list_directory_enabled,
            todo_write=settings.todo_write_enabled,
            web_fetch_allow_private=settings.web_fetch_allow_private,
            todo_dir=root / "todos",
            shell_read_only=is_read_only_command,
            new_file_bom=settings.new_file_bom,
        )
        tools = session_tools(options, core or None, split_rules(args.exclude_tools) or None)
        if only is not None:
            tools = [t for t in tools if canonical_name(t.name) in only]
        agents = load_agents(root / "agents", project_agents_dir(args, root, cwd), warn)
        agents.update(inline_agents(args))
        depth = args.max_subagent_depth
        wants_agent = (not core or "agent" in core) and (only is None or "agent" in only)
        if wants_agent and not policy.excludes("agent"):
            tools.append(AgentTool(agents))
        skills = _skills(args, settings, root, cwd)
        if skills and (not core or "skill" in core) and not policy.excludes("skill"):
            from headwire.runtime.tools.skill import SkillTool

            tools.append(SkillTool(list(skills.values())))
        extra, statuses, close_mcp = (
            await _mcp_tools(args, cwd, acp_servers, settings)
            if sandbox is None
            else _no_mcp(args, acp_servers, settings)
        )
        if close_mcp is not None:
            closers.append(close_mcp)
        names = {t.name for t in tools}
        tools += [t for t in extra if t.name not in names]  # built-ins keep their names
    except BaseException:
        for close in reversed(closers):
            await close()
        raise
    config = AgentConfig(
        session_id=plan.session_id,
        cwd=cwd,
        model_name=model.name,
        policy=policy,
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt,
        version=__version__,
        tool_timeout_s=args.tool_timeout,
        workspace_dirs=tuple(Path(d).resolve() for d in split_list(args.include_directories)),
        max_subagent_depth=depth,
        agent_names=tuple(agents),
        mcp_statuses=statuses,
        sandbox=sandbox,
        # context files: what the trust table lets this folder supply, confined to the
        # folders they are found in (runtime.context_files)
        context_text="\n\n".join(
            part
            for part in (
                load_context(
                    cwd,
                    root,
                    settings.context_file_names,
                    trusted=trusted_project(args, root, cwd),
                    note=warn,
                ),
                output_language_rule(settings.output_language),
            )
            if part
        ),
        context=context_settings(settings),
        hooks=_hooks(settings, cwd),
        skills=skills,
        skill_catalogue=_catalogue(skills),
        output_style=output_style(args, settings, root, cwd),
        style_choices=lambda: session_styles(args, root, cwd),
        **contract,
    )
    try:
        recorder = Recorder(  # checks the id; locks a resumed one
            root,
            cwd,
            plan.session_id,
            persist=not getattr(args, "no_session_persistence", False),
            fork_from=plan.fork_from,
        )
    except RecordingError as exc:
        for close in reversed(closers):
            await close()
        raise UsageError(str(exc)) from None
    try:
        telemetry = None if building is None else await building
    except BaseException:
        recorder.close()
        for close in reversed(closers):
            await close()
        raise
    events = Broadcast()
    events.subscribe(RecordingSubscriber(recorder, events))
    if telemetry is not None:
        events.subscribe(telemetry)
        closers.insert(0, telemetry.aclose)  # the last step of aclose: a bounded flush
    agent = Agent(
        config,
        model,
        tools,
        events,
        ArtifactStore(root, cwd),
        ask=ask,
        conversation=plan.conversation,
    )
    if config.hooks is not None:
        config.hooks.transcript_path = str(recorder.path)
        closers.append(agent.end_session)  # runs first: SessionEnd before anything closes
    return Runtime(agent, events, recorder, closers, telemetry)


def _skills(
    args: argparse.Namespace, settings: Settings, root: Path, cwd: Path
) -> dict[str, Skill]:
    """The session's skills by name (project ones only in a trusted folder, one note when
    skipped), after the ``skills.*`` settings."""
    from headwire.cli.flags.trust import project_skills_allowed
    from headwire.runtime.skills import discover, skill_roots, visible

    levels = settings.skills_disabled_levels
    trusted = "project" not in levels and project_skills_allowed(args, root, cwd)
    roots = [r for r in skill_roots(root, cwd, Path.home(), trusted=trusted) if r[1] not in levels]
    found = visible(
        discover(roots, warn),
        disabled=settings.skills_disabled,
        enabled=settings.skills_enabled,
        default_disabled=settings.skills_default_disabled,
    )
    return {s.name: s for s in found}


def session_styles(args: argparse.Namespace, root: Path, cwd: Path) -> dict[str, OutputStyle]:
    """Every output style this session may take, by lower-case name (the project's only in a
    trusted folder; a file that cannot be used is a note)."""
    from headwire.cli.flags.trust import project_styles_allowed
    from headwire.runtime.config.output_styles import load_styles, style_roots

    home = Path.home()
    trusted = project_styles_allowed(args, root, cwd)
    return load_styles(style_roots(root, cwd, home, trusted=trusted), home, warn)


def output_style(
    args: argparse.Namespace, settings: Settings, root: Path, cwd: Path
) -> OutputStyle | None:
    """The session's output style: ``--output-style``, else ``general.outputStyle``; ``None``
    for none, for a replaced system prompt, and (with a note) for an unknown name or a style a
    headless run cannot follow.  Style files are read only when a style is asked for."""
    wanted = getattr(args, "output_style", None) or settings.output_style
    if not wanted or wanted.strip().lower() == "default":
        return None
    from headwire.runtime.config.output_styles import resolve_style

    interactive = bool(getattr(args, "interactive", False))
    style, note = resolve_style(wanted, session_styles(args, root, cwd), interactive=interactive)
    if note is not None:
        warn(f"headwire: {note}")
    if style is not None and args.system_prompt is not None:
        warn(
            f"headwire: note: output style {style.name} not applied: --system-prompt replaces "
            "the built-in prompt it layers onto"
        )
        return None
    return style


def _catalogue(skills: dict[str, Skill]) -> str:
    if not skills:
        return ""
    from headwire.runtime.skills import catalogue

    return catalogue(skills.values())


def _hooks(settings: Settings, cwd: Path) -> HookRunner | None:
    """The session's hooks, ``None`` when the settings configure none (then the hook
    machinery is never imported)."""
    layers = settings.hook_layers()
    if not layers:
        return None
    from headwire.runtime.hooks.decide import hook_table
    from headwire.runtime.hooks.runner import HookRunner

    return HookRunner(
        hook_table(layers),
        cwd=cwd,
        allow_private_network=settings.web_fetch_allow_private,
        stop_cap=settings.stop_hook_cap,
    )


async def open_acp_runtime(
    args: argparse.Namespace,
    cwd: Path,
    session_id: str,
    *,
    ask: AskPermission | None,
    acp_servers: Sequence[dict[str, Any]],
) -> Runtime:
    """The runtime of one ACP session (``session/new`` or ``session/load``): the flags' model
    and tools, the client's MCP servers, the session's own id (its history is read back
    separately, before the first prompt)."""
    ns = argparse.Namespace(**vars(args))
    ns.resume, ns.continue_, ns.session_id = None, False, session_id
    return await build_runtime(ns, cwd, SessionPlan(session_id), ask=ask, acp_servers=acp_servers)


__all__ = [
    "Runtime",
    "SessionPlan",
    "approval_mode",
    "build_model",
    "build_runtime",
    "check_flags",
    "close_model",
    "open_acp_runtime",
    "output_style",
    "plan_session",
    "session_styles",
]
