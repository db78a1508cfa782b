"""``headwire [options] [prompt]``: the headless agent.

Flags follow Qwen Code's spelling so scripts written for it run unchanged, and Claude Code's
spellings work beside them.  Where they meet: ``-p TEXT`` (Qwen Code) gives the prompt, ``-p``
followed by a flag or nothing (Claude Code's print mode) takes it from the arguments; either
way stdin, when there is any, comes first.  Claude Code's list flags (``--allowedTools``,
``--disallowedTools``, ``--tools``) take arguments while they are tool rules
(:mod:`headwire.cli.flags.claude_argv`).  Exit codes (the
README's matrix): ``0`` success; ``1`` the run ended with an error result (model failure, no
answer matching ``--json-schema``, a bug); ``2`` bad flags or input, found before the run;
``53`` a run limit was reached (``--max-session-turns``/``--max-turns``, ``--max-budget-usd``,
``--max-duration``); ``55`` ``--max-tool-calls`` was reached; ``130`` interrupted by SIGINT,
``143`` stopped by SIGTERM (the running turn is cancelled first: its error ``result`` is
emitted and recorded, its tool's process group and the MCP servers are stopped).
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from headwire import __version__
from headwire.cli.flags.parsing import Parser
from headwire.io.stdio import warn
from headwire.runtime.agent.limits import check_max_tool_calls, check_subagent_depth
from headwire.runtime.telemetry import PROTOCOLS as TELEMETRY_PROTOCOLS
from headwire.runtime.telemetry import TARGETS as TELEMETRY_TARGETS

MAX_TIMEOUT_S = 2_147_483.0
"""The longest ``--tool-timeout``: whole seconds under 2**31 - 1 ms, the longest timer of Node."""
MAX_FD = 2**31 - 1
"""The largest descriptor number a C ``int`` holds."""


def seconds(text: str) -> float:
    """``--tool-timeout``: a finite number of seconds, above 0 and at most MAX_TIMEOUT_S."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
        raise argparse.ArgumentTypeError(
            f"must be more than 0 and at most {MAX_TIMEOUT_S:.0f} seconds, not {text!r}"
        )
    return value


def dollars(text: str) -> float:
    """``--max-budget-usd``: a finite amount of US dollars above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an amount of dollars") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a number of dollars above 0, not {text!r}")
    return value


def _whole(text: str, check: Callable[[int], int]) -> int:
    try:
        return check(int(text))
    except ValueError as exc:
        message = str(exc) if str(exc).startswith("expected") else f"not a whole number: {text!r}"
        raise argparse.ArgumentTypeError(message) from None


def tool_call_count(text: str) -> int:
    """``--max-tool-calls``: -1 (no limit) or 0 to 1,000,000 (Qwen Code's range)."""
    return _whole(text, check_max_tool_calls)


def subagent_depth(text: str) -> int:
    """``--max-subagent-depth``: 1 to 100 (Qwen Code refuses anything else)."""
    return _whole(text, check_subagent_depth)


def descriptor(text: str) -> int:
    """``--json-fd``: a descriptor number from 3 to MAX_FD (whether it is open is checked when
    it is used)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a file descriptor number") from None
    if not 3 <= value <= MAX_FD:
        raise argparse.ArgumentTypeError(
            f"must be a descriptor from 3 to {MAX_FD} (0-2 are stdin, stdout, stderr), not {text}"
        )
    return value


def session_id(text: str) -> str:
    """``--session-id`` / ``--resume``: one plain file name, the rule recordings are kept by."""
    from headwire.runtime.store.recording import InvalidSessionIdError, check_session_id

    try:
        return check_session_id(text)
    except InvalidSessionIdError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def check_new_session_id(
    parser: argparse.ArgumentParser, args: argparse.Namespace, root: Path, cwd: Path
) -> None:
    """Refuse ``--session-id ID`` (without ``--resume``/``--continue``) when this project
    already has a recording of ``ID`` holding records: a second conversation would be appended
    to the first one's file.  Exits 2 through ``parser.error``."""
    if not args.session_id or args.resume or args.continue_:
        return
    from headwire.runtime.store.recording import RecordingError, find_session

    try:
        path = find_session(root, cwd, args.session_id)
        held = path.stat().st_size > 0
    except (RecordingError, OSError):
        return
    if held:
        parser.error(
            f"session {args.session_id} already exists in this project; continue it with "
            f"--resume {args.session_id}, or choose a new --session-id"
        )


def split_list(values: list[str] | None) -> list[str]:
    """Comma-separated, repeatable flag values as one list (blanks dropped)."""
    out: list[str] = []
    for value in values or []:
        out += [v.strip() for v in value.split(",") if v.strip()]
    return out


def build_parser() -> Parser:
    """The agent's flags (Qwen Code's names)."""
    p = Parser(
        prog="headwire",
        usage=USAGE,
        description="A headless coding agent whose wire tool results are bounded exactly.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("query", nargs="*", metavar="PROMPT", help="the prompt (joined with spaces)")
    p.add_argument(
        "-p",
        "--prompt",
        "--print",
        nargs="?",
        const="",
        metavar="PROMPT",
        help="run once and print (no REPL); -p TEXT (Qwen Code) gives the prompt, -p alone "
        "(Claude Code) takes it from the arguments; stdin comes first when both are given",
    )
    p.add_argument(
        "-o",
        "--output-format",
        choices=["text", "json", "stream-json"],
        default="text",
        action=StoreGiven,
        help="text: the answer alone; json: one JSON array of every message at the end; "
        "stream-json: one JSON message per line as it happens",
    )
    p.add_argument(
        "--input-format",
        choices=["text", "stream-json"],
        default="text",
        help="stream-json: a persistent session reading user messages and SDK control "
        "requests as JSON lines on stdin (needs -o stream-json)",
    )
    p.add_argument(
        "--include-partial-messages",
        action="store_true",
        help="add stream_event partial messages (stream-json only)",
    )
    p.add_argument(
        "-m",
        "--model",
        help="model name (env OPENAI_MODEL); 'scripted' or 'scripted:NAME' for the offline model",
    )
    p.add_argument(
        "--script",
        metavar="FILE|NAME",
        help="use the offline scripted model: a JSONL file of turns (format below) or a "
        "built-in script (demo, big-output, done)",
    )
    p.add_argument(
        "--openai-base-url",
        metavar="URL",
        help="the provider's base URL (env OPENAI_BASE_URL, ANTHROPIC_BASE_URL, "
        "GOOGLE_GEMINI_BASE_URL)",
    )
    p.add_argument(
        "--openai-api-key",
        metavar="KEY",
        help="the provider's API key (env OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY); "
        "a local or private server needs none; with neither a key nor a base URL the run "
        "stops (exit 2)",
    )
    p.add_argument(
        "--auth-type",
        default=None,
        metavar="{openai,anthropic,gemini}",
        help="the model provider (default: from the environment, else openai)",
    )
    p.add_argument(
        "--approval-mode",
        choices=["default", "plan", "auto-edit", "yolo"],
        help="default: tools that change things ask first (and are refused when nobody can "
        "be asked); plan: they are refused; auto-edit: file edits run, the rest ask; yolo: "
        "everything runs (default: default, or yolo with -y)",
    )
    p.add_argument(
        "--parse-text-tool-calls",
        action="store_true",
        default=None,
        help="openai: also read tool calls the model writes as text (JSON or XML)",
    )
    p.add_argument("-y", "--yolo", action="store_true", help="approve every tool call")
    p.add_argument(
        "--core-tools",
        action="append",
        metavar="TOOLS",
        help="only these built-in tools (comma-separated)",
    )
    p.add_argument(
        "--exclude-tools",
        action="append",
        metavar="TOOLS",
        help="remove these tools, or deny shell commands: 'run_shell_command(rm)' "
        "(enforced in every mode, --yolo too)",
    )
    p.add_argument(
        "--trust-project",
        action="store_true",
        help="use this folder's own MCP servers, agent definitions, context files and trusted "
        "settings (.headwire/) for this run; also HEADWIRE_TRUST_PROJECT=1 or 'headwire trust'",
    )
    p.add_argument(
        "--allow-protected-writes",
        action="store_true",
        help="let the file tools write .git/ and .headwire/ (refused otherwise, in every mode)",
    )
    p.add_argument(
        "--allowed-tools",
        action="append",
        metavar="TOOLS",
        help="run these without asking: tool names, or shell rules such as "
        "'run_shell_command(git status)' (see docs/security.md)",
    )
    p.add_argument(
        "--max-session-turns",
        type=int,
        default=None,
        metavar="N",
        help="stop with exit code 53 after N model calls in the session (-1: no limit; "
        "setting model.maxSessionTurns)",
    )
    p.add_argument(
        "--max-budget-usd",
        type=dollars,
        metavar="USD",
        help="stop with exit code 53 (result error_max_budget_usd) before the next model call "
        "once this run has spent USD dollars: the call that crosses it is the last (prices: "
        "docs/reference.md, Cost, settings modelPricing)",
    )
    p.add_argument(
        "--max-duration",
        type=seconds,
        metavar="SECONDS",
        help="stop a turn (the running step is cancelled) with exit code 53 after SECONDS of "
        "wall-clock time (result error_during_execution)",
    )
    p.add_argument(
        "--trajectory-out",
        metavar="FILE",
        help="when the run ends (any way: answer, limit, error, SIGINT/SIGTERM) write the "
        "session as an ATIF trajectory to FILE, replaced atomically (docs/evaluation.md)",
    )
    p.add_argument(
        "--include-bound-records",
        action="store_true",
        help="after each tool result the 65,536-byte bound cut, write a system "
        "tool_result_bound record saying what was cut and where the whole output is",
    )
    p.add_argument(
        "--json-schema",
        metavar="SCHEMA|FILE",
        help="the final answer must be JSON matching this JSON Schema (JSON text, a file, or "
        "@FILE); the value goes to the result's structured_output, an invalid answer is sent "
        "back to the model twice at most, then the run ends with "
        "error_max_structured_output_retries",
    )
    p.add_argument(
        "--settings",
        metavar="FILE|JSON",
        help="settings (docs/settings.md) as a file or JSON text, over the project and user files",
    )
    p.add_argument(
        "--fallback-model",
        action="append",
        metavar="MODEL",
        help="models to try, in order, when the model is overloaded (429/503/529); "
        "comma-separated, at most 3 (setting modelFallbacks)",
    )
    p.add_argument(
        "--resume",
        "-r",
        nargs="?",
        const="latest",
        metavar="SESSION_ID",
        help="resume a recorded session of this folder: its id, a unique prefix of it, or "
        "'latest' (also -r alone)",
    )
    p.add_argument(
        "--continue",
        "-c",
        dest="continue_",
        action="store_true",
        help="resume the most recent session of this project",
    )
    p.add_argument(
        "--fork-session",
        action="store_true",
        help="with --resume/--continue: go on in a new session (a new id, or --session-id) "
        "that starts with a copy of the resumed conversation",
    )
    p.add_argument(
        "--no-session-persistence",
        action="store_true",
        help="record nothing: the session cannot be resumed",
    )
    p.add_argument(
        "--session-id",
        type=session_id,
        metavar="SESSION_ID",
        help="use this session id for a new session",
    )
    p.add_argument("--system-prompt", metavar="TEXT", help="replace the built-in system prompt")
    p.add_argument(
        "--system-prompt-file", metavar="FILE", help="replace the system prompt with a file's text"
    )
    p.add_argument(
        "--append-system-prompt", metavar="TEXT", help="add TEXT to the end of the system prompt"
    )
    p.add_argument(
        "--output-style",
        metavar="NAME",
        help="the style answers are written in for this run: Concise, Proactive, Explanatory, "
        "Learning, a custom style's name, or default (overrides general.outputStyle)",
    )
    p.add_argument(
        "--append-system-prompt-file",
        metavar="FILE",
        help="a file's text added at the end of the system prompt",
    )
    p.add_argument(
        "--include-directories",
        action="append",
        metavar="DIRS",
        help="extra workspace directories the file tools may reach (comma-separated)",
    )
    p.add_argument(
        "--tool-timeout",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="seconds per tool call",
    )
    p.add_argument("--channel", metavar="NAME", help="accepted for SDK compatibility")
    p.add_argument(
        "--max-subagent-depth",
        metavar="N",
        type=subagent_depth,
        default=None,
        help="how deep subagents may nest, 1 to 100 (default 5, setting model.maxSubagentDepth; "
        "1: subagents start no subagents)",
    )
    p.add_argument(
        "--max-tool-calls",
        metavar="N",
        type=tool_call_count,
        default=None,
        help="stop with exit code 55 when the model asks for tool call N+1 of the run, "
        "subagents' counted; that call does not run (-1: no limit; setting model.maxToolCalls)",
    )
    p.add_argument(
        "--json-fd",
        type=descriptor,
        metavar="FD",
        help="Dual Output: mirror stream-JSON events to this descriptor (>= 3)",
    )
    p.add_argument(
        "--json-file",
        metavar="PATH",
        help="Dual Output: mirror stream-JSON events to this file or FIFO",
    )
    p.add_argument(
        "--input-file",
        metavar="PATH",
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
    p.add_argument(
        "-d",
        "--debug",
        action="store_true",
        help="echo MCP servers' stderr and the MCP SDK's warnings to stderr",
    )
    p.add_argument(
        "-v", "--version", action="version", version=__version__, help="print the version"
    )
    telemetry = p.add_argument_group(
        "telemetry (Qwen Code's flags; each over its telemetry.* setting and QWEN_TELEMETRY_* "
        "variable; see docs/telemetry.md)"
    )
    telemetry.add_argument(
        "--telemetry",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="export OpenTelemetry traces, logs and metrics, or not (telemetry.enabled)",
    )
    telemetry.add_argument(
        "--telemetry-target",
        choices=TELEMETRY_TARGETS,
        default=None,
        help="a label of the destination; routing follows the endpoint or outfile",
    )
    telemetry.add_argument(
        "--telemetry-otlp-endpoint",
        metavar="URL",
        default=None,
        help="the OTLP collector's base URL (telemetry.otlpEndpoint)",
    )
    telemetry.add_argument(
        "--telemetry-otlp-protocol",
        choices=TELEMETRY_PROTOCOLS,
        default=None,
        help="OTLP over gRPC or HTTP/protobuf (telemetry.otlpProtocol; default grpc)",
    )
    telemetry.add_argument(
        "--telemetry-log-prompts",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="put prompts and tool arguments into log records, or not (telemetry.logPrompts)",
    )
    telemetry.add_argument(
        "--telemetry-outfile",
        metavar="PATH",
        default=None,
        help="write telemetry as JSON lines to this file instead of OTLP (telemetry.outfile)",
    )
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
    claude.add_argument(
        "--dangerously-skip-permissions",
        dest="yolo",
        action="store_true",
        help="mapped to --yolo",
    )
    claude.add_argument("--max-turns", type=int, metavar="N", help="mapped to --max-session-turns")
    claude.add_argument(
        "--max-thinking-tokens",
        type=int,
        metavar="N",
        help="thinking budget of --auth-type anthropic (extended thinking) and gemini",
    )
    claude.add_argument(
        "--allowedTools",
        "--allowed_tools",
        action="append",
        dest="claude_allowed",
        metavar="TOOLS",
        help="mapped to --allowed-tools",
    )
    claude.add_argument(
        "--disallowedTools",
        action="append",
        dest="claude_disallowed",
        metavar="TOOLS",
        help="mapped to --exclude-tools",
    )
    claude.add_argument(
        "--add-dir",
        action="append",
        dest="add_dir",
        metavar="DIR",
        help="mapped to --include-directories",
    )
    claude.add_argument(
        "--agents",
        metavar="JSON",
        help='subagents as JSON: {"name": {"description", "prompt", "tools"?, "model"?}}',
    )
    claude.add_argument(
        "--tools",
        action="append",
        dest="only_tools",
        metavar="TOOLS",
        help="offer only these built-in tools (Claude Code's names or headwire's, "
        "comma-separated); '' offers none, 'default' all; narrows --core-tools, never widens it",
    )
    claude.add_argument(
        "--strict-mcp-config",
        action="store_true",
        help="use only the MCP servers of --mcp-config (none from the settings files)",
    )
    claude.add_argument(
        "--setting-sources",
        metavar="SOURCES",
        help="which settings files load: a comma-separated subset of user, project, local "
        "(local: headwire has no such file; '' loads none); --settings always loads",
    )
    for flag in IGNORED_CLAUDE_FLAGS:
        claude.add_argument(
            flag,
            dest="ignored_" + flag.strip("-").replace("-", "_"),
            default=None,
            metavar="VALUE",
            help=IGNORED_HELP,
        )
    for flag in IGNORED_CLAUDE_SWITCHES:
        claude.add_argument(
            flag,
            dest="ignored_" + flag.strip("-").replace("-", "_"),
            action="store_true",
            default=None,
            help=IGNORED_HELP,
        )
    return p


USAGE = """\
headwire [options] [prompt ...]
       headwire sessions {list,show,export,prune} ...
       headwire bound [--format FORMAT] [FILE ...]
       headwire schema [--mode MODE]
       headwire doctor [options]"""

IGNORED_HELP = "not supported by headwire: accepted for compatibility and ignored (a note says so)"
"""Only flags that cannot widen what the model may do are accepted this way; a restricting flag
(``--tools``, ``--strict-mcp-config``, ``--setting-sources``) is implemented instead."""

EPILOG = """\
environment:
  OPENAI_BASE_URL   the OpenAI-compatible server (default https://api.openai.com/v1)
  OPENAI_API_KEY    its API key; never passed to the tools headwire runs
  ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL
                    the same for --auth-type anthropic and gemini
  OPENAI_MODEL      the model, when -m is not given
  HEADWIRE_HOME     the data directory (default ~/.headwire): artifacts, recordings
  HEADWIRE_SCRIPT   the script of '-m scripted' when no --script is given

scripted model (--script FILE, or -m scripted:NAME for a built-in script):
  A JSON Lines file (or one JSON array); each entry answers one model call, in order,
  and past the end the model answers "done".  Blank lines and lines starting with # are
  skipped.  An entry is one of:
    {"text": "the answer"}                         an answer
    {"thinking": "...", "text": "..."}             with reasoning first
    {"tool": "NAME", "args": {...}}                one tool call
    {"tools": [{"name": "NAME", "args": {...}}]}   several tool calls
    {"error": "message"}                           the model call fails
  and any entry may add "delay_s": SECONDS, slept before answering.

subcommands:
  headwire sessions --help   list, show, export (md, html, json) and prune recorded sessions
  headwire bound --help      bound the tool results of a headless stream (files or stdin)
  headwire schema --help     print the wire's JSON Schema
  headwire doctor --help     probe a model endpoint
"""

CLAUDE_MODES = {
    "default": "default",
    "acceptEdits": "auto-edit",
    "plan": "plan",
    "bypassPermissions": "yolo",
    "dontAsk": "default",
    "auto": "default",
}
IGNORED_CLAUDE_FLAGS = (
    "--permission-prompt-tool",
    "--plugin-dir",
    "--effort",
    "--thinking",
    "--betas",
    "--task-budget",
    "--thinking-display",
    "--resume-session-at",
    "--resume-drops-turn",
)
IGNORED_CLAUDE_SWITCHES = (
    "--include-hook-events",
    "--session-mirror",
)


class StoreGiven(argparse.Action):
    """``store``, and ``<dest>_given = True`` on the namespace: a flag whose settings key applies
    only when the flag itself is absent (``-o`` and ``output.format``)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_given", True)


def apply_compat(args: argparse.Namespace) -> None:
    """Map Claude Code's flags onto headwire's and note the ones that do not apply."""
    if args.permission_mode and not args.approval_mode:
        args.approval_mode = CLAUDE_MODES[args.permission_mode]
    if args.max_turns is not None and args.max_session_turns is None:
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
        warn(f"headwire: note: not supported by headwire, ignored (cannot widen access): {names}")
