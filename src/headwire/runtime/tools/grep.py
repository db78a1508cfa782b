"""``grep_search``: search file contents with a regular expression.

Mirrors Qwen Code 0.24.4's ripgrep-backed tool: case-insensitive, hidden files and ignored
files skipped, binary files (a NUL byte) skipped, ``glob`` filters like ``rg --glob`` (a
pattern without ``/`` matches file names, ``!`` excludes).  The model text is
``Found N matches for pattern "P" in the workspace directory:\\n---\\n/abs/file:LINE:text``
(at most 1,000 lines and 25,000 characters, then ``[K lines truncated] ...``); the display
is ``Found N matches``.  Work is bounded: files over 16 MiB are skipped, walks stop after
200,000 entries or 512 MiB read (the result is then marked incomplete), and only the shown
lines are kept.

The pattern has Python ``re`` syntax and meaning, but it runs on RE2
(:mod:`headwire.runtime.tools.linear_regex`): time linear in the text, the GIL released, the
text scanned in windows of about 1 MiB with a cancellation check between them, on an
abandonable thread.  A pattern RE2 cannot run with the same meaning (backreferences,
look-around, ``\\b``) is searched with ``re`` in a worker process
(:mod:`headwire.runtime.tools.grep_worker`) that is killed on cancellation or at the tool timeout.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from pathlib import Path
from typing import Any

from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.glob import InvalidGlob
from headwire.runtime.tools.grep_walk import (
    CHAR_LIMIT,
    INCOMPLETE_NOTICE,
    LINE_LIMIT,
    Matches,
    compile_linear_pattern,
    compile_pattern,
    search,
    search_bytes,
)
from headwire.runtime.tools.linear_regex import NotLinear
from headwire.runtime.tools.offload import StepTimedOut, in_thread
from headwire.runtime.tools.paths import (
    INVALID,
    PathDenied,
    approval_needed,
    check_args,
    denied_outcome,
    failure,
    is_within,
    resolve_in_workspace,
    workspace_roots,
)
from headwire.runtime.tools.read_ledger import ReadLedger


def render(pattern: str, where: str, glob: str | None, found: Matches) -> ToolOutcome:
    """Upstream's texts for a finished search."""
    filter_text = f' (filter: "{glob}")' if glob else ""
    if found.total == 0:
        if found.incomplete:
            return ToolOutcome(
                llm_text=(
                    f'Search did not complete for pattern "{pattern}" {where}{filter_text}. '
                    "No valid matches were returned; do not treat this as no matches."
                ),
                display="Error: Search incomplete",
            )
        return ToolOutcome(
            llm_text=f'No matches found for pattern "{pattern}" {where}{filter_text}.',
            display="No matches found",
        )
    term = "match" if found.total == 1 else "matches"
    parts: list[str] = []
    length, included, cut = 0, 0, False
    for line in found.lines:
        sep = 1 if parts else 0
        if length + sep + len(line) <= CHAR_LIMIT:
            parts.append(line)
            length += sep + len(line)
            included += 1
            continue
        parts.append(line[: max(CHAR_LIMIT - length - sep, 10)] + "...")
        cut = True
        break
    text = (
        f'Found {found.total} {term} for pattern "{pattern}" {where}{filter_text}:\n---\n'
        + "\n".join(parts)
    )
    truncated = cut or found.total > len(found.lines)
    if truncated:
        omitted = found.total - included
        text += f"\n---\n[{omitted} {'line' if omitted == 1 else 'lines'} truncated] ..."
    if found.incomplete:
        text += f"\n---\n[{INCOMPLETE_NOTICE}]"
    tags = [tag for tag, on in (("truncated", truncated), ("incomplete", found.incomplete)) if on]
    display = f"Found {found.total} {term}" + (f" ({', '.join(tags)})" if tags else "")
    return ToolOutcome(llm_text=text.strip(), display=display)


class GrepTool:
    """Search file contents."""

    name: str = "grep_search"
    display_name: str = "Grep"
    description: str = (
        "A powerful content search tool.\n\n"
        "- Use it for every content search instead of running grep or rg in the shell.\n"
        '- Full regular expression syntax (e.g. "log.*Error", "function\\s+\\w+"), '
        "case-insensitive.\n"
        '- Filter files with the glob parameter (e.g. "*.js", "**/*.tsx").\n'
        "- Output lines look like path:line:text."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "properties": {
            "pattern": {
                "type": "string",
                "description": "The regular expression pattern to search for in file contents",
            },
            "glob": {
                "type": "string",
                "description": 'Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}")',
            },
            "path": {
                "type": "string",
                "description": (
                    "File or directory to search in. Defaults to the current working directory."
                ),
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": (
                    "Limit output to the first N matching lines. Optional - shows "
                    "all matches if not specified."
                ),
            },
        },
        "required": ["pattern"],
        "type": "object",
    }
    kind: ToolKind = "search"

    def __init__(self, ledger: ReadLedger | None = None) -> None:
        self.ledger = ledger if ledger is not None else ReadLedger()

    def validate(self, args: dict[str, Any]) -> str | None:
        """Schema check plus a compilable pattern."""
        problem = check_args(self.parameters, args)
        if problem:
            return problem
        try:
            compile_pattern(args["pattern"])
        except re.error as exc:
            return f"Invalid regular expression pattern: {args['pattern']}. Error: {exc}"
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Searches never ask."""
        return approval_needed(self.kind, mode)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Search ``path`` or every workspace root (in a worker thread)."""
        pattern: str = args["pattern"]
        glob: str | None = args.get("glob") or None
        raw_path: str | None = args.get("path") or None
        roots = workspace_roots(ctx)
        if raw_path:
            try:
                start = resolve_in_workspace(raw_path.strip(), ctx)
            except PathDenied as exc:
                return denied_outcome(exc)
            if not start.exists():
                message = f"Path does not exist: {start}"
                return failure(message, f"Error: {message}", message, INVALID, INVALID)
            starts, where = [start], f'in path "{raw_path}"'
        else:
            starts = list(roots)
            where = (
                f"across {len(roots)} workspace directories"
                if len(roots) > 1
                else "in the workspace directory"
            )
        limit = args.get("limit")
        keep = min(LINE_LIMIT, limit) if isinstance(limit, int) else LINE_LIMIT
        pairs = [
            (start, next((r for r in roots if is_within(start, (r,))), start)) for start in starts
        ]
        found = Matches(keep=keep)
        try:
            await _run_search(pattern, glob, pairs, roots, found, ctx)
        except InvalidGlob as exc:
            message = exc.args[0]
            return failure(message, f"Error: {message}", message, INVALID, INVALID)
        except StepTimedOut:  # what was found so far, marked incomplete
            found = Matches(found.keep, list(found.lines), found.total, incomplete=True)
        await in_thread(lambda: _record_seen(self.ledger, list(found.files)))
        if ctx.cancelled.is_set():
            message = "Search was cancelled."
            return ToolOutcome(
                llm_text=message, display=message, error=message, error_type="cancelled"
            )
        return render(pattern, where, glob, found)


def _record_seen(ledger: ReadLedger, files: list[str]) -> None:
    """Enter the files whose lines the result shows as (partly) read, like upstream."""
    for path in files:
        try:
            info = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            ledger.record_read(info)


async def _run_search(
    pattern: str,
    glob: str | None,
    pairs: list[tuple[Path, Path]],
    roots: tuple[Path, ...],
    found: Matches,
    ctx: ToolContext,
) -> None:
    """Search every ``(start, root)`` pair: RE2 on an abandonable thread, or ``re`` in the
    worker process when RE2 cannot carry the pattern's meaning."""
    try:
        regex = compile_linear_pattern(pattern)
    except NotLinear:
        from headwire.runtime.tools.grep_worker import search_in_worker

        await search_in_worker(pattern, glob, pairs, roots, found, ctx.timeout_s)
        return
    abandon = threading.Event()

    def stop() -> bool:
        return abandon.is_set() or ctx.cancelled.is_set()

    def scan(path: str, data: bytes) -> None:
        search_bytes(regex, data, path, found, stop)

    def run() -> None:
        for start, root in pairs:
            search(start, root, scan, glob, found, roots, stop)

    await in_thread(run, stop=abandon, timeout_s=ctx.timeout_s)
