"""The fault table for every provider: 429 with retry-after, 5xx, a drop mid-stream, an
unreachable server, a bad key.  Each row is a real ``headwire`` run against the API's own fake
server (``anthropic`` and ``gemini`` here, ``openai`` in ``test_model_server.py``, all with
the same behaviour and messages):

* 429 (with ``Retry-After``, or Gemini's ``RetryInfo``), 5xx, Anthropic's 529, an in-stream
  error event and a drop before any output are retried (4 attempts in all), then the turn goes
  on; 5xx until the attempts run out ends the turn with the server's message, exit code 1;
* a drop after output began is not retried: ``Connection closed mid-stream``, exit code 1;
* an unreachable server is retried with backoff, then ``Cannot reach model server at URL``;
* a bad key is not retried, the error says what the server said, and the key never shows
  (the fakes echo it in their error text, as some servers do).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import run_cli
from tests.e2e.providers import PROVIDERS
from tests.faults.util import Cli, chats, no_traceback, read_recording, start
from tests.paths import DATA

DROP_BEFORE_OUTPUT = {"openai": 1, "anthropic": 2, "gemini": 0}
"""``drop_after_chunks`` that closes the stream before any text (role chunk / message_start)."""
DROP_AFTER_OUTPUT = {"openai": 3, "anthropic": 4, "gemini": 1}
"""``drop_after_chunks`` that closes the stream after the first piece of text."""
NAMES = ["anthropic", "gemini"]
"""``openai`` runs the same table in ``tests/faults/test_model_server.py``; its values stay here
for the rows that compare with it."""
RATE_LIMITED = {
    "openai": {"error_status": 429, "retry_after": "0.2", "message": "slow down"},
    "anthropic": {"error_status": 429, "retry_after": "0.2", "message": "slow down"},
    "gemini": {"error_status": 429, "retry_delay": "0.2s", "message": "slow down"},
}


def run(provider: str, fake: Any, args: list[str], tmp: Path, **env: str) -> Any:
    spec = PROVIDERS[provider]
    return run_cli([*spec.flags(), "--yolo", *args], tmp, **{**spec.env(fake), **env})


def last_record(home: Path) -> dict[str, Any]:
    (path,) = chats(home)
    records, bad = read_recording(path)
    assert bad == [] and records[-1]["type"] == "result"
    return records[-1]


@pytest.mark.parametrize("provider", NAMES)
def test_transient_failures_before_output_are_retried(tmp_path: Path, provider: str) -> None:
    script = [
        {"drop_after_chunks": DROP_BEFORE_OUTPUT[provider], "text": "lost"},
        RATE_LIMITED[provider],
        {"error_status": 503, "retry_after": "0", "message": "overloaded"},
        {"text": "finally"},
    ]
    with PROVIDERS[provider].fake(script) as fake:
        started = time.monotonic()
        proc = run(provider, fake, ["-o", "stream-json", "-p", "hi"], tmp_path)
        elapsed = time.monotonic() - started
        attempts = [e["reply_index"] for e in fake.log if e["method"] == "POST"]
    assert proc.returncode == 0, proc.stderr
    assert attempts == [0, 1, 2, 3]
    notes = [line for line in proc.stderr.splitlines() if "retrying in" in line]
    assert len(notes) == 3, proc.stderr
    assert "Connection closed mid-stream" in notes[0] and "(attempt 2 of 4)" in notes[0]
    assert "HTTP 429" in notes[1] and "slow down" in notes[1] and "retrying in 0.2s" in notes[1]
    assert "HTTP 503" in notes[2] and "(attempt 4 of 4)" in notes[2]
    assert elapsed >= 0.2 + 0.5  # the server's wait, then the first backoff
    no_traceback(proc.stderr)
    assert proc.lines()[-1]["result"] == "finally"
    assert last_record(proc.home)["is_error"] is False


@pytest.mark.parametrize(
    ("provider", "reply", "needle"),
    [
        ("anthropic", {"error_status": 529, "retry_after": "0", "message": "Overloaded"}, "529"),
        ("anthropic", {"error_event": "Overloaded"}, "overloaded_error"),
        ("gemini", {"error_event": "The model is overloaded."}, "overloaded"),
    ],
    ids=["anthropic-529", "anthropic-error-event", "gemini-error-chunk"],
)
def test_provider_specific_overload_is_retried(
    tmp_path: Path, provider: str, reply: dict[str, Any], needle: str
) -> None:
    with PROVIDERS[provider].fake([reply, {"text": "ok"}]) as fake:
        proc = run(provider, fake, ["-o", "text", "-p", "hi"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"ok\n"
    (note,) = [line for line in proc.stderr.splitlines() if "retrying in" in line]
    assert needle in note


@pytest.mark.parametrize("provider", NAMES)
def test_5xx_gives_up_after_four_attempts(tmp_path: Path, provider: str) -> None:
    reply = {"error_status": 500, "retry_after": "0", "message": "internal trouble"}
    with PROVIDERS[provider].fake([reply] * 6) as fake:
        proc = run(provider, fake, ["-o", "text", "-p", "hi"], tmp_path)
        requests = len([e for e in fake.log if e["method"] == "POST"])
    assert proc.returncode == 1
    assert requests == 4
    assert proc.stdout == b""
    assert proc.stderr.count("retrying in") == 3
    assert proc.stderr.splitlines()[-1] == (
        "Model server returned HTTP 500 Internal Server Error: internal trouble"
    )
    no_traceback(proc.stderr)
    assert last_record(proc.home)["error"].startswith("Model server returned HTTP 500")


@pytest.mark.parametrize("provider", NAMES)
def test_drop_after_output_is_not_retried(tmp_path: Path, provider: str) -> None:
    reply = {"drop_after_chunks": DROP_AFTER_OUTPUT[provider], "text": "partial answer here"}
    with PROVIDERS[provider].fake([reply, {"text": "must not be asked"}]) as fake:
        proc = run(provider, fake, ["-o", "stream-json", "-p", "hi"], tmp_path)
        requests = len(fake.requests)
    assert proc.returncode == 1
    assert requests == 1
    assert "retrying" not in proc.stderr
    no_traceback(proc.stderr)
    result = proc.lines()[-1]
    assert result["type"] == "result" and result["is_error"] is True
    assert result["error"]["message"] == "Connection closed mid-stream"
    assert last_record(proc.home)["error"] == "Connection closed mid-stream"


@pytest.mark.parametrize("provider", NAMES)
def test_unreachable_server_backs_off(tmp_path: Path, provider: str) -> None:
    """Every provider retries as ``model.generationConfig`` says (the defaults, 0.5 s doubling,
    are timed for OpenAI in ``tests/faults/test_model_server.py``)."""
    spec = PROVIDERS[provider]
    quick = {"maxRetries": 3, "retryInitialDelayMs": 100, "retryMaxDelayMs": 300}
    settings = ["--settings", json.dumps({"model": {"generationConfig": quick}})]
    started = time.monotonic()
    proc = run_cli(
        [*spec.flags(), *settings, "-o", "json", "-p", "hi"], tmp_path, **spec.unreachable_env()
    )
    elapsed = time.monotonic() - started
    assert proc.returncode == 1
    delays = [
        line.split("retrying in ")[1].split("s ")[0]
        for line in proc.stderr.splitlines()
        if "retrying in" in line
    ]
    assert delays == ["0.1", "0.2", "0.3"]
    assert elapsed >= 0.6
    no_traceback(proc.stderr)
    (messages,) = [json.loads(line) for line in proc.stdout.splitlines()]
    url = "http://127.0.0.1:9" + spec.base_suffix
    assert f"Cannot reach model server at {url}" in messages[-1]["error"]["message"]


BAD_KEY_MESSAGES = {
    "openai": "HTTP 401 Unauthorized: Incorrect API key provided: ***",
    "anthropic": "HTTP 401 Unauthorized: invalid x-api-key: ***",
    "gemini": "HTTP 400 Bad Request: API key not valid. Please pass a valid API key. (***)",
}


@pytest.mark.parametrize("provider", ["openai", *NAMES])
def test_bad_key_is_one_clear_error_without_the_key(tmp_path: Path, provider: str) -> None:
    wrong = "sk-wrong-key-0a1b2c3d4e5f60718293"
    with PROVIDERS[provider].fake([{"text": "never"}], require_api_key="sk-right") as fake:
        proc = run(
            provider,
            fake,
            ["-o", "stream-json", "-p", "hi"],
            tmp_path,
            **{PROVIDERS[provider].key_var: wrong},
        )
        requests = len(fake.requests)
    assert proc.returncode == 1
    assert requests == 1  # not retried
    assert "retrying" not in proc.stderr
    no_traceback(proc.stderr)
    result = proc.lines()[-1]
    assert result["is_error"] is True
    assert BAD_KEY_MESSAGES[provider] in result["error"]["message"]
    for data in (proc.stdout, proc.stderr.encode(), *(p.read_bytes() for p in chats(proc.home))):
        assert wrong.encode() not in data and wrong[:16].encode() not in data


def test_a_server_refusing_tools_is_one_clear_error(tmp_path: Path) -> None:
    refusal = {"error_status": 500, "message": "tools param requires --jinja flag"}
    with PROVIDERS["openai"].fake([refusal, {"text": "must not be asked"}]) as fake:
        proc = run("openai", fake, ["-o", "json", "-p", "hi"], tmp_path)
        requests = len(fake.requests)
    assert proc.returncode == 1 and requests == 1
    assert "retrying" not in proc.stderr
    no_traceback(proc.stderr)
    message = json.loads(proc.stdout)[-1]["error"]["message"]
    assert message == (
        "Model server does not support tool calls for fake-model (HTTP 500: tools param "
        "requires --jinja flag); use a model and server with tool support, see 'headwire doctor'"
    )


def test_unicode_line_separators_inside_json_stay_text(tmp_path: Path) -> None:
    body = (DATA / "quirks" / "raw-unicode-line-separators.sse").read_text(encoding="utf-8")
    with PROVIDERS["openai"].fake([{"raw_sse": body}]) as fake:
        proc = run("openai", fake, ["-o", "text", "-p", "hi"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == "line one\u2028line two \u0085end\u2029\x1c.\n"


MIB = 1024 * 1024


def run_watched(provider: str, fake: Any, args: list[str], tmp: Path) -> tuple[Cli, int, float]:
    """Run headwire to its end, sampling its own peak RSS; ``(cli, exit code, seconds)``."""
    spec = PROVIDERS[provider]
    started = time.monotonic()
    cli = start([*spec.flags(), "--yolo", *args], tmp, env=spec.env(fake))
    code = cli.wait(timeout=120)
    return cli, code, time.monotonic() - started


@pytest.mark.parametrize("provider", NAMES)
def test_a_data_line_that_never_ends_is_cut_off_with_a_clear_error(
    tmp_path: Path, provider: str
) -> None:
    """A ``data:`` line of 256 MiB (the fake stops there; a hostile server need not): the
    stream is closed once the line passes 16 MiB, the turn ends with an error saying so, and
    memory stays bounded.  Before, the line grew in memory (about 120 MB/s) with no error."""
    with PROVIDERS[provider].fake([{"endless_data_line": 256}]) as fake:
        cli, code, took = run_watched(provider, fake, ["-o", "stream-json", "-p", "hi"], tmp_path)
    peak = cli.peak_rss_mb()
    print(f"{provider}: endless data line: exit {code} after {took:.1f} s, peak RSS {peak:.0f} MiB")
    assert peak < 150
    assert code == 1, cli.stderr
    message = cli.stdout_lines()[-1]["error"]["message"]
    assert message == (
        "Model server sent an unusable answer: a line of the stream is longer than "
        f"{16 * MIB} bytes; it was closed"
    )
    assert len([e for e in fake.log if e["method"] == "POST"]) == 1  # not retried
    no_traceback(cli.stderr)


@pytest.mark.parametrize("provider", NAMES)
def test_an_error_body_that_never_ends_is_read_only_in_part(tmp_path: Path, provider: str) -> None:
    """A 400 whose body is 256 MiB of text: its first 64 KiB are read, the message quotes the
    first 500 characters, and memory stays bounded.  Before, the whole body was read (a
    200 MB body peaked at 833 MB; an endless one grew without end)."""
    reply = {"error_status": 400, "endless_body": 256}
    with PROVIDERS[provider].fake([reply]) as fake:
        cli, code, took = run_watched(provider, fake, ["-o", "stream-json", "-p", "hi"], tmp_path)
    peak = cli.peak_rss_mb()
    print(
        f"{provider}: endless error body: exit {code} after {took:.1f} s, peak RSS {peak:.0f} MiB"
    )
    assert peak < 150
    assert code == 1, cli.stderr
    message = cli.stdout_lines()[-1]["error"]["message"]
    assert message.startswith("Model server returned HTTP 400 Bad Request: xxxx")
    assert len(message) == 503 and message.endswith("x...")
    assert took < 30


@pytest.mark.parametrize(
    ("provider", "reply"),
    [
        ("anthropic", {"error_status": 400, "message": "m" * (5 * MIB)}),
        ("gemini", {"error_status": 400, "message": "m" * (5 * MIB)}),
        ("anthropic", {"error_event": "e" * (5 * MIB)}),
        ("gemini", {"error_event": "e" * (5 * MIB)}),
    ],
    ids=["anthropic-body", "gemini-body", "anthropic-event", "gemini-event"],
)
def test_a_huge_error_message_is_cut_to_500_characters(
    tmp_path: Path, provider: str, reply: dict[str, Any]
) -> None:
    """A 5 MiB message, in an error body or in an error event mid-stream: the ``result`` line
    stays short enough for any SDK's 64 KiB line limit and its message is cut to 500
    characters, as the README promises; so is the text-mode line on stderr.  Before, the whole
    5 MiB reached the wire (a 10.5 MB ``result`` line)."""
    replies = {"replies": [reply], "default": reply}
    quick = '{"model": {"generationConfig": {"retryInitialDelayMs": 10}}}'  # an event is retried
    with PROVIDERS[provider].fake(replies) as fake:
        args = ["--settings", quick, "-o", "stream-json", "-p", "hi"]
        proc = run(provider, fake, args, tmp_path)
    assert proc.returncode == 1, proc.stderr[-2000:]
    last = proc.stdout.splitlines()[-1]
    assert len(last) < 64 * 1024
    message = json.loads(last)["error"]["message"]
    assert len(message) == 503 and message.endswith("...")
    assert max((len(line) for line in proc.stderr.splitlines()), default=0) < 1000
    assert len(json.dumps(last_record(proc.home))) < 64 * 1024
