"""Hooks: which configured hooks an event runs, and what their answers decide (no I/O).

A hook is a command (or an HTTP endpoint) the user's ``hooks`` setting attaches to an event
(Qwen Code's format, see ``docs/hooks.md``): ``{"PreToolUse": [{"matcher": "^Bash$", "hooks":
[{"type": "command", "command": "./check.sh"}]}]}``.  This module is the pure half: the table
of hooks by event (:func:`hook_table`), the matcher rule (:func:`matches`), how one hook's exit
code and output read (:func:`interpret`) and how the answers of the hooks of one event combine
(:func:`combine`).  Running them is :mod:`headwire.runtime.hooks.runner`.

Exit codes: 0 is success, and a JSON object on stdout is the hook's answer (other stdout is
plain text: context for the model on ``SessionStart`` and ``UserPromptSubmit``); 2 blocks, and
stderr is the reason given to the model; anything else (a timeout too) is a non-blocking error
and the run goes on.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from headwire.records import dataclass, field
from headwire.runtime.tools.registry import ALIASES

TOOL_EVENTS = frozenset(
    {"PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionRequest", "PermissionDenied"}
)
"""Events whose matcher is compared with a tool id (and its aliases)."""
NO_MATCHER_EVENTS = frozenset(
    {
        "PostToolBatch",
        "UserPromptSubmit",
        "Stop",
        "SessionDelete",
        "MessageDisplay",
        "TodoCreated",
        "TodoCompleted",
    }
)
"""Events that ignore ``matcher`` (every hook of theirs runs)."""
PLAIN_TEXT_CONTEXT_EVENTS = frozenset({"SessionStart", "UserPromptSubmit", "UserPromptExpansion"})
"""Events where a hook's plain (non-JSON) stdout is context for the model."""
DEFAULT_COMMAND_TIMEOUT_S = 60.0
DEFAULT_HTTP_TIMEOUT_S = 600.0
MAX_CONTEXT_CHARS = 10_000
"""Context a hook adds is cut to this many characters (per event)."""

Outcome = Literal["success", "blocked", "error", "timeout", "cancelled"]


@dataclass(frozen=True, slots=True)
class HookSpec:
    """One configured hook: ``kind`` ``command`` (``command``) or ``http`` (``url``)."""

    event: str
    matcher: str
    kind: str
    command: str = ""
    url: str = ""
    name: str = ""
    timeout_s: float = DEFAULT_COMMAND_TIMEOUT_S
    env: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    allowed_env_vars: tuple[str, ...] = ()
    source: str = ""

    @property
    def label(self) -> str:
        """The hook's name on the wire: its ``name``, else its command or URL."""
        return self.name or self.command or self.url


def _timeout(raw: Any, kind: str) -> float:
    default = DEFAULT_COMMAND_TIMEOUT_S if kind == "command" else DEFAULT_HTTP_TIMEOUT_S
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or raw <= 0:
        return default
    if kind == "command" and raw >= 1000:  # upstream's old unit: milliseconds
        return float(raw) / 1000
    return float(raw)


def hook_table(layers: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, list[HookSpec]]:
    """Every hook of ``layers`` (``(source, hooks setting)`` in merge order), by event."""
    table: dict[str, list[HookSpec]] = {}
    for source, hooks in layers:
        for event, groups in hooks.items():
            for group in groups or ():
                matcher = str(group.get("matcher") or "")
                for hook in group.get("hooks") or ():
                    kind = str(hook.get("type"))
                    table.setdefault(event, []).append(
                        HookSpec(
                            event=event,
                            matcher=matcher,
                            kind=kind,
                            command=str(hook.get("command") or ""),
                            url=str(hook.get("url") or ""),
                            name=str(hook.get("name") or ""),
                            timeout_s=_timeout(hook.get("timeout"), kind),
                            env=dict(hook.get("env") or {}),
                            headers=dict(hook.get("headers") or {}),
                            allowed_env_vars=tuple(hook.get("allowedEnvVars") or ()),
                            source=source,
                        )
                    )
    return table


# -- matchers -------------------------------------------------------------------------------

_MATCH_ALL = frozenset({"", "*", ".*"})


def tool_names(tool_id: str) -> frozenset[str]:
    """``tool_id`` and every alias naming it (Claude Code's ``Bash``, display names ...)."""
    return frozenset({tool_id, *(alias for alias, name in ALIASES.items() if name == tool_id)})


def _split_list(matcher: str) -> list[str] | None:
    """The entries of a ``a | b`` list (``None`` when a ``|`` is inside brackets, a group or
    escaped, so the matcher is a regular expression only)."""
    if "|" not in matcher or re.search(r"\\\||\[[^\]]*\|[^\]]*\]|\([^)]*\|[^)]*\)", matcher):
        return None
    return [entry.strip() for entry in matcher.split("|")]


def matches(matcher: str, target: str, names: frozenset[str] | None = None) -> bool:
    """Whether a group's ``matcher`` selects ``target`` (for tool events ``names`` holds the
    tool id and its aliases, compared exactly; the regular expression sees the id only).

    Empty, ``*`` and ``.*`` match everything; an exact name matches; a ``|`` list matches when
    one entry does (exactly); otherwise the matcher is an unanchored regular expression (one
    that does not compile matches nothing)."""
    names = names or frozenset({target})
    if matcher in _MATCH_ALL or matcher in names:
        return True
    if not matcher.startswith(("^", "(")):
        entries = _split_list(matcher)
        if entries is not None:
            live = [e for e in entries if e]
            if any(e in _MATCH_ALL or e in names for e in live):
                return True
            matcher = "|".join(live)
            if not matcher:
                return False
    try:
        return re.search(matcher, target) is not None
    except re.error:
        return False


def selected(specs: Sequence[HookSpec], event: str, target: str | None) -> list[HookSpec]:
    """The hooks of ``event`` whose matcher selects ``target`` (all when the event has none)."""
    if event in NO_MATCHER_EVENTS or target is None:
        return list(specs)
    names = tool_names(target) if event in TOOL_EVENTS else None
    return [s for s in specs if matches(s.matcher, target, names)]


# -- answers --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HookAnswer:
    """What one hook run decided.

    ``decision``: ``allow``, ``deny`` (``block`` reads as deny), ``ask`` or ``None``;
    ``blocked``: exit code 2, ``continue: false`` or a deny/block decision; ``reason``: why
    (stderr on exit 2); ``context``: text for the model; ``updated_input``: a replacement tool
    input; ``message``: a ``systemMessage``; ``outcome``: for the wire.
    """

    outcome: Outcome
    decision: str | None = None
    reason: str = ""
    context: str = ""
    updated_input: dict[str, Any] | None = None
    message: str = ""
    stop: bool = False
    output: Mapping[str, Any] | None = None

    @property
    def blocked(self) -> bool:
        """The hook refused what the event is about."""
        return self.outcome == "blocked"


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def interpret(event: str, exit_code: int | None, stdout: str, stderr: str) -> HookAnswer:
    """One command hook's answer from its exit code (``None``: it timed out) and output."""
    if exit_code is None:
        return HookAnswer("timeout", reason=stderr)
    if exit_code == 2:
        return HookAnswer("blocked", decision="deny", reason=stderr.strip() or "blocked by hook")
    if exit_code != 0:
        return HookAnswer("error", reason=stderr.strip())
    text = stdout.strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError):
            return HookAnswer("error", reason="the hook's JSON output does not parse")
        if isinstance(data, dict):
            return answer_from_json(event, data)
    if not text:
        return HookAnswer("success")
    if event in PLAIN_TEXT_CONTEXT_EVENTS:
        return HookAnswer("success", context=text)
    return HookAnswer("success", message=text)


def answer_from_json(event: str, data: Mapping[str, Any]) -> HookAnswer:
    """A hook's JSON answer (command stdout, HTTP body, SDK callback result) read for
    ``event``."""
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, Mapping) else {}
    decision = _text(data.get("decision")).lower() or None
    reason = _text(data.get("reason")) or _text(data.get("stopReason"))
    updated: Any = None
    if event == "PreToolUse":
        pd = _text(specific.get("permissionDecision")).lower()
        if pd:
            decision = pd
            reason = _text(specific.get("permissionDecisionReason")) or reason
        updated = specific.get("updatedInput")
    elif event == "PermissionRequest":
        verdict = specific.get("decision")
        if isinstance(verdict, Mapping):
            behavior = _text(verdict.get("behavior")).lower()
            decision = behavior or decision
            reason = _text(verdict.get("message")) or reason
            updated = verdict.get("updatedInput")
    if decision == "block":
        decision = "deny"
    if decision == "approve":
        decision = "allow"
    if decision not in ("allow", "deny", "ask"):
        decision = None
    stop = data.get("continue") is False
    blocked = decision == "deny" or stop
    if stop and not reason:
        reason = _text(data.get("stopReason"))
    return HookAnswer(
        "blocked" if blocked else "success",
        decision=decision,
        reason=reason,
        context=_text(specific.get("additionalContext")),
        updated_input=dict(updated) if isinstance(updated, Mapping) else None,
        message=_text(data.get("systemMessage")),
        stop=stop,
        output=data,
    )


@dataclass(frozen=True, slots=True)
class Verdict:
    """The combined answer of the hooks of one event: a deny wins over ask, ask over allow;
    the last ``updated_input`` wins; contexts and reasons add up."""

    decision: str | None = None
    reason: str = ""
    context: str = ""
    updated_input: dict[str, Any] | None = None
    stop: bool = False
    ran: int = 0

    @property
    def blocked(self) -> bool:
        """A hook refused."""
        return self.decision == "deny"


def combine(answers: Sequence[HookAnswer]) -> Verdict:
    """One :class:`Verdict` from the answers of an event's hooks (errors and timeouts count
    as no opinion: the run goes on)."""
    decisions = [a.decision for a in answers if a.decision]
    decision = next((d for d in ("deny", "ask", "allow") if d in decisions), None)
    if any(a.blocked for a in answers):
        decision = "deny"
    reasons = [a.reason for a in answers if a.reason and (a.blocked or a.decision)]
    contexts = [a.context for a in answers if a.context]
    updated = next((a.updated_input for a in reversed(answers) if a.updated_input), None)
    context = "\n".join(contexts)[:MAX_CONTEXT_CHARS]
    return Verdict(
        decision=decision,
        reason="\n".join(reasons),
        context=context,
        updated_input=updated,
        stop=any(a.stop for a in answers),
        ran=len(answers),
    )


__all__ = [
    "NO_MATCHER_EVENTS",
    "TOOL_EVENTS",
    "HookAnswer",
    "HookSpec",
    "Verdict",
    "answer_from_json",
    "combine",
    "hook_table",
    "interpret",
    "matches",
    "selected",
    "tool_names",
]
