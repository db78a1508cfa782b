"""``write_file``: create or overwrite a file in the workspace.

The model text is upstream's ``Successfully created and wrote to new file: P.`` or
``Successfully overwrote file: P.``.  Upstream's display is a diff object, which headless
wires do not show as text (they fall back to the model text), so ``display`` is ``None`` and
the unified diff goes to ``extra["diff"]`` (with ``old_text``/``new_text`` for ACP diffs).

An existing file is overwritten only when the model read it in this session and it has not
changed since (:mod:`headwire.runtime.tools.read_ledger`).  The write is atomic
(:mod:`headwire.runtime.tools.atomic`): a temporary file in the same directory, renamed over
the target, so a failed write leaves the original whole and a hard link does not carry the
write elsewhere.  Directories are opened following no symlink, so a symlink swapped in after
the workspace check cannot redirect the write; FIFOs, sockets and devices are refused.

A replaced text file keeps how it was stored (:class:`FileFormat`, as upstream keeps it): a
byte order mark (UTF-8, or UTF-16 with its encoding) and CRLF line endings, so a model that
reads a Windows file and writes it back does not change every line.  A new file is plain
UTF-8, or UTF-8 with a mark under ``general.defaultFileEncoding: "utf-8-bom"``.
"""

from __future__ import annotations

import codecs
import errno
import os
from pathlib import Path
from typing import Any, BinaryIO

from headwire.records import dataclass
from headwire.runtime.tools.atomic import target_for_write, write_atomically
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.offload import in_thread
from headwire.runtime.tools.paths import (
    PathDenied,
    SpecialFile,
    approval_needed,
    check_file_path_args,
    check_regular,
    denied_outcome,
    failure,
    open_parent_confined,
    open_regular_for_reading,
)
from headwire.runtime.tools.read_file import looks_binary
from headwire.runtime.tools.read_ledger import ReadLedger

DIFF_MAX_CHARS = 1_000_000


def unified_diff(name: str, old: str, new: str, old_label: str, new_label: str) -> str:
    """A unified diff in jsdiff's ``createPatch`` layout (``Index:`` header, 3 context lines)."""
    if len(old) > DIFF_MAX_CHARS or len(new) > DIFF_MAX_CHARS:
        return f"Index: {name}\n(diff omitted: file too large)\n"
    import difflib  # only a write or an edit that runs makes a diff

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


def stat_target(path: Path) -> os.stat_result | None:
    """The stat of the resolved ``path`` itself (no symlink followed), ``None`` when it (or a
    directory above it) does not exist; :class:`SpecialFile` for a FIFO, socket or device."""
    try:
        dir_fd, name = open_parent_confined(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    finally:
        os.close(dir_fd)
    check_regular(info.st_mode, path)
    return info


def write_error(raw: str, exc: OSError | SpecialFile) -> ToolOutcome:
    """Upstream's messages for a failed write (and ours for a special file)."""
    if isinstance(exc, SpecialFile):
        return failure(exc.message, f"Error: {exc.message}", exc.message, "file_write_failure")
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


@dataclass(frozen=True, slots=True)
class FileFormat:
    """How a text file's bytes hold its text: the codec, the byte order mark written first
    (``b""``: none) and whether line endings are CRLF."""

    codec: str = "utf-8"
    bom: bytes = b""
    crlf: bool = False

    def encode(self, text: str) -> bytes:
        """``text`` stored this way: every line ending CRLF when ``crlf`` (a lone CR is kept),
        a leading U+FEFF dropped where the mark is written (never two marks), a lone surrogate
        (JSON's ``"\\ud800"`` reaches a tool as one) written as U+FFFD, as Node writes it."""
        if self.crlf:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        if self.bom:
            text = text.removeprefix("\ufeff")
        try:
            return self.bom + text.encode(self.codec)
        except UnicodeEncodeError:  # only lone surrogates fail: pairs join, the rest U+FFFD
            units = text.encode("utf-16-le", "surrogatepass")
            return self.bom + units.decode("utf-16-le", "replace").encode(self.codec)


PLAIN = FileFormat()
"""UTF-8, no mark, the line endings as given: a new file, or a replaced binary one."""
UTF8_BOM = FileFormat(bom=codecs.BOM_UTF8)
"""A new file under ``general.defaultFileEncoding: "utf-8-bom"``."""
_MARKS = (  # UTF-32's marks begin with UTF-16's: they come first
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_CHUNK = 1 << 20
CRLF_SCAN_BYTES = 64 << 20
"""How far into a file too large to diff its line endings are looked for: a file whose first
CRLF comes later is taken for LF, so replacing a huge file never reads more than this."""


def read_existing(path: Path) -> tuple[bool, str | None, FileFormat]:
    """Whether ``path`` exists, its text when small enough to diff (decoded as stored,
    undecodable bytes replaced), and its :class:`FileFormat` (:data:`PLAIN` when it looks
    binary).  A file too large to diff is read in chunks until a CRLF shows, never whole, and
    no further than :data:`CRLF_SCAN_BYTES`."""
    try:
        fd = open_regular_for_reading(path)
    except FileNotFoundError:
        return False, None, PLAIN
    with os.fdopen(fd, "rb") as handle:
        small = os.fstat(fd).st_size <= DIFF_MAX_CHARS
        head = handle.read(4_096)
        bom, codec = next(((m, c) for m, c in _MARKS if head.startswith(m)), (b"", "utf-8"))
        if not bom and looks_binary(head):
            text = (head + handle.read()).decode("utf-8", "replace") if small else None
            return True, text, PLAIN
        if small:
            text = (head + handle.read())[len(bom) :].decode(codec, "replace")
            return True, text, FileFormat(codec, bom, "\r\n" in text)
        return True, None, FileFormat(codec, bom, _has_crlf(head[len(bom) :], handle, codec))


def _has_crlf(head: bytes, rest: BinaryIO, codec: str) -> bool:
    """Whether the text of ``head`` followed by what ``rest`` holds (in ``codec``) has a CR LF
    pair in its first :data:`CRLF_SCAN_BYTES`, decoded a chunk at a time up to the first one
    (a pair split between chunks counts)."""
    decoder = codecs.getincrementaldecoder(codec)(errors="replace")
    chunk, last_cr, scanned = head, False, 0
    while chunk and scanned < CRLF_SCAN_BYTES:
        text = decoder.decode(chunk)
        if "\r\n" in text or (last_cr and text.startswith("\n")):
            return True
        last_cr, scanned = text.endswith("\r") if text else last_cr, scanned + len(chunk)
        chunk = rest.read(_CHUNK)
    return False


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
    writes_files: bool = True
    """Writes through :mod:`headwire.runtime.tools.atomic` (see ``base.writes_files``)."""

    def __init__(self, ledger: ReadLedger | None = None, *, new_file: FileFormat = PLAIN) -> None:
        self.ledger = ledger if ledger is not None else ReadLedger()
        self.new_file = new_file
        """How a file this tool creates is stored (:data:`UTF8_BOM` under
        ``general.defaultFileEncoding: "utf-8-bom"``)."""

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
            path = target_for_write(raw, ctx)
        except PathDenied as exc:
            return denied_outcome(exc)
        content: str = args["content"]
        return await in_thread(lambda: self._write(raw, path, content), timeout_s=ctx.timeout_s)

    def _write(self, raw: str, path: Path, content: str) -> ToolOutcome:
        if path.is_dir():
            message = f"Path is a directory, not a file: {raw}"
            return failure(message, message, message, "target_is_directory")
        try:
            refusal = self.ledger.refusal(stat_target(path), raw, "overwrite")
            if refusal is not None:
                return refusal
            existed, original, stored = read_existing(path)
            data = (stored if existed else self.new_file).encode(content)
            self.ledger.record_write(write_atomically(path, data))
        except (OSError, SpecialFile) as exc:
            return write_error(raw, exc)
        if existed:
            llm = f"Successfully overwrote file: {raw}."
        else:
            llm = f"Successfully created and wrote to new file: {raw}."
        extra: dict[str, Any] = {"path": str(path), "old_text": original, "new_text": content}
        if not existed or original is not None:
            extra["diff"] = unified_diff(path.name, original or "", content, "Original", "Written")
        return ToolOutcome(llm_text=llm, display=None, extra=extra)
