"""Fuzz ``headwire bound`` (:class:`headwire.bound.BoundFilter`, pure) on arbitrary streams.

Streams are lines of the corpus (the unit tests' and upstream's stdout, cut to a few KB),
their mutations, generated headless and ACP messages whose tool results reach far over the
budget, and arbitrary bytes, in any of the three formats, fed whole and in random pieces.
Invariants (the module's docstring): no exception; as many output lines as input lines, same
order, same terminators; a line left alone is byte-identical, only lines over the fast path
change; every bounded field fits 65,536 JSON bytes; any split gives the same bytes and the same
warnings; bounding the output again changes nothing.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from headwire.bound import (
    FAST_PATH_LINE_BYTES,
    LOAD_REPLAY_META_KEY,
    BoundFilter,
    Format,
    bound_line,
    bound_value,
    project_text_block_list,
)
from headwire.wire import json_size
from tests.fuzz.common import (
    Chooser,
    big_text,
    dumps,
    from_chooser,
    fuzz_line,
    fuzz_settings,
    interesting_value,
    random_text,
    seeds,
)
from tests.fuzz.drivers import parse_json, production_recursion_limit

BUDGET = 65_536


def tool_content(c: Chooser) -> Any:
    """A ``tool_result.content``: a string or text blocks, often over budget, or odd."""
    kind = c.integer(0, 4)
    if kind <= 1:
        return big_text(c)
    if kind == 2:
        return [
            {"type": "text", "text": big_text(c) if c.integer(0, 1) else random_text(c)}
            for _ in range(c.integer(0, 4))
        ]
    if kind == 3:
        return [
            c.pick(
                (
                    {"type": "text", "text": big_text(c)},
                    {"type": "image", "data": "x"},
                    {"text": "t", "type": "text"},
                    interesting_value(c),
                )
            )
            for _ in range(c.integer(1, 3))
        ]
    return interesting_value(c)


def user_message(c: Chooser) -> dict[str, Any]:
    """A headless ``user`` message with tool results."""
    blocks = [
        {
            "type": "tool_result",
            "tool_use_id": "call_1",
            "is_error": False,
            "content": tool_content(c),
        }
        for _ in range(c.integer(1, 2))
    ]
    return {
        "type": "user",
        "uuid": "u",
        "session_id": "s",
        "parent_tool_use_id": None,
        "message": {"role": "user", "content": blocks},
    }


def acp_update(c: Chooser) -> dict[str, Any]:
    """A ``tool_call_update`` with big text."""
    text = big_text(c)
    return {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": text}}],
        "rawOutput": text if c.integer(0, 1) else interesting_value(c),
        "_meta": {"toolName": c.pick(("run_shell_command", "present_ui", "x"))},
    }


def acp_frame(c: Chooser) -> dict[str, Any]:
    """A ``session/update`` notification, or a ``session/load`` response replaying updates."""
    kind = c.integer(0, 3)
    if kind <= 1:
        return {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": "s", "update": acp_update(c)},
        }
    updates = [acp_update(c) for _ in range(c.integer(0, 2))]
    result: dict[str, Any] = c.pick(
        (
            {"_meta": {LOAD_REPLAY_META_KEY: {"updates": updates}}},
            {"updates": updates},
            {"events": [{"type": "u", "data": u} for u in updates]},
        )
    )
    return {"jsonrpc": "2.0", "id": 1, "result": result}


def message(c: Chooser) -> Any:
    """A line of any format (the filter must cope with all of them in any mode)."""
    kind = c.integer(0, 3)
    if kind == 0:
        return user_message(c)
    if kind == 1:
        return [user_message(c) for _ in range(c.integer(1, 2))]
    return acp_frame(c)


def stream(c: Chooser) -> tuple[bytes, list[int], Format, bool]:
    """A stream (lines, with varied terminators), cut points, a format and ``validate``."""
    pool = seeds("bound")
    pieces: list[bytes] = []
    for _ in range(c.integer(1, 6)):
        line = fuzz_line(c, pool, message) if c.integer(0, 2) else dumps(c, message(c))
        if c.integer(0, 5) == 0:
            line = c.pick((b"  ", b"\t")) + line + c.pick((b" ", b"\r"))
        pieces.append(line)
    data = b"\n".join(pieces) + c.pick((b"\n", b"", b"\r\n", b"\n\n"))
    cuts = sorted({c.integer(0, len(data)) for _ in range(c.integer(0, 6))})
    return data, cuts, c.pick(list(Format)), bool(c.integer(0, 1))


def run_filter(
    data: bytes, cuts: list[int], fmt: Format, validate: bool
) -> tuple[bytes, BoundFilter]:
    """Feed ``data`` split at ``cuts``; return the output bytes and the filter."""
    f = BoundFilter(fmt, validate=validate)
    out: list[bytes] = []
    start = 0
    for cut in [*cuts, len(data)]:
        out += [bytes(piece) for piece in f.feed(data[start:cut])]
        start = cut
    out += [bytes(piece) for piece in f.close()]
    return b"".join(out), f


def lines_of(data: bytes) -> list[bytes]:
    """Lines with their terminators (the last one possibly without)."""
    return data.splitlines(keepends=True) if b"\r" not in data else _split_nl(data)


def _split_nl(data: bytes) -> list[bytes]:
    parts = data.split(b"\n")
    out = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        out.append(parts[-1])
    return out


def _texts(value: Any) -> list[str]:
    """The textual fields of a bounded headless or ACP field (see ``headwire.bound.blocks``)."""
    if isinstance(value, str):
        return [value]
    texts = []
    for b in value if isinstance(value, list) else [value]:
        inner = b.get("content") if isinstance(b, dict) and b.get("type") == "content" else b
        if isinstance(b, str):
            texts.append(b)
        elif isinstance(inner, dict) and inner.get("type") == "text" and "text" in inner:
            texts.extend(t for t in [inner["text"]] if isinstance(t, str))
    return texts


def _within_budget(field: Any) -> bool:
    """Within 65,536 JSON bytes, or else every textual field at most a marker (60 bytes)."""
    return json_size(field) <= BUDGET or all(json_size(t) <= 60 for t in _texts(field))


@fuzz_settings(150)
@given(from_chooser(stream))
def test_bound_filter_invariants(case: tuple[bytes, list[int], Format, bool]) -> None:
    """Line-preserving, split-invariant, bounded and idempotent on any stream."""
    data, cuts, fmt, validate = case
    with production_recursion_limit():
        whole, f_whole = run_filter(data, [], fmt, validate)
        split, f_split = run_filter(data, cuts, fmt, validate)
        again, _ = run_filter(whole, [], fmt, validate)
    assert split == whole, "the output depends on how the input was split"
    assert f_split.warnings == f_whole.warnings and f_split.stats == f_whole.stats
    assert again == whole, "bounding is not idempotent"
    ins, outs = _split_nl(data), _split_nl(whole)
    assert len(ins) == len(outs) == f_whole.stats.lines
    for before, after in zip(ins, outs, strict=True):
        assert before.endswith(b"\n") == after.endswith(b"\n")
        if after == before:
            continue
        assert len(before) > FAST_PATH_LINE_BYTES, "a short line was changed"
        with production_recursion_limit():
            _, changes = bound_value(parse_json(before), fmt)
        assert changes, "a line changed with no field bounded"
        for _, field in changes:
            assert _within_budget(field), "a bounded field is over budget"
        assert parse_json(after) is not None


@fuzz_settings(150)
@given(from_chooser(lambda c: fuzz_line(c, seeds("bound"), message)), st.sampled_from(list(Format)))
def test_bound_line_never_raises(line: bytes, fmt: Format) -> None:
    """``bound_line`` on one line: an outcome, never an exception."""
    with production_recursion_limit():
        outcome = bound_line(line, fmt)
    assert outcome.output is None or isinstance(outcome.output, bytes)


@fuzz_settings(100)
@given(
    from_chooser(
        lambda c: [b for b in (tool_content(c) for _ in range(2)) if isinstance(b, list)] or [[]]
    )
)
def test_text_block_lists_fit_or_are_left_alone(lists: list[list[Any]]) -> None:
    """The text-block rule: a list comes back within budget (or, when what cannot be cut
    leaves no room, with every text at most the marker); a list without text as is."""
    for blocks in lists:
        out = project_text_block_list(blocks)
        if not _texts(blocks):
            assert out is blocks
        assert _within_budget(out)
        assert project_text_block_list(out) is out


# -- regressions ------------------------------------------------------------------------------


def test_a_deeply_nested_line_with_a_large_result_goes_out_unchanged() -> None:
    """Finding: a line orjson reads (up to 1,024 levels) but cannot write (over 254), with a
    result to bound, raised out of ``bound_line`` and ended ``headwire bound``."""
    deep = b"[" * 300 + b"]" * 300
    line = (
        b'{"type":"user","deep":' + deep + b',"message":{"content":[{"type":"tool_result",'
        b'"content":"' + b"x" * 70_000 + b'"}]}}\n'
    )
    outcome = bound_line(line, Format.STREAM_JSON)
    assert outcome.output is None and outcome.error is not None
    out, f = run_filter(line, [], Format.STREAM_JSON, False)
    assert out == line and f.warnings and "left unbounded" in f.warnings[0][1]


def test_warnings_do_not_depend_on_how_the_input_was_read() -> None:
    """Finding: a short malformed line completed across two reads was checked with its
    terminator, so the same stream gave different warnings in different chunkings."""
    data = b'{"a":"unterminated\n' + b'{"type":"user","pad":"' + b"y" * 70_000 + b'"}\n'
    _, whole = run_filter(data, [], Format.STREAM_JSON, False)
    _, split = run_filter(data, [5], Format.STREAM_JSON, False)
    assert whole.warnings == split.warnings and whole.warnings


def test_deep_lines_are_judged_the_same_whatever_the_stack() -> None:
    """Finding: whether a long line nested a few hundred levels deep was bounded or left with
    an error depended on which recursion ran out first (one frame more when the line was
    completed across reads); a line too deep to write again is now left unbounded up front."""
    for depth in (253, 254, 255, 400, 600, 1000):
        line = (
            b'{"type":"user","deep":' + b"[" * depth + b"]" * depth + b',"message":{"content":'
            b'[{"type":"tool_result","content":"' + b"x" * 70_000 + b'"}]}}\n'
        )
        with production_recursion_limit():
            outs = {
                run_filter(b"{}\n" + line, cuts, Format.STREAM_JSON, False)[0]
                for cuts in ([], [1], [3], [4, 5000])
            }
            warnings = {
                tuple(run_filter(b"{}\n" + line, cuts, Format.STREAM_JSON, False)[1].warnings)
                for cuts in ([], [1], [3], [4, 5000])
            }
        assert len(outs) == 1 and len(warnings) == 1, depth
