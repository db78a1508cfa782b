"""``notebook_edit``: replace, insert or delete one cell of a Jupyter notebook.

Qwen Code 0.24.4's name and parameters (``notebook_path``, ``cell_id``, ``new_source``,
``cell_type``, ``edit_mode``).  A cell is named by its ``id``, or ``cell-N`` (0-based) when it
has none; an id shared by several cells is refused as ambiguous.  ``insert`` puts the new cell
after ``cell_id``, or first when it is omitted; new cells get an id when the notebook format has
ids (4.5 and later).  An edited code cell loses its outputs and execution count (they no longer
match its source); a cell turned into Markdown loses both fields.

The notebook is read and written with ``nbformat`` (Jupyter's own library): the file is
written in Jupyter's layout (one-space indent, sorted keys, sources as line lists).  When the
notebook was valid before the edit, the edited one is validated before it is written, so an
edit never leaves a notebook Jupyter refuses to open.  Paths are confined to the workspace like
every file tool; the edit needs approval like ``edit``.

The notebook is written like ``edit`` writes a file (:mod:`headwire.runtime.tools.atomic`):
not under a protected folder without ``--allow-protected-writes``, only once it was read in
this session and is unchanged since (:mod:`headwire.runtime.tools.read_ledger`), and through
a temporary file renamed over it, so a failed write leaves the old notebook whole and a hard
link does not carry the write to another name.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from pathlib import Path
from typing import Any

from headwire.errors import ToolError
from headwire.runtime.tools.atomic import target_for_write, write_atomically
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.offload import in_thread
from headwire.runtime.tools.paths import (
    PathDenied,
    SpecialFile,
    approval_needed,
    check_args,
    denied_outcome,
    failure,
    open_regular_for_reading,
)
from headwire.runtime.tools.read_ledger import ReadLedger
from headwire.runtime.tools.write_file import stat_target, write_error

MODES = ("replace", "insert", "delete")
CELL_TYPES = ("code", "markdown")
MAX_NOTEBOOK_BYTES = 64 * 1024 * 1024


class NotebookProblem(ToolError):
    """A refused edit: ``str()`` is the model-facing message, ``kind`` upstream's error type."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


def display_id(cell: Any, index: int) -> str:
    """How a cell is named: its ``id`` when it has a non-empty one, else ``cell-N``."""
    cell_id = cell.get("id") if isinstance(cell, dict) else None
    return cell_id if isinstance(cell_id, str) and cell_id else f"cell-{index}"


def find_cell(cells: list[Any], cell_id: str) -> int:
    """The index of the one cell named ``cell_id``; raises when none or several are."""
    matches = [i for i, cell in enumerate(cells) if display_id(cell, i) == cell_id]
    if len(matches) > 1:
        raise NotebookProblem(
            f'Cell ID "{cell_id}" is ambiguous in the notebook. Re-read the notebook and '
            "target a cell by a unique ID.",
            "invalid_tool_params",
        )
    if not matches:
        raise NotebookProblem(
            f'Cell with ID "{cell_id}" not found in notebook.', "notebook_cell_not_found"
        )
    return matches[0]


def _retype(cell: Any, cell_type: str) -> None:
    cell["cell_type"] = cell_type
    cell.setdefault("metadata", {})
    if cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    else:
        cell.pop("execution_count", None)
        cell.pop("outputs", None)


def _has_ids(nb: Any) -> bool:
    major, minor = nb.get("nbformat", 0), nb.get("nbformat_minor", 0)
    return bool(major > 4 or (major == 4 and minor >= 5))


def apply_edit(text: str, args: dict[str, Any]) -> tuple[str, str, str]:
    """Apply one edit to a notebook's text; returns ``(new text, mode, edited cell's id)``."""
    nbf = _nbformat()
    v4: Any = nbf.v4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            nb = nbf.reads(text, as_version=nbf.NO_CONVERT)
        except Exception as exc:  # nbformat raises several kinds for unreadable JSON
            raise NotebookProblem(f"Invalid notebook: {exc}", "notebook_invalid_json") from None
        cells = nb.get("cells")
        if not isinstance(cells, list) or not all(isinstance(c, dict) for c in cells):
            raise NotebookProblem("Invalid notebook: missing cells array", "notebook_invalid_json")
        # Cells are found by the ids as written: nbformat renames duplicate ids when it reads.
        written = json.loads(text.removeprefix("\ufeff")).get("cells") or []
        was_valid = _is_valid(nb)
        mode = args.get("edit_mode") or "replace"
        cell_id = args.get("cell_id")
        source = args.get("new_source", "")
        if mode == "insert":
            at = find_cell(written, cell_id) + 1 if cell_id else 0
            cell_type = args.get("cell_type") or "code"
            cell = v4.new_code_cell(source) if cell_type == "code" else v4.new_markdown_cell(source)
            if _has_ids(nb):
                taken = {display_id(c, i) for i, c in enumerate(cells)}
                new_id = v4.nbbase.random_cell_id()
                while new_id in taken:
                    new_id = v4.nbbase.random_cell_id()
                cell["id"] = new_id
            else:
                cell.pop("id", None)
            cells.insert(at, cell)
            edited = display_id(cell, at)
        elif mode == "delete":
            at = find_cell(written, str(cell_id))
            edited = display_id(written[at], at)
            del cells[at]
        else:
            at = find_cell(written, str(cell_id))
            cell = cells[at]
            edited = display_id(written[at], at)
            cell["source"] = source
            _retype(cell, args.get("cell_type") or cell.get("cell_type") or "code")
        if was_valid and not _is_valid(nb):
            raise NotebookProblem(
                "The edit would make the notebook invalid; nothing was written.",
                "notebook_edit_failure",
            )
        return str(nbf.writes(nb, version=nbf.NO_CONVERT)) + "\n", mode, edited


def _nbformat() -> Any:
    """``nbformat``, imported on first use (it is untyped; used through ``Any``)."""
    import nbformat

    logging.getLogger("traitlets").setLevel(logging.CRITICAL)
    return nbformat


def _is_valid(nb: Any) -> bool:
    try:
        _nbformat().validate(nb)
    except Exception:  # nbformat.ValidationError and schema lookup failures alike
        return False
    return True


class NotebookEditTool:
    """Edit one notebook cell."""

    name: str = "notebook_edit"
    display_name: str = "NotebookEdit"
    description: str = (
        "Changes one cell of a Jupyter notebook (.ipynb): replace its source, insert a new "
        "cell, or delete it. Use it instead of edit or write_file for notebooks. Read the "
        "notebook first and name cells by the IDs it shows (or cell-N, counting from 0)."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "properties": {
            "notebook_path": {
                "description": "Absolute path of the .ipynb file to change.",
                "type": "string",
            },
            "cell_id": {
                "description": (
                    "The cell to change: its ID, or cell-N (0-based). Needed to replace or "
                    "delete; an inserted cell goes after it, or first when it is omitted."
                ),
                "type": "string",
            },
            "new_source": {
                "description": "The cell's new source (replace and insert).",
                "type": "string",
            },
            "cell_type": {
                "description": "Type of an inserted cell, or the new type of a replaced one.",
                "type": "string",
                "enum": list(CELL_TYPES),
            },
            "edit_mode": {
                "description": "replace (the default), insert or delete.",
                "type": "string",
                "enum": list(MODES),
            },
        },
        "required": ["notebook_path"],
        "additionalProperties": False,
        "type": "object",
    }
    kind: ToolKind = "edit"
    writes_files: bool = True
    """Writes through :mod:`headwire.runtime.tools.atomic` (see ``base.writes_files``)."""

    def __init__(self, ledger: ReadLedger | None = None) -> None:
        self.ledger = ledger if ledger is not None else ReadLedger()

    def validate(self, args: dict[str, Any]) -> str | None:
        """Schema check plus upstream's rules for paths, modes and required fields."""
        problem = check_args(self.parameters, args)
        if problem:
            return problem
        unknown = sorted(set(args) - set(self.parameters["properties"]))
        if unknown:
            return f"params must NOT have additional properties ('{unknown[0]}')"
        path = args["notebook_path"].strip()
        args["notebook_path"] = path
        if not path:
            return "The 'notebook_path' parameter must be non-empty."
        if not os.path.isabs(path):
            return f"Notebook path must be absolute: {path}"
        if os.path.splitext(path)[1].lower() != ".ipynb":
            return "File must be a Jupyter notebook (.ipynb). Use the edit tool for other files."
        mode = args.get("edit_mode") or "replace"
        if mode not in MODES:
            return "edit_mode must be 'replace', 'insert', or 'delete'."
        if args.get("cell_type") and args["cell_type"] not in CELL_TYPES:
            return "cell_type must be 'code' or 'markdown'."
        if mode != "insert" and not args.get("cell_id"):
            return "cell_id is required for replace and delete operations."
        if mode != "delete" and not isinstance(args.get("new_source"), str):
            return f'new_source is required when edit_mode is "{mode}".'
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Asks in ``default`` and ``plan``, like ``edit``."""
        return approval_needed(self.kind, mode)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Edit the notebook (in a worker thread)."""
        raw: str = args["notebook_path"]
        try:
            path = target_for_write(raw, ctx)
        except PathDenied as exc:
            return denied_outcome(exc)
        ledger = self.ledger
        return await in_thread(lambda: _edit(raw, path, args, ledger), timeout_s=ctx.timeout_s)


def _read(path: Path) -> str:
    with os.fdopen(open_regular_for_reading(path), "rb") as handle:
        if os.fstat(handle.fileno()).st_size > MAX_NOTEBOOK_BYTES:
            raise NotebookProblem(
                f"Notebook is larger than {MAX_NOTEBOOK_BYTES} bytes", "notebook_edit_failure"
            )
        return handle.read().decode("utf-8-sig")


def _edit(raw: str, path: Path, args: dict[str, Any], ledger: ReadLedger) -> ToolOutcome:
    try:
        if path.is_dir():
            raise NotebookProblem(
                f"{raw} is a directory. notebook_edit only changes .ipynb files.",
                "target_is_directory",
            )
        try:
            info = stat_target(path)
            if info is None:
                raise FileNotFoundError(path)
            refusal = ledger.refusal(info, raw, "edit")
            if refusal is not None:
                return refusal
            original = _read(path)
        except FileNotFoundError:
            raise NotebookProblem(f"Notebook file not found: {raw}", "file_not_found") from None
        except SpecialFile as exc:
            raise NotebookProblem(exc.message, "read_content_failure") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise NotebookProblem(
                f"Error reading notebook: {exc}", "read_content_failure"
            ) from None
        updated, mode, edited = apply_edit(original, args)
    except NotebookProblem as exc:
        return failure(str(exc), f"Error: {exc}", str(exc), exc.kind)
    try:
        ledger.record_write(write_atomically(path, updated.encode("utf-8")))
    except (OSError, SpecialFile) as exc:
        return write_error(raw, exc)
    text = f"Notebook {raw} has been updated. {mode} cell {edited}."
    if mode != "delete":
        text += f"\n\nUpdated source:\n\n---\n\n{args.get('new_source', '')}"
    import difflib  # loaded by the edit that needs it, not by every run's tool list

    diff = "".join(
        difflib.unified_diff(
            original.splitlines(keepends=True),
            updated.splitlines(keepends=True),
            path.name,
            path.name,
            "Current",
            "Proposed",
        )
    )
    extra = {"path": str(path), "old_text": original, "new_text": updated, "diff": diff}
    return ToolOutcome(llm_text=text, display=None, extra=extra)
