"""The run contract of the agent loop, in process: exactly one ``TurnFinished`` (and one
``result``) per turn whatever ends it, honest accounting, the limits and structured output.

The property test runs 100 random scripted sessions (text, tool calls, failing tools, subagents,
model errors, random usage, a budget, a schema) through the real agent and the real headless
emitter and checks what the docstrings of :mod:`headwire.runtime.agent.loop`,
:mod:`headwire.runtime.agent.meter` and :mod:`headwire.headless` state.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headwire import events as ev
from headwire.headless import HeadlessEmitter
from headwire.protocol.messages import InterimResult
from headwire.runtime.agent.limits import RunLimits
from headwire.runtime.agent.loop import Agent, AgentConfig
from headwire.runtime.agent.meter import Meter
from headwire.runtime.agent.output_schema import check_schema
from headwire.runtime.agent.structured import StructuredOutput
from headwire.runtime.agents.definitions import BUILTIN_AGENTS
from headwire.runtime.agents.tool import AgentTool
from headwire.runtime.config.pricing import ModelPrice, price_table
from headwire.runtime.models.base import ModelRequest, Usage
from headwire.runtime.models.scripted import ScriptedModel
from headwire.runtime.policy.live import Policy
from headwire.runtime.tools.base import ToolContext, ToolKind, ToolOutcome
from headwire.wire import encode

PRICE = ModelPrice(input_per_million=3.0, output_per_million=7.0, cached_input_per_million=1.0)
SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


class Echo:
    """A cheap tool: echoes, fails on ``fail``, raises on ``crash`` (a tool bug)."""

    name = "echo"
    display_name = "Echo"
    description = "echo"
    parameters: dict[str, Any] = {"type": "object", "properties": {"mode": {"type": "string"}}}  # noqa: RUF012
    kind: ToolKind = "read"

    def validate(self, args: dict[str, Any]) -> str | None:
        return None

    def needs_approval(self, args: dict[str, Any], mode: Any) -> bool:
        return False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        mode = args.get("mode")
        if mode == "crash":
            raise RuntimeError("the tool crashed")
        if mode == "fail":
            return ToolOutcome(llm_text="failed", error="failed", error_type="execution_failed")
        return ToolOutcome(llm_text="ok")


class Store:
    def save(self, tool_name: str, data: bytes) -> Path:
        raise AssertionError("no tool output is large here")


def make_agent(
    turns: list[dict[str, Any]],
    sink: list[Any],
    *,
    budget: float | None = None,
    structured: bool = False,
    previous: dict[str, Usage] | None = None,
    max_turns: int = -1,
    max_tool_calls: int = -1,
) -> Agent:
    model = ScriptedModel([{"tools": [], **t} for t in turns], name="m")
    meter = Meter(price_table({"m": PRICE}), previous)
    config = AgentConfig(
        session_id="s",
        cwd=Path("."),
        model_name="m",
        policy=Policy("yolo"),
        limits=RunLimits(
            max_model_calls=max_turns,
            max_tool_calls=max_tool_calls,
            max_budget_usd=budget,
            meter=meter,
        ),
        structured=StructuredOutput(SCHEMA, check_schema(SCHEMA)) if structured else None,
        agent_names=("general-purpose",),
    )
    events: list[ev.Event] = []

    def publish(event: ev.Event) -> None:
        events.append(event)
        emitter(event)

    emitter = HeadlessEmitter("s", lambda: "u", sink.append)
    tools: list[Any] = [Echo(), AgentTool({a.name: a for a in BUILTIN_AGENTS})]
    agent = Agent(config, model, tools, publish, Store())
    agent.events_seen = events  # type: ignore[attr-defined]
    return agent


def cost(usage: Usage) -> float:
    cached = min(usage.cached_tokens, usage.input_tokens)
    return ((usage.input_tokens - cached) * 3 + cached * 1 + usage.output_tokens * 7) / 1e6


usages = st.fixed_dictionaries(
    {"input_tokens": st.integers(0, 5000), "output_tokens": st.integers(0, 2000)},
    optional={"cache_read_input_tokens": st.integers(0, 5000)},
)
echo = st.builds(lambda m: {"name": "echo", "args": {"mode": m}}, st.sampled_from(["", "fail"]))
subagent = st.just({"name": "agent", "args": {"description": "d", "prompt": "p"}})
entry = st.one_of(
    st.builds(lambda t, u: {"text": t, "usage": u, "tools": []}, st.text(max_size=8), usages),
    st.builds(
        lambda calls, u: {"tools": calls, "usage": u},
        st.lists(st.one_of(echo, subagent), min_size=1, max_size=3),
        usages,
    ),
    st.builds(
        lambda t: {"text": t, "tools": [{"name": "echo", "args": {"mode": "crash"}}]},
        st.text(max_size=4),
    ),
    st.just({"error": "model down", "tools": []}),
    st.builds(
        lambda n, u: {"text": json.dumps({"n": n}), "usage": u, "tools": []}, st.integers(), usages
    ),
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(entry, max_size=14),
    prompts=st.integers(1, 3),
    budget=st.one_of(st.none(), st.floats(0.0005, 0.05)),
    structured=st.booleans(),
    max_turns=st.sampled_from([-1, -1, 4]),
    max_tool_calls=st.sampled_from([-1, -1, 0, 3]),
)
def test_every_turn_ends_once_and_its_accounts_add_up(
    turns: list[dict[str, Any]],
    prompts: int,
    budget: float | None,
    structured: bool,
    max_turns: int,
    max_tool_calls: int,
) -> None:
    wire: list[Any] = []
    agent = make_agent(
        turns,
        wire,
        budget=budget,
        structured=structured,
        max_turns=max_turns,
        max_tool_calls=max_tool_calls,
    )

    async def main() -> list[ev.TurnFinished]:
        return [await agent.run_turn(f"prompt {i}") for i in range(prompts)]

    finished = asyncio.run(main())
    events: list[ev.Event] = agent.events_seen  # type: ignore[attr-defined]
    assert sum(isinstance(e, ev.TurnFinished) for e in events) == prompts
    results = [m for m in wire if m["type"] == "result" and not isinstance(m, InterimResult)]
    assert len(results) == prompts
    every_call = Usage()
    start = 0
    for done, result in zip(finished, results, strict=True):
        end = wire.index(result, start)
        turn = wire[start:end]
        start = end + 1
        # subtype, is_error and errors agree
        assert result["is_error"] is (done.error is not None)
        assert (result["subtype"] == "success") is (done.error is None)
        if done.error is not None:
            assert result["errors"] == [done.error]
            assert done.limit is None or done.subtype != "error_max_structured_output_retries"
        # per-turn usage (the main agent's assistant messages) adds up to the result's
        main = Usage()
        for m in turn:
            if m["type"] == "assistant":
                u = m["message"]["usage"]
                call = Usage(
                    u["input_tokens"],
                    u["output_tokens"],
                    u.get("cache_read_input_tokens", 0),
                    u.get("total_tokens", 0),
                )
                every_call = every_call + call
                if m["parent_tool_use_id"] is None:
                    main = main + call
        assert result["usage"]["input_tokens"] == main.input_tokens
        assert result["usage"]["output_tokens"] == main.output_tokens
        assert result["usage"]["cache_read_input_tokens"] == main.cached_tokens
        assert result["usage"].get("total_tokens", 0) == main.total_tokens
        # modelUsage and total_cost_usd: every call so far (subagents' too), priced
        if every_call == Usage() and not result["modelUsage"]:
            assert result["total_cost_usd"] == 0
            continue
        by_model = result["modelUsage"]["m"]
        assert by_model["inputTokens"] == every_call.input_tokens
        assert by_model["outputTokens"] == every_call.output_tokens
        assert by_model["cacheReadInputTokens"] == every_call.cached_tokens
        assert result["total_cost_usd"] == by_model["costUSD"]
        assert abs(result["total_cost_usd"] - cost(every_call)) < 1e-12
        if structured and done.error is None:
            # equal as the wire writes them (JSON.stringify: an integer past 2**53 as its double)
            assert json.loads(encode(result["structured_output"])) == json.loads(result["result"])
            assert isinstance(result["structured_output"]["n"], int)
    # one count per run: every model call and every tool call, subagents' too, passed the gate
    limits = agent.config.limits
    model_calls = sum(isinstance(e, ev.ModelCallStarted) for e in events)
    tool_runs = sum(isinstance(e, ev.ToolStarted) for e in events)
    assert model_calls == limits.model_calls and tool_runs == limits.tool_calls
    assert max_turns < 0 or model_calls <= max_turns
    assert max_tool_calls < 0 or tool_runs <= max_tool_calls
    for done in finished:
        if done.limit == "tool_calls":
            assert done.subtype == "error_during_execution" and "--max-tool-calls" in str(
                done.error
            )
    # every tool_use shown has its tool_result, whatever ended the turn
    uses = [e.call_id for e in events if isinstance(e, ev.ToolUse)]
    answered = [e.response.call_id for e in events if isinstance(e, ev.ToolFinished)]
    assert sorted(uses) == sorted(answered)
    if budget is not None:
        # the budget: no model call starts once it is spent, so at most one call overshoots
        spent = agent.config.meter.spent_usd()
        assert spent is not None
        last_call = max((cost(_usage(t)) for t in turns), default=0.0)
        assert spent < budget + last_call + 1e-12


def _usage(turn: dict[str, Any]) -> Usage:
    raw = turn.get("usage") or {"input_tokens": 11, "output_tokens": 3}
    return Usage(raw["input_tokens"], raw["output_tokens"], raw.get("cache_read_input_tokens", 0))


def test_the_call_that_crosses_the_budget_is_the_last() -> None:
    tool = {"tools": [{"name": "echo", "args": {}}], "usage": {"input_tokens": 100}}
    turns = [tool, tool, tool, {"text": "never"}]
    wire: list[Any] = []
    agent = make_agent(turns, wire, budget=0.0005)  # $0.0003 a call: the second crosses it
    done = asyncio.run(agent.run_turn("go"))
    assert done.subtype == "error_max_budget_usd" and done.limit == "budget"
    assert done.num_turns == 2 and agent.config.meter.spent_usd() == 0.0006
    assert wire[-1]["total_cost_usd"] == 0.0006


def test_a_bug_still_ends_the_turn_with_a_result() -> None:
    class Broken(ScriptedModel):
        async def stream(self, request: ModelRequest) -> Any:  # type: ignore[override]
            raise KeyError("oops")
            yield  # pragma: no cover

    wire: list[Any] = []
    agent = make_agent([], wire)
    agent.model = Broken([], name="m")
    done = asyncio.run(agent.run_turn("go"))
    assert done.subtype == "error_during_execution"
    assert done.error == "Internal error: KeyError: 'oops'"
    assert wire[-1]["errors"] == ["Internal error: KeyError: 'oops'"]


def test_the_wall_clock_limit_cancels_the_running_step() -> None:
    class Slow(Echo):
        async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
            await asyncio.sleep(30)
            return ToolOutcome(llm_text="late")

    wire: list[Any] = []
    agent = make_agent([{"text": "on it", "tools": [{"name": "echo", "args": {}}]}], wire)
    agent.tools["echo"] = Slow()
    agent.config.limits.max_duration_s = 0.2
    done = asyncio.run(asyncio.wait_for(agent.run_turn("go"), 5))
    assert done.limit == "duration" and done.subtype == "error_during_execution"
    assert done.text == "on it"  # the partial answer
    assert agent.conversation[-1] == {
        "role": "tool",
        "tool_call_id": "call_scripted_1_1",
        "content": "Operation cancelled.",
    }


def test_a_resumed_session_continues_its_totals() -> None:
    wire: list[Any] = []
    agent = make_agent([{"text": "hi"}], wire, previous={"m": Usage(1000, 100, 0, 1100)})
    asyncio.run(agent.run_turn("go"))
    assert wire[-1]["modelUsage"]["m"]["inputTokens"] == 1011
    assert wire[-1]["usage"]["input_tokens"] == 11  # the turn's own
    assert wire[-1]["total_cost_usd"] == cost(Usage(1011, 103))


def test_structured_output_corrections_are_bounded() -> None:
    wire: list[Any] = []
    agent = make_agent([{"text": "{}"}] * 5, wire, structured=True)
    done = asyncio.run(agent.run_turn("go"))
    assert done.subtype == "error_max_structured_output_retries" and done.num_turns == 3
    feedback = [m for m in agent.conversation if m["role"] == "user"][1:]
    assert len(feedback) == 2 and "'n' is a required property" in feedback[0]["content"]
    system = agent._system_prompt()
    assert json.dumps(SCHEMA) in system and "exactly one JSON value" in system


def test_a_summary_call_that_crosses_the_budget_is_the_last() -> None:
    """A compaction's summary call counts like any call: when it crosses the budget, the model
    call it made room for does not start."""
    from headwire.runtime.agent.context_keeper import ContextSettings

    echo = {"tools": [{"name": "echo", "args": {}}], "usage": {"input_tokens": 10}}
    summary = {"text": "the summary", "usage": {"input_tokens": 200}}
    wire: list[Any] = []
    agent = make_agent([echo, echo, summary, {"text": "never"}], wire, budget=0.0005)
    # a threshold this low compacts before every call past the second
    agent.context.settings = ContextSettings(window=1_000, threshold=0.001)
    done = asyncio.run(agent.run_turn("go"))
    assert done.subtype == "error_max_budget_usd"
    assert agent.config.meter.spent_usd() == (10 + 10 + 200) * 3 / 1e6
    kinds = [type(e).__name__ for e in agent.events_seen]  # type: ignore[attr-defined]
    assert kinds.count("CompactionFinished") == 1 and kinds.count("ModelCallStarted") == 2
