"""The same hook settings under upstream Qwen Code 0.24.4 and headwire give the same effect (issue
24): a PreToolUse hook's exit 2 keeps the command from running and its stderr is the tool result
the model gets; a UserPromptSubmit hook's additionalContext reaches the model in upstream's tag;
both hooks receive the same fields.  Skipped without the oracle (``HEADWIRE_ORACLE_PKG_DIR``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import UPSTREAM_ENTRY, side_by_side
from tests.fakes.fake_openai import FakeOpenAI

pytestmark = [
    pytest.mark.skipif(
        shutil.which("node") is None or not UPSTREAM_ENTRY.exists(),
        reason="upstream Qwen Code not installed",
    ),
    pytest.mark.slow,  # the Node CLI takes seconds to start
]

HOOK = r"""
import json, os, sys
data = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(data) + "\n")
if data["hook_event_name"] == "PreToolUse":
    print("blocked by policy", file=sys.stderr)
    sys.exit(2)
if data["hook_event_name"] == "UserPromptSubmit" and data["prompt"]:
    context = {"hookEventName": "UserPromptSubmit", "additionalContext": "CTX-123"}
    print(json.dumps({"hookSpecificOutput": context}))
"""


def settings(hook: Path, log: Path) -> dict[str, Any]:
    command = {"type": "command", "command": f"python3 {hook} {log}"}
    return {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [command]}],
            "UserPromptSubmit": [{"hooks": [command]}],
        }
    }


def run(tmp: Path, which: str) -> tuple[Path, list[dict[str, Any]], list[dict[str, Any]]]:
    home, proj = tmp / which / "home", tmp / which / "proj"
    proj.mkdir(parents=True)
    hook, log = tmp / which / "hook.py", tmp / which / "hooks.log"
    hook.write_text(HOOK)
    folder = home / (".qwen" if which == "upstream" else ".headwire")
    folder.mkdir(parents=True)
    (folder / "settings.json").write_text(json.dumps(settings(hook, log)))
    script = [{"tool": "run_shell_command", "args": {"command": "touch made"}}, {"text": "ok"}]
    with FakeOpenAI(script) as fake:
        flags = ["--auth-type", "openai", "-m", "m", "--yolo", "-o", "stream-json", "-p", "hi"]
        command, env = side_by_side(which, home, flags, fake.base_url)
        done = subprocess.run(command, cwd=proj, env=env, capture_output=True, timeout=180)
        requests = list(fake.requests)
    assert done.returncode == 0, done.stderr.decode()
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    return proj, requests, entries


def test_the_same_hooks_have_the_same_effect(tmp_path: Path) -> None:
    results = {which: run(tmp_path, which) for which in ("upstream", "headwire")}
    for proj, requests, entries in results.values():
        assert not (proj / "made").exists()
        tool = next(m for m in requests[1]["messages"] if m["role"] == "tool")
        text = tool["content"] if isinstance(tool["content"], str) else tool["content"][0]["text"]
        assert text.strip() == "blocked by policy"
        first = json.dumps(requests[0]["messages"][-1])
        assert (
            "<qwen:user-prompt-submit-context>\\nCTX-123\\n</qwen:user-prompt-submit-context>"
            in (first)
        )
        pre = next(e for e in entries if e["hook_event_name"] == "PreToolUse")
        assert pre["tool_name"] == "run_shell_command"
        assert pre["tool_input"] == {"command": "touch made"}
        assert pre["cwd"] == str(proj) and pre["permission_mode"] == "yolo"
        submit = next(e for e in entries if e["hook_event_name"] == "UserPromptSubmit")
        assert submit["prompt"] == "hi"
    common = {"session_id", "transcript_path", "cwd", "hook_event_name", "timestamp"}
    for _, _, entries in results.values():
        for entry in entries:
            assert common <= set(entry)
