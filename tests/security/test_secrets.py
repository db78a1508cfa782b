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
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from headwire.runtime import environment
from tests.e2e.helpers import env_for
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
    # The server got the key (absent, it would not be listed); its echo of it is scrubbed.
    assert seen["OPENAI_API_KEY"] == "***" and seen["PASSED_ON_PURPOSE"] == "1"


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
    # The key across the 500-character cut of the message (44 characters of "Model server
    # returned HTTP 400 Bad Request: " and 436 of body before it): 20 characters leaked before.
    "400-long-raw-body-echo": [{"error_status": 400, "error_body": "x" * 436 + "{key} and more"}],
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
            "--settings",  # the retries (and their notes) without the default waits
            '{"model": {"generationConfig": {"retryInitialDelayMs": 10}}}',
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
    from headwire.runtime.store.recording import RecordingError, find_session

    outside = tmp_path / "secret.jsonl"
    outside.write_text('{"type":"user","message":{"role":"user","content":"secret"}}\n')
    chats_root = tmp_path / "home"
    for bad in ("../../../secret", "/etc/passwd", ".hidden", "a/b", ""):
        try:
            find_session(chats_root, tmp_path, bad)
        except RecordingError:
            continue
        raise AssertionError(f"{bad!r} was accepted")


# ---------------------------------------------------------------------------------------------
# A tool cannot read the key at all; and what a tool meets anyway is scrubbed.

PROC_DUMP = (
    "tr '\\0' '\\n' < /proc/$PPID/environ > proc_environ.txt; "
    "tr '\\0' ' ' < /proc/$PPID/cmdline > proc_cmdline.txt; "
    "cat proc_environ.txt proc_cmdline.txt"
)


def fragments(secret: str, shortest: int = 8) -> list[str]:
    """Every prefix and suffix of ``secret`` at least ``shortest`` long (what one cut leaves)."""
    cuts = range(shortest, len(secret) + 1)
    return [secret[:n] for n in cuts] + [secret[-n:] for n in cuts]


def _everything(tmp: Path, out: bytes, err: str, requests: list[Any]) -> dict[str, bytes]:
    found = {"stdout": out, "stderr": err.encode(), "model requests": json.dumps(requests).encode()}
    home = tmp / "home"
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        found[str(path.relative_to(tmp))] = path.read_bytes()
    return found


def test_a_tool_cannot_read_the_key_from_proc(tmp_path: Path) -> None:
    """Before: ``OPENAI_API_KEY=<key>`` in ``/proc/$PPID/environ`` and the flag's key in
    ``/proc/$PPID/cmdline``, both readable by the shell the model runs."""
    script = [{"tool": "run_shell_command", "args": {"command": PROC_DUMP}}, {"text": "done"}]
    env = {"OPENAI_API_KEY": ENV_CANARY, "MY_COPY": f"k={ENV_CANARY}"}
    with FakeOpenAI(script, require_api_key=FLAG_CANARY) as fake:
        proc = run_headwire(
            [
                *("-m", "fake-model", "--openai-base-url", fake.base_url, "--yolo", "-o", "json"),
                *("--openai-api-key", FLAG_CANARY, "-p", "dump /proc"),
            ],
            tmp_path,
            env=env,
        )
    assert proc.returncode == 0, proc.stderr
    environ = (tmp_path / "proj" / "proc_environ.txt").read_text()
    cmdline = (tmp_path / "proj" / "proc_cmdline.txt").read_text()
    assert "OPENAI_API_KEY=" in environ and "MY_COPY=k=" in environ  # the shell did read them
    assert "--openai-api-key " in cmdline
    for secret in (ENV_CANARY, FLAG_CANARY):  # written by the shell itself: never scrubbed
        assert not any(f in environ + cmdline for f in fragments(secret)), secret


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root")
def test_the_agent_is_not_dumpable(tmp_path: Path) -> None:
    """As an ordinary user, a tool cannot open headwire's ``/proc/PID/environ`` or ``mem``
    (before: both readable, being the same user's dumpable process)."""
    top = Path(tempfile.mkdtemp(prefix="hw-nobody-"))
    try:
        for sub in ("home", "proj"):
            (top / sub).mkdir()
        for path in (top, top / "home", top / "proj"):
            os.chown(path, 65534, 65534)
        command = "cat /proc/$PPID/environ >/dev/null; echo environ=$?; head -c1 /proc/$PPID/mem"
        script = [{"tool": "run_shell_command", "args": {"command": command}}, {"text": "done"}]
        with FakeOpenAI(script) as fake:
            done = subprocess.run(
                [
                    *("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"),
                    *(sys.executable, "-m", "headwire", "-m", "fake-model", "--yolo", "-o"),
                    *("json", "--openai-base-url", fake.base_url, "-p", "look"),
                ],
                cwd=top / "proj",
                env=env_for(top / "home", OPENAI_API_KEY=ENV_CANARY),
                capture_output=True,
                timeout=90,
                check=False,
            )
        assert done.returncode == 0, done.stderr.decode()
        (text,) = _tool_texts(json.loads(done.stdout))
        assert "environ=1" in text and "Permission denied" in text, text
    finally:
        shutil.rmtree(top, ignore_errors=True)


def test_tool_output_is_scrubbed_of_the_key_and_its_fragments(tmp_path: Path) -> None:
    """A tool that meets the key elsewhere (a file here) cannot pass it, whole or cut, to the
    model, a wire, the recording, an artifact or the Dual Output file."""
    proj = tmp_path / "proj"
    proj.mkdir(parents=True)
    (proj / "key.txt").write_text(FLAG_CANARY)
    big = "python3 -c \"print('x' * 300000)\"; cat key.txt; echo"
    cut = "cat key.txt; echo; head -c 12 key.txt; echo; tail -c 11 key.txt; echo; cat key.txt"
    script = [
        {
            "tools": [
                {"name": "run_shell_command", "args": {"command": big}},
                {"name": "run_shell_command", "args": {"command": cut}},
                {"name": "read_file", "args": {"file_path": str(proj / "key.txt")}},
            ]
        },
        {"text": "done"},
    ]
    with FakeOpenAI(script) as fake:
        proc = run_headwire(
            [
                *("-m", "fake-model", "--openai-base-url", fake.base_url, "--yolo"),
                *("-o", "stream-json", "--json-file", str(tmp_path / "home" / "dual.jsonl")),
                *("--openai-api-key", FLAG_CANARY, "-p", "read the key"),
            ],
            tmp_path,
        )
        requests = list(fake.requests)
    assert proc.returncode == 0, proc.stderr
    texts = _tool_texts(proc.lines())
    assert len(texts) == 3 and "***" in texts[1] and "***" in texts[2]
    assert len(list((tmp_path / "home").rglob("*.output"))) >= 1  # an artifact was written
    leaks = {
        where: [f for f in fragments(FLAG_CANARY) if f.encode() in data]
        for where, data in _everything(tmp_path, proc.stdout, proc.stderr, requests).items()
    }
    assert {where: found for where, found in leaks.items() if found} == {}
