"""The pure core of ``headwire bound``: per-line bounding, the text-block rule, the stream."""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headwire.bound import (
    FAST_PATH_LINE_BYTES,
    LOAD_REPLAY_META_KEY,
    MAX_TEXT_BLOCKS,
    BoundFilter,
    Format,
    bound_line,
    bound_tool_result_content,
    bound_value,
    first_long_line,
    json_size,
    line_problem,
    project_text_block_list,
    quick_line_problem,
)
from headwire.projection import (
    ACP_TRUNCATION_MARKER,
    HEADLESS_TRUNCATION_MARKER,
    TOOL_RESULT_JSON_BYTE_BUDGET,
    project_acp_tool_call_update,
    project_tool_result_content,
)
from headwire.projection.fair_share import allocate_payload_budgets
from headwire.wire import encode
from tests.paths import PACKAGE
from tests.strategies import adversarial_text, json_values

BUDGET = TOOL_RESULT_JSON_BYTE_BUDGET
MARKER = HEADLESS_TRUNCATION_MARKER
BOUND_PKG = PACKAGE / "bound"


def tool_result(content: Any, *, key: str = "content") -> dict[str, Any]:
    """A stream-json ``user`` message in upstream key order carrying one tool result."""
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": "call_1", "is_error": False}
    block[key] = content
    return {
        "type": "user",
        "uuid": "u-1",
        "session_id": "s-1",
        "parent_tool_use_id": None,
        "message": {"role": "user", "content": [block]},
    }


def text_blocks(*texts: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t} for t in texts]


def acp_update(text: str, raw: Any = None) -> dict[str, Any]:
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": text}}],
    }
    if raw is not None:
        update["rawOutput"] = raw
    return update


def session_update(update: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s-1", "update": update},
    }


def line_of(value: Any, end: bytes = b"\n") -> bytes:
    return encode(value) + end


def run_filter(
    chunks: list[bytes], fmt: Format = Format.STREAM_JSON, *, validate: bool = False
) -> tuple[bytes, BoundFilter]:
    flt = BoundFilter(fmt, validate=validate)
    out: list[bytes | bytearray] = []
    for chunk in chunks:
        out += flt.feed(chunk)
    out += flt.close()
    return b"".join(out), flt


def reference(lines: list[bytes], fmt: Format = Format.STREAM_JSON) -> bytes:
    """The stream as :func:`bound_line` alone would write it, line by line."""
    return b"".join(bound_line(line, fmt).output or line for line in lines)


def reference_warnings(lines: list[bytes], *, validate: bool) -> list[tuple[int, str]]:
    """The warnings line by line: the full check for long lines (or all, with ``validate``)."""
    warnings = []
    for number, line in enumerate(lines, 1):
        full = validate or len(line) > FAST_PATH_LINE_BYTES
        problem = (line_problem if full else quick_line_problem)(line)
        if problem is not None:
            warnings.append((number, problem))
    return warnings


def split_lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True) if b"\r" not in data else _split_lf(data)


def _split_lf(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


# -- purity -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", sorted(BOUND_PKG.glob("*.py")), ids=lambda p: p.name)
def test_bound_module_does_no_io(path: Any) -> None:
    tree = ast.parse(path.read_text())
    roots = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "io" and {alias.name for alias in node.names} == {"BytesIO"}:
                continue  # an in-memory buffer (the fast path's line splitter), not I/O
            roots.add(node.module.split(".")[0])
    assert not roots & {"os", "sys", "subprocess", "asyncio", "time", "io", "threading"}


# -- sizes ------------------------------------------------------------------------------------


@given(json_values())
def test_json_size_is_the_encoded_length(value: Any) -> None:
    assert json_size(value) == len(encode(value))


@pytest.mark.parametrize("cut", [2**20 - 1, 2**20, 2**20 + 1])
def test_json_size_of_long_strings_never_splits_a_surrogate_pair(cut: int) -> None:
    value = "a" * cut + "\ud83d\ude00" + "\ud800" + "é" * 10
    assert json_size(value) == len(encode(value))


# -- water fill -------------------------------------------------------------------------------

demands_st = st.lists(st.integers(0, 5000), max_size=12)


@given(demands_st, st.integers(0, 30000))
def test_water_fill_matches_the_acp_allocator_at_the_acp_reserve(
    demands: list[int], available: int
) -> None:
    assert allocate_payload_budgets(demands, available, 41) == allocate_payload_budgets(
        demands, available, reserve=41
    )


@given(demands_st, st.integers(0, 30000), st.integers(0, 100))
def test_water_fill_is_bounded_and_max_min_fair(
    demands: list[int], available: int, reserve: int
) -> None:
    allocations = allocate_payload_budgets(demands, available, reserve=reserve)
    if allocations is None:
        assert sum(min(d, reserve) for d in demands) > available
        return
    assert sum(allocations) <= available
    assert all(min(d, reserve) <= a <= d for a, d in zip(allocations, demands, strict=True))
    if sum(demands) <= available:
        assert allocations == demands
    for a, d in zip(allocations, demands, strict=True):
        if a < d:  # short of its demand: nobody got more than one byte above it
            assert max(allocations) <= a + 1
    assert sum(allocations) == min(available, sum(demands))


# -- the list-of-text-blocks rule -------------------------------------------------------------


def test_text_blocks_that_fit_are_returned_as_is() -> None:
    blocks = text_blocks("a" * 30000, "b" * 30000)
    assert project_text_block_list(blocks) is blocks


def test_text_blocks_at_the_exact_boundary() -> None:
    skeleton = len(encode(text_blocks("", "")))
    fits = text_blocks("a" * 1000, "b" * (BUDGET - skeleton - 1000))
    assert len(encode(fits)) == BUDGET
    assert project_text_block_list(fits) is fits
    over = text_blocks("a" * 1000, "b" * (BUDGET - skeleton - 999))
    projected = project_text_block_list(over)
    assert projected is not over
    assert len(encode(projected)) <= BUDGET


def test_two_large_text_blocks_share_the_budget_evenly() -> None:
    blocks = text_blocks("H" + "x" * 300_000 + "T", "h" + "y" * 300_000 + "t")
    projected = project_text_block_list(blocks)
    assert len(encode(projected)) == BUDGET
    first, second = (b["text"] for b in projected)
    assert abs(len(first) - len(second)) <= 1
    assert first.count(MARKER) == second.count(MARKER) == 1
    assert first.startswith("H") and first.endswith("T")
    assert second.startswith("h") and second.endswith("t")
    assert blocks[0]["text"].startswith("Hxx")  # input untouched


def test_small_text_blocks_stay_whole_and_shared() -> None:
    small = {"type": "text", "text": "small"}
    blocks = [small, {"type": "text", "text": "z" * 200_000}]
    projected = project_text_block_list(blocks)
    assert projected[0] is small
    assert len(encode(projected)) == BUDGET


def test_text_block_key_order_is_kept() -> None:
    blocks = [{"text": "q" * 100_000, "type": "text"}]
    projected = project_text_block_list(blocks)
    assert list(projected[0]) == ["text", "type"]
    assert len(encode(projected)) == BUDGET


IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iV"}}


def textual_fields(content: Any) -> list[str]:
    """Every textual field of a headless ``tool_result.content``, whatever its shape."""
    if isinstance(content, str):
        return [content]
    items = content if isinstance(content, list) else [content]
    return [
        b if isinstance(b, str) else b["text"]
        for b in items
        if isinstance(b, str)
        or (isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str))
    ]


@pytest.mark.parametrize(
    "blocks",
    [
        [{"type": "text", "text": "x" * 100_000, "cache_control": None}],
        [{"type": "text", "text": "x" * 100_000}, IMAGE],
        [IMAGE, {"type": "text", "text": "x" * 60_000}, {"type": "text", "text": "y" * 60_000}],
        ["x" * 100_000],
    ],
)
def test_every_textual_field_of_other_lists_is_bounded(blocks: list[Any]) -> None:
    """Finding (issue 11): text + image lists, text blocks with extra keys and bare strings
    went out at full size; now the texts share the budget and every other block is kept."""
    projected = project_text_block_list(blocks)
    assert projected is not blocks
    assert len(encode(projected)) <= BUDGET
    assert len(projected) == len(blocks)
    for before, after in zip(blocks, projected, strict=True):
        if isinstance(before, dict) and before.get("type") != "text":
            assert after is before
        elif isinstance(before, dict):
            assert list(after) == list(before)
            assert {k: v for k, v in after.items() if k != "text"} == {
                k: v for k, v in before.items() if k != "text"
            }
    assert all(MARKER in text for text in textual_fields(projected))
    assert project_text_block_list(projected) is projected


def test_lists_without_text_are_left_alone() -> None:
    for blocks in ([{"type": "text", "text": 5}], [IMAGE, {"x": "y" * 70_000}], []):
        assert project_text_block_list(blocks) is blocks


def test_a_single_text_block_object_is_bounded() -> None:
    block = {"type": "text", "text": "s" * 100_000, "cache_control": {"type": "ephemeral"}}
    projected = bound_tool_result_content(block)
    assert isinstance(projected, dict) and list(projected) == list(block)
    assert len(encode([projected])) <= BUDGET and MARKER in projected["text"]
    assert bound_tool_result_content(projected) is projected
    small = {"type": "text", "text": "ok"}
    assert bound_tool_result_content(small) is small
    assert bound_tool_result_content(IMAGE) is IMAGE


def test_an_image_over_the_budget_leaves_each_text_at_most_the_marker() -> None:
    huge = {**IMAGE, "source": {**IMAGE["source"], "data": "A" * 200_000}}
    blocks = [{"type": "text", "text": "t" * 100_000}, huge, {"type": "text", "text": "ok"}]
    projected = project_text_block_list(blocks)
    assert projected[1] is huge and projected[2] is blocks[2]
    assert projected[0] == {"type": "text", "text": MARKER}
    assert project_text_block_list(projected) is projected


long_texts = st.tuples(adversarial_text(20), st.integers(0, 4000)).map(lambda t: t[0] * t[1])
slot_st = st.one_of(
    long_texts.map(lambda t: {"type": "text", "text": t}),
    long_texts.map(lambda t: {"text": t, "type": "text", "cache_control": None}),
    long_texts,
    st.integers(0, 3000).map(lambda n: {**IMAGE, "source": {"data": "A" * n}}),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(slot_st, max_size=6))
def test_any_list_has_every_textual_field_bounded(blocks: list[Any]) -> None:
    """Invariant: whatever the list, the result fits the budget, or else every textual field
    is at most the marker; non-textual blocks are kept; bounding twice changes nothing."""
    projected = project_text_block_list(blocks)
    assert project_text_block_list(projected) is projected
    assert len(projected) == len(blocks) or projected == text_blocks(MARKER)
    if len(encode(blocks)) <= BUDGET:
        assert projected is blocks
    if len(encode(projected)) > BUDGET:
        assert all(len(encode(t)) <= len(encode(MARKER)) for t in textual_fields(projected))
    if projected != text_blocks(MARKER):
        for before, after in zip(blocks, projected, strict=True):
            if not textual_fields([before]):
                assert after is before


def test_mixed_acp_content_is_bounded_too() -> None:
    """ACP content upstream exempts (extra keys, text next to a diff) is bounded by
    ``headwire bound --format acp``; the projection itself still follows upstream."""
    diff = {"type": "diff", "path": "/a", "oldText": None, "newText": "n"}
    text = {"type": "content", "content": {"type": "text", "text": "z" * 100_000}}
    update = {**acp_update("unused"), "content": [text, diff]}
    assert project_acp_tool_call_update(update) is update
    new, fields = bound_value(session_update(update), Format.ACP)
    content = new["params"]["update"]["content"]
    assert len(encode(content)) <= BUDGET and content[1] is diff
    assert ACP_TRUNCATION_MARKER in content[0]["content"]["text"]
    assert len(fields) == 1
    a2ui = {**update, "_meta": {"toolName": "present_ui"}}
    assert bound_value(session_update(a2ui), Format.ACP)[1] == ()


def test_too_many_text_blocks_collapse_to_one_marker_block() -> None:
    empty = text_blocks(*[""] * MAX_TEXT_BLOCKS)
    assert len(encode(empty)) <= BUDGET
    assert project_text_block_list(empty) is empty
    more = text_blocks(*[""] * (MAX_TEXT_BLOCKS + 1))
    assert project_text_block_list(more) == text_blocks(MARKER)
    crowded = text_blocks(*["x" * 100] * 1000)  # reservations alone exceed the budget
    assert project_text_block_list(crowded) == text_blocks(MARKER)


def test_many_large_text_blocks_each_keep_a_marker() -> None:
    blocks = text_blocks(*["w" * 40_000] * 600)
    projected = project_text_block_list(blocks)
    assert len(projected) == 600
    assert len(encode(projected)) == BUDGET
    assert all(MARKER in b["text"] for b in projected)


big_texts = st.tuples(adversarial_text(20), st.integers(0, 4000)).map(lambda t: t[0] * t[1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(big_texts, max_size=6))
def test_text_block_lists_always_fit(texts: list[str]) -> None:
    """Invariant: the bounded list serializes to at most 65,536 JSON bytes; bounding twice
    changes nothing; a list that fits is returned as is; blocks keep their order."""
    blocks = text_blocks(*texts)
    projected = project_text_block_list(blocks)
    assert len(encode(projected)) <= BUDGET
    assert project_text_block_list(projected) is projected
    if len(encode(blocks)) <= BUDGET:
        assert projected is blocks
    elif projected != text_blocks(MARKER):
        assert len(projected) == len(blocks)
        for before, after in zip(blocks, projected, strict=True):
            assert (
                after is before
                or MARKER in after["text"]
                or len(after["text"]) < len(before["text"])
            )


# -- bound_line: stream-json ------------------------------------------------------------------


def test_short_and_fitting_lines_are_unchanged() -> None:
    assert bound_line(line_of(tool_result("ok")), Format.STREAM_JSON).output is None
    fits = line_of(tool_result("x" * (BUDGET - 2)))
    assert len(fits) > FAST_PATH_LINE_BYTES
    assert bound_line(fits, Format.STREAM_JSON) == (None, (), None, None)


def test_an_oversized_string_result_is_bounded_and_nothing_else_changes() -> None:
    text = "HEAD-" + "x" * 100_000 + "-TAIL"
    outcome = bound_line(line_of(tool_result(text)), Format.STREAM_JSON)
    assert outcome.output == line_of(tool_result(project_tool_result_content(text)))
    assert outcome.fields == ((len(encode(text)), BUDGET),)
    content = json.loads(outcome.output)["message"]["content"][0]["content"]
    assert content.startswith("HEAD-") and content.endswith("-TAIL") and MARKER in content


def test_a_text_block_list_result_is_bounded() -> None:
    blocks = text_blocks("a" * 50_000, "b" * 50_000)
    outcome = bound_line(line_of(tool_result(blocks)), Format.STREAM_JSON)
    assert outcome.output == line_of(tool_result(project_text_block_list(blocks)))


@pytest.mark.parametrize("end", [b"", b"\n", b"\r\n", b"  \n"])
@pytest.mark.parametrize("lead", [b"", b" \t"])
def test_whitespace_and_terminator_are_kept(lead: bytes, end: bytes) -> None:
    message = tool_result("y" * 70_000)
    outcome = bound_line(lead + encode(message) + end, Format.STREAM_JSON)
    assert outcome.output is not None
    assert outcome.output == lead + encode(bound_value(message, Format.STREAM_JSON)[0]) + end


@pytest.mark.parametrize(
    "message",
    [
        {**tool_result("x" * 70_000), "type": "assistant"},
        tool_result("x" * 70_000, key="text"),
        tool_result({"nested": "x" * 70_000}),
        tool_result({"type": "image", "data": "x" * 70_000}),
        {"type": "user", "message": {"role": "user", "content": "x" * 70_000}},
        {"type": "user", "message": {"content": [{"type": "text", "text": "x" * 70_000}]}},
        ["not", "a", "message", "x" * 70_000],
        "x" * 70_000,
    ],
)
def test_other_shapes_pass_unchanged(message: Any) -> None:
    assert bound_line(line_of(message), Format.STREAM_JSON) == (None, (), None, None)


def test_every_tool_result_block_of_a_message_is_bounded() -> None:
    message = tool_result("a" * 70_000)
    blocks = message["message"]["content"]
    blocks.append({"type": "tool_result", "tool_use_id": "c2", "content": "b" * 70_000})
    blocks.append({"type": "tool_result", "tool_use_id": "c3", "content": "small"})
    new, fields = bound_value(message, Format.STREAM_JSON)
    assert len(fields) == 2
    assert [len(encode(b["content"])) for b in new["message"]["content"]] == [BUDGET, BUDGET, 7]
    assert new["message"]["content"][2] is blocks[2]


def test_lone_surrogate_escapes_are_read_and_kept_exact() -> None:
    """orjson refuses ``\\ud800``; the fallback reader keeps it, and the encoder writes it back."""
    text = "\ud800" + "x" * 70_000 + "\udfff"
    line = line_of(tool_result(text))
    assert b"\\ud800" in line
    outcome = bound_line(line, Format.STREAM_JSON)
    assert outcome.output == line_of(tool_result(project_tool_result_content(text)))
    assert outcome.output is not None and outcome.output.startswith(line[:200])


def test_numbers_are_re_encoded_like_json_stringify() -> None:
    message = {**tool_result("x" * 70_000), "n": 1.5, "big": 2**60, "huge": 2**70, "e": 1e21}
    outcome = bound_line(line_of(message), Format.STREAM_JSON)
    assert outcome.output is not None
    tail = b'"n":1.5,"big":1152921504606847000,"huge":1.1805916207174113e+21,"e":1e+21}'
    assert outcome.output.endswith(tail + b"\n")


# -- bound_line: malformed --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"type":"user"\n', "not valid JSON"),
        (b"done\n", "not valid JSON"),
        (b'{"a":"\xff"}\n', "invalid UTF-8 at byte 6"),
        (b'{"a":"\xed\xa0\x80"}\n', "invalid UTF-8 at byte 6"),
        (b"\xef\xbb\xbf{}\n", "not valid JSON"),
        (b"NaN\n", "not valid JSON"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    ],
)
def test_malformed_lines_are_named_and_left_alone(line: bytes, reason: str) -> None:
    problem = line_problem(line)
    assert problem is not None and problem.startswith(reason)
    assert bound_line(line, Format.STREAM_JSON).output is None
    assert bound_line(line, Format.STREAM_JSON).problem == problem


@pytest.mark.parametrize("line", [b"", b"\n", b"  \r\n", b"1e400\n", b"123456789012345678901234\n"])
def test_blank_lines_and_exotic_numbers_are_not_malformed(line: bytes) -> None:
    assert line_problem(line) is None


def test_a_line_that_cannot_be_bounded_goes_out_with_an_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import headwire.bound.blocks as bound

    def explode(text: str) -> str:
        raise ValueError("boom")

    monkeypatch.setattr(bound, "project_tool_result_content", explode)
    outcome = bound_line(line_of(tool_result("x" * 70_000)), Format.STREAM_JSON)
    assert outcome.output is None and outcome.problem is None
    assert outcome.error == "left unbounded (ValueError: boom)"


# -- bound_line: json and acp -----------------------------------------------------------------


def test_json_format_bounds_every_message_of_the_array() -> None:
    messages = [{"type": "system"}, tool_result("x" * 70_000), tool_result("ok")]
    outcome = bound_line(encode(messages), Format.JSON)
    assert outcome.output is not None and not outcome.output.endswith(b"\n")
    out = json.loads(outcome.output)
    assert out[0] == messages[0] and out[2] == messages[2]
    assert out[1]["message"]["content"][0]["content"] == project_tool_result_content("x" * 70_000)
    assert bound_line(encode(messages) + b"\n", Format.JSON).output == outcome.output + b"\n"
    # a stream-json line is not an array: the json format leaves it alone
    assert bound_line(line_of(tool_result("x" * 70_000)), Format.JSON).output is None


def test_acp_session_updates_use_the_acp_projection() -> None:
    update = acp_update("x" * 100_000, raw="r" * 100_000)
    outcome = bound_line(line_of(session_update(update)), Format.ACP)
    expected = session_update(project_acp_tool_call_update(update))
    assert outcome.output == line_of(expected)
    assert len(outcome.fields) == 2
    assert ACP_TRUNCATION_MARKER in expected["params"]["update"]["rawOutput"]
    # the stream-json rule does not apply to ACP lines, nor the ACP rule to stream-json lines
    assert bound_line(line_of(session_update(update)), Format.STREAM_JSON).output is None
    assert bound_line(line_of(tool_result("x" * 70_000)), Format.ACP).output is None


def shell_result(output: str, **extra: Any) -> dict[str, Any]:
    return {
        "type": "shell_result",
        "version": 1,
        "directory": "/w",
        "exitCode": 0,
        "signal": None,
        "pid": 7,
        "outcome": "completed",
        "outputFiles": [],
        "output": output,
        "text": output,
        "error": None,
        "notices": [],
        "truncated": False,
        **extra,
    }


def test_acp_shell_results_are_bounded_only_when_over_budget() -> None:
    fitting = {**acp_update("ok", raw=shell_result("ok", extra="kept")), "title": "t" * 70_000}
    assert bound_line(line_of(session_update(fitting)), Format.ACP).output is None
    large = acp_update("ok", raw=shell_result("o" * 100_000))
    outcome = bound_line(line_of(session_update(large)), Format.ACP)
    assert outcome.output == line_of(session_update(project_acp_tool_call_update(large)))
    raw = json.loads(outcome.output)["params"]["update"]["rawOutput"]
    assert len(encode(raw)) <= BUDGET and raw["truncated"] is True


def test_acp_a2ui_updates_are_exempt() -> None:
    update = {**acp_update("x" * 100_000), "_meta": {"toolName": "present_ui"}}
    assert bound_line(line_of(session_update(update)), Format.ACP).output is None


@pytest.mark.parametrize(
    "wrap",
    [
        lambda u: {"sessionId": "s", "_meta": {LOAD_REPLAY_META_KEY: {"v": 1, "updates": [u]}}},
        lambda u: {"updates": [{"sessionUpdate": "agent_message_chunk"}, u]},
        lambda u: {"events": [{"seq": 1, "data": u, "timestamp": 5}]},
    ],
)
def test_acp_replayed_updates_are_bounded(wrap: Any) -> None:
    update = {**acp_update("x" * 100_000), "_meta": {"qwen.session.recordId": "r1"}}
    frame = {"jsonrpc": "2.0", "id": 3, "result": wrap(update)}
    expected = {"jsonrpc": "2.0", "id": 3, "result": wrap(project_acp_tool_call_update(update))}
    assert bound_line(line_of(frame), Format.ACP).output == line_of(expected)


# -- the stream -------------------------------------------------------------------------------


@given(st.integers(0, 3000), st.lists(st.integers(1, 400), min_size=1, max_size=40))
def test_first_long_line_finds_the_first_long_line(seed: int, lengths: list[int]) -> None:
    scale = FAST_PATH_LINE_BYTES // 200
    data = b"".join(b"x" * (n * scale - 1 + seed % 3) + b"\n" for n in lengths)
    expected, position = len(data), 0
    for n in lengths:
        size = n * scale + seed % 3
        if size > FAST_PATH_LINE_BYTES:
            expected = position
            break
        position += size
    assert first_long_line(data, 0, len(data)) == expected


ODD_SHORT_LINES = [
    b"\n",
    b"\r\n",
    b"   \n",
    b"garbage\n",
    b'{"a":\xff}\n',
    b'{"x":"\\ud800"}\n',
    b'{"a":}\n',
    b'{"b":"\xed\xa0\x80"}\n',
    b" [1]\r\n",
    b'"str"\n',
    b"7\n",
    b'{"\xc3\xa9":1}\n',
]


def _stream_lines() -> st.SearchStrategy[bytes]:
    short = st.one_of(
        st.builds(lambda t: line_of({"type": "assistant", "text": t}), adversarial_text(30)),
        st.sampled_from(ODD_SHORT_LINES),
    )
    long = st.builds(
        lambda t, n, e: line_of(tool_result(t * n), e),
        adversarial_text(8).filter(bool),
        st.integers(1, 30_000),
        st.sampled_from([b"\n", b"\r\n"]),
    )
    long_bad = st.builds(lambda n: b'{"type":"user","x":"' + b"y" * n + b"\n", st.just(70_000))
    return st.one_of(short, short, short, long, long_bad)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_stream_lines(), max_size=12),
    st.booleans(),
    st.lists(st.integers(1, 200_000), max_size=20),
    st.booleans(),
)
def test_the_filter_writes_every_line_in_order(
    lines: list[bytes], drop_last_newline: bool, cuts: list[int], validate: bool
) -> None:
    """Invariant: any split of the input gives the output of :func:`bound_line` line by
    line; line count and order are kept; lines bound_line leaves alone are byte-identical;
    the warnings do not depend on the split either."""
    if drop_last_newline and lines and lines[-1].endswith(b"\n"):
        lines[-1] = lines[-1].rstrip(b"\r\n") or b"x"
    data = b"".join(lines)
    positions = sorted({c % (len(data) + 1) for c in cuts})
    chunks = [data[a:b] for a, b in zip([0, *positions], [*positions, len(data)], strict=True)]
    out, flt = run_filter([c for c in chunks if c], validate=validate)
    assert out == reference(lines)
    assert flt.take_warnings() == reference_warnings(lines, validate=validate)
    assert out.count(b"\n") == data.count(b"\n")
    assert flt.stats.lines == len(lines)
    out_lines = _split_lf(out)
    assert len(out_lines) == len(lines)
    for before, after in zip(lines, out_lines, strict=True):
        if bound_line(before, Format.STREAM_JSON).output is None:
            assert after == before
        else:
            assert after.endswith(b"\n") == before.endswith(b"\n")


def test_the_filter_is_the_same_whole_and_byte_at_a_time() -> None:
    lines = [
        line_of({"type": "system"}),
        b"not json\n",
        line_of(tool_result("x" * 70_000)),
        b"\n",
        line_of(tool_result(text_blocks("a" * 40_000, "b" * 40_000))),
        b'{"tail":true}',
    ]
    data = b"".join(lines)
    whole, _ = run_filter([data])
    assert whole == reference(lines)
    small = [data[i : i + 7] for i in range(0, len(data), 7)]
    assert run_filter(small)[0] == whole
    assert run_filter([data[:1], data[1:]])[0] == whole


@pytest.mark.parametrize(
    ("line", "quick", "full"),
    [
        (b'{"a":1}', None, None),
        (b'{"a":}', None, "not valid JSON"),  # looks like an object: not parsed unless asked
        (b"[1,2", "not valid JSON", "not valid JSON"),
        (b'"just a string"\n', None, None),
        (b"42", None, None),
        (b"  {}  \r\n", None, None),
        (b'{"a":"\xe9"}', "invalid UTF-8", "invalid UTF-8"),
        (b'{"a":"\xed\xa0\x80"}', "invalid UTF-8", "invalid UTF-8"),
        (b'{"a":"caf\xc3\xa9 \xf0\x9f\x98\x80"}', None, None),
        (b"plain text", "not valid JSON", "not valid JSON"),
    ],
)
def test_quick_and_full_checks(line: bytes, quick: str | None, full: str | None) -> None:
    for check, expected in ((quick_line_problem, quick), (line_problem, full)):
        problem = check(line)
        assert (problem is None) == (expected is None)
        assert problem is None or expected is None or problem.startswith(expected)


def test_only_validate_reports_broken_objects() -> None:
    data = b'{"ok":1}\n{"a":}\n'
    assert run_filter([data])[1].take_warnings() == []
    warnings = run_filter([data], validate=True)[1].take_warnings()
    assert [n for n, _ in warnings] == [2]


def test_the_filter_warns_with_line_numbers_and_counts() -> None:
    lines = [
        b"{}\n",
        b"oops\n",
        b"\n",
        line_of(tool_result("x" * 80_000)),
        b'{"a":"\xff"}\n',
        b'{"type":"user","x":"' + b"y" * 70_000 + b"\n",
        b"{}",
    ]
    _, flt = run_filter([b"".join(lines)])
    warnings = flt.take_warnings()
    assert [n for n, _ in warnings] == [2, 5, 6]
    assert warnings[1][1] == "invalid UTF-8 at byte 6"
    assert flt.take_warnings() == []
    stats = flt.stats
    assert (stats.lines, stats.bounded_lines, stats.bounded_fields) == (7, 1, 1)
    assert (stats.field_bytes_before, stats.field_bytes_after) == (80_002, BUDGET)
    assert stats.malformed_lines == 3
    assert stats.summary() == (
        "7 lines, 1 bounded (1 field: 80002 -> 65536 JSON bytes), 3 malformed"
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_stream_lines(), max_size=8))
def test_bounding_is_idempotent(lines: list[bytes]) -> None:
    once, _ = run_filter([b"".join(lines)])
    twice, flt = run_filter([once])
    assert twice == once
    assert flt.stats.bounded_lines == 0


def test_an_empty_stream_gives_nothing() -> None:
    out, flt = run_filter([])
    assert out == b"" and flt.stats.lines == 0
