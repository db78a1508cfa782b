"""headwire started with stdin, stdout or stderr closed, or with stdout on a full disk.

A parent may close a standard descriptor (``>&-``, ``2>&-``, a daemon's spawn).  Before, the
first use of ``sys.stdout``/``sys.stdin`` was a traceback, and the next file the process
opened took the closed number: with stderr closed, asyncio's ``epoll`` descriptor became
descriptor 2.  Now ``/dev/null`` is opened on each closed one first (as Node does, so as
upstream Qwen Code does): the run goes on, its recording is whole, and every descriptor the
children inherit is what the parent meant.  A stdout that fails for another reason than its
reader leaving (``/dev/full``) is said on stderr and the exit code is 120, not 0: the output
is incomplete.  Every case is a real ``bash`` redirection in front of the real command.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import ROOT, env_for, write_script
from tests.faults.util import chats, no_traceback, read_recording

SCRIPT = [
    {
        "tool": "run_shell_command",
        "args": {"command": "readlink /proc/$PPID/fd/0 /proc/$PPID/fd/1 /proc/$PPID/fd/2"},
    },
    {"text": "done"},
]
"""The shell prints where headwire's own descriptors 0, 1 and 2 point (its parent's)."""

SCRIPT_COMMAND = Path(sys.executable).parent / "headwire"
"""The installed ``headwire`` script (``bin/headwire``), whose ``--version`` answers first."""


def _run(argv: list[str], redirect: str, tmp: Path, *, stdin: bytes = b"") -> tuple[int, str, Path]:
    """``bash -c 'exec ARGV REDIRECT'`` in ``tmp/proj``: (exit code, stderr, home).  stdout
    goes to ``tmp/out`` unless the redirection says otherwise."""
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(parents=True, exist_ok=True)
    proj.mkdir(parents=True, exist_ok=True)
    command = f"exec {shlex.join(argv)} >{shlex.quote(str(tmp / 'out'))} {redirect}"
    done = subprocess.run(
        ["bash", "-c", command],
        cwd=proj,
        env=env_for(home),
        input=stdin,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stderr.decode("utf-8", "replace"), home


def _agent(tmp: Path, fmt: str) -> list[str]:
    script = write_script(tmp / "script.jsonl", SCRIPT)
    return [sys.executable, "-m", "headwire", "--script", str(script), "--yolo", "-o", fmt]


def _complete_recording(home: Path) -> list[str]:
    """The one recording's shell output lines; every record is whole, the run answered."""
    (path,) = chats(home)
    records, bad = read_recording(path)
    assert bad == []
    assert records[-1]["type"] == "result" and records[-1]["result"] == "done"
    (result,) = [r for r in records if r["type"] == "tool_result"]
    return str(result["display"]).splitlines()


@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_stdout_closed(tmp_path: Path, fmt: str) -> None:
    code, err, home = _run([*_agent(tmp_path, fmt), "-p", "go"], ">&-", tmp_path)
    assert code == 0, err
    no_traceback(err)
    fd1 = _complete_recording(home)[1]
    assert fd1 == "/dev/null"  # not the recording, not a socket


def test_stderr_and_stdin_closed(tmp_path: Path) -> None:
    code, _, home = _run([*_agent(tmp_path, "json"), "-p", "go"], "2>&- <&-", tmp_path)
    assert code == 0
    fd0, _, fd2 = _complete_recording(home)
    assert (fd0, fd2) == ("/dev/null", "/dev/null")  # before: fd 2 was asyncio's epoll
    messages = json.loads((tmp_path / "out").read_text())
    assert messages[-1]["type"] == "result" and messages[-1]["result"] == "done"


def test_stdin_closed_reads_as_empty(tmp_path: Path) -> None:
    """Without ``-p`` a closed stdin is no prompt: the usual usage error, not a traceback."""
    code, err, _ = _run(_agent(tmp_path, "text"), "<&-", tmp_path)
    assert code == 2 and "No input provided" in err
    no_traceback(err)


@pytest.mark.parametrize("fmt", ["text", "json", "stream-json"])
def test_stdout_on_a_full_disk(tmp_path: Path, fmt: str) -> None:
    """``/dev/full``: every write fails with ``ENOSPC``.  Before: exit 0, the output gone."""
    code, err, home = _run([*_agent(tmp_path, fmt), "-p", "go"], ">/dev/full", tmp_path)
    assert code == 120
    assert err.count("headwire: cannot write to stdout: No space left on device") == 1, err
    no_traceback(err)
    _complete_recording(home)  # the run itself went on to its end


def test_session_stdout_on_a_full_disk(tmp_path: Path) -> None:
    prompt = json.dumps({"type": "user", "message": {"role": "user", "content": "go"}})
    argv = [*_agent(tmp_path, "stream-json"), "--input-format", "stream-json"]
    code, err, home = _run(argv, ">/dev/full", tmp_path, stdin=prompt.encode() + b"\n")
    assert code == 120
    assert "No space left on device" in err and "closed by the client" not in err
    _complete_recording(home)


COMMANDS = [
    ["--version"],
    ["-v"],
    ["schema", "--mode", "acp"],
    ["trust"],
    ["trust", "--list"],
    ["sessions", "list"],
    ["bound"],
]


def _commands() -> list[list[str]]:
    module = [sys.executable, "-m", "headwire"]
    found = [[*module, *args] for args in COMMANDS]
    if SCRIPT_COMMAND.exists():
        found += [[str(SCRIPT_COMMAND), "--version"], [str(SCRIPT_COMMAND), "-v"]]
    return found


@pytest.mark.parametrize("argv", _commands(), ids=lambda a: " ".join([Path(a[0]).name, *a[1:]]))
def test_commands_with_stdout_closed_or_full(tmp_path: Path, argv: list[str]) -> None:
    """Each command's own output: closed, it is discarded (exit 0); on a full disk, one line
    on stderr and exit 1; never a traceback."""
    if argv[-1] == "list":  # a recorded session, so ``sessions list`` has lines to write
        _run([*_agent(tmp_path, "json"), "-p", "go"], "", tmp_path)
    if argv[-1] == "--list":  # a trusted folder to list
        _run([sys.executable, "-m", "headwire", "trust"], "", tmp_path)
    stdin = b'{"type":"system","subtype":"init"}\n'
    code, err, _ = _run(argv, ">&-", tmp_path, stdin=stdin)
    assert code == 0, err
    no_traceback(err)
    code, err, _ = _run(argv, ">/dev/full", tmp_path, stdin=stdin)
    assert code == 1, err
    assert "cannot write to stdout: No space left on device" in err or argv[-1] == "bound", err
    assert "No space left on device" in err
    no_traceback(err)


def test_the_script_answers_version_before_the_command_line(tmp_path: Path) -> None:
    """``bin/headwire --version`` imports the package's ``__init__`` and nothing more of it
    (``-X importtime`` lists what was imported)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", str(ROOT / "bin" / "headwire"), "--version"],
        cwd=tmp_path,
        env=env_for(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    import headwire

    assert done.stdout == headwire.__version__ + "\n"
    ours = {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "headwire" in line
    }
    assert ours == {"headwire"}, ours
