"""``write_file``: create or overwrite a file in the workspace.

The model text is upstream's ``Successfully created and wrote to new file: P.`` or
``Successfully overwrote file: P.``.  Upstream's display is a diff object, which headless
wires do not show as text (they fall back to the model text), so ``display`` is ``None`` and
the unified diff goes to ``extra["diff"]`` (with ``old_text``/``new_text`` for ACP diffs).
The resolved path is opened with :func:`~headwire.runtime.tools.paths.open_confined`, so a
symlink swapped in after the workspace check (for the file or a directory above it) cannot
redirect the write.
"""

from __future__ import annotations

import asyncio
import difflib
import errno
import os
from pathlib import Path
from typing import Any

from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.paths import (
    PathDenied,
    approval_needed,
    check_file_path_args,
    check_protected,
    denied_outcome,
    failure,
    open_confined,
    resolve_in_workspace,
)

DIFF_MAX_CHARS = 1_000_000


def unified_diff(name: str, old: str, new: str, old_label: str, new_label: str) -> str:
    """A unified diff in jsdiff's ``createPatch`` layout (``Index:`` header, 3 context lines)."""
    if len(old) > DIFF_MAX_CHARS or len(new) > DIFF_MAX_CHARS:
        return f"Index: {name}\n(diff omitted: file too large)\n"
    body = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=name,
        tofile=name,
        fromfiledate=old_label,
        tofiledate=new_label,
    )
    lines = [
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in body
    ]
    if not lines:
        lines = [f"--- {name}\t{old_label}\n", f"+++ {name}\t{new_label}\n"]
    return f"Index: {name}\n{'=' * 67}\n" + "".join(lines)


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to the resolved ``path`` (parents created), following no symlink."""
    fd = open_confined(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666, make_parents=True)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


def write_error(raw: str, exc: OSError) -> ToolOutcome:
    """Upstream's messages for a failed write."""
    code = errno.errorcode.get(exc.errno or 0, "EIO")
    if exc.errno == errno.EACCES:
        message, kind = f"Permission denied writing to file: {raw} ({code})", "permission_denied"
    elif exc.errno == errno.ENOSPC:
        message, kind = f"No space left on device: {raw} ({code})", "no_space_left"
    elif exc.errno == errno.EISDIR:
        message, kind = f"Target is a directory, not a file: {raw} ({code})", "target_is_directory"
    elif exc.errno == errno.ELOOP:
        message, kind = (
            f"Refusing to write through a symbolic link: {raw} ({code})",
            "file_write_failure",
        )
    else:
        message, kind = (
            f"Error writing to file '{raw}': {exc.strerror} ({code})",
            "file_write_failure",
        )
    return failure(message, message, message, kind)


def read_existing(path: Path) -> tuple[bool, str | None]:
    """Whether ``path`` exists, and its text when small enough to diff."""
    try:
        fd = open_confined(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        return False, None
    with os.fdopen(fd, "rb") as handle:
        if os.fstat(fd).st_size > DIFF_MAX_CHARS:
            return True, None
        return True, handle.read().decode("utf-8", errors="replace")


class WriteFileTool:
    """Write a whole file."""

    name: str = "write_file"
    display_name: str = "WriteFile"
    description: str = (
        "Writes content to a file, creating it (and missing parent directories) or replacing "
        "it. Read an existing file first. The file_path argument MUST be an absolute path "
        "(project root + relative path)."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "properties": {
            "file_path": {
                "description": (
                    "The absolute path to the file to write to (e.g. "
                    "'/home/user/project/file.txt'). Relative paths are not supported."
                ),
                "type": "string",
            },
            "content": {"description": "The content to write to the file.", "type": "string"},
            "record_as_artifact": {
                "description": (
                    "Set false for intermediate files that should not be recorded "
                    "as session artifacts."
                ),
                "type": "boolean",
            },
        },
        "required": ["file_path", "content"],
        "type": "object",
    }
    kind: ToolKind = "edit"

    def validate(self, args: dict[str, Any]) -> str | None:
        """Schema check plus upstream's path rules."""
        problem = check_file_path_args(
            self.parameters,
            args,
            empty='Missing or empty "file_path"',
            relative="File path must be absolute: {path}",
        )
        if problem:
            return problem
        file_path = args["file_path"]
        if os.path.isdir(file_path):
            return f"Path is a directory, not a file: {file_path}"
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Asks in ``default`` and ``plan`` (where the runtime denies)."""
        return approval_needed(self.kind, mode)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Write the file (in a worker thread)."""
        raw: str = args["file_path"]
        try:
            path = check_protected(raw, resolve_in_workspace(raw, ctx), ctx)
        except PathDenied as exc:
            return denied_outcome(exc)
        return await asyncio.to_thread(self._write, raw, path, args["content"])

    @staticmethod
    def _write(raw: str, path: Path, content: str) -> ToolOutcome:
        if path.is_dir():
            message = f"Path is a directory, not a file: {raw}"
            return failure(message, message, message, "target_is_directory")
        try:
            existed, original = read_existing(path)
            write_bytes(path, content.encode("utf-8"))
        except OSError as exc:
            return write_error(raw, exc)
        if existed:
            llm = f"Successfully overwrote file: {raw}."
        else:
            llm = f"Successfully created and wrote to new file: {raw}."
        extra: dict[str, Any] = {"path": str(path), "old_text": original, "new_text": content}
        if not existed or original is not None:
            extra["diff"] = unified_diff(path.name, original or "", content, "Original", "Written")
        return ToolOutcome(llm_text=llm, display=None, extra=extra)
