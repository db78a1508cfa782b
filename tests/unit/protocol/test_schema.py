"""The wire schema: valid JSON Schema, every committed capture validates, broken lines fail.

* ``wire.json``, each mode's standalone view and the headwire variant pass the validator's
  meta-schema (draft 2020-12), and every ``$ref`` resolves inside its document;
* every message of the golden captures (``tests/data/golden``: headwire's wire in every mode)
  validates against the headwire variant, every message of the upstream captures
  (``tests/data/upstream``, Qwen Code 0.24.4) against the full schema; where upstream deviates
  (``x-upstream-only``) the headwire variant rejects it;
* deliberately broken messages fail, with a reason naming the field;
* every builder of ``headwire.protocol.messages`` produces valid messages, and the bound
  (``x-maxJsonBytes``) holds exactly (hypothesis properties).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.acp.updates import PROTOCOL_VERSION as ACP_PROTOCOL_VERSION
from headwire.projection import project_acp_tool_call_update, project_tool_result_content
from headwire.protocol import messages as m
from headwire.protocol.dual_output import PROTOCOL_VERSION as DUAL_OUTPUT_PROTOCOL_VERSION
from headwire.protocol.schema import (
    MODES,
    SCHEMA_VERSION,
    document,
    headwire_variant,
    mode_document,
    validator,
)
from headwire.wire import encode

DATA = Path(__file__).resolve().parents[2] / "data"
BUDGET = 65_536


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def _documents() -> list[tuple[str, dict[str, Any]]]:
    docs = [("full", document()), ("full headwire", headwire_variant(document()))]
    for mode in MODES:
        docs += [
            (mode, mode_document(mode)),
            (f"{mode} headwire", headwire_variant(mode_document(mode))),
        ]
    return docs


@pytest.mark.parametrize(("name", "schema"), _documents(), ids=[n for n, _ in _documents()])
def test_every_document_is_valid_json_schema(name: str, schema: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    for ref in _refs(schema):
        assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in schema["$defs"], ref


def test_versions_are_the_protocols() -> None:
    full = document()
    assert full["x-schema-version"] == SCHEMA_VERSION
    assert full["x-compatible-with"]["dual-output-protocol"] == DUAL_OUTPUT_PROTOCOL_VERSION
    assert full["x-compatible-with"]["acp-protocol"] == ACP_PROTOCOL_VERSION
    for mode in MODES:
        view = mode_document(mode)
        assert view["x-schema-version"] == SCHEMA_VERSION and view["x-mode"] == mode


def test_each_origin_is_marked() -> None:
    origins = {d.get("x-origin") for d in document()["$defs"].values() if "properties" in d}
    assert origins <= {"qwen-code", "claude-code", "acp", "headwire"}
    assert None not in origins


# -- the committed captures ------------------------------------------------------------------


def _golden() -> list[tuple[str, str, Any]]:
    """(where, mode, message) of every message in the golden captures."""
    out = []
    for path in sorted((DATA / "golden").glob("*.json")):
        data = json.loads(path.read_text())
        for key, items in data.items():
            if key == "exit":
                continue
            mode = "acp" if path.stem == "acp" else "dual" if key == "sidecar" else "headless"
            for n, item in enumerate(items):
                if set(item) == {"text"}:
                    continue  # a text line (text mode) or the empty tail after the last newline
                messages = item["array"] if set(item) == {"array"} else [item]
                out += [(f"{path.name} {key}[{n}]", mode, msg) for msg in messages]
    return out


def _upstream() -> list[tuple[str, str, str, Any]]:
    """(where, mode, direction, message) of every message in the upstream captures."""
    out = []
    for path in sorted((DATA / "upstream").glob("*.jsonl")):
        if path.name.endswith("fake-openai-log.jsonl"):
            continue
        mode = "acp" if "-acp" in path.name else "dual" if "-dual" in path.name else "headless"
        direction = "input" if path.name.endswith("client-sent.jsonl") else "output"
        text = path.read_text()
        lines = [text] if text.lstrip().startswith("[") else text.splitlines()
        for n, line in enumerate(lines, 1):
            if not line.strip() or not line.lstrip().startswith(("{", "[")):
                continue  # text mode's stdout
            value = json.loads(line)
            for msg in value if isinstance(value, list) else [value]:
                if "_oracle_note" in msg:
                    continue  # the capture left out a line over 200 KB: not a wire message
                out.append((f"{path.name}:{n}", mode, direction, msg))
    return out


def test_every_golden_message_validates() -> None:
    found = _golden()
    assert len(found) > 200
    problems = [(w, validator(mode).errors(msg)) for w, mode, msg in found]  # type: ignore[arg-type]
    assert not [p for p in problems if p[1]], [p for p in problems if p[1]][:5]


def test_every_upstream_message_validates_and_its_deviations_are_marked() -> None:
    found = _upstream()
    assert len(found) > 200
    deviating = []
    for where, mode, direction, msg in found:
        assert not validator(mode, direction, upstream=True).errors(msg), where  # type: ignore[arg-type]
        if validator(mode, direction).errors(msg):  # type: ignore[arg-type]
            deviating.append(msg)
    # Qwen Code's own extras, all marked x-upstream-only: craft/drainMidTurnQueue, the
    # usage _meta of message chunks, models/configOptions of session/new, the phase of calls
    assert any(msg.get("method") == "craft/drainMidTurnQueue" for msg in deviating)
    assert all("jsonrpc" in msg for msg in deviating), "headless captures match exactly"


# -- broken messages fail -------------------------------------------------------------------


def _error_result() -> dict[str, Any]:
    return m.result_error(
        uuid="u",
        session_id="s",
        duration_ms=1,
        duration_api_ms=0,
        num_turns=1,
        usage=m.usage_dict(1, 2),
        permission_denials=[],
        message="Operation cancelled.",
    )


def _tool_result(content: str | None) -> dict[str, Any]:
    return m.user_message(
        uuid="u",
        session_id="s",
        parent_tool_use_id=None,
        content=[m.tool_result_block("call_1", False, content)],
    )


def _update(content_text: str, raw: str | None, meta: dict[str, Any]) -> dict[str, Any]:
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": content_text}}],
        "_meta": meta,
    }
    if raw is not None:
        update["rawOutput"] = raw
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }


BROKEN: list[tuple[str, str, str, Any, str]] = []


def _broken(name: str, mode: str, message: Any, reason: str, direction: str = "output") -> None:
    BROKEN.append((name, mode, direction, message, reason))


_no_errors = _error_result()
del _no_errors["errors"]
_broken("error result without errors[]", "headless", _no_errors, "'errors' is a required property")
_extra = _error_result()
_extra["surprise"] = 1
_broken("an unknown field", "headless", _extra, "'surprise' was unexpected")
_broken(
    "tool_result content over 65,536 JSON bytes",
    "headless",
    _tool_result("x" * 65_535),
    "maxLength 65534 failed for a str of length 65,535",
)
_broken(
    "tool_result content escaping past the bound",
    "headless",
    _tool_result('"' * 40_000),
    "80,002 JSON bytes",
)
_bad_block = _tool_result("ok")
_bad_block["message"]["content"][0]["is_error"] = "no"
_broken("is_error not a boolean", "headless", _bad_block, "is not of type 'boolean'")
_broken("unknown message type", "headless", {"type": "telemetry"}, "no message shape matches")
_broken("not an object", "headless", [1, 2], "is not of type 'object'")
_broken(
    "ACP rawOutput over the bound",
    "acp",
    _update("small", "y" * 70_000, {"toolName": "run_shell_command", "provenance": "builtin"}),
    "70,002 JSON bytes",
)
_broken(
    "craft/drainMidTurnQueue from headwire",
    "acp",
    {"jsonrpc": "2.0", "id": 0, "method": "craft/drainMidTurnQueue", "params": {}},
    "no message shape matches",
)
_broken(
    "control_request without request_id",
    "headless",
    {"type": "control_request", "request": {"subtype": "interrupt"}},
    "'request_id' is a required property",
    "input",
)
_broken(
    "prompt without its blocks",
    "acp",
    {"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": {"sessionId": "s"}},
    "'prompt' is a required property",
    "input",
)


@pytest.mark.parametrize(
    ("name", "mode", "direction", "message", "reason"), BROKEN, ids=[b[0] for b in BROKEN]
)
def test_a_broken_message_fails_with_its_reason(
    name: str, mode: str, direction: str, message: Any, reason: str
) -> None:
    errors = validator(mode, direction).errors(message)  # type: ignore[arg-type]
    assert errors and reason in errors[0], errors


def test_an_a2ui_result_is_exempt_from_the_bound() -> None:
    meta = {"toolName": "mcp__ui__present_ui", "provenance": "mcp", "serverId": "ui"}
    assert not validator("acp").errors(_update("z" * 100_000, "z" * 100_000, meta))
    assert not validator("acp").errors(
        _update("z" * 100_000, None, {**meta, "serverId": "dq-A2UI", "toolName": "x"})
    )


def test_the_headwire_variant_drops_only_upstream_only_parts() -> None:
    full, mine = document(), headwire_variant(document())
    dropped = set(full["$defs"]) - set(mine["$defs"])
    assert dropped == {n for n, d in full["$defs"].items() if d.get("x-upstream-only")}
    assert "UpstreamDrainMidTurnQueue" in dropped
    assert "phase" not in mine["$defs"]["AcpToolMeta"]["properties"]


# -- builders and the bound -----------------------------------------------------------------


def test_every_builder_writes_valid_messages() -> None:
    v = validator("headless")
    usage = m.usage_dict(3, 4, 0, 7)
    built = [
        m.system_init(
            session_id="s",
            cwd="/w",
            tools=["read_file"],
            mcp_servers=[{"name": "fs", "status": "connected"}],
            model="x",
            permission_mode="default",
            slash_commands=[],
            version="0",
            agents=[],
        ),
        m.system_event(
            uuid="u",
            session_id="s",
            subtype="task_started",
            data={"task_id": "t", "tool_use_id": "c", "description": "d"},
        ),
        m.assistant_message(
            uuid="u",
            session_id="s",
            parent_tool_use_id=None,
            model="x",
            content=[m.tool_use_block("c", "read_file", {"a": 1})],
            usage=usage,
        ),
        m.assistant_message(
            uuid="u",
            session_id="s",
            parent_tool_use_id="p",
            model="x",
            content=[m.thinking_block("t", "s")],
            usage=usage,
        ),
        _tool_result(None),
        m.user_message(
            uuid="u", session_id="s", parent_tool_use_id="p", content=[m.text_block("task")]
        ),
        m.result_success(
            uuid="u",
            session_id="s",
            duration_ms=1,
            duration_api_ms=1,
            num_turns=1,
            result="r",
            usage=usage,
            permission_denials=[],
            stats={},
        ),
        _error_result(),
        m.subagent_error_result(uuid="u", session_id="s", message="Task was cancelled"),
        m.stream_event(
            uuid="u", session_id="s", parent_tool_use_id=None, event={"type": "message_stop"}
        ),
        m.control_request(
            "r",
            {
                "subtype": "can_use_tool",
                "tool_name": "t",
                "tool_use_id": "c",
                "input": {},
                "permission_suggestions": None,
                "blocked_path": None,
            },
        ),
        m.control_success("r", {"subtype": "interrupt"}),
        m.control_success("r"),
        m.control_error("r", "Unknown control request subtype: x"),
    ]
    for message in built:
        assert not v.errors(message), (message, v.errors(message))
    for subtype in (
        "error_max_turns",
        "error_max_budget_usd",
        "error_max_structured_output_retries",
    ):
        result = _error_result() | {"subtype": subtype, "total_cost_usd": 0.5}
        assert not v.errors(result), subtype
    success = built[6] | {
        "structured_output": {"a": 1},
        "total_cost_usd": 0.0,
        "modelUsage": {"m": {"inputTokens": 1, "costUSD": 0.1}},
    }
    assert not v.errors(success)


_texts = st.tuples(st.text(min_size=1, max_size=6), st.integers(1, 25_000)).map(
    lambda p: p[0] * p[1]
)


@settings(max_examples=40, deadline=None)
@given(_texts)
def test_the_bound_holds_exactly_on_every_headless_result(text: str) -> None:
    """``x-maxJsonBytes``: a tool_result's content validates iff its JSON is at most 65,536
    bytes, and the headless projection always makes it so."""
    fits = len(encode(text)) <= BUDGET
    assert validator("headless").is_valid(_tool_result(text)) == fits
    assert validator("headless").is_valid(_tool_result(project_tool_result_content(text)))


@settings(max_examples=25, deadline=None)
@given(_texts)
def test_the_bound_holds_on_every_projected_acp_update(text: str) -> None:
    meta = {"toolName": "run_shell_command", "provenance": "builtin"}
    frame = _update(text, text, meta)
    frame["params"]["update"] = project_acp_tool_call_update(frame["params"]["update"])
    assert validator("acp").is_valid(frame)


def test_validators_do_not_share_state() -> None:
    before = copy.deepcopy(document())
    validator("dual", "input").errors({"type": "submit"})
    assert document() == before


_GOLDEN = _golden()
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, len(_GOLDEN) - 1), st.integers(0, 50), st.booleans(), _json_values)
def test_the_fast_path_agrees_with_the_full_schema(
    index: int, which: int, delete: bool, value: Any
) -> None:
    """The fast path (a message checked against the shapes its discriminators name) never
    accepts what the root's oneOf rejects, nor rejects what it accepts."""
    where, mode, message = _GOLDEN[index]
    message = copy.deepcopy(message)
    target = message
    if isinstance(target.get("message"), dict) and which % 2:
        target = target["message"]
    keys = sorted(target)
    key = keys[which % len(keys)]
    if delete:
        del target[key]
    else:
        target[key] = value
    for upstream in (False, True):
        check = validator(mode, upstream=upstream)  # type: ignore[arg-type]
        full = bool(check._validator.is_valid(message))
        assert check.is_valid(message) == full, (where, key)
        assert (not check.errors(message)) == full, (where, key)
