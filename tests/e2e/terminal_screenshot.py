"""Render the README's terminal screenshot: a REPL session in tmux, captured mid-run.

    PYTHONPATH=src:. python -m tests.e2e.terminal_screenshot docs/terminal.png

The scripted model measures a big log (approved with ``a``), tries to write a file (refused
with ``n``), answers, then runs a slow command; the screen is captured (with its colors,
``capture-pane -e``) while that command runs, so the live elapsed time shows.  The capture is
drawn by ``rich`` as SVG and photographed by Debian's headless ``chromium``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.e2e.helpers import env_for, write_script
from tests.e2e.terminal import WIDTH, Tmux

SHELL = "run_shell_command"


def _script(tmp: Path, proj: Path) -> Path:
    return write_script(
        tmp / "demo.jsonl",
        [
            {
                "text": "I'll measure the log first.",
                "tool": SHELL,
                "args": {"command": "python3 -c \"print('x'*499998)\"", "is_background": False},
            },
            {
                "tool": "write_file",
                "args": {"file_path": str(proj / "SUMMARY.md"), "content": "# Log\n" * 40},
            },
            {"text": "The log is 499,999 bytes of `x`. As asked, I did not write SUMMARY.md."},
            {"tool": SHELL, "args": {"command": "sleep 6 && echo '12 passed'"}},
            {"text": "12 passed."},
        ],
    )


def capture(tmp: Path) -> str:
    """The REPL's screen, with ANSI colors, while the second turn's tool runs."""
    home, proj = tmp / "home", tmp / "demo-project"
    home.mkdir()
    proj.mkdir()
    script = _script(tmp, proj)
    keep = ("PATH", "HOME", "HEADWIRE_HOME", "PYTHONPATH")
    env = {k: v for k, v in env_for(home).items() if k in keep}
    argv = [sys.executable, "-m", "headwire", "-m", "scripted", "--script", str(script)]
    term = Tmux(tmp, argv, env, proj)
    try:
        term.wait_prompt(1)
        term.type("How big is the build log? Summarize it into SUMMARY.md.")
        term.wait(rf"\? allow {SHELL}")
        term.send("a")
        term.wait(r"\? allow write_file")
        term.send("n")
        term.wait_prompt(2)
        term.type("Now run the tests.")
        term.wait(rf"{SHELL} running 2\.[5-9]s")
        return term._run("capture-pane", "-p", "-e", "-t", "t")
    finally:
        term.close()


def render(ansi: str, out: Path) -> None:
    """Draw the captured screen as SVG with ``rich``, then as PNG with ``chromium``."""
    from rich.console import Console
    from rich.text import Text

    lines = ansi.rstrip("\n").splitlines()
    while lines and not re.sub(r"\x1b\[[0-9;]*m", "", lines[-1]).strip():
        lines.pop()
    console = Console(record=True, width=WIDTH, file=open(os.devnull, "w"))  # noqa: SIM115
    console.print(Text.from_ansi("\n".join([*lines, ""])), soft_wrap=True)
    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "terminal.svg"
        console.save_svg(str(svg), title="headwire")
        width, height = re.search(  # type: ignore[union-attr]
            r'viewBox="0 0 ([0-9.]+) ([0-9.]+)"', svg.read_text()
        ).groups()
        page = Path(tmp) / "page.html"
        page.write_text(
            "<!doctype html><style>html,body{margin:0;background:#fff}</style>"
            f'<img src="terminal.svg" width="{width}" height="{height}">'
        )
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        assert chromium, "Debian's chromium is needed to render the PNG"
        subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                f"--screenshot={out.resolve()}",
                f"--window-size={round(float(width))},{round(float(height))}",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("png", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        ansi = capture(Path(tmp))
    render(ansi, args.png)
    print(f"wrote {args.png}")


if __name__ == "__main__":
    main()
