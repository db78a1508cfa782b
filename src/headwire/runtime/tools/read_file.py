"""``read_file``: read a text file, optionally a window of lines (``offset``/``limit``).

Follows Qwen Code 0.24.4's text path: at most 1,000 lines by default, lines right-trimmed,
at most 25,000 characters (the line that crosses the cap is cut and ends ``... [truncated]``)
and at most 100,000 bytes read for the window.  A partial read is announced to the model as
``Showing lines A-B of N total lines.`` and displayed as ``Read lines A-B of N from PATH``; a
full read has no display (the wire falls back to the model text).  Binary files (a NUL byte
or mostly control bytes in the first 4 KiB) are skipped like upstream.  Images and PDFs are
treated as binary here.  The file is streamed, so huge files cost only the window, in every
encoding: a UTF-16 file (by its BOM) is decoded incrementally into UTF-8 as it is read.  As
upstream, a window that reaches the end of a file ending with a newline keeps that newline, so
a read-then-write round trip keeps it too.  FIFOs, sockets and devices are refused (opened
non-blocking, so none can block the read).  A successful read is entered in the session's
:class:`~headwire.runtime.tools.read_ledger.ReadLedger` (``write_file`` and ``edit`` need it).
"""

from __future__ import annotations

import codecs
import io
import os
from pathlib import Path
from typing import IO, Any

from headwire.records import dataclass, field
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.offload import in_thread
from headwire.runtime.tools.paths import (
    PathDenied,
    SpecialFile,
    approval_needed,
    check_file_path_args,
    denied_outcome,
    display_path,
    failure,
    open_regular_for_reading,
    resolve_in_workspace,
)
from headwire.runtime.tools.read_ledger import ReadLedger

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
    final_newline: bool = False
    """The window reaches the end of the file, and the file ends with a newline."""


class Utf8Transcoder(io.RawIOBase):
    """A readable stream of UTF-8 bytes decoded incrementally from a file in another
    encoding (64 KiB at a time; undecodable input becomes U+FFFD)."""

    def __init__(self, source: IO[bytes], encoding: str) -> None:
        self.source = source
        self.decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        self.pending = b""
        self.at = 0
        self.eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self.at >= len(self.pending) and not self.eof:
            chunk = self.source.read(1 << 16)
            self.eof = not chunk
            text = self.decoder.decode(chunk, final=self.eof)
            self.pending, self.at = text.encode("utf-8", errors="replace"), 0
        size = min(len(buffer), len(self.pending) - self.at)
        buffer[:size] = self.pending[self.at : self.at + size]
        self.at += size
        return size


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
    with os.fdopen(open_regular_for_reading(path), "rb") as raw:
        encoding, bom = _decoder_for(raw.read(4))
        raw.seek(bom)
        if encoding == "utf-8":
            return _window(raw, offset, limit, size)
        with io.BufferedReader(Utf8Transcoder(raw, encoding), 1 << 16) as handle:
            return _window(handle, offset, limit, size)


def _window(handle: IO[bytes], offset: int, limit: int, size: int) -> Window:
    window = Window()
    index, taken, last_newline = 0, 0, False
    while index < offset + limit:
        raw = handle.readline(BYTE_LIMIT + 1)
        if not raw:
            break
        long_line = len(raw) > BYTE_LIMIT and not raw.endswith(b"\n")
        last_newline = raw.endswith(b"\n")
        if index >= offset and not window.byte_cut:
            if taken + len(raw) > BYTE_LIMIT:
                raw = raw[: max(BYTE_LIMIT - taken, 0)]
                window.byte_cut = True
            taken += len(raw)
            window.lines.append(raw.rstrip(b"\n").decode("utf-8", errors="replace").rstrip())
        if window.byte_cut and size > EXACT_COUNT_MAX_SIZE:
            # Nothing more will be shown: the rest of a huge file is not scanned.
            window.total, window.exact = index + 1, False
            return window
        if long_line:
            _skip_rest_of_line(handle)
        index += 1
    if size > EXACT_COUNT_MAX_SIZE:
        window.exact = handle.read(1) == b""
        window.final_newline = window.exact and last_newline
    else:
        rest = _count_lines(handle)
        window.final_newline = rest == 0 and last_newline
        index += rest
    window.total = index
    return window


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

    def __init__(self, ledger: ReadLedger | None = None) -> None:
        self.ledger = ledger if ledger is not None else ReadLedger()

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
        return await in_thread(
            lambda: self._read(raw, path, offset, limit, ctx), timeout_s=ctx.timeout_s
        )

    def _read(self, raw: str, path: Path, offset: int, limit: int, ctx: ToolContext) -> ToolOutcome:
        rel = display_path(raw, ctx)
        try:
            stats = path.stat()
        except FileNotFoundError:
            return failure(
                f"No file was found at {raw}. Check the path (glob finds files by name).",
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
                f"{raw} is a directory, not a file. List it with glob (or list_directory) and "
                "read the files in it.",
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
            with os.fdopen(open_regular_for_reading(path), "rb") as handle:
                sample = handle.read(SNIFF_BYTES)
                seen = os.fstat(handle.fileno())
            if looks_binary(sample):
                self.ledger.record_read(seen, text=False)
                return ToolOutcome(
                    llm_text=f"Cannot display content of binary file: {rel}",
                    display=f"Skipped binary file: {rel}",
                )
            window = read_window(path, offset, limit, stats.st_size)
        except SpecialFile as exc:
            return failure(
                f"Cannot read file: {exc.message}",
                "Not a regular file.",
                f"Not a regular file: {raw}",
                "read_content_failure",
            )
        except OSError as exc:
            return failure(
                f"Error reading file: {exc.strerror}",
                "Error reading file",
                f"Error reading file {raw}: {exc.strerror}",
                "read_content_failure",
            )
        self.ledger.record_read(seen)
        return _outcome(window, offset, rel)


def _outcome(window: Window, offset: int, rel: str) -> ToolOutcome:
    text, included, cut = _fit(window.lines)
    if (
        window.final_newline
        and window.lines
        and not cut
        and not window.byte_cut
        and len(text) < CHAR_LIMIT
    ):
        text += "\n"
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
