"""The human side on real terminals: text-mode progress on a pty, the REPL in tmux.

* Text mode with stderr on a pty shows each tool call, a live elapsed time, the outcome and a
  denial with the flag that would allow it; stdout is byte for byte the stdout of the same run
  with stderr on a pipe, where stderr shows no progress at all.
* The REPL (tmux, against the fake OpenAI server): asks for approval and obeys ``y`` and ``n``;
  slash commands never reach the model; Ctrl-C during a 30 s tool returns to the prompt in
  under 0.5 s with the process alive; Ctrl-D at an empty prompt leaves with 0; keys typed
  while the model thinks never answer the approval question that follows.
* Model text with OSC 2 (title), OSC 52 (clipboard), CSI, DCS and C1 sequences changes no
  title and no clipboard and shows as ``^[`` wherever it reaches the terminal.

Each pane gets its own TERM and locale (:mod:`tests.e2e.terminal`): the caller's ``TERM=dumb``
or ``LANG=C`` changes nothing.
"""

from __future__ import annotations

import base64
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import env_for, write_script
from tests.e2e.terminal import Tmux, need_tmux
from tests.fakes.fake_openai import FakeOpenAI

ESC = "\x1b"
ANSWER = b"The answer.\nSecond line.\n"
KEEP = ("PATH", "HOME", "HEADWIRE_HOME", "PYTHONPATH")
"""What a tmux pane's command gets from :func:`env_for` (the pane sets its own TERM, locale)."""
SHELL = "run_shell_command"


def _script(tmp: Path) -> Path:
    return write_script(
        tmp / "script.jsonl",
        [
            {
                "text": "Let me look.",
                "tool": SHELL,
                "args": {"command": "sleep 1.2 && echo hi", "is_background": False},
            },
            {
                "tool": "write_file",
                "args": {"file_path": str(tmp / "proj" / "x.txt"), "content": "x"},
            },
            {"text": "The answer.\nSecond line."},
        ],
    )


def _argv(tmp: Path, extra: tuple[str, ...] = ()) -> list[str]:
    """A text-mode run: an allowed shell call, a denied write, a two-line answer."""
    (tmp / "home").mkdir(parents=True, exist_ok=True)
    (tmp / "proj").mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "headwire", "-m", "scripted", "--script", str(_script(tmp))]
    argv += ["--allowed-tools", f"{SHELL}(sleep)", "--allowed-tools", f"{SHELL}(echo)"]
    return [*argv, *extra, "-p", "go"]


def _piped(tmp: Path, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        _argv(tmp, extra),
        cwd=tmp / "proj",
        env=env_for(tmp / "home"),
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


def test_text_mode_shows_progress_on_a_terminal_and_keeps_stdout(tmp_path: Path) -> None:
    piped = _piped(tmp_path / "piped")
    assert piped.returncode == 0
    assert piped.stdout == ANSWER
    assert piped.stderr == b""  # nothing changes when stderr is not a terminal
    tmp = tmp_path / "tty"
    argv = _argv(tmp)
    out = tmp / "stdout.bin"
    env = {k: v for k, v in env_for(tmp / "home").items() if k in KEEP}
    # stdout to a file, stderr (and stdin) on the terminal
    term = Tmux(tmp, ["sh", "-c", f'exec "$0" "$@" > {out}', *argv], env, tmp / "proj")
    try:
        live = term.wait(rf"{SHELL} running 0\.[3-9]s", history=False)  # the live elapsed time
        assert term.wait_exit() == 0
        screen = term.screen(history=True)
    finally:
        term.close()
    assert out.read_bytes() == piped.stdout
    assert f"● {SHELL}  sleep 1.2 && echo hi" in live
    expected = [
        "Let me look.",  # narration before a tool call stays
        f"● {SHELL}  sleep 1.2 && echo hi",
        "  ✓ 2 bytes in 1.",
        "● write_file",
        '  ⊘ denied: Tool "write_file" requires user approval',
        "The answer.",  # stdout is a file here: the answer shows on the terminal
        "Second line.",
        "── 2 tool calls · 1.",
    ]
    lines = screen.splitlines()
    assert len(lines) == len(expected), screen
    for line, start in zip(lines, expected, strict=True):
        assert line.startswith(start), screen
    assert "whole on the wire" in lines[2]
    assert f"{SHELL} running" not in screen  # the live region is gone


def test_verbose_without_a_terminal_writes_plain_lines(tmp_path: Path) -> None:
    done = _piped(tmp_path, ("--verbose",))
    assert done.returncode == 0
    assert done.stdout == ANSWER
    text = done.stderr.decode()
    assert ESC not in text
    assert f"● {SHELL}  sleep 1.2 && echo hi\n  ✓ 2 bytes in 1." in text
    assert "The answer.\nSecond line.\n" in text  # the text as it streamed
    assert f"{SHELL} running" not in text  # no live region off a terminal


# ---------------------------------------------------------------------------------------------
# Text from models and tools on a real terminal: shown as ^[, never run.


def _hostile(mark: str) -> str:
    """Text that retitles the window (OSC 2), writes the clipboard (OSC 52), clears the screen
    and moves the cursor (CSI), asks the terminal a question (DCS) and opens an 8-bit CSI."""
    clip = base64.b64encode(f"CLIP-{mark}".encode()).decode()
    return (
        f"<{mark}>\x1b]2;TITLE-{mark}\x07\x1b]52;c;{clip}\x07\x1b[2J\x1b[H"
        f"\x1bP+q544e\x1b\\\x9b31m</{mark}>"
    )


def _shown(mark: str) -> str:
    """:func:`_hostile` as the terminal must show it."""
    clip = base64.b64encode(f"CLIP-{mark}".encode()).decode()
    return f"<{mark}>^[]2;TITLE-{mark}^G^[]52;c;{clip}^G^[[2J^[[H^[P+q544e^[\\\\x9b31m</{mark}>"


SURFACES = ("live", "answer", "error", "schema", "show", "repl")
"""Where model text reaches a person: the live region of a ``-p`` run's progress, its answer
on a terminal stdout, text mode's error line, a ``--json-schema`` failure's "it began",
``sessions show`` (the recorded prompt), the REPL's answer."""


def test_model_text_never_drives_the_terminal(tmp_path: Path) -> None:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    session = "5f0c2a8e-1b7d-4c3e-9a6f-2d4b8e1c7a90"
    scripts: dict[str, list[dict[str, Any]]] = {
        "run": [
            {"text": _hostile("live"), "tool": SHELL, "args": {"command": "echo hi"}},
            {"text": _hostile("answer")},
        ],
        "error": [{"error": _hostile("error")}],
        "schema": [{"text": _hostile("schema")}] * 3,
        "repl": [{"text": _hostile("repl")}],
    }
    files = {
        name: write_script(tmp_path / f"{name}.jsonl", turns) for name, turns in scripts.items()
    }
    hw = f"{shlex.quote(sys.executable)} -m headwire"
    steps = [
        f"{hw} -m scripted --script {files['run']} --yolo --session-id {session} "
        f"-p {shlex.quote(_hostile('show'))}",
        f"{hw} -m scripted --script {files['error']} -p go",
        f'{hw} -m scripted --script {files["schema"]} --json-schema \'{{"type":"object"}}\' -p go',
        f"{hw} sessions show {session}",
        f"exec {hw} -m scripted --script {files['repl']}",
    ]
    runner = tmp_path / "run.sh"
    runner.write_text("\n".join(steps) + "\n")
    env = {k: v for k, v in env_for(home).items() if k in KEEP}
    term = Tmux(tmp_path, ["sh", str(runner)], env, proj)
    try:
        term.wait("Ctrl-D leaves", timeout=60)
        term.wait_prompt(1)
        term.type("go")
        term.wait("</repl>")
        term.wait_prompt(2)
        term.send("C-d")
        assert term.wait_exit() == 0
        screen = term.screen(history=True)
        title, buffers = term.title(), term.buffers()
    finally:
        term.close()
    problems = [f"not shown as ^[: {mark}" for mark in SURFACES if _shown(mark) not in screen]
    if "TITLE-" in title:
        problems.append(f"an OSC 2 retitled the window: {title!r}")
    problems += [f"an OSC 52 wrote the clipboard: {text!r}" for text in buffers]
    assert not problems, "\n".join(problems) + "\n" + screen


# ---------------------------------------------------------------------------------------------
# The REPL in tmux.


def _repl(tmp: Path, fake: FakeOpenAI, *flags: str) -> Tmux:
    need_tmux()
    home, proj = tmp / "home", tmp / "proj"
    home.mkdir(exist_ok=True)
    proj.mkdir(exist_ok=True)
    env = {k: v for k, v in env_for(home).items() if k in KEEP}
    env.update(OPENAI_BASE_URL=fake.base_url)
    env.update(OPENAI_API_KEY="sk-test", OPENAI_MODEL="fake-model")
    argv = [sys.executable, "-m", "headwire", *flags]
    return Tmux(tmp, argv, env, proj)


def _contents(requests: list[Any]) -> str:
    return "\n".join(str(m.get("content")) for body in requests for m in body["messages"])


def _touch(name: str) -> dict[str, Any]:
    return {"tool": SHELL, "args": {"command": f"touch {name}", "is_background": False}}


SLASH = ("/help", "/sessions", "/model", "/approval-mode", "/hepl")


def test_repl_asks_obeys_and_keeps_slash_commands_local(tmp_path: Path) -> None:
    replies = [_touch("yes.txt"), {"text": "ran it"}, _touch("no.txt"), {"text": "skipped"}]
    replies += [_touch("stop.txt"), {"text": "never sent"}]
    with FakeOpenAI(replies) as fake:
        term = _repl(tmp_path, fake)
        try:
            term.wait_prompt(1, timeout=30)
            for number, command in enumerate(SLASH, start=2):
                term.type(command)
                term.wait_prompt(number)
            term.wait("Did you mean /help")
            assert fake.requests == []  # no slash command reached the model
            term.type("make yes.txt")
            term.wait(r"\? allow run_shell_command: touch yes.txt")
            term.send("y")
            term.wait("ran it")
            term.wait_prompt(7)
            assert (tmp_path / "proj" / "yes.txt").exists()
            term.type("make no.txt")
            term.wait(r"\? allow run_shell_command: touch no.txt")
            term.send("n")
            term.wait("skipped")
            screen = term.wait_prompt(8)
            assert 'denied: Permission to use "run_shell_command" was denied by the user' in screen
            assert not (tmp_path / "proj" / "no.txt").exists()
            term.type("make stop.txt")
            term.wait(r"\? allow run_shell_command: touch stop.txt")
            term.send("C-c")  # at the question: deny and cancel the turn
            screen = term.wait_prompt(9)
            assert screen.endswith("Operation cancelled.\n>")
            assert not (tmp_path / "proj" / "stop.txt").exists()
            term.type("/sessions")
            term.wait(r"^\* [0-9a-f-]{36} .* make yes.txt$")
            term.wait_prompt(10)
            term.send("C-d")
            assert term.wait_exit() == 0
        finally:
            term.close()
        requests = list(fake.requests)
    assert len(requests) == 5  # the cancelled turn asked once, and nothing after the Ctrl-C
    contents = _contents(requests)
    assert "make yes.txt" in contents and "make no.txt" in contents and "make stop.txt" in contents
    for command in SLASH:
        assert command not in contents


def test_repl_keys_typed_before_a_question_never_answer_it(tmp_path: Path) -> None:
    """Typed while the model thinks, ``also run the tests`` must not be read as ``a`` (allow
    from now on): the question waits for a key pressed after it appears."""
    slow = {**_touch("one.txt"), "delay_s": 2.0}
    replies = [slow, _touch("two.txt"), {"text": "done both"}]
    with FakeOpenAI(replies) as fake:
        term = _repl(tmp_path, fake)
        try:
            term.wait_prompt(1, timeout=30)
            term.type("make files")
            term.wait("thinking")  # the turn runs; the model has not answered yet
            assert not (tmp_path / "proj" / "one.txt").exists()
            term.send("-l", "also run the tests")
            term.send("Enter")
            term.wait(r"\? allow run_shell_command: touch one.txt")
            screen = term.wait("typed before this question dropped", timeout=10)
            assert not (tmp_path / "proj" / "one.txt").exists(), screen  # no key answered it
            term.send("y")
            term.wait(r"\? allow run_shell_command: touch two.txt")  # still asked: no "always"
            assert (tmp_path / "proj" / "one.txt").exists()
            term.send("n")
            term.wait("done both")
            term.wait_prompt(2)
            assert not (tmp_path / "proj" / "two.txt").exists()
            term.send("C-d")
            assert term.wait_exit() == 0
        finally:
            term.close()
        requests = list(fake.requests)
    assert "also run the tests" not in _contents(requests)


def test_repl_ctrl_c_cancels_a_running_tool_and_returns_to_the_prompt(tmp_path: Path) -> None:
    sleep = {"tool": SHELL, "args": {"command": "sleep 30", "is_background": False}}
    with FakeOpenAI([sleep, {"text": "after"}, {"text": "next answer"}]) as fake:
        term = _repl(tmp_path, fake, "--yolo")
        try:
            term.wait_prompt(1, timeout=30)
            term.type("sleep please")
            term.wait(rf"{SHELL} running 0\.[3-9]")  # the tool runs (live elapsed time)
            pid = term.pid()
            started = time.monotonic()
            term.send("C-c")
            screen = term.wait_prompt(2, timeout=10)
            latency = time.monotonic() - started
            print(f"Ctrl-C to prompt: {latency * 1000:.0f} ms")
            assert "Operation cancelled." in screen and "✗ cancelled" in screen
            assert latency < 0.5
            assert term.dead_status() is None
            os.kill(pid, 0)  # alive
            assert not [args for args in _descendants(pid) if "sleep" in args]
            term.type("go on")
            term.wait("after")
            term.wait_prompt(3)
            term.send("C-c")  # Ctrl-C at an empty prompt leaves
            assert term.wait_exit() == 130
        finally:
            term.close()
        requests = list(fake.requests)
    tool_results = [m for m in requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_results] == ["Operation cancelled."]


def _descendants(pid: int) -> list[str]:
    """The command lines of ``pid``'s live descendants."""
    done = subprocess.run(
        ["ps", "-eo", "pid=,ppid=,stat=,args="], capture_output=True, text=True, check=True
    )
    rows = [line.split(None, 3) for line in done.stdout.splitlines()]
    children: dict[int, list[tuple[int, str]]] = {}
    for row in rows:
        if len(row) == 4 and not row[2].startswith("Z"):
            children.setdefault(int(row[1]), []).append((int(row[0]), row[3]))
    found, todo = [], [pid]
    while todo:
        for child, args in children.get(todo.pop(), []):
            found.append(args)
            todo.append(child)
    return found


@pytest.mark.parametrize("flag", ["--version", "-v"])
def test_version_imports_no_terminal_library(flag: str) -> None:
    code = (
        f"import sys\nfrom headwire.cli.main import main\nmain([{flag!r}])\n"
        "assert not {'rich', 'prompt_toolkit'} & set(sys.modules), sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, timeout=30)


def test_repl_compact_summarizes_and_shows_it(tmp_path: Path) -> None:
    """``/compact`` in the REPL: a summary call (no tools), the progress lines, and the next
    turn's request carries the first request and the summary instead of the old steps."""
    from tests.fakes.long_task import LongTask

    fake = FakeOpenAI(window=100_000, long_task=LongTask(steps=3, output_bytes=2_000))
    with fake:
        term = _repl(tmp_path, fake, "--yolo")
        try:
            term.wait_prompt(1, timeout=30)
            term.type("run the long task [first-request]")
            term.wait("All 3 steps done.")
            term.wait_prompt(2)
            term.type("/compact")
            term.wait("compacted: ~")
            term.wait_prompt(3)
            term.type("and now?")
            term.wait_prompt(4)
            term.send("C-d")
            assert term.wait_exit() == 0
        finally:
            term.close()
        requests = list(fake.requests)
    assert not requests[-2].get("tools")  # the summary call
    last = _contents(requests[-1:])
    assert "run the long task [first-request]" in last and "[headwire: summary" in last
    assert "step 1 of the long task" not in last


def test_repl_output_style_lists_switches_and_reaches_the_next_turn(tmp_path: Path) -> None:
    """``/output-style`` lists the styles (a custom one whose description carries an OSC 52
    clipboard write shows it as ``^[``), ``/output-style learning`` switches to the style a
    headless run skips, an unknown name changes nothing, and the next turn's request carries
    the style's section and its reminder; ``default`` takes it away again."""
    folder = tmp_path / "home" / ".qwen" / "output-styles"
    folder.mkdir(parents=True)
    clip = base64.b64encode(b"rm -rf ~").decode()
    (folder / "review.md").write_text(
        f"---\nname: Review\ndescription: findings {ESC}]52;c;{clip}\x07 first\n---\nREVIEW-BODY\n"
    )
    with FakeOpenAI([{"text": "first answer"}, {"text": "second answer"}]) as fake:
        term = _repl(tmp_path, fake)
        try:
            term.wait_prompt(1, timeout=30)
            term.type("/output-style")
            screen = term.wait(r"output style: default")
            assert "Learning" in screen and "Review" in screen and "(user)" in screen
            assert "findings ^[]52;c;" in screen
            term.wait_prompt(2)
            term.type("/output-style nosuch")
            term.wait("'nosuch' not found")
            term.wait_prompt(3)
            term.type("/output-style learning")
            term.wait("output style: Learning")
            term.wait_prompt(4)
            term.type("teach me")
            term.wait("first answer")
            term.wait_prompt(5)
            term.type("/output-style default")
            term.wait("output style: default")
            term.wait_prompt(6)
            term.type("and now")
            term.wait("second answer")
            term.wait_prompt(7)
            term.send("C-d")
            assert term.wait_exit() == 0
        finally:
            term.close()
        requests = list(fake.requests)
    assert len(requests) == 2
    first, second = (_contents([r]) for r in requests)
    assert "# Output Style: Learning" in first and "Learning output style is active." in first
    system, last = requests[1]["messages"][0]["content"], requests[1]["messages"][-1]["content"]
    assert "# Output Style" not in system and "output style is active" not in str(last)
    assert "and now" in str(last) and "teach me" in second  # the earlier turn stays as it was
