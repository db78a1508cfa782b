"""Tool calls of an OpenAI-compatible stream, assembled from ``delta.tool_calls`` fragments.

Fragments are matched by ``index``; without one, a new ``id`` opens a call and anything else
continues the last one; a new ``id`` on an index already holding another call opens a new
call.  The name may come whole, repeated, split or cumulative; the arguments split anywhere,
as an object, or resent whole.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from headwire.records import dataclass, field
from headwire.runtime.models.base import Usage
from headwire.runtime.models.http_base import int_field
from headwire.wire import dumps, loads


@dataclass(slots=True)
class PartialCall:
    """One tool call being assembled from ``delta.tool_calls`` fragments."""

    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class CallSlots:
    """The calls of one answer so far, in order of first appearance."""

    calls: list[PartialCall] = field(default_factory=list)
    slot_of_index: dict[int, int] = field(default_factory=dict)
    last_slot: int | None = None


def merge_call(state: CallSlots, fragment: dict[str, Any]) -> None:
    """Fold one ``delta.tool_calls[]`` fragment into the call it continues (or a new one)."""
    call_id = fragment.get("id") if isinstance(fragment.get("id"), str) else ""
    index = fragment.get("index")
    slot: int | None
    if isinstance(index, int) and not isinstance(index, bool):
        slot = state.slot_of_index.get(index)
        if slot is not None and call_id and state.calls[slot].call_id not in ("", call_id):
            slot = None  # another call reusing the index
    else:
        known = {c.call_id: n for n, c in enumerate(state.calls) if c.call_id}
        slot = known.get(call_id) if call_id else state.last_slot
        index = None
    if slot is None:
        state.calls.append(PartialCall())
        slot = len(state.calls) - 1
        if index is not None:
            state.slot_of_index[index] = slot
    state.last_slot = slot
    partial = state.calls[slot]
    if call_id and not partial.call_id:
        partial.call_id = call_id
    function = fragment.get("function")
    if not isinstance(function, dict):
        return
    name = function.get("name")
    if isinstance(name, str) and name and name != partial.name:
        # whole names repeated or sent cumulatively replace; pieces are concatenated
        partial.name = name if name.startswith(partial.name) else partial.name + name
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        partial.arguments.append(arguments)
    elif isinstance(arguments, dict):  # some servers send the object itself
        partial.arguments.append(dumps(arguments).decode())


def call_arguments(pieces: list[str]) -> dict[str, Any] | None:
    """The arguments object of a call's fragments, or ``None`` when there is none.

    The fragments joined, else the last fragment alone (servers that resend the whole text so
    far), else the first JSON value of the joined text (servers that repeat it).
    """
    raw = "".join(pieces).strip()
    if not raw:
        return {}
    try:
        parsed = loads(raw)
    except orjson.JSONDecodeError:
        parsed = None
        last = pieces[-1].strip()
        if len(pieces) > 1 and last.startswith("{"):
            try:
                parsed = loads(last)
            except orjson.JSONDecodeError:
                parsed = None
        if not isinstance(parsed, dict):
            try:
                parsed, _ = json.JSONDecoder().raw_decode(raw)
            except ValueError:
                parsed = None
    return parsed if isinstance(parsed, dict) else None


def chat_usage(raw: dict[str, Any]) -> Usage:
    """Map OpenAI ``usage`` (with ``prompt_tokens_details.cached_tokens``) to :class:`Usage`."""
    prompt = int_field(raw.get("prompt_tokens"))
    completion = int_field(raw.get("completion_tokens"))
    details = raw.get("prompt_tokens_details")
    cached = int_field(details.get("cached_tokens")) if isinstance(details, dict) else 0
    if not cached:
        cached = int_field(raw.get("prompt_cache_hit_tokens"))  # DeepSeek's spelling
    total = int_field(raw.get("total_tokens")) or prompt + completion
    return Usage(
        input_tokens=prompt, output_tokens=completion, cached_tokens=cached, total_tokens=total
    )
