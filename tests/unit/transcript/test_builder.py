"""Records to a transcript (``transcript/builder.py``)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.projection import json_string_json_bytes, project_tool_result_content
from headwire.transcript.builder import build_transcript
from headwire.transcript.excerpt import Excerpt
from headwire.transcript.long_lines import parse_long_line
from headwire.transcript.model import ToolCall
from headwire.wire import encode
from tests.strategies import adversarial_text, json_values


def user(text: str, parent: str | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"type": "user", "message": {"role": "user", "content": text}}
    if parent:
        record["parent_tool_use_id"] = parent
    return record


def assistant(
    text: str | None, *calls: tuple[str, str, dict[str, Any]], parent: str = ""
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": encode(a).decode()}}
            for i, n, a in calls
        ]
    record = {
        "type": "assistant",
        "message": message,
        "usage": {"input_tokens": 5, "output_tokens": 2},
    }
    if parent:
        record["parent_tool_use_id"] = parent
    return record


def result(
    call_id: str,
    display: str,
    *,
    artifact: str | None = None,
    parent: str = "",
    error: str | None = None,
) -> dict[str, Any]:
    record: dict[str, Any] = {
        "type": "tool_result",
        "message": {"role": "tool", "tool_call_id": call_id, "content": display[:100]},
        "call_id": call_id,
        "is_error": error is not None,
        "error": error,
        "display": display,
        "artifact": artifact,
    }
    if parent:
        record["parent_tool_use_id"] = parent
    return record


def test_subagent_events_nest_under_their_call_and_usage_adds_up_per_turn() -> None:
    records = [
        user("delegate"),
        assistant(None, ("c1", "agent", {"prompt": "look"})),
        user("look", parent="c1"),
        assistant(None, ("c2", "run_shell_command", {"command": "ls"}), parent="c1"),
        result("c2", "a\nb", parent="c1"),
        assistant("found a and b", parent="c1"),
        result("c1", "found a and b"),
        assistant("done"),
        {"type": "result", "is_error": False, "num_turns": 2},
        user("again"),
    ]
    t = build_transcript("s", records)
    assert [turn.prompt.head for turn in t.turns] == ["delegate", "again"]
    first = t.turns[0]
    call = first.entries[0]
    assert isinstance(call, ToolCall) and call.name == "agent"
    assert [type(c).__name__ for c in call.children] == ["Text", "ToolCall", "Text"]
    inner = call.children[1]
    assert isinstance(inner, ToolCall) and inner.result is not None
    assert inner.result.output is not None and inner.result.output.head == "a\nb"
    assert call.result is not None and call.result.wire is not None
    assert first.usage.model_calls == 4 and first.usage.input_tokens == 20
    assert first.outcome is not None and not first.outcome.is_error
    assert t.turns[1].outcome is None  # stopped: no result recorded
    assert [c.call_id for c in t.calls()] == ["c1", "c2"]


def test_a_bounded_result_carries_both_json_sizes_and_the_exact_wire_view() -> None:
    display = "x" * 300_000 + "é\n" * 10
    t = build_transcript("s", [user("go"), assistant(None, ("c", "run", {})), result("c", display)])
    call = t.turns[0].entries[0]
    assert isinstance(call, ToolCall) and call.result is not None
    r = call.result
    assert r.bounded and r.display_json_bytes == json_string_json_bytes(display)
    assert r.wire_json_bytes == 65_536
    assert r.wire is not None and r.wire.head == project_tool_result_content(display)
    assert r.output is not None and r.output_source == "recording" and not r.output.whole


def test_a_long_line_gives_the_same_wire_view_as_the_parsed_line() -> None:
    display = ('line of output <b> & \\ "q"\n' * 40_000)[:-1]
    records = [user("go"), assistant(None, ("c", "run", {})), result("c", display)]
    whole = build_transcript("s", records)
    line = encode(records[2])
    lazy_record = parse_long_line(line, 0, len(line))
    assert lazy_record is not None
    lazy = build_transcript("s", [*records[:2], lazy_record])
    a, b = whole.turns[0].entries[0], lazy.turns[0].entries[0]
    assert isinstance(a, ToolCall) and isinstance(b, ToolCall)
    assert a.result is not None and b.result is not None
    assert a.result.wire == b.result.wire
    assert (a.result.display_json_bytes, a.result.wire_json_bytes, a.result.bounded) == (
        b.result.display_json_bytes,
        b.result.wire_json_bytes,
        b.result.bounded,
    )


def test_the_artifact_is_read_through_the_reader_and_a_missing_one_is_flagged() -> None:
    seen: list[tuple[str, int]] = []

    def read(path: str, budget: int) -> Excerpt | None:
        seen.append((path, budget))
        return Excerpt("HEAD", "TAIL", 1_000_000, 999_992) if path == "/a" else None

    records = [
        user("go"),
        assistant(None, ("c1", "run", {}), ("c2", "run", {})),
        result("c1", "shown", artifact="/a"),
        result("c2", "shown too", artifact="/gone"),
    ]
    t = build_transcript("s", records, read, budget=4096)
    first, second = t.turns[0].entries
    assert isinstance(first, ToolCall) and isinstance(second, ToolCall)
    assert first.result is not None and first.result.output_source == "artifact"
    assert first.result.output is not None and first.result.output.total_bytes == 1_000_000
    assert second.result is not None and second.result.artifact_missing
    assert second.result.output_source == "recording"
    assert seen == [("/a", 4096), ("/gone", 4096)]


def test_a_result_without_its_call_and_records_before_any_prompt_still_show() -> None:
    t = build_transcript("s", [result("zz", "orphan"), {"type": "mystery"}])
    assert len(t.turns) == 1 and t.unknown_records == 1
    call = t.turns[0].entries[0]
    assert isinstance(call, ToolCall) and call.call_id == "zz"


record_values = st.dictionaries(
    st.sampled_from(
        [
            "type",
            "message",
            "usage",
            "call_id",
            "display",
            "artifact",
            "parent_tool_use_id",
            "is_error",
            "error",
            "args",
            "name",
            "timestamp",
            "cwd",
        ]
    ),
    st.one_of(
        json_values(),
        st.sampled_from(["user", "assistant", "tool_result", "result", "c1"]),
        st.fixed_dictionaries(
            {"role": st.sampled_from(["user", "assistant", "tool"]), "content": adversarial_text()},
            optional={"tool_calls": st.lists(json_values(), max_size=3)},
        ),
    ),
)


@settings(max_examples=60, deadline=None)
@given(st.lists(record_values, max_size=12), st.integers(0, 300))
def test_any_records_build_a_transcript_within_the_budget(
    records: list[dict[str, Any]], budget: int
) -> None:
    t = build_transcript("s", records, budget=budget)
    from headwire.transcript.budget import excerpts

    for e in excerpts(t):
        assert e.shown_bytes <= budget or (e.whole and e.total_bytes <= budget)
