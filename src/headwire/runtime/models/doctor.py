"""What a model endpoint supports, found by asking it (``headwire doctor``).

Five checks, in order, each with the provider's real client (no retries):

``reachable``   ``GET`` the provider's model list; a connection failure ends the probe
                (:class:`Unreachable`), any HTTP answer counts as reachable;
``model``       the configured model is among the listed ids (unknown when the server has no
                list; failed when it refuses the key);
``streaming``   a one-word answer streams and ends properly;
``tool calls``  offered one tool and told to call it, the model calls it (a server that
                refuses tools, or a model that answers in text, fails the check; a call
                written as text names --parse-text-tool-calls, the flag that reads it);
``usage``       the answers report token usage.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from typing import Any, Protocol

from headwire.errors import ModelServerError
from headwire.records import dataclass
from headwire.runtime.models.base import (
    Finished,
    ModelError,
    ModelEvent,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    Usage,
)
from headwire.wire import encode

PROBE_TOOL = "doctor_echo"
TEXT_CALLS_ADVICE = (
    "the model wrote the tool call as text; run with --parse-text-tool-calls (--auth-type "
    "openai), or set model.parseTextToolCalls: true in settings, to read such calls"
)
"""The tool check's failure when the answer holds a call written as text, naming the fix."""
_TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": PROBE_TOOL,
        "description": "Echo a short text back. Used to check that tool calls work.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "the text to echo"}},
            "required": ["text"],
        },
    },
}


class Unreachable(ModelServerError):
    """The endpoint cannot be reached at all; ``str()`` is the one-line reason."""


class ProbedModel(Protocol):
    """What the doctor needs of a client: its name, streaming, and the model list."""

    name: str

    def stream(self, request: ModelRequest) -> Any: ...

    def list_models(self) -> Awaitable[tuple[int, list[str]]]: ...


@dataclass(frozen=True, slots=True)
class Check:
    """One line of the report: ``ok`` is ``True`` (works), ``False`` (fails) or ``None``
    (could not tell)."""

    name: str
    ok: bool | None
    detail: str


@dataclass(slots=True)
class _Answer:
    events: list[ModelEvent]
    error: ModelError | None
    first_ms: float | None

    @property
    def usage(self) -> Usage | None:
        return next((e.usage for e in self.events if isinstance(e, Finished)), None)


async def _ask(model: ProbedModel, messages: list[dict[str, Any]], tools: list[Any]) -> _Answer:
    events: list[ModelEvent] = []
    started = time.monotonic()
    first: float | None = None
    try:
        async for event in model.stream(ModelRequest(model.name, messages, tools)):
            if first is None:
                first = (time.monotonic() - started) * 1000
            events.append(event)
    except ModelError as error:
        return _Answer(events, error, first)
    return _Answer(events, None, first)


async def probe(model: ProbedModel, model_list_path: str = "models") -> list[Check]:
    """Run the checks against ``model``'s endpoint; raises :class:`Unreachable`."""
    checks: list[Check] = []
    started = time.monotonic()
    try:
        status, ids = await model.list_models()
    except ModelError as error:
        raise Unreachable(error.message) from None
    elapsed = (time.monotonic() - started) * 1000
    checks.append(
        Check("reachable", True, f"GET {model_list_path}: HTTP {status} in {elapsed:.0f} ms")
    )
    checks.append(_model_check(model.name, status, ids))

    system = {"role": "system", "content": "You are a connectivity check. Follow the request."}
    text_answer = await _ask(
        model, [system, {"role": "user", "content": "Reply with the single word: ready"}], []
    )
    checks.append(_streaming_check(text_answer))
    tool_answer = await _ask(
        model,
        [
            system,
            {
                "role": "user",
                "content": f"Call the {PROBE_TOOL} tool with text 'ping'. Do not reply in text.",
            },
        ],
        [_TOOL_SCHEMA],
    )
    checks.append(_tool_check(tool_answer))
    checks.append(_usage_check([text_answer, tool_answer]))
    return checks


def _model_check(name: str, status: int, ids: list[str]) -> Check:
    if status in (401, 403):
        return Check("model", False, f"the server refused the key (HTTP {status})")
    if status != 200 or not ids:
        return Check("model", None, f"the server lists no models (HTTP {status}); not checked")
    if name in ids:
        return Check("model", True, f"{name} is listed ({len(ids)} in all)")
    shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
    return Check("model", False, f"{name} is not among the {len(ids)} listed: {shown}")


def _streaming_check(answer: _Answer) -> Check:
    if answer.error is not None:
        return Check("streaming", False, answer.error.message)
    pieces = sum(isinstance(e, TextDelta | ThinkingDelta) for e in answer.events)
    text = "".join(e.text for e in answer.events if isinstance(e, TextDelta)).strip()
    if not pieces:
        return Check("streaming", False, "the answer ended without any text")
    first = f", the first after {answer.first_ms:.0f} ms" if answer.first_ms is not None else ""
    quoted = text if len(text) <= 40 else text[:40] + "..."
    return Check("streaming", True, f"{pieces} pieces{first}: {quoted!r}")


def _tool_check(answer: _Answer) -> Check:
    if answer.error is not None:
        return Check("tool calls", False, answer.error.message)
    calls = [e for e in answer.events if isinstance(e, ToolCall)]
    if not calls:
        from headwire.runtime.models.text_tools import extract_text_tool_calls

        text = "".join(e.text for e in answer.events if isinstance(e, TextDelta))
        if extract_text_tool_calls(text, [PROBE_TOOL])[1]:
            return Check("tool calls", False, TEXT_CALLS_ADVICE)
        return Check("tool calls", False, "the model answered in text instead of calling the tool")
    call = calls[0]
    if call.name != PROBE_TOOL:
        return Check("tool calls", False, f"the model called an unknown tool {call.name!r}")
    return Check("tool calls", True, f"{call.name} called with {encode(call.args).decode()}")


def _usage_check(answers: list[_Answer]) -> Check:
    usage = next((a.usage for a in answers if a.usage is not None), None)
    if usage is None:
        if all(a.error is not None for a in answers):
            return Check("usage", None, "no answer to read it from")
        return Check("usage", False, "not reported by the server")
    detail = (
        f"{usage.input_tokens} input, {usage.output_tokens} output, "
        f"{usage.total_tokens} total tokens"
    )
    if usage.cached_tokens or usage.cache_write_tokens:
        detail += f" (cache read {usage.cached_tokens}, written {usage.cache_write_tokens})"
    return Check("usage", True, detail)
