"""Read before write: write_file and edit change only files the session has seen as they are."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from headwire.runtime.tools.base import ToolContext, ToolOutcome
from headwire.runtime.tools.registry import builtin_tools


class NoSink:
    def save(self, tool_name: str, data: bytes) -> Path:
        raise OSError("no artifacts here")


@pytest.fixture
def tools(tmp_path: Path) -> tuple[dict[str, Any], ToolContext]:
    (tmp_path / "ws").mkdir()
    ctx = ToolContext(cwd=tmp_path / "ws", artifacts=NoSink())
    return {t.name: t for t in builtin_tools()}, ctx


def call(tool: Any, ctx: ToolContext, **args: Any) -> ToolOutcome:
    assert tool.validate(args) is None
    result: ToolOutcome = asyncio.run(tool.run(args, ctx))
    return result


def test_overwrite_and_edit_need_a_read(tools: tuple[dict[str, Any], ToolContext]) -> None:
    by_name, ctx = tools
    path = ctx.cwd / "notes.txt"
    path.write_text("keep me\n")
    blind = call(by_name["write_file"], ctx, file_path=str(path), content="lost\n")
    assert blind.extra["upstream_error_type"] == "edit_requires_prior_read"
    assert str(path) in blind.llm_text and "read_file" in blind.llm_text
    edit = call(by_name["edit"], ctx, file_path=str(path), old_string="keep", new_string="k")
    assert edit.extra["upstream_error_type"] == "edit_requires_prior_read"
    assert path.read_text() == "keep me\n"
    assert call(by_name["read_file"], ctx, file_path=str(path)).error is None
    assert (
        call(by_name["edit"], ctx, file_path=str(path), old_string="keep", new_string="k").error
        is None
    )
    # its own write counts as seen: a second change needs no new read
    assert call(by_name["write_file"], ctx, file_path=str(path), content="v3\n").error is None
    assert path.read_text() == "v3\n"


def test_a_file_changed_since_the_read_is_refused(
    tools: tuple[dict[str, Any], ToolContext],
) -> None:
    by_name, ctx = tools
    path = ctx.cwd / "a.py"
    path.write_text("x = 1\n")
    call(by_name["read_file"], ctx, file_path=str(path))
    path.write_text("x = 1\ny = 2\n")  # changed by someone else
    out = call(by_name["edit"], ctx, file_path=str(path), old_string="x = 1", new_string="x = 3")
    assert out.extra["upstream_error_type"] == "file_changed_since_read"
    assert path.read_text() == "x = 1\ny = 2\n"


def test_grep_counts_as_a_read_and_new_files_need_none(
    tools: tuple[dict[str, Any], ToolContext],
) -> None:
    by_name, ctx = tools
    path = ctx.cwd / "b.py"
    path.write_text("def target():\n    pass\n")
    assert call(by_name["grep_search"], ctx, pattern="target").llm_text.startswith("Found 1 match")
    out = call(by_name["edit"], ctx, file_path=str(path), old_string="pass", new_string="return 1")
    assert out.error is None
    fresh = ctx.cwd / "new" / "c.txt"
    assert call(by_name["write_file"], ctx, file_path=str(fresh), content="hi\n").error is None
    assert not os.path.exists(str(fresh) + ".tmp")


def test_sessions_do_not_share_what_they_read(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    ctx = ToolContext(cwd=tmp_path / "ws", artifacts=NoSink())
    path = ctx.cwd / "shared.txt"
    path.write_text("x\n")
    first = {t.name: t for t in builtin_tools()}
    second = {t.name: t for t in builtin_tools()}
    call(first["read_file"], ctx, file_path=str(path))
    out = call(second["write_file"], ctx, file_path=str(path), content="y\n")
    assert out.extra["upstream_error_type"] == "edit_requires_prior_read"
