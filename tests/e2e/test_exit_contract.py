"""The exit contract inside the JSON: every turn's ``result`` carries ``headwire.exit_code``
(the code the process exits with) and ``headwire.retryable`` (HTTP 429, 5xx, network)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.e2e.contract import messages_of, turn_results
from tests.e2e.helpers import run_cli, write_script
from tests.fakes.fake_openai import FakeOpenAI
from tests.faults.util import start, wait_until

OPENAI = ["--auth-type", "openai", "-m", "fake-model", "--yolo"]


@pytest.mark.parametrize(("reply", "retryable"), [(503, True), (429, True), (400, False)])
def test_model_error(tmp_path: Path, reply: int, retryable: bool) -> None:
    error = {"error_status": reply, "retry_after": 0}
    with FakeOpenAI([error] * 4) as fake:
        args = [*OPENAI, "-o", "json", "-p", "x"]
        proc = run_cli(args, tmp_path, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k")
    (result,) = turn_results(messages_of(proc.stdout))
    assert proc.returncode == 1
    assert result["headwire"] == {"exit_code": 1, "retryable": retryable}


def test_success_limit_and_usage_error(tmp_path: Path) -> None:
    script = str(write_script(tmp_path / "s.jsonl", [{"text": "ok"}]))
    proc = run_cli(["--script", script, "-o", "stream-json", "-p", "x"], tmp_path)
    assert turn_results(proc.lines())[0]["headwire"] == {"exit_code": 0, "retryable": False}
    turns = [{"tool": "glob", "args": {"pattern": "*"}}]
    write_script(tmp_path / "s.jsonl", turns)
    args = ["--script", script, "--yolo", "--max-turns", "1", "-o", "json", "-p", "x"]
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 53
    assert turn_results(messages_of(proc.stdout))[0]["headwire"]["exit_code"] == 53
    proc = run_cli(["--max-turns", "abc", "-o", "json", "-p", "x"], tmp_path)
    assert proc.returncode == 2
    assert turn_results(messages_of(proc.stdout))[0]["headwire"]["exit_code"] == 2


def test_sigterm(tmp_path: Path) -> None:
    turns = [{"tool": "run_shell_command", "args": {"command": "sleep 30"}}]
    script = str(write_script(tmp_path / "s.jsonl", turns))
    cli = start(["--script", script, "--yolo", "-o", "stream-json", "-p", "x"], tmp_path)
    wait_until(lambda: any(m["type"] == "assistant" for m in cli.stdout_lines()), "the call")
    time.sleep(0.3)
    cli.proc.send_signal(signal.SIGTERM)
    assert cli.wait() == 143
    result = turn_results(cli.stdout_lines())[0]
    assert result["headwire"] == {"exit_code": 143, "retryable": False}
