"""A scripted OpenAI Responses API server for tests (stdlib only, 127.0.0.1).

Each ``POST .../responses`` consumes the next reply of a script, in order (``{"text": "done"}``
when it runs out) and answers with the event stream OpenAI sends (``stream: true``):
``response.created``, then per output item ``response.output_item.added``, its deltas
(``response.reasoning_summary_text.delta``, ``response.output_text.delta`` in up to 3 pieces,
``response.function_call_arguments.delta`` in up to 3 pieces) and ``response.output_item.done``,
then ``response.completed`` (or ``response.incomplete``) with the usage.

A reply is an object with these keys (all optional):

``text``                the assistant's text
``thinking``            a reasoning summary, streamed first, in a ``reasoning`` item that
                        carries ``encrypted_content`` (``encrypted``, default ``"enc-N"``)
``tool`` + ``args``     one function call (``args`` an object); ``tools``: several,
                        ``[{"name", "args", "id"?}]``
``incomplete``          end with ``response.incomplete`` and this ``incomplete_details.reason``
``failed``              end with ``response.failed`` and this error message
``error_status``        answer this HTTP status with ``{"error": {"message": ...}}``
``usage``               the usage object (default 10 in, 5 out, 2 cached, 1 reasoning)

``fake.requests`` holds the JSON bodies received, ``fake.request_headers`` their headers.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

USAGE = {
    "input_tokens": 10,
    "input_tokens_details": {"cached_tokens": 2},
    "output_tokens": 5,
    "output_tokens_details": {"reasoning_tokens": 1},
    "total_tokens": 15,
}


def _pieces(text: str, n: int = 3) -> list[str]:
    size = max(1, -(-len(text) // n))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def reply_events(reply: dict[str, Any], n: int, model: str) -> list[tuple[str, dict[str, Any]]]:
    """The stream of events answering one scripted ``reply`` (the ``n``-th request)."""
    response: dict[str, Any] = {"id": f"resp_{n}", "object": "response", "model": model}
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"response": {**response, "status": "in_progress", "output": []}})
    ]
    output: list[dict[str, Any]] = []

    def item(kind: str, done: dict[str, Any], deltas: list[tuple[str, dict[str, Any]]]) -> None:
        index = len(output)
        started = {**done, "status": "in_progress"}
        if kind == "function_call":
            started["arguments"] = ""
        events.append(("response.output_item.added", {"output_index": index, "item": started}))
        events.extend((name, {"output_index": index, **data}) for name, data in deltas)
        events.append(("response.output_item.done", {"output_index": index, "item": done}))
        output.append(done)

    if "thinking" in reply:
        summary = str(reply["thinking"])
        done = {
            "type": "reasoning",
            "id": f"rs_{n}",
            "summary": [{"type": "summary_text", "text": summary}],
            "encrypted_content": reply.get("encrypted", f"enc-{n}"),
        }
        deltas = [
            ("response.reasoning_summary_text.delta", {"summary_index": 0, "delta": piece})
            for piece in _pieces(summary, 2)
        ]
        item("reasoning", done, deltas)
    if "text" in reply:
        text = str(reply["text"])
        done = {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }
        deltas = [
            ("response.output_text.delta", {"content_index": 0, "delta": piece})
            for piece in _pieces(text)
        ]
        item("message", done, deltas)
    calls = list(reply.get("tools") or [])
    if "tool" in reply:
        calls.append({"name": reply["tool"], "args": reply.get("args", {})})
    for k, call in enumerate(calls):
        arguments = json.dumps(call.get("args", {}))
        done = {
            "type": "function_call",
            "id": f"fc_{n}_{k}",
            "call_id": call.get("id", f"call_{n}_{k}"),
            "name": call["name"],
            "arguments": arguments,
            "status": "completed",
        }
        deltas = [
            ("response.function_call_arguments.delta", {"item_id": done["id"], "delta": piece})
            for piece in _pieces(arguments)
        ]
        item("function_call", done, deltas)
    usage = reply.get("usage", USAGE)
    if "failed" in reply:
        error = {"code": "server_error", "message": reply["failed"]}
        final = {**response, "status": "failed", "error": error, "output": output}
        events.append(("response.failed", {"response": final}))
    elif "incomplete" in reply:
        details = {"reason": reply["incomplete"]}
        final = {**response, "status": "incomplete", "incomplete_details": details}
        events.append(
            ("response.incomplete", {"response": {**final, "output": output, "usage": usage}})
        )
    else:
        final = {**response, "status": "completed", "output": output, "usage": usage}
        events.append(("response.completed", {"response": final}))
    return [(name, {"type": name, **data}) for name, data in events]


def reply_body(reply: dict[str, Any], n: int, model: str) -> bytes:
    """The ``text/event-stream`` body answering ``reply`` (:func:`reply_events`, framed)."""
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
        for name, data in reply_events(reply, n, model)
    )


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        body = json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]})
        self._send(200, body.encode(), "application/json")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        with self.server.lock:
            self.server.fake.requests.append(request)
            self.server.fake.request_headers.append(dict(self.headers))
            n = len(self.server.fake.requests)
            script = self.server.fake.script
            reply = script.pop(0) if script else {"text": "done"}
        if "error_status" in reply:
            error = {"error": {"message": reply.get("message", "fake server error")}}
            self._send(int(reply["error_status"]), json.dumps(error).encode(), "application/json")
            return
        self._send(200, reply_body(reply, n, str(request.get("model", "m"))), "text/event-stream")


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeResponses) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake
        self.lock = threading.Lock()


class FakeResponses:
    """The scripted Responses server in a background thread (a context manager)."""

    def __init__(self, script: list[dict[str, Any]] | None = None) -> None:
        self.script = list(script or [])
        self.requests: list[dict[str, Any]] = []
        self.request_headers: list[dict[str, str]] = []
        self._server = _Server(self)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeResponses:
        threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
