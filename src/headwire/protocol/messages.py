"""Builders of every headless wire message, one function per shape.

Each returns a plain ``dict`` whose insertion order is the key order Qwen Code 0.24.4 writes
(``headwire.wire.encode`` keeps it), so the bytes on the wire line up with upstream's.  Optional
fields that upstream omits when undefined are left out here too.  Ids are passed in: this module
is pure and draws no randomness.
"""

from __future__ import annotations

from typing import Any

JsonDict = dict[str, Any]


def system_init(
    *,
    session_id: str,
    cwd: str,
    tools: list[str],
    mcp_servers: list[JsonDict],
    model: str,
    permission_mode: str,
    slash_commands: list[str],
    version: str,
    agents: list[str],
    sandbox: JsonDict | None = None,
) -> JsonDict:
    """``system/init``: the first message of every run (and of every persistent turn).

    Upstream's keys come first, in upstream's order; ``claude_code_version`` follows them (the
    same version: claude-agent-sdk reads that key and warns on every query that the CLI "is
    too old to report its version" when it is missing; Qwen Code does not write it).
    ``sandbox`` (``{backend, filesystem, network, enforced}``, headwire's field) is appended
    only when a tool execution sandbox is configured."""
    message: JsonDict = {
        "type": "system",
        "subtype": "init",
        "uuid": session_id,
        "session_id": session_id,
        "cwd": cwd,
        "tools": tools,
        "mcp_servers": mcp_servers,
        "model": model,
        "permission_mode": permission_mode,
        "slash_commands": sorted(slash_commands),
        "qwen_code_version": version,
        "agents": agents,
        "claude_code_version": version,
    }
    if sandbox is not None:
        message["sandbox"] = sandbox
    return message


def system_event(
    *, uuid: str, session_id: str, subtype: str, data: JsonDict | None = None
) -> JsonDict:
    """A generic ``system`` event (``task_started``, ``session_start`` ...); ``data`` optional."""
    message: JsonDict = {
        "type": "system",
        "subtype": subtype,
        "uuid": uuid,
        "session_id": session_id,
        "parent_tool_use_id": None,
    }
    if data is not None:
        message["data"] = data
    return message


def compaction_status(
    *,
    uuid: str,
    session_id: str,
    parent_tool_use_id: str | None,
    trigger: str,
    pre_tokens: int,
) -> JsonDict:
    """``system/status`` with ``status: "compacting"`` (Claude Code's): a compaction started;
    ``compact_metadata`` says why (``trigger``) and the estimated request size before it."""
    return {
        "type": "system",
        "subtype": "status",
        "uuid": uuid,
        "session_id": session_id,
        "parent_tool_use_id": parent_tool_use_id,
        "status": "compacting",
        "compact_metadata": {"trigger": trigger, "pre_tokens": pre_tokens},
    }


def compact_boundary(
    *,
    uuid: str,
    session_id: str,
    parent_tool_use_id: str | None,
    trigger: str,
    pre_tokens: int,
    post_tokens: int,
    duration_ms: int,
) -> JsonDict:
    """``system/compact_boundary`` (Claude Code's): the conversation was compacted; headwire
    adds ``post_tokens`` (the estimated request size after it) and ``duration_ms``."""
    return {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": uuid,
        "session_id": session_id,
        "parent_tool_use_id": parent_tool_use_id,
        "compact_metadata": {
            "trigger": trigger,
            "pre_tokens": pre_tokens,
            "post_tokens": post_tokens,
            "duration_ms": duration_ms,
        },
    }


def usage_dict(
    input_tokens: int, output_tokens: int, cached: int | None = None, total: int | None = None
) -> JsonDict:
    """``usage``: input/output tokens, then cache-read and total when the model reported them."""
    usage: JsonDict = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    if cached is not None:
        usage["cache_read_input_tokens"] = cached
    if total is not None:
        usage["total_tokens"] = total
    return usage


def text_block(text: str) -> JsonDict:
    """An assistant ``text`` block."""
    return {"type": "text", "text": text}


def thinking_block(thinking: str, signature: str | None = None) -> JsonDict:
    """An assistant ``thinking`` block; ``signature`` (the subject) omitted when absent."""
    block: JsonDict = {"type": "thinking", "thinking": thinking}
    if signature is not None:
        block["signature"] = signature
    return block


def tool_use_block(call_id: str, name: str, args: JsonDict) -> JsonDict:
    """An assistant ``tool_use`` block: the tool call as the model made it."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def assistant_message(
    *,
    uuid: str,
    session_id: str,
    parent_tool_use_id: str | None,
    model: str,
    content: list[JsonDict],
    usage: JsonDict,
) -> JsonDict:
    """An ``assistant`` message; ``stop_reason`` is ``tool_use`` when every block is a tool use."""
    stop_reason = (
        "tool_use" if content and all(b.get("type") == "tool_use" for b in content) else None
    )
    return {
        "type": "assistant",
        "uuid": uuid,
        "session_id": session_id,
        "parent_tool_use_id": parent_tool_use_id,
        "message": {
            "id": uuid,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "usage": usage,
        },
    }


def tool_result_block(tool_use_id: str, is_error: bool, content: str | None) -> JsonDict:
    """A ``tool_result`` block; ``content`` omitted when semantic selection found nothing."""
    block: JsonDict = {"type": "tool_result", "tool_use_id": tool_use_id, "is_error": is_error}
    if content is not None:
        block["content"] = content
    return block


def user_message(
    *, uuid: str, session_id: str, parent_tool_use_id: str | None, content: list[JsonDict]
) -> JsonDict:
    """A ``user`` message: a tool result (one block) or an echo (at most one text block)."""
    return {
        "type": "user",
        "uuid": uuid,
        "session_id": session_id,
        "parent_tool_use_id": parent_tool_use_id,
        "message": {"role": "user", "content": content},
    }


def run_fields(
    *,
    stop_reason: str | None,
    total_cost_usd: float | None,
    model_usage: JsonDict,
    structured: bool = False,
    structured_output: Any = None,
    exit_code: int = 0,
    retryable: bool = False,
) -> JsonDict:
    """Claude Code's fields of a turn's ``result``, which the claude SDKs read, in the order
    headwire appends them after Qwen Code's: ``stop_reason``, ``total_cost_usd`` (the session's
    running total, ``null`` when a model used has no price), ``modelUsage`` and, when
    ``--json-schema`` was given and matched, ``structured_output``; then headwire's exit
    contract, :func:`exit_contract`."""
    fields: JsonDict = {
        "stop_reason": stop_reason,
        "total_cost_usd": total_cost_usd,
        "modelUsage": model_usage,
    }
    if structured:
        fields["structured_output"] = structured_output
    fields["headwire"] = exit_contract(exit_code, retryable)
    return fields


def exit_contract(exit_code: int, retryable: bool) -> JsonDict:
    """``result.headwire``: ``exit_code``, the code a one-shot run exits with when it ends with
    this result (0, 1, 2, 53, 130, 143: the README's exit-code matrix), and ``retryable``, whether
    the failure is worth retrying unchanged (a model server's HTTP 429 or 5xx, a network failure
    or timeout); ``false`` on success and on every other failure."""
    return {"exit_code": exit_code, "retryable": retryable}


def result_success(
    *,
    uuid: str,
    session_id: str,
    duration_ms: int,
    duration_api_ms: int,
    num_turns: int,
    result: str,
    usage: JsonDict,
    permission_denials: list[JsonDict],
    stats: JsonDict | None = None,
    run: JsonDict | None = None,
) -> JsonDict:
    """The terminal ``result`` of a successful turn: Qwen Code's fields in its order, then
    ``stats`` (Qwen Code writes it in JSON mode; headwire in every mode that asks) and the
    :func:`run_fields`."""
    message: JsonDict = {
        "type": "result",
        "subtype": "success",
        "uuid": uuid,
        "session_id": session_id,
        "is_error": False,
        "duration_ms": duration_ms,
        "duration_api_ms": duration_api_ms,
        "num_turns": num_turns,
        "result": result,
        "usage": usage,
        "permission_denials": permission_denials,
    }
    if stats is not None:
        message["stats"] = stats
    if run is not None:
        message.update(run)
    return message


def result_error(
    *,
    uuid: str,
    session_id: str,
    duration_ms: int,
    duration_api_ms: int,
    num_turns: int,
    usage: JsonDict,
    permission_denials: list[JsonDict],
    message: str,
    subtype: str = "error_during_execution",
    stats: JsonDict | None = None,
    partial: str | None = None,
    run: JsonDict | None = None,
) -> JsonDict:
    """The terminal ``result`` of a failed turn: ``error.message`` (Qwen Code's field).

    ``errors`` (``[message]``) follows ``error``: Claude Code's error results carry it and the
    TypeScript ``@anthropic-ai/claude-agent-sdk`` maps over it unconditionally, so without it
    that client crashes on every error result.  Qwen Code 0.24.4 writes only ``error``.  Then
    ``result``, the partial answer (the last answer text the turn produced, when there is one),
    and the :func:`run_fields`.
    """
    out: JsonDict = {
        "type": "result",
        "subtype": subtype,
        "uuid": uuid,
        "session_id": session_id,
        "is_error": True,
        "duration_ms": duration_ms,
        "duration_api_ms": duration_api_ms,
        "num_turns": num_turns,
        "usage": usage,
        "permission_denials": permission_denials,
    }
    if stats is not None:
        out["stats"] = stats
    out["error"] = {"message": message}
    out["errors"] = [message]
    if partial:
        out["result"] = partial
    if run is not None:
        out.update(run)
    return out


class InterimResult(dict[str, Any]):
    """A ``result`` that does not end the run: a subagent's failure, emitted mid-stream.

    On the wire it is an ordinary error ``result``; upstream sends it without
    ``parent_tool_use_id``, headwire's ``agent`` tool adds the agent call's id so that clients
    can tell it from the turn's own ``result``.  Transports use the type to keep JSON mode's
    array open and Text mode's stdout quiet.
    """


def subagent_error_result(*, uuid: str, session_id: str, message: str) -> InterimResult:
    """Upstream's mid-stream error ``result`` for a subagent that failed or was cancelled."""
    return InterimResult(
        result_error(
            uuid=uuid,
            session_id=session_id,
            duration_ms=0,
            duration_api_ms=0,
            num_turns=0,
            usage=usage_dict(0, 0),
            permission_denials=[],
            message=message,
        )
    )


def stream_event(
    *, uuid: str, session_id: str, parent_tool_use_id: str | None, event: JsonDict
) -> JsonDict:
    """A ``stream_event`` (partial message or progress) wrapping ``event``."""
    return {
        "type": "stream_event",
        "uuid": uuid,
        "session_id": session_id,
        "parent_tool_use_id": parent_tool_use_id,
        "event": event,
    }


def control_request(request_id: str, request: JsonDict) -> JsonDict:
    """A ``control_request`` in either direction."""
    return {"type": "control_request", "request_id": request_id, "request": request}


def control_success(request_id: str, response: JsonDict | None = None) -> JsonDict:
    """A successful ``control_response``."""
    body: JsonDict = {"subtype": "success", "request_id": request_id}
    if response is not None:
        body["response"] = response
    return {"type": "control_response", "response": body}


def control_error(request_id: str, error: str) -> JsonDict:
    """A failed ``control_response`` carrying the error text."""
    return {
        "type": "control_response",
        "response": {"subtype": "error", "request_id": request_id, "error": error},
    }
