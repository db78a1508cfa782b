"""``headwire sessions``: list, show, export and prune recorded sessions.

Recordings live under the data directory (``$HEADWIRE_HOME``, else ``~/.headwire``), one
JSONL file per session; their full tool outputs are artifacts beside them.  ``list`` reads
only each file's first 64 KiB and size (and caches what it scanned), so it stays fast on
thousands of recordings of any size.  A session is named by its id or by any unique prefix
of it.  Exit codes: ``0`` success, ``1`` a file could not be read, written or deleted, ``2`` a
usage error or an unknown session id.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TextIO

from headwire.cli.flags.parsing import Parser
from headwire.errors import ExitCode
from headwire.io.stdio import for_terminal, say, stdout_failed, warn
from headwire.printable import printable
from headwire.runtime.store.recording import RecordingError
from headwire.runtime.store.session_index import (
    SessionInfo,
    SessionNotFound,
    list_sessions,
    locate_session,
)
from headwire.runtime.store.storage import chats_dir, data_dir

__all__ = [
    "build_parser",
    "format_bytes",
    "parse_duration",
    "run_sessions",
]

_PROG = "headwire sessions"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhdw])")


def parse_duration(text: str) -> float:
    """Seconds in ``30d``, ``12h``, ``1d12h``, ``90m``, ``45s``, ``2w`` (units s m h d w)."""
    compact = text.strip().lower().replace(" ", "")
    if not compact or _DURATION.sub("", compact):
        raise argparse.ArgumentTypeError(
            f"invalid duration {text!r} (use a number and a unit: 30d, 12h, 90m, 45s, 2w)"
        )
    return sum(float(n) * _UNITS[unit] for n, unit in _DURATION.findall(compact))


def format_bytes(count: int) -> str:
    """``count`` for people: ``512 B``, ``1.5 KiB``, ``100.0 MiB``."""
    size = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TiB"  # pragma: no cover - unreachable


_OFFSETS: dict[str, timedelta] = {}


def _local(timestamp: str) -> str:
    """A recorded UTC timestamp in local time, to the minute."""
    try:
        when = datetime.fromisoformat(timestamp)
    except ValueError:
        return timestamp[:16] or "?"
    hour = timestamp[:13]
    offset = _OFFSETS.get(hour)
    if offset is None:  # one time zone lookup per hour of the recordings
        offset = when.replace(tzinfo=UTC).astimezone().utcoffset() or timedelta()
        _OFFSETS[hour] = offset
    return (when + offset).strftime("%Y-%m-%d %H:%M")


def build_parser() -> argparse.ArgumentParser:
    """The ``headwire sessions`` parser and its four commands."""
    parser = Parser(
        prog=_PROG,
        description="List, show, export and prune the sessions headwire recorded.",
        epilog="A session is named by its id or by a unique prefix of it. Data directory: "
        "$HEADWIRE_HOME, else ~/.headwire.",
    )
    commands = parser.add_subparsers(
        dest="command",
        required=True,
        metavar="COMMAND",
        help="list, show, export or prune ('headwire sessions COMMAND --help' for its flags)",
    )
    listing = commands.add_parser(
        "list", help="recorded sessions, newest first", description="Recorded sessions."
    )
    listing.add_argument(
        "--here", action="store_true", help="only the sessions of the current directory"
    )
    listing.add_argument(
        "-n",
        "--limit",
        type=int,
        default=50,
        metavar="N",
        help="show the newest N sessions (0: all; default: %(default)s)",
    )
    listing.add_argument(
        "--json", action="store_true", help="one JSON object per session instead of a table"
    )
    show = commands.add_parser(
        "show", help="a session's transcript in the terminal", description="Show a transcript."
    )
    show.add_argument("session", metavar="ID", help="session id or unique prefix")
    show.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="styles on a terminal (auto: when stdout is one and NO_COLOR is unset)",
    )
    export = commands.add_parser(
        "export",
        help="a session as Markdown, one self-contained HTML page, or JSON",
        description="Export a transcript.",
    )
    export.add_argument("session", metavar="ID", help="session id or unique prefix")
    export.add_argument(
        "--format",
        choices=["md", "html", "json", "atif"],
        default="html",
        help="md, html (one file, no scripts, opens offline), json, or atif (an ATIF "
        "trajectory, docs/evaluation.md) (default: %(default)s)",
    )
    export.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write to FILE (created 0600) instead of stdout",
    )
    prune = commands.add_parser(
        "prune",
        help="delete old recordings and artifacts",
        description="Delete recordings and artifacts last written more than DURATION ago. "
        "An artifact that a kept recording names is kept.",
    )
    prune.add_argument(
        "--older-than",
        required=True,
        type=parse_duration,
        metavar="DURATION",
        help="age of the last write: 30d, 12h, 1d12h, 90m, 45s, 2w",
    )
    prune.add_argument("--dry-run", action="store_true", help="only list what would be deleted")
    return parser


def _visible(text: str) -> str:
    """One table cell on one line, through :func:`~headwire.printable.printable`."""
    return printable(text, one_line=True)


def _table(infos: list[SessionInfo], out: TextIO, width: int) -> None:
    header = ("ID", "STARTED", "TURNS", "SIZE", "DIRECTORY", "FIRST PROMPT")
    rows = [
        (
            info.session_id,
            _local(info.started) if info.started else "?",
            str(info.turns),
            format_bytes(info.size),
            _visible(info.cwd or f"({Path(info.path).parent.parent.name})"),
            _visible(info.first_prompt),
        )
        for info in infos
    ]
    widths = [max([len(header[i])] + [len(r[i]) for r in rows]) for i in range(5)]
    if width < 10_000:  # a terminal: keep the directory's end, give the rest to the prompt
        widths[4] = min(widths[4], 40)
    for row in [header, *rows]:
        cells = [row[i].ljust(widths[i]) if i != 2 else row[i].rjust(widths[i]) for i in range(4)]
        cells[3] = row[3].rjust(widths[3])
        directory = row[4] if len(row[4]) <= widths[4] else "…" + row[4][-(widths[4] - 1) :]
        line = "  ".join([*cells, directory.ljust(widths[4]), row[5]])
        say((line[: width - 1] + "…" if len(line) > width else line).rstrip(), out)


def _list(args: argparse.Namespace, root: Path, out: TextIO) -> int:
    infos = list_sessions(root)
    if args.here:
        folder = str(chats_dir(root, Path.cwd()))
        infos = [i for i in infos if str(Path(i.path).parent) == folder]
    total = len(infos)
    if args.limit > 0:
        infos = infos[: args.limit]
    if args.json:
        from headwire.wire import dumps

        for info in infos:
            row = {
                "session_id": info.session_id,
                "started": info.started,
                "cwd": info.cwd,
                "turns": info.turns,
                "first_prompt": info.first_prompt,
                "size": info.size,
                "path": info.path,
            }
            out.write(dumps(row).decode() + "\n")
        return ExitCode.OK
    if not infos:
        say(f"No recorded sessions under {root}.", out)
        return ExitCode.OK
    width = shutil.get_terminal_size((10_000, 24)).columns if out.isatty() else 10_000
    _table(infos, out, width)
    if total > len(infos):
        say(f"… {total - len(infos)} older sessions not shown (--limit 0 shows all)", out)
    return ExitCode.OK


def _color(choice: str, out: TextIO) -> bool:
    if choice != "auto":
        return choice == "always"
    return out.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``, created 0600 (a transcript may hold secrets)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _export(args: argparse.Namespace, root: Path) -> int:
    from headwire import __version__
    from headwire.runtime.store.sessions import load_transcript
    from headwire.transcript import render_html, render_json, render_markdown

    path = locate_session(root, args.session)
    if args.format == "atif":
        from headwire.runtime.trajectory import trajectory_bytes

        data = trajectory_bytes(path, path.stem, __version__)
        if args.output and args.output != "-":
            _write_private(Path(args.output), data)
        else:
            sys.stdout.buffer.write(data)  # JSON escapes every control character
            sys.stdout.buffer.flush()
        return ExitCode.OK
    transcript = load_transcript(root, path)
    if args.format == "html":
        data = render_html(transcript, __version__)
    elif args.format == "md":
        data = render_markdown(transcript).encode("utf-8", "replace")
    else:
        data = render_json(transcript)
    if args.output and args.output != "-":
        _write_private(Path(args.output), data)
    else:
        sys.stdout.buffer.write(for_terminal(data))  # a person reads it on a terminal
        sys.stdout.buffer.flush()
    return ExitCode.OK


def _prune(args: argparse.Namespace, root: Path, out: TextIO) -> int:
    from headwire.runtime.store.sessions import apply_prune, plan_prune

    plan = plan_prune(root, time.time() - args.older_than)
    verb = "would delete" if args.dry_run else "deleted"
    for path, size in plan.recordings + plan.artifacts:
        say(f"{verb} {path} ({format_bytes(size)})", out)
    problems = [] if args.dry_run else apply_prune(root, plan)
    for problem in problems:
        warn(f"{_PROG}: cannot delete {problem}")
    summary = (
        f"{verb} {len(plan.recordings)} recordings and {len(plan.artifacts)} artifacts, "
        f"{format_bytes(plan.total_bytes)}"
    )
    if plan.kept_referenced:
        summary += f"; kept {plan.kept_referenced} old artifacts that kept recordings name"
    say(summary, out)
    return ExitCode.ERROR if problems else ExitCode.OK


def run_sessions(argv: list[str]) -> int:
    """Run ``headwire sessions ARGV``; return the exit code."""
    args = build_parser().parse_args(argv)
    root = data_dir()
    out = sys.stdout
    try:
        if args.command == "list":
            return _list(args, root, out)
        if args.command == "show":
            from headwire.runtime.store.sessions import load_transcript
            from headwire.transcript import render_terminal

            transcript = load_transcript(root, locate_session(root, args.session))
            out.write(render_terminal(transcript, _color(args.color, out)))
            out.flush()
            return ExitCode.OK
        if args.command == "export":
            return _export(args, root)
        return _prune(args, root, out)
    except SessionNotFound as exc:
        warn(f"{_PROG}: {exc}")
        return ExitCode.USAGE
    except RecordingError as exc:
        warn(f"{_PROG}: {exc}")
        return ExitCode.ERROR
    except BrokenPipeError as exc:
        return stdout_failed(_PROG, exc)
    except OSError as exc:
        if exc.filename is None:  # no file named: stdout's own error (a full disk)
            return stdout_failed(_PROG, exc)
        warn(f"{_PROG}: {exc.strerror or exc}: {exc.filename}")
        return ExitCode.ERROR
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
