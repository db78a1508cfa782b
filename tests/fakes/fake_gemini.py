"""A scripted Gemini API server for tests (stdlib only, 127.0.0.1).

``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` answers like Gemini: one
``data: <GenerateContentResponse>`` event per chunk, each line ending in CRLF, with
``candidates[0].content.parts`` holding thought texts (``thought: true``), texts, then all
``functionCall`` parts in one chunk (as Gemini sends them, whole); a last chunk carries
``finishReason`` and ``usageMetadata``.  There is no end marker: the body simply ends.
``GET /v1beta/models`` lists the model (``models/NAME``); ``/v1/`` paths work too.  Errors are
``{"error": {"code", "message", "status"}}`` with Google's status names; 429 may carry a
``RetryInfo`` detail.

Reply keys: those of :mod:`tests.fakes.streaming_fake`, plus ``finish_reason`` (override,
default ``STOP``), ``thought_signature`` (on the first function call), ``retry_delay`` (a
``RetryInfo.retryDelay`` such as ``"0.2s"`` in the error body), ``block_reason`` (a
``promptFeedback`` with no candidates).  ``usage`` uses Gemini's ``usageMetadata`` names;
default ``{"promptTokenCount": 11, "candidatesTokenCount": 3, "totalTokenCount": 14}``.
``error_event`` sends an ``{"error": {...}}`` chunk first.  The key is read from
``x-goog-api-key`` (or ``?key=``); a wrong one gets 400 ``API key not valid`` echoing it.

    python -m tests.fakes.fake_gemini --script FILE --port-file PATH [--log FILE] ...
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, ClassVar
from urllib.parse import unquote

from tests.fakes.streaming_fake import FakeServer, Reply, answer_text, calls_of, serve_main, split

DEFAULT_USAGE = {"promptTokenCount": 11, "candidatesTokenCount": 3, "totalTokenCount": 14}
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
_STREAM_PATH = re.compile(r"^/v1(?:beta)?/models/([^/:]+):streamGenerateContent$")


class FakeGemini(FakeServer):
    """The fake Gemini server (see the module docstring)."""

    api: ClassVar[str] = "gemini"
    extra_keys: ClassVar[frozenset[str]] = frozenset(
        {"finish_reason", "thought_signature", "retry_delay", "block_reason"}
    )

    def is_stream_path(self, path: str, query: dict[str, list[str]]) -> bool:
        return bool(_STREAM_PATH.match(path)) and query.get("alt") == ["sse"]

    def model_of(self, path: str, body: dict[str, Any]) -> str:
        match = _STREAM_PATH.match(path)
        return unquote(match.group(1)) if match else self.model

    def models_listing(self, path: str) -> Any | None:
        if path.rstrip("/") not in ("/v1beta/models", "/v1/models"):
            return None
        model = {
            "name": f"models/{self.model}",
            "displayName": "Fake",
            "supportedGenerationMethods": ["generateContent", "streamGenerateContent"],
        }
        return {"models": [model]}

    def key_sent(self, headers: dict[str, str], query: dict[str, list[str]]) -> str:
        lowered = {k.lower(): v for k, v in headers.items()}
        return lowered.get("x-goog-api-key") or (query.get("key") or [""])[0]

    def auth_error(self, given: str) -> tuple[int, Any]:
        error = self.error_json(
            400, f"API key not valid. Please pass a valid API key. ({given})", {}
        )
        error["error"]["details"] = [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
        ]
        return 400, error

    def overflow_json(self, tokens: int, window: int) -> Any:
        message = (
            f"The input token count ({tokens}) exceeds the maximum number of tokens allowed "
            f"({window})."
        )
        return self.error_json(400, message, {})

    def usage_of(self, prompt: int, answer: int) -> dict[str, int]:
        return {
            "promptTokenCount": prompt,
            "candidatesTokenCount": answer,
            "totalTokenCount": prompt + answer,
        }

    def task_view(self, body: dict[str, Any]) -> tuple[list[Any], list[Any]]:
        declarations = [
            d for t in body.get("tools") or [] for d in (t.get("functionDeclarations") or [])
        ]
        return declarations, list(body.get("contents") or [])

    def error_json(self, status: int, message: str, reply: Reply) -> Any:
        error: dict[str, Any] = {
            "code": status,
            "message": message,
            "status": STATUS_NAMES.get(status, "UNKNOWN"),
        }
        if "retry_delay" in reply:
            error["details"] = [
                {
                    "@type": "type.googleapis.com/google.rpc.RetryInfo",
                    "retryDelay": reply["retry_delay"],
                }
            ]
        return {"error": error}

    def summarize(self, body: Any) -> dict[str, Any]:
        contents = body.get("contents") or []
        names = [
            d.get("name")
            for tool in body.get("tools") or []
            if isinstance(tool, dict)
            for d in tool.get("functionDeclarations") or []
            if isinstance(d, dict)
        ]
        return {
            "roles": [c.get("role") for c in contents if isinstance(c, dict)],
            "tool_names": names,
            "tool_result_chars": [len(t) for t in self.tool_result_texts(body)],
        }

    def tool_result_texts(self, body: Any) -> list[str]:
        found: list[str] = []
        for content in body.get("contents") or []:
            parts = content.get("parts") if isinstance(content, dict) else None
            for part in parts if isinstance(parts, list) else []:
                response = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(response, dict):
                    inner = (response.get("response") or {}).get("output", "")
                    found.append(inner if isinstance(inner, str) else json.dumps(inner))
        return found

    def build_events(self, reply: Reply, number: int, model: str) -> list[bytes]:
        def chunk(parts: list[dict[str, Any]], **extra: Any) -> bytes:
            candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
            candidate.update(extra.pop("candidate", {}))
            body = {
                "candidates": [candidate],
                **extra,
                "modelVersion": model,
                "responseId": f"resp-fake-{number}",
            }
            return b"data: " + json.dumps(body).encode() + b"\r\n\r\n"

        events: list[bytes] = []
        if reply.get("error_event"):
            error = {"code": 503, "message": str(reply["error_event"]), "status": "UNAVAILABLE"}
            return [b"data: " + json.dumps({"error": error}).encode() + b"\r\n\r\n"]
        if reply.get("block_reason"):
            feedback = {"promptFeedback": {"blockReason": reply["block_reason"]}}
            return [b"data: " + json.dumps(feedback).encode() + b"\r\n\r\n"]
        if reply.get("malformed"):
            events.append(b"data: {this is not JSON\r\n\r\n")
        for piece in split(str(reply.get("thinking", "")), 2):
            events.append(chunk([{"text": piece, "thought": True}]))
        for piece in split(answer_text(reply), 3):
            events.append(chunk([{"text": piece}]))
        parts: list[dict[str, Any]] = []
        for i, call in enumerate(calls_of(reply)):
            args = call.get("args", {})
            function: dict[str, Any] = {
                "name": call["name"],
                "args": json.loads(args) if isinstance(args, str) else args,
            }
            if call.get("id"):
                function["id"] = call["id"]
            part: dict[str, Any] = {"functionCall": function}
            if i == 0 and reply.get("thought_signature"):
                part["thoughtSignature"] = reply["thought_signature"]
            parts.append(part)
        if parts:
            events.append(chunk(parts))
        usage = reply.get("usage", DEFAULT_USAGE)
        finish = reply.get("finish_reason") or "STOP"
        final: dict[str, Any] = {"candidate": {"finishReason": finish}}
        if usage is not None:
            final["usageMetadata"] = usage
        events.append(chunk([{"text": ""}], **final))
        return events


def main(argv: list[str] | None = None) -> int:
    """Subprocess mode: serve until SIGTERM/SIGINT."""
    return serve_main(FakeGemini, argv, "python -m tests.fakes.fake_gemini")


if __name__ == "__main__":
    sys.exit(main())
