"""API keys never reach the wire, the recordings, the artifacts, the logs or a tool's process.

Sessions run against the fake OpenAI server with a canary key, given in ``OPENAI_API_KEY`` or
by ``--openai-api-key``.  After each run stdout, stderr, every file under ``HEADWIRE_HOME``
and the Dual Output file are searched for the canary, including runs that fail: a 401 whose
message echoes the key, 500s whose raw body echoes it, an unreachable server, a base URL with
the key as password.  The model also runs ``env`` in the shell and asks an MCP server for its
environment: headwire's key is not there (unless the MCP config passes it on purpose).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from headwire.runtime import environment
from tests.fakes.fake_openai import FakeOpenAI
from tests.security.helpers import run_headwire

ENV_CANARY = "sk-canary-env-6d1f0a7c9b2e4f3a"
FLAG_CANARY = "sk-canary-flag-93e7c1d5a8b04f26"
ENV_MCP = Path(__file__).resolve().parent / "env_mcp_server.py"
SHELL_ARGS = {"command": "env; echo key=$OPENAI_API_KEY"}
SHELL_ENV = {"tool": "run_shell_command", "args": SHELL_ARGS}


def _leaks(tmp: Path, out: bytes, err: str, canary: str) -> list[str]:
    """Where ``canary`` (or its first 20 characters) shows up: stdout, stderr, any file."""
    needles = (canary.encode(), canary[:20].encode())
    found = [
        name
        for name, data in (("stdout", out), ("stderr", err.encode()))
        if any(n in data for n in needles)
    ]
    for path in sorted(p for p in tmp.rglob("*") if p.is_file() and not p.is_symlink()):
        if path.name.endswith(".py") or path.suffix == ".pyc":
            continue
        data = path.read_bytes()
        if any(n in data for n in needles):
            found.append(str(path.relative_to(tmp)))
    return found


def _mcp_config(*, pass_key: bool) -> str:
    server: dict[str, Any] = {"command": sys.executable, "args": [str(ENV_MCP)], "trust": True}
    if pass_key:
        server["env"] = {"OPENAI_API_KEY": "$OPENAI_API_KEY", "PASSED_ON_PURPOSE": "1"}
    return json.dumps({"mcpServers": {"envsrv": server}})


def _tool_texts(lines: list[dict[str, Any]]) -> list[str]:
    return [
        str(b.get("content"))
        for m in lines
        if m.get("type") == "user"
        for b in m["message"]["content"]
        if b.get("type") == "tool_result"
    ]


@pytest.mark.parametrize("how", ["env", "flag", "both"])
def test_a_working_session_leaks_no_key(tmp_path: Path, how: str) -> None:
    canary = FLAG_CANARY if how != "env" else ENV_CANARY
    script = [
        {
            "tools": [
                {"name": "run_shell_command", "args": SHELL_ARGS},
                {"name": "mcp__envsrv__environ", "args": {}},
            ]
        },
        {"text": "done"},
    ]
    env: dict[str, str] = {"MY_COPY_OF_THE_KEY": canary, "KEYS": f"a={canary},b=other"}
    args = [
        "-m",
        "fake-model",
        "-o",
        "stream-json",
        "--include-partial-messages",
        "--yolo",
        "--mcp-config",
        _mcp_config(pass_key=False),
        "-d",
        "--json-file",
        str(tmp_path / "dual.jsonl"),
        "-p",
        "print your environment",
    ]
    if how in ("env", "both"):
        env["OPENAI_API_KEY"] = ENV_CANARY
    if how in ("flag", "both"):
        args += ["--openai-api-key", FLAG_CANARY]
    with FakeOpenAI(script, require_api_key=canary) as fake:
        proc = run_headwire([*args, "--openai-base-url", fake.base_url], tmp_path, env=env)
        headers = fake.request_headers
    assert proc.returncode == 0, proc.stderr
    assert headers and all(h.get("Authorization") == f"Bearer {canary}" for h in headers)
    texts = _tool_texts(proc.lines())
    assert len(texts) == 2 and "PATH=" in texts[0] and '"PATH"' in texts[1]  # the tools did run
    assert "MY_COPY_OF_THE_KEY" not in texts[0] and "OPENAI_API_KEY" not in texts[1]
    assert "key=\n" in texts[0] or texts[0].rstrip().endswith("key=")
    assert _leaks(tmp_path, proc.stdout, proc.stderr, canary) == []
    assert _leaks(tmp_path, proc.stdout, proc.stderr, ENV_CANARY) == []
    assert (tmp_path / "dual.jsonl").stat().st_size > 0


def test_an_mcp_server_gets_the_key_only_when_its_config_says_so(tmp_path: Path) -> None:
    script = [{"tool": "mcp__envsrv__environ", "args": {}}, {"text": "done"}]
    with FakeOpenAI(script, require_api_key=ENV_CANARY) as fake:
        proc = run_headwire(
            [
                "-m",
                "fake-model",
                "--openai-base-url",
                fake.base_url,
                "--yolo",
                "-o",
                "json",
                "--mcp-config",
                _mcp_config(pass_key=True),
                "-p",
                "x",
            ],
            tmp_path,
            env={"OPENAI_API_KEY": ENV_CANARY},
        )
    assert proc.returncode == 0, proc.stderr
    (text,) = _tool_texts(json.loads(proc.stdout))
    seen = json.loads(text)
    assert seen["OPENAI_API_KEY"] == ENV_CANARY and seen["PASSED_ON_PURPOSE"] == "1"


FAILURES: dict[str, list[dict[str, Any]]] = {
    # The fake server answers 401 "Incorrect API key provided: <the key>" for a wrong key.
    "401-echoing-the-key": [],
    "500-json-echo": [
        {"error_status": 500, "message": "upstream rejected key {key}", "retry_after": 0}
    ]
    * 4,
    "500-raw-body-echo": [
        {"error_status": 503, "error_body": "bad gateway; auth=Bearer {key}", "retry_after": 0}
    ]
    * 4,
    "400-echo": [{"error_status": 400, "message": "invalid request for key {key}"}],
    "stream-dropped": [{"text": "partial", "drop_after_chunks": 2}] * 4,
}


@pytest.mark.parametrize("how", ["env", "flag"])
@pytest.mark.parametrize("case", sorted(FAILURES))
def test_failing_sessions_leak_no_key(tmp_path: Path, case: str, how: str) -> None:
    canary = ENV_CANARY if how == "env" else FLAG_CANARY
    replies = [
        {k: (v.format(key=canary) if isinstance(v, str) else v) for k, v in r.items()}
        for r in FAILURES[case]
    ]
    required = "sk-the-right-key-000000" if case.startswith("401") else None
    env = {"OPENAI_API_KEY": canary} if how == "env" else {}
    flag = ["--openai-api-key", canary] if how == "flag" else []
    with FakeOpenAI(
        {"replies": replies, "default": replies[-1]} if replies else [], require_api_key=required
    ) as fake:
        proc = run_headwire(
            [
                "-m",
                "fake-model",
                "--openai-base-url",
                fake.base_url,
                *flag,
                "-d",
                "-o",
                "stream-json",
                "--json-file",
                str(tmp_path / "dual.jsonl"),
                "-p",
                "hello",
            ],
            tmp_path,
            env=env,
        )
    assert proc.returncode == 1, proc.stderr
    result = proc.lines()[-1]
    assert result["type"] == "result" and result["is_error"] is True
    assert _leaks(tmp_path, proc.stdout, proc.stderr, canary) == []
    if case.startswith("401") or "echo" in case:
        assert "***" in proc.stdout.decode() + proc.stderr  # the echo is there, redacted


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:9/v1",  # nothing listens on the discard port
        "http://user:{key}@127.0.0.1:9/v1",  # the key as the URL's password
        "http://no-such-host.invalid/v1",
    ],
)
def test_unreachable_servers_leak_no_key(tmp_path: Path, base_url: str) -> None:
    url = base_url.format(key=FLAG_CANARY)
    proc = run_headwire(
        [
            "-m",
            "fake-model",
            "--openai-base-url",
            url,
            "--openai-api-key",
            FLAG_CANARY,
            "-o",
            "json",
            "-p",
            "hello",
        ],
        tmp_path,
        env={"OPENAI_API_KEY": ENV_CANARY},
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert _leaks(tmp_path, proc.stdout, proc.stderr, FLAG_CANARY) == []
    assert _leaks(tmp_path, proc.stdout, proc.stderr, ENV_CANARY) == []


def test_persistent_session_leaks_no_key(tmp_path: Path) -> None:
    """The SDK-driven mode: ``initialize``, a turn running ``env``, then EOF."""
    lines = [
        {"type": "control_request", "request_id": "r1", "request": {"subtype": "initialize"}},
        {
            "type": "user",
            "session_id": "s",
            "parent_tool_use_id": None,
            "message": {"role": "user", "content": "print your environment"},
        },
    ]
    stdin = "".join(json.dumps(line) + "\n" for line in lines).encode()
    with FakeOpenAI([SHELL_ENV, {"text": "done"}], require_api_key=FLAG_CANARY) as fake:
        proc = run_headwire(
            [
                "-m",
                "fake-model",
                "--openai-base-url",
                fake.base_url,
                "--openai-api-key",
                FLAG_CANARY,
                "--yolo",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
            ],
            tmp_path,
            stdin=stdin,
            env={"OPENAI_API_KEY": ENV_CANARY},
        )
    assert proc.returncode == 0, proc.stderr
    assert any("PATH=" in t for t in _tool_texts(proc.lines()))
    assert _leaks(tmp_path, proc.stdout, proc.stderr, FLAG_CANARY) == []
    assert _leaks(tmp_path, proc.stdout, proc.stderr, ENV_CANARY) == []


# ---------------------------------------------------------------------------------------------
# The environment given to tools, as a unit.


def test_tool_environment_scrubs_headwire_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environment, "_secret_values", set())
    base = {
        "PATH": "/bin",
        "OPENAI_API_KEY": "sk-a",
        "OPENAI_BASE_URL": "http://x",
        "COPY": "sk-flag-123456789",
        "LIST": "k=sk-flag-123456789;z",
        "SHORT": "ab",
        "HOME": "/h",
    }
    assert environment.tool_environment(base) == {
        "PATH": "/bin",
        "OPENAI_BASE_URL": "http://x",
        "COPY": "sk-flag-123456789",
        "LIST": "k=sk-flag-123456789;z",
        "SHORT": "ab",
        "HOME": "/h",
    }
    environment.register_secret("sk-flag-123456789")
    environment.register_secret("ab")  # short: removed only where it is the whole value
    environment.register_secret(None)
    environment.register_secret("")
    assert environment.tool_environment(base) == {
        "PATH": "/bin",
        "OPENAI_BASE_URL": "http://x",
        "HOME": "/h",
    }


def test_openai_model_registers_its_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from headwire.runtime.models.openai import OpenAIModel

    monkeypatch.setattr(environment, "_secret_values", set())
    monkeypatch.setenv("SOME_TOKEN", "sk-registered-by-the-model")
    assert "SOME_TOKEN" in environment.tool_environment()
    OpenAIModel("http://127.0.0.1:9/v1", "sk-registered-by-the-model", "m")
    assert "SOME_TOKEN" not in environment.tool_environment()
    assert "SOME_TOKEN" in os.environ


def test_resume_cannot_reach_outside_the_chats_folder(tmp_path: Path) -> None:
    from headwire.runtime.recording import RecordingError, find_session

    outside = tmp_path / "secret.jsonl"
    outside.write_text('{"type":"user","message":{"role":"user","content":"secret"}}\n')
    chats_root = tmp_path / "home"
    for bad in ("../../../secret", "/etc/passwd", ".hidden", "a/b", ""):
        try:
            find_session(chats_root, tmp_path, bad)
        except RecordingError:
            continue
        raise AssertionError(f"{bad!r} was accepted")
