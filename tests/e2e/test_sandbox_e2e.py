"""The tool execution sandbox (``tools.executionSandbox``, issue 25) with real bubblewrap.

The fake OpenAI server asks for shell commands; headwire runs them inside ``bwrap``:

* a command cannot write outside the workspace (a folder under ``/var/tmp``, on the real root
  filesystem: ``/tmp`` is private to each command), cannot reach a listener the test opens on
  127.0.0.1 when ``network`` is ``closed``, and with ``hideHome`` cannot read a file under
  ``$HOME``; the control write inside the workspace succeeds;
* ``read-only`` makes ``write_file`` refuse (the one write path) and the workspace read-only
  for commands;
* with bubblewrap unusable (not on ``PATH``) the run stops at startup with one line naming
  the cause and the fix, Qwen Code's exit code 1, and no model request (so no tool) at all.

Skipped, with the reason, where bubblewrap cannot run here.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import env_for, run_cli
from tests.e2e.test_headless_modes import tool_results
from tests.fakes.fake_openai import FakeOpenAI

DONE = {"text": "done"}
FLAGS = ["--auth-type", "openai", "-m", "m", "--yolo", "-o", "stream-json", "-p", "go"]


def _bwrap_problem() -> str | None:
    binary = shutil.which("bwrap")
    if binary is None:
        return "bubblewrap (bwrap) is not installed (.ci/run installs it as root)"
    probe = [binary, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    probe += ["--unshare-net", "--unshare-pid", "--die-with-parent", "--new-session", "true"]
    done = subprocess.run(probe, capture_output=True, timeout=30, check=False)
    if done.returncode != 0:
        return f"bwrap cannot run here: {done.stderr.decode(errors='replace').strip()[:200]}"
    return None


PROBLEM = _bwrap_problem()
needs_bwrap = pytest.mark.skipif(PROBLEM is not None, reason=PROBLEM or "")


def _settings(tmp: Path, sandbox: dict[str, Any]) -> None:
    (tmp / "home" / ".headwire").mkdir(parents=True, exist_ok=True)
    (tmp / "proj").mkdir(parents=True, exist_ok=True)
    settings = {"tools": {"executionSandbox": sandbox}}
    (tmp / "home" / ".headwire" / "settings.json").write_text(json.dumps(settings))


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder on the host's real filesystem, outside the workspace and outside ``/tmp``."""
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path.home()
    path = Path(tempfile.mkdtemp(prefix="headwire-sandbox-", dir=base))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A TCP listener on 127.0.0.1: its port and what the connections that reached it sent."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    got.append(conn.recv(100))
                except OSError:
                    got.append(b"")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], got
    stop.set()
    thread.join(5)
    server.close()


@needs_bwrap
def test_a_command_cannot_write_out_read_home_or_reach_loopback(
    tmp_path: Path, outside: Path, listener: tuple[int, list[bytes]]
) -> None:
    port, got = listener
    _settings(tmp_path, {"filesystem": "workspace-write", "network": "closed", "hideHome": True})
    home = outside / "home"  # on the real filesystem: /tmp is private to each command anyway
    home.mkdir()
    secret = home / "secret.txt"
    secret.write_text("TOPSECRET")
    command = (
        "echo inside > inside.txt && echo wrote-inside; "
        f"echo x > {outside}/escaped.txt && echo wrote-outside; "
        f"cat {secret} && echo read-home; "
        f"(echo hello > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo reached-loopback; "
        "echo end"
    )
    with FakeOpenAI([{"tool": "run_shell_command", "args": {"command": command}}, DONE]) as f:
        proc = run_cli(FLAGS, tmp_path, OPENAI_BASE_URL=f.base_url, HOME=str(home))
    assert proc.returncode == 0, proc.stderr
    (block,) = tool_results(proc.lines())
    text = block["content"]
    assert "wrote-inside" in text and "end" in text  # the control: the command did run
    assert (tmp_path / "proj" / "inside.txt").read_text() == "inside\n"
    assert "wrote-outside" not in text and not (outside / "escaped.txt").exists()
    assert "read-home" not in text and "TOPSECRET" not in text
    assert "reached-loopback" not in text and got == []
    lines = proc.lines()
    expected = {"backend": "bwrap", "filesystem": "workspace-write", "network": "closed"}
    assert lines[0]["sandbox"] == {**expected, "enforced": True}
    assert lines[-1]["type"] == "result" and lines[-1]["sandbox"] == lines[0]["sandbox"]


@needs_bwrap
def test_open_network_and_a_visible_home_without_hide_home(
    tmp_path: Path, outside: Path, listener: tuple[int, list[bytes]]
) -> None:
    """The control of the test above: the same probes hold open where the policy opens them."""
    port, got = listener
    _settings(tmp_path, {"filesystem": "workspace-write", "network": "open"})
    home = outside / "home"
    home.mkdir()
    secret = home / "secret.txt"
    secret.write_text("VISIBLE")
    command = f"cat {secret}; (echo hello > /dev/tcp/127.0.0.1/{port}) && echo reached"
    with FakeOpenAI([{"tool": "run_shell_command", "args": {"command": command}}, DONE]) as f:
        proc = run_cli(FLAGS, tmp_path, OPENAI_BASE_URL=f.base_url, HOME=str(home))
    assert proc.returncode == 0, proc.stderr
    (block,) = tool_results(proc.lines())
    assert "VISIBLE" in block["content"] and "reached" in block["content"]
    assert got == [b"hello\n"]


@needs_bwrap
def test_read_only_refuses_the_file_tools_and_workspace_writes(tmp_path: Path) -> None:
    _settings(tmp_path, {"filesystem": "read-only", "network": "closed"})
    proj = tmp_path / "proj"
    script = [
        {"tool": "write_file", "args": {"file_path": str(proj / "a.txt"), "content": "x"}},
        {"tool": "run_shell_command", "args": {"command": "echo y > b.txt || echo refused"}},
        DONE,
    ]
    with FakeOpenAI(script) as f:
        proc = run_cli(FLAGS, tmp_path, OPENAI_BASE_URL=f.base_url)
    assert proc.returncode == 0, proc.stderr
    written, shell = tool_results(proc.lines())
    assert written["is_error"] and "read-only" in written["content"]
    assert "refused" in shell["content"]
    assert not (proj / "a.txt").exists() and not (proj / "b.txt").exists()


def test_an_unusable_bwrap_stops_the_run_before_any_tool(tmp_path: Path) -> None:
    """bubblewrap not on PATH: one line (cause and fix), exit 1, no model request at all."""
    _settings(tmp_path, {"filesystem": "workspace-write", "network": "closed"})
    empty = tmp_path / "nobin"
    empty.mkdir()
    script = [{"tool": "run_shell_command", "args": {"command": "touch ran.txt"}}, DONE]
    with FakeOpenAI(script) as f:
        proc = run_cli(FLAGS, tmp_path, OPENAI_BASE_URL=f.base_url, PATH=str(empty))
        requests = list(f.requests)
    assert proc.returncode == 1
    (line,) = [x for x in proc.stderr.splitlines() if "executionSandbox" in x]
    assert "bwrap" in line and "install bubblewrap" in line
    assert requests == [] and not (tmp_path / "proj" / "ran.txt").exists()
    (result,) = proc.lines()
    assert result["type"] == "result" and result["is_error"]


@needs_bwrap
def test_doctor_sandbox_prints_what_held(tmp_path: Path, outside: Path) -> None:
    home = outside / "home"
    home.mkdir()
    policy = {"filesystem": "workspace-write", "network": "closed", "hideHome": True}
    settings = json.dumps({"tools": {"executionSandbox": policy}})
    proc = run_cli(["doctor", "--sandbox", "--settings", settings], tmp_path, HOME=str(home))
    assert proc.returncode == 0, proc.stdout
    lines = proc.stdout.decode().splitlines()[1:]
    assert [line.split()[:2] for line in lines] == [
        ["ok", "write-inside"],
        ["ok", "write-outside"],
        ["ok", "read-home"],
        ["ok", "network"],
    ]
    assert "hidden" in lines[2] and "blocked" in lines[3]
    assert list(home.iterdir()) == []  # the probes cleaned up after themselves


UPSTREAM = Path(
    os.environ.get("HEADWIRE_ORACLE_PKG_DIR")
    or os.environ.get("QWEN_ORACLE_PKG_DIR")
    or "/tmp/oracle-home/node_modules/@qwen-code/qwen-code"
)


@needs_bwrap
@pytest.mark.slow  # the Node CLI takes seconds to start
@pytest.mark.skipif(
    shutil.which("node") is None or not (UPSTREAM / "cli.js").exists(),
    reason="upstream Qwen Code not installed",
)
def test_same_settings_same_effect_as_upstream(tmp_path: Path, outside: Path) -> None:
    """Differential: upstream Qwen Code 0.24.4 and headwire, given the same user setting and
    the same command, write and refuse the same files."""
    filesystem = "workspace-write"  # (read-only agrees too; one run keeps the suite quick)
    policy = {"filesystem": filesystem, "network": "closed"}
    command = f"echo in > inside.txt; echo x > {outside}/escaped.txt; echo end"
    seen: dict[str, tuple[bool, bool]] = {}
    for cli in ("headwire", "upstream"):
        run = tmp_path / cli
        _settings(run, policy)
        qwen_home = run / "home" / ".qwen"
        qwen_home.mkdir()
        (qwen_home / "settings.json").write_text(
            json.dumps({"tools": {"executionSandbox": policy}})
        )
        script = [{"tool": "run_shell_command", "args": {"command": command}}, DONE]
        with FakeOpenAI(script) as f:
            if cli == "headwire":
                proc = run_cli(FLAGS, run, OPENAI_BASE_URL=f.base_url)
                code = proc.returncode
            else:
                env = env_for(run / "home", OPENAI_BASE_URL=f.base_url, OPENAI_API_KEY="k")
                env["QWEN_HOME"] = str(qwen_home)
                done = subprocess.run(
                    ["node", str(UPSTREAM / "cli.js"), *FLAGS],
                    cwd=run / "proj",
                    env=env,
                    capture_output=True,
                    timeout=180,
                    check=False,
                )
                code = done.returncode
        assert code == 0, cli
        seen[cli] = ((run / "proj" / "inside.txt").exists(), (outside / "escaped.txt").exists())
    assert seen["headwire"] == seen["upstream"] == (filesystem == "workspace-write", False)


def test_a_persistent_session_stops_the_same_way(tmp_path: Path) -> None:
    """stream-JSON input: the same one line and exit 1 before anything runs."""
    _settings(tmp_path, {"filesystem": "read-only", "network": "open"})
    empty = tmp_path / "nobin"
    empty.mkdir()
    user = {"type": "user", "message": {"role": "user", "content": "hi"}}
    with FakeOpenAI([DONE]) as f:
        proc = run_cli(
            [
                "--auth-type",
                "openai",
                "-m",
                "m",
                "-o",
                "stream-json",
                "--input-format",
                "stream-json",
            ],
            tmp_path,
            stdin=(json.dumps(user) + "\n").encode(),
            OPENAI_BASE_URL=f.base_url,
            PATH=str(empty),
        )
        requests = list(f.requests)
    assert proc.returncode == 1 and requests == []
    assert len([x for x in proc.stderr.splitlines() if "executionSandbox" in x]) == 1


@needs_bwrap
def test_a_command_hook_runs_inside_the_sandbox(tmp_path: Path, outside: Path) -> None:
    """A hook is a command like the shell tool's: with the sandbox on it cannot write outside
    the workspace either, while its write inside the workspace (the control) goes through."""
    _settings(tmp_path, {"filesystem": "workspace-write", "network": "closed"})
    settings_path = tmp_path / "home" / ".headwire" / "settings.json"
    settings = json.loads(settings_path.read_text())
    hook = f"echo in > hook-inside.txt; echo out > {outside}/hook-escaped.txt; exit 0"
    settings["hooks"] = {
        "PreToolUse": [{"matcher": ".*", "hooks": [{"type": "command", "command": hook}]}]
    }
    settings_path.write_text(json.dumps(settings))
    with FakeOpenAI([{"tool": "run_shell_command", "args": {"command": "echo ran"}}, DONE]) as f:
        proc = run_cli(FLAGS, tmp_path, OPENAI_BASE_URL=f.base_url)
    assert proc.returncode == 0, proc.stderr
    (block,) = tool_results(proc.lines())
    assert "ran" in block["content"]
    assert (tmp_path / "proj" / "hook-inside.txt").read_text() == "in\n"
    assert not (outside / "hook-escaped.txt").exists()
