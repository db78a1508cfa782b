"""``headwire [options] [prompt]``: the headless agent.

Flags follow Qwen Code's spelling so scripts written for it run unchanged.  Exit codes:
``0`` success; ``1`` the run ended with an error result (model failure, cancelled); ``2`` bad
flags or input (argparse); ``53`` ``--max-session-turns`` reached; ``130`` interrupted by
SIGINT, ``143`` stopped by SIGTERM (the running turn is cancelled first: its error ``result``
is emitted and recorded, its tool's process group and the MCP servers are stopped).
"""

from __future__ import annotations

import argparse

from headwire import __version__
from headwire.io.stdio import warn


def split_list(values: list[str] | None) -> list[str]:
    """Comma-separated, repeatable flag values as one list (blanks dropped)."""
    out: list[str] = []
    for value in values or []:
        out += [v.strip() for v in value.split(",") if v.strip()]
    return out


def build_parser() -> argparse.ArgumentParser:
    """The agent's flags (Qwen Code's names)."""
    p = argparse.ArgumentParser(
        prog="headwire",
        description="A headless coding agent whose wire tool results are bounded exactly.",
        epilog="Subcommands: 'headwire bound --help' (bound the tool results of a stream).",
    )
    p.add_argument("query", nargs="*", help="the prompt (joined with spaces)")
    p.add_argument("-p", "--prompt", help="the prompt; appended to stdin when both are given")
    p.add_argument("-o", "--output-format", choices=["text", "json", "stream-json"], default="text")
    p.add_argument("--input-format", choices=["text", "stream-json"], default="text")
    p.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="add stream_event partial messages (stream-json only)",
    )
    p.add_argument(
        "-m", "--model", help="model name; 'scripted' or 'scripted:NAME' for the offline model"
    )
    p.add_argument(
        "--script", help="scripted model: a JSONL file of turns, or a built-in name (demo)"
    )
    p.add_argument("--openai-base-url", help="OpenAI-compatible base URL (env OPENAI_BASE_URL)")
    p.add_argument("--openai-api-key", help="API key (env OPENAI_API_KEY)")
    p.add_argument("--auth-type", default=None, help="only 'openai' is supported")
    p.add_argument("--approval-mode", choices=["default", "plan", "auto-edit", "yolo"])
    p.add_argument("-y", "--yolo", action="store_true", help="approve every tool call")
    p.add_argument("--core-tools", action="append", help="only these tools (comma-separated)")
    p.add_argument("--exclude-tools", action="append", help="remove these tools")
    p.add_argument("--allowed-tools", action="append", help="run these without asking")
    p.add_argument("--max-session-turns", type=int, default=-1)
    p.add_argument("--resume", "-r", metavar="SESSION_ID", help="resume a recorded session")
    p.add_argument(
        "--continue",
        "-c",
        dest="continue_",
        action="store_true",
        help="resume the most recent session of this project",
    )
    p.add_argument("--session-id", help="use this session id for a new session")
    p.add_argument("--system-prompt")
    p.add_argument("--append-system-prompt")
    p.add_argument("--include-directories", action="append", help="extra workspace directories")
    p.add_argument("--tool-timeout", type=float, default=None, help="seconds per tool call")
    p.add_argument("--channel", help="accepted for SDK compatibility")
    p.add_argument(
        "--max-subagent-depth",
        type=int,
        default=1,
        help="how deep subagents may nest (default 1: subagents start no subagents)",
    )
    p.add_argument(
        "--json-fd",
        type=int,
        help="Dual Output: mirror stream-JSON events to this descriptor (>= 3)",
    )
    p.add_argument(
        "--json-file", help="Dual Output: mirror stream-JSON events to this file or FIFO"
    )
    p.add_argument(
        "--input-file",
        help="Dual Output reverse channel: JSONL commands (submit, confirmation_response)",
    )
    p.add_argument(
        "--acp",
        "--experimental-acp",
        dest="acp",
        action="store_true",
        help="serve the Agent Client Protocol (JSON-RPC 2.0) on stdin/stdout",
    )
    p.add_argument(
        "--mcp-config",
        action="append",
        metavar="JSON|FILE",
        help='MCP servers ({"mcpServers": {...}}) as JSON text or a file; repeatable',
    )
    p.add_argument("-d", "--debug", action="store_true")
    p.add_argument("-v", "--version", action="version", version=__version__)
    claude = p.add_argument_group("Claude Code SDK compatibility (mapped, or ignored with a note)")
    claude.add_argument(
        "--verbose",
        action="store_true",
        help="text mode: show tool calls and progress on stderr even when it is not a terminal"
        " (stream-json is always verbose)",
    )
    claude.add_argument(
        "--permission-mode", choices=sorted(CLAUDE_MODES), help="mapped to --approval-mode"
    )
    claude.add_argument("--max-turns", type=int, help="mapped to --max-session-turns")
    claude.add_argument("--allowedTools", "--allowed_tools", action="append", dest="claude_allowed")
    claude.add_argument("--disallowedTools", action="append", dest="claude_disallowed")
    claude.add_argument("--add-dir", action="append", dest="add_dir")
    for flag in IGNORED_CLAUDE_FLAGS:
        claude.add_argument(flag, dest="ignored_" + flag.strip("-").replace("-", "_"), default=None)
    for flag in IGNORED_CLAUDE_SWITCHES:
        claude.add_argument(
            flag,
            dest="ignored_" + flag.strip("-").replace("-", "_"),
            action="store_true",
            default=None,
        )
    return p


CLAUDE_MODES = {
    "default": "default",
    "acceptEdits": "auto-edit",
    "plan": "plan",
    "bypassPermissions": "yolo",
    "dontAsk": "default",
    "auto": "default",
}
IGNORED_CLAUDE_FLAGS = (
    "--setting-sources",
    "--tools",
    "--settings",
    "--fallback-model",
    "--max-budget-usd",
    "--permission-prompt-tool",
    "--plugin-dir",
    "--max-thinking-tokens",
    "--effort",
    "--json-schema",
    "--thinking",
    "--agents",
    "--betas",
    "--system-prompt-file",
    "--task-budget",
    "--thinking-display",
    "--resume-session-at",
    "--resume-drops-turn",
)
IGNORED_CLAUDE_SWITCHES = (
    "--include-hook-events",
    "--strict-mcp-config",
    "--fork-session",
    "--session-mirror",
)


def apply_compat(args: argparse.Namespace) -> None:
    """Map Claude Code's flags onto headwire's and note the ones that do not apply."""
    if args.permission_mode and not args.approval_mode:
        args.approval_mode = CLAUDE_MODES[args.permission_mode]
    if args.max_turns is not None and args.max_session_turns < 0:
        args.max_session_turns = args.max_turns
    if args.claude_allowed:
        args.allowed_tools = (args.allowed_tools or []) + args.claude_allowed
    if args.claude_disallowed:
        args.exclude_tools = (args.exclude_tools or []) + args.claude_disallowed
    if args.add_dir:
        args.include_directories = (args.include_directories or []) + args.add_dir
    if args.system_prompt == "":
        args.system_prompt = None
    ignored = sorted(
        k.removeprefix("ignored_")
        for k, v in vars(args).items()
        if k.startswith("ignored_") and v is not None
    )
    if ignored:
        names = ", ".join("--" + name.replace("_", "-") for name in ignored)
        warn(f"headwire: note: ignoring flags that do not apply here: {names}")
