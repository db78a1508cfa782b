"""``skill``: load a skill's instructions into the conversation (Qwen Code's ``Skill`` tool).

The model names a skill of the catalogue (:func:`headwire.runtime.skills.catalogue`); the
result is the skill's folder and its body, with ``$ARGUMENTS`` replaced by ``args``.  A skill's
``allowed-tools`` never grants anything: the permission rules and the approval mode still decide
every call the skill's instructions lead to (the list is only shown to the model).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from headwire.runtime.skills import Skill, expand
from headwire.runtime.tools.base import ApprovalMode, ToolContext, ToolKind, ToolOutcome

DESCRIPTION = (
    "Load a skill: instructions for a kind of task, listed in the available_skills reminder. "
    "When a listed skill fits the request, call this tool with its exact name first, then "
    "follow what it returns. Resolve the paths it mentions from its base directory. Do not "
    "load a skill that is already loaded."
)


class SkillTool:
    """The session's skills, loadable by name."""

    name: str = "skill"
    display_name: str = "Skill"
    description: str = DESCRIPTION
    kind: ToolKind = "read"
    parameters: dict[str, Any] = {  # noqa: RUF012
        "type": "object",
        "properties": {
            "skill": {"type": "string", "description": 'The skill\'s name, e.g. "pdf".'},
            "args": {"type": "string", "description": "Optional arguments for the skill."},
        },
        "required": ["skill"],
    }

    def __init__(self, skills: Sequence[Skill]) -> None:
        self.skills = {s.name: s for s in skills if s.model_invocable}

    def validate(self, args: dict[str, Any]) -> str | None:
        """``skill`` a string naming a skill; ``args`` a string when given."""
        name = args.get("skill")
        if not isinstance(name, str) or not name.strip():
            return "params must have required property 'skill'"
        if "args" in args and not isinstance(args["args"], str):
            return "params/args must be string"
        return None

    def needs_approval(self, args: dict[str, Any], mode: ApprovalMode) -> bool:
        """Never asks: it only reads a skill the user installed."""
        return False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutcome:
        """The skill's text, or an error naming the skills there are."""
        name = str(args["skill"]).strip().lstrip("/")
        skill = self.skills.get(name)
        if skill is None:
            known = ", ".join(sorted(self.skills)) or "none"
            msg = f'Skill "{name}" not found. Available skills: {known}'
            return ToolOutcome(llm_text=msg, error=msg, error_type="execution_failed")
        text = expand(skill, str(args.get("args") or ""))
        if skill.allowed_tools is not None:
            text += (
                "\n(This skill names the tools it expects: "
                f"{', '.join(skill.allowed_tools)}. The session's permission rules still apply.)\n"
            )
        return ToolOutcome(llm_text=text, display=skill.description)


__all__ = ["SkillTool"]
