"""Tool calls that a model wrote as plain text instead of structured ``tool_calls``.

Local servers often lack a tool-call parser for the model they serve, so the call arrives in
``content`` in the model's own format.  :func:`extract_text_tool_calls` recognises:

* Hermes / Qwen 2.5: ``<tool_call>{"name": N, "arguments": {...}}</tool_call>``;
* Qwen3-Coder XML: ``<tool_call><function=N><parameter=P>V</parameter></function></tool_call>``
  (the ``<tool_call>`` wrapper optional);
* Claude-style XML: ``<function_calls><invoke name="N"><parameter name="P">V</parameter>
  </invoke></function_calls>``;
* Mistral ``[TOOL_CALLS][{...}, ...]`` and Llama 3.1 ``<|python_tag|>{...}``;
* a JSON object ``{"name": N, "arguments" | "parameters": {...}}`` (or a list of them), bare
  or in a fenced code block.

Only calls naming an offered tool count, and only when their arguments are a JSON object (a
JSON string holding one is decoded), so an example the model shows in prose is left alone when
it names no tool.  XML parameter values are strings unless the tool's schema gives the
parameter a non-string type and the value parses as JSON.  A closing tag may be missing at the
very end of the text (the server stopped at the model's end token).

This is opt-in (``--parse-text-tool-calls``): the OpenAI-compatible client holds back text
from the first possible start of a call until the answer ends (see :func:`marker_start`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from typing import Any

from headwire.records import dataclass

_DECODER = json.JSONDecoder()

_START = re.compile(
    r"<tool_call>|<function=|<function_calls>|<invoke\s|\[TOOL_CALLS\]|<\|python_tag\|>"
    r"|```[A-Za-z_]{0,12}[ \t]*\n?\s*[\[{]|[\[{]\s*\"(?:name|function)\"\s*:"
)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.S)
_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)(?:</function>|\Z)", re.S)
_QWEN_PARAM = re.compile(r"<parameter=([^>\s]+)>(.*?)(?:</parameter>|(?=<parameter=)|\Z)", re.S)
_FUNCTION_CALLS = re.compile(r"<function_calls>(.*?)(?:</function_calls>|\Z)", re.S)
_INVOKE = re.compile(r"<invoke\s+name=\"([^\"]+)\"\s*>(.*?)(?:</invoke>|\Z)", re.S)
_XML_PARAM = re.compile(r"<parameter\s+name=\"([^\"]+)\"\s*>(.*?)(?:</parameter>|\Z)", re.S)
_FENCE = re.compile(r"```[A-Za-z_]{0,12}[ \t]*\n?(.*?)(?:```|\Z)", re.S)

MAX_FAILED_CANDIDATES = 16
"""Possible calls tried and rejected before the rest of the text is taken as text: each try
may read to the end of the text, so the work stays linear in its size whatever it holds."""
_SPACE = re.compile(r"\s*")

HOLD_BACK_CHARS = 24
"""Non-space characters at the end of the text that may begin a marker still arriving (no
marker has more before the character that completes it)."""
_TAIL = re.compile(rf"(?:\S\s*){{1,{HOLD_BACK_CHARS}}}\Z")


@dataclass(frozen=True, slots=True)
class TextCall:
    """A tool call found in text: the tool's name and its arguments."""

    name: str
    args: dict[str, Any]


def marker_start(text: str) -> int | None:
    """Where the first possible tool call in ``text`` begins, or ``None``."""
    found = _START.search(text)
    return found.start() if found else None


def safe_prefix_length(text: str) -> int:
    """How much of ``text`` (which holds no marker) can be shown now.

    Held back: trailing whitespace, and everything from the first ``<``, ``[``, ``{`` or
    backtick among the last :data:`HOLD_BACK_CHARS` non-space characters, so no marker that a
    later piece completes can begin in what was shown.
    """
    tail = _TAIL.search(text)
    tail_start = tail.start() if tail else len(text)
    cut = len(text)
    for opener in ("<", "[", "{", "`"):
        at = text.find(opener, tail_start)
        if at != -1:
            cut = min(cut, at)
    return len(text[:cut].rstrip())


def extract_text_tool_calls(
    text: str, tools: Mapping[str, Mapping[str, Any]] | Collection[str]
) -> tuple[str, list[TextCall]]:
    """Split ``text`` into what stays text and the tool calls written in it.

    ``tools`` maps each offered tool's name to its JSON schema (or is just the names).  When no
    call is found the text comes back unchanged; otherwise the text around the calls, joined
    and stripped of surrounding whitespace.
    """
    schemas: Mapping[str, Mapping[str, Any]] = (
        tools if isinstance(tools, Mapping) else {name: {} for name in tools}
    )
    kept: list[str] = []
    calls: list[TextCall] = []
    position = 0
    search_from = 0
    failures = 0
    while failures < MAX_FAILED_CANDIDATES:
        found = _START.search(text, search_from)
        if found is None:
            break
        parsed = _parse_at(text, found.start(), schemas)
        if parsed is None:
            failures += 1
            search_from = found.start() + 1
            continue
        end, new_calls = parsed
        kept.append(text[position : found.start()])
        calls += new_calls
        position = search_from = end
    if not calls:
        return text, []
    kept.append(text[position:])
    return "".join(kept).strip(), calls


def _parse_at(
    text: str, start: int, schemas: Mapping[str, Mapping[str, Any]]
) -> tuple[int, list[TextCall]] | None:
    """The calls of the marker at ``start`` and where they end, or ``None`` if it is no call."""
    head = text[start : start + 16]
    if head.startswith("<tool_call>"):
        match = _TOOL_CALL.match(text, start)
        assert match is not None
        inner = match.group(1)
        calls = _function_xml(inner, schemas) if "<function=" in inner else _json_calls(inner)
        return _checked(match.end(), calls, schemas)
    if head.startswith("<function="):
        match = _FUNCTION.match(text, start)
        if match is None:
            return None
        return _checked(match.end(), _qwen_calls([match], schemas), schemas)
    if head.startswith(("<function_calls>", "<invoke")):
        match = _FUNCTION_CALLS.match(text, start) or _INVOKE.match(text, start)
        if match is None:
            return None
        block = match.group(0)
        found = [
            TextCall(m.group(1), _xml_params(_XML_PARAM.finditer(m.group(2)), m.group(1), schemas))
            for m in _INVOKE.finditer(block)
        ]
        return _checked(match.end(), found, schemas)
    if head.startswith(("[TOOL_CALLS]", "<|python_tag|>")):
        offset = len("[TOOL_CALLS]") if head.startswith("[") else len("<|python_tag|>")
        return _json_at(text, start + offset, schemas)
    if head.startswith("```"):
        match = _FENCE.match(text, start)
        if match is None:
            return None
        return _checked(match.end(), _json_calls(match.group(1)), schemas)
    return _json_at(text, start, schemas)


def _json_at(
    text: str, start: int, schemas: Mapping[str, Mapping[str, Any]]
) -> tuple[int, list[TextCall]] | None:
    match = _SPACE.match(text, start)
    at = match.end() if match else start
    try:
        value, end = _DECODER.raw_decode(text, at)
    except ValueError:
        return None
    return _checked(end, _calls_of(value), schemas)


def _checked(
    end: int, calls: list[TextCall] | None, schemas: Mapping[str, Mapping[str, Any]]
) -> tuple[int, list[TextCall]] | None:
    if not calls or any(call.name not in schemas for call in calls):
        return None
    return end, calls


def _json_calls(inner: str) -> list[TextCall] | None:
    try:
        value = json.loads(inner)
    except ValueError:
        return None
    return _calls_of(value)


def _calls_of(value: Any) -> list[TextCall] | None:
    items = value if isinstance(value, list) else [value]
    calls: list[TextCall] = []
    for item in items:
        call = _call_of(item)
        if call is None:
            return None
        calls.append(call)
    return calls


def _call_of(item: Any) -> TextCall | None:
    if not isinstance(item, dict):
        return None
    function = item.get("function")
    if isinstance(function, dict):  # {"type": "function", "function": {...}}
        item = function
    name = item.get("name") or (function if isinstance(function, str) else None)
    args: Any = next((item[k] for k in ("arguments", "parameters", "args") if k in item), {})
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError:
            return None
    if not isinstance(name, str) or not isinstance(args, dict):
        return None
    return TextCall(name, args)


def _function_xml(inner: str, schemas: Mapping[str, Mapping[str, Any]]) -> list[TextCall]:
    return _qwen_calls(list(_FUNCTION.finditer(inner)), schemas)


def _qwen_calls(
    matches: list[re.Match[str]], schemas: Mapping[str, Mapping[str, Any]] | None = None
) -> list[TextCall]:
    return [
        TextCall(m.group(1), _xml_params(_QWEN_PARAM.finditer(m.group(2)), m.group(1), schemas))
        for m in matches
    ]


def _xml_params(
    params: Any, tool: str, schemas: Mapping[str, Mapping[str, Any]] | None
) -> dict[str, Any]:
    properties = ((schemas or {}).get(tool) or {}).get("properties") or {}
    args: dict[str, Any] = {}
    for match in params:
        name, raw = match.group(1), match.group(2)
        value = raw[1:] if raw.startswith("\n") else raw
        value = value[:-1] if value.endswith("\n") else value
        kind = (properties.get(name) or {}).get("type") if isinstance(properties, dict) else None
        if kind not in (None, "string"):
            try:
                args[name] = json.loads(value)
                continue
            except ValueError:
                pass
        args[name] = value
    return args
