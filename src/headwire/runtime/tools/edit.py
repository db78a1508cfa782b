"""``edit``: replace an exact literal string in a file (or create a file with ``old_string=""``).

Messages follow Qwen Code 0.24.4 (``Failed to edit, 0 occurrences found for old_string in
P. ...``, ``Found N occurrences ... but replace_all was not enabled.``, ...); every refusal is
a tool error (``execution_failed``, upstream's finer type in ``extra["upstream_error_type"]``)
whose model text is upstream's raw message and whose display is ``Error: <short message>``.
Success tells the model ``The file: P has been updated.`` plus a snippet of the edited region
(4 lines of context), like upstream.  Line endings (CRLF) and a UTF-8 BOM are preserved.
As upstream, an existing file is edited only when it was read in this session and has not
changed since (:mod:`headwire.runtime.tools.read_ledger`).  The new content replaces the file
atomically (:mod:`headwire.runtime.tools.atomic`); FIFOs, sockets and devices are refused.
"""

from __future__ import annotations

import codecs
import os
from pathlib import Path
from typing import Any

from headwire.errors import ToolError
from headwire.records import dataclass
from headwire.runtime.tools.atomic import target_for_write, write_atomically
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.offload import in_thread
from headwire.runtime.tools.paths import (
    PathDenied,
    SpecialFile,
    approval_needed,
    check_file_path_args,
    denied_outcome,
    failure,
    open_regular_for_reading,
)
from headwire.runtime.tools.read_file import looks_binary
from headwire.runtime.tools.read_ledger import ReadLedger
from headwire.runtime.tools.write_file import (
    PLAIN,
    FileFormat,
    stat_target,
    unified_diff,
    write_error,
)

SNIPPET_CONTEXT = 4
SNIPPET_MAX_LINES = 1_000
MAX_EDIT_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class _Original:
    text: str | None  # None: the file does not exist
    stored: FileFormat = PLAIN
    """How the file holds its text (a UTF-8 mark, CRLF endings), kept by the edit."""


class EditRefusal(ToolError):
    """Why an edit cannot be applied: upstream's raw and display messages and type."""

    def __init__(self, raw: str, short: str, kind: str) -> None:
        super().__init__(raw)
        self.raw, self.short, self.kind = raw, short, kind


def _load(path: Path, raw: str) -> _Original:
    try:
        fd = open_regular_for_reading(path)
    except FileNotFoundError:
        return _Original(None)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read() if os.fstat(fd).st_size <= MAX_EDIT_BYTES else None
    if data is None:
        raise EditRefusal(
            f"File is too large to edit: {raw}", "File is too large to edit.", "file_too_large"
        )
    if looks_binary(data[:4096]):
        raise EditRefusal(
            f"Cannot edit binary file: {raw}", "Cannot edit a binary file.", "read_content_failure"
        )
    bom = data.startswith(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8-sig" if bom else "utf-8")
    except UnicodeDecodeError as exc:
        raise EditRefusal(
            f"Failed to read content of existing file (not UTF-8): {raw}",
            "Failed to read content of file.",
            "read_content_failure",
        ) from exc
    stored = FileFormat(bom=codecs.BOM_UTF8 if bom else b"", crlf="\r\n" in text)
    return _Original(text.replace("\r\n", "\n"), stored)


def plan_edit(original: str | None, old: str, new: str, replace_all: bool, raw: str) -> str:
    """The new content, or :class:`EditRefusal` with upstream's reason."""
    if original is None:
        if old == "":
            return new
        raise EditRefusal(
            f"File not found: {raw}",
            "File not found. Cannot apply edit. Use an empty old_string to create a new file.",
            "file_not_found",
        )
    if old == "":
        raise EditRefusal(
            f"File already exists, cannot create: {raw}",
            "Failed to edit. Attempted to create a file that already exists.",
            "attempt_to_create_existing_file",
        )
    count = original.count(old)
    if count == 0:
        raise EditRefusal(
            f"Failed to edit, 0 occurrences found for old_string in {raw}. No edits made. The "
            "exact text in old_string was not found. Ensure you're not escaping content "
            "incorrectly and check whitespace, indentation, and context. Use read_file tool to "
            "verify.",
            "Failed to edit, could not find the string to replace.",
            "edit_no_occurrence_found",
        )
    if count > 1 and not replace_all:
        raise EditRefusal(
            f"Failed to edit. Found {count} occurrences for old_string in {raw} but replace_all "
            "was not enabled.",
            "Failed to edit because the text matches multiple locations. "
            "Provide more context or set replace_all to true.",
            "edit_expected_occurrence_mismatch",
        )
    if old == new:
        raise EditRefusal(
            f"No changes to apply. The old_string and new_string are identical in file: {raw}",
            "No changes to apply. The old_string and new_string are identical.",
            "edit_no_change",
        )
    updated = original.replace(old, new) if replace_all else original.replace(old, new, 1)
    if updated == original:
        raise EditRefusal(
            "No changes to apply. The new content is identical to the current content in file: "
            f"{raw}",
            "No changes to apply. The new content is identical to the current content.",
            "edit_no_change",
        )
    return updated


def edit_snippet(old: str | None, new: str) -> str | None:
    """Upstream's snippet of the changed region with context, or ``None``."""
    new_lines = new.split("\n")
    total = len(new_lines)
    if old is None:
        start, end, body = 1, total, new
    else:
        if old == new or not new:
            return None
        old_lines = old.split("\n")
        first = 0
        limit = min(len(old_lines), total)
        while first < limit and old_lines[first] == new_lines[first]:
            first += 1
        old_end, new_end = len(old_lines) - 1, total - 1
        while old_end >= first and new_end >= first and old_lines[old_end] == new_lines[new_end]:
            old_end, new_end = old_end - 1, new_end - 1
        change_start, change_end = first + 1, new_end + 1
        if change_end - change_start > SNIPPET_MAX_LINES:
            return None
        start = max(1, change_start - SNIPPET_CONTEXT)
        end = min(total, change_end + SNIPPET_CONTEXT)
        body = "\n".join(new_lines[start - 1 : end])
    return f"Showing lines {start}-{end} of {total} from the edited file:\n\n---\n\n{body}"


class EditTool:
    """Replace text in a file."""

    name: str = "edit"
    display_name: str = "Edit"
    description: str = (
        "Replaces text within a file. By default replaces a single occurrence; set "
        "`replace_all` to replace every occurrence of `old_string`. Read the file first.\n\n"
        "1. `file_path` MUST be an absolute path.\n"
        "2. `old_string` MUST be the exact literal text to replace (whitespace, indentation and "
        "newlines included); for a single replacement it must match exactly one location, so "
        "include a few lines of context.\n"
        "3. `new_string` is the exact literal replacement.\n"
        "4. Never escape `old_string` or `new_string`.\n"
        "An empty `old_string` creates a new file with `new_string` as its content."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "properties": {
            "file_path": {
                "description": "The absolute path to the file to modify. Must start with '/'.",
                "type": "string",
            },
            "old_string": {
                "description": (
                    "The exact literal text to replace, unescaped. For a single "
                    "replacement include enough context to match exactly once."
                ),
                "type": "string",
            },
            "new_string": {
                "description": "The exact literal text to replace `old_string` with, unescaped.",
                "type": "string",
            },
            "replace_all": {
                "type": "boolean",
                "description": "Replace all occurrences of old_string (default false).",
            },
        },
        "required": ["file_path", "old_string", "new_string"],
        "type": "object",
    }
    kind: ToolKind = "edit"
    writes_files: bool = True
    """Writes through :mod:`headwire.runtime.tools.atomic` (see ``base.writes_files``)."""

    def __init__(self, ledger: ReadLedger | None = None, *, new_file: FileFormat = PLAIN) -> None:
        self.ledger = ledger if ledger is not None else ReadLedger()
        self.new_file = new_file
        """How a file created with an empty ``old_string`` is stored (see ``write_file``)."""

    def validate(self, args: dict[str, Any]) -> str | None:
        """Schema check plus upstream's path rules."""
        problem = check_file_path_args(
            self.parameters,
            args,
            empty="The 'file_path' parameter must be non-empty.",
            relative="File path must be absolute: {path}",
        )
        if problem:
            return problem
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Asks in ``default`` and ``plan`` (where the runtime denies)."""
        return approval_needed(self.kind, mode)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Apply the edit (in a worker thread)."""
        raw: str = args["file_path"]
        try:
            path = target_for_write(raw, ctx)
        except PathDenied as exc:
            return denied_outcome(exc)
        return await in_thread(lambda: self._edit(raw, path, args), timeout_s=ctx.timeout_s)

    def _edit(self, raw: str, path: Path, args: dict[str, Any]) -> ToolOutcome:
        old = str(args["old_string"]).replace("\r\n", "\n")
        new = str(args["new_string"]).replace("\r\n", "\n")
        try:
            if path.is_dir():
                raise EditRefusal(
                    f"Target is a directory, not a file: {raw}",
                    "Target is a directory.",
                    "target_is_directory",
                )
            refusal = self.ledger.refusal(stat_target(path), raw, "edit")
            if refusal is not None:
                return refusal
            original = _load(path, raw)
            updated = plan_edit(original.text, old, new, bool(args.get("replace_all")), raw)
        except EditRefusal as refusal:
            return failure(refusal.raw, f"Error: {refusal.short}", refusal.raw, refusal.kind)
        except SpecialFile as exc:
            return failure(
                exc.message, f"Error: {exc.message}", exc.message, "read_content_failure"
            )
        except OSError as exc:
            message = f"Error preparing edit: {exc.strerror}"
            return failure(message, message, message, "edit_preparation_failure")
        data = (self.new_file if original.text is None else original.stored).encode(updated)
        try:
            self.ledger.record_write(write_atomically(path, data))
        except (OSError, SpecialFile) as exc:
            return write_error(raw, exc)
        if original.text is None:
            parts = [f"Created new file: {raw} with provided content."]
        else:
            parts = [f"The file: {raw} has been updated."]
        snippet = edit_snippet(original.text, updated)
        if snippet:
            parts.append(snippet)
        diff = unified_diff(path.name, original.text or "", updated, "Current", "Proposed")
        extra = {"diff": diff, "path": str(path), "old_text": original.text, "new_text": updated}
        return ToolOutcome(llm_text=" ".join(parts), display=None, extra=extra)
