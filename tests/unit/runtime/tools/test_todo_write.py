"""``todo_write``: upstream's validation, the stored list, no-ops and dependency keeping."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path
from typing import Any

from headwire.runtime.tools.base import ToolContext, ToolOutcome
from headwire.runtime.tools.todo_write import (
    CYCLE_ERROR,
    TodoWriteTool,
    merge_dependencies,
    validate_todos,
)


class Owner:
    class config:
        session_id = "s-1"


def call(tool: TodoWriteTool, todos: Any) -> ToolOutcome:
    problem = tool.validate({"todos": todos})
    assert problem is None, problem
    ctx = ToolContext(cwd=Path("/"), artifacts=None)  # type: ignore[arg-type]
    ctx.owner = Owner()
    return asyncio.run(tool.run({"todos": todos}, ctx))


def todo(tid: str, status: str = "pending", **extra: Any) -> dict[str, Any]:
    return {"id": tid, "content": f"do {tid}", "status": status, **extra}


def test_validation() -> None:
    assert validate_todos("x") == 'Parameter "todos" must be an array.'
    assert validate_todos([todo("a"), todo("a")]) == "Todo IDs must be unique within the array."
    assert 'valid "status"' in str(validate_todos([todo("a", "done")]))
    assert validate_todos([todo("a", blockedBy=["b"])]) == (
        'Todo "a" references unknown dependency "b".'
    )
    assert validate_todos([todo("a", blockedBy=["a"])]) == 'Todo "a" must not depend on itself.'
    cycle = [todo("a", blockedBy=["b"]), todo("b", blockedBy=["a"])]
    assert validate_todos(cycle) == CYCLE_ERROR
    assert validate_todos([todo("a"), todo("b", blockedBy=["a"])]) is None
    assert "additional properties" in str(validate_todos([todo("a", extra=1)]))
    assert TodoWriteTool(Path("/x")).validate({}) == "params must have required property 'todos'"


def test_list_is_stored_per_session_and_noop_detected(tmp_path: Path) -> None:
    tool = TodoWriteTool(tmp_path / "todos")
    first = call(tool, [todo("a", "in_progress"), todo("b")])
    assert first.error is None and "Todos have been modified successfully" in first.llm_text
    assert '"id":"a"' in first.llm_text
    stored = tmp_path / "todos" / "s-1.json"
    assert json.loads(stored.read_text())["todos"][0]["status"] == "in_progress"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    again = call(tool, [todo("a", "in_progress"), todo("b")])
    assert again.llm_text.startswith("Todo list is already up to date.")
    cleared = call(tool, [])
    assert cleared.llm_text.startswith("Todo list has been cleared.")


def test_dependencies_are_kept_while_the_plan_is_active(tmp_path: Path) -> None:
    old = [todo("a"), todo("b", blockedBy=["a"])]
    assert merge_dependencies(old, [todo("a", "completed"), todo("b")])[1]["blockedBy"] == ["a"]
    assert (
        "blockedBy" not in merge_dependencies(old, [todo("b")])[0]
        or merge_dependencies(old, [todo("b")])[0]["blockedBy"] == []
    )
    done = [todo("a", "completed"), todo("b", "completed", blockedBy=["a"])]
    assert "blockedBy" not in merge_dependencies(done, [todo("a"), todo("b")])[1]
    assert (
        merge_dependencies(old, [todo("a", blockedBy=[]), todo("b", blockedBy=[])])[1]["blockedBy"]
        == []
    )
    tool = TodoWriteTool(tmp_path)
    call(tool, old)
    out = call(tool, [todo("a", "completed"), todo("b", "in_progress")])
    assert '"blockedBy":["a"]' in out.llm_text


def test_never_asks() -> None:
    tool = TodoWriteTool(Path("/x"))
    assert not any(tool.needs_approval({}, m) for m in ("default", "plan", "auto-edit", "yolo"))
