"""``headwire.sdk``'s typed messages and the wire schema describe the same messages.

For each message and block shape of the schema's headless output, the SDK dataclass has a
field for every property headwire may send (renames listed below), and every dataclass field
is a property of the schema (or a listed derived one), with a matching JSON type; every
golden message parses to its typed class with the wire's values; the SDK's own input lines
validate.  A field added to the schema and not to the SDK (or the other way round) fails here.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any

import pytest

from headwire.protocol.schema import headwire_variant, mode_document, validator
from headwire.sdk import messages as sdk

GOLDEN = Path(__file__).resolve().parents[2] / "data" / "golden"

# schema definition -> (dataclass, {wire path: dataclass field}); a wire path is a property,
# or "parent.child" for one nested a level down; None: not typed (documented in the dataclass)
SHAPES: dict[str, tuple[type, dict[str, str | None]]] = {
    "SystemInit": (
        sdk.SystemMessage,
        {"type": None, "qwen_code_version": "version", "claude_code_version": "version"},
    ),
    "SystemTaskStarted": (sdk.SystemMessage, {"type": None, "parent_tool_use_id": None}),
    "SystemCompacting": (sdk.SystemMessage, {"type": None}),
    "SystemCompactBoundary": (sdk.SystemMessage, {"type": None}),
    "AssistantMessage": (
        sdk.AssistantMessage,
        {
            "type": None,
            "message": None,
            "message.id": "message_id",
            "message.type": None,
            "message.role": None,
            "message.model": "model",
            "message.content": "content",
            "message.stop_reason": "stop_reason",
            "message.usage": "usage",
        },
    ),
    "UserToolResult": (
        sdk.UserMessage,
        {"type": None, "message": None, "message.role": None, "message.content": "content"},
    ),
    "ResultSuccess": (
        sdk.ResultMessage,
        {
            "type": None,
            "modelUsage": "model_usage",
            "headwire": None,
            "headwire.exit_code": "exit_code",
            "headwire.retryable": "retryable",
        },
    ),
    "ResultError": (
        sdk.ResultMessage,
        {
            "type": None,
            "modelUsage": "model_usage",
            "error": None,
            "error.message": "error",
            "headwire": None,
            "headwire.exit_code": "exit_code",
            "headwire.retryable": "retryable",
        },
    ),
    "SystemToolResultBound": (sdk.ToolResultBound, {"type": None, "subtype": None}),
    "StreamEvent": (sdk.StreamEvent, {"type": None}),
    "ControlRequestOut": (sdk.ControlRequest, {"type": None}),
    "ControlCancelRequestOut": (sdk.ControlCancelRequest, {"type": None}),
    "TextBlock": (sdk.TextBlock, {"type": None}),
    "ThinkingBlock": (sdk.ThinkingBlock, {"type": None}),
    "ToolUseBlock": (sdk.ToolUseBlock, {"type": None}),
    "ToolResultBlock": (sdk.ToolResultBlock, {"type": None}),
}
DERIVED = {
    sdk.SystemMessage: {"subtype", "data"},  # data: the payload of system events
    sdk.ResultMessage: {"result", "error", "errors", "interim"},  # interim: from parent_tool_use_id
    sdk.ControlRequest: {"subtype"},  # request.subtype, lifted
    sdk.SystemMessage | None: set(),
}
JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", list: "array"}
JSON_TYPES[dict] = "object"


def _defs() -> dict[str, Any]:
    defs: dict[str, Any] = headwire_variant(mode_document("headless"))["$defs"]
    return defs


def _resolve(schema: Any, defs: dict[str, Any]) -> Any:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = defs[schema["$ref"].removeprefix("#/$defs/")]
    return schema


def _json_types(schema: Any, defs: dict[str, Any]) -> set[str]:
    schema = _resolve(schema, defs)
    if not isinstance(schema, dict) or schema in ({}, True):
        return set()
    if "const" in schema:
        value = schema["const"]
        return {"null" if value is None else JSON_TYPES.get(type(value), "any")}
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return set().union(*(_json_types(s, defs) for s in schema[key]))
    kind = schema.get("type")
    if isinstance(kind, list):
        return set(kind)
    return {kind} if kind else set()


def _python_types(annotation: Any) -> set[str]:
    if annotation is Any:
        return set()
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_python_types(a) for a in typing.get_args(annotation)))
    if annotation is type(None):
        return {"null"}
    base = origin or annotation
    if base is list:
        return {"array"}
    if base is dict:
        return {"object"}
    return {JSON_TYPES[base]} if base in JSON_TYPES else {"object"}  # a dataclass: an object


def _wire_properties(name: str, defs: dict[str, Any]) -> dict[str, Any]:
    definition = defs[name]
    out = dict(definition["properties"])
    for key, sub in definition["properties"].items():
        sub = _resolve(sub, defs)
        if isinstance(sub, dict) and "properties" in sub:
            out |= {f"{key}.{k}": v for k, v in sub["properties"].items()}
    return out


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_every_schema_field_has_a_typed_field_and_back(name: str) -> None:
    defs = _defs()
    cls, renames = SHAPES[name]
    fields = {f.name: f for f in dataclasses.fields(cls) if f.name != "raw"}
    hints = typing.get_type_hints(cls)
    wire = _wire_properties(name, defs)
    covered = set()
    for path, schema in wire.items():
        if "." not in path and path in renames and renames[path] is None:
            continue
        target = renames.get(path, path if "." not in path else None)
        if target is None:
            continue
        assert target in fields, f"{name}.{path}: no field in {cls.__name__} ({target})"
        covered.add(target)
        wire_types = _json_types(schema, defs) - {"null"}
        typed = _python_types(hints[target]) - {"null"}
        if wire_types and typed:
            assert wire_types & typed or ("integer" in wire_types and "number" in typed), (
                f"{name}.{path}: wire {wire_types}, {cls.__name__}.{target} {typed}"
            )
    missing = set(fields) - covered - DERIVED.get(cls, set())
    for other, (other_cls, other_renames) in SHAPES.items():
        if other_cls is cls and other != name:
            others = _wire_properties(other, defs)
            missing -= {other_renames.get(p, p) for p in others}
    assert not missing, f"{cls.__name__} fields not in the schema: {sorted(missing)}"


def _golden_messages() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(GOLDEN.glob("*.json")):
        if path.stem == "acp":
            continue
        data = json.loads(path.read_text())
        for key, items in data.items():
            if key == "exit":
                continue
            for item in items:
                if set(item) == {"text"}:
                    continue
                for msg in item["array"] if set(item) == {"array"} else [item]:
                    out.append((f"{path.name} {key}", msg))
    return out


def test_every_golden_message_parses_to_its_typed_class() -> None:
    for where, raw in _golden_messages():
        parsed = sdk.parse_message(raw)
        assert not isinstance(parsed, sdk.UnknownMessage), where
        assert getattr(parsed, "raw", None) is raw
        if isinstance(parsed, sdk.ResultMessage):
            assert parsed.is_error == raw["is_error"] and parsed.num_turns == raw["num_turns"]
            if raw["is_error"]:
                assert parsed.errors == raw["errors"] == [raw["error"]["message"]]
        if isinstance(parsed, sdk.UserMessage):
            wires = [b for b in raw["message"]["content"] if b["type"] == "tool_result"]
            for block, wire in zip(parsed.tool_results, wires, strict=True):
                assert block.content == wire.get("content") and block.is_error == wire["is_error"]
        if isinstance(parsed, sdk.AssistantMessage):
            assert parsed.model == raw["message"]["model"]
            assert parsed.stop_reason == raw["message"]["stop_reason"]


def test_the_sdk_input_lines_validate() -> None:
    check = validator("headless", "input")
    assert not check.errors(sdk.user_input("hello"))
    assert not check.errors(sdk.user_input([{"type": "text", "text": "hi"}], session_id="s"))


def test_errors_fall_back_to_error_message_from_a_cli_without_them() -> None:
    qwen = {
        "type": "result",
        "subtype": "error_max_turns",
        "is_error": True,
        "error": {"message": "m"},
    }
    parsed = sdk.parse_message(qwen)
    assert isinstance(parsed, sdk.ResultMessage) and parsed.errors == ["m"]
