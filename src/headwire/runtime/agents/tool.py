"""The ``agent`` tool: runs a subagent with its own model loop and tools.

Every message the subagent produces reaches the wire with ``parent_tool_use_id`` = the agent
call's id, in upstream order: ``system/task_started``, the echo of the task prompt as a ``user``
message, the subagent's ``assistant`` messages and its ``tool_result``s (projected at the same
emitter boundary as the main agent's), then ``system/task_notification``.  When the subagent fails
or is cancelled, an interim error ``result`` is emitted as upstream does, marked with the agent
call's ``parent_tool_use_id`` (upstream leaves it out, which makes it look like the end of the
turn), and the agent call itself fails (or the cancellation propagates to the parent).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import TYPE_CHECKING, Any, Literal

from headwire import events as ev
from headwire.runtime.agents.definitions import AgentDefinition
from headwire.runtime.models.base import ModelError
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.registry import canonical_name

if TYPE_CHECKING:
    from headwire.runtime.agent.loop import Agent

AGENT_TOOL_NAME = "agent"


class AgentTool:
    """Delegates a task to a subagent (upstream's ``agent`` tool and schema)."""

    name = AGENT_TOOL_NAME
    display_name = "Agent"
    kind: ToolKind = "think"

    def __init__(self, agents: dict[str, AgentDefinition]) -> None:
        self.agents = agents
        names = ", ".join(sorted(agents))
        self.description = (
            "Launch a subagent to handle a multi-step task on its own and report back. "
            f"Available agent types: {names}."
        )
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "description": {
                    "type": "string",
                    "description": "A short (3-5 word) description of the task",
                },
                "prompt": {"type": "string", "description": "The task for the agent to perform"},
                "subagent_type": {"type": "string", "description": "The named agent type to use"},
                "run_in_background": {
                    "type": "boolean",
                    "default": False,
                    "description": "Accepted; headless runs wait for the result",
                },
            },
            "required": ["description", "prompt"],
        }

    def validate(self, args: dict[str, Any]) -> str | None:
        for key in ("description", "prompt"):
            if not isinstance(args.get(key), str) or not args[key].strip():
                return f"params must have required property '{key}'"
        kind = args.get("subagent_type", "general-purpose")
        if not isinstance(kind, str) or (kind and kind not in self.agents):
            return f"Unknown subagent_type {kind!r}. Available: {', '.join(sorted(self.agents))}"
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        return False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        parent: Agent = ctx.owner
        definition = self.agents[args.get("subagent_type") or "general-purpose"]
        call_id = ctx.call_id
        config = parent.config
        if config.depth + 1 > config.max_subagent_depth:
            msg = (
                f"Subagent depth limit reached ({config.max_subagent_depth}); "
                "this agent cannot start another subagent."
            )
            return ToolOutcome(llm_text=msg, error=msg, error_type="execution_denied")
        child = _spawn(parent, definition, call_id)
        task_id = parent.new_uuid()
        started = time.monotonic()
        publish = parent.events
        publish(
            ev.SubagentStarted(
                task_id=task_id,
                call_id=call_id,
                description=args["description"],
                subagent_type=definition.name,
                prompt=args["prompt"],
                parent=parent.parent,
            )
        )

        def finished(status: Literal["completed", "failed", "cancelled"], tool_uses: int) -> None:
            publish(
                ev.SubagentFinished(
                    task_id=task_id,
                    call_id=call_id,
                    status=status,
                    duration_ms=int((time.monotonic() - started) * 1000),
                    tool_uses=tool_uses,
                    parent=parent.parent,
                )
            )

        tool_uses = 0
        hook_fields = {"agent_id": call_id, "agent_type": definition.name}
        started_hook = await parent.hook("SubagentStart", definition.name, hook_fields)
        if started_hook is not None and started_hook.blocked:
            msg = f"Subagent blocked by a SubagentStart hook: {started_hook.reason}"
            finished("failed", 0)
            return ToolOutcome(llm_text=msg, error=msg, error_type="execution_denied")
        task = args["prompt"]
        if started_hook is not None and started_hook.context:
            task += "\n\n" + started_hook.context
        try:
            text, tool_uses = await child.run_subtask(task)
        except asyncio.CancelledError:
            publish(
                ev.SubagentFailed(
                    message="Task was cancelled", call_id=call_id, parent=parent.parent
                )
            )
            finished("cancelled", tool_uses)
            raise
        except ModelError as exc:
            message = exc.message or "Task execution failed"
        except Exception as exc:  # a run limit (it stops the parent at its next step), or else
            message = str(exc) or "Task execution failed"
        else:
            stop_fields = {**hook_fields, "last_assistant_message": text}
            stopped = await parent.hook("SubagentStop", definition.name, stop_fields)
            if stopped is not None and stopped.context:
                text = f"{text}\n\n{stopped.context}" if text else stopped.context
            finished("completed", tool_uses)
            return ToolOutcome(llm_text=text or "(the subagent returned no text)", display=text)
        finished("failed", tool_uses)
        publish(ev.SubagentFailed(message=message, call_id=call_id, parent=parent.parent))
        return ToolOutcome(
            llm_text=f"Subagent failed: {message}", error=message, error_type="execution_failed"
        )


def _spawn(parent: Agent, definition: AgentDefinition, call_id: str) -> Agent:
    """A child agent sharing the parent's model, event stream, artifacts and cancellation, the
    run's limits (one :class:`~headwire.runtime.agent.limits.RunLimits`: its model and tool calls
    count with the parent's), and its live permission policy (a view never looser than the
    definition's ``approvalMode``)."""
    from headwire.runtime.agent.loop import Agent

    config = dataclasses.replace(
        parent.config,
        parent_tool_use_id=call_id,
        depth=parent.config.depth + 1,
        system_prompt=definition.system_prompt or parent.config.system_prompt,
        append_system_prompt=None,
        policy=parent.config.policy.narrowed(definition.approval_mode),
    )
    tools = list(parent.tools.values())  # a definition picks among these, never adds
    if definition.tools is not None:
        allowed = {canonical_name(name) for name in definition.tools}
        tools = [
            t
            for t in tools
            if canonical_name(t.name) in allowed or t.display_name in definition.tools
        ]
    if config.depth >= config.max_subagent_depth:
        tools = [t for t in tools if t.name != AGENT_TOOL_NAME]
    return Agent(
        config,
        parent.model,
        tools,
        parent.events,
        parent.artifacts,
        ask=parent.ask,
        cancelled=parent.cancelled,
    )
