"""The conversation (OpenAI chat form) as a Gemini ``generateContent`` request body.

* ``system`` messages: ``systemInstruction: {"parts": [{"text"}]}`` (joined by blank lines);
* ``user`` messages: ``{"role": "user", "parts": [{"text"}]}``;
* ``assistant`` messages: ``{"role": "model", "parts": [{"text"}, {"functionCall": {"name",
  "args"}}...]}``; the first call of a turn carries the ``thoughtSignature`` Gemini gave it
  (Gemini 3 refuses a function call sent back without one; for a turn this process did not
  see, the placeholder Google documents for that case is sent instead);
* ``tool`` messages: ``{"functionResponse": {"name", "response": {"output": text}}}`` parts of
  a ``user`` content, the name taken from the call they answer; consecutive results (and a user
  text right after them) share one content, as Gemini pairs a turn's calls with one reply;
* tools: one ``{"functionDeclarations": [{"name", "description", "parametersJsonSchema"}]}``
  (the JSON Schema as is, so MCP tools need no conversion).

A call's ``id`` is sent back only when Gemini gave one; empty texts are never sent.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from headwire.runtime.models.chat_form import parse_arguments, text_of

JsonDict = dict[str, Any]

UNKNOWN_SIGNATURE = "skip_thought_signature_validator"
"""The ``thoughtSignature`` Google documents for function calls from another source."""


def convert_tools(tools: list[JsonDict]) -> list[JsonDict]:
    """OpenAI function tools as one Gemini ``tools`` entry (empty when none)."""
    declarations: list[JsonDict] = []
    for tool in tools:
        function = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        if not isinstance(function, dict) or not function.get("name"):
            continue
        entry: JsonDict = {"name": function["name"]}
        if function.get("description"):
            entry["description"] = function["description"]
        if isinstance(function.get("parameters"), dict):
            entry["parametersJsonSchema"] = function["parameters"]
        declarations.append(entry)
    return [{"functionDeclarations": declarations}] if declarations else []


def convert_contents(
    messages: list[JsonDict],
    *,
    signatures: Mapping[str, str] | None = None,
    native_ids: Collection[str] = (),
    placeholder_signatures: bool = False,
) -> tuple[JsonDict | None, list[JsonDict]]:
    """``(systemInstruction, contents)`` for ``messages`` in OpenAI form.

    ``signatures`` maps a call id to the ``thoughtSignature`` Gemini sent with it;
    ``native_ids`` are the call ids Gemini itself chose (sent back as ``id``);
    ``placeholder_signatures`` sends :data:`UNKNOWN_SIGNATURE` for a turn's first call when
    its signature is unknown.
    """
    signatures = signatures or {}
    system_parts: list[str] = []
    contents: list[JsonDict] = []
    names: dict[str, str] = {}

    def add(role: str, parts: list[JsonDict]) -> None:
        if not parts:
            return
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": role, "parts": parts})

    for message in messages:
        role = message.get("role")
        text = text_of(message.get("content"))
        if role in ("system", "developer"):
            if text:
                system_parts.append(text)
        elif role == "user":
            add("user", [{"text": text}] if text.strip() else [])
        elif role == "assistant":
            parts: list[JsonDict] = [{"text": text}] if text.strip() else []
            for number, call in enumerate(
                c for c in message.get("tool_calls") or [] if isinstance(c, dict)
            ):
                call_id = str(call.get("id") or "")
                function = call.get("function")
                if not isinstance(function, dict):
                    function = {}
                name = str(function.get("name") or "")
                names[call_id] = name
                payload: JsonDict = {
                    "name": name,
                    "args": parse_arguments(function.get("arguments")),
                }
                if call_id in native_ids:
                    payload["id"] = call_id
                part: JsonDict = {"functionCall": payload}
                signature = signatures.get(call_id)
                if signature is None and number == 0 and placeholder_signatures:
                    signature = UNKNOWN_SIGNATURE
                if signature:
                    part["thoughtSignature"] = signature
                parts.append(part)
            add("model", parts)
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            response: JsonDict = {
                "name": names.get(call_id, "unknown_tool"),
                "response": {"output": text},
            }
            if call_id in native_ids:
                response["id"] = call_id
            add("user", [{"functionResponse": response}])
    if contents and contents[0]["role"] != "user":
        contents.insert(0, {"role": "user", "parts": [{"text": "(continue)"}]})
    system = {"parts": [{"text": "\n\n".join(system_parts)}]} if system_parts else None
    return system, contents
