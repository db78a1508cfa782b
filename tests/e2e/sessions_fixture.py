"""A real recorded session with everything an export must show, made by real ``headwire`` runs.

Turn 1 (default approval mode, shell and agent allowed): the model runs a build printing
440,001 bytes (bounded on the wire, saved as an artifact), a command printing hostile markup
(``<script>``, ``</details>``, a ``javascript:`` link, an ``onerror`` image, a ``<style>``),
delegates to a subagent that runs a command of its own, and tries ``write_file``, which is
denied.  Turn 2 resumes the session (the scripted model replays its last two answers).

``python -m tests.e2e.sessions_fixture OUT.html`` writes the export of a fresh one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e.helpers import run_cli, write_script

HOSTILE = (
    '<script>document.title="pwned"</script>',
    "</details></pre></div></section>",
    '<a href="javascript:document.title=1">click me</a>',
    '<img src=x onerror="document.title=2">',
    "<style>body{display:none}</style>",
)


def script(proj: Path) -> list[dict[str, object]]:
    printf = "printf '%s\\n' " + " ".join("'" + h.replace("'", "'\\''") + "'" for h in HOSTILE)
    return [
        {
            "text": "I'll run the build and read its log.",
            "tool": "run_shell_command",
            "args": {
                "command": "python3 -c \"print('build step ' * 40000)\"",
                "description": "run the build",
            },
        },
        {"tool": "run_shell_command", "args": {"command": printf, "description": "hostile"}},
        {
            "tool": "agent",
            "args": {
                "description": "check the tests",
                "prompt": "Run the unit tests and report.",
                "subagent_type": "general-purpose",
            },
        },
        {"tool": "run_shell_command", "args": {"command": "echo '3 passed, 1 failed'"}},
        {"text": "3 passed, 1 failed: test_parse."},
        {
            "tool": "write_file",
            "args": {"file_path": str(proj / "NOTES.md"), "content": "fix test_parse"},
        },
        {"text": "The build log is 440 KB of noise; test_parse fails. <b>not bold</b>"},
    ]


def make_session(tmp: Path) -> tuple[Path, str]:
    """Record the session under ``tmp/home``; return the data directory and the session id."""
    proj = tmp / "proj"
    proj.mkdir(parents=True, exist_ok=True)
    path = write_script(tmp / "script.jsonl", script(proj.resolve()))
    base = ["--script", str(path), "--allowed-tools", "run_shell_command,agent"]
    first = run_cli([*base, "-o", "json", "-p", "Why does the build fail?"], tmp)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)[-1]["session_id"]
    second = run_cli([*base, "--resume", session_id, "-p", "Thanks!"], tmp)
    assert second.returncode == 0, second.stderr
    return first.home / ".headwire", session_id


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        home, sid = make_session(Path(tmp))
        out = run_cli(["sessions", "export", sid, "--format", "html"], Path(tmp))
        Path(sys.argv[1]).write_bytes(out.stdout)
