"""Hooks (issue 24), each run as a real hook process through headwire: its effect on the tool,
on what the model received (the fake server's log) and on the wire."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.e2e.helpers import run_cli
from tests.fakes.fake_openai import FakeOpenAI

FLAGS = ["--auth-type", "openai", "-o", "stream-json", "-m", "m"]

HOOK = r"""
import json, os, sys
data = json.load(sys.stdin)
with open(os.path.join(os.environ["QWEN_PROJECT_DIR"], "hooks.log"), "a") as log:
    log.write(json.dumps(data) + "\n")
mode = sys.argv[1]
if mode == "exit2":
    print(sys.argv[2], file=sys.stderr)
    sys.exit(2)
if mode == "exit1":
    print("broken hook", file=sys.stderr)
    sys.exit(1)
if mode == "json":
    print(sys.argv[2])
if mode == "text":
    print(sys.argv[2])
if mode == "once":  # block the first time only (Stop)
    flag = os.path.join(os.environ["QWEN_PROJECT_DIR"], "once.flag")
    if not os.path.exists(flag):
        open(flag, "w").close()
        print(json.dumps({"decision": "block", "reason": sys.argv[2]}))
"""


def hook(mode: str, arg: str = "", **extra: Any) -> dict[str, Any]:
    command = f'python3 "$QWEN_PROJECT_DIR/hook.py" {mode} {json.dumps(arg)}'
    return {"type": "command", "command": command, "name": f"{mode}-hook", **extra}


def setup(tmp: Path, hooks: dict[str, Any], **settings: Any) -> Path:
    proj = tmp / "proj"
    (proj / ".headwire").mkdir(parents=True, exist_ok=True)
    (proj / "hook.py").write_text(HOOK)
    (proj / ".headwire" / "settings.json").write_text(json.dumps({"hooks": hooks, **settings}))
    return proj


def run(fake: FakeOpenAI, tmp: Path, *args: str, trust: bool = True, **env: str) -> Any:
    extra = {"HEADWIRE_TRUST_PROJECT": "1"} if trust else {}
    return run_cli([*FLAGS, *args], tmp, OPENAI_BASE_URL=fake.base_url, **extra, **env)


def lines(stdout: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def hook_messages(stdout: bytes) -> list[dict[str, Any]]:
    return [m for m in lines(stdout) if m.get("subtype") == "hook_response"]


def logged(proj: Path) -> list[dict[str, Any]]:
    path = proj / "hooks.log"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


def tool_messages(body: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in body["messages"] if m["role"] == "tool"]


def shell(command: str) -> dict[str, Any]:
    return {"tool": "run_shell_command", "args": {"command": command}}


def test_pre_tool_use_exit_2_blocks_the_command_before_it_runs(tmp_path: Path) -> None:
    proj = setup(tmp_path, {"PreToolUse": [{"matcher": "Bash", "hooks": [hook("exit2", "no!")]}]})
    with FakeOpenAI([shell("touch made"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go")
        second = fake.requests[1]
    assert proc.returncode == 0, proc.stderr
    assert not (proj / "made").exists()
    assert "no!" in tool_messages(second)[0]
    (entry,) = logged(proj)
    assert entry["hook_event_name"] == "PreToolUse"
    assert entry["tool_name"] == "run_shell_command"
    assert entry["tool_input"] == {"command": "touch made"}
    assert entry["permission_mode"] == "yolo" and entry["cwd"] == str(proj)
    assert entry["session_id"] and entry["transcript_path"].endswith(".jsonl")
    (wire,) = hook_messages(proc.stdout)
    assert wire["hook_event"] == "PreToolUse" and wire["hook_name"] == "exit2-hook"
    assert wire["outcome"] == "blocked" and wire["exit_code"] == 2
    assert wire["stderr"].strip() == "no!" and wire["duration_ms"] >= 0


def test_pre_tool_use_json_deny_and_matchers(tmp_path: Path) -> None:
    deny = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "policy says no",
            }
        }
    )
    groups = [
        {"matcher": "^read_file$", "hooks": [hook("exit2", "wrong tool")]},
        {"matcher": "Write|Bash", "hooks": [hook("json", deny)]},
    ]
    proj = setup(tmp_path, {"PreToolUse": groups})
    with FakeOpenAI([shell("touch made"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go")
        second = fake.requests[1]
    assert proc.returncode == 0, proc.stderr
    assert not (proj / "made").exists()
    assert "policy says no" in tool_messages(second)[0]
    assert len(logged(proj)) == 1  # the read_file group did not run
    assert [m["outcome"] for m in hook_messages(proc.stdout)] == ["blocked"]


def test_pre_tool_use_updated_input_runs_and_is_checked(tmp_path: Path) -> None:
    change = {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {}}}
    change["hookSpecificOutput"]["updatedInput"] = {"command": "echo changed > out.txt"}
    proj = setup(tmp_path, {"PreToolUse": [{"hooks": [hook("json", json.dumps(change))]}]})
    with FakeOpenAI([shell("echo original > out.txt"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go")
    assert proc.returncode == 0, proc.stderr
    assert (proj / "out.txt").read_text() == "changed\n"
    # an updatedInput the tool's schema refuses does not run
    bad = {"hookSpecificOutput": {"updatedInput": {"command": 42}}}
    setup(tmp_path, {"PreToolUse": [{"hooks": [hook("json", json.dumps(bad))]}]})
    (proj / "out.txt").unlink()
    with FakeOpenAI([shell("echo original > out.txt"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go")
        second = fake.requests[1]
    assert proc.returncode == 0, proc.stderr
    assert not (proj / "out.txt").exists()
    assert "updatedInput" in tool_messages(second)[0]


def test_pre_tool_use_allow_skips_the_question_but_not_a_deny_rule(tmp_path: Path) -> None:
    allow = json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}})
    proj = setup(tmp_path, {"PreToolUse": [{"hooks": [hook("json", allow)]}]})
    with FakeOpenAI([shell("touch made"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "-p", "go")  # default mode: no one to ask in -p
    assert proc.returncode == 0, proc.stderr
    assert (proj / "made").exists()
    (proj / "made").unlink()
    with FakeOpenAI([shell("touch made"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--exclude-tools", "run_shell_command(touch *)", "-p", "go")
    assert proc.returncode == 0, proc.stderr
    assert not (proj / "made").exists()


def test_permission_request_hook_answers_the_question(tmp_path: Path) -> None:
    answer = {"hookSpecificOutput": {"decision": {"behavior": "allow"}}}
    proj = setup(tmp_path, {"PermissionRequest": [{"hooks": [hook("json", json.dumps(answer))]}]})
    with FakeOpenAI([shell("touch made"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "-p", "go")
    assert proc.returncode == 0, proc.stderr
    assert (proj / "made").exists()
    assert [e["hook_event_name"] for e in logged(proj)] == ["PermissionRequest"]


def test_post_tool_use_sees_the_whole_output_and_adds_context(tmp_path: Path) -> None:
    context = json.dumps({"hookSpecificOutput": {"additionalContext": "AUDITED"}})
    proj = setup(
        tmp_path,
        {"PostToolUse": [{"matcher": "run_shell_command", "hooks": [hook("json", context)]}]},
    )
    with FakeOpenAI([shell("seq 1 30000"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go")
        second = fake.requests[1]
    assert proc.returncode == 0, proc.stderr
    (entry,) = logged(proj)
    full = entry["tool_response"]["display"]
    assert full.startswith("1\n2\n3\n") and "\n29999\n30000" in full  # whole, not a preview
    assert len(full) > 65536 and Path(entry["tool_response"]["output_file"]).is_file()
    assert entry["duration_ms"] >= 0
    assert tool_messages(second)[0].endswith("AUDITED")


def test_post_tool_use_failure(tmp_path: Path) -> None:
    proj = setup(tmp_path, {"PostToolUseFailure": [{"hooks": [hook("log")]}]})
    with FakeOpenAI([shell("echo bad >&2; exit 3"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go")
    assert proc.returncode == 0, proc.stderr
    (entry,) = logged(proj)
    assert entry["hook_event_name"] == "PostToolUseFailure" and entry["error"]


def test_user_prompt_submit_context_and_block(tmp_path: Path) -> None:
    proj = setup(tmp_path, {"UserPromptSubmit": [{"hooks": [hook("text", "ticket ABC-1")]}]})
    with FakeOpenAI([{"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "-p", "go")
        user = fake.requests[0]["messages"][-1]["content"]
    assert proc.returncode == 0, proc.stderr
    assert user.startswith("go\n\n") and "ticket ABC-1" in user
    assert logged(proj)[0]["prompt"] == "go"
    setup(tmp_path, {"UserPromptSubmit": [{"hooks": [hook("exit2", "secrets in prompt")]}]})
    with FakeOpenAI([{"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "-p", "go")
        requests = len(fake.requests)
    assert requests == 0
    assert proc.returncode != 0
    result = lines(proc.stdout)[-1]
    assert result["type"] == "result" and result["is_error"] is True
    assert "secrets in prompt" in json.dumps(result)


def test_session_start_stop_and_session_end_in_one_shot(tmp_path: Path) -> None:
    hooks = {
        "SessionStart": [{"matcher": "startup", "hooks": [hook("text", "STARTED-CONTEXT")]}],
        "Stop": [{"hooks": [hook("once", "please add tests")]}],
        "SessionEnd": [{"hooks": [hook("log")]}],
    }
    proj = setup(tmp_path, hooks)
    with FakeOpenAI([{"text": "first"}, {"text": "second"}]) as fake:
        proc = run(fake, tmp_path, "-p", "go")
        requests = list(fake.requests)
    assert proc.returncode == 0, proc.stderr
    assert "STARTED-CONTEXT" in requests[0]["messages"][0]["content"]
    assert len(requests) == 2
    assert requests[1]["messages"][-1] == {"role": "user", "content": "please add tests"}
    (result,) = [m for m in lines(proc.stdout) if m["type"] == "result"]
    assert result["result"] == "second"
    assert hook_messages(proc.stdout)[-1]["hook_event"] == "SessionEnd"  # after the result
    events = [e["hook_event_name"] for e in logged(proj)]
    assert events == ["SessionStart", "Stop", "Stop", "SessionEnd"]
    stops = [e for e in logged(proj) if e["hook_event_name"] == "Stop"]
    assert [s["stop_hook_active"] for s in stops] == [False, True]
    assert stops[0]["last_assistant_message"] == "first"


def test_stop_blocking_is_capped(tmp_path: Path) -> None:
    block = json.dumps({"decision": "block", "reason": "again"})
    setup(tmp_path, {"Stop": [{"hooks": [hook("json", block)]}]}, stopHookBlockingCap=2)
    with FakeOpenAI({"replies": [], "default": {"text": "x"}}) as fake:
        proc = run(fake, tmp_path, "-p", "go")
        requests = len(fake.requests)
    assert proc.returncode == 0, proc.stderr
    assert requests == 3
    assert "Stop hooks blocked 2 times" in proc.stderr


def test_a_hanging_hook_is_killed_and_the_run_goes_on(tmp_path: Path) -> None:
    slow = {"type": "command", "command": "sleep 30 & sleep 30", "timeout": 1, "name": "slow"}
    proj = setup(tmp_path, {"PreToolUse": [{"hooks": [slow]}]})
    started = time.monotonic()
    with FakeOpenAI([shell("touch made"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go")
    assert time.monotonic() - started < 20
    assert proc.returncode == 0, proc.stderr
    assert (proj / "made").exists()
    (wire,) = hook_messages(proc.stdout)
    assert wire["outcome"] == "timeout" and wire["exit_code"] is None


def test_other_exit_codes_are_non_blocking(tmp_path: Path) -> None:
    proj = setup(tmp_path, {"PreToolUse": [{"hooks": [hook("exit1")]}]})
    with FakeOpenAI([shell("touch made"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go")
    assert proc.returncode == 0, proc.stderr
    assert (proj / "made").exists()
    (wire,) = hook_messages(proc.stdout)
    assert wire["outcome"] == "error" and wire["exit_code"] == 1


def test_project_hooks_need_a_trusted_folder(tmp_path: Path) -> None:
    proj = setup(tmp_path, {"PreToolUse": [{"hooks": [hook("exit2", "no")]}]})
    with FakeOpenAI([shell("touch made"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go", trust=False)
    assert proc.returncode == 0, proc.stderr
    assert (proj / "made").exists() and logged(proj) == []
    assert "ignoring hooks" in proc.stderr and "not a trusted folder" in proc.stderr
    assert hook_messages(proc.stdout) == []


def test_disable_all_hooks(tmp_path: Path) -> None:
    proj = setup(tmp_path, {"PreToolUse": [{"hooks": [hook("exit2", "no")]}]}, disableAllHooks=True)
    with FakeOpenAI([shell("touch made"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go")
    assert proc.returncode == 0, proc.stderr
    assert (proj / "made").exists() and logged(proj) == []


def test_bad_hooks_settings_are_one_line_errors(tmp_path: Path) -> None:
    setup(tmp_path, {"PreToolUse": [{"hooks": [{"type": "command"}]}]})
    with FakeOpenAI([{"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "-p", "go")
    assert proc.returncode == 2
    assert "hooks.PreToolUse[0].hooks[0]" in proc.stderr and "command" in proc.stderr


def test_no_hooks_no_hook_machinery(tmp_path: Path) -> None:
    """A whole run without hooks never imports the hook modules (so they cost it nothing)."""
    with FakeOpenAI([shell("true"), {"text": "ok"}]) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go", PYTHONPROFILEIMPORTTIME="1")
    assert proc.returncode == 0, proc.stderr
    assert "headwire.events" in proc.stderr  # the import log is there
    assert "headwire.runtime.hooks.decide" not in proc.stderr
    assert "headwire.runtime.hooks.runner" not in proc.stderr
    assert hook_messages(proc.stdout) == []


def test_subagent_start_and_stop(tmp_path: Path) -> None:
    hooks = {
        "SubagentStart": [{"matcher": "general-purpose", "hooks": [hook("log")]}],
        "SubagentStop": [{"hooks": [hook("log")]}],
        "PreToolUse": [{"matcher": "run_shell_command", "hooks": [hook("log")]}],
    }
    proj = setup(tmp_path, hooks)
    task = {"tool": "agent", "args": {"description": "d", "prompt": "look"}}
    script = [task, shell("true"), {"text": "sub done"}, {"text": "ok"}]
    with FakeOpenAI(script) as fake:
        proc = run(fake, tmp_path, "--yolo", "-p", "go")
    assert proc.returncode == 0, proc.stderr
    entries = logged(proj)
    assert [e["hook_event_name"] for e in entries] == [
        "SubagentStart",
        "PreToolUse",
        "SubagentStop",
    ]
    start, pre, stop = entries
    assert start["agent_type"] == "general-purpose" and start["agent_id"]
    assert pre["agent_id"] == start["agent_id"]  # fired inside the subagent
    assert stop["last_assistant_message"] == "sub done"
    wire = hook_messages(proc.stdout)
    assert wire[1]["parent_tool_use_id"] == start["agent_id"]


def test_persistent_session_fires_per_turn_and_session_end_once(tmp_path: Path) -> None:
    hooks = {
        "SessionStart": [{"hooks": [hook("log")]}],
        "UserPromptSubmit": [{"hooks": [hook("log")]}],
        "SessionEnd": [{"hooks": [hook("log")]}],
    }
    proj = setup(tmp_path, hooks)

    def user(text: str) -> dict[str, Any]:
        message = {"role": "user", "content": text}
        return {"type": "user", "session_id": "", "message": message, "parent_tool_use_id": None}

    stdin = "".join(json.dumps(user(t)) + "\n" for t in ("one", "two")).encode()
    with FakeOpenAI([{"text": "a"}, {"text": "b"}]) as fake:
        proc = run(fake, tmp_path, "--input-format", "stream-json", stdin=stdin)
    assert proc.returncode == 0, proc.stderr
    entries = logged(proj)
    assert [e["hook_event_name"] for e in entries] == [
        "SessionStart",
        "UserPromptSubmit",
        "UserPromptSubmit",
        "SessionEnd",
    ]
    assert [e.get("prompt") for e in entries[1:3]] == ["one", "two"]
    assert len(hook_messages(proc.stdout)) == 4


def test_acp_session_runs_the_same_hooks(tmp_path: Path) -> None:
    from tests.e2e.helpers import env_for, write_script

    proj = setup(
        tmp_path,
        {
            "PreToolUse": [{"matcher": "Bash", "hooks": [hook("exit2", "not in acp either")]}],
            "SessionEnd": [{"hooks": [hook("log")]}],
        },
    )
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    script = write_script(tmp_path / "s.jsonl", [shell("touch made"), {"text": "done"}])
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "session/new",
            "params": {"cwd": str(proj), "mcpServers": []},
        },
    ]
    command = [
        sys.executable,
        "-m",
        "headwire",
        "--experimental-acp",
        "--yolo",
        "--script",
        str(script),
    ]
    env = env_for(home, HEADWIRE_TRUST_PROJECT="1")
    with subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=proj,
        env=env,
    ) as acp:
        assert acp.stdin is not None and acp.stdout is not None

        def call(message: dict[str, Any]) -> dict[str, Any]:
            assert acp.stdin is not None and acp.stdout is not None
            acp.stdin.write(json.dumps(message).encode() + b"\n")
            acp.stdin.flush()
            while True:
                line = json.loads(acp.stdout.readline())
                if line.get("id") == message["id"] and "method" not in line:
                    return line

        call(requests[0])
        session = call(requests[1])["result"]["sessionId"]
        prompt = [{"type": "text", "text": "go"}]
        params = {"sessionId": session, "prompt": prompt}
        answer = call({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": params})
        assert answer["result"]["stopReason"] == "end_turn"
        acp.stdin.close()
        acp.wait(timeout=60)
    assert not (proj / "made").exists()
    events = [e["hook_event_name"] for e in logged(proj)]
    assert events == ["PreToolUse", "SessionEnd"]


def test_http_hook_follows_the_web_fetch_address_rules(tmp_path: Path) -> None:
    import http.server
    import threading

    posted: list[dict[str, Any]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["content-length"]))
            posted.append({"body": json.loads(body), "token": self.headers.get("x-token")})
            answer = json.dumps(
                {
                    "hookSpecificOutput": {
                        "permissionDecision": "deny",
                        "permissionDecisionReason": "http says no",
                    }
                }
            ).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/hook"
        http_hook = {
            "type": "http",
            "url": url,
            "headers": {"x-token": "$HOOK_TOKEN"},
            "allowedEnvVars": ["HOOK_TOKEN"],
        }
        proj = setup(tmp_path, {"PreToolUse": [{"hooks": [http_hook]}]})
        # loopback is a private address: refused unless the user allows private networks
        with FakeOpenAI([shell("touch made"), {"text": "ok"}]) as fake:
            proc = run(fake, tmp_path, "--yolo", "-p", "go", HOOK_TOKEN="t0k")
        assert proc.returncode == 0, proc.stderr
        assert posted == [] and (proj / "made").exists()
        assert hook_messages(proc.stdout)[0]["outcome"] == "error"
        (proj / "made").unlink()
        user = tmp_path / "home" / ".headwire" / "settings.json"
        user.write_text(json.dumps({"tools": {"webFetch": {"allowPrivateNetwork": True}}}))
        with FakeOpenAI([shell("touch made"), {"text": "ok"}]) as fake:
            proc = run(fake, tmp_path, "--yolo", "-p", "go", HOOK_TOKEN="t0k")
            second = fake.requests[1]
        assert proc.returncode == 0, proc.stderr
        assert not (proj / "made").exists()
        assert "http says no" in tool_messages(second)[0]
        (call,) = posted
        assert call["token"] == "t0k" and call["body"]["tool_name"] == "run_shell_command"
    finally:
        server.shutdown()
