"""Every provider, end to end over real HTTP: the CLI against each API's fake server.

Upstream's capture recipe for ``--auth-type openai``, ``anthropic`` and ``gemini`` alike: the
model calls ``run_shell_command`` printing 499,999 bytes, then answers ``done``.  On every wire
(JSON, stream-JSON with and without partial messages, text with a Dual Output sidecar, a
persistent stream-JSON session, ACP) the tool result is bounded to 65,536 JSON bytes while the
artifact keeps every byte and the model reads its own bounded text.  The API key never shows.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from headwire.projection.acp import ACP_TRUNCATION_MARKER
from tests.e2e.helpers import BIG_COMMAND, env_for, recordings, run_cli
from tests.e2e.providers import KEY, NAMES, PROVIDERS
from tests.e2e.test_dual_output_e2e import check_sidecar
from tests.e2e.test_headless_modes import check_bounded_result
from tests.e2e.test_session import SESSION, check_bounded, jsonl, user
from tests.shapes import message_shapes, upstream_shapes

BIG_TOOL: dict[str, Any] = {
    "tool": "run_shell_command",
    "args": {"command": BIG_COMMAND, "description": "print a large output", "is_background": False},
}
PROMPT = "Run the big output tool once, then say done."
MAX_ACP_UPDATE_LINE = 140_000


def _no_key(proc: Any) -> None:
    assert KEY.encode() not in proc.stdout and KEY not in proc.stderr
    for path in recordings(proc.home):
        assert KEY.encode() not in path.read_bytes()


def _model_read_bounded_text(provider: str, fake: Any) -> None:
    (text,) = PROVIDERS[provider].tool_results(fake, 1)
    assert "The full output has been saved to" in text and len(text) < 30_000


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])  # openai: test_openai_e2e.py
@pytest.mark.parametrize(
    ("mode", "sample"),
    [
        (["-o", "json"], "shell-json"),
        (["-o", "stream-json"], "shell-stream-json"),
        (["-o", "stream-json", "--include-partial-messages"], "shell-stream-json-partial"),
    ],
    ids=["json", "stream-json", "partial"],
)
def test_big_output_session_matches_upstream(
    tmp_path: Path, provider: str, mode: list[str], sample: str
) -> None:
    spec = PROVIDERS[provider]
    with spec.fake([BIG_TOOL, {"text": "done"}], require_api_key=KEY) as fake:
        proc = run_cli([*spec.flags(), "--yolo", *mode, "-p", PROMPT], tmp_path, **spec.env(fake))
        assert proc.returncode == 0, proc.stderr
        _model_read_bounded_text(provider, fake)
    assert message_shapes(proc.stdout) == upstream_shapes()[sample]
    messages = json.loads(proc.stdout) if mode[1] == "json" else proc.lines()
    check_bounded_result(proc, messages)
    assert messages[-1]["result"] == "done"
    _no_key(proc)


@pytest.mark.parametrize("provider", NAMES)
def test_text_mode_with_a_dual_output_sidecar(tmp_path: Path, provider: str) -> None:
    spec = PROVIDERS[provider]
    sidecar = tmp_path / "events.jsonl"
    with spec.fake([BIG_TOOL, {"text": "done"}]) as fake:
        proc = run_cli(
            [*spec.flags(), "--yolo", "--json-file", str(sidecar), "-p", PROMPT],
            tmp_path,
            **spec.env(fake),
        )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"done\n"
    check_sidecar([json.loads(line) for line in sidecar.read_text().splitlines()])
    _no_key(proc)


@pytest.mark.parametrize("provider", NAMES)
def test_persistent_session(tmp_path: Path, provider: str) -> None:
    spec = PROVIDERS[provider]
    with spec.fake([BIG_TOOL, {"text": "done"}]) as fake:
        proc = run_cli(
            [*spec.flags(), "--yolo", *SESSION],
            tmp_path,
            stdin=jsonl(user(PROMPT)),
            **spec.env(fake),
        )
    assert proc.returncode == 0, proc.stderr
    assert message_shapes(proc.stdout) == upstream_shapes()["shell-persistent"]
    check_bounded(proc.home, proc.lines())
    _no_key(proc)


def _rpc(msg_id: Any, method: str, **params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()


@pytest.mark.parametrize("provider", NAMES)
def test_acp(tmp_path: Path, provider: str) -> None:
    spec = PROVIDERS[provider]
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    with spec.fake([BIG_TOOL, {"text": "done"}]) as fake:
        proc = subprocess.Popen(
            [sys.executable, "-m", "headwire", "--acp", "--yolo", *spec.flags()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=proj,
            env=env_for(home, **spec.env(fake)),
        )
        assert proc.stdin is not None and proc.stdout is not None
        lines: list[bytes] = []

        def call(raw: bytes, msg_id: Any) -> dict[str, Any]:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(raw + b"\n")
            proc.stdin.flush()
            while True:
                line = proc.stdout.readline()
                assert line, "stdout closed early"
                lines.append(line)
                message: dict[str, Any] = json.loads(line)
                if message.get("id") == msg_id and "method" not in message:
                    return message

        call(_rpc(1, "initialize", protocolVersion=1), 1)
        session = call(_rpc(2, "session/new", cwd=str(proj), mcpServers=[]), 2)["result"]
        prompt = [{"type": "text", "text": PROMPT}]
        done = call(_rpc(3, "session/prompt", sessionId=session["sessionId"], prompt=prompt), 3)
        proc.stdin.close()
        lines += proc.stdout.read().splitlines(keepends=True)
        assert proc.wait(timeout=20) == 0
    assert done["result"] == {"stopReason": "end_turn"}
    updates = [line for line in lines if b'"sessionUpdate":"tool_call_update"' in line]
    assert updates and max(len(line) for line in updates) <= MAX_ACP_UPDATE_LINE
    assert any(ACP_TRUNCATION_MARKER.strip().encode() in line for line in updates)
    assert all(KEY.encode() not in line for line in lines)


CACHE_USAGE = {
    "openai": {
        "prompt_tokens": 125,
        "completion_tokens": 7,
        "total_tokens": 132,
        "prompt_tokens_details": {"cached_tokens": 100},
    },
    "anthropic": {
        "input_tokens": 5,
        "output_tokens": 7,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
    },
    "gemini": {
        "promptTokenCount": 125,
        "candidatesTokenCount": 7,
        "cachedContentTokenCount": 100,
        "totalTokenCount": 132,
    },
}


@pytest.mark.parametrize("provider", NAMES)
def test_thinking_and_cached_usage_reach_the_wire(tmp_path: Path, provider: str) -> None:
    spec = PROVIDERS[provider]
    reply = {"thinking": "Let me see.", "text": "done", "usage": CACHE_USAGE[provider]}
    with spec.fake([reply]) as fake:
        proc = run_cli([*spec.flags(), "-o", "stream-json", "-p", "hi"], tmp_path, **spec.env(fake))
    assert proc.returncode == 0, proc.stderr
    messages = proc.lines()
    blocks = [b for m in messages if m["type"] == "assistant" for b in m["message"]["content"]]
    assert {"type": "thinking", "thinking": "Let me see."} in blocks
    assert {"type": "text", "text": "done"} in blocks
    usage = messages[-1]["usage"]
    expected_input = 125 if provider != "anthropic" else 5 + 100 + 20
    assert (usage["input_tokens"], usage["output_tokens"]) == (expected_input, 7)
    assert usage["cache_read_input_tokens"] == 100


@pytest.mark.parametrize(
    ("provider", "with_key"),
    [("openai", False), ("anthropic", True), ("gemini", True)],
    ids=["local-openai-without-a-key", "only-an-anthropic-key", "only-a-gemini-key"],
)
def test_the_readme_commands_without_auth_type(
    tmp_path: Path, provider: str, with_key: bool
) -> None:
    """As in the README: a local OpenAI-compatible server needs no key and no --auth-type;
    with only one provider's key (and no OpenAI settings) that provider is chosen."""
    spec = PROVIDERS[provider]
    with spec.fake([{"text": "done"}]) as fake:
        env = spec.env(fake) if with_key else {spec.base_var: fake.base_url}
        proc = run_cli(["-m", "fake-model", "-p", "Summarize README.md"], tmp_path, **env)
        headers = fake.request_headers
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"done\n"
    key_header = {"openai": "Authorization", "anthropic": "x-api-key", "gemini": "x-goog-api-key"}
    assert len(headers) == 1 and (key_header[provider] in headers[0]) == with_key
