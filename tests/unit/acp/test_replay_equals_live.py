"""``session/load`` equals live, as a property: any session the agent can produce, recorded by the
real recorder and replayed by the real replayer, gives the updates the live projection sent.

A small simulator publishes well-formed event streams as :class:`headwire.runtime.agent.loop.Agent`
and the ``agent`` tool do (deltas in any order and size, tool calls that succeed, fail, are
refused, start and get cancelled; subagents whose inner calls are cancelled with them; streams
cut off mid-answer; the server ending a turn early, with events still arriving after it).  The
same events go to the live projection (:class:`EventUpdates`, prompts echoed as a replay does)
and to the recorder; the replay of the recording must give the same updates, in order.
"""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headwire import events as ev
from headwire.acp.event_updates import EventUpdates
from headwire.acp.replay import Replayer, stream_records
from headwire.runtime.store.record_events import RecordingSubscriber
from headwire.runtime.store.recording import Recorder
from headwire.runtime.tools.registry import builtin_tools
from headwire.wire import encode
from tests.strategies import ATOMS

TOOLS = {t.name: t for t in builtin_tools()}
NAMES = ["run_shell_command", "read_file", "write_file", "mcp__ui__render", "nope"]


class Sim:
    """Publishes one session's events to ``sinks``; ``stop`` plays the server ending a turn."""

    def __init__(self, rng: random.Random, sinks: list[Any], stop: Any) -> None:
        self.rng = rng
        self.sinks = sinks
        self.stop = stop
        self.calls = 0

    def pub(self, event: ev.Event) -> None:
        for sink in self.sinks:
            sink(event)

    def text(self, most: int = 6) -> str:
        return "".join(self.rng.choice(ATOMS[:26]) for _ in range(self.rng.randint(0, most)))

    def session(self) -> None:
        for _ in range(self.rng.randint(1, 3)):
            prompt = self.text() or "go"
            self.pub(ev.UserPrompt(text=prompt, message={"role": "user", "content": prompt}))
            outcome = self.agent(None, depth=0)
            self.pub(
                ev.TurnFinished(
                    text="",
                    error="Operation cancelled." if outcome != "ok" else None,
                    subtype="success" if outcome == "ok" else "error_during_execution",
                    num_turns=1,
                    duration_ms=0,
                    stats=ev.TurnStats(model="m"),
                    cancelled=outcome == "cancel",
                )
            )

    def agent(self, parent: str | None, depth: int) -> str:
        """One agent's model loop; ``ok``, or ``cancel``/``error`` when the turn was cut."""
        rng = self.rng
        last_calls: list[str] = []
        answered: set[str] = set()
        for _ in range(rng.randint(1, 3)):
            text, thinking = [], []
            for _ in range(rng.randint(0, 5)):
                if rng.random() < 0.4:
                    piece = self.text()
                    thinking.append(piece)
                    self.pub(ev.ThinkingDelta(text=piece, parent=parent))
                else:
                    piece = self.text() or "t"
                    text.append(piece)
                    self.pub(ev.TextDelta(text=piece, parent=parent))
            if rng.random() < 0.1:  # cut off mid-stream: no message
                return self.cut(parent, last_calls, answered, rng.choice(["cancel", "error"]))
            calls = []
            for _ in range(rng.randint(0, 2)):
                self.calls += 1
                name = "agent" if depth == 0 and rng.random() < 0.3 else rng.choice(NAMES)
                args = {"command": self.text(), "n": rng.randint(0, 3)}
                calls.append((f"c{self.calls}", name, args))
            message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
            if thinking:
                message["reasoning_content"] = "".join(thinking)
            if calls:
                message["tool_calls"] = [
                    {
                        "id": c,
                        "type": "function",
                        "function": {"name": n, "arguments": encode(a).decode()},
                    }
                    for c, n, a in calls
                ]
            self.pub(ev.ModelCallFinished(usage=ev.Usage(), message=message, parent=parent))
            last_calls, answered = [c for c, _, _ in calls], set()
            if not calls:
                return "ok"
            for call_id, name, args in calls:
                outcome = self.tool(call_id, name, args, parent, depth)
                if outcome != "ok":
                    return self.cut(parent, last_calls, answered, outcome)
                answered.add(call_id)
        return "ok"

    def cut(self, parent: str | None, calls: list[str], answered: set[str], why: str) -> str:
        if parent is None and why == "cancel":  # Agent._abandon_open_calls
            for call_id in calls:
                if call_id not in answered:
                    self.pub(ev.ToolAbandoned(call_id=call_id, message="Operation cancelled."))
        return why

    def tool(
        self, call_id: str, name: str, args: dict[str, Any], parent: str | None, depth: int
    ) -> str:
        rng = self.rng
        self.pub(ev.ToolCallPending(call_id=call_id, name=name, args=args, parent=parent))
        fate = rng.choice(["ok", "ok", "fail", "denied", "cancel", "stop"])
        if fate == "denied":
            self.finish(call_id, name, args, parent, "denied")
            return "ok"
        self.pub(ev.ToolStarted(call_id=call_id, name=name, args=args, parent=parent))
        if name == "agent":
            self.pub(
                ev.SubagentStarted(
                    task_id="t",
                    call_id=call_id,
                    description="d",
                    subagent_type=rng.choice(["general-purpose", "reviewer"]),
                    prompt="p",
                    parent=parent,
                )
            )
            self.pub(
                ev.UserPrompt(text="p", message={"role": "user", "content": "p"}, parent=call_id)
            )
            outcome = self.agent(call_id, depth + 1)
            status = "completed" if outcome == "ok" else "cancelled"
            if outcome != "ok":
                self.pub(
                    ev.SubagentFailed(message="Task was cancelled", call_id=call_id, parent=parent)
                )
            self.pub(
                ev.SubagentFinished(
                    task_id="t",
                    call_id=call_id,
                    status=status,
                    duration_ms=0,
                    tool_uses=0,
                    parent=parent,
                )
            )
            if outcome == "cancel":
                return "cancel"
        if fate == "cancel":
            return "cancel"
        self.finish(call_id, name, args, parent, fate)
        if fate == "stop":  # the server ends the turn after this result...
            self.stop()
            if rng.random() < 0.5:  # ...and a late delta and call still arrive (dropped live)
                self.pub(ev.TextDelta(text="late", parent=parent))
                self.pub(ev.ToolCallPending(call_id="late", name="nope", args={}, parent=parent))
                self.pub(ev.ToolStarted(call_id="late", name="nope", args={}, parent=parent))
            return "cancel"
        return "ok"

    def finish(
        self, call_id: str, name: str, args: dict[str, Any], parent: str | None, fate: str
    ) -> None:
        size = self.rng.choice([0, 5, 70_000])
        text = "o" * size
        error = None if fate in ("ok", "stop") else f"{fate}: {call_id}"
        response = ev.ToolResponse(
            call_id=call_id,
            name=name,
            args=args,
            output=None if error else text,
            part_error=text if error and text else None,
            error=error,
            error_type="execution_denied" if fate == "denied" else None,
            display=self.rng.choice([None, "", "d" * size]),
        )
        self.pub(ev.ToolFinished(response=response, model_text=text, parent=parent))


def live_and_replayed(seed: int, folder: Path) -> tuple[list[Any], list[Any]]:
    recorder = Recorder(folder, folder, f"s{seed}")
    live = EventUpdates(TOOLS, folder, echo_prompts=True)
    sent: list[Any] = []

    def project(event: ev.Event) -> None:
        sent.extend(live.updates(event))

    def stop() -> None:
        live.stopping = True
        recorder.record("turn_stopped", reason="end_turn")

    sim = Sim(random.Random(seed), [RecordingSubscriber(recorder, lambda e: None), project], stop)
    sim.session()
    recorder.close()
    replayer = Replayer(TOOLS, folder)
    replayed = [u for record in stream_records(recorder.path) for u in replayer.updates(record)]
    replayed += replayer.finish()
    return sent, replayed


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32))
def test_replay_equals_live(seed: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        sent, replayed = live_and_replayed(seed, Path(tmp))
    assert encode(replayed) == encode(sent)


def test_the_simulator_reaches_every_case() -> None:
    """The property above sees subagent frames, cut streams, stops and every status."""
    seen: set[str] = set()
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(60):
            sent, _ = live_and_replayed(seed, Path(tmp))
            for u in sent:
                meta = u.get("_meta") or {}
                seen.add(f"{u['sessionUpdate']}:{u.get('status')}")
                if "parentToolCallId" in meta:
                    seen.add(f"sub:{u['sessionUpdate']}:{u.get('status')}")
    for case in (
        "tool_call:pending",
        "tool_call_update:in_progress",
        "tool_call_update:completed",
        "tool_call_update:failed",
        "sub:tool_call:pending",
        "sub:tool_call_update:completed",
        "sub:tool_call_update:failed",
        "sub:agent_message_chunk:None",
        "agent_thought_chunk:None",
        "user_message_chunk:None",
    ):
        assert case in seen, case
