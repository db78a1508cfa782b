"""The progress feed: events in, notes out (no terminal, no clock)."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from headwire import events as ev
from headwire.progress import (
    ProgressFeed,
    allow_hint,
    clip,
    duration,
    human_bytes,
    printable,
    short_args,
)
from tests.strategies import adversarial_text

UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


@given(adversarial_text() | st.text())
def test_printable_leaves_no_control_character_but_newline_and_tab(text: str) -> None:
    assert not UNSAFE.search(printable(text))
    one = printable(text, one_line=True)
    assert not UNSAFE.search(one) and "\n" not in one and "\t" not in one


def test_printable_shows_escapes_instead_of_running_them() -> None:
    assert printable("a\x1b[31mred\x07\x9b2J\nb\tc") == "a^[[31mred^G\\x9b2J\nb\tc"


@given(adversarial_text() | st.text(), st.integers(min_value=1, max_value=200))
def test_clip_is_one_printable_line_of_at_most_width(text: str, width: int) -> None:
    line = clip(text, width)
    assert len(line) <= width
    assert "\n" not in line and not UNSAFE.search(line)


ARG_VALUES = st.one_of(
    adversarial_text(40), st.integers(), st.none(), st.lists(st.integers(), max_size=3)
)


@given(
    st.text(min_size=1, max_size=30),
    st.dictionaries(st.sampled_from(["command", "path", "content", "x", "\x1b"]), ARG_VALUES),
)
def test_short_args_is_one_printable_line_of_at_most_width(name: str, args: dict[str, Any]) -> None:
    line = short_args(name, args)
    assert len(line) <= 72 and "\n" not in line and not UNSAFE.search(line)


def test_short_args_shows_what_a_person_reads() -> None:
    assert short_args("run_shell_command", {"command": "ls -la\n&& pwd"}) == "ls -la && pwd"
    big = {"file_path": "/w/a.txt", "content": "é" * 5_000_000}
    assert short_args("write_file", big) == "/w/a.txt (10,000,000 bytes)"
    assert short_args("grep_search", {"pattern": "TODO", "path": "src"}) == "TODO src"
    assert short_args("mcp__x__y", {"n": 3, "q": "x" * 100, "d": {"a": 1}}) == (
        "n=3 q='" + "x" * 40 + "…' d={…}"
    )


def test_sizes_and_durations() -> None:
    assert human_bytes(1) == "1 byte" and human_bytes(499_999) == "499,999 bytes"
    assert duration(0.04) == "0.0s" and duration(12.34) == "12.3s" and duration(125) == "2m05s"


def test_refusal_hints_only_in_the_repl() -> None:
    assert allow_hint("default") == ""
    assert "/approval-mode default" in allow_hint("plan")


# -- the feed ---------------------------------------------------------------------------------

INFO = ev.SessionInfo(
    session_id="s",
    cwd="/w",
    tools=(),
    mcp_servers=(),
    model="m",
    permission_mode="default",
    version="0",
    agents=(),
)


def _finished(**kw: Any) -> ev.TurnFinished:
    return ev.TurnFinished(
        text="",
        error=None,
        subtype="success",
        num_turns=1,
        duration_ms=1500,
        stats=ev.TurnStats(model="m", usage=ev.Usage(10, 2, 0, 12)),
        **kw,
    )


def test_a_turn_as_notes() -> None:
    feed = ProgressFeed()
    notes: list[Any] = []

    def feed_at(event: ev.Event, now: float) -> None:
        notes.extend(feed.feed(event, now))

    feed_at(ev.TurnStarted(info=INFO), 0)
    feed_at(ev.ModelCallStarted(message_id="m1", model="m"), 0)
    assert feed.streaming_since == 0
    feed_at(ev.TextDelta(text="Looking\x1b[2J."), 0.1)
    assert feed.text_tail == "Looking^[[2J."  # the live region shows it, never runs it
    call = {"role": "assistant", "tool_calls": [{"id": "c1"}]}
    feed_at(ev.ModelCallFinished(usage=ev.Usage(), message=call), 0.2)
    assert feed.streaming_since is None
    args = {"command": "python3 big.py"}
    feed_at(ev.ToolCallPending(call_id="c1", name="run_shell_command", args=args), 1.0)
    feed_at(ev.ToolStarted(call_id="c1", name="run_shell_command", args=args), 1.0)
    assert list(feed.running) == ["c1"] and feed.running["c1"].since == 1.0
    response = ev.ToolResponse(
        call_id="c1", name="run_shell_command", args=args, output="x", display="y" * 499_999
    )
    feed_at(ev.ToolFinished(response=response, model_text="x", artifact="/a/b.output"), 3.5)
    assert feed.running == {}
    wargs = {"file_path": "/w/n.txt", "content": "hi"}
    feed_at(ev.ToolCallPending(call_id="c2", name="write_file", args=wargs), 4)
    denied = ev.ToolResponse(
        call_id="c2",
        name="write_file",
        args=wargs,
        error="needs approval",
        error_type="execution_denied",
    )
    feed_at(ev.ToolFinished(response=denied, model_text="needs approval"), 4)
    feed_at(ev.ModelCallStarted(message_id="m2", model="m"), 4)
    feed_at(ev.TextDelta(text="done"), 4)
    feed_at(ev.ModelCallFinished(usage=ev.Usage(), message={"role": "assistant"}), 4)
    feed_at(_finished(), 5)
    assert [(n.kind, n.text, n.hint, n.final) for n in notes if n.kind != "delta"] == [
        ("text", "Looking^[[2J.", "", False),
        ("call", "run_shell_command  python3 big.py", "", False),
        (
            "result",
            "499,999 bytes in 2.5s, bounded to 65,536 JSON bytes on the wire",
            "full output: /a/b.output",
            False,
        ),
        ("call", "write_file  /w/n.txt (2 bytes)", "", False),
        ("denied", "denied: needs approval", "", False),
        ("text", "done", "", True),
        ("summary", "2 tool calls · 1.5s · 10 tokens in, 2 out", "", False),
    ]


def test_failures_cancellations_and_subagents_nest() -> None:
    feed = ProgressFeed()
    feed.feed(ev.TurnStarted(info=INFO), 0)
    feed.feed(ev.ToolCallPending(call_id="a1", name="agent", args={"description": "dig"}), 0)
    feed.feed(ev.ToolStarted(call_id="a1", name="agent", args={}), 0)
    started = ev.SubagentStarted(
        task_id="t", call_id="a1", description="dig", subagent_type="general", prompt="p"
    )
    assert [(n.kind, n.depth) for n in feed.feed(started, 0)] == [("subagent", 1)]
    inner = ev.ToolCallPending(call_id="c9", name="ls", args={"path": "/w"}, parent="a1")
    assert [(n.kind, n.text, n.depth) for n in feed.feed(inner, 1)] == [("call", "ls  /w", 1)]
    failed = ev.ToolResponse(call_id="c9", name="ls", args={}, error="boom\nmore")
    notes = feed.feed(ev.ToolFinished(response=failed, model_text="boom", parent="a1"), 1.25)
    assert [(n.kind, n.text, n.depth) for n in notes] == [
        ("failed", "failed in 0.2s: boom more", 1)
    ]
    assert [n.text for n in feed.feed(ev.ToolAbandoned(call_id="a1", message="x"), 2)] == [
        "cancelled"
    ]
    assert feed.running == {}
    empty = ev.ToolResponse(call_id="c3", name="x", args={})
    notes = feed.feed(ev.ToolFinished(response=empty, model_text=""), 2)
    assert notes[0].text == "done in 0.0s, no output"


@given(st.lists(st.text(max_size=3000), max_size=20))
def test_the_live_tail_stays_bounded(parts: list[str]) -> None:
    feed = ProgressFeed()
    feed.feed(ev.ModelCallStarted(message_id="m", model="m"), 0)
    for part in parts:
        feed.feed(ev.TextDelta(text=part), 0)
    assert len(feed.text_tail) <= 4000
    assert feed.text_tail == printable("".join(parts))[-4000:]


def test_compactions_are_noted() -> None:
    feed = ProgressFeed()
    started = feed.feed(ev.CompactionStarted(trigger="auto", pre_tokens=28_513), 0.0)
    finished = feed.feed(
        ev.CompactionFinished(
            trigger="auto", pre_tokens=28_513, post_tokens=7_573, duration_ms=1_500
        ),
        1.5,
    )
    assert [n.text for n in started] == ["compacting the conversation (~28,513 tokens)"]
    assert finished[0].text.startswith("compacted: ~28,513 -> ~7,573 tokens in ")
