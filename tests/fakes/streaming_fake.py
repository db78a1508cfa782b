"""The common part of the scripted fake model servers (stdlib only, 127.0.0.1).

:mod:`tests.fakes.fake_anthropic` and :mod:`tests.fakes.fake_gemini` follow the conventions of
:mod:`tests.fakes.fake_openai`: each streaming POST consumes the next reply of a script (a JSON
list of replies, or ``{"replies": [...], "default": reply}``; ``{"repeat_last": true}`` repeats
the reply before it forever), answered in the API's own wire format.  The reply keys every fake
understands:

``text``              assistant text, streamed in up to 3 pieces
``thinking``          reasoning, streamed first in up to 2 pieces
``tool`` + ``args``   one tool call (``args`` an object, default ``{}``; optional ``id``)
``tools``             several calls: ``[{"name": ..., "args": ..., "id"?: ...}, ...]``
``usage``             override the usage object (the API's own spelling), ``null`` for none
``error_status``      answer this HTTP status with the API's error body; ``message``,
                      ``retry_after`` (``Retry-After`` header), ``error_body`` (raw text body)
``error_event``       after the opening event, send the API's in-stream error with this
                      message and close
``drop_after_chunks`` send only the first N events, then close without ending the chunked
                      body (``clean_close: true`` ends it properly)
``malformed``         send a non-JSON event right after the opening one
``delay_s``           wait before answering; ``chunk_delay_s`` waits between events
``raw_json``          answer 200 with this object as ``application/json`` (a server that
                      ignores the streaming request)
``endless_data_line`` answer 200 with one ``data:`` line that does not end: this many MiB
                      of ``x``, sent until the client hangs up
``endless_body``      with ``error_status``: an error body of this many MiB of text, sent
                      until the client hangs up

Each fake adds its own keys (see its module).  Unknown keys are an error.  ``window=N`` and
``long_task=LongTask(...)`` work as in :mod:`tests.fakes.fake_openai` (a request over the window
gets the provider's own "too long" HTTP 400, answered requests report honest usage, log lines
have ``tokens`` and ``over_window``).  A fake runs in a
background thread as a context manager (``fake.base_url``, ``fake.requests``,
``fake.request_headers``, ``fake.log``) or as a subprocess (``python -m tests.fakes.NAME
--script FILE --port-file PATH [--log FILE] [--log-bodies] [--model NAME]
[--require-api-key KEY]``).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import threading
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import FrameType, TracebackType
from typing import Any, ClassVar, Self
from urllib.parse import parse_qs, urlsplit

from tests.fakes.long_task import LongTask, estimate_tokens

Reply = dict[str, Any]

DEFAULT_REPLY: Reply = {"text": "done"}
COMMON_KEYS = frozenset(
    {
        "text",
        "thinking",
        "tool",
        "args",
        "id",
        "tools",
        "usage",
        "error_status",
        "message",
        "retry_after",
        "error_body",
        "error_event",
        "drop_after_chunks",
        "clean_close",
        "malformed",
        "delay_s",
        "chunk_delay_s",
        "repeat_last",
        "raw_json",
        "endless_data_line",
        "endless_body",
    }
)
CALL_KEYS = frozenset({"name", "args", "id"})


class ScriptError(ValueError):
    """The script is not in the format described in the module docstring."""


class Script:
    """The replies still to give, consumed in order under a lock."""

    def __init__(self, script: Any, keys: frozenset[str]) -> None:
        if isinstance(script, dict):
            unknown = set(script) - {"replies", "default"}
            if unknown:
                raise ScriptError(f"script: unknown keys {sorted(unknown)}")
            replies, default = script.get("replies", []), script.get("default", DEFAULT_REPLY)
        else:
            replies, default = script, DEFAULT_REPLY
        if not isinstance(replies, list):
            raise ScriptError("script: expected a list of replies")
        self.keys = keys
        self.replies = [self._check(r, f"reply {i}") for i, r in enumerate(replies)]
        self.default = self._check(default, "default")
        self.position = 0
        self._lock = threading.Lock()

    def _check(self, reply: Any, where: str) -> Reply:
        if not isinstance(reply, dict):
            raise ScriptError(f"{where}: a reply must be an object, got {reply!r}")
        unknown = set(reply) - self.keys
        if unknown:
            raise ScriptError(f"{where}: unknown keys {sorted(unknown)}")
        if "tool" in reply and "tools" in reply:
            raise ScriptError(f"{where}: use either 'tool' or 'tools'")
        for call in reply.get("tools", []):
            if not isinstance(call, dict) or "name" not in call or set(call) - CALL_KEYS:
                raise ScriptError(f"{where}: each of 'tools' needs 'name' (and 'args', 'id')")
        return reply

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


def split(text: str, parts: int) -> list[str]:
    """``text`` cut into at most ``parts`` non-empty pieces of near-equal length."""
    if not text:
        return []
    size = max(1, -(-len(text) // parts))
    return [text[i : i + size] for i in range(0, len(text), size)]


def calls_of(reply: Reply) -> list[dict[str, Any]]:
    """The tool calls a reply asks for, as ``{"name", "args", "id"}`` dicts."""
    if "tool" in reply:
        return [{"name": reply["tool"], "args": reply.get("args", {}), "id": reply.get("id")}]
    return [dict(call) for call in reply.get("tools", [])]


def answer_text(reply: Reply) -> str:
    """The reply's text: ``done`` when it asks for nothing else."""
    has_content = "text" in reply or "thinking" in reply or calls_of(reply)
    return str(reply.get("text", "" if has_content else DEFAULT_REPLY["text"]))


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, fake: FakeServer, port: int) -> None:
        self.fake = fake
        super().__init__(("127.0.0.1", port), _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the JSONL log replaces http.server's stderr lines

    def send_body(
        self, status: int, data: bytes, content_type: str, headers: Mapping[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        self.send_body(status, json.dumps(obj).encode(), "application/json", headers)

    def do_GET(self) -> None:
        fake = self.server.fake
        fake.record_other("GET", self.path)
        listing = fake.models_listing(urlsplit(self.path).path)
        if listing is None:
            self.send_json(404, fake.error_json(404, f"no route for GET {self.path}", {}))
        else:
            self.send_json(200, listing)

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        if not fake.is_stream_path(parts.path, parse_qs(parts.query)):
            fake.record_other("POST", self.path)
            self.send_json(404, fake.error_json(404, f"no route for POST {self.path}", {}))
            return
        try:
            body: Any = json.loads(raw or b"null")
        except ValueError:
            body = None
        headers = dict(self.headers)
        if fake.require_api_key is not None:
            given = fake.key_sent(headers, parse_qs(parts.query))
            if given != fake.require_api_key:
                fake.record(body, raw, headers, self.path, None, None)
                status, error = fake.auth_error(given)
                self.send_json(status, error)
                return
        if not isinstance(body, dict):
            fake.record(body, raw, headers, self.path, None, None)
            self.send_json(400, fake.error_json(400, "request body is not a JSON object", {}))
            return
        tokens = estimate_tokens(raw)
        if fake.window is not None and tokens > fake.window:
            fake.record(body, raw, headers, self.path, None, None, over_window=True)
            self.send_json(400, fake.overflow_json(tokens, fake.window))
            return
        if fake.long_task is not None:
            index = -1
            tools, messages = fake.task_view(body)
            reply = fake.long_task.next_reply(tools, messages)
        else:
            index, reply = fake.script.next()
        if fake.window is not None and "usage" not in reply:
            reply = {**reply, "usage": fake.usage_of(tokens, estimate_tokens(json.dumps(reply)))}
        number = fake.record(body, raw, headers, self.path, index, reply)
        try:
            self._answer(reply, number, fake.model_of(parts.path, body))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away; nothing to tell it

    def _send_endless(self, status: int, content_type: str, first: bytes, mib: Any) -> None:
        """A chunked body of ``first`` and ``mib`` MiB of ``x`` (no line end), until the client
        hangs up."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        chunk = b"x" * (1 << 20)
        self.wfile.write(b"%x\r\n%s\r\n" % (len(first) or 1, first or b"x"))
        for _ in range(int(mib)):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _answer(self, reply: Reply, number: int, model: str) -> None:
        fake = self.server.fake
        if reply.get("delay_s"):
            time.sleep(float(reply["delay_s"]))
        if "endless_data_line" in reply:
            self._send_endless(200, "text/event-stream", b"data: ", reply["endless_data_line"])
            return
        if "error_status" in reply:
            status = int(reply["error_status"])
            headers = {"Retry-After": str(reply["retry_after"])} if "retry_after" in reply else {}
            if "endless_body" in reply:
                self._send_endless(status, "text/plain", b"", reply["endless_body"])
                return
            if "error_body" in reply:
                data = str(reply["error_body"]).encode()
                self.send_body(status, data, "text/plain", headers)
                return
            message = str(reply.get("message", "fake server error"))
            self.send_json(status, fake.error_json(status, message, reply), headers)
            return
        if "raw_json" in reply:
            self.send_json(200, reply["raw_json"])
            return
        events = fake.build_events(reply, number, model)
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


class FakeServer:
    """A scripted fake API server in a background thread (see the module docstring).

    Subclasses define the API: its routes, key check, error bodies and streamed events.
    ``requests`` holds the JSON bodies of streaming requests, ``request_headers`` their
    headers, ``request_paths`` their paths, ``log`` one summary per request.
    """

    api: ClassVar[str] = "fake"
    extra_keys: ClassVar[frozenset[str]] = frozenset()

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
        long_task: LongTask | None = None,
    ) -> None:
        keys = COMMON_KEYS | self.extra_keys
        self.window = window
        """The context window in tokens (:mod:`tests.fakes.long_task`; ``None``: no limit)."""
        self.long_task = long_task
        self.script = Script(list(script) if isinstance(script, tuple) else script, keys)
        self.model = model
        self.require_api_key = require_api_key
        self.requests: list[Any] = []
        self.request_headers: list[dict[str, str]] = []
        self.request_paths: list[str] = []
        self.log: list[dict[str, Any]] = []
        self._log_path = Path(log_path) if log_path else None
        self._log_bodies = log_bodies
        self._lock = threading.Lock()
        self._server = _Server(self, port)
        self._thread: threading.Thread | None = None

    # -- the API (subclasses) --------------------------------------------------------------

    def is_stream_path(self, path: str, query: dict[str, list[str]]) -> bool:
        raise NotImplementedError

    def overflow_json(self, tokens: int, window: int) -> Any:
        """The body of the HTTP 400 for a request over the window (the provider's words)."""
        raise NotImplementedError

    def usage_of(self, prompt: int, answer: int) -> dict[str, int]:
        """A reply's ``usage`` in the provider's names."""
        raise NotImplementedError

    def task_view(self, body: dict[str, Any]) -> tuple[list[Any], list[Any]]:
        """``(tools, messages)`` of a request, for :class:`~tests.fakes.long_task.LongTask`."""
        raise NotImplementedError

    def models_listing(self, path: str) -> Any | None:
        raise NotImplementedError

    def key_sent(self, headers: dict[str, str], query: dict[str, list[str]]) -> str:
        raise NotImplementedError

    def auth_error(self, given: str) -> tuple[int, Any]:
        raise NotImplementedError

    def error_json(self, status: int, message: str, reply: Reply) -> Any:
        raise NotImplementedError

    def build_events(self, reply: Reply, number: int, model: str) -> list[bytes]:
        raise NotImplementedError

    def model_of(self, path: str, body: dict[str, Any]) -> str:
        return str(body.get("model") or self.model)

    def summarize(self, body: Any) -> dict[str, Any]:
        return {}

    def tool_result_texts(self, body: Any) -> list[str]:
        """The tool results a request sent back to the model, as text."""
        raise NotImplementedError

    # -- running ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The TCP port the server listens on (127.0.0.1)."""
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """The base URL to configure a client with."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        """Serve in a daemon thread."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.05,), daemon=True, name=f"fake-{self.api}"
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

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def record(
        self,
        body: Any,
        raw: bytes,
        headers: dict[str, str],
        path: str,
        index: int | None,
        reply: Reply | None,
        *,
        over_window: bool = False,
    ) -> int:
        """Log one streaming request; return its number (1-based)."""
        entry = {
            "method": "POST",
            "path": urlsplit(path).path,
            "bytes": len(raw),
            "tokens": estimate_tokens(raw),
            "over_window": over_window,
            **(self.summarize(body) if isinstance(body, dict) else {"json": False}),
            "reply_index": index,
            "reply": reply,
        }
        with self._lock:
            self.requests.append(body)
            self.request_headers.append(headers)
            self.request_paths.append(path)
            self.log.append(entry)
            number = len(self.requests)
            if self._log_bodies:
                entry = {**entry, "body": body}
            self._write_log(entry)
        return number

    def record_other(self, method: str, path: str) -> None:
        """Log a request that is not a streaming call."""
        with self._lock:
            entry = {"method": method, "path": path}
            self.log.append(entry)
            self._write_log(entry)

    def _write_log(self, entry: dict[str, Any]) -> None:
        if self._log_path is not None:
            with self._log_path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")


def serve_main(fake_class: type[FakeServer], argv: list[str] | None, prog: str) -> int:
    """The subprocess mode of a fake: serve until SIGTERM/SIGINT."""
    parser = argparse.ArgumentParser(prog=prog, description=f"Scripted {fake_class.api} fake.")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--script", help="JSON file holding the script")
    source.add_argument("--script-json", help="the script itself, as JSON text")
    parser.add_argument("--port-file", help="write the port number here (atomically)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log", help="append one JSON line per request to this file")
    parser.add_argument("--log-bodies", action="store_true", help="include full request bodies")
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--require-api-key", help="reject requests without this key")
    args = parser.parse_args(argv)
    script: Any = []
    if args.script:
        script = json.loads(Path(args.script).read_text(encoding="utf-8"))
    elif args.script_json:
        script = json.loads(args.script_json)
    fake = fake_class(
        script,
        model=args.model,
        port=args.port,
        require_api_key=args.require_api_key,
        log_path=args.log,
        log_bodies=args.log_bodies,
    )

    def stop(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    if args.port_file:
        tmp = Path(args.port_file + ".tmp")
        tmp.write_text(str(fake.port), encoding="utf-8")
        os.replace(tmp, args.port_file)
    print(fake.port, flush=True)
    try:
        fake.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        fake._server.server_close()
    return 0
