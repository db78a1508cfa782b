"""Fuzz the projections on generated tool results: the invariants hold on every one.

* :func:`~headwire.projection.project_tool_result_content` and
  :func:`~headwire.projection.project_json_string` (any budget, any marker): the output's JSON
  fits the budget, a fitting text comes back whole, a cut one is a head prefix, the marker once
  and a tail suffix, and projecting again changes nothing
  (:func:`tests.fuzz.drivers.check_projected`);
* the headless boundary (:func:`headwire.boundary.headless_tool_result`): the ``tool_result``
  block it builds from any tool response carries exactly that projection;
* :func:`~headwire.projection.project_acp_tool_call_update` on mutated and generated updates:
  never mutates its input, returns the same object when nothing changes, bounds ``content`` and
  a string ``rawOutput`` to 65,536 JSON bytes (A2UI tools exempt), and is idempotent.  The one
  documented failure is a ``shell_result`` whose fixed fields alone exceed the budget
  (``ValueError``; the server then sends the marker).
"""

from __future__ import annotations

import json
from typing import Any

import orjson
from hypothesis import given
from hypothesis import strategies as st

from headwire.boundary import headless_tool_result
from headwire.events import ToolResponse
from headwire.projection import (
    ACP_TRUNCATION_MARKER,
    HEADLESS_TRUNCATION_MARKER,
    TOOL_RESULT_JSON_BYTE_BUDGET,
    is_a2ui_tool_meta,
    project_acp_tool_call_update,
    project_json_string,
    project_tool_result_content,
)
from headwire.wire import encode
from tests.fuzz.common import (
    Chooser,
    big_text,
    from_chooser,
    fuzz_settings,
    interesting_value,
    mutate_tree,
    random_text,
    seeds,
)
from tests.fuzz.drivers import check_projected, parse_json

BUDGET = TOOL_RESULT_JSON_BYTE_BUDGET
MARKERS = (HEADLESS_TRUNCATION_MARKER, ACP_TRUNCATION_MARKER, "<cut>", "\ud800", "", "…" * 40)


def tool_text(c: Chooser) -> str:
    """A tool's output: a corpus seed's text, or generated text around the budget."""
    kind = c.integer(0, 4)
    if kind == 0:
        return c.pick(seeds("projection")).decode("utf-8", "replace")
    if kind == 1:
        return random_text(c, 40)
    return big_text(c)


@fuzz_settings(150)
@given(from_chooser(tool_text))
def test_headless_projection_invariants(text: str) -> None:
    """The 65,536-byte headless bound on any text."""
    check_projected(text, project_tool_result_content(text))


@fuzz_settings(150)
@given(from_chooser(tool_text), st.integers(0, 200_000), st.sampled_from(MARKERS))
def test_projection_with_any_budget_and_marker(text: str, budget: int, marker: str) -> None:
    """The generic projection under any budget and marker."""
    check_projected(text, project_json_string(text, budget, marker), budget, marker)


def tool_response(c: Chooser) -> ToolResponse:
    """A tool response with generated output, display, errors."""

    def maybe() -> str | None:
        return c.pick((None, tool_text(c), "", " "))

    return ToolResponse(
        call_id="call_1",
        name=c.pick(("run_shell_command", "x")),
        args={},
        output=maybe(),
        part_error=maybe() if not c.integer(0, 3) else None,
        error=maybe() if not c.integer(0, 3) else None,
        error_type=c.pick((None, "execution_denied", "execution_failed")),
        display=maybe(),
    )


@fuzz_settings(100)
@given(from_chooser(tool_response))
def test_the_emitter_bounds_every_tool_result(response: ToolResponse) -> None:
    """Every headless ``tool_result`` block carries the projection of the selected text."""
    message = headless_tool_result(response, uuid="u", session_id="s", parent_tool_use_id=None)
    (block,) = message["message"]["content"]
    content = block.get("content")
    candidates = [
        t
        for t in (response.part_error, response.error, response.display, response.output)
        if t is not None
    ]
    if content is None:
        return
    assert len(encode(content)) <= BUDGET
    assert any(project_tool_result_content(t) == content for t in candidates)
    for text in candidates:
        if project_tool_result_content(text) == content:
            check_projected(text, content)
            break
    assert parse_json(encode(message)) is not None


def text_blocks(c: Chooser, text: str) -> list[Any]:
    """ACP content: canonical text blocks, or odd ones."""
    blocks: list[Any] = [{"type": "content", "content": {"type": "text", "text": text}}]
    for _ in range(c.integer(0, 3)):
        blocks.append(
            c.pick(
                (
                    {"type": "content", "content": {"type": "text", "text": big_text(c)}},
                    {"type": "diff", "path": "/x", "newText": "y"},
                    {"type": "content", "content": {"type": "image", "data": ""}},
                    interesting_value(c),
                )
            )
        )
    return blocks


def shell_result(c: Chooser) -> dict[str, Any]:
    """A ``shell_result`` raw output (upstream's structured shell outcome)."""
    result: dict[str, Any] = {
        "type": "shell_result",
        "command": random_text(c, 3),
        "outcome": c.pick(("completed", "failed", "cancelled", "timed_out")),
        "exitCode": c.pick((0, 1, None, 2**53)),
        "signal": None,
        "output": big_text(c),
    }
    for _ in range(c.integer(0, 2)):
        result[c.pick(("stdout", "stderr", "error", "cwd", "extra"))] = c.pick(
            (big_text(c), random_text(c), None, 5)
        )
    return result


def acp_update(c: Chooser) -> dict[str, Any]:
    """A ``tool_call_update`` (or another update) with generated text, or a mutated seed."""
    if not c.integer(0, 4):
        for seed in seeds("projection"):
            try:
                value = orjson.loads(seed)
            except orjson.JSONDecodeError:
                continue
            if isinstance(value, dict):
                for _ in range(c.integer(0, 3)):
                    value = mutate_tree(c, value)
                if isinstance(value, dict):
                    return value
    text = tool_text(c)
    update: dict[str, Any] = {
        "sessionUpdate": c.pick(
            ("tool_call_update", "tool_call_update", "tool_call", "agent_message_chunk")
        ),
        "toolCallId": "call_1",
        "status": c.pick(("completed", "failed")),
    }
    if c.integer(0, 5):
        update["content"] = text_blocks(c, text)
    raw = c.integer(0, 4)
    if raw <= 1:
        update["rawOutput"] = text
    elif raw == 2:
        update["rawOutput"] = shell_result(c)
    elif raw == 3:
        update["rawOutput"] = interesting_value(c)
    if c.integer(0, 1):
        update["_meta"] = {
            "toolName": c.pick(("run_shell_command", "present_ui", "mcp__s__present_choices", "x")),
            "serverId": c.pick(("s", "my-A2UI", 5)),
        }
    return update


def snapshot(value: Any) -> str | None:
    """A comparable copy of ``value`` (``None`` when nested too deep to copy)."""
    try:
        return json.dumps(value)
    except RecursionError:
        return None


@fuzz_settings(150)
@given(from_chooser(acp_update))
def test_acp_projection_invariants(update: dict[str, Any]) -> None:
    """The ACP bound on generated and mutated updates."""
    before = snapshot(update)
    try:
        out = project_acp_tool_call_update(update)
    except ValueError as exc:
        assert "shell_result skeleton" in str(exc), exc
        return
    assert snapshot(update) == before, "the input was mutated"
    if out is update:
        return
    assert out["sessionUpdate"] == "tool_call_update"
    assert list(out) == list(update), "key order changed"
    assert {k for k in out if out[k] is not update[k]} <= {"content", "rawOutput"}
    meta = update.get("_meta")
    assert not (
        isinstance(meta, dict)
        and is_a2ui_tool_meta(
            {k: meta[k] for k in ("toolName", "serverId") if isinstance(meta.get(k), str)}
        )
    )
    for key in ("content", "rawOutput"):
        if out.get(key) is not update.get(key):
            assert len(encode(out[key])) <= BUDGET, f"{key} over budget"
    assert project_acp_tool_call_update(out) == out, "not idempotent"
