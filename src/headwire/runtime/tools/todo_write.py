"""``todo_write``: the model's task list for the session (off by default).

Qwen Code 0.24.4's name and parameters: ``todos``, a list of ``{id, content, status,
blockedBy?}`` with ``status`` one of ``pending``, ``in_progress``, ``completed``.  The whole
list is replaced on each call; ids must be unique, ``blockedBy`` must name other todos of the
list without a cycle.  While a plan has unfinished items, an item sent without ``blockedBy``
keeps the dependencies it had (those still in the list), as upstream does.  The list is kept
in ``<data dir>/todos/<session id>.json`` (0600), so a resumed session continues it.

Enabled by the setting ``tools.todoWrite.enabled`` (or by naming it in ``tools.core`` /
``--core-tools``); see :mod:`headwire.runtime.tools.toolset`.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from headwire.runtime.tools.atomic import write_atomically
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome

STATUSES = ("pending", "in_progress", "completed")
MAX_ID_CHARS = 500
CYCLE_ERROR = "Todo dependencies must not contain a cycle."


def validate_todos(todos: Any) -> str | None:
    """Upstream's checks of a todo list; the first problem, or ``None``."""
    if not isinstance(todos, list):
        return 'Parameter "todos" must be an array.'
    for todo in todos:
        if not isinstance(todo, dict):
            return "Each todo must be an object."
        todo_id = todo.get("id")
        if not isinstance(todo_id, str) or not todo_id.strip() or len(todo_id) > MAX_ID_CHARS:
            return 'Each todo must have a non-empty "id" string of at most 500 characters.'
        content = todo.get("content")
        if not isinstance(content, str) or not content.strip():
            return 'Each todo must have a non-empty "content" string.'
        if todo.get("status") not in STATUSES:
            return 'Each todo must have a valid "status" (pending, in_progress, completed).'
        blocked = todo.get("blockedBy")
        if blocked is not None and (
            not isinstance(blocked, list)
            or any(
                not isinstance(d, str) or not d.strip() or len(d) > MAX_ID_CHARS for d in blocked
            )
        ):
            return (
                'Each todo "blockedBy" value must be an array of non-empty Todo IDs of at most '
                "500 characters."
            )
        unknown = set(todo) - {"id", "content", "status", "blockedBy"}
        if unknown:
            return f"params/todos must NOT have additional properties ('{sorted(unknown)[0]}')"
    ids = [todo["id"] for todo in todos]
    if len(set(ids)) != len(ids):
        return "Todo IDs must be unique within the array."
    for todo in todos:
        deps = todo.get("blockedBy") or []
        if len(set(deps)) != len(deps):
            return f'Todo "{todo["id"]}" must not contain duplicate blockedBy references.'
        if todo["id"] in deps:
            return f'Todo "{todo["id"]}" must not depend on itself.'
        missing = next((d for d in deps if d not in ids), None)
        if missing is not None:
            return f'Todo "{todo["id"]}" references unknown dependency "{missing}".'
    return CYCLE_ERROR if _has_cycle(todos) else None


def _has_cycle(todos: list[dict[str, Any]]) -> bool:
    remaining = {t["id"]: len(t.get("blockedBy") or []) for t in todos}
    dependents: dict[str, list[str]] = {}
    for todo in todos:
        for dep in todo.get("blockedBy") or []:
            dependents.setdefault(dep, []).append(todo["id"])
    queue = [tid for tid, n in remaining.items() if n == 0]
    for tid in queue:
        for child in dependents.get(tid, []):
            remaining[child] -= 1
            if remaining[child] == 0:
                queue.append(child)
    return len(queue) != len(todos)


def merge_dependencies(
    old: list[dict[str, Any]], new: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """``new`` with each item that omits ``blockedBy`` keeping its old dependencies (those
    still in ``new``) while the old plan has unfinished items; unchanged when that would
    make a cycle."""
    if not any(t.get("status") != "completed" for t in old):
        return new
    old_by_id = {t.get("id"): t for t in old}
    new_ids = {t["id"] for t in new}
    merged: list[dict[str, Any]] = []
    for todo in new:
        previous = old_by_id.get(todo["id"])
        if "blockedBy" in todo or previous is None or not previous.get("blockedBy"):
            merged.append(todo)
            continue
        kept = [d for d in previous["blockedBy"] if d in new_ids]
        merged.append({**todo, "blockedBy": kept})
    return new if validate_todos(merged) == CYCLE_ERROR else merged


class TodoWriteTool:
    """Replace the session's todo list."""

    name: str = "todo_write"
    display_name: str = "TodoList"
    description: str = (
        "Keeps a short task list for complex, multi-step work, visible to the user. Send the "
        "whole list every time. Use it when the work has several outcomes, real dependencies "
        "or checkpoints, or when the user asks for a list; not for simple requests. Keep at "
        "most one item in_progress, mark finished items completed as soon as they are done, "
        "and use blockedBy only for real dependencies between items of the list."
    )
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "todos": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "content": {"type": "string", "minLength": 1},
                        "status": {"type": "string", "enum": list(STATUSES)},
                        "id": {"type": "string", "maxLength": MAX_ID_CHARS},
                        "blockedBy": {
                            "type": "array",
                            "items": {"type": "string", "maxLength": MAX_ID_CHARS},
                            "uniqueItems": True,
                            "description": (
                                "IDs of todos that must be completed first. Omit it to keep "
                                "an item's dependencies; [] removes them."
                            ),
                        },
                    },
                    "required": ["content", "status", "id"],
                    "additionalProperties": False,
                },
                "description": "The complete, updated todo list.",
            }
        },
        "required": ["todos"],
        "$schema": "http://json-schema.org/draft-07/schema#",
    }
    kind: ToolKind = "think"

    def __init__(self, store_dir: Path) -> None:
        self.store_dir = store_dir

    def validate(self, args: dict[str, Any]) -> str | None:
        """``todos`` present and well-formed."""
        if "todos" not in args:
            return "params must have required property 'todos'"
        return validate_todos(args["todos"])

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Never asks: it only records the model's plan."""
        return False

    def path_for(self, ctx: ToolContext) -> Path:
        """The list's file for the session running the call."""
        owner = ctx.owner
        session = getattr(getattr(owner, "config", None), "session_id", None) or "default"
        safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in str(session)[:128])
        return self.store_dir / f"{safe}.json"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """Replace the list (file I/O in a worker thread)."""
        return await asyncio.to_thread(self._write, self.path_for(ctx), args["todos"])

    @staticmethod
    def _write(path: Path, todos: list[dict[str, Any]]) -> ToolOutcome:
        try:
            old = _load(path)
            final = merge_dependencies(old, todos)
            problem = validate_todos(final)
            if problem:
                raise ValueError(problem)
            if old == final:
                return ToolOutcome(
                    llm_text=(
                        "Todo list is already up to date. No changes were needed.\n\n"
                        "<system-reminder>\nThe list was not changed; it is already current. "
                        "Go on with the tasks.\n</system-reminder>"
                    )
                )
            _save(path, final)
        except (OSError, ValueError) as exc:
            message = str(exc)
            return ToolOutcome(
                llm_text=(
                    "Failed to modify todos. An error occurred during the operation.\n\n"
                    f"<system-reminder>\nThe todo list could not be changed: {message}. Retry "
                    "or handle the error.\n</system-reminder>"
                ),
                display=f"Error writing todos: {message}",
            )
        if not final:
            text = (
                "Todo list has been cleared.\n\n<system-reminder>\nThe todo list is now empty. "
                "Do not mention this to the user.\n</system-reminder>"
            )
        else:
            text = (
                "Todos have been modified successfully. Keep using the list to track progress "
                "and go on with the current tasks.\n\n<system-reminder>\nThe todo list changed "
                "(do not mention this to the user). Its latest contents:\n\n"
                f"{json.dumps(final, ensure_ascii=False, separators=(',', ':'))}\n"
                "</system-reminder>"
            )
        return ToolOutcome(llm_text=text)


def _load(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (UnicodeDecodeError, json.JSONDecodeError):
        return []
    todos = data.get("todos") if isinstance(data, dict) else None
    return todos if isinstance(todos, list) else []


def _save(path: Path, todos: list[dict[str, Any]]) -> None:
    """Replace the list file (private, 0600) through the one write path."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    data = json.dumps({"todos": todos}, ensure_ascii=False, indent=2).encode("utf-8")
    write_atomically(Path(os.path.realpath(path)), data, new_mode=0o600)
