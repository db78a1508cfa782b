"""``--json-schema`` end to end against the fake OpenAI server: the schema reaches the model in
the system prompt, a valid answer lands in ``structured_output``, an invalid one is sent back
with what is wrong and corrected, one that never validates ends with
``error_max_structured_output_retries`` (nothing invalid is accepted), an invalid schema stops
the run at start; it works with ``--resume`` and in a persistent session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from headwire.errors import ExitCode
from tests.e2e.contract import one_result, turn_results
from tests.e2e.helpers import Proc, run_cli
from tests.e2e.test_session import SESSION, jsonl, user
from tests.fakes.fake_openai import FakeOpenAI

SCHEMA = {
    "type": "object",
    "properties": {
        "summary": {"type": "string"},
        "risk": {"type": "string", "enum": ["low", "medium", "high"]},
    },
    "required": ["summary", "risk"],
    "additionalProperties": False,
}
GOOD = {"summary": "adds a flag", "risk": "low"}
FLAGS = ["--auth-type", "openai", "-m", "fake-model", "--yolo"]


def run(fake: FakeOpenAI, args: list[str], tmp: Path, **kw: Any) -> Proc:
    return run_cli([*FLAGS, *args], tmp, OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="k", **kw)


def schema_args(schema: Any = SCHEMA) -> list[str]:
    return ["--json-schema", json.dumps(schema)]


def last_user(request: dict[str, Any]) -> str:
    return str([m for m in request["messages"] if m["role"] == "user"][-1]["content"])


def test_a_valid_answer(tmp_path: Path) -> None:
    with FakeOpenAI([{"text": json.dumps(GOOD)}]) as fake:
        proc = run(fake, [*schema_args(), "-o", "stream-json", "-p", "rate it"], tmp_path)
        (request,) = fake.requests
    assert proc.returncode == 0, proc.stderr
    result = one_result(proc.stdout, "success")
    assert result["structured_output"] == GOOD
    assert json.loads(result["result"]) == GOOD
    system = request["messages"][0]
    assert system["role"] == "system" and json.dumps(SCHEMA) in system["content"]


def test_text_mode_prints_the_value(tmp_path: Path) -> None:
    fenced = "```json\n" + json.dumps(GOOD, indent=2) + "\n```"
    with FakeOpenAI([{"text": fenced}]) as fake:
        proc = run(fake, [*schema_args(), "-p", "rate it"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b'{"summary":"adds a flag","risk":"low"}\n'


def test_an_invalid_answer_corrected_on_retry(tmp_path: Path) -> None:
    bad = {"summary": "adds a flag", "risk": "extreme"}
    replies = [{"text": "It looks fine."}, {"text": json.dumps(bad)}, {"text": json.dumps(GOOD)}]
    with FakeOpenAI(replies) as fake:
        proc = run(fake, [*schema_args(), "-o", "json", "-p", "rate it"], tmp_path)
        requests = list(fake.requests)
    assert proc.returncode == 0, proc.stderr
    result = one_result(proc.stdout, "success")
    assert result["structured_output"] == GOOD and result["num_turns"] == 3
    assert "is not JSON" in last_user(requests[1])
    assert "/risk" in last_user(requests[2]) and "'extreme' is not one of" in last_user(requests[2])


def test_an_answer_that_never_validates(tmp_path: Path) -> None:
    replies = [{"text": json.dumps({"risk": "low"})}, {"repeat_last": True}]
    with FakeOpenAI(replies) as fake:
        proc = run(fake, [*schema_args(), "-o", "stream-json", "-p", "rate it"], tmp_path)
        calls = len(fake.requests)
    assert proc.returncode == ExitCode.ERROR
    assert calls == 3  # the answer and two corrections
    result = one_result(proc.stdout, "error_max_structured_output_retries")
    assert "'summary' is a required property" in result["errors"][0]
    assert "structured_output" not in result and result["result"] == '{"risk": "low"}'


def test_an_invalid_schema_at_startup(tmp_path: Path) -> None:
    with FakeOpenAI([]) as fake:
        proc = run(fake, [*schema_args({"type": "object", "required": "summary"})], tmp_path)
        bad_file = tmp_path / "schema.json"
        bad_file.write_text("{not json")
        from_file = run(fake, ["--json-schema", f"@{bad_file}", "-o", "json", "-p", "x"], tmp_path)
        assert fake.requests == []
    assert proc.returncode == ExitCode.USAGE and proc.stdout == b""
    assert proc.stderr.strip().splitlines() == [
        "headwire: --json-schema: not a valid JSON Schema: at required: 'summary' is not of "
        "type 'array'"
    ]
    assert from_file.returncode == ExitCode.USAGE
    assert (
        f"{bad_file}: not valid JSON"
        in one_result(from_file.stdout, "error_during_execution")["errors"][0]
    )


def test_a_schema_file_and_resume(tmp_path: Path) -> None:
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(SCHEMA))
    second = {"summary": "second look", "risk": "medium"}
    with FakeOpenAI([{"text": json.dumps(GOOD)}, {"text": json.dumps(second)}]) as fake:
        first = run(fake, ["--json-schema", str(path), "-o", "json", "-p", "rate it"], tmp_path)
        session = one_result(first.stdout, "success")["session_id"]
        args = ["--json-schema", str(path), "--resume", session, "-o", "json", "-p", "again"]
        again = run(fake, args, tmp_path)
        resumed_request = fake.requests[1]
    assert again.returncode == 0, again.stderr
    assert one_result(again.stdout, "success")["structured_output"] == second
    roles = [m["role"] for m in resumed_request["messages"]]
    assert roles == ["system", "user", "assistant", "user"]  # the history went to the model


def test_a_persistent_session(tmp_path: Path) -> None:
    replies = [
        {"text": json.dumps(GOOD)},
        {"text": "no JSON here"},
        {"text": json.dumps({"summary": "fixed", "risk": "high"})},
    ]
    with FakeOpenAI(replies) as fake:
        proc = run(fake, [*schema_args(), *SESSION], tmp_path, stdin=jsonl(user("a"), user("b")))
    assert proc.returncode == 0, proc.stderr
    first, second = turn_results(proc.lines())
    assert first["structured_output"] == GOOD
    assert second["structured_output"] == {"summary": "fixed", "risk": "high"}
    assert second["num_turns"] == 2
