"""The run limits are one mechanism: this test lists its users.

Every model call of a session is :meth:`Agent._model_call` (the only ``.stream(`` call on a
model outside the model implementations) and every tool call is :meth:`Agent._run_tool` (the
only path to a tool's ``run``); each passes the run's :class:`RunLimits` first, and a subagent
shares its parent's.  Plus the properties the docstrings of :mod:`headwire.runtime.agent.limits`
state.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.cli.flags.agent import subagent_depth, tool_call_count
from headwire.runtime.agent.limits import (
    DEFAULT_SUBAGENT_DEPTH,
    MAX_SUBAGENT_DEPTH,
    MAX_TOOL_CALLS,
    LimitReached,
    RunLimits,
    ToolCallLimitExceeded,
    Turn,
    TurnLimitExceeded,
    check_max_tool_calls,
    clamp_subagent_depth,
)
from headwire.runtime.agent.loop import Agent, AgentConfig, _Stats
from headwire.runtime.agents.definitions import BUILTIN_AGENTS
from headwire.runtime.agents.tool import _spawn
from headwire.runtime.config.settings import SettingsError, parse_settings_text
from headwire.runtime.models.scripted import ScriptedModel
from headwire.runtime.policy.live import Policy
from tests.paths import ROOT

SRC = ROOT / "src" / "headwire"

STREAM_CALLERS = {
    (
        "runtime/agent/loop.py",
        "Agent._stream_fitting",
    ): "the gated model call's stream (reached only "
    "from Agent._model_call), made once more after a compaction when the provider refused the "
    "request as too long (no new turn)",
    ("runtime/agent/context_keeper.py", "ContextKeeper._summarize"): "a compaction's summary call: "
    "it passes RunLimits.before_side_call first (a stopped run, the budget)",
    (
        "runtime/agent/loop.py",
        "Agent._ask_aside",
    ): "a tool's side question, gated by before_side_call",
    ("runtime/models/fallback.py", "FallbackModel.stream"): "a model wrapping models (one call)",
    ("runtime/models/routed.py", "RoutedModel.stream"): "a model wrapping its route's (one call)",
    ("runtime/models/openai.py", "OpenAIModel.stream"): "a model retrying its own request",
    ("runtime/models/responses.py", "ResponsesModel.stream"): "a model retrying its own request",
    ("runtime/models/doctor.py", "_ask"): "headwire doctor's probe: no session, no limits",
    ("runtime/models/http_base.py", "StreamingHttpModel._attempt"): "httpx, not a model",
    ("runtime/models/http_base.py", "StreamingHttpModel.get_json"): "httpx, not a model",
    ("runtime/tools/web_fetch.py", "WebFetchTool._get"): "httpx, not a model",
}
"""Every ``X.stream(...)`` call in the package, and why it is not a second path to a model."""


def _calls(attribute: str) -> dict[tuple[str, str], list[int]]:
    """``(module, Class.function)`` -> lines of each call ``X.<attribute>(...)`` in ``src``."""
    found: dict[tuple[str, str], list[int]] = {}
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        module = path.relative_to(SRC).as_posix()

        def visit(node: ast.AST, scope: list[str], module: str = module) -> None:
            for child in ast.iter_child_nodes(node):
                inner = scope
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner = [*scope, child.name]
                if (
                    isinstance(child, ast.Call)
                    and isinstance(child.func, ast.Attribute)
                    and child.func.attr == attribute
                ):
                    found.setdefault((module, ".".join(scope[-2:])), []).append(child.lineno)
                visit(child, inner)

        visit(tree, [])
    return found


def _function(module: str, qualname: str) -> ast.AsyncFunctionDef | ast.FunctionDef:
    tree = ast.parse((SRC / module).read_text())
    cls, name = qualname.split(".")
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
                    return item
    raise AssertionError(f"{module}: no {qualname}")


def _first_line(func: ast.AST, attribute: str) -> int:
    lines = [
        n.lineno
        for n in ast.walk(func)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == attribute
    ]
    assert lines, attribute
    return min(lines)


def test_every_model_call_site_is_listed_and_the_one_in_a_session_is_gated() -> None:
    sites = _calls("stream")
    assert {site for site in sites} == set(STREAM_CALLERS), sites
    gate = _function("runtime/agent/loop.py", "Agent._model_call")
    assert _first_line(gate, "before_model_call") < _first_line(gate, "_stream_fitting")
    assert set(_calls("_stream_fitting")) == {("runtime/agent/loop.py", "Agent._model_call")}
    # a compaction's summary call passes the run's limits before it starts
    compact = _function("runtime/agent/context_keeper.py", "ContextKeeper.compact")
    assert _first_line(compact, "_gate") < _first_line(compact, "_summarize")
    assert set(_calls("_summarize")) == {
        ("runtime/agent/context_keeper.py", "ContextKeeper.compact")
    }
    side = _function("runtime/agent/loop.py", "Agent._ask_aside")
    assert _first_line(side, "before_side_call") < _first_line(side, "stream")


def test_every_tool_runs_through_the_gated_call() -> None:
    """``tool.run(args, ctx)`` is called in one place, which only the gated ``_run_tool``
    reaches."""
    runs = {
        site: lines
        for site, lines in _calls("run").items()
        if site[0].startswith("runtime/")  # cli/acp ``.run()`` are servers and loops
    }
    assert set(runs) == {("runtime/agent/loop.py", "Agent._execute")}, runs
    assert set(_calls("_execute")) == {("runtime/agent/loop.py", "Agent._run_tool")}
    assert set(_calls("_run_tool")) == {("runtime/agent/loop.py", "Agent._run_calls")}
    gate = _function("runtime/agent/loop.py", "Agent._run_tool")
    assert _first_line(gate, "before_tool_call") < _first_line(gate, "_execute")
    assert set(_calls("_model_call")) == {
        ("runtime/agent/loop.py", "Agent._loop"),
        ("runtime/agent/loop.py", "Agent.run_subtask"),
    }


def test_the_limits_are_made_once_per_run_and_counted_only_in_limits_py() -> None:
    makers = [
        p.relative_to(SRC).as_posix()
        for p in SRC.rglob("*.py")
        if "RunLimits(" in p.read_text() and p.name != "limits.py"
    ]
    assert makers == ["cli/flags/contract.py"]
    for path in SRC.rglob("*.py"):
        if path.name == "limits.py":
            continue
        text = path.read_text()
        for counter in ("limits.model_calls +", "limits.tool_calls +", "max_model_calls <"):
            assert counter not in text, (path, counter)


def test_a_subagent_shares_the_run_limits_at_every_depth() -> None:
    limits = RunLimits(max_model_calls=3)
    config = AgentConfig(session_id="s", cwd=Path("."), model_name="m", policy=Policy("yolo"))
    config.limits = limits
    parent = Agent(config, ScriptedModel([], name="m"), [], lambda e: None, None)  # type: ignore[arg-type]
    general = BUILTIN_AGENTS[0]
    child = _spawn(parent, general, "call_1")
    grandchild = _spawn(child, general, "call_2")
    assert child.config.limits is limits and grandchild.config.limits is limits
    assert grandchild.config.depth == 2


# -- the properties of the gate -----------------------------------------------------------

ops = st.lists(st.sampled_from(["model", "tool", "turn"]), max_size=40)


@given(ops=ops, max_model=st.integers(-1, 6), max_tools=st.integers(-1, 6))
def test_the_counters_never_pass_their_limits_and_a_stop_holds_for_the_turn(
    ops: list[str], max_model: int, max_tools: int
) -> None:
    limits = RunLimits(max_model_calls=max_model, max_tool_calls=max_tools)
    stopped: LimitReached | None = None
    for op in ops:
        if op == "turn":
            limits.start_turn()
            stopped = None
            continue
        gate = limits.before_model_call if op == "model" else limits.before_tool_call
        try:
            gate()
        except LimitReached as exc:
            assert stopped is None or exc is stopped  # the same stop, again
            stopped = exc
            kind = TurnLimitExceeded if op == "model" else ToolCallLimitExceeded
            assert isinstance(exc, kind) or exc is limits.reached
        else:
            assert stopped is None  # nothing passes once the turn stopped
        assert max_model < 0 or limits.model_calls <= max_model
        assert max_tools < 0 or limits.tool_calls <= max_tools


@given(st.integers(-5, MAX_TOOL_CALLS + 5))
def test_max_tool_calls_range(value: int) -> None:
    ok = value == -1 or 0 <= value <= MAX_TOOL_CALLS
    if ok:
        assert check_max_tool_calls(value) == value
        assert tool_call_count(str(value)) == value
    else:
        with pytest.raises(ValueError, match="expected -1"):
            check_max_tool_calls(value)
        with pytest.raises(argparse.ArgumentTypeError, match="expected -1"):
            tool_call_count(str(value))


@given(st.integers(-3, MAX_SUBAGENT_DEPTH + 3))
def test_subagent_depth_flag_range(value: int) -> None:
    if 1 <= value <= MAX_SUBAGENT_DEPTH:
        assert subagent_depth(str(value)) == value
    else:
        with pytest.raises(argparse.ArgumentTypeError, match="from 1 to 100"):
            subagent_depth(str(value))


@given(
    st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(-(10**6), 10**6),
        st.none(),
        st.text(max_size=3),
        st.booleans(),
    )
)
def test_subagent_depth_setting_is_clamped(value: object) -> None:
    depth = clamp_subagent_depth(value)
    assert 1 <= depth <= MAX_SUBAGENT_DEPTH
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not math.isfinite(value):  # type: ignore[arg-type]
        assert depth == DEFAULT_SUBAGENT_DEPTH
    elif 1 <= value <= MAX_SUBAGENT_DEPTH:  # type: ignore[operator]
        assert depth == math.floor(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ('{"model": {"maxToolCalls": 2.5}}', "model.maxToolCalls: expected an integer"),
        ('{"model": {"maxToolCalls": -2}}', "model.maxToolCalls: expected a number >= -1"),
        ('{"model": {"maxToolCalls": 1000001}}', "expected a number <= 1000000"),
        ('{"model": {"maxSubagentDepth": "5"}}', "model.maxSubagentDepth: expected a number"),
    ],
)
def test_bad_limit_settings_are_one_line(value: str, says: str) -> None:
    with pytest.raises(SettingsError, match=says.replace(".", r"\.")):
        parse_settings_text(value, "s")


def test_a_model_call_past_the_limit_never_reaches_the_model() -> None:
    """The gate is inside the call: even a direct ``_model_call`` stops at the limit."""
    config = AgentConfig(session_id="s", cwd=Path("."), model_name="m")
    config.limits = RunLimits(max_model_calls=0)
    agent = Agent(config, ScriptedModel([{"text": "x"}], name="m"), [], lambda e: None, None)  # type: ignore[arg-type]
    with pytest.raises(TurnLimitExceeded):
        asyncio.run(agent._model_call(_Stats(), Turn()))
