"""headwire.runtime.tools.schema and headwire.runtime.policy.answers: checks where outside data
enters."""

from __future__ import annotations

from typing import Any

import pytest

from headwire.runtime.policy.answers import permission_answer
from headwire.runtime.tools.schema import input_problem, schema_problem


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"n": {"type": "integer", "minimum": "5"}}},
        {"type": "object", "properties": {"n": {"type": "nope"}}},
        {"type": "string"},
        [],
        {"type": "object", "required": "n"},
    ],
)
def test_unusable_schemas(schema: Any) -> None:
    assert schema_problem(schema)


def test_inputs() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 5}}}
    assert input_problem(schema, {"n": 7}) is None
    assert "less than the minimum" in (input_problem(schema, {"n": 3}) or "")


@pytest.mark.parametrize(
    ("response", "allow", "refused"),
    [
        ({"behavior": "allow"}, True, False),
        ({"behavior": "allow", "updatedInput": {"command": "ls"}}, True, False),
        ({"behavior": "deny", "message": "no", "interrupt": True}, False, False),
        ({"behavior": "Allow"}, False, True),
        ({"behavior": "allow", "updatedInput": "rm -rf /"}, False, True),
        ({"behavior": "deny", "interrupt": "false"}, False, True),
        ({"behavior": "deny", "message": 5}, False, True),
        ("allow", False, True),
        (None, False, True),
    ],
)
def test_permission_answers(response: Any, allow: bool, refused: bool) -> None:
    decision, problem = permission_answer(
        "run_shell_command", {"subtype": "success", "response": response}
    )
    assert decision.allow is allow
    assert (problem is not None) is refused
    assert not (refused and decision.interrupt)
