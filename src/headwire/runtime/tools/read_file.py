"""``read_file``: read a text file, optionally a window of lines (``offset``/``limit``).

Follows Qwen Code 0.24.4's text path: at most 1,000 lines by default, lines right-trimmed,
at most 25,000 characters (the line that crosses the cap is cut and ends ``... [truncated]``)
and at most 100,000 bytes read for the window.  A partial read is announced to the model as
``Showing lines A-B of N total lines.`` and displayed as ``Read lines A-B of N from PATH``; a
full read has no display (the wire falls back to the model text).  Binary files (a NUL byte
or mostly control bytes in the first 4 KiB) are skipped like upstream.  Images and PDFs are
treated as binary here.  The file is streamed, so huge files cost only the window.
"""

from __future__ import annotations

import asyncio
import codecs
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.paths import (
    PathDenied,
    approval_needed,
    check_file_path_args,
    denied_outcome,
    display_path,
    failure,
    open_confined,
    resolve_in_workspace,
)

DEFAULT_LINE_LIMIT = 1_000
CHAR_LIMIT = 25_000
BYTE_LIMIT = 100_000
EXACT_COUNT_MAX_SIZE = 10 * 1024 * 1024
SNIFF_BYTES = 4_096
TRUNCATED = "... [truncated]"
# Bytes that count as "non-printable" in upstream's binary sniffing (below 9, or 14..31).
_CONTROL = bytes(range(9)) + bytes(range(14, 32))
_NOT_CONTROL = bytes(b for b in range(256) if b not in _CONTROL)


def looks_binary(sample: bytes) -> bool:
    """Upstream's heuristic: a NUL byte, or more than 30% control bytes (no BOM)."""
    if not sample or sample.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return False
    if b"\0" in sample:
        return True
    return len(sample.translate(None, _NOT_CONTROL)) / len(sample) > 0.3


def _decoder_for(head: bytes) -> tuple[str, int]:
    """The codec and BOM length for a file starting with ``head``."""
    if head.startswith(codecs.BOM_UTF8):
        return "utf-8", 3
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16", 0
    return "utf-8", 0


@dataclass(slots=True)
class Window:
    """A window of lines read from a file."""

    lines: list[str] = field(default_factory=list)
    total: int = 0
    exact: bool = True
    byte_cut: bool = False


def _skip_rest_of_line(handle: IO[bytes]) -> bool:
    """Consume up to the next newline; ``False`` at end of file."""
    while True:
        piece = handle.readline(1 << 16)
        if not piece:
            return False
        if piece.endswith(b"\n"):
            return True


def _count_lines(handle: IO[bytes]) -> int:
    """The number of lines left in ``handle`` (a last line without newline counts)."""
    count, last = 0, b""
    while chunk := handle.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk
    return count + (1 if last and not last.endswith(b"\n") else 0)


def read_window(path: Path, offset: int, limit: int, size: int) -> Window:
    """Lines ``[offset, offset + limit)`` of ``path`` (decoded, at most ``BYTE_LIMIT`` bytes)."""
    window = Window()
    with os.fdopen(open_confined(path, os.O_RDONLY), "rb") as handle:
        head = handle.read(4)
        encoding, bom = _decoder_for(head)
        if encoding != "utf-8":
            handle.seek(0)
            text = handle.read().decode(encoding, errors="replace")
            return _window_of_text(text, offset, limit)
        handle.seek(bom)
        index, taken = 0, 0
        while index < offset + limit:
            raw = handle.readline(BYTE_LIMIT + 1)
            if not raw:
                break
            if len(raw) > BYTE_LIMIT and not raw.endswith(b"\n"):
                _skip_rest_of_line(handle)
            if index >= offset and not window.byte_cut:
                if taken + len(raw) > BYTE_LIMIT:
                    raw = raw[: max(BYTE_LIMIT - taken, 0)]
                    window.byte_cut = True
                taken += len(raw)
                window.lines.append(raw.rstrip(b"\n").decode("utf-8", errors="replace").rstrip())
            index += 1
        if size > EXACT_COUNT_MAX_SIZE:
            window.exact = handle.read(1) == b""
        else:
            index += _count_lines(handle)
        window.total = index
    return window


def _window_of_text(text: str, offset: int, limit: int) -> Window:
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    chosen = [line.rstrip() for line in lines[offset : offset + limit]]
    return Window(lines=chosen, total=len(lines))


def _fit(lines: list[str]) -> tuple[str, int, bool]:
    """Join ``lines`` under ``CHAR_LIMIT``: ``(text, lines included, cut)``."""
    parts: list[str] = []
    length = 0
    for count, line in enumerate(lines, start=1):
        sep = 1 if parts else 0
        if length + sep + len(line) <= CHAR_LIMIT:
            parts.append(line)
            length += sep + len(line)
            continue
        room = max(CHAR_LIMIT - length - sep, 10)
        parts.append(line[:room] + TRUNCATED)
        return "\n".join(parts), count, True
    return "\n".join(parts), len(lines), False


class ReadFileTool:
    """Read a file from the workspace."""

    name: str = "read_file"
    display_name: str = "ReadFile"
    description: str = (
        "Reads and returns the content of a file. The file_path argument MUST be an absolute "
        "path (project root + relative path). Large files are truncated; the response says so "
        "and tells how to read more with the 'offset' and 'limit' parameters. Binary files are "
        "not displayed."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "properties": {
            "file_path": {
                "description": (
                    "The absolute path to the file to read (e.g. "
                    "'/home/user/project/file.txt'). Relative paths are not supported."
                ),
                "type": "string",
            },
            "offset": {
                "description": (
                    "Optional: the 0-based line number to start reading from "
                    "(text files). Use with 'limit' to page through large files."
                ),
                "type": ["integer", "null"],
            },
            "limit": {
                "description": (
                    "Optional: the maximum number of lines to read (text files). "
                    "Omit to read the whole file, up to a default limit."
                ),
                "type": ["integer", "null"],
            },
            "pages": {
                "description": "Optional: for PDF files, the page range to extract (e.g. '1-5').",
                "type": ["string", "null"],
            },
        },
        "required": ["file_path"],
        "type": "object",
    }
    kind: ToolKind = "read"

    def validate(self, args: dict[str, Any]) -> str | None:
        """Schema check plus upstream's path, offset and limit rules."""
        problem = check_file_path_args(
            self.parameters,
            args,
            empty="The 'file_path' parameter must be non-empty.",
            relative=(
                "File path must be absolute, but was relative: {path}. "
                "You must provide an absolute path."
            ),
        )
        if problem:
            return problem
        offset, limit = args.get("offset"), args.get("limit")
        if offset is not None and offset < 0:
            return "Offset must be a non-negative integer"
        if limit is not None and limit <= 0:
            return "Limit must be a positive integer"
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Reads never ask."""
        return approval_needed(self.kind, mode)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Read the file (in a worker thread)."""
        raw: str = args["file_path"]
        try:
            path = resolve_in_workspace(raw, ctx, allow_artifacts=True)
        except PathDenied as exc:
            return denied_outcome(exc)
        offset = args.get("offset") or 0
        limit = args.get("limit") or DEFAULT_LINE_LIMIT
        return await asyncio.to_thread(self._read, raw, path, offset, limit, ctx)

    def _read(self, raw: str, path: Path, offset: int, limit: int, ctx: ToolContext) -> ToolOutcome:
        rel = display_path(raw, ctx)
        try:
            stats = path.stat()
        except FileNotFoundError:
            return failure(
                "Could not read file because no file was found at the specified path.",
                "File not found.",
                f"File not found: {raw}",
                "file_not_found",
            )
        except OSError as exc:
            return failure(
                f"Error reading file: {exc.strerror}",
                "Error reading file",
                f"Error reading file {raw}: {exc.strerror}",
                "read_content_failure",
            )
        if path.is_dir():
            return failure(
                "Could not read file because the provided path is a directory, not a file.",
                "Path is a directory.",
                f"Path is a directory, not a file: {raw}",
                "target_is_directory",
            )
        if not path.is_file():
            return failure(
                f"Cannot read file: {path.name} is not a regular file "
                "(e.g. device, socket, or pipe).",
                "Not a regular file.",
                f"Not a regular file: {raw}",
                "read_content_failure",
            )
        try:
            with os.fdopen(open_confined(path, os.O_RDONLY), "rb") as handle:
                sample = handle.read(SNIFF_BYTES)
            if looks_binary(sample):
                return ToolOutcome(
                    llm_text=f"Cannot display content of binary file: {rel}",
                    display=f"Skipped binary file: {rel}",
                )
            window = read_window(path, offset, limit, stats.st_size)
        except OSError as exc:
            return failure(
                f"Error reading file: {exc.strerror}",
                "Error reading file",
                f"Error reading file {raw}: {exc.strerror}",
                "read_content_failure",
            )
        return _outcome(window, offset, rel)


def _outcome(window: Window, offset: int, rel: str) -> ToolOutcome:
    text, included, cut = _fit(window.lines)
    if window.byte_cut and not text.endswith(TRUNCATED):
        text = text[: max(CHAR_LIMIT - len(TRUNCATED) - 1, 0)]
        text += ("" if not text or text.endswith("\n") else "\n") + TRUNCATED
        cut = True
    end = offset + included
    truncated = cut or offset > 0 or not window.exact or end < window.total
    label = str(window.total) if window.exact else f"at least {window.total}"
    if not truncated:
        return ToolOutcome(llm_text=text, display=None)
    llm = f"Showing lines {offset + 1}-{end} of {label} total lines.\n\n---\n\n{text}"
    display = f"Read lines {offset + 1}-{end} of {label} from {rel}" + (
        " (truncated)" if cut else ""
    )
    return ToolOutcome(
        llm_text=llm,
        display=display,
        extra={"lines_shown": [offset + 1, end], "total_lines": window.total},
    )
