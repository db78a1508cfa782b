"""The agent loop: prompt -> model -> tool calls -> tool results -> model, until an answer.

One :class:`Agent` owns a session's conversation and publishes everything that happens in a
turn as one typed event stream (:mod:`headwire.events`) to its ``events`` sink; it builds no
wire message and writes nothing.  The front ends subscribe (the headless emitter, the ACP
updates, the recorder, the terminal's progress view) and each bounds what it writes at its own
boundary (:mod:`headwire.boundary`).

Each tool result exists three times and they are never confused: the *model-facing* text
(bounded by :func:`~headwire.runtime.tools.output.model_text`, pointing at the artifact), the
*producer artifact* (the tool's full output, 0600), and the full display in the
:class:`~headwire.events.ToolFinished` event (which the recorder keeps whole).

The loop has a suspension point before every model call and every tool call, so a turn that is
cancelled (an interrupt, a signal, a client's cancel) stops there even when the model and the
tools answer without waiting.

Every turn ends with exactly one :class:`~headwire.events.TurnFinished`, whatever ends it (the
run contract, README "Exit codes"): an answer (``success``; with ``--json-schema`` only one that
validates, :mod:`headwire.runtime.agent.structured`), the turn limit (``error_max_turns``), the
budget (``error_max_budget_usd``, checked before each model call, so the call that crosses it
is the last), the wall-clock limit (``error_during_execution``, the running step cancelled),
the tool-call limit (``error_during_execution``, the call that would go over it not run), no
valid structured answer (``error_max_structured_output_retries``), a model error, a bug
(``error_during_execution``), or a cancellation (published, then re-raised).  Each model call's
usage goes to the session's :class:`~headwire.runtime.agent.meter.Meter` (subagents' too).

Every model call goes through :meth:`Agent._model_call` and every tool call through
:meth:`Agent._run_tool`, and each first passes the run's one
:class:`~headwire.runtime.agent.limits.RunLimits` gate, which the main agent and all its subagents
share (``tests/unit/runtime/agent/test_limits_gate.py`` lists the call sites).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import traceback
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from headwire import events as ev
from headwire.boundary import EXECUTION_DENIED
from headwire.errors import ConfigError, HeadwireError
from headwire.io.stdio import warn
from headwire.records import dataclass, field
from headwire.runtime.agent.context_keeper import ContextKeeper, ContextSettings
from headwire.runtime.agent.limits import (
    LimitReached,
    RunLimits,
    Turn,
    deadline_prompt,
    duration_message,
    low_time_note,
)
from headwire.runtime.agent.meter import Meter
from headwire.runtime.agent.structured import StructuredOutput, StructuredOutputFailed
from headwire.runtime.config.pricing import lookup
from headwire.runtime.config.prompt import build_system_prompt, prompt_suffix
from headwire.runtime.ids import new_uuid
from headwire.runtime.models.base import (
    Finished,
    Model,
    ModelError,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)
from headwire.runtime.policy.live import Policy
from headwire.runtime.policy.permissions import Decision
from headwire.runtime.tools.base import ApprovalMode, ArtifactSink, Tool, ToolContext, ToolOutcome
from headwire.runtime.tools.output import model_text
from headwire.runtime.tools.redacted import redact_outcome
from headwire.runtime.tools.toolset import missing_tool_message
from headwire.wire import encode

if TYPE_CHECKING:
    from headwire.runtime.config.output_styles import OutputStyle
    from headwire.runtime.hooks.decide import Verdict
    from headwire.runtime.hooks.runner import HookRunner
    from headwire.runtime.skills import Skill

CANCELLED_MESSAGE = "Operation cancelled."

AskPermission = Callable[[Tool, str, dict[str, Any]], Awaitable[Decision]]
"""Asks a client whether a call may run: ``ask(tool, call_id, args)``."""


@dataclass(slots=True)
class AgentConfig:
    """Settings of one session."""

    session_id: str
    cwd: Path
    model_name: str
    policy: Policy = field(default_factory=Policy)
    """The live permission policy, shared by reference with subagents and the session's
    mode changes (``approval_mode`` and ``allowed_tools`` read and write it)."""
    system_prompt: str | None = None
    append_system_prompt: str | None = None
    version: str = "0.0.0"
    tool_timeout_s: float | None = None
    workspace_dirs: tuple[Path, ...] = ()
    parent_tool_use_id: str | None = None
    """Set on a subagent: every event it publishes carries the agent call's id."""
    depth: int = 0
    """How deep this agent is nested: 0 for the main agent, 1 for its subagents, and so on."""
    max_subagent_depth: int = 5
    """How deep subagents may nest (``--max-subagent-depth``, ``model.maxSubagentDepth``): an
    agent at this depth cannot start another."""
    agent_names: tuple[str, ...] = ()
    sandbox: dict[str, Any] | None = None
    """``system/init``'s ``sandbox`` (see :mod:`headwire.runtime.sandbox`), ``None``: none."""
    mcp_statuses: Callable[[], list[dict[str, Any]]] = field(default=lambda: [])
    """``system/init``'s ``mcp_servers``: the live ``[{"name", "status"}]`` of the servers."""
    context_text: str = ""
    """The context files (QWEN.md, AGENTS.md) as joined by
    :mod:`headwire.runtime.config.context_files`."""
    limits: RunLimits = field(default_factory=RunLimits)
    """The run's limits and counters, shared by reference with subagents (nested ones too)."""
    structured: StructuredOutput | None = None
    """``--json-schema``: the main agent's final answers must match it."""
    context: ContextSettings = field(default_factory=ContextSettings)
    """How the conversation is kept within the model's window (:mod:`.context_keeper`)."""
    hooks: HookRunner | None = None
    """The session's hooks (``None`` when none are configured: nothing of them is loaded)."""
    skills: Mapping[str, Skill] = field(default_factory=dict)
    """The session's skills by name (:mod:`headwire.runtime.skills`)."""
    skill_catalogue: str = ""
    """The reminder listing the skills, given with a new session's first prompt."""
    output_style: OutputStyle | None = None
    """The main agent's output style (:mod:`headwire.runtime.config.output_styles`), ``None``:
    none.  A replaced system prompt takes none; ``/output-style`` and ACP change it."""
    style_choices: Callable[[], Mapping[str, OutputStyle]] | None = None
    """Reads the output styles this session may take, by lower-case name (ACP's select and
    ``session/set_config_option`` call it); ``None``: none offered."""

    @property
    def meter(self) -> Meter:
        """The session's usage and cost (the run limits' meter)."""
        return self.limits.meter

    @property
    def approval_mode(self) -> ApprovalMode:
        """The approval mode in force now (the policy's)."""
        return self.policy.mode

    @approval_mode.setter
    def approval_mode(self, mode: ApprovalMode) -> None:
        self.policy.mode = mode

    @property
    def allowed_tools(self) -> tuple[str, ...]:
        """The allow rules as written."""
        return tuple(rule.text for rule in self.policy.allow_rules)

    @allowed_tools.setter
    def allowed_tools(self, rules: tuple[str, ...]) -> None:
        self.policy.set_allow(rules)


DEFAULT_SYSTEM_PROMPT = (
    "You are headwire, a headless coding agent. Use the tools to inspect and change the "
    "workspace, then answer concisely."
)


def styled_prompt(style: OutputStyle) -> str:
    """The built-in prompt under an output style: it answers as the style says (its own
    "answer concisely" gives way), keeps the coding guidance only when the style does, and
    ends with the style's section."""
    if style.keep_coding_instructions:
        head = (
            "You are headwire, a headless coding agent that answers according to the Output "
            "Style below. Use the tools to inspect and change the workspace."
        )
    else:
        head = (
            "You are headwire, a headless agent that answers according to the Output Style below."
        )
    return f"{head}\n\n{style.section()}"


class HookBlocked(HeadwireError):
    """A hook refused the turn's prompt; ``str()`` is the turn's error."""


@dataclass(slots=True)
class _Stats:
    api_ms: int = 0
    requests: int = 0
    errors: int = 0
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    tool_success: int = 0
    tool_fail: int = 0
    tool_ms: int = 0
    by_tool: dict[str, list[int]] = field(default_factory=dict)

    def count_tool(self, name: str, failed: bool, elapsed_ms: int) -> None:
        self.tool_calls += 1
        self.tool_ms += elapsed_ms
        self.tool_fail += failed
        self.tool_success += not failed
        entry = self.by_tool.setdefault(name, [0, 0, 0, 0])
        entry[0] += 1
        entry[1] += not failed
        entry[2] += failed
        entry[3] += elapsed_ms

    def frozen(self, model: str) -> ev.TurnStats:
        return ev.TurnStats(
            model=model,
            requests=self.requests,
            errors=self.errors,
            api_ms=self.api_ms,
            usage=self.usage,
            tool_calls=self.tool_calls,
            tool_success=self.tool_success,
            tool_fail=self.tool_fail,
            tool_ms=self.tool_ms,
            by_tool=tuple(
                (name, ev.ToolStats(count=c, success=s, fail=f, duration_ms=d))
                for name, (c, s, f, d) in self.by_tool.items()
            ),
        )


MODEL_NAME_CHARS = 256
"""The longest name :meth:`Agent.switch_model` takes (a client's ``set_model`` is outside data;
the longest real model ids are under 100 characters)."""


class Agent:
    """A session's model loop."""

    def __init__(
        self,
        config: AgentConfig,
        model: Model,
        tools: list[Tool],
        events: ev.EventSink,
        artifacts: ArtifactSink,
        *,
        ask: AskPermission | None = None,
        conversation: list[dict[str, Any]] | None = None,
        cancelled: asyncio.Event | None = None,
    ) -> None:
        self.config = config
        self.model = model
        self.tools = {t.name: t for t in tools}
        self.events = events
        self.artifacts = artifacts
        self.ask = ask
        self.conversation: list[dict[str, Any]] = list(conversation or [])
        self._turn: Turn | None = None
        """The main agent's running turn (for its deadline notes)."""
        self.cancelled = cancelled if cancelled is not None else asyncio.Event()
        """Set while a turn is being stopped; running tools watch it."""
        self.session_started = False
        self.hook_context = ""
        """What ``SessionStart`` hooks added for the model (joined to the system prompt)."""
        self.stop_blocks = 0
        self._estimated = 0
        """The byte estimate of the request being made (compared with its real usage after)."""
        self._stats = _Stats()
        """The running turn's counts (the summary calls of a compaction count there too)."""
        self.context = ContextKeeper(
            config.context,
            model,
            events,
            config.parent_tool_use_id,
            self._count_side_usage,
            self._table_window,
            gate=config.limits.before_side_call,
            before=self._pre_compact,
            after=self._post_compact,
        )

    def switch_model(self, name: str) -> None:
        """Send ``name`` from the next request on: the one switch behind an SDK's
        ``set_model``, ACP's ``session/set_model`` and model option, and the REPL's ``/model``.
        A model of another catalog route brings its own client; a name that cannot run (or is
        no model name: longer than :data:`MODEL_NAME_CHARS`, or holding a control character or
        a lone surrogate) raises :class:`~headwire.errors.ConfigError` and changes nothing."""
        if len(name) > MODEL_NAME_CHARS or not name.isprintable():
            raise ConfigError(
                f"not a model name: at most {MODEL_NAME_CHARS} printable characters, "
                f"got {len(name)}"
            )
        self.model.name = name
        self.config.model_name = name

    def model_choices(self) -> list[tuple[str, str]]:
        """``(id, display name)`` of the models :meth:`switch_model` can take: the current one
        first, then the user's catalog entries of the run's provider."""
        name = self.model.name
        catalog = getattr(self.model, "choices", ())
        return [(name, name), *((i, label) for i, label in catalog if i != name)]

    def _table_window(self, model_name: str) -> int | None:
        """``model_name``'s window in the price/model table (``None``: not listed)."""
        entry = lookup(self.config.meter.prices, model_name)
        return entry.context_window if entry is not None else None

    def _count_side_usage(self, usage: Usage) -> None:
        """A call outside the conversation (a compaction's summary): its usage and cost."""
        self._stats.requests += 1
        self._stats.usage = self._stats.usage + usage
        self.config.meter.add(str(getattr(self.model, "answered_by", self.model.name)), usage)

    async def compact(self) -> bool:
        """Compact the conversation now (``/compact``, a control request); ``False`` when
        there is nothing to summarize."""
        return await self.context.compact("manual", self.fixed_request_parts(), self.conversation)

    def fixed_request_parts(self) -> list[dict[str, Any]]:
        """What every request carries besides the conversation: system prompt, tool schemas."""
        system = self._system_prompt()
        return [{"role": "system", "content": system}, *self._tool_schemas()]

    @staticmethod
    def new_uuid() -> str:
        """A fresh random id."""
        return new_uuid()

    @property
    def parent(self) -> str | None:
        """The ``agent`` call this (sub)agent works for, ``None`` for the main agent."""
        return self.config.parent_tool_use_id

    def session_info(self) -> ev.SessionInfo:
        """What ``system/init`` announces for this session now."""
        return ev.SessionInfo(
            session_id=self.config.session_id,
            cwd=str(self.config.cwd),
            tools=tuple(self.tools),
            mcp_servers=tuple(dict(s) for s in self.config.mcp_statuses()),
            model=self.model.name,
            permission_mode=self.config.approval_mode,
            version=self.config.version,
            agents=self.config.agent_names,
            skills=tuple(sorted(n for n, s in self.config.skills.items() if s.user_invocable)),
            sandbox=self.config.sandbox,
        )

    # -- one run ----------------------------------------------------------------------------

    async def run_turn(self, prompt: str) -> ev.TurnFinished:
        """Run one user prompt to its :class:`~headwire.events.TurnFinished` (also published)."""
        started = time.monotonic()
        stats = self._stats = _Stats()
        turn = Turn()
        self.cancelled.clear()
        limits = self.config.limits
        limits.start_turn()
        limit_s = limits.max_duration_s
        self._turn = turn
        turn.deadline = None if limit_s is None else started + limit_s
        self.events(ev.TurnStarted(info=self.session_info()))
        self.stop_blocks = 0
        error: str | None = None
        subtype = "error_during_execution"
        limit: ev.Limit | None = None
        retryable = False
        deadline = limits.deadline()
        try:
            async with deadline:
                await self._open_turn(prompt)
                await self._loop(turn, stats)
        except HookBlocked as exc:
            error = str(exc)
        except LimitReached as exc:
            error, subtype, limit = str(exc), exc.subtype, exc.limit
        except StructuredOutputFailed as exc:
            error, subtype = str(exc), "error_max_structured_output_retries"
        except ModelError as exc:
            error = exc.message
            retryable = exc.retryable
            stats.errors += 1
        except asyncio.CancelledError:
            self._abandon_open_calls()
            self.events(self._finished(started, stats, turn, CANCELLED_MESSAGE, subtype, True))
            raise
        except TimeoutError as exc:
            if not deadline.expired():
                error = self._internal_error(exc)
            else:
                self._abandon_open_calls()
                error, limit = duration_message(limits.max_duration_s or 0), "duration"
        except Exception as exc:  # a bug must still end the turn with its result
            error = self._internal_error(exc)
        finished = self._finished(started, stats, turn, error, subtype, False, limit)
        if retryable:
            finished = replace(finished, retryable=True)
        self.events(finished)
        return finished

    async def _loop(self, turn: Turn, stats: _Stats) -> None:
        """Model calls and tool calls until an answer (that validates, with ``--json-schema``)."""
        structured = self.config.structured
        while True:
            calls, turn.last_text = await self._model_call(stats, turn)
            turn.said = turn.last_text or turn.said
            if calls:
                await self._run_calls(calls, stats)
                continue
            if structured is None:
                if await self._stop_blocked(turn.last_text):
                    continue
                return
            verdict = await structured.check_bounded(turn.last_text)
            if verdict.ok:
                turn.structured, turn.value = True, verdict.value
                if await self._stop_blocked(turn.last_text):
                    continue
                return
            turn.corrections += 1
            if turn.corrections > structured.retries:
                raise StructuredOutputFailed(structured.failure(verdict.problem))
            self._prompt(structured.feedback(verdict.problem))

    # -- hooks (headwire.runtime.hooks.decide; each event fires at one place) ----------------------

    async def hook(self, event: str, target: str | None, fields: dict[str, Any]) -> Verdict | None:
        """Run ``event``'s hooks (``None`` when it has none)."""
        hooks = self.config.hooks
        if hooks is None or not hooks.has(event):
            return None
        if self.parent is not None:
            fields = {**fields, "agent_id": self.parent}
        return await hooks.fire(
            event,
            target,
            fields,
            session_id=self.config.session_id,
            mode=self.config.approval_mode,
            publish=self.events,
            parent=self.parent,
        )

    async def _open_turn(self, prompt: str) -> None:
        """``SessionStart`` (first turn), ``UserPromptSubmit`` (a block ends the turn with its
        reason as the error), then the prompt joins the conversation."""
        reminder = ""
        if not self.session_started:
            self.session_started = True
            source = "resume" if self.conversation else "startup"
            if source == "startup" and self.parent is None:
                reminder = self.config.skill_catalogue
            started = await self.hook(
                "SessionStart", source, {"source": source, "model": self.model.name}
            )
            if started is not None and started.context:
                self.hook_context = started.context
        submitted = await self.hook("UserPromptSubmit", None, {"prompt": prompt})
        if submitted is not None and (submitted.blocked or submitted.stop):
            why = submitted.reason or "no reason given"
            raise HookBlocked(f"UserPromptSubmit hook blocked the prompt: {why}")
        extra = submitted.context if submitted is not None else ""
        style = self._active_style()
        if style is not None:  # every user turn: a long session keeps to the style
            reminder = (
                f"{reminder}\n\n{style.turn_reminder()}" if reminder else style.turn_reminder()
            )
        self._prompt(self._skill_prompt(prompt), extra, reminder)

    def _skill_prompt(self, prompt: str) -> str:
        """``/name args`` naming a skill the user may run: that skill's text, else ``prompt``."""
        if not prompt.startswith("/") or not self.config.skills:
            return prompt
        name, _, args = prompt[1:].partition(" ")
        skill = self.config.skills.get(name.strip())
        if skill is None or not skill.user_invocable:
            return prompt
        from headwire.runtime.skills import expand

        return expand(skill, args.strip())

    async def _stop_blocked(self, last_text: str) -> bool:
        """``Stop``: whether a hook keeps the turn going (its reason becomes the next prompt),
        at most the cap's times in a row."""
        if self.parent is not None or self.config.hooks is None:
            return False
        verdict = await self.hook(
            "Stop",
            None,
            {"stop_hook_active": self.stop_blocks > 0, "last_assistant_message": last_text},
        )
        if verdict is None or not verdict.blocked:
            self.stop_blocks = 0
            return False
        self.stop_blocks += 1
        if self.stop_blocks > self.config.hooks.stop_cap:
            warn(f"headwire: Stop hooks blocked {self.config.hooks.stop_cap} times; stopping")
            return False
        self._prompt(verdict.reason or "A Stop hook asked to continue.")
        return True

    async def _pre_compact(self, trigger: ev.CompactionTrigger) -> bool:
        """``PreCompact`` (matched on ``manual`` or ``auto``): whether the compaction goes on
        (a blocking hook skips it; a request still too long then fails as it would)."""
        verdict = await self.hook(
            "PreCompact", trigger, {"trigger": trigger, "custom_instructions": None}
        )
        return verdict is None or not verdict.blocked

    async def _post_compact(self, trigger: ev.CompactionTrigger, summary: str) -> None:
        """``PostCompact``: the compaction is done; the hooks get its summary."""
        await self.hook("PostCompact", trigger, {"trigger": trigger, "compact_summary": summary})

    async def end_session(self, reason: str = "other") -> None:
        """``SessionEnd``: the session is over (every mode calls this once, when it closes)."""
        if self.session_started:
            await self.hook("SessionEnd", reason, {"reason": reason})

    @staticmethod
    def _internal_error(exc: BaseException) -> str:
        warn("headwire: the turn failed:\n" + "".join(traceback.format_exception(exc)))
        return f"Internal error: {type(exc).__name__}: {exc}"

    async def run_subtask(self, prompt: str) -> tuple[str, int]:
        """Run a subagent's task to its final text; returns ``(text, tool_uses)``.

        Publishes the subagent's events (tagged with its ``parent``) but no turn start or end;
        errors propagate (a run limit as :class:`~headwire.runtime.agent.limits.LimitReached`).
        """
        stats = self._stats = _Stats()
        self._prompt(prompt)
        text = ""
        while True:
            calls, text = await self._model_call(stats, Turn())
            if not calls:
                return text, stats.tool_calls
            await self._run_calls(calls, stats)

    def _prompt(self, prompt: str, hook_context: str = "", reminder: str = "") -> None:
        content = f"{reminder}\n\n{prompt}" if reminder else prompt
        if hook_context:  # kept apart from what the user wrote, and not forgeable by it
            escaped = hook_context.replace("<", "&lt;").replace(">", "&gt;")
            tag = "qwen:user-prompt-submit-context"  # upstream's tag
            content += f"\n\n<{tag}>\n{escaped}\n</{tag}>"
        message = {"role": "user", "content": content}
        self.conversation.append(message)
        self.events(ev.UserPrompt(text=prompt, message=message, parent=self.parent))

    def _abandon_open_calls(self) -> None:
        """After a cancellation, answer the tool calls of the last assistant message that never
        got a result, so the conversation stays valid for the next model call."""
        answered: set[str] = set()
        for message in reversed(self.conversation):
            if message.get("role") == "tool":
                answered.add(str(message.get("tool_call_id")))
                continue
            if message.get("role") != "assistant":
                return
            for call in message.get("tool_calls") or []:
                if call["id"] in answered:
                    continue
                self.conversation.append(
                    {"role": "tool", "tool_call_id": call["id"], "content": CANCELLED_MESSAGE}
                )
                self.events(
                    ev.ToolAbandoned(
                        call_id=call["id"], message=CANCELLED_MESSAGE, parent=self.parent
                    )
                )
            return

    def _finished(
        self,
        started: float,
        stats: _Stats,
        turn: Turn,
        error: str | None,
        subtype: str,
        cancelled: bool,
        limit: ev.Limit | None = None,
    ) -> ev.TurnFinished:
        text = turn.partial_text() if error is not None else turn.last_text
        if turn.structured and error is None:
            text = encode(turn.value).decode()
        return ev.TurnFinished(
            text=text,
            error=error,
            subtype="success" if error is None else subtype,
            num_turns=turn.num_turns,
            duration_ms=int((time.monotonic() - started) * 1000),
            stats=stats.frozen(self.model.name),
            cancelled=cancelled,
            limit=limit if error is not None else None,
            stop_reason=turn.stop_reason,
            structured=turn.structured and error is None,
            structured_output=turn.value if error is None else None,
            cost=self.config.meter.snapshot(),
        )

    def _low_time_note(self) -> str:
        """Once per turn of the main agent, when little of ``--max-duration`` is left: the note
        the model gets at the end of a tool result (:func:`low_time_note`)."""
        turn, limit_s = self._turn, self.config.limits.max_duration_s
        if self.parent is not None or turn is None or turn.deadline is None or turn.warned:
            return ""
        note = low_time_note(limit_s or 0, turn.deadline - time.monotonic())
        if note is None:
            return ""
        turn.warned = True
        return note

    # -- the model call ---------------------------------------------------------------------

    def _active_style(self) -> OutputStyle | None:
        """The output style this agent's calls carry: the main agent's, on the built-in
        prompt only."""
        if self.parent is not None or self.config.system_prompt is not None:
            return None
        return self.config.output_style

    def _system_prompt(self) -> str:
        style = self._active_style()
        prompt = build_system_prompt(
            self.config.system_prompt,
            self.config.context_text,
            self.config.append_system_prompt,
            default=DEFAULT_SYSTEM_PROMPT if style is None else styled_prompt(style),
        )
        if self.hook_context:
            prompt = (prompt + prompt_suffix(self.hook_context)).removeprefix("\n\n---\n\n")
        structured = self.config.structured
        if structured is not None and self.parent is None:  # the main agent's answer only
            prompt = (prompt + prompt_suffix(structured.instructions())).removeprefix("\n\n---\n\n")
        limit_s = self.config.limits.max_duration_s
        if limit_s is not None and self.parent is None:
            prompt = (prompt + prompt_suffix(deadline_prompt(limit_s))).removeprefix("\n\n---\n\n")
        return prompt

    def _tool_schemas(self) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                },
            }
            for t in self.tools.values()
        ]

    async def _model_call(self, stats: _Stats, turn: Turn) -> tuple[list[ToolCall], str]:
        """One model call, the only one there is: it passes the run's limits first (raising
        the one reached), publishes its events and returns its tool calls and text (the text
        streams into ``turn.streaming`` meanwhile; its usage goes to the meter)."""
        await asyncio.sleep(0)  # a suspension point: a cancelled turn stops here
        self.config.limits.before_model_call()
        turn.num_turns += 1
        parent = self.parent
        model_name = self.model.name
        system = self._system_prompt()
        tools = self._tool_schemas()
        fixed = [{"role": "system", "content": system}, *tools]
        if await self.context.before_call(fixed, self.conversation):
            # the summary call may have crossed the budget: the gate's side check again
            self.config.limits.before_side_call()
        self.events(
            ev.ModelCallStarted(message_id=self.new_uuid(), model=model_name, parent=parent)
        )
        calls: list[ToolCall] = []
        text_parts = turn.streaming = []
        thinking_parts: list[str] = []
        usage = Usage()
        stop_reason: str | None = None
        call_started = time.monotonic()
        stats.requests += 1
        try:
            async for event in self._stream_fitting(system, tools, fixed):
                if isinstance(event, TextDelta):
                    if event.text:
                        text_parts.append(event.text)
                        self.events(ev.TextDelta(text=event.text, parent=parent))
                elif isinstance(event, ThinkingDelta):
                    thinking_parts.append(event.text)
                    self.events(ev.ThinkingDelta(text=event.text, parent=parent))
                elif isinstance(event, ToolCall):
                    calls.append(event)
                    self.events(
                        ev.ToolUse(
                            call_id=event.call_id, name=event.name, args=event.args, parent=parent
                        )
                    )
                elif isinstance(event, Finished):
                    usage = event.usage or Usage()
                    stop_reason = event.stop_reason
        finally:
            stats.api_ms += int((time.monotonic() - call_started) * 1000)
        stats.usage = stats.usage + usage
        self.config.meter.add(str(getattr(self.model, "answered_by", model_name)), usage)
        turn.stop_reason = "tool_use" if calls else (stop_reason or "end_turn")
        text = "".join(text_parts)
        turn.streaming = []
        assistant: dict[str, Any] = {"role": "assistant", "content": text or None}
        if thinking_parts:
            assistant["reasoning_content"] = "".join(thinking_parts)
        if calls:
            assistant["tool_calls"] = [
                {
                    "id": c.call_id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": encode(c.args).decode()},
                }
                for c in calls
            ]
        self.conversation.append(assistant)
        self.context.observe(usage, self._estimated, self.conversation)
        self.events(ev.ModelCallFinished(usage=usage, message=assistant, parent=parent))
        return calls, text

    async def _stream_fitting(
        self, system: str, tools: list[dict[str, Any]], fixed: list[dict[str, Any]]
    ) -> AsyncIterator[ModelEvent]:
        """The model's stream for the conversation; when the provider says the request is too
        long before answering, the conversation is compacted and the call made once more (a
        second refusal is the call's error)."""
        for attempt in (1, 2):
            messages = ([{"role": "system", "content": system}] if system else []) + list(
                self.conversation
            )
            request = ModelRequest(model=self.model.name, messages=messages, tools=tools)
            self._estimated = self.context.raw_estimate(fixed, self.conversation)
            yielded = False
            try:
                async for event in self.model.stream(request):
                    yielded = True
                    yield event
                return
            except ModelError as exc:
                if yielded or not self.context.overflowed(exc):
                    raise
                if attempt == 2 or not await self.context.compact(
                    "auto",
                    fixed,
                    self.conversation,
                    self.context.estimate(fixed, self.conversation),
                ):
                    raise ModelError(
                        "The conversation does not fit in the model's context window "
                        f"({self.context.budget().window} tokens) even after compacting it: "
                        f"{exc.message}",
                        status=exc.status,
                    ) from exc

    async def _ask_aside(self, prompt: str) -> str | None:
        """One tool-free call to the session's model on ``prompt``, outside the conversation
        (a tool's side question: ``web_fetch``'s prompt about a page).  Its usage goes to the
        meter, so the budget counts it, and it passes the run's limits gate first (a spent
        budget or a stopped turn raises); a failed call is ``None`` (the tool falls back)."""
        self.config.limits.before_side_call()
        request = ModelRequest(
            model=self.model.name, messages=[{"role": "user", "content": prompt}], tools=[]
        )
        parts: list[str] = []
        usage = Usage()
        try:
            async for event in self.model.stream(request):
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, Finished):
                    usage = event.usage or Usage()
        except ModelError:
            return None
        self.config.meter.add(str(getattr(self.model, "answered_by", self.model.name)), usage)
        return "".join(parts).strip() or None

    # -- tools ------------------------------------------------------------------------------

    async def _run_calls(self, calls: list[ToolCall], stats: _Stats) -> None:
        """Run one model message's calls in order.  When the turn is cancelled, the running
        call and every later one finish with an "Operation cancelled." result; when a run
        limit refuses a call, it and every later one finish with a result saying they did not
        run (published like any other, so every wire and the recording answer every
        ``tool_use`` they showed, a subagent's with its ``parent``)."""
        for index, call in enumerate(calls):
            try:
                await self._run_tool(call, stats)
            except asyncio.CancelledError:
                for pending in calls[index:]:
                    self._cancelled_result(pending, announced=pending is call)
                raise
            except LimitReached as reached:
                for pending in calls[index:]:
                    self._cancelled_result(pending, announced=False, message=str(reached))
                raise

    def _cancelled_result(
        self, call: ToolCall, *, announced: bool, message: str = CANCELLED_MESSAGE
    ) -> None:
        """A call the cancellation (or a run limit) cut off (``announced``: its
        ``ToolCallPending`` went out; the only suspension after it is the tool's run, so it has
        no result yet)."""
        if not announced:
            self.events(
                ev.ToolCallPending(
                    call_id=call.call_id, name=call.name, args=call.args, parent=self.parent
                )
            )
        self.conversation.append({"role": "tool", "tool_call_id": call.call_id, "content": message})
        response = ev.ToolResponse(
            call_id=call.call_id,
            name=call.name,
            args=call.args,
            error=message,
            error_type="cancelled",
        )
        self.events(
            ev.ToolFinished(
                response=response, model_text=message, artifact=None, parent=self.parent
            )
        )

    async def _run_tool(self, call: ToolCall, stats: _Stats) -> None:
        """One tool call, the only way one runs: it passes the run's limits first (raising the
        one reached before anything is published for it), then its checks and its run."""
        await asyncio.sleep(0)  # a suspension point: a cancelled turn stops here
        self.config.limits.before_tool_call()
        started = time.monotonic()
        self.events(
            ev.ToolCallPending(
                call_id=call.call_id, name=call.name, args=call.args, parent=self.parent
            )
        )
        outcome = redact_outcome(await self._execute(call))  # no registered secret leaves
        failed = outcome.error is not None
        stats.count_tool(call.name, failed, int((time.monotonic() - started) * 1000))
        text = model_text(call.name, outcome, self.artifacts) + self._low_time_note()
        self.conversation.append({"role": "tool", "tool_call_id": call.call_id, "content": text})
        response = ev.ToolResponse(
            call_id=call.call_id,
            name=call.name,
            args=call.args if outcome.ran_input is None else outcome.ran_input,
            output=None if failed else text,
            part_error=text if failed and outcome.llm_text else None,
            error=outcome.error,
            error_type=outcome.error_type,
            display=outcome.display,
        )
        self.events(
            ev.ToolFinished(
                response=response,
                model_text=text,
                artifact=str(outcome.artifact) if outcome.artifact else None,
                parent=self.parent,
            )
        )

    def _tool_fields(self, call: ToolCall, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "tool_name": call.name,
            "tool_input": args,
            "tool_use_id": call.call_id,
            "tool_call_id": call.call_id,
        }

    def _pre_tool_refusal(self, tool: Tool, verdict: Verdict) -> ToolOutcome | None:
        """A ``PreToolUse``/``PermissionRequest`` verdict's refusal: a deny (or an ``ask`` no
        one can answer), or an ``updatedInput`` the tool's schema or the rules refuse."""
        if verdict.blocked or (verdict.decision == "ask" and self.ask is None):
            # the hook's reason as upstream gives it to the model (exit 2: its stderr)
            msg = verdict.reason or f'Tool "{tool.name}" was blocked by a hook.'
            return ToolOutcome(llm_text=msg, error=msg, error_type=EXECUTION_DENIED)
        if verdict.updated_input is not None:
            from headwire.runtime.tools.schema import tool_input_problem

            problem = tool_input_problem(tool, verdict.updated_input)
            if problem is not None:
                msg = f"A hook's updatedInput for {tool.name} is not valid: {problem}"
                return ToolOutcome(llm_text=msg, error=msg, error_type="invalid_tool_params")
            return self.config.policy.check_updated(tool, verdict.updated_input)
        return None

    async def _post_tool(
        self, call: ToolCall, tool: Tool, args: dict[str, Any], outcome: ToolOutcome, ran: float
    ) -> None:
        """``PostToolUse`` (the tool's whole output) or ``PostToolUseFailure``; what the hooks
        add (context, a block's reason) is appended to the model's text."""
        fields = self._tool_fields(call, args)
        fields["duration_ms"] = int((time.monotonic() - ran) * 1000)
        if outcome.error is None:
            fields["tool_response"] = {
                "llm_content": outcome.llm_text,  # what the model gets (a large output: cut)
                "display": outcome.display,  # the whole output, not a wire preview
                "output_file": str(outcome.artifact) if outcome.artifact else None,
            }
            verdict = await self.hook("PostToolUse", tool.name, fields)
        else:
            fields["error"] = outcome.error
            fields["is_interrupt"] = outcome.error_type == "cancelled"
            verdict = await self.hook("PostToolUseFailure", tool.name, fields)
        if verdict is None:
            return
        notes = [n for n in (verdict.reason if verdict.blocked else "", verdict.context) if n]
        if notes:
            outcome.llm_text += "\n\n" + "\n".join(notes)

    async def _execute(self, call: ToolCall) -> ToolOutcome:
        tool = self.tools.get(call.name)
        if tool is None:
            msg = missing_tool_message(call.name, self.tools)
            return ToolOutcome(llm_text=msg, error=msg, error_type="tool_not_registered")
        problem = tool.validate(call.args)
        if problem is not None:
            return ToolOutcome(llm_text=problem, error=problem, error_type="invalid_tool_params")
        args = call.args
        pre = await self.hook("PreToolUse", tool.name, self._tool_fields(call, args))
        if pre is not None:
            refused = self._pre_tool_refusal(tool, pre)
            if refused is not None:
                return refused
            args = pre.updated_input if pre.updated_input is not None else args
        ruling = self.config.policy.decide(tool, args)
        if pre is not None and ruling.verdict != "deny" and pre.decision in ("allow", "ask"):
            # a hook's allow skips the question, its ask asks even where the mode would not
            ruling = dataclasses.replace(
                ruling, verdict="allow" if pre.decision == "allow" else "ask"
            )
        if ruling.verdict == "ask":
            asked = await self.hook("PermissionRequest", tool.name, self._tool_fields(call, args))
            if asked is not None and asked.decision in ("allow", "deny"):
                refused = self._pre_tool_refusal(tool, asked)
                if refused is not None:
                    return refused
                args = asked.updated_input if asked.updated_input is not None else args
                ruling = dataclasses.replace(ruling, verdict="allow")
        if ruling.verdict == "ask" and self.ask is not None:
            answer = await self.ask(tool, call.call_id, args)
            if answer.interrupt:
                self.cancelled.set()
            if not answer.allow:
                msg = answer.message or f'Permission to use "{tool.name}" was denied by the user.'
                return ToolOutcome(llm_text=msg, error=msg, error_type=EXECUTION_DENIED)
            if answer.updated_input is not None:
                refused = self.config.policy.check_updated(tool, answer.updated_input)
                if refused is not None:
                    return refused
                args = answer.updated_input
        elif ruling.verdict != "allow":
            msg = ruling.message or f'Tool "{tool.name}" was denied.'
            return ToolOutcome(llm_text=msg, error=msg, error_type=EXECUTION_DENIED)
        ctx = ToolContext(
            cwd=self.config.cwd,
            artifacts=self.artifacts,
            cancelled=self.cancelled,
            timeout_s=self.config.tool_timeout_s,
            workspace_dirs=self.config.workspace_dirs,
            allow_protected_writes=self.config.policy.allow_protected_writes,
            call_id=call.call_id,
            owner=self,
            ask_model=self._ask_aside,
            progress=lambda content: self.events(
                ev.ToolProgress(call_id=call.call_id, content=content, parent=self.parent)
            ),
        )
        self.events(
            ev.ToolStarted(call_id=call.call_id, name=call.name, args=args, parent=self.parent)
        )
        ran = time.monotonic()
        try:
            outcome = await tool.run(args, ctx)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a crashing tool is a tool error, never a crashed session
            msg = f"Tool {tool.name} failed: {type(exc).__name__}: {exc}"
            outcome = ToolOutcome(llm_text=msg, error=msg, error_type="execution_failed")
        if self.config.hooks is not None:
            await self._post_tool(call, tool, args, outcome, ran)
        if args is not call.args and args != call.args:
            outcome.ran_input = args  # recorded as what ran (a client's updatedInput)
        return outcome
