"""Large MCP results: text runs fold without changing what is rendered, and a large response
line is read into the same values the SDK's parser reads."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.runtime.mcp.large import read_tool_response
from headwire.runtime.mcp.results import TextRunFolder, render
from tests.strategies import adversarial_text

text_block = adversarial_text(12).map(lambda t: {"type": "text", "text": t})
other_block = st.sampled_from(
    [
        {"type": "image", "data": "iV", "mimeType": "image/png"},
        {"type": "text", "text": "annotated", "annotations": {"priority": 1}},
        {"type": "resource_link", "uri": "file:///a", "name": "a"},
    ]
)
blocks_st = st.lists(st.one_of(text_block, text_block, other_block), max_size=12)


def as_sdk(block: dict[str, Any]) -> Any:
    """A stand-in read by attribute, as :func:`render` reads the SDK's models."""
    fields = {("mime_type" if k == "mimeType" else k): v for k, v in block.items()}
    return SimpleNamespace(**fields)


def folded(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    folder = TextRunFolder()
    for block in blocks:
        folder.append(block)
    return folder.blocks()


@given(blocks_st)
def test_folding_renders_the_same(blocks: list[dict[str, Any]]) -> None:
    """Invariant: render(fold(blocks)) == render(blocks); blocks that do not fold are kept."""
    out = folded(blocks)
    before = render("t", "mcp__s__t", [as_sdk(b) for b in blocks])
    after = render("t", "mcp__s__t", [as_sdk(b) for b in out])
    assert after == before
    plain = [b for b in blocks if len(b) == 2 and b["type"] == "text"]
    assert len(out) <= len(blocks)
    assert [b for b in out if b not in plain and len(b) != 2] == [
        b for b in blocks if b not in plain and len(b) != 2
    ]


def test_a_run_folds_into_few_blocks_and_a_lone_block_is_kept() -> None:
    lone = {"type": "text", "text": "x"}
    assert folded([lone])[0] is lone
    many = [{"type": "text", "text": f"line {i}"} for i in range(10_000)]
    (one,) = folded(many)
    assert one["text"] == "\n".join(b["text"] for b in many)


def test_a_text_only_display_is_the_model_text_itself() -> None:
    rendered = render("t", "mcp__s__t", [as_sdk({"type": "text", "text": "a" * 100})] * 2)
    assert rendered.display is rendered.model_text
    blank = render("t", "mcp__s__t", [as_sdk({"type": "text", "text": " \n"})])
    assert blank.model_text == "(mcp__s__t completed with no output)" and blank.display == " \n"


def response(content: list[Any], **extra: Any) -> bytes:
    result = {"content": content, **extra}
    return json.dumps({"jsonrpc": "2.0", "id": 7, "result": result}).encode()


def sdk_read(line: bytes) -> Any:
    return types.jsonrpc_message_adapter.validate_json(line, by_name=False)


def through_large(line: bytes) -> Any:
    value = read_tool_response(line)
    assert value is not None
    return types.jsonrpc_message_adapter.validate_python(value, by_name=False)


def rendered_of(message: Any) -> Any:
    result = types.CallToolResult.model_validate(message.result, by_name=False)
    return render("t", "mcp__s__t", result.content, result.structured_content)


@settings(max_examples=40, deadline=None)
@given(blocks_st, st.integers(0, 3))
def test_large_lines_read_like_the_sdk_reads_them(blocks: list[dict[str, Any]], pad: int) -> None:
    """Invariant: whatever path a line takes (incremental or whole), the SDK sees a result that
    renders exactly like the one its own parser reads."""
    many = blocks * 30 + [{"type": "text", "text": "p" * (2000 * pad)}]
    line = response(many)
    if read_tool_response(line) is None:  # left to the SDK (e.g. an escaped lone surrogate)
        return
    assert rendered_of(through_large(line)) == rendered_of(sdk_read(line))


@pytest.mark.parametrize(
    "extra",
    [{"isError": True}, {"structuredContent": {"a": 1}}, {"_meta": {"k": "v"}}],
)
def test_results_that_folding_would_change_are_not_folded(extra: dict[str, Any]) -> None:
    content = [{"type": "text", "text": f"{i}"} for i in range(5000)]
    line = response(content, **extra)
    value = read_tool_response(line)
    assert value is not None
    folds = "isError" not in extra and "structuredContent" not in extra
    assert (len(value["result"]["content"]) == 1) is folds
    message = through_large(line)
    assert message.result == (sdk_read(line).result if not folds else message.result)


@pytest.mark.parametrize(
    "line",
    [
        response([{"type": "text", "text": "\ud800" + "x" * 10}] * 2000),
        response([{"type": "text", "text": "n"}] * 2000, big=2**70),
        b'{"jsonrpc":"2.0","id":1,"result":{"content":[' + b"1," * 5000 + b"]}",
    ],
)
def test_lines_only_the_sdk_reads_exactly_are_left_to_it(line: bytes) -> None:
    """An escaped lone surrogate, an integer over 64 bits, broken JSON: not read here, or
    read whole by the same rules (never a '?' in place of a surrogate)."""
    value = read_tool_response(line)
    if value is not None:
        assert "\ud800" not in json.dumps(value) or "\\ud800" in json.dumps(value)
        assert through_large(line).result == sdk_read(line).result
