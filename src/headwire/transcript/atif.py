"""A session recording as an ATIF trajectory (Agent Trajectory Interchange Format, v1.8).

:func:`render_atif` turns the records of a recording (:mod:`headwire.runtime.store.record_events`,
in file order) into one ATIF document, I/O-free; ``--trajectory-out`` and ``headwire sessions
export --format atif`` write it.  What each field means:

* ``steps``: one step per ``user`` record (``source: "user"``, the prompt text) and one per
  model call (``source: "agent"``: the assistant text, ``reasoning_content``, ``tool_calls``
  with the same ids as the stream-JSON ``tool_use`` blocks, and ``observation.results``: the
  model-facing result of each call, ``source_call_id`` naming the call).  ATIF requires a
  result to sit on the step of its call, so a tool observation is part of its model call's step.
  A model call cut off mid-stream (``partial_assistant``) is an agent step with
  ``extra.partial: true`` and no metrics.  ``step_id`` counts from 1 in every trajectory.
* ``metrics`` of an agent step: that call's ``prompt_tokens`` (the whole prompt, cached part
  included), ``completion_tokens`` and ``cached_tokens``, from the same usage the ``result``
  sums; ``null`` (absent) when the provider reported no usage, never 0.  ``cost_usd`` is absent:
  prices apply to the session's total, which ``final_metrics.total_cost_usd`` carries.
* ``final_metrics``: ``total_steps`` and the sums of the steps' metrics (equal to the main
  agent's ``usage`` over the session's ``result`` messages); ``total_cost_usd`` is the session's
  running cost as the last ``result`` said it (``null`` when a model has no price);
  ``extra.model_calls`` counts the main agent's model calls (the sum of the ``result``
  messages' ``num_turns``) and ``extra.with_subagents`` sums the tokens of the main agent and
  every subagent.
* ``subagent_trajectories``: one embedded trajectory per ``agent`` tool call, ``trajectory_id``
  ``"<call id>"``, its own steps and final metrics; the call's observation result refers to it
  (``subagent_trajectory_ref``).
* a tool result longer than ``inline_limit`` characters whose full output was saved as an
  artifact is replaced by a one-line reference and ``extra.artifact`` (``path``, ``sha256``,
  ``bytes``, from ``artifact_info``); otherwise results are whole.
* ``extra`` of the root: ``result``, how the last turn ended (``subtype``, ``is_error``,
  ``errors``, ``num_turns``), absent when no turn finished.

Invariants (property-tested): ``step_id`` runs 1..n in every trajectory; every
``source_call_id`` names a call of its own step; ``final_metrics`` equals the sums of the steps'
metrics; every subagent trajectory is referenced by exactly one observation result.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

JsonDict = dict[str, Any]

ATIF_VERSION = "ATIF-v1.8"
"""The newest ATIF version Harbor 0.25's validator accepts, which this module writes."""

INLINE_LIMIT = 1 << 20
"""Characters of a tool result kept inline; a longer one with an artifact is referenced."""

ArtifactInfo = Callable[[str], JsonDict | None]
"""``path`` -> ``{"path", "sha256", "bytes"}`` of a saved artifact, ``None`` when unreadable."""

_TOKEN_KEYS = (
    ("prompt_tokens", "input_tokens"),
    ("completion_tokens", "output_tokens"),
    ("cached_tokens", "cache_read_input_tokens"),
)


def _text(content: Any) -> str:
    """A message's content as text (a string, or the text parts of a list)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    return ""


def _timestamp(record: JsonDict) -> str | None:
    stamp = record.get("timestamp")
    return f"{stamp}Z" if isinstance(stamp, str) and stamp and not stamp.endswith("Z") else None


def _metrics(usage: Any) -> JsonDict | None:
    """A step's metrics from a recorded usage; ``None`` when the provider reported none."""
    if not isinstance(usage, dict):
        return None
    values = {k: usage.get(src) for k, src in _TOKEN_KEYS}
    if not any(isinstance(v, int) and v > 0 for v in values.values()):
        return None
    return {k: int(v) for k, v in values.items() if isinstance(v, int)}


def _arguments(raw: Any) -> JsonDict:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"_raw": raw}
        return value if isinstance(value, dict) else {"_raw": raw}
    return {}


def _tool_calls(message: JsonDict) -> list[JsonDict]:
    calls = []
    for call in message.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        function = call.get("function") or {}
        calls.append(
            {
                "tool_call_id": str(call.get("id", "")),
                "function_name": str(function.get("name", "")),
                "arguments": _arguments(function.get("arguments")),
            }
        )
    return calls


class _Builder:
    """The steps of one agent (the main agent or one subagent), in record order."""

    def __init__(self) -> None:
        self.steps: list[JsonDict] = []
        self.step_of_call: dict[str, JsonDict] = {}
        self.last_result: JsonDict | None = None
        self.task: JsonDict | None = None

    def add(self, fields: JsonDict) -> JsonDict:
        step = {"step_id": len(self.steps) + 1, **fields}
        self.steps.append(step)
        return step


def _observation(
    record: JsonDict, inline_limit: int, artifact_info: ArtifactInfo | None
) -> JsonDict:
    message = record.get("message") or {}
    content = _text(message.get("content"))
    call_id = str(record.get("call_id") or message.get("tool_call_id") or "")
    result: JsonDict = {"source_call_id": call_id, "content": content}
    extra: JsonDict = {}
    if record.get("is_error"):
        extra["is_error"] = True
    if record.get("abandoned"):
        extra["abandoned"] = True
    artifact = record.get("artifact")
    if isinstance(artifact, str) and len(content) > inline_limit and artifact_info is not None:
        info = artifact_info(artifact)
        if info is not None:
            result["content"] = (
                f"[{len(content)} characters; the full output is the artifact {info['path']} "
                f"({info['bytes']} bytes, sha256 {info['sha256']})]"
            )
            extra["artifact"] = info
    if extra:
        result["extra"] = extra
    return result


def _step_for(
    builder: _Builder, record: JsonDict, inline_limit: int, artifact_info: ArtifactInfo | None
) -> None:
    kind = record.get("type")
    if kind == "user":
        message = record.get("message") or {}
        builder.add(
            {
                "source": "user",
                "timestamp": _timestamp(record),
                "message": _text(message.get("content")),
            }
        )
    elif kind == "assistant":
        message = record.get("message") or {}
        step: JsonDict = {
            "source": "agent",
            "timestamp": _timestamp(record),
            "message": _text(message.get("content")),
            "llm_call_count": 1,
        }
        reasoning = message.get("reasoning_content")
        if isinstance(reasoning, str) and reasoning:
            step["reasoning_content"] = reasoning
        calls = _tool_calls(message)
        if calls:
            step["tool_calls"] = calls
        metrics = _metrics(record.get("usage"))
        if metrics is not None:
            step["metrics"] = metrics
        step = builder.add(step)
        for call in calls:
            builder.step_of_call[call["tool_call_id"]] = step
    elif kind == "partial_assistant":
        step = {
            "source": "agent",
            "timestamp": _timestamp(record),
            "message": str(record.get("content") or ""),
            "extra": {"partial": True},
        }
        if record.get("reasoning_content"):
            step["reasoning_content"] = str(record["reasoning_content"])
        builder.add(step)
    elif kind == "tool_result":
        result = _observation(record, inline_limit, artifact_info)
        owner = builder.step_of_call.get(result["source_call_id"])
        if owner is None:  # a result without its call (a resumed, repaired history)
            result.pop("source_call_id")
            owner = builder.add(
                {"source": "system", "timestamp": _timestamp(record), "message": ""}
            )
        owner.setdefault("observation", {"results": []})["results"].append(result)
    elif kind == "result":
        builder.last_result = record


def _final_metrics(steps: list[JsonDict]) -> JsonDict:
    totals: JsonDict = {"total_steps": len(steps)}
    for key, _ in _TOKEN_KEYS:
        known = [s["metrics"][key] for s in steps if key in s.get("metrics", {})]
        totals[f"total_{key}"] = sum(known) if known else None
    return totals


def _clean(value: Any) -> Any:
    """``value`` without ``None`` members (ATIF omits what is unknown)."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def render_atif(
    records: Iterable[JsonDict],
    *,
    session_id: str,
    version: str,
    model_name: str | None = None,
    inline_limit: int = INLINE_LIMIT,
    artifact_info: ArtifactInfo | None = None,
) -> JsonDict:
    """The ATIF document of a recording's ``records`` (see the module docstring)."""
    main = _Builder()
    subagents: dict[str, _Builder] = {}
    for record in records:
        if not isinstance(record, dict):
            continue
        parent = record.get("parent_tool_use_id")
        if record.get("type") == "task_started":
            call_id = str(record.get("call_id") or "")
            subagents.setdefault(call_id, _Builder()).task = record
            continue
        builder = main if not parent else subagents.setdefault(str(parent), _Builder())
        _step_for(builder, record, inline_limit, artifact_info)
    last = main.last_result
    if model_name is None and last is not None and isinstance(last.get("model_usage"), dict):
        model_name = next(iter(last["model_usage"]), None)
    embedded = []
    with_subagents = _final_metrics(main.steps)
    for call_id, sub in subagents.items():
        if not sub.steps:
            sub.add({"source": "system", "message": "(the subagent recorded no step)"})
        owner = main.step_of_call.get(call_id)
        for result in (owner or {}).get("observation", {}).get("results", []):
            if result.get("source_call_id") == call_id:
                result["subagent_trajectory_ref"] = [
                    {"trajectory_id": call_id, "session_id": session_id}
                ]
        task = sub.task or {}
        metrics = _final_metrics(sub.steps)
        for key, value in metrics.items():
            if key != "total_steps" and value is not None:
                with_subagents[key] = (with_subagents[key] or 0) + value
        embedded.append(
            {
                "schema_version": ATIF_VERSION,
                "session_id": session_id,
                "trajectory_id": call_id,
                "agent": {
                    "name": f"headwire/{task.get('subagent_type') or 'subagent'}",
                    "version": version,
                    "model_name": model_name,
                    "extra": {"description": task.get("description"), "call_id": call_id},
                },
                "steps": sub.steps,
                "final_metrics": metrics,
            }
        )
    steps = main.steps or [
        {"step_id": 1, "source": "system", "message": "(the session recorded no step)"}
    ]
    final = _final_metrics(main.steps)
    final["total_steps"] = len(steps)
    with_subagents.pop("total_steps", None)
    calls = sum(1 for s in main.steps if s.get("llm_call_count"))
    final["extra"] = {"model_calls": calls, "with_subagents": with_subagents}
    document: JsonDict = {
        "schema_version": ATIF_VERSION,
        "session_id": session_id,
        "agent": {"name": "headwire", "version": version, "model_name": model_name},
        "steps": steps,
        "final_metrics": final,
    }
    if last is not None:
        final["total_cost_usd"] = last.get("total_cost_usd")
        errors = [last["error"]] if last.get("error") else []
        document["extra"] = {
            "result": {
                "subtype": last.get("subtype"),
                "is_error": bool(last.get("is_error")),
                "errors": errors,
                "num_turns": last.get("num_turns"),
            }
        }
    if embedded:
        document["subagent_trajectories"] = embedded
    cleaned: JsonDict = _clean(document)
    return cleaned


__all__ = ["ATIF_VERSION", "INLINE_LIMIT", "ArtifactInfo", "render_atif"]
