"""A scripted Anthropic Messages API server for tests (stdlib only, 127.0.0.1).

``POST /v1/messages`` answers in Anthropic's SSE format (``event: NAME`` + ``data: {...}``):
``message_start`` (with the prompt's usage), ``ping``, per block ``content_block_start`` /
``content_block_delta`` (``thinking_delta`` + ``signature_delta``, ``text_delta``,
``input_json_delta`` in up to 4 fragments after an empty one) / ``content_block_stop``, then
``message_delta`` (``stop_reason``, output usage) and ``message_stop``.  ``GET /v1/models``
lists the model.  Errors are ``{"type": "error", "error": {"type", "message"}}`` with the
type Anthropic uses for the status (529 ``overloaded_error``…).

Reply keys: those of :mod:`tests.fakes.streaming_fake`, plus ``stop_reason`` (override),
``signature`` (of the thinking block; default ``sig-N``).  ``usage`` uses Anthropic's names
(``input_tokens``, ``output_tokens``, ``cache_read_input_tokens``,
``cache_creation_input_tokens``); default ``{"input_tokens": 11, "output_tokens": 3}``.
``error_event`` sends ``event: error`` with an ``overloaded_error`` after ``message_start``.
The key is read from ``x-api-key`` (or ``Authorization: Bearer``); a wrong one gets 401
``authentication_error`` echoing it.  ``base_url`` has no ``/v1`` (like ``ANTHROPIC_BASE_URL``).

    python -m tests.fakes.fake_anthropic --script FILE --port-file PATH [--log FILE] ...
"""

from __future__ import annotations

import json
import sys
from typing import Any, ClassVar

from tests.fakes.streaming_fake import FakeServer, Reply, answer_text, calls_of, serve_main, split

DEFAULT_USAGE = {"input_tokens": 11, "output_tokens": 3}
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


class FakeAnthropic(FakeServer):
    """The fake Anthropic server (see the module docstring)."""

    api: ClassVar[str] = "anthropic"
    extra_keys: ClassVar[frozenset[str]] = frozenset({"stop_reason", "signature"})

    def is_stream_path(self, path: str, query: dict[str, list[str]]) -> bool:
        return path.rstrip("/") == "/v1/messages"

    def models_listing(self, path: str) -> Any | None:
        if path.rstrip("/") != "/v1/models":
            return None
        model = {
            "type": "model",
            "id": self.model,
            "display_name": "Fake",
            "created_at": "2025-01-01T00:00:00Z",
        }
        return {"data": [model], "has_more": False, "first_id": self.model, "last_id": self.model}

    def overflow_json(self, tokens: int, window: int) -> Any:
        return self.error_json(400, f"prompt is too long: {tokens} tokens > {window} maximum", {})

    def usage_of(self, prompt: int, answer: int) -> dict[str, int]:
        return {"input_tokens": prompt, "output_tokens": answer}

    def task_view(self, body: dict[str, Any]) -> tuple[list[Any], list[Any]]:
        return list(body.get("tools") or []), list(body.get("messages") or [])

    def key_sent(self, headers: dict[str, str], query: dict[str, list[str]]) -> str:
        lowered = {k.lower(): v for k, v in headers.items()}
        return lowered.get("x-api-key") or lowered.get("authorization", "").removeprefix("Bearer ")

    def auth_error(self, given: str) -> tuple[int, Any]:
        return 401, self.error_json(401, f"invalid x-api-key: {given}", {})

    def error_json(self, status: int, message: str, reply: Reply) -> Any:
        kind = ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def summarize(self, body: Any) -> dict[str, Any]:
        messages = body.get("messages") or []
        return {
            "model": body.get("model"),
            "stream": bool(body.get("stream")),
            "roles": [m.get("role") for m in messages if isinstance(m, dict)],
            "tool_names": [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)],
            "tool_result_chars": [len(t) for t in self.tool_result_texts(body)],
        }

    def tool_result_texts(self, body: Any) -> list[str]:
        found: list[str] = []
        for message in body.get("messages") or []:
            content = message.get("content") if isinstance(message, dict) else None
            for block in content if isinstance(content, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    inner = block.get("content", "")
                    found.append(inner if isinstance(inner, str) else json.dumps(inner))
        return found

    def build_events(self, reply: Reply, number: int, model: str) -> list[bytes]:
        usage = reply.get("usage", DEFAULT_USAGE)
        start_usage = (
            {k: v for k, v in usage.items() if k != "output_tokens"} | {"output_tokens": 1}
            if usage is not None
            else {}
        )
        message = {
            "id": f"msg_fake_{number}",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": model,
            "stop_reason": None,
            "stop_sequence": None,
        }
        if start_usage:
            message["usage"] = start_usage
        events = [_event("message_start", {"type": "message_start", "message": message})]
        if reply.get("error_event"):
            error = {"type": "overloaded_error", "message": str(reply["error_event"])}
            return [*events, _event("error", {"type": "error", "error": error})]
        if reply.get("malformed"):
            events.append(b"event: content_block_delta\ndata: {this is not JSON\n\n")
        events.append(_event("ping", {"type": "ping"}))
        index = 0

        def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
            nonlocal index
            events.append(
                _event(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
            for delta in deltas:
                events.append(
                    _event(
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": delta},
                    )
                )
            events.append(
                _event("content_block_stop", {"type": "content_block_stop", "index": index})
            )
            index += 1

        thinking = split(str(reply.get("thinking", "")), 2)
        if thinking:
            deltas = [{"type": "thinking_delta", "thinking": piece} for piece in thinking]
            signature = str(reply.get("signature", f"sig-{number}"))
            deltas.append({"type": "signature_delta", "signature": signature})
            block({"type": "thinking", "thinking": ""}, deltas)
        text = split(answer_text(reply), 3)
        if text:
            block(
                {"type": "text", "text": ""},
                [{"type": "text_delta", "text": piece} for piece in text],
            )
        calls = calls_of(reply)
        for i, call in enumerate(calls):
            args = call.get("args", {})
            raw = args if isinstance(args, str) else json.dumps(args)
            pieces = ["", *split(raw, 4)]
            block(
                {
                    "type": "tool_use",
                    "id": call.get("id") or f"toolu_fake_{number}_{i}",
                    "name": call["name"],
                    "input": {},
                },
                [{"type": "input_json_delta", "partial_json": piece} for piece in pieces],
            )
        stop = reply.get("stop_reason") or ("tool_use" if calls else "end_turn")
        delta: dict[str, Any] = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
        }
        if usage is not None:
            delta["usage"] = {"output_tokens": usage.get("output_tokens", 0)}
        events.append(_event("message_delta", delta))
        events.append(_event("message_stop", {"type": "message_stop"}))
        return events


def main(argv: list[str] | None = None) -> int:
    """Subprocess mode: serve until SIGTERM/SIGINT."""
    return serve_main(FakeAnthropic, argv, "python -m tests.fakes.fake_anthropic")


if __name__ == "__main__":
    sys.exit(main())
