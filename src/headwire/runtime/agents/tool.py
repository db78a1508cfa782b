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
from typing import TYPE_CHECKING, Any

from headwire.protocol import messages as m
from headwire.runtime.agents.definitions import AgentDefinition
from headwire.runtime.models.base import ModelError
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome
from headwire.runtime.tools.registry import canonical_name

if TYPE_CHECKING:
    from headwire.runtime.agent import Agent

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
        sid = config.session_id
        task_id = parent.new_uuid()
        started = time.monotonic()
        data: dict[str, Any] = {
            "task_id": task_id,
            "tool_use_id": call_id,
            "description": args["description"],
            "subagent_type": definition.name,
        }
        parent.emit(
            m.system_event(
                uuid=parent.new_uuid(), session_id=sid, subtype="task_started", data=data
            )
        )
        parent.emit(
            m.user_message(
                uuid=parent.new_uuid(),
                session_id=sid,
                parent_tool_use_id=call_id,
                content=[m.text_block(args["prompt"])],
            )
        )
        status = "completed"
        tool_uses = 0
        try:
            text, tool_uses = await child.run_subtask(args["prompt"])
        except asyncio.CancelledError:
            self._failed(parent, "Task was cancelled", call_id)
            self._notify(parent, task_id, call_id, "cancelled", started, tool_uses)
            raise
        except ModelError as exc:
            status = "failed"
            message = exc.message or "Task execution failed"
        except Exception as exc:  # the turn limit, or anything else: the task failed
            status = "failed"
            message = str(exc) or "Task execution failed"
        self._notify(parent, task_id, call_id, status, started, tool_uses)
        if status == "failed":
            self._failed(parent, message, call_id)
            return ToolOutcome(
                llm_text=f"Subagent failed: {message}", error=message, error_type="execution_failed"
            )
        return ToolOutcome(llm_text=text or "(the subagent returned no text)", display=text)

    @staticmethod
    def _notify(
        parent: Agent, task_id: str, call_id: str, status: str, started: float, tool_uses: int
    ) -> None:
        usage = {
            "total_tokens": 0,
            "tool_uses": tool_uses,
            "duration_ms": int((time.monotonic() - started) * 1000),
        }
        parent.emit(
            m.system_event(
                uuid=parent.new_uuid(),
                session_id=parent.config.session_id,
                subtype="task_notification",
                data={"task_id": task_id, "tool_use_id": call_id, "status": status, "usage": usage},
            )
        )

    @staticmethod
    def _failed(parent: Agent, message: str, call_id: str) -> None:
        """Upstream's mid-stream subagent error ``result``, marked as interim: headwire adds
        ``parent_tool_use_id`` (the agent call's id; upstream sends none), so a client can tell
        it from the turn's own ``result``, which always has none."""
        result = m.subagent_error_result(
            uuid=parent.new_uuid(), session_id=parent.config.session_id, message=message
        )
        result["parent_tool_use_id"] = call_id
        parent.emit(result)


def _spawn(parent: Agent, definition: AgentDefinition, call_id: str) -> Agent:
    """A child agent sharing the parent's model, emitter, artifacts, recorder and its live
    permission policy (a view never looser than the definition's ``approvalMode``)."""
    from headwire.runtime.agent import Agent

    config = dataclasses.replace(
        parent.config,
        parent_tool_use_id=call_id,
        depth=parent.config.depth + 1,
        system_prompt=definition.system_prompt or parent.config.system_prompt,
        append_system_prompt=None,
        max_session_turns=-1,
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
    child = Agent(
        config,
        parent.model,
        tools,
        parent.emit,
        parent.artifacts,
        parent.recorder,
        ask=parent.ask,
        observer=parent.observer,
    )
    child.cancelled = parent.cancelled
    child.permission_denials = parent.permission_denials  # its refusals count in the result
    return child
