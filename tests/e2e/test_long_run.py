"""Long runs: a task that outgrows the model's window still finishes (issue 23).

The fake OpenAI-compatible server has a context window (``tests/fakes/long_task.py``: bytes / 4
tokens, HTTP 400 ``context_length_exceeded`` past it, honest usage) and runs the scripted long
task: N shell calls of B bytes each.  The full-size case is the issue's: 30 calls of about
5,000 tokens in a 32,000-token window; the others are scaled down (8,000 tokens, 2,000-byte
outputs) to stay fast.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import recordings, run_cli
from tests.fakes.fake_openai import FakeOpenAI
from tests.fakes.long_task import LongTask

FLAGS = ["--auth-type", "openai", "-m", "fake-model", "--yolo", "-o", "stream-json"]
PROMPT = "Run the long task: call the tool as asked until it is finished. [original-request-7f3]"
MAX_TOOL_RESULT_BYTES = 65_536


def _run(fake: FakeOpenAI, tmp: Path, *extra: str, stdin: bytes | None = None) -> Any:
    return run_cli(
        [*FLAGS, *extra],
        tmp,
        stdin=stdin,
        timeout=120,
        OPENAI_BASE_URL=fake.base_url,
        OPENAI_API_KEY="sk-test",
    )


def _messages(stdout: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def _window_settings(window: int) -> str:
    return json.dumps({"model": {"generationConfig": {"contextWindowSize": window}}})


def _check_run(fake: FakeOpenAI, messages: list[dict[str, Any]], *, steps: int) -> None:
    """The task finished, every compaction is on the wire (started, then its boundary), every
    tool result on the wire is within 65,536 JSON bytes."""
    results = [m for m in messages if m["type"] == "result"]
    assert results and results[-1]["subtype"] == "success", results
    assert results[-1]["result"] == f"All {steps} steps done."
    system = [
        m
        for m in messages
        if m["type"] == "system" and m["subtype"] in ("status", "compact_boundary")
    ]
    for started, ended in zip(system[::2], system[1::2], strict=True):
        assert started["subtype"] == "status" and started["status"] == "compacting"
        assert ended["subtype"] == "compact_boundary"
        meta = ended["compact_metadata"]
        assert meta["trigger"] == "auto" and meta["post_tokens"] < meta["pre_tokens"]
    for m in messages:
        if m["type"] == "user":
            for block in m["message"]["content"]:
                if block.get("type") == "tool_result":
                    assert len(json.dumps(block["content"]).encode()) <= MAX_TOOL_RESULT_BYTES
    assert fake.long_task is not None and fake.long_task.issued == steps


def _posts(fake: FakeOpenAI) -> list[dict[str, Any]]:
    return [e for e in fake.log if e["method"] == "POST"]


def test_full_size_task_finishes_within_the_window(tmp_path: Path) -> None:
    """The issue's run: 30 calls of ~5,000 tokens, a 32,000-token window known from the
    settings; no request passes the window (nor 90% of it) and the original request is still
    sent after three compactions."""
    window = 32_000
    with FakeOpenAI(window=window, long_task=LongTask(steps=30, output_bytes=20_000)) as fake:
        proc = _run(fake, tmp_path, "--settings", _window_settings(window), "-p", PROMPT)
        assert proc.returncode == 0, proc.stderr
        messages = _messages(proc.stdout)
        _check_run(fake, messages, steps=30)
        posts = _posts(fake)
        assert not any(e["over_window"] for e in posts)
        assert max(e["tokens"] for e in posts) < 0.9 * window
        boundaries = [m for m in messages if m.get("subtype") == "compact_boundary"]
        assert len(boundaries) >= 3
        last = fake.requests[-1]
        assert any(m.get("content") == PROMPT for m in last["messages"])
    # the summary calls are billed: the result's usage counts every request the server answered
    result = messages[-1]
    answered = [e for e in posts if not e["over_window"]]
    assert result["usage"]["input_tokens"] == sum(e["tokens"] for e in answered)


def test_window_from_the_server_listing(tmp_path: Path) -> None:
    """No setting: the window comes from ``GET /v1/models`` (``max_model_len``)."""
    fake = FakeOpenAI(
        window=8_000, report_window=True, long_task=LongTask(steps=30, output_bytes=2_000)
    )
    with fake:
        proc = _run(fake, tmp_path, "-p", PROMPT)
        assert proc.returncode == 0, proc.stderr
        _check_run(fake, _messages(proc.stdout), steps=30)
        assert not any(e["over_window"] for e in _posts(fake))
        assert any(e["method"] == "GET" for e in fake.log)


def test_unknown_window_compacts_after_the_400_and_retries(tmp_path: Path) -> None:
    """The window unknown to headwire: the first 400 compacts and retries; the window its
    message states is used from then on, so it is the only rejected request."""
    with FakeOpenAI(window=8_000, long_task=LongTask(steps=30, output_bytes=2_000)) as fake:
        proc = _run(fake, tmp_path, "-p", PROMPT)
        assert proc.returncode == 0, proc.stderr
        _check_run(fake, _messages(proc.stdout), steps=30)
        rejected = [e for e in _posts(fake) if e["over_window"]]
        assert len(rejected) == 1


def test_two_turn_persistent_session(tmp_path: Path) -> None:
    """A persistent stream-JSON session: two long turns, each finishing within the window."""

    def user(text: str) -> bytes:
        line = {
            "type": "user",
            "session_id": "",
            "message": {"role": "user", "content": text},
            "parent_tool_use_id": None,
        }
        return json.dumps(line).encode() + b"\n"

    task = LongTask(steps=15, output_bytes=2_000)
    with FakeOpenAI(window=8_000, long_task=task) as fake:
        stdin = user(PROMPT) + user("Run the long task again. [second-request-9c1]")
        args = ["--input-format", "stream-json", "--settings", _window_settings(8_000)]
        proc = _run(fake, tmp_path, *args, stdin=stdin)
        assert proc.returncode == 0, proc.stderr
        messages = _messages(proc.stdout)
        results = [m for m in messages if m["type"] == "result"]
        assert [r["subtype"] for r in results] == ["success", "success"]
        assert not any(e["over_window"] for e in _posts(fake))
        last = fake.requests[-1]["messages"]
        assert any(m.get("content") == PROMPT for m in last)  # the first request is kept too


def test_resume_continues_from_the_checkpoint(tmp_path: Path) -> None:
    """A session recorded without a limit is resumed against a small window: it compacts
    before its first request; the recording keeps every record plus the checkpoint, and the
    next resume starts from the checkpoint."""
    with FakeOpenAI(long_task=LongTask(steps=12, output_bytes=2_000)) as fake:
        proc = _run(fake, tmp_path, "-p", PROMPT)
        assert proc.returncode == 0, proc.stderr
    session = _messages(proc.stdout)[0]["session_id"]
    settings = _window_settings(8_000)
    with FakeOpenAI(window=8_000, long_task=LongTask(steps=5, output_bytes=2_000)) as fake:
        proc = _run(fake, tmp_path, "--settings", settings, "--resume", session, "-p", "Again.")
        assert proc.returncode == 0, proc.stderr
        _check_run(fake, _messages(proc.stdout), steps=5)
        posts = _posts(fake)
        assert not any(e["over_window"] for e in posts)
        assert any(m.get("content") == PROMPT for m in fake.requests[-1]["messages"])
    (path,) = recordings(proc.home)
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert any(r["type"] == "compaction" for r in records)
    calls = [r for r in records if r["type"] == "tool_result"]
    assert len(calls) == 12 + 5  # nothing recorded before the checkpoint is lost
    shown = run_cli(["sessions", "export", session, "--format", "md"], tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.count(b"step 1 of the long task") >= 1  # from before the checkpoint
    assert shown.stdout.count(b"run_shell_command") >= 12 + 5
    with FakeOpenAI(window=8_000, long_task=LongTask(steps=0)) as fake:
        proc = _run(fake, tmp_path, "--settings", settings, "--resume", session, "-p", "Done?")
        assert proc.returncode == 0, proc.stderr
        first = _posts(fake)[0]
        assert first["tokens"] < 8_000 * 0.85 and not first["over_window"]


def test_a_request_that_cannot_fit_is_a_clear_error_result(tmp_path: Path) -> None:
    """A request that compaction cannot bring under the window (here: the prompt alone passes
    it) ends the turn with a clear error result."""
    with FakeOpenAI(window=2_000, long_task=LongTask(steps=1)) as fake:
        proc = _run(fake, tmp_path, "-p", "x" * 12_000)
        assert proc.returncode == 1
        result = _messages(proc.stdout)[-1]
        assert result["type"] == "result" and result["is_error"]
        assert "does not fit in the model's context window" in result["error"]["message"]


def test_compact_control_request(tmp_path: Path) -> None:
    """A ``compact`` control request compacts between turns (trigger ``manual``), is answered
    with the sizes, and the next turn's request carries the requests and the summary."""

    def line(message: dict[str, Any]) -> bytes:
        return json.dumps(message).encode() + b"\n"

    def control(request_id: str, subtype: str) -> bytes:
        return line(
            {"type": "control_request", "request_id": request_id, "request": {"subtype": subtype}}
        )

    def user(text: str) -> bytes:
        message = {"role": "user", "content": text}
        return line(
            {"type": "user", "session_id": "", "message": message, "parent_tool_use_id": None}
        )

    with FakeOpenAI(window=100_000, long_task=LongTask(steps=4, output_bytes=2_000)) as fake:
        stdin = (
            control("r1", "initialize")
            + user(PROMPT)
            + control("r2", "compact")
            + user("And now? [after-compact]")
        )
        proc = _run(fake, tmp_path, "--input-format", "stream-json", stdin=stdin)
        assert proc.returncode == 0, proc.stderr
        messages = _messages(proc.stdout)
        answer = next(
            m
            for m in messages
            if m["type"] == "control_response" and m["response"]["request_id"] == "r2"
        )
        body = answer["response"]["response"]
        assert body["compacted"] and body["post_tokens"] < body["pre_tokens"]
        boundary = next(m for m in messages if m.get("subtype") == "compact_boundary")
        assert boundary["compact_metadata"]["trigger"] == "manual"
        last = fake.requests[-1]["messages"]
        contents = [m.get("content") for m in last]
        assert PROMPT in contents and "And now? [after-compact]" in contents
        assert any(str(c).startswith("[headwire: summary") for c in contents)
        assert sum(1 for m in last if m["role"] == "tool") == 0


def test_acp_shows_compactions_live_and_replayed(tmp_path: Path) -> None:
    """ACP: each compaction is an ``agent_thought_chunk`` with ``_meta.headwire.compaction``;
    ``session/load`` replays it like the live one and the next prompt continues from the
    checkpoint (its first request is within the window)."""
    import asyncio

    acp = pytest.importorskip("acp")
    from tests.e2e.helpers import env_for

    class Client:
        def __init__(self) -> None:
            self.raw: list[dict[str, Any]] = []

        async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
            raise AssertionError("--yolo asks nothing")

        async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
            return None

        def observe(self, event: Any) -> None:
            message = event.message
            if event.direction.value == "incoming" and message.get("method") == "session/update":
                self.raw.append(message["params"]["update"])

        def on_connect(self, conn: Any) -> None:
            return None

    (tmp_path / "proj").mkdir()
    (tmp_path / "home").mkdir()
    settings = _window_settings(8_000)

    def spawn(client: Client, fake: FakeOpenAI) -> Any:
        env = env_for(tmp_path / "home", OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-test")
        return acp.spawn_agent_process(
            client,
            sys.executable,
            "-m",
            "headwire",
            "--acp",
            *FLAGS[:-2],
            "--settings",
            settings,
            env=env,
            cwd=str(tmp_path / "proj"),
            observers=[client.observe],
        )

    async def live(fake: FakeOpenAI) -> tuple[str, list[dict[str, Any]]]:
        client = Client()
        async with spawn(client, fake) as (conn, _proc):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            sid = (await conn.new_session(cwd=str(tmp_path / "proj"), mcp_servers=[])).session_id
            answer = await conn.prompt(session_id=sid, prompt=[acp.text_block(PROMPT)])
            assert answer.stop_reason == "end_turn"
        return sid, client.raw

    async def load(fake: FakeOpenAI, sid: str) -> list[dict[str, Any]]:
        client = Client()
        async with spawn(client, fake) as (conn, _proc):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            await conn.load_session(cwd=str(tmp_path / "proj"), session_id=sid, mcp_servers=[])
            replayed = list(client.raw)
            await conn.prompt(session_id=sid, prompt=[acp.text_block("Again.")])
        return replayed

    with FakeOpenAI(window=8_000, long_task=LongTask(steps=20, output_bytes=2_000)) as fake:
        sid, updates = asyncio.run(live(fake))
        assert not any(e["over_window"] for e in _posts(fake))
    compactions = [u for u in updates if "headwire" in (u.get("_meta") or {})]
    assert compactions and all(u["sessionUpdate"] == "agent_thought_chunk" for u in compactions)
    meta = compactions[0]["_meta"]["headwire"]["compaction"]
    assert meta["trigger"] == "auto" and meta["post_tokens"] < meta["pre_tokens"]
    with FakeOpenAI(window=8_000, long_task=LongTask(steps=2, output_bytes=2_000)) as fake:
        replayed = asyncio.run(load(fake, sid))
        first = _posts(fake)[0]
        assert not first["over_window"] and first["tokens"] < 0.85 * 8_000
    replayed_compactions = [u for u in replayed if "headwire" in (u.get("_meta") or {})]
    assert replayed_compactions == compactions


@pytest.mark.parametrize("provider", ["anthropic", "gemini"])
@pytest.mark.parametrize("known", [True, False], ids=["window-known", "window-unknown"])
def test_other_providers_finish_within_the_window(
    tmp_path: Path, provider: str, known: bool
) -> None:
    """The Anthropic and Gemini fakes: the same task finishes; with the window known no
    request passes it, unknown only the first refusal (their own "too long" 400) does."""
    from tests.e2e.providers import PROVIDERS

    p = PROVIDERS[provider]
    fake = p.fake(window=8_000, long_task=LongTask(steps=20, output_bytes=2_000))
    settings = ["--settings", _window_settings(8_000)] if known else []
    with fake:
        args = [*p.flags(), "--yolo", "-o", "stream-json", *settings, "-p", PROMPT]
        proc = run_cli(args, tmp_path, timeout=120, **p.env(fake))  # type: ignore[arg-type]
        assert proc.returncode == 0, proc.stderr
        _check_run(fake, _messages(proc.stdout), steps=20)
        rejected = [e for e in _posts(fake) if e["over_window"]]
        assert len(rejected) == (0 if known else 1)


def test_a_subagent_manages_its_own_context(tmp_path: Path) -> None:
    """A subagent running the long task compacts its own conversation: its compaction
    messages carry the ``agent`` call's id, and no request passes the window."""
    task = LongTask(steps=20, output_bytes=2_000, delegate=True)
    with FakeOpenAI(window=8_000, long_task=task) as fake:
        proc = _run(fake, tmp_path, "--settings", _window_settings(8_000), "-p", PROMPT)
        assert proc.returncode == 0, proc.stderr
        messages = _messages(proc.stdout)
        _check_run(fake, messages, steps=20)
        assert not any(e["over_window"] for e in _posts(fake))
    boundaries = [m for m in messages if m.get("subtype") == "compact_boundary"]
    assert boundaries
    assert all(m["parent_tool_use_id"] == "call_delegate" for m in boundaries)


def test_compaction_hooks_run(tmp_path: Path) -> None:
    """``PreCompact`` and ``PostCompact`` hooks run around each compaction (matched on the
    trigger); ``PostCompact`` reads the summary on stdin."""
    log = tmp_path / "hooks.log"
    hooks = {
        "PreCompact": [
            {"matcher": "auto", "hooks": [{"type": "command", "command": f"echo pre >> {log}"}]}
        ],
        "PostCompact": [{"hooks": [{"type": "command", "command": f"cat >> {log}"}]}],
    }
    settings = json.loads(_window_settings(8_000)) | {"hooks": hooks}
    with FakeOpenAI(window=8_000, long_task=LongTask(steps=12, output_bytes=2_000)) as fake:
        proc = _run(fake, tmp_path, "--settings", json.dumps(settings), "-p", PROMPT)
        assert proc.returncode == 0, proc.stderr
        boundaries = [m for m in _messages(proc.stdout) if m.get("subtype") == "compact_boundary"]
    text = log.read_text()
    assert boundaries and text.count("pre\n") == len(boundaries)
    assert text.count('"hook_event_name": "PostCompact"') + text.count(
        '"hook_event_name":"PostCompact"'
    ) == len(boundaries)
    assert "Summary: the user asked" in text
