"""``notebook_edit`` on real notebook files, checked with nbformat."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from headwire.runtime.tools.base import ToolContext, ToolOutcome
from headwire.runtime.tools.notebook_edit import NotebookEditTool, apply_edit
from headwire.runtime.tools.read_ledger import ReadLedger


class NoSink:
    def save(self, tool_name: str, data: bytes) -> Path:
        raise AssertionError("notebook_edit saves no artifact")


def notebook(minor: int = 5, ids: bool = True) -> dict[str, Any]:
    cells: list[dict[str, Any]] = [
        {
            "cell_type": "code",
            "execution_count": 3,
            "metadata": {},
            "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}],
            "source": ["print(1)\n", "x = 2"],
        },
        {"cell_type": "markdown", "metadata": {}, "source": "# Title"},
    ]
    if ids:
        cells[0]["id"] = "first"
        cells[1]["id"] = "second"
    return {
        "cells": cells,
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": minor,
    }


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def edit(ws: Path, name: str, **args: Any) -> ToolOutcome:
    """Run one edit; the notebook counts as read (read before write is tested in
    ``test_write_path``)."""
    ledger = ReadLedger()
    target = ws / name
    if target.is_file():
        ledger.record_read(target.stat())
    tool = NotebookEditTool(ledger)
    call = {"notebook_path": str(target), **args}
    problem = tool.validate(call)
    if problem:
        return ToolOutcome(llm_text=problem, error=problem, error_type="invalid_tool_params")
    return asyncio.run(tool.run(call, ToolContext(cwd=ws, artifacts=NoSink())))


def read(path: Path) -> Any:
    nb = nbformat.read(str(path), as_version=nbformat.NO_CONVERT)
    nbformat.validate(nb)
    return nb


def test_replace_insert_delete(ws: Path) -> None:
    path = ws / "n.ipynb"
    path.write_text(json.dumps(notebook()))
    out = edit(ws, "n.ipynb", cell_id="first", new_source="y = 3\nprint(y)")
    assert out.error is None
    assert out.llm_text == (
        f"Notebook {path} has been updated. replace cell first.\n\n"
        "Updated source:\n\n---\n\ny = 3\nprint(y)"
    )
    nb = read(path)
    assert nb.cells[0].source == "y = 3\nprint(y)"
    assert nb.cells[0].outputs == [] and nb.cells[0].execution_count is None
    assert json.loads(path.read_text())["cells"][0]["source"] == ["y = 3\n", "print(y)"]
    assert out.extra["diff"].startswith("--- n.ipynb\tCurrent\n+++ n.ipynb\tProposed\n")

    out = edit(
        ws,
        "n.ipynb",
        cell_id="first",
        new_source="## New",
        edit_mode="insert",
        cell_type="markdown",
    )
    nb = read(path)
    assert [c.cell_type for c in nb.cells] == ["code", "markdown", "markdown"]
    new_id = nb.cells[1].id
    assert new_id not in ("first", "second") and f"insert cell {new_id}." in out.llm_text

    edit(ws, "n.ipynb", new_source="import os", edit_mode="insert")
    assert read(path).cells[0].source == "import os"

    out = edit(ws, "n.ipynb", cell_id="second", edit_mode="delete")
    assert out.llm_text == f"Notebook {path} has been updated. delete cell second."
    assert [c.get("id") for c in read(path).cells][-1] == new_id

    out = edit(ws, "n.ipynb", cell_id=new_id, new_source="z", cell_type="code")
    cell = read(path).cells[-1]
    assert cell.cell_type == "code" and cell.outputs == [] and cell.execution_count is None


def test_cells_without_ids_are_cell_n(ws: Path) -> None:
    path = ws / "old.ipynb"
    path.write_text(json.dumps(notebook(minor=4, ids=False)))
    out = edit(ws, "old.ipynb", cell_id="cell-1", new_source="# Changed")
    assert out.error is None and "replace cell cell-1." in out.llm_text
    edit(ws, "old.ipynb", new_source="first!", edit_mode="insert")
    nb = read(path)
    assert nb.cells[0].source == "first!" and "id" not in nb.cells[0]
    assert nb.cells[2].source == "# Changed"


def test_refusals(ws: Path) -> None:
    (ws / "n.ipynb").write_text(json.dumps(notebook()))
    dup = notebook()
    dup["cells"][1]["id"] = "first"
    (ws / "dup.ipynb").write_text(json.dumps(dup))
    (ws / "bad.ipynb").write_text("{not json")
    before = (ws / "n.ipynb").read_text()
    cases = [
        (edit(ws, "n.ipynb", cell_id="nope", new_source="x"), 'Cell with ID "nope" not found'),
        (edit(ws, "dup.ipynb", cell_id="first", new_source="x"), "is ambiguous"),
        (edit(ws, "bad.ipynb", cell_id="first", new_source="x"), "Invalid notebook"),
        (edit(ws, "gone.ipynb", cell_id="a", new_source="x"), "Notebook file not found"),
        (edit(ws, "n.ipynb", new_source="x"), "cell_id is required for replace and delete"),
        (
            edit(ws, "n.ipynb", cell_id="first"),
            'new_source is required when edit_mode is "replace"',
        ),
        (edit(ws, "n.txt", cell_id="a", new_source="x"), "must be a Jupyter notebook"),
        (
            edit(ws, "n.ipynb", cell_id="first", new_source="x", edit_mode="move"),
            "edit_mode must be",
        ),
        (edit(ws, "n.ipynb", cell_id="first", new_source="x", extra=1), "additional properties"),
    ]
    for out, message in cases:
        assert out.error is not None and message in out.error, (message, out.error)
    assert (ws / "n.ipynb").read_text() == before
    relative = NotebookEditTool().validate(
        {"notebook_path": "n.ipynb", "cell_id": "a", "new_source": ""}
    )
    assert relative == "Notebook path must be absolute: n.ipynb"


def test_paths_outside_the_workspace_are_refused(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "out.ipynb"
    outside.write_text(json.dumps(notebook()))
    tool = NotebookEditTool()
    args = {"notebook_path": str(outside), "cell_id": "first", "new_source": "x"}
    assert tool.validate(args) is None
    out = asyncio.run(tool.run(args, ToolContext(cwd=ws, artifacts=NoSink())))
    assert out.error is not None and json.loads(outside.read_text())["cells"][0]["id"] == "first"
    assert tool.needs_approval(args, "default") and not tool.needs_approval(args, "auto-edit")


def test_apply_edit_is_pure_text_to_text() -> None:
    text = json.dumps(notebook())
    out, mode, edited = apply_edit(text, {"cell_id": "second", "new_source": "x"})
    assert (mode, edited) == ("replace", "second") and out.endswith("}\n")
    assert json.loads(text)["cells"][1]["source"] == "# Title"
