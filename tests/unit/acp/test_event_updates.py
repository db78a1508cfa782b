"""EventUpdates: agent events -> ``session/update`` payloads (subagent ``_meta``, closing calls,
the stop gate, prompt echo) and the replay's reading of hostile records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from headwire import events as ev
from headwire.acp.event_updates import CANCELLED_TEXT, EventUpdates, subagent_meta
from headwire.acp.replay import Replayer, _deltas
from headwire.runtime.tools.registry import builtin_tools
from headwire.wire import encode

TOOLS = {t.name: t for t in builtin_tools()}
BUDGET = 65_536


def _feed(updates: EventUpdates, *events: ev.Event) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for event in events:
        out += updates.updates(event)
    return out


def _subagent(call_id: str = "a1", kind: str = "general-purpose") -> list[ev.Event]:
    return [
        ev.ToolCallPending(call_id=call_id, name="agent", args={"prompt": "p"}),
        ev.ToolStarted(call_id=call_id, name="agent", args={"prompt": "p"}),
        ev.SubagentStarted(
            task_id="t", call_id=call_id, description="d", subagent_type=kind, prompt="p"
        ),
        ev.UserPrompt(text="p", message={"role": "user", "content": "p"}, parent=call_id),
    ]


def test_subagent_frames_carry_upstreams_meta(tmp_path: Path) -> None:
    updates = EventUpdates(TOOLS, tmp_path)
    inner = ev.ToolResponse(
        call_id="i1", name="mcp__srv__look", args={}, output="o" * 200_000, display="d" * 200_000
    )
    out = _feed(
        updates,
        *_subagent(kind="reviewer"),
        ev.ThinkingDelta(text="hm", parent="a1"),
        ev.TextDelta(text="hi", parent="a1"),
        ev.ToolCallPending(call_id="i1", name="mcp__srv__look", args={}, parent="a1"),
        ev.ToolStarted(call_id="i1", name="mcp__srv__look", args={}, parent="a1"),
        ev.ToolFinished(response=inner, model_text="o", parent="a1"),
    )
    kinds = [(u["sessionUpdate"], u.get("status")) for u in out]
    assert kinds == [
        ("tool_call", "pending"),
        ("tool_call_update", "in_progress"),
        ("agent_thought_chunk", None),
        ("agent_message_chunk", None),
        ("tool_call", "pending"),
        ("tool_call_update", "in_progress"),
        ("tool_call_update", "completed"),
    ]
    assert out[0]["_meta"] == {"toolName": "agent", "provenance": "builtin"}
    link = {"parentToolCallId": "a1", "subagentType": "reviewer"}
    assert out[2]["_meta"] == out[3]["_meta"] == link
    for frame in out[4:]:  # upstream's keys, in upstream's order; serverId kept (A2UI rule)
        assert list(frame["_meta"].items()) == [
            ("toolName", "mcp__srv__look"),
            ("provenance", "subagent"),
            ("serverId", "srv"),
            ("parentToolCallId", "a1"),
            ("subagentType", "reviewer"),
        ]
    done = out[-1]  # bounded like every other result
    assert len(encode(done["content"])) <= BUDGET and len(encode(done["rawOutput"])) <= BUDGET


def test_subagent_meta_without_a_known_type() -> None:
    base = {"toolName": "read_file", "provenance": "builtin"}
    assert subagent_meta(base, "a9", None) == {
        "toolName": "read_file",
        "provenance": "subagent",
        "parentToolCallId": "a9",
    }


def test_a_cancelled_subagent_closes_its_calls_then_the_agent_call(tmp_path: Path) -> None:
    updates = EventUpdates(TOOLS, tmp_path)
    _feed(
        updates,
        ev.ToolCallPending(call_id="c0", name="read_file", args={}),
        ev.ToolFinished(
            response=ev.ToolResponse(call_id="c0", name="read_file", args={}, output="x"),
            model_text="x",
        ),
        *_subagent(),
        ev.ToolCallPending(call_id="i1", name="run_shell_command", args={}, parent="a1"),
        ev.ToolStarted(call_id="i1", name="run_shell_command", args={}, parent="a1"),
        ev.ToolCallPending(call_id="never", name="glob", args={}, parent="elsewhere"),
    )
    assert updates.open_calls == {"a1": "agent", "i1": "run_shell_command", "never": "glob"}
    closed = _feed(updates, ev.ToolAbandoned(call_id="a1", message="Operation cancelled."))
    assert [(u["toolCallId"], u["status"]) for u in closed] == [("i1", "failed"), ("a1", "failed")]
    assert closed[0]["_meta"]["parentToolCallId"] == "a1"
    assert all(u["content"][0]["content"]["text"] == "Operation cancelled." for u in closed)
    assert "rawOutput" not in closed[0]
    # an abandoned call the client never saw sends nothing; the turn's end closes the rest
    assert _feed(updates, ev.ToolAbandoned(call_id="zz", message="x")) == []
    stats = ev.TurnStats(model="m")
    end = ev.TurnFinished(
        text="", error=None, subtype="success", num_turns=1, duration_ms=0, stats=stats
    )
    [last] = _feed(updates, end)
    assert last["toolCallId"] == "never" and last["content"][0]["content"]["text"] == CANCELLED_TEXT
    assert updates.open_calls == {}


def test_stopping_drops_deltas_and_new_calls_but_not_results(tmp_path: Path) -> None:
    updates = EventUpdates(TOOLS, tmp_path)
    _feed(updates, ev.ToolCallPending(call_id="c1", name="glob", args={}))
    updates.stopping = True
    late = _feed(
        updates,
        ev.TextDelta(text="late"),
        ev.ThinkingDelta(text="late"),
        ev.ToolCallPending(call_id="c2", name="glob", args={}),
        ev.ToolStarted(call_id="c2", name="glob", args={}),
    )
    assert late == []
    result = ev.ToolResponse(call_id="c1", name="glob", args={}, error="no", part_error="no")
    [done] = _feed(updates, ev.ToolFinished(response=result, model_text="no"))
    assert done["status"] == "failed"
    assert updates.open_calls == {}  # c2 was never announced


def test_prompts_are_echoed_only_in_a_replay(tmp_path: Path) -> None:
    prompt = ev.UserPrompt(text="hi", message={"role": "user", "content": "hi"})
    inner = ev.UserPrompt(text="task", message={}, parent="a1")
    assert _feed(EventUpdates(TOOLS, tmp_path), prompt, inner) == []
    replay = EventUpdates(TOOLS, tmp_path, echo_prompts=True)
    replay.stopping = True
    assert _feed(replay, prompt, inner) == [
        {"sessionUpdate": "user_message_chunk", "content": {"type": "text", "text": "hi"}}
    ]
    assert replay.stopping is False  # a new turn


# -- the replay's reading of records ---------------------------------------------------------


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["text", "thinking", "other", 7]),
            st.lists(st.one_of(st.integers(-3, 12), st.booleans(), st.text(max_size=2))),
        ),
        max_size=6,
    ),
    st.text(max_size=40),
    st.text(max_size=40),
)
def test_deltas_never_lose_text(runs: list[Any], text: str, thinking: str) -> None:
    """Whatever ``chunks`` says, the deltas of each kind join to the recorded text."""
    chunks = [list(run) for run in runs]
    events = list(_deltas(chunks, text, thinking, None))
    assert "".join(e.text for e in events if isinstance(e, ev.TextDelta)) == text
    assert "".join(e.text for e in events if isinstance(e, ev.ThinkingDelta)) == thinking


def test_hostile_records_are_skipped(tmp_path: Path) -> None:
    replayer = Replayer(TOOLS, tmp_path)
    records: list[dict[str, Any]] = [
        {"type": "user", "message": "not an object"},
        {"type": "assistant", "message": {"content": 5, "tool_calls": [1, {"id": 2}]}, "chunks": 3},
        {"type": "assistant", "message": {"tool_calls": [{"id": "c", "function": "f"}]}},
        {"type": "tool_pending"},
        {"type": "tool_started", "call_id": "ghost", "parent_tool_use_id": 5},
        {"type": "tool_result", "message": {"tool_call_id": 1}},
        {"type": "tool_result", "call_id": "c", "name": "x", "args": [], "is_error": "yes"},
        {"type": "task_started", "call_id": "a"},
        {"type": "partial_assistant", "content": {"no": 1}, "chunks": [["text", [1, 2]]]},
        {"type": "result", "parent_tool_use_id": "a"},
        {"type": "mystery"},
        {},
    ]
    out = [u for r in records for u in replayer.updates(r)]
    out += replayer.finish()
    kinds = [(u["sessionUpdate"], u.get("toolCallId"), u.get("status")) for u in out]
    assert kinds == [
        ("tool_call", "c", "pending"),  # an older record: announced with its message
        ("tool_call_update", "ghost", "in_progress"),
        ("tool_call_update", "c", "failed"),
    ]
    assert out[0]["title"] == out[1]["title"] == "unknown_tool"
    assert out[1]["rawInput"] == {} and out[2]["_meta"]["toolName"] == "x"
