"""The REPL's slash commands: what they are, how a line names one, and the session listing.

A line is a slash command when it is ``/word`` or ``/word ARGUMENT`` (a word of lowercase
letters and dashes); such a line is handled by the REPL and never sent to the model.  Any other
line (``/etc/hosts: what is this?``) is a prompt; ``//text`` sends ``/text``.

:func:`recent_sessions` lists a project's recordings (``projects/<slug>/chats/*.jsonl``) newest
first, reading at most the first few lines of each, so a listing costs one ``stat`` per
recording and a few KiB, whatever their size.
"""

from __future__ import annotations

import difflib
import re
import time
from collections.abc import Collection
from pathlib import Path

from headwire.errors import UsageError
from headwire.progress import clip
from headwire.records import dataclass
from headwire.runtime.store.storage import chats_dir

COMMANDS: dict[str, tuple[str, str]] = {
    "help": ("", "show this help"),
    "sessions": ("", "list this project's recorded sessions, newest first"),
    "resume": (
        "[ID]",
        "continue a recorded session (an id or its first characters; no id: the latest other one)",
    ),
    "model": ("[NAME]", "show the model, or use NAME from the next turn on"),
    "approval-mode": (
        "[MODE]",
        "show the approval mode, or set it: default, plan, auto-edit, yolo",
    ),
    "output-style": (
        "[NAME]",
        "list the output styles, or answer in NAME from the next turn on (default: none)",
    ),
    "clear": ("", "start a new session with an empty conversation"),
    "compact": ("", "replace the conversation by a summary (your requests and the last step stay)"),
    "quit": ("", "leave (also /exit, Ctrl-D at an empty prompt, Ctrl-C at an empty prompt)"),
}
ALIASES = {"exit": "quit", "q": "quit", "?": "help", "compress": "compact", "summarize": "compact"}
_COMMAND = re.compile(r"/([a-z][a-z-]*|\?)(?:\s+(.*))?", re.DOTALL)
APPROVAL_MODES = ("default", "plan", "auto-edit", "yolo")


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A parsed command line: the command's canonical name and its argument (may be empty)."""

    name: str
    argument: str


def parse(line: str, prompts: Collection[str] = ()) -> SlashCommand | str:
    """The command a line names, else the prompt it sends (``//x`` sends ``/x``; ``/name``
    for a name in ``prompts``, the session's skills, is sent as it is: the agent runs it).

    Raises :class:`~headwire.errors.UsageError` for an unknown ``/word`` (with a "did you
    mean"), so a mistyped command never reaches the model.
    """
    stripped = line.strip()
    if stripped.startswith("//"):
        return stripped[1:]
    match = _COMMAND.fullmatch(stripped)
    if match is None:
        return line
    word, argument = match.group(1), (match.group(2) or "").strip()
    name = ALIASES.get(word, word)
    if name not in COMMANDS and word in prompts:
        return stripped
    if name not in COMMANDS:
        close = difflib.get_close_matches(word, [*COMMANDS, *ALIASES], n=1)
        hint = f" Did you mean /{close[0]}?" if close else ""
        raise UsageError(
            f"Unknown command /{word}.{hint} /help lists the commands; start the line with //"
            " to send it to the model."
        )
    return SlashCommand(name, argument)


def help_text() -> str:
    """What ``/help`` prints."""
    rows = [f"  /{name} {usage}".ljust(24) + text for name, (usage, text) in COMMANDS.items()]
    keys = [
        "",
        "Keys: Enter sends the line; Ctrl-C stops the running turn (at the prompt: clears",
        "the line, or leaves at an empty prompt); Ctrl-D at an empty prompt leaves; Up and",
        "Down walk the history. Tool calls that need approval ask: y once, a always for",
        "that tool, n no. A line starting with // sends the rest with one /.",
    ]
    return "\n".join(["Commands (handled here, never sent to the model):", *rows, *keys])


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One recording: its session id, last write (epoch seconds), size, first prompt."""

    session_id: str
    modified: float
    size: int
    first_prompt: str


def recent_sessions(root: Path, cwd: Path, limit: int = 20) -> list[SessionSummary]:
    """The project's recordings, newest first (at most ``limit``), from the index behind
    ``headwire sessions list`` (:func:`headwire.runtime.store.session_index.list_sessions`)."""
    from headwire.runtime.store.session_index import list_sessions

    folder = chats_dir(root, cwd).resolve()
    try:
        infos = list_sessions(root)
    except OSError:
        return []
    mine = [i for i in infos if Path(i.path).parent.resolve() == folder]
    mine.sort(key=lambda i: i.mtime, reverse=True)
    return [SessionSummary(i.session_id, i.mtime, i.size, i.first_prompt) for i in mine[:limit]]


def format_sessions(sessions: list[SessionSummary], current: str) -> str:
    """The ``/sessions`` table (``*`` marks the current session)."""
    if not sessions:
        return "No recorded sessions in this project yet."
    lines = []
    for s in sessions:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.modified))
        mark = "*" if s.session_id == current else " "
        size = f"{s.size / 1024:,.0f} KiB" if s.size >= 1024 else f"{s.size} B"
        lines.append(
            f"{mark} {clip(s.session_id, 36):36}  {when}  {size:>10}  {clip(s.first_prompt, 50)}"
        )
    return "\n".join(lines)


def resolve_session(root: Path, cwd: Path, text: str, current: str) -> str:
    """The session id ``text`` names: an id, or the first characters of exactly one; empty:
    the newest recording other than ``current``.  Raises :class:`UsageError` otherwise."""
    names = [s.session_id for s in recent_sessions(root, cwd, limit=100_000)]
    if not text:
        others = [name for name in names if name != current]
        if not others:
            raise UsageError("No other recorded session in this project.")
        return others[0]
    if text in names:
        return text
    matches = [name for name in names if name.startswith(text)]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise UsageError(f"{len(matches)} sessions start with {text!r}; type more of the id.")
    raise UsageError(f"No recorded session {text!r} in this project; /sessions lists them.")


__all__ = [
    "APPROVAL_MODES",
    "COMMANDS",
    "SessionSummary",
    "SlashCommand",
    "format_sessions",
    "help_text",
    "parse",
    "recent_sessions",
    "resolve_session",
]
