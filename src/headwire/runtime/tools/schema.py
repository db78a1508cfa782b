"""JSON Schema checks where outside data enters: MCP tool schemas, clients' answers.

Built on ``jsonschema`` (imported lazily: a run that never meets an outside schema does not pay
for it).  Every function returns a one-line problem or ``None`` and never raises on bad input,
so a broken schema or answer costs one clear error and the turn goes on.
"""

from __future__ import annotations

import copy
import functools
import reprlib
from typing import Any

from headwire.runtime.tools.base import Tool

_MAX_MESSAGE = 300


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_MESSAGE else text[: _MAX_MESSAGE - 3] + "..."


@functools.lru_cache(maxsize=16)
def _validator_class(dialect: str | None) -> Any:
    from jsonschema import validators

    default = validators.Draft202012Validator
    if dialect is None:
        return default
    return validators.validator_for({"$schema": dialect}, default=default)


def _dialect(schema: dict[str, Any]) -> str | None:
    value = schema.get("$schema")
    return value if isinstance(value, str) else None


def schema_problem(schema: Any) -> str | None:
    """Why ``schema`` is not a usable JSON Schema for a tool's input (``None``: it is)."""
    if not isinstance(schema, dict):
        return f"the input schema must be an object, not {type(schema).__name__}"
    from jsonschema.exceptions import SchemaError

    try:
        _validator_class(_dialect(schema)).check_schema(schema)
    except SchemaError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return _short(f"invalid JSON Schema at {where}: {exc.message}")
    except (RecursionError, ValueError, TypeError) as exc:
        return _short(f"invalid JSON Schema: {type(exc).__name__}: {exc}")
    if schema.get("type", "object") != "object":
        return f"the input schema must describe an object, not {reprlib.repr(schema['type'])}"
    return None


def input_problem(schema: dict[str, Any], value: Any) -> str | None:
    """Why ``value`` does not fit ``schema`` (``None``: it does; a broken schema is a problem
    too)."""
    problem = schema_problem(schema)
    if problem is not None:
        return problem
    try:
        error = next(iter(_validator_class(_dialect(schema))(schema).iter_errors(value)), None)
    except (RecursionError, ValueError, TypeError) as exc:
        return _short(f"cannot be checked: {type(exc).__name__}: {exc}")
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return _short(f"{'params/' + where if where else 'params'}: {error.message}")


def tool_input_problem(tool: Tool, value: Any) -> str | None:
    """Why ``value`` cannot be ``tool``'s input: its JSON Schema, then the tool's own checks
    (run on a copy, so the value is not changed)."""
    if not isinstance(value, dict):
        return f"the input must be an object, not {type(value).__name__}"
    problem = input_problem(tool.parameters, value)
    if problem is not None:
        return problem
    try:
        return tool.validate(copy.deepcopy(value))
    except Exception as exc:  # a tool's checker failing on odd input is a refusal, not a crash
        return _short(f"{type(exc).__name__}: {exc}")


__all__ = ["input_problem", "schema_problem", "tool_input_problem"]
