"""A real terminal for tests: one command in a private tmux server, driven with ``send-keys``
and read with ``capture-pane`` (what a person would see, after tmux's terminal emulation).

The pane is :data:`WIDTH` by :data:`HEIGHT`, its ``TERM`` is :data:`TERM` (what tmux emulates,
never the caller's) and its locale UTF-8; tmux itself runs in UTF-8 mode with a fixed
environment, so a caller's ``TERM=dumb`` or ``LANG=C`` changes nothing.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.environment import fixed

WIDTH, HEIGHT = 120, 40
TERM = "xterm-256color"
"""The pane's terminal type."""


def need_tmux() -> str:
    """The tmux binary, or skip the test."""
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux is not installed")
    return tmux


class Tmux:
    """One tmux session running ``argv`` in ``cwd`` with exactly ``env`` (its own socket), plus
    the pane's ``TERM`` and a UTF-8 locale (``term`` for another terminal type)."""

    def __init__(
        self,
        tmp: Path,
        argv: list[str],
        env: Mapping[str, str],
        cwd: Path,
        *,
        term: str = TERM,
    ) -> None:
        self.tmux = need_tmux()
        self.socket = tmp / "tmux.sock"
        self.env = {
            "PATH": os.environ.get("PATH", os.defpath),
            "TERM": TERM,
            "LANG": "C.UTF-8",
            "TMUX_TMPDIR": str(tmp),
        }
        env = {**fixed(env), "TERM": term, "LANG": "C.UTF-8"}
        command = " ".join(
            ["exec", "env", "-i", *(shlex.quote(f"{k}={v}") for k, v in env.items())]
            + [shlex.quote(a) for a in argv]
        )
        config = tmp / "tmux.conf"
        config.write_text(
            "set-option -g remain-on-exit on\nset-option -g history-limit 5000\n"
            "set-option -g set-clipboard on\n"  # an OSC 52 write makes a paste buffer
        )
        self._run(
            "-f",
            str(config),
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            str(WIDTH),
            "-y",
            str(HEIGHT),
            "-c",
            str(cwd),
            command,
        )

    def _run(self, *args: str) -> str:
        done = subprocess.run(
            [self.tmux, "-u", "-S", str(self.socket), *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
        if done.returncode != 0 and args[0] != "kill-server":
            raise AssertionError(f"tmux {args[0]} failed: {done.stderr.strip()}")
        return done.stdout

    def screen(self, history: bool = False) -> str:
        """The pane's text (with ``history``, the scrollback too), trailing blanks and tmux's
        ``Pane is dead`` line trimmed."""
        extra = ["-S", "-5000"] if history else []
        text = self._run("capture-pane", "-p", "-J", "-t", "t", *extra)
        lines = [line.rstrip() for line in text.splitlines()]
        lines = [line for line in lines if not line.startswith("Pane is dead (")]
        return "\n".join(lines).rstrip("\n")

    def send(self, *keys: str) -> None:
        """tmux key names (``C-c``, ``Enter``) or, with ``-l`` first, literal text."""
        self._run("send-keys", "-t", "t", *keys)

    def type(self, text: str) -> None:
        """Type ``text`` and press Enter."""
        self.send("-l", text)
        self.send("Enter")

    def wait(self, pattern: str, timeout: float = 30, *, history: bool = True) -> str:
        """Poll the screen until ``pattern`` (a regex) appears; returns the screen."""
        deadline = time.monotonic() + timeout
        regex = re.compile(pattern, re.MULTILINE)
        while True:
            screen = self.screen(history=history)
            if regex.search(screen):
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"no {pattern!r} on the terminal after {timeout}s:\n{screen}")
            time.sleep(0.02)

    def wait_prompt(self, count: int, timeout: float = 30) -> str:
        """Wait until the ``count``-th empty REPL prompt (a line that is only ``>``) is the last
        line with text on the screen."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen(history=True)
            lines = screen.splitlines()
            if lines and lines[-1] == ">" and screen.count("\n>") + screen.startswith(">") >= count:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"no prompt #{count} after {timeout}s:\n{screen}")
            time.sleep(0.005)

    def title(self) -> str:
        """The pane's title (an OSC 0 or 2 sequence the command wrote sets it)."""
        return self._run("display-message", "-p", "-t", "t", "#{pane_title}").strip()

    def buffers(self) -> list[str]:
        """The paste buffers' contents (each OSC 52 clipboard write the command made)."""
        names = self._run("list-buffers", "-F", "#{buffer_name}").split()
        return [self._run("show-buffer", "-b", name) for name in names]

    def pid(self) -> int:
        """The process id of the command."""
        return int(self._run("display-message", "-p", "-t", "t", "#{pane_pid}").strip())

    def dead_status(self) -> int | None:
        """The command's exit status once it ended, else ``None``.

        tmux may leave an exited command a zombie for a while before it marks the pane dead,
        so a zombie's status is read from ``/proc/PID/stat`` (its ``exit_code`` field).
        """
        out = self._run("display-message", "-p", "-t", "t", "#{pane_dead}:#{pane_dead_status}")
        dead, _, status = out.strip().partition(":")
        if dead == "1" and status:
            return int(status)
        try:
            stat = Path(f"/proc/{self.pid()}/stat").read_text()
        except OSError:
            return None
        fields = stat.rpartition(")")[2].split()
        if fields[0] != "Z":
            return None
        code = int(fields[-1])  # as waitpid reports it
        return code >> 8 if code & 0x7F == 0 else 128 + (code & 0x7F)

    def wait_exit(self, timeout: float = 20) -> int:
        """Wait for the command to end; its exit status."""
        deadline = time.monotonic() + timeout
        while (status := self.dead_status()) is None:
            if time.monotonic() > deadline:
                raise AssertionError(f"still running after {timeout}s:\n{self.screen()}")
            time.sleep(0.05)
        return status

    def close(self) -> None:
        """Stop the tmux server (and the command with it)."""
        self._run("kill-server")
