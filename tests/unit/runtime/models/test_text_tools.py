"""Tool calls written as text: every format, round trips, and the streaming hold-back."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.models.text_tools import (
    HOLD_BACK_CHARS,
    TextCall,
    extract_text_tool_calls,
    marker_start,
    safe_prefix_length,
)

SCHEMAS = {
    "read_file": {"type": "object", "properties": {"path": {"type": "string"}}},
    "run_shell_command": {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}},
    },
}
NAMES = sorted(SCHEMAS)
MARKERS = [
    "<tool_call>",
    "<function=read_file>",
    "<function_calls>",
    '<invoke name="read_file">',
    "[TOOL_CALLS]",
    "<|python_tag|>",
    '```json\n{"name"',
    '{"name": ',
    '[{"function": ',
]


def render(fmt: str, name: str, args: dict[str, str]) -> str:
    """A call as a model of each family writes it."""
    body = json.dumps({"name": name, "arguments": args})
    if fmt == "hermes":
        return f"<tool_call>\n{body}\n</tool_call>"
    if fmt == "qwen-xml":
        params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args.items())
        return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"
    if fmt == "claude-xml":
        params = "".join(f'<parameter name="{k}">{v}</parameter>' for k, v in args.items())
        return f'<function_calls><invoke name="{name}">{params}</invoke></function_calls>'
    if fmt == "mistral":
        return f"[TOOL_CALLS][{body}]"
    if fmt == "llama":
        return "<|python_tag|>" + json.dumps({"name": name, "parameters": args})
    if fmt == "fence":
        return f"```json\n{body}\n```"
    return body


FORMATS = ["hermes", "qwen-xml", "claude-xml", "mistral", "llama", "fence", "bare"]
plain = st.text(alphabet=st.characters(blacklist_characters="<[{`"), max_size=60)
value = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ./-_0123", min_size=1, max_size=20).filter(
    lambda v: v.strip() == v
)


@given(plain)
def test_text_without_a_call_comes_back_unchanged(text: str) -> None:
    assert extract_text_tool_calls(text, SCHEMAS) == (text, [])


@given(
    st.sampled_from(FORMATS),
    st.sampled_from(NAMES),
    st.dictionaries(st.sampled_from(["path", "command"]), value, max_size=2),
    plain,
    plain,
)
def test_every_format_round_trips(
    fmt: str, name: str, args: dict[str, str], before: str, after: str
) -> None:
    text = f"{before}\n{render(fmt, name, args)}\n{after}"
    kept, calls = extract_text_tool_calls(text, SCHEMAS)
    assert calls == [TextCall(name, args)]
    assert kept == (before + "\n\n" + after).strip()


@given(st.sampled_from(FORMATS), st.dictionaries(st.just("path"), value, max_size=1), plain)
def test_a_tool_nobody_offered_is_left_as_text(fmt: str, args: dict[str, str], before: str) -> None:
    text = before + render(fmt, "delete_everything", args)
    assert extract_text_tool_calls(text, SCHEMAS) == (text, [])


def test_xml_values_follow_the_schema_types() -> None:
    text = render("qwen-xml", "run_shell_command", {"command": "123", "timeout": "300"})
    _, calls = extract_text_tool_calls(text, SCHEMAS)
    assert calls == [TextCall("run_shell_command", {"command": "123", "timeout": 300})]


def test_several_calls_and_unclosed_last_tag() -> None:
    text = (
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
        '<tool_call>{"name": "read_file", "arguments": "{\\"path\\": \\"b\\"}"}'
    )
    kept, calls = extract_text_tool_calls(text, NAMES)
    assert kept == "" and [c.args for c in calls] == [{"path": "a"}, {"path": "b"}]


def test_a_list_of_calls_and_the_openai_shape() -> None:
    text = json.dumps(
        [
            {"type": "function", "function": {"name": "read_file", "arguments": {"path": "x"}}},
            {"name": "run_shell_command", "parameters": {"command": "ls"}},
        ]
    )
    _, calls = extract_text_tool_calls(text, NAMES)
    assert [c.name for c in calls] == ["read_file", "run_shell_command"]


def test_broken_json_is_not_a_call() -> None:
    text = '<tool_call>{"name": "read_file", "arguments": {"path": </tool_call>'
    assert extract_text_tool_calls(text, NAMES) == (text, [])


@given(st.text(alphabet='ab <[{`"\n:nme', max_size=80), st.sampled_from(MARKERS))
def test_no_marker_begins_in_what_was_already_shown(text: str, marker: str) -> None:
    """The streaming invariant of ``safe_prefix_length``: whatever arrives next, a marker it
    completes starts at or after the part of ``text`` already shown."""
    if marker_start(text) is not None:
        return
    shown = safe_prefix_length(text)
    assert 0 <= shown <= len(text)
    for cut in range(len(marker) + 1):  # the marker may have begun anywhere in the tail
        if not text.endswith(marker[:cut]):
            continue
        start = marker_start(text + marker[cut:])
        assert start is None or start >= shown


@given(st.text(max_size=200))
def test_the_held_tail_is_short(text: str) -> None:
    if marker_start(text) is not None:
        return
    rest = text[safe_prefix_length(text) :]
    assert len("".join(rest.split())) <= HOLD_BACK_CHARS


def test_hostile_text_stays_linear() -> None:
    """Thousands of unclosed markers in a megabyte: bounded work, the text kept as is."""
    import time

    text = ("<tool_call>" + "x" * 40 + '{"name": ') * 20_000 + "tail"
    started = time.monotonic()
    kept, found = extract_text_tool_calls(text, SCHEMAS)
    assert time.monotonic() - started < 3
    assert (kept, found) == (text, [])
