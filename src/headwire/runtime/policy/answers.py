"""Clients' answers to permission requests, checked as strictly as their requests.

A ``can_use_tool`` answer (the persistent session's ``control_response``) must be an object
``{"behavior": "allow" | "deny", "updatedInput"?: object, "message"?: string,
"interrupt"?: boolean, "updatedPermissions"?: array}``.  Anything else -- ``"behavior":
"Allow"``, ``"interrupt": "false"``, ``"updatedInput": "rm -rf /"`` -- is refused: the call is
denied with a message naming the problem, and the turn goes on.  (``updatedInput`` is checked
against the tool's own schema later, by :meth:`headwire.runtime.policy.live.Policy.check_updated`.)
"""

from __future__ import annotations

import reprlib
from typing import Any

from headwire.runtime.policy.permissions import Decision
from headwire.runtime.tools.schema import input_problem

CAN_USE_TOOL_ANSWER: dict[str, Any] = {
    "type": "object",
    "required": ["behavior"],
    "properties": {
        "behavior": {"enum": ["allow", "deny"]},
        "updatedInput": {"type": "object"},
        "message": {"type": "string"},
        "interrupt": {"type": "boolean"},
        "updatedPermissions": {"type": "array"},
    },
}


def permission_answer(tool_name: str, body: Any) -> tuple[Decision, str | None]:
    """The decision a ``control_response`` body carries, and the problem when it is refused
    (``None`` for a well-formed answer)."""
    if not isinstance(body, dict):
        return _refused(tool_name, f"the response must be an object, not {type(body).__name__}")
    if body.get("subtype") != "success":
        error = body.get("error")
        text = error.get("message") if isinstance(error, dict) else error
        if not isinstance(text, str) or not text:
            text = f'Permission to use "{tool_name}" was denied.'
        return Decision(allow=False, message=text), None
    answer = body.get("response")
    problem = input_problem(CAN_USE_TOOL_ANSWER, answer)
    if problem is not None:
        return _refused(tool_name, problem.replace("params", "response", 1))
    assert isinstance(answer, dict)
    if answer["behavior"] == "allow":
        return Decision(allow=True, updated_input=answer.get("updatedInput")), None
    message = answer.get("message") or None
    return Decision(allow=False, message=message, interrupt=answer.get("interrupt") is True), None


def _refused(tool_name: str, problem: str) -> tuple[Decision, str]:
    text = (
        f'Permission to use "{tool_name}" was not granted: the client\'s answer is malformed '
        f"({reprlib.repr(problem)[1:-1] if len(problem) > 300 else problem})."
    )
    return Decision(allow=False, message=text), problem


__all__ = ["CAN_USE_TOOL_ANSWER", "permission_answer"]
