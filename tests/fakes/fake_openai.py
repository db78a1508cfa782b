"""A scripted OpenAI-compatible chat-completions server for tests (stdlib only, 127.0.0.1).

Each ``POST .../chat/completions`` consumes the next reply of a script, in order.  A script is a
JSON list of replies, or ``{"replies": [...], "default": reply}``.  When the replies run out the
server answers ``default`` (``{"text": "done"}`` unless given), except after a
``{"repeat_last": true}`` entry, which makes the reply before it repeat forever.

A reply is an object with these keys (all optional; ``{}`` means ``{"text": "done"}``):

``text``              assistant text, streamed in up to 3 ``delta.content`` chunks
``thinking``          reasoning, streamed in up to 2 ``delta.reasoning_content`` chunks first
``tool`` + ``args``   one tool call; ``args`` is an object (default ``{}``) or a raw string
                      sent verbatim (to test invalid JSON); optional ``id``
``tools``             several calls: ``[{"name": ..., "args": ..., "id"?: ...}, ...]``
``finish_reason``     override (default ``tool_calls`` when there are calls, else ``stop``)
``usage``             override the final usage object, or ``null`` to send no usage chunk
                      (default ``{"prompt_tokens": 11, "completion_tokens": 3,
                      "total_tokens": 14}``)
``error_status``      answer this HTTP status instead, body
                      ``{"error": {"message": message, ...}}``; ``message`` (default
                      ``"fake server error"``), ``retry_after`` (``Retry-After`` header value),
                      ``error_body`` (a raw text body instead of the JSON one)
``drop_after_chunks`` send only the first N ``data:`` events (the role chunk is number 1),
                      then close the connection without ending the chunked body
                      (``clean_close: true`` ends the body properly, so the client sees a
                      clean EOF without ``[DONE]``)
``malformed``         send a non-JSON ``data:`` line right after the role chunk
``raw_unicode``       write the chunks' non-ASCII characters raw (U+2028 included), as
                      ``JSON.stringify`` does, instead of as ``\\uXXXX`` escapes
``delay_s``           wait this long before answering; ``chunk_delay_s`` waits between events
``raw_sse``           send this text as the whole event-stream body, byte for byte, in
                      pieces of 7 bytes (replays the recorded quirk fixtures of
                      ``tests/data/quirks``; the body ends cleanly after it)
``raw_json``          answer 200 with this object as ``application/json`` (a server that
                      ignores ``stream: true``)

A server made with ``window=N`` (``--window N``) has a context window of N tokens
(:mod:`tests.fakes.long_task`: a request's tokens are its body bytes / 4): a request over it is
answered HTTP 400 in OpenAI's shape (``code: "context_length_exceeded"``) without consuming a
reply, every answered request reports that estimate as its ``prompt_tokens`` (and the reply's
own estimate as ``completion_tokens``) unless the reply sets ``usage``, and every log line has
``tokens``.  ``report_window=True`` (``--report-window``) adds ``max_model_len`` (vLLM's field)
to the model listed by ``GET .../models``.  ``long_task=LongTask(...)`` (``--long-task
STEPS:BYTES``) answers from the scripted long task instead of the script.

Text and tool calls may be combined (text first).  The streamed events are: a role chunk,
thinking chunks, text chunks, per call a header chunk (``id``, ``name``, empty arguments) and
up to 4 argument fragments, a ``finish_reason`` chunk, a usage chunk with ``choices: []``,
then ``data: [DONE]``.  ``GET .../models`` lists one model.  Unknown reply keys are an error.

In-process::

    with FakeOpenAI([{"tool": "read_file", "args": {"path": "a"}}, {"text": "done"}]) as fake:
        fake.base_url      # "http://127.0.0.1:PORT/v1"
        fake.requests      # JSON bodies received by chat/completions, in order

As a subprocess (prints the port on stdout and writes it to --port-file)::

    python -m tests.fakes.fake_openai --script FILE --port-file PATH [--log FILE]
        [--log-bodies] [--model NAME] [--port N] [--require-api-key KEY]
        [--window TOKENS] [--report-window] [--long-task STEPS:BYTES]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any

from tests.fakes.long_task import LongTask, estimate_tokens, openai_overflow_error

Reply = dict[str, Any]

DEFAULT_REPLY: Reply = {"text": "done"}
DEFAULT_USAGE: dict[str, int] = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
REPLY_KEYS = frozenset(
    {
        "text",
        "thinking",
        "tool",
        "args",
        "id",
        "tools",
        "finish_reason",
        "usage",
        "error_status",
        "message",
        "retry_after",
        "error_body",
        "drop_after_chunks",
        "clean_close",
        "malformed",
        "raw_unicode",
        "delay_s",
        "chunk_delay_s",
        "repeat_last",
        "raw_sse",
        "raw_json",
    }
)
RAW_PIECE_BYTES = 7
"""``raw_sse`` bodies go out in pieces this small, so no line arrives whole."""
CALL_KEYS = frozenset({"name", "args", "id"})


class ScriptError(ValueError):
    """The script is not in the format described in the module docstring."""


def _check_reply(reply: Any, where: str) -> Reply:
    if not isinstance(reply, dict):
        raise ScriptError(f"{where}: a reply must be an object, got {reply!r}")
    unknown = set(reply) - REPLY_KEYS
    if unknown:
        raise ScriptError(f"{where}: unknown keys {sorted(unknown)}")
    if "tool" in reply and "tools" in reply:
        raise ScriptError(f"{where}: use either 'tool' or 'tools'")
    for call in reply.get("tools", []):
        if not isinstance(call, dict) or "name" not in call or set(call) - CALL_KEYS:
            raise ScriptError(f"{where}: each of 'tools' needs 'name' (and optional 'args', 'id')")
    return reply


class Script:
    """The replies still to give, consumed in order under a lock."""

    def __init__(self, script: Any) -> None:
        if isinstance(script, dict):
            unknown = set(script) - {"replies", "default"}
            if unknown:
                raise ScriptError(f"script: unknown keys {sorted(unknown)}")
            replies, default = script.get("replies", []), script.get("default", DEFAULT_REPLY)
        else:
            replies, default = script, DEFAULT_REPLY
        if not isinstance(replies, list):
            raise ScriptError("script: expected a list of replies")
        self.replies = [_check_reply(r, f"reply {i}") for i, r in enumerate(replies)]
        self.default = _check_reply(default, "default")
        self.position = 0
        self._lock = threading.Lock()

    def next(self) -> tuple[int, Reply]:
        """Return ``(script index, reply)``; the index is -1 for the default reply."""
        with self._lock:
            if self.position < len(self.replies):
                index = self.position
                if self.replies[index].get("repeat_last"):
                    if index == 0:
                        raise ScriptError("repeat_last needs a reply before it")
                    return index - 1, self.replies[index - 1]
                self.position += 1
                return index, self.replies[index]
            return -1, self.default

    @property
    def remaining(self) -> int:
        """Replies not yet given (a ``repeat_last`` marker never runs out: it counts as 0)."""
        with self._lock:
            rest = self.replies[self.position :]
            return sum(1 for r in rest if not r.get("repeat_last"))


def _split(text: str, parts: int) -> list[str]:
    """``text`` cut into at most ``parts`` non-empty pieces of near-equal length."""
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _calls(reply: Reply) -> list[dict[str, Any]]:
    if "tool" in reply:
        return [{"name": reply["tool"], "args": reply.get("args", {}), "id": reply.get("id")}]
    return [dict(call) for call in reply.get("tools", [])]


def build_events(reply: Reply, number: int, model: str) -> list[bytes]:
    """The SSE events (``data: ...`` plus blank line) answering ``reply``, ending in [DONE]."""
    base = {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        body = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        raw = bool(reply.get("raw_unicode"))
        return b"data: " + json.dumps(body, ensure_ascii=not raw).encode() + b"\n\n"

    events = [chunk({"role": "assistant", "content": ""})]
    if reply.get("malformed"):
        events.append(b'data: {"id": "chatcmpl-fake", this is not JSON\n\n')
    for piece in _split(str(reply.get("thinking", "")), 2):
        events.append(chunk({"reasoning_content": piece}))
    calls = _calls(reply)
    has_content = "text" in reply or "thinking" in reply or calls
    text = str(reply.get("text", "" if has_content else DEFAULT_REPLY["text"]))
    for piece in _split(text, 3):
        events.append(chunk({"content": piece}))
    for i, call in enumerate(calls):
        call_id = call.get("id") or f"call_fake_{number}_{i}"
        head = {
            "index": i,
            "id": call_id,
            "type": "function",
            "function": {"name": call["name"], "arguments": ""},
        }
        events.append(chunk({"tool_calls": [head]}))
        args = call.get("args", {})
        raw = args if isinstance(args, str) else json.dumps(args)
        for piece in _split(raw, 4):
            events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]}))
    finish = reply.get("finish_reason") or ("tool_calls" if calls else "stop")
    events.append(chunk({}, finish))
    usage = reply.get("usage", DEFAULT_USAGE)
    if usage is not None:
        events.append(
            b"data: " + json.dumps({**base, "choices": [], "usage": usage}).encode() + b"\n\n"
        )
    events.append(b"data: [DONE]\n\n")
    return events


def summarize(body: Any, raw_len: int) -> dict[str, Any]:
    """A request-log line: sizes, roles and tool names, never whole message contents."""
    if not isinstance(body, dict):
        return {"bytes": raw_len, "json": False}
    messages = body.get("messages") or []
    tools = body.get("tools") or []

    def content_len(message: Mapping[str, Any]) -> int:
        content = message.get("content")
        return len(content) if isinstance(content, str) else len(json.dumps(content))

    return {
        "bytes": raw_len,
        "model": body.get("model"),
        "stream": bool(body.get("stream")),
        "roles": [m.get("role") for m in messages if isinstance(m, dict)],
        "n_tools": len(tools),
        "tool_names": [(t.get("function") or {}).get("name") for t in tools if isinstance(t, dict)],
        "tool_message_chars": [
            content_len(m) for m in messages if isinstance(m, dict) and m.get("role") == "tool"
        ],
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, fake: FakeOpenAI, port: int) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", port), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the JSONL log replaces http.server's stderr lines

    def _send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def do_GET(self) -> None:
        fake = self.server.fake
        fake._record_other("GET", self.path)
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            model = {"id": fake.model, "object": "model", "created": 0, "owned_by": "fake"}
            if fake.window is not None and fake.report_window:
                model["max_model_len"] = fake.window
            self._send_json(200, {"object": "list", "data": [model]})
        else:
            self._send_json(404, {"error": {"message": f"no route for GET {self.path}"}})

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.split("?")[0].rstrip("/").endswith("/chat/completions"):
            fake._record_other("POST", self.path)
            self._send_json(404, {"error": {"message": f"no route for POST {self.path}"}})
            return
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            body = None
        if fake.require_api_key is not None:
            auth = self.headers.get("Authorization") or ""
            if auth != f"Bearer {fake.require_api_key}":
                fake._record(body, raw, dict(self.headers), None, None)
                given = auth.removeprefix("Bearer ")
                message = f"Incorrect API key provided: {given}"  # echoes it, like real servers
                self._send_json(
                    401,
                    {
                        "error": {
                            "message": message,
                            "type": "invalid_request_error",
                            "code": "invalid_api_key",
                        }
                    },
                )
                return
        if not isinstance(body, dict):
            fake._record(body, raw, dict(self.headers), None, None)
            self._send_json(400, {"error": {"message": "request body is not a JSON object"}})
            return
        tokens = estimate_tokens(raw)
        if fake.window is not None and tokens > fake.window:
            fake._record(body, raw, dict(self.headers), None, None, over_window=True)
            self._send_json(400, openai_overflow_error(tokens, fake.window))
            return
        if fake.long_task is not None:
            index = -1
            reply = fake.long_task.next_reply(body.get("tools") or [], body.get("messages") or [])
        else:
            index, reply = fake.script.next()
        if fake.window is not None and "usage" not in reply:
            answer = estimate_tokens(json.dumps(reply))
            usage = {"prompt_tokens": tokens, "completion_tokens": answer}
            reply = {**reply, "usage": {**usage, "total_tokens": tokens + answer}}
        number = fake._record(body, raw, dict(self.headers), index, reply)
        try:
            self._answer(reply, number, str(body.get("model") or fake.model))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away; nothing to tell it

    def _answer(self, reply: Reply, number: int, model: str) -> None:
        if reply.get("delay_s"):
            time.sleep(float(reply["delay_s"]))
        if "error_status" in reply:
            status = int(reply["error_status"])
            headers = {"Retry-After": str(reply["retry_after"])} if "retry_after" in reply else {}
            if "error_body" in reply:
                data = str(reply["error_body"]).encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Connection", "close")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
                self.close_connection = True
                return
            message = reply.get("message", "fake server error")
            error = {"message": message, "type": "fake_error", "code": status}
            self._send_json(status, {"error": error}, headers)
            return
        if "raw_json" in reply:
            self._send_json(200, reply["raw_json"])
            return
        if "raw_sse" in reply:
            raw = str(reply["raw_sse"]).encode()
            events = [raw[i : i + RAW_PIECE_BYTES] for i in range(0, len(raw), RAW_PIECE_BYTES)]
        else:
            events = build_events(reply, number, model)
        drop = reply.get("drop_after_chunks")
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        pause = float(reply.get("chunk_delay_s") or 0)
        for sent, event in enumerate(events):
            if drop is not None and sent >= int(drop):
                if reply.get("clean_close"):
                    self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
                return  # the socket closes without the terminating chunk
            if pause and sent:
                time.sleep(pause)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class FakeOpenAI:
    """The fake server, run in a background thread while used as a context manager.

    ``requests`` holds the JSON bodies of chat-completions requests, ``request_headers`` their
    headers, ``log`` one summary per request (with ``reply_index``: -1 for the default reply,
    ``None`` when rejected before consuming one).
    """

    def __init__(
        self,
        script: Any = (),
        *,
        model: str = "fake-model",
        port: int = 0,
        require_api_key: str | None = None,
        log_path: str | Path | None = None,
        log_bodies: bool = False,
        window: int | None = None,
        report_window: bool = False,
        long_task: LongTask | None = None,
    ) -> None:
        self.script = Script(list(script) if isinstance(script, tuple) else script)
        self.window = window
        """The context window in tokens (``None``: no limit)."""
        self.report_window = report_window
        self.long_task = long_task
        self.model = model
        self.require_api_key = require_api_key
        self.requests: list[Any] = []
        self.request_headers: list[dict[str, str]] = []
        self.log: list[dict[str, Any]] = []
        self._log_path = Path(log_path) if log_path else None
        self._log_bodies = log_bodies
        self._lock = threading.Lock()
        self._server = _Server(self, port)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        """The TCP port the server listens on (127.0.0.1)."""
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The OpenAI base URL to configure a client with (``.../v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAI:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True, name="fake-openai"
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def serve_forever(self) -> None:
        """Serve in the calling thread (the subprocess mode)."""
        self._server.serve_forever()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _record(
        self,
        body: Any,
        raw: bytes,
        headers: dict[str, str],
        index: int | None,
        reply: Reply | None,
        *,
        over_window: bool = False,
    ) -> int:
        entry = {
            "method": "POST",
            "path": "/chat/completions",
            **summarize(body, len(raw)),
            "tokens": estimate_tokens(raw),
            "over_window": over_window,
            "reply_index": index,
            "reply": reply,
        }
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(headers)
            self.log.append(entry)
            number = len(self.requests)
            if self._log_bodies:
                entry = {**entry, "body": body}
            self._write_log(entry)
        return number

    def _record_other(self, method: str, path: str) -> None:
        with self._lock:
            entry = {"method": method, "path": path}
            self.log.append(entry)
            self._write_log(entry)

    def _write_log(self, entry: dict[str, Any]) -> None:
        if self._log_path is not None:
            with self._log_path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def long_task_arg(value: str | None) -> LongTask | None:
    """``--long-task STEPS:BYTES`` (``STEPS`` alone: 20,000 bytes per step)."""
    if not value:
        return None
    steps, _, size = value.partition(":")
    return LongTask(steps=int(steps), output_bytes=int(size or 20_000))


def main(argv: list[str] | None = None) -> int:
    """Subprocess mode: serve until SIGTERM/SIGINT."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.fakes.fake_openai",
        description="Scripted OpenAI-compatible fake server.",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--script", help="JSON file holding the script")
    source.add_argument("--script-json", help="the script itself, as JSON text")
    parser.add_argument("--port-file", help="write the port number here (atomically)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", help="append one JSON line per request to this file")
    parser.add_argument("--log-bodies", action="store_true", help="include full request bodies")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--require-api-key", help="answer 401 unless 'Bearer KEY' is sent")
    parser.add_argument("--window", type=int, help="context window in tokens (bytes / 4)")
    parser.add_argument("--report-window", action="store_true", help="max_model_len in /models")
    parser.add_argument("--long-task", help="STEPS:BYTES: answer from the scripted long task")
    args = parser.parse_args(argv)
    script: Any = []
    if args.script:
        script = json.loads(Path(args.script).read_text(encoding="utf-8"))
    elif args.script_json:
        script = json.loads(args.script_json)
    fake = FakeOpenAI(
        script,
        model=args.model,
        port=args.port,
        require_api_key=args.require_api_key,
        log_path=args.log,
        log_bodies=args.log_bodies,
        window=args.window,
        report_window=args.report_window,
        long_task=long_task_arg(args.long_task),
    )

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    if args.port_file:
        _write_atomically(Path(args.port_file), str(fake.port))
    print(fake.port, flush=True)
    try:
        fake.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        fake._server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
