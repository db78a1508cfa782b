"""``model.generationConfig``'s request controls, end to end: a settings file, a real run, the
requests a local fake server receives.

Upstream Qwen Code 0.24.4 with the same settings puts the same ``samplingParams`` and
``extra_body`` keys into its request body and the same custom header on it; what it sent is
committed in ``tests/data/generation/upstream-0.24.4.json`` so headwire is compared without
the oracle too (with ``HEADWIRE_ORACLE_PKG_DIR`` upstream is run live and must still send what
the capture says; ``HEADWIRE_WRITE_CAPTURE=1`` rewrites it from that run).  Retries differ on
purpose: upstream retries in layers (its SDK's, a rate-limit layer, up to 7 attempts of its own
for 5xx), headwire in one, ``maxRetries`` times.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import check_capture, needs_upstream, side_by_side
from tests.fakes.fake_openai import FakeOpenAI
from tests.paths import ROOT

CAPTURE = ROOT / "tests" / "data" / "generation" / "upstream-0.24.4.json"
GENERATION = {
    "timeout": 60000,
    "maxRetries": 1,
    "customHeaders": {"X-Test": "generation"},
    "samplingParams": {"temperature": 0.2, "top_p": 0.8},
    "extra_body": {"enable_thinking": True, "service_tier": "priority"},
}
FLAGS = ["--auth-type", "openai", "-m", "m", "-o", "json", "-p", "hi"]


def run(
    tmp: Path,
    which: str,
    generation: dict[str, Any],
    script: list[dict[str, Any]],
    project: dict[str, Any] | None = None,
    flags: list[str] = FLAGS,
    **env: str,
) -> tuple[subprocess.CompletedProcess[bytes], FakeOpenAI]:
    """One run of ``which`` with ``generation`` as the user's ``model.generationConfig``
    (``project``: the project's settings file), against a fake answering ``script``."""
    home, proj = tmp / which / "home", tmp / which / "proj"
    proj.mkdir(parents=True)
    folder = ".qwen" if which == "upstream" else ".headwire"
    (home / folder).mkdir(parents=True)
    user = {"model": {"generationConfig": generation}}
    (home / folder / "settings.json").write_text(json.dumps(user))
    if project is not None:
        (proj / folder).mkdir()
        (proj / folder / "settings.json").write_text(json.dumps(project))
    with FakeOpenAI(script) as fake:
        command, full_env = side_by_side(which, home, flags, fake.base_url, **env)
        done = subprocess.run(command, cwd=proj, env=full_env, capture_output=True, timeout=300)
    return done, fake


def sent(fake: FakeOpenAI) -> dict[str, Any]:
    """What the first request carried of the settings: the body's sampling and extra keys and
    the custom header (header names are case-insensitive)."""
    body = fake.requests[0]
    keys = {*GENERATION["samplingParams"], *GENERATION["extra_body"]}
    headers = {k.lower(): v for k, v in fake.request_headers[0].items()}
    return {
        "body": {k: body[k] for k in sorted(keys) if k in body},
        "header": headers.get("x-test"),
    }


def test_the_settings_shape_every_request_as_upstreams_do(tmp_path: Path) -> None:
    """Without the oracle: headwire sends what the capture says upstream sent."""
    done, fake = run(tmp_path, "headwire", GENERATION, [{"text": "done"}])
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert sent(fake) == json.loads(CAPTURE.read_text())
    assert all(body["model"] == "m" and body["stream"] is True for body in fake.requests)


@pytest.mark.slow  # the Node CLI takes seconds to start
@needs_upstream
def test_upstream_sends_what_the_capture_says(tmp_path: Path) -> None:
    done, fake = run(tmp_path, "upstream", GENERATION, [{"text": "done"}])
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    check_capture(CAPTURE, sent(fake))


def test_max_retries_and_the_retry_delay_are_kept(tmp_path: Path) -> None:
    """``maxRetries: 2``, 50 ms first wait: two failures then the answer; ``maxRetries: 0``:
    the first failure ends the run (exit 1) after one request."""
    failing = [{"error_status": 503}, {"error_status": 503}, {"text": "done"}]
    quick = {"maxRetries": 2, "retryInitialDelayMs": 50, "retryMaxDelayMs": 80}
    started = time.monotonic()
    done, fake = run(tmp_path / "two", "headwire", quick, failing)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert len(fake.requests) == 3 and time.monotonic() - started < 20
    assert b"retrying in 0.05s" in done.stderr and b"retrying in 0.08s" in done.stderr
    done, fake = run(tmp_path / "none", "headwire", {"maxRetries": 0}, failing)
    assert done.returncode == 1 and len(fake.requests) == 1
    assert b"HTTP 503" in done.stdout


def test_the_timeouts_are_kept(tmp_path: Path) -> None:
    """A head later than ``timeout`` and a stream quiet for longer than ``streamIdleTimeoutMs``
    both fail the call; ``QWEN_CODE_API_TIMEOUT_MS`` wins over ``timeout``."""
    slow_head = [{"text": "done", "delay_s": 0.9}]
    done, _ = run(tmp_path / "head", "headwire", {"timeout": 300, "maxRetries": 0}, slow_head)
    assert done.returncode == 1 and b"timed out (no data for 0.3s)" in done.stdout
    done, _ = run(
        tmp_path / "env",
        "headwire",
        {"timeout": 300, "maxRetries": 0},
        slow_head,
        QWEN_CODE_API_TIMEOUT_MS="5000",
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    quiet = [{"text": "a b c d", "chunk_delay_s": 0.9}]
    idle = {"timeout": 5000, "streamIdleTimeoutMs": 300, "maxRetries": 0}
    done, _ = run(tmp_path / "idle", "headwire", idle, quiet)
    assert done.returncode == 1 and b"timed out (no data for 0.3s)" in done.stdout


def test_a_project_cannot_set_the_headers_and_an_untrusted_one_nothing(tmp_path: Path) -> None:
    """``customHeaders`` is the user's alone (it could replace the API key's header), even in a
    trusted folder; ``samplingParams`` a trusted project may set, an untrusted one may not."""
    project = {
        "model": {
            "generationConfig": {
                "customHeaders": {"X-Test": "project"},
                "samplingParams": {"temperature": 0.9},
            }
        }
    }
    done, fake = run(
        tmp_path / "trusted",
        "headwire",
        {},
        [{"text": "done"}],
        project,
        HEADWIRE_TRUST_PROJECT="1",
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert "x-test" not in {k.lower() for k in fake.request_headers[0]}
    assert fake.requests[0]["temperature"] == 0.9
    done, fake = run(tmp_path / "untrusted", "headwire", {}, [{"text": "done"}], project)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert "temperature" not in fake.requests[0]
    assert "x-test" not in {k.lower() for k in fake.request_headers[0]}


def test_a_body_key_headwire_writes_is_refused_at_start(tmp_path: Path) -> None:
    done, fake = run(tmp_path, "headwire", {"extra_body": {"stream": False}}, [{"text": "done"}])
    assert done.returncode == 2 and not fake.requests
    assert b"model.generationConfig.extra_body: stream is written by headwire itself" in (
        done.stderr
    )


TOOL_FORMS = ROOT / "tests" / "data" / "generation" / "tool-result-forms-upstream-0.24.4.json"
"""How upstream put a shell tool's text result in its next request, per
``toolResultContentFormat`` (unset, ``string``, ``parts``): ``string`` or ``parts``."""


def _tool_form(fake: FakeOpenAI) -> str:
    (tool,) = [m for m in fake.requests[1]["messages"] if m.get("role") == "tool"]
    content = tool["content"]
    if isinstance(content, str):
        return "string"
    assert [part["type"] for part in content] == ["text"], content
    return "parts"


def _tool_forms(tmp: Path, which: str) -> dict[str, str]:
    script = [{"tool": "run_shell_command", "args": {"command": "echo hi"}}, {"text": "done"}]
    forms = {}
    for name, generation in (
        ("unset", {}),
        ("string", {"toolResultContentFormat": "string"}),
        ("parts", {"toolResultContentFormat": "parts"}),
    ):
        replies = [*script, {"text": "x"}]
        done, fake = run(tmp / name, which, generation, replies, flags=["--yolo", *FLAGS])
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        forms[name] = _tool_form(fake)
    return forms


def test_tool_results_take_the_form_asked_for(tmp_path: Path) -> None:
    """``toolResultContentFormat`` ``parts`` and ``string`` send what upstream sends; unset,
    headwire sends the plain string (upstream: parts), which every server reads."""
    upstream = json.loads(TOOL_FORMS.read_text())
    assert _tool_forms(tmp_path, "headwire") == {**upstream, "unset": "string"}


@pytest.mark.slow
@needs_upstream
def test_upstream_tool_result_forms_are_what_the_capture_says(tmp_path: Path) -> None:
    check_capture(TOOL_FORMS, _tool_forms(tmp_path, "upstream"))


SESSION_HEADER = ROOT / "tests" / "data" / "generation" / "session-header-upstream-0.24.4.json"
"""What upstream sent for ``"X-Session": "${session_id}"``, with and without the consent of
``outboundCorrelation.allowDynamicHeaderValues``: ``session id`` or ``absent``."""


def _session_header(tmp: Path, which: str) -> dict[str, str]:
    seen = {}
    for consent in (True, False):
        home, proj = tmp / which / str(consent) / "home", tmp / which / str(consent) / "proj"
        proj.mkdir(parents=True)
        folder = ".qwen" if which == "upstream" else ".headwire"
        (home / folder).mkdir(parents=True)
        user = {
            "model": {"generationConfig": {"customHeaders": {"X-Session": "${session_id}"}}},
            "outboundCorrelation": {"allowDynamicHeaderValues": consent},
        }
        (home / folder / "settings.json").write_text(json.dumps(user))
        with FakeOpenAI([{"text": "done"}] * 3) as fake:
            command, env = side_by_side(which, home, FLAGS, fake.base_url)
            done = subprocess.run(command, cwd=proj, env=env, capture_output=True, timeout=300)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        session = json.loads(done.stdout)[-1]["session_id"]
        sent = {k.lower(): v for k, v in fake.request_headers[0].items()}.get("x-session")
        seen[f"consent {consent}"] = (
            "session id" if sent == session else "absent" if sent is None else f"other: {sent}"
        )
        if which == "headwire" and not consent:
            assert "customHeaders.X-Session holds ${session_id} and is not sent" in (
                done.stderr.decode()
            )
    return seen


def test_the_session_id_goes_in_a_header_only_with_consent(tmp_path: Path) -> None:
    assert _session_header(tmp_path, "headwire") == json.loads(SESSION_HEADER.read_text())


@pytest.mark.slow
@needs_upstream
def test_upstream_session_header_is_what_the_capture_says(tmp_path: Path) -> None:
    check_capture(SESSION_HEADER, _session_header(tmp_path, "upstream"))


def test_the_session_id_in_a_header_is_no_secret(tmp_path: Path) -> None:
    """A header made of ``${session_id}`` (its name says "session": a credential's name) does
    not make the id a secret: a tool that prints the id shows it, unredacted."""
    session = "abcdef12-3456-7890-abcd-ef1234567890"
    home, proj = tmp_path / "home", tmp_path / "proj"
    (home / ".headwire").mkdir(parents=True)
    proj.mkdir()
    user = {
        "model": {"generationConfig": {"customHeaders": {"X-Session": "${session_id}"}}},
        "outboundCorrelation": {"allowDynamicHeaderValues": True},
    }
    (home / ".headwire" / "settings.json").write_text(json.dumps(user))
    script = [{"tool": "run_shell_command", "args": {"command": f"echo id={session}"}}]
    flags = ["--yolo", "--session-id", session, "-m", "m", "-o", "stream-json", "-p", "go"]
    with FakeOpenAI([*script, {"text": "done"}]) as fake:
        command, env = side_by_side("headwire", home, flags, fake.base_url)
        done = subprocess.run(command, cwd=proj, env=env, capture_output=True, timeout=120)
        sent = {k.lower(): v for k, v in fake.request_headers[0].items()}
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert sent["x-session"] == session
    results = [
        block["content"]
        for line in done.stdout.splitlines()
        if (message := json.loads(line))["type"] == "user"
        for block in message["message"]["content"]
    ]
    assert results == [f"id={session}"]
