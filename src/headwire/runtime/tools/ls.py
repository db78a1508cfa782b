"""``list_directory``: list the entries directly inside a directory.

Texts follow Qwen Code 0.24.4: ``Listed N item(s) in P:\\n---\\n[DIR] a\\nb`` for the model
(directories first, then by name, at most 100 entries, git/qwen-ignored counts appended) and
``Listed N item(s)`` as the display.  ``.gitignore`` / ``.qwenignore`` rules from the workspace
root down to the directory are honoured as upstream applies them, each name tested as a file
path (so ``build/`` does not hide a ``build`` directory here, ``build`` does; ``.git`` itself
counts as git-ignored); ``ignore``
takes upstream's simple ``*``/``?`` patterns matched against entry names.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.glob import is_ignored, rule_chain
from headwire.runtime.tools.linear_regex import LinearPattern, compile_linear
from headwire.runtime.tools.offload import in_thread
from headwire.runtime.tools.paths import (
    PathDenied,
    approval_needed,
    check_args,
    denied_outcome,
    failure,
    is_within,
    open_confined,
    resolve_in_workspace,
    workspace_roots,
)

MAX_ENTRY_COUNT = 100


def name_pattern(pattern: str) -> LinearPattern:
    """Upstream's ``ignore`` matching: ``*`` is any run, ``?`` one character, whole name
    (RE2: linear in the name however many ``*`` the pattern has)."""
    body = re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".")
    return compile_linear(f"(?s:{body})\\Z")


class ListDirectoryTool:
    """List a directory."""

    name: str = "list_directory"
    display_name: str = "ListFiles"
    description: str = (
        "Lists the names of files and subdirectories directly within a specified directory "
        "path. Can optionally ignore entries matching provided glob patterns."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "properties": {
            "path": {
                "description": (
                    "The absolute path to the directory to list (must be absolute, not relative)"
                ),
                "type": "string",
            },
            "ignore": {
                "description": "List of glob patterns to ignore",
                "items": {"type": "string"},
                "type": "array",
            },
            "file_filtering_options": {
                "description": (
                    "Optional: whether to respect ignore patterns from .gitignore, "
                    ".qwenignore and configured custom Qwen ignore files"
                ),
                "type": "object",
                "properties": {
                    "respect_git_ignore": {
                        "description": "Optional: respect .gitignore patterns (default true).",
                        "type": "boolean",
                    },
                    "respect_qwen_ignore": {
                        "description": "Optional: respect .qwenignore patterns (default true).",
                        "type": "boolean",
                    },
                },
            },
        },
        "required": ["path"],
        "type": "object",
    }
    kind: ToolKind = "search"

    def validate(self, args: dict[str, Any]) -> str | None:
        """Schema check plus an absolute path."""
        problem = check_args(self.parameters, args)
        if problem:
            return problem
        args["path"] = args["path"].strip()
        if not os.path.isabs(args["path"]):
            return f"Path must be absolute: {args['path']}"
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Listing never asks."""
        return approval_needed(self.kind, mode)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """List the directory (in a worker thread)."""
        raw: str = args["path"]
        try:
            path = resolve_in_workspace(raw, ctx)
        except PathDenied as exc:
            return denied_outcome(exc)
        roots = workspace_roots(ctx)
        root = next((r for r in roots if is_within(path, (r,))), path)
        return await in_thread(lambda: _list(raw, path, root, args), timeout_s=ctx.timeout_s)


def _error(llm: str, short: str, kind: str) -> ToolOutcome:
    return failure(llm, f"Error: {short}", llm, kind)


def _list(raw: str, path: Path, root: Path, args: dict[str, Any]) -> ToolOutcome:
    if not path.exists():
        return _error(
            f"Error listing directory: ENOENT: no such file or directory, stat '{raw}'",
            "Failed to list directory.",
            "ls_execution_error",
        )
    if not path.is_dir():
        return _error(
            f"Error: Path is not a directory: {raw}",
            "Path is not a directory.",
            "path_is_not_a_directory",
        )
    try:
        # Listed through a descriptor opened without following symlinks, so a directory
        # swapped for a link out of the workspace after the check is refused, not listed.
        fd = open_confined(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            names = sorted(os.listdir(fd))
        finally:
            os.close(fd)
    except OSError as exc:
        return _error(
            f"Error listing directory: {exc.strerror}",
            "Failed to list directory.",
            "ls_execution_error",
        )
    if not names:
        return ToolOutcome(llm_text=f"Directory {raw} is empty.", display="Directory is empty.")
    options = args.get("file_filtering_options") or {}
    git_chain = (
        rule_chain(path, root, (".gitignore",)) if options.get("respect_git_ignore", True) else None
    )
    qwen_chain = (
        rule_chain(path, root, (".qwenignore",))
        if options.get("respect_qwen_ignore", True)
        else None
    )
    patterns = [name_pattern(p) for p in args.get("ignore") or []]
    entries: list[tuple[bool, str]] = []
    git_ignored = qwen_ignored = 0
    for name in names:
        full = path / name
        is_dir = full.is_dir()
        # Upstream tests each entry's path as a file path: a directory-only rule ("build/")
        # does not hide a directory from this listing (it does from glob), a plain one does.
        if git_chain is not None and (name == ".git" or is_ignored(str(full), False, git_chain)):
            git_ignored += 1
            continue
        if qwen_chain is not None and is_ignored(str(full), False, qwen_chain):
            qwen_ignored += 1
            continue
        if any(p.match(name) for p in patterns):
            continue
        if is_dir or full.exists():
            entries.append((is_dir, name))
    entries.sort(key=lambda e: (not e[0], e[1].casefold(), e[1]))
    return _render(raw, entries, git_ignored, qwen_ignored)


def _render(
    raw: str, entries: list[tuple[bool, str]], git_ignored: int, qwen_ignored: int
) -> ToolOutcome:
    total = len(entries)
    truncated = total > MAX_ENTRY_COUNT
    listing = "\n".join(
        ("[DIR] " if is_dir else "") + name for is_dir, name in entries[:MAX_ENTRY_COUNT]
    )
    text = f"Listed {total} item(s) in {raw}:\n---\n{listing}"
    if truncated:
        omitted = total - MAX_ENTRY_COUNT
        text += f"\n---\n[{omitted} {'item' if omitted == 1 else 'items'} truncated] ..."
    ignored = [
        f"{count} {label}"
        for count, label in ((git_ignored, "git-ignored"), (qwen_ignored, "qwen-ignored"))
        if count
    ]
    if ignored:
        text += f"\n\n({', '.join(ignored)})"
    display = f"Listed {total} item(s)"
    if ignored:
        display += f" ({', '.join(ignored)})"
    if truncated:
        display += " (truncated)"
    return ToolOutcome(llm_text=text, display=display)
