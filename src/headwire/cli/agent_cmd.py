"""The headless agent: flags (:mod:`headwire.cli.flags`) to a run in the mode they ask for."""

from __future__ import annotations

import argparse
import os
import sys
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from headwire import __version__
from headwire.cli.dual import DualOutput, open_dual_output
from headwire.cli.flags import apply_compat, build_parser, check_new_session_id, split_list
from headwire.errors import ExitCode, UsageError
from headwire.io.dual_output import DualOutputError
from headwire.io.signals import run_cancellable
from headwire.io.stdio import WireWriter, warn
from headwire.protocol.messages import JsonDict
from headwire.runtime.agent import Agent, AgentConfig
from headwire.runtime.agents.definitions import load_agents
from headwire.runtime.agents.tool import AgentTool
from headwire.runtime.environment import credential_environment
from headwire.runtime.models.base import Model
from headwire.runtime.recording import (
    Recorder,
    RecordingError,
    conversation_of,
    find_session,
    latest_session,
)
from headwire.runtime.storage import ArtifactStore, data_dir
from headwire.runtime.tools.base import ApprovalMode, Tool
from headwire.transports import HeadlessTransport, make_transport


def _model(args: argparse.Namespace) -> Model:
    from headwire.runtime.models.scripted import ScriptedModel, ScriptError, load_script

    spec = args.script
    model = args.model or os.environ.get("OPENAI_MODEL")
    if spec is None and model and (model == "scripted" or model.startswith("scripted:")):
        spec = model.partition(":")[2] or os.environ.get("HEADWIRE_SCRIPT") or "demo"
    if spec is not None:
        try:
            return ScriptedModel(load_script(spec), name=args.model or "scripted")
        except ScriptError as exc:
            raise UsageError(str(exc)) from None
    if args.auth_type not in (None, "openai"):
        raise UsageError(f"--auth-type {args.auth_type} is not supported; use --auth-type openai")
    from headwire.runtime.models.openai import OpenAIModel, resolve_openai_config

    try:
        base_url, api_key, name = resolve_openai_config(
            credential_environment(), args.openai_base_url, args.openai_api_key, args.model
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return OpenAIModel(base_url, api_key, name)


def _read_prompt(args: argparse.Namespace) -> str:
    parts: list[str] = []
    if args.input_format == "text" and not sys.stdin.isatty():
        data = sys.stdin.buffer.read()
        text = data.decode("utf-8", "replace").strip()
        if text:
            parts.append(text)
    if args.prompt:
        parts.append(args.prompt)
    if args.query:
        parts.append(" ".join(args.query))
    return "\n\n".join(parts)


def build_agent(
    args: argparse.Namespace, cwd: Path, emit: Callable[[JsonDict], None]
) -> tuple[Agent, Callable[[], Awaitable[None]]]:
    """Resolve flags into an :class:`Agent` (model, tools, recording, resume) and its closer."""
    from headwire.runtime.tools.registry import builtin_tools, select_tools

    root = data_dir()
    session_id = args.session_id or str(uuid.uuid4())
    conversation: list[dict[str, Any]] = []
    try:
        if args.resume:
            path = find_session(root, cwd, args.resume)
            session_id = args.resume
            conversation = conversation_of(path)
        elif args.continue_:
            path_or_none = latest_session(root, cwd)
            if path_or_none is not None:
                session_id = path_or_none.stem
                conversation = conversation_of(path_or_none)
    except RecordingError as exc:
        raise UsageError(str(exc)) from None
    mode: ApprovalMode = "yolo" if args.yolo else (args.approval_mode or "default")
    tools = select_tools(
        builtin_tools(),
        split_list(args.core_tools) or None,
        split_list(args.exclude_tools) or None,
    )
    model = _model(args)
    agents = load_agents(root / "agents", cwd / ".headwire" / "agents", warn)
    core = split_list(args.core_tools)
    if (
        args.max_subagent_depth > 0
        and "agent" not in split_list(args.exclude_tools)
        and (not core or "agent" in core)
    ):
        tools.append(AgentTool(agents))
    config = AgentConfig(
        session_id=session_id,
        cwd=cwd,
        model_name=model.name,
        approval_mode=mode,
        allowed_tools=tuple(split_list(args.allowed_tools)),
        max_session_turns=args.max_session_turns,
        include_partial_messages=args.include_partial_messages
        and args.output_format == "stream-json",
        system_prompt=args.system_prompt,
        append_system_prompt=args.append_system_prompt,
        version=__version__,
        json_stats=args.output_format == "json",
        tool_timeout_s=args.tool_timeout,
        workspace_dirs=tuple(Path(d).resolve() for d in split_list(args.include_directories)),
        max_subagent_depth=max(0, args.max_subagent_depth),
        agent_names=tuple(agents),
    )
    try:
        recorder = Recorder(root, cwd, session_id)  # checks the id; locks a resumed recording
    except RecordingError as exc:
        raise UsageError(str(exc)) from None
    agent = Agent(
        config, model, tools, emit, ArtifactStore(root, cwd), recorder, conversation=conversation
    )

    async def close() -> None:
        recorder.close()
        aclose = getattr(model, "aclose", None)
        if aclose is not None:
            await aclose()

    return agent, close


async def build_agent_with_mcp(
    args: argparse.Namespace, cwd: Path, emit: Callable[[JsonDict], None]
) -> tuple[Agent, Callable[[], Awaitable[None]]]:
    """:func:`build_agent` plus the MCP servers of the settings files and ``--mcp-config``
    (their tools added, ``system/init`` statuses kept live, shut down by the closer)."""
    from headwire.runtime.mcp.setup import McpConfigError, attach_to_agent, start_mcp

    agent, close = build_agent(args, cwd, emit)
    try:
        manager = await start_mcp(
            data_dir(),
            cwd,
            getattr(args, "mcp_config", None),
            debug=bool(args.debug),
            version=__version__,
        )
    except McpConfigError as exc:
        await close()
        raise UsageError(str(exc)) from None
    except BaseException:
        await close()
        raise
    if manager is None:
        return agent, close
    attach_to_agent(agent, manager, split_list(args.exclude_tools))

    async def close_all() -> None:
        try:
            await manager.aclose()
        finally:
            await close()

    return agent, close_all


async def _run(
    args: argparse.Namespace, prompt: str | None, writer: WireWriter, transport: HeadlessTransport
) -> int:
    """One prompt (or, with ``prompt=None``, the interactive line-mode REPL)."""
    reported: list[str] = []
    dual: DualOutput | None = None

    def emit(message: JsonDict) -> None:
        out = transport.feed(message)
        writer.write(out.stdout)
        if out.stderr:
            warn(out.stderr.decode("utf-8", "replace"))
        if dual is not None:
            dual.emit(message)
        failed = agent.recorder.failed if agent.recorder else None
        if failed and not reported:
            reported.append(failed)
            warn(f"headwire: session recording disabled: {failed}")

    agent, close = await build_agent_with_mcp(args, Path.cwd(), emit)
    try:
        try:
            dual = open_dual_output(args, agent.config.session_id, agent.config.cwd, __version__)
        except DualOutputError as exc:
            raise UsageError(str(exc)) from None
        if dual is not None:
            dual.agent = agent
            agent.ask = dual.ask
            agent.config.include_partial_messages = True
            dual.start()
        if prompt is None:
            from headwire.cli.repl import run_repl

            return await run_repl(agent, dual, writer)
        result = await agent.run_turn(prompt)
    finally:
        if dual is not None:
            await dual.close()
        await close()
    if not result["is_error"]:
        return ExitCode.OK
    return ExitCode.TURN_LIMIT if result["subtype"] == "error_max_turns" else ExitCode.ERROR


async def connect_acp_mcp(
    servers: list[dict[str, Any]], cwd: Path
) -> tuple[list[Tool], list[dict[str, Any]], Callable[[], Awaitable[None]]]:
    """Connect the ``mcpServers`` an ACP client sent with ``session/new`` / ``session/load``."""
    from headwire.runtime.mcp.client import McpManager
    from headwire.runtime.mcp.config import parse_acp_servers
    from headwire.runtime.mcp.setup import connect_timeout_s

    configs, problems = parse_acp_servers(servers)
    for problem in problems:
        warn(f"headwire: MCP server skipped: {problem}")
    manager = McpManager(configs, version=__version__, connect_timeout_s=connect_timeout_s())
    try:
        await manager.start()
    except BaseException:
        await manager.aclose()
        raise
    return list(manager.tools()), manager.statuses(), manager.aclose


def run_agent(argv: list[str]) -> int:
    """Parse ``argv`` and run one headless session; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    apply_compat(args)
    check_new_session_id(parser, args, data_dir(), Path.cwd())
    if args.acp:
        from headwire.acp.server import run_acp

        return run_acp(args, build_agent, connect_acp_mcp)
    if args.input_format == "stream-json":
        if args.output_format != "stream-json":
            parser.error("--input-format stream-json requires --output-format stream-json")
        from headwire.cli.session_cmd import run_session

        return run_session(args)
    writer = WireWriter()
    try:
        interactive = (
            not args.prompt
            and not args.query
            and args.output_format == "text"
            and sys.stdin.isatty()
        )
        prompt = None if interactive else _read_prompt(args)
        if prompt is not None and not prompt.strip():
            raise UsageError(
                "No input provided. Pass a prompt with -p, as an argument, or on stdin."
            )
        transport = make_transport(args.output_format, args.include_partial_messages)
        return run_cancellable(_run(args, prompt, writer, transport))
    except UsageError as exc:
        warn(f"headwire: {exc}")
        return ExitCode.USAGE
    except KeyboardInterrupt:
        warn("headwire: interrupted")
        return ExitCode.INTERRUPTED
