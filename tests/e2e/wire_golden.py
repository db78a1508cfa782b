"""Golden wire output: every e2e scenario's stdout, recorded once and compared on every run.

Each scenario runs the real ``headwire`` CLI as a subprocess (scripted model, the fake OpenAI
server, a real MCP server; every mode: text, json, stream-json, partial messages, persistent
sessions in direct and SDK mode, Dual Output, ACP live and replayed) and returns what it wrote:
the exit code, stdout and, for Dual Output, the sidecar.

What changes from run to run is normalized away, and nothing else: the run root (a temporary
folder of fixed length, replaced by a placeholder of the same length so projected byte counts
stay exact), ids (uuids and artifact tokens, replaced by same-length placeholders numbered in
order of appearance, so references between messages are still checked), the project hash and
the fake server's port, durations and timestamps.  Strings longer than
:data:`DIGEST_OVER` characters are stored as their SHA-256 and length, which keeps the files
small and the comparison exact.

Record again after an intended wire change (and review the diff)::

    PYTHONPATH=src:. python -m tests.e2e.wire_golden [NAME ...]
"""

from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tests.e2e.helpers import BIG_COMMAND, env_for, write_script
from tests.wire_schema import check_line, check_run, check_stream, modes_of

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
MCP_SERVER = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"
DIGEST_OVER = 512
ROOT_PREFIX = "hwg"
PROMPT = "Run the big output tool once, then say done."
BIG = {"tool": "run_shell_command", "args": {"command": BIG_COMMAND}}
SESSION_FLAGS = ["--input-format", "stream-json", "--output-format", "stream-json"]

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_TOKEN = re.compile(r"_[0-9a-f]{12}\.output")
_PORT = re.compile(r"127\.0\.0\.1:\d+")
_ISO_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?$")
_TIME_KEYS = re.compile(r"(?i)(duration|latency|elapsed|timestamp|_ms$|Ms$|^ts$|time$)")


@dataclass
class Run:
    """What one scenario wrote."""

    exit: int
    stdout: bytes
    sidecar: bytes | None = None
    extra: list[bytes] = field(default_factory=list)
    """More stdout captures (a second process of the same scenario, e.g. ``session/load``)."""


@dataclass
class Env:
    """A scenario's fixed-length run root with ``home`` and ``proj`` inside."""

    root: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def proj(self) -> Path:
        return self.root / "proj"

    def script(self, *turns: dict[str, Any]) -> str:
        return str(write_script(self.root / "script.jsonl", list(turns)))

    def env(self, **extra: str) -> dict[str, str]:
        return env_for(self.home, **extra)

    def run(self, args: list[str], stdin: bytes = b"", timeout: float = 60, **extra: str) -> Run:
        done = subprocess.run(
            [sys.executable, "-m", "headwire", *args],
            cwd=self.proj,
            env=self.env(**extra),
            input=stdin,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
        check_run(args, done.stdout, stdin)
        return Run(done.returncode, done.stdout)


class Duplex:
    """A CLI subprocess driven line by line (persistent sessions, ACP)."""

    def __init__(self, env: Env, args: list[str], **extra: str) -> None:
        self.output, self.input = modes_of(args)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "headwire", *args],
            cwd=env.proj,
            env=env.env(**extra),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.raw: list[bytes] = []
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()

    def _pump(self, stream: IO[bytes]) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, *messages: dict[str, Any] | str, check: bool = True) -> None:
        """Write lines; each is checked against the input schema unless ``check`` is off (a
        deliberately malformed message)."""
        assert self.proc.stdin is not None
        for message in messages:
            text = message if isinstance(message, str) else json.dumps(message)
            if check:
                check_line(self.input, "input", text, "stdin")
            self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def until(self, done: Callable[[dict[str, Any]], bool], timeout: float = 30) -> dict[str, Any]:
        """Read messages until ``done`` says so; returns that message."""
        while True:
            line = self._lines.get(timeout=timeout)
            if line is None:
                raise AssertionError("stdout ended early")
            self.raw.append(line)
            check_line(self.output, "output", line, f"stdout line {len(self.raw)}")
            message: dict[str, Any] = json.loads(line)
            if done(message):
                return message

    def finish(self, timeout: float = 30) -> Run:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        while (line := self._lines.get(timeout=timeout)) is not None:
            self.raw.append(line)
            check_line(self.output, "output", line, f"stdout line {len(self.raw)}")
        return Run(self.proc.wait(timeout), b"".join(self.raw))


# -- scenarios ----------------------------------------------------------------------------------


def _demo(fmt: str, *flags: str) -> Callable[[Env], Run]:
    return lambda e: e.run(["--model", "scripted:demo", "--yolo", "-o", fmt, *flags, "-p", PROMPT])


def _denied(fmt: str) -> Callable[[Env], Run]:
    def scenario(e: Env) -> Run:
        write = {"tool": "write_file", "args": {"file_path": "a.txt", "content": "hi"}}
        script = e.script(write, {"text": "could not write"})
        return e.run(["--script", script, "-o", fmt, "-p", "write a.txt"])

    return scenario


def _thinking_partial(e: Env) -> Run:
    script = e.script(
        {
            "thinking": "let me think",
            "text": "looking",
            "tool": "read_file",
            "args": {"absolute_path": str(e.proj / "missing.txt")},
        },
        {"thinking": "the file is missing", "text": "it is missing"},
    )
    return e.run(
        [
            "--script",
            script,
            "--yolo",
            "-o",
            "stream-json",
            "--include-partial-messages",
            "-p",
            "read missing.txt",
        ]
    )


def _subagent(fmt: str) -> Callable[[Env], Run]:
    def scenario(e: Env) -> Run:
        agent = {
            "tool": "agent",
            "args": {
                "description": "print big output",
                "prompt": "Run the big output tool.",
                "subagent_type": "general-purpose",
            },
        }
        script = e.script(agent, BIG, {"text": "child done"}, {"text": "done"})
        return e.run(["--script", script, "--yolo", "-o", fmt, "-p", "delegate"])

    return scenario


def _mcp(fmt: str) -> Callable[[Env], Run]:
    def scenario(e: Env) -> Run:
        config = {
            "mcpServers": {
                "bigout": {"command": sys.executable, "args": [str(MCP_SERVER), "stdio"]}
            }
        }
        script = e.script({"tool": "mcp__bigout__big_output", "args": {}}, {"text": "done"})
        return e.run(
            [
                "--script",
                script,
                "--yolo",
                "-o",
                fmt,
                "--mcp-config",
                json.dumps(config),
                "-p",
                PROMPT,
            ]
        )

    return scenario


def _max_turns(e: Env) -> Run:
    script = e.script(BIG, {"text": "done"})
    return e.run(
        [
            "--script",
            script,
            "--yolo",
            "-o",
            "stream-json",
            "--max-session-turns",
            "1",
            "-p",
            PROMPT,
        ]
    )


def _tool_error_json(e: Env) -> Run:
    script = e.script(
        {"tool": "read_file", "args": {"absolute_path": "/etc/../nowhere"}},
        {"tool": "no_such_tool", "args": {}},
        {"text": "done"},
    )
    return e.run(["--script", script, "--yolo", "-o", "json", "-p", "read"])


def _model_error(e: Env) -> Run:
    script = e.script({"error": "the scripted model failed"})
    return e.run(["--script", script, "-o", "stream-json", "-p", "hello"])


def _openai(
    fmt: str, *flags: str, replies: list[dict[str, Any]] | None = None
) -> Callable[[Env], Run]:
    def scenario(e: Env) -> Run:
        from tests.fakes.fake_openai import FakeOpenAI

        script = (
            replies
            if replies is not None
            else [
                {"thinking": "I will run it", "tool": BIG["tool"], "args": BIG["args"]},
                {"text": "done"},
            ]
        )
        with FakeOpenAI(script) as fake:
            return e.run(
                [
                    "--auth-type",
                    "openai",
                    "-m",
                    "fake-model",
                    "--yolo",
                    "-o",
                    fmt,
                    *flags,
                    "-p",
                    PROMPT,
                ],
                OPENAI_BASE_URL=fake.base_url,
                OPENAI_API_KEY="sk-golden",
            )

    return scenario


def _session_direct(e: Env) -> Run:
    script = e.script(BIG, {"text": "done"}, {"text": "second answer"})
    d = Duplex(e, ["--script", script, "--yolo", *SESSION_FLAGS])
    d.send(_user(PROMPT))
    d.until(lambda m: m["type"] == "result")
    d.send("this is not json", _user("and again"))
    d.until(lambda m: m["type"] == "result")
    d.until(lambda m: m["type"] == "result")
    d.send(
        {
            "type": "control_request",
            "request_id": "c1",
            "request": {"subtype": "set_model", "model": "other"},
        }
    )
    d.until(lambda m: m["type"] == "control_response")
    return d.finish()


def _session_sdk(e: Env) -> Run:
    script = e.script(
        {"tool": "write_file", "args": {"file_path": str(e.proj / "a.txt"), "content": "hi"}},
        {"tool": "write_file", "args": {"file_path": str(e.proj / "b.txt"), "content": "no"}},
        {"text": "one written"},
        BIG,
        {"text": "done"},
    )
    d = Duplex(e, ["--script", script, *SESSION_FLAGS])
    d.send(_control("init", "initialize", hooks=None))
    d.until(lambda m: m["type"] == "control_response")
    d.send(_user("write two files"))
    ask = d.until(lambda m: m["type"] == "control_request")
    d.send(
        _answer(ask["request_id"], {"behavior": "allow", "updatedInput": ask["request"]["input"]})
    )
    ask = d.until(lambda m: m["type"] == "control_request")
    d.send(_answer(ask["request_id"], {"behavior": "deny", "message": "not b"}))
    d.until(lambda m: m["type"] == "result")
    d.send(_control("mode", "set_permission_mode", mode="yolo"))
    d.until(lambda m: m["type"] == "control_response")
    d.send(_user(PROMPT))
    d.until(lambda m: m["type"] == "result")
    for i, subtype in enumerate(
        (
            "get_context_usage",
            "mcp_server_status",
            "supported_commands",
            "get_usage_info",
            "no_such_request",
        )
    ):
        d.send(_control(f"q{i}", subtype))
        d.until(lambda m: m["type"] == "control_response")
    return d.finish()


def _dual(e: Env) -> Run:
    sidecar = e.root / "events.jsonl"
    run = e.run(
        [
            "--model",
            "scripted:demo",
            "--yolo",
            "-o",
            "text",
            "-p",
            PROMPT,
            "--json-file",
            str(sidecar),
        ]
    )
    run.sidecar = sidecar.read_bytes()
    check_stream("dual", "output", run.sidecar, "sidecar")
    return run


def _acp(e: Env) -> Run:
    script = e.script(
        {"thinking": "planning", "text": "running it", "tool": BIG["tool"], "args": BIG["args"]},
        {"text": "done"},
        {"tool": "write_file", "args": {"file_path": str(e.proj / "r.txt"), "content": "x"}},
        {"text": "rejected"},
    )
    d = Duplex(e, ["--experimental-acp", "--script", script])
    d.send(_rpc(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
    d.until(lambda m: m.get("id") == 1)
    d.send(_rpc(2, "session/new", {"cwd": str(e.proj), "mcpServers": []}))
    session = d.until(lambda m: m.get("id") == 2)["result"]["sessionId"]
    prompt = [{"type": "text", "text": PROMPT}]
    d.send(_rpc(3, "session/prompt", {"sessionId": session, "prompt": prompt}))
    ask = d.until(lambda m: m.get("method") == "session/request_permission")
    d.send(
        {
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "proceed_once"}},
        }
    )
    d.until(lambda m: m.get("id") == 3)
    d.send(
        _rpc(
            4,
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": "write r.txt"}]},
        )
    )
    ask = d.until(lambda m: m.get("method") == "session/request_permission")
    d.send(
        {
            "jsonrpc": "2.0",
            "id": ask["id"],
            "result": {"outcome": {"outcome": "selected", "optionId": "cancel"}},
        }
    )
    d.until(lambda m: m.get("id") == 4)
    d.send("not json", _rpc(5, "session/fork", {}))
    d.send(_rpc(6, "session/prompt", {"sessionId": "x"}), check=False)  # no prompt: invalid
    d.until(lambda m: m.get("id") == 6)
    run = d.finish()
    load = Duplex(e, ["--experimental-acp", "--script", script])
    load.send(_rpc(1, "initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
    load.until(lambda m: m.get("id") == 1)
    load.send(_rpc(2, "session/load", {"sessionId": session, "cwd": str(e.proj), "mcpServers": []}))
    load.until(lambda m: m.get("id") == 2)
    run.extra.append(load.finish().stdout)
    return run


def _user(text: str) -> dict[str, Any]:
    return {
        "type": "user",
        "session_id": "",
        "message": {"role": "user", "content": text},
        "parent_tool_use_id": None,
    }


def _control(request_id: str, subtype: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "control_request",
        "request_id": request_id,
        "request": {"subtype": subtype, **fields},
    }


def _answer(request_id: str, response: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response},
    }


def _rpc(msg_id: int, method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


SCENARIOS: dict[str, Callable[[Env], Run]] = {
    "demo-text": _demo("text"),
    "demo-json": _demo("json"),
    "demo-stream-json": _demo("stream-json"),
    "demo-stream-json-partial": _demo("stream-json", "--include-partial-messages"),
    "demo-positional": lambda e: e.run(
        ["--model", "scripted:demo", "--yolo", "-o", "stream-json", PROMPT]
    ),
    "denied-stream-json": _denied("stream-json"),
    "denied-json": _denied("json"),
    "denied-text": _denied("text"),
    "thinking-partial": _thinking_partial,
    "subagent-stream-json": _subagent("stream-json"),
    "subagent-json": _subagent("json"),
    "mcp-stream-json": _mcp("stream-json"),
    "mcp-json": _mcp("json"),
    "max-turns": _max_turns,
    "tool-errors-json": _tool_error_json,
    "model-error": _model_error,
    "openai-json": _openai("json"),
    "openai-stream-json-partial": _openai("stream-json", "--include-partial-messages"),
    "openai-http-400": _openai("stream-json", replies=[{"error_status": 400, "message": "bad"}]),
    "session-direct": _session_direct,
    "session-sdk": _session_sdk,
    "dual-json-file": _dual,
    "acp": _acp,
}


# -- normalization -------------------------------------------------------------------------------


class Normalizer:
    """Replaces what varies between runs by stable placeholders (see the module docstring)."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.ids: dict[str, str] = {}
        proj = root / "proj"
        self.literal = {
            hashlib.sha256(str(proj.resolve()).encode()).hexdigest(): "H" * 64,
            self.root: "/tmp/" + "R" * (len(self.root) - 5),
        }

    def _id(self, match: re.Match[str]) -> str:
        found = match.group(0)
        if found not in self.ids:
            n = len(self.ids) + 1
            self.ids[found] = f"00000000-0000-4000-8000-{n:012d}"
        return self.ids[found]

    def text(self, value: str) -> str:
        for old, new in self.literal.items():
            value = value.replace(old, new)
        value = _UUID.sub(self._id, value)
        value = _TOKEN.sub("_" + "0" * 12 + ".output", value)
        return _PORT.sub("127.0.0.1:PORT", value)

    def value(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {self.text(k): self.value(v, k) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, key) for v in value]
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int | float):
            return 0 if _TIME_KEYS.search(key) else value
        if isinstance(value, str):
            if _ISO_TIME.match(value):
                return "<time>"
            text = self.text(value)
            if len(text) > DIGEST_OVER:
                raw = text.encode("utf-8", "surrogatepass")
                digest = hashlib.sha256(raw).hexdigest()
                return f"<{len(text)} chars, {len(raw)} bytes, sha256 {digest}>"
            return text
        return value

    def stream(self, data: bytes) -> list[Any]:
        """A capture as a list: each JSON line (or the JSON array's items) normalized; any other
        line kept as text."""
        text = data.decode("utf-8", "surrogateescape")
        stripped = text.strip()
        if stripped.startswith("[") and stripped.endswith("]") and "\n" not in stripped:
            return [{"array": [self.value(m) for m in json.loads(stripped)]}]
        out: list[Any] = []
        for line in text.split("\n"):
            try:
                out.append(self.value(json.loads(line)))
            except ValueError:
                out.append({"text": self.text(line)})
        return out


def run_scenario(name: str) -> dict[str, Any]:
    """Run one scenario in a fresh fixed-length root and return its normalized capture."""
    root = Path(tempfile.mkdtemp(prefix=ROOT_PREFIX, dir="/tmp"))
    try:
        env = Env(root)
        env.home.mkdir()
        env.proj.mkdir()
        run = SCENARIOS[name](env)
        norm = Normalizer(root)
        out: dict[str, Any] = {"exit": run.exit, "stdout": norm.stream(run.stdout)}
        if run.sidecar is not None:
            out["sidecar"] = norm.stream(run.sidecar)
        if run.extra:
            out["extra"] = [norm.stream(data) for data in run.extra]
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)


def golden_path(name: str) -> Path:
    return GOLDEN / f"{name}.json"


def dump(capture: dict[str, Any]) -> str:
    """One message per line, so a diff shows which message changed."""
    lines = ["{", f'  "exit": {capture["exit"]},']
    parts = [("stdout", capture["stdout"])]
    if "sidecar" in capture:
        parts.append(("sidecar", capture["sidecar"]))
    for i, extra in enumerate(capture.get("extra", [])):
        parts.append((f"extra{i}", extra))
    for n, (key, items) in enumerate(parts):
        lines.append(f'  "{key}": [')
        body = [f"    {json.dumps(item, ensure_ascii=False)}" for item in items]
        lines.append(",\n".join(body))
        lines.append("  ]" + ("," if n < len(parts) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(golden_path(name).read_text())
    extras = sorted(k for k in data if k.startswith("extra"))
    if extras:
        data["extra"] = [data.pop(k) for k in extras]
    return data


def main(argv: list[str]) -> int:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for name in argv or list(SCENARIOS):
        capture = run_scenario(name)
        again = run_scenario(name)
        if capture != again:
            sys.stderr.write(f"{name}: not deterministic after normalization\n")
            return 1
        golden_path(name).write_text(dump(capture))
        sys.stdout.write(f"{name}: exit {capture['exit']}, {len(capture['stdout'])} lines\n")
    os.sync()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
