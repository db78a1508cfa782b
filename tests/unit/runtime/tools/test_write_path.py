"""One write path: every tool that writes a file goes through ``runtime/tools/atomic.py``.

Two halves:

* a scan of the tool modules' source finds every call that can write a file (``open`` in a
  writing mode, ``os.open`` with a writing flag, ``write_text``/``write_bytes``, rename,
  replace, link, truncate, ``shutil`` and ``tempfile``) and fails unless it is in the write-path
  module;
* every tool of a session that declares ``writes_files`` (taken from the registry, so a later
  tool cannot be left out) is run through the rules of that path: temporary file and rename (a
  write failing with ``EFBIG`` leaves the old file whole), no write through a hard link, no
  write under ``.git/`` or ``.headwire/`` without ``--allow-protected-writes``, and read before
  write.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import headwire.runtime
from headwire.runtime.tools.base import Tool, ToolContext, ToolOutcome, writes_files
from headwire.runtime.tools.paths import open_confined
from headwire.runtime.tools.toolset import ToolOptions, session_tools

RUNTIME = Path(headwire.runtime.__file__).parent
SCANNED = (RUNTIME / "tools", RUNTIME / "agents", RUNTIME / "mcp")
"""The packages whose modules are tools or run them."""
WRITE_PATH = RUNTIME / "tools" / "atomic.py"

WRITE_OS_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"}
WRITING_CALLS = {
    "write_text",
    "write_bytes",
    "replace",
    "rename",
    "renames",
    "link",
    "symlink",
    "hardlink_to",
    "symlink_to",
    "truncate",
    "ftruncate",
    "mkstemp",
    "NamedTemporaryFile",
    "TemporaryFile",
    "SpooledTemporaryFile",
    "copy",
    "copy2",
    "copyfile",
    "copyfileobj",
    "copytree",
    "move",
    "copy_file_range",
    "sendfile",
    "splice",
}
"""Names of functions and methods that write files, whatever the receiver (``str.replace``
is told apart below: it is a string method with two string arguments)."""
READ_ONLY_OPENERS = {("paths.py", "open_confined")}
"""``os.open`` calls whose flags come from a caller, in functions that refuse writing flags
(proved by :func:`test_open_confined_refuses_writing_flags`)."""


def _mode_writes(node: ast.expr | None) -> bool:
    if node is None:
        return False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return any(c in node.value for c in "wax+")
    return True  # a mode computed at run time: counted as writing


def _flag_names(node: ast.expr) -> tuple[set[str], bool]:
    """The ``os.O_*`` names in a flags expression, and whether it has other variables."""
    names: set[str] = set()
    unknown = False
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr.startswith("O_"):
            names.add(sub.attr)
        elif isinstance(sub, ast.Name) and sub.id != "os" and not sub.id.startswith("_"):
            unknown = True
    return names, unknown


def _is_str_replace(call: ast.Call) -> bool:
    return (
        isinstance(call.func, ast.Attribute)
        and call.func.attr == "replace"
        and not (isinstance(call.func.value, ast.Name) and call.func.value.id in ("os", "Path"))
        and (
            len(call.args) >= 2
            or (isinstance(call.func.value, ast.Name) and call.func.value.id == "dataclasses")
        )
    )


def writing_calls(source: str, filename: str) -> Iterator[tuple[str, int, str]]:
    """``(function, line, call)`` for every call in ``source`` that can write a file."""
    tree = ast.parse(source)
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node

    def enclosing(node: ast.AST) -> str:
        while node in parents:
            node = parents[node]
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node.name
        return "<module>"

    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
    for node in sorted(calls, key=lambda call: (call.lineno, call.col_offset)):
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        receiver = func.value if isinstance(func, ast.Attribute) else None
        is_os = isinstance(receiver, ast.Name) and receiver.id == "os"
        writes = False
        if name == "fdopen" or (name == "open" and not is_os):
            mode = None
            if name == "fdopen" or isinstance(func, ast.Name):
                mode = node.args[1] if len(node.args) > 1 else None
            else:  # Path.open(mode)
                mode = node.args[0] if node.args else None
            for kw in node.keywords:
                if kw.arg == "mode":
                    mode = kw.value
            writes = _mode_writes(mode)
        elif name == "open" and is_os:
            flags, unknown = _flag_names(node.args[1]) if len(node.args) > 1 else (set(), True)
            writes = bool(flags & WRITE_OS_FLAGS) or (
                unknown and (filename, enclosing(node)) not in READ_ONLY_OPENERS
            )
        elif name in WRITING_CALLS:
            writes = not (name == "replace" and _is_str_replace(node))
        if writes:
            yield enclosing(node), node.lineno, ast.unparse(node.func)


def _modules() -> list[Path]:
    return sorted(p for folder in SCANNED for p in folder.rglob("*.py"))


def test_the_scan_finds_writers() -> None:
    """The scan itself: each way of writing is found, reading is not."""
    found = list(
        writing_calls(
            "import os\n"
            "def f(p, q, fd):\n"
            "    open(p, 'w'); open(p); p.open('ab'); p.open(); os.fdopen(fd, 'wb')\n"
            "    os.fdopen(fd, 'rb'); p.write_text('x'); os.replace(p, q); 'a'.replace('a', 'b')\n"
            "    os.open(p, os.O_WRONLY | os.O_TRUNC); os.open(p, os.O_RDONLY)\n"
            "    shutil.copyfile(p, q); os.link(p, q)\n",
            "x.py",
        )
    )
    assert [call for _, _, call in found] == [
        "open",
        "p.open",
        "os.fdopen",
        "p.write_text",
        "os.replace",
        "os.open",
        "shutil.copyfile",
        "os.link",
    ]


def test_only_the_write_path_module_writes_files() -> None:
    """Before: notebook_edit wrote in place (``os.fdopen(fd, "wb")`` after ``O_TRUNC``), and
    todo_write and the background pump opened files for writing themselves."""
    offenders = [
        f"{path.relative_to(RUNTIME)}:{line} in {function}(): {call}"
        for path in _modules()
        if path != WRITE_PATH
        for function, line, call in writing_calls(path.read_text(encoding="utf-8"), path.name)
    ]
    assert offenders == []
    assert list(writing_calls(WRITE_PATH.read_text(encoding="utf-8"), WRITE_PATH.name))


def test_open_confined_refuses_writing_flags(tmp_path: Path) -> None:
    for flags in (os.O_WRONLY, os.O_RDWR, os.O_RDONLY | os.O_CREAT, os.O_RDONLY | os.O_TRUNC):
        with pytest.raises(ValueError):
            open_confined(tmp_path / "x", flags)
    assert not (tmp_path / "x").exists()


# ----------------------------------------------------------------------------------------------
# Every tool that writes, through the rules of the write path


class NoSink:
    def save(self, tool_name: str, data: bytes) -> Path:
        raise OSError("no artifacts here")


NOTEBOOK = {
    "cells": [
        {"cell_type": "markdown", "id": "c1", "metadata": {}, "source": ["# Title"]},
        {
            "cell_type": "code",
            "execution_count": None,
            "id": "c2",
            "metadata": {},
            "outputs": [],
            "source": ["print(1)"],
        },
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}
NEW = "x" * 100_000
"""New content larger than the ``RLIMIT_FSIZE`` of the failing-write test."""


@dataclass(frozen=True)
class Case:
    """How to make a tool write ``name`` (whose content before is ``before``)."""

    name: str
    before: bytes
    args: Callable[[Path], dict[str, Any]]


CASES: dict[str, Case] = {
    "write_file": Case("f.txt", b"old\n", lambda p: {"file_path": str(p), "content": NEW}),
    "edit": Case(
        "f.txt",
        b"old\n",
        lambda p: {"file_path": str(p), "old_string": "old", "new_string": NEW},
    ),
    "notebook_edit": Case(
        "n.ipynb",
        json.dumps(NOTEBOOK, indent=1).encode(),
        lambda p: {"notebook_path": str(p), "cell_id": "c1", "new_source": NEW},
    ),
}
"""One case per writing tool; a writing tool without one fails
:func:`test_every_writing_tool_has_a_case`."""


def all_tools(todo_dir: Path = Path("/nonexistent-todos")) -> list[Tool]:
    """Every built-in tool a session can have (the opt-in ones turned on)."""
    return session_tools(ToolOptions(list_directory=True, todo_write=True, todo_dir=todo_dir))


WRITERS = sorted(t.name for t in all_tools() if writes_files(t))


def test_every_writing_tool_has_a_case() -> None:
    """The writers are the tools declaring ``writes_files``; each one that takes a path from
    the model (it calls ``target_for_write``) must declare it."""
    assert set(WRITERS) == set(CASES)
    for tool in all_tools():
        source = Path(sys.modules[type(tool).__module__].__file__ or "").read_text()
        assert ("target_for_write(" in source) == writes_files(tool), tool.name


def run(tool: Tool, ctx: ToolContext, args: dict[str, Any]) -> ToolOutcome:
    assert tool.validate(args) is None
    return asyncio.run(tool.run(args, ctx))


def session(ws: Path, *, allow_protected: bool = False) -> tuple[dict[str, Tool], ToolContext]:
    ctx = ToolContext(
        cwd=ws, artifacts=NoSink(), timeout_s=30, allow_protected_writes=allow_protected
    )
    return {t.name: t for t in all_tools()}, ctx


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.mark.parametrize("name", WRITERS)
def test_read_before_write(name: str, ws: Path) -> None:
    """Before: notebook_edit changed a notebook the model had never read."""
    case = CASES[name]
    target = ws / case.name
    target.write_bytes(case.before)
    tools, ctx = session(ws)
    refused = run(tools[name], ctx, case.args(target))
    assert refused.error is not None
    assert refused.extra["upstream_error_type"] == "edit_requires_prior_read"
    assert target.read_bytes() == case.before
    assert run(tools["read_file"], ctx, {"file_path": str(target)}).error is None
    done = run(tools[name], ctx, case.args(target))
    assert done.error is None, done
    assert NEW in target.read_text()


@pytest.mark.parametrize("name", WRITERS)
def test_no_write_through_a_hard_link(name: str, ws: Path, tmp_path: Path) -> None:
    """Before: notebook_edit wrote through a hard link into a file outside the workspace."""
    case = CASES[name]
    outside = tmp_path / ("outside" + Path(case.name).suffix)
    outside.write_bytes(case.before)
    inside = ws / case.name
    os.link(outside, inside)
    tools, ctx = session(ws)
    assert run(tools["read_file"], ctx, {"file_path": str(inside)}).error is None
    done = run(tools[name], ctx, case.args(inside))
    assert done.error is None, done
    assert NEW in inside.read_text()
    assert outside.read_bytes() == case.before


@pytest.mark.parametrize("folder", [".headwire", ".git", ".HeadWire"])
@pytest.mark.parametrize("name", WRITERS)
def test_protected_folders_need_the_flag(name: str, folder: str, ws: Path) -> None:
    """Before: notebook_edit wrote under ``.headwire/`` without ``--allow-protected-writes``."""
    case = CASES[name]
    target = ws / folder / case.name
    target.parent.mkdir()
    target.write_bytes(case.before)
    tools, ctx = session(ws)
    assert run(tools["read_file"], ctx, {"file_path": str(target)}).error is None
    refused = run(tools[name], ctx, case.args(target))
    assert refused.error_type == "execution_denied" and "protected path" in refused.llm_text
    assert target.read_bytes() == case.before
    tools, ctx = session(ws, allow_protected=True)
    assert run(tools["read_file"], ctx, {"file_path": str(target)}).error is None
    assert run(tools[name], ctx, case.args(target)).error is None
    assert NEW in target.read_text()


FAILING_WRITE_CHILD = r"""
import asyncio, json, resource, sys
from pathlib import Path
from headwire.runtime.tools.base import ToolContext
from headwire.runtime.tools.toolset import ToolOptions, session_tools

class NoSink:
    def save(self, name, data):
        raise OSError("none")

name, target, args = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
tools = {t.name: t for t in session_tools(ToolOptions())}
ctx = ToolContext(cwd=target.parent, artifacts=NoSink(), timeout_s=30)
read = asyncio.run(tools["read_file"].run({"file_path": str(target)}, ctx))
assert read.error is None, read
resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000))  # like `ulimit -f`
tool = tools[name]
assert tool.validate(args) is None
out = asyncio.run(tool.run(args, ctx))
print(json.dumps({"error": out.error, "kind": out.extra.get("upstream_error_type")}))
"""


@pytest.mark.parametrize("name", WRITERS)
def test_a_failed_write_leaves_the_old_file_whole(name: str, ws: Path) -> None:
    """Before: notebook_edit truncated the notebook, then ``EFBIG`` stopped the write: the
    notebook was left as the first 60,000 bytes of the new JSON."""
    case = CASES[name]
    target = ws / case.name
    target.write_bytes(case.before)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            FAILING_WRITE_CHILD,
            name,
            str(target),
            json.dumps(case.args(target)),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["error"] and "File too large" in result["error"], result
    assert target.read_bytes() == case.before
    assert sorted(p.name for p in ws.iterdir()) == [case.name]  # no temporary file left
