"""``headwire schema`` prints valid JSON Schema; ``docs/wire.md`` is generated from it;
``headwire bound --validate`` reports every line outside the schema, wherever a chunk ends."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.cli.commands.schema import run_schema
from headwire.cli.docs.wire import GENERATOR, render
from headwire.protocol import messages as m
from headwire.protocol.schema import MODES, document
from headwire.protocol.schema.stream import StreamCheck

ROOT = Path(__file__).resolve().parents[4]
UPSTREAM = ROOT / "tests" / "data" / "upstream"


def _cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "headwire", *args],
        input=stdin,
        capture_output=True,
        env=env,
        check=False,
        timeout=60,
    )


def test_headwire_schema_prints_valid_json_schema() -> None:
    done = _cli("schema")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    jsonschema.Draft202012Validator.check_schema(printed)
    assert printed == document()


@pytest.mark.parametrize("mode", MODES)
def test_each_mode_prints_a_standalone_valid_schema(
    mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_schema(["--mode", mode]) == 0
    printed = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator.check_schema(printed)
    assert printed["x-mode"] == mode and printed["$ref"].startswith("#/$defs/")
    assert printed["x-input"].removeprefix("#/$defs/") in printed["$defs"]
    assert run_schema(["--mode", mode, "--headwire-only"]) == 0
    mine = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator.check_schema(mine)
    assert len(json.dumps(mine)) <= len(json.dumps(printed))


def test_a_bad_mode_is_a_usage_error() -> None:
    done = _cli("schema", "--mode", "grpc")
    assert done.returncode == 2 and b"invalid choice" in done.stderr and not done.stdout


def test_wire_reference_is_generated_from_the_schema() -> None:
    committed = (ROOT / "docs" / "wire.md").read_text()
    assert committed == render(), f"docs/wire.md is stale: regenerate it with `{GENERATOR}`"


def test_wire_reference_covers_every_message() -> None:
    text = render()
    for name in document()["$defs"]:
        assert f"### {name}\n" in text, name


# -- headwire bound --validate -----------------------------------------------------------------


def _error_line(**extra: object) -> bytes:
    result = m.result_error(
        uuid="u",
        session_id="s",
        duration_ms=0,
        duration_api_ms=0,
        num_turns=0,
        usage=m.usage_dict(0, 0),
        permission_denials=[],
        message="boom",
    )
    return json.dumps({**result, **extra}).encode() + b"\n"


def test_bound_validate_reports_a_deliberately_broken_line() -> None:
    stream = _error_line() + _error_line(surprise=True) + b"not json\n" + _error_line()
    done = _cli("bound", "--validate", stdin=stream)
    assert done.returncode == 0
    assert done.stdout == stream  # the stream passes through unchanged
    err = done.stderr.decode()
    assert "line 2: schema: $: Additional properties are not allowed ('surprise'" in err
    assert "line 3: not valid JSON" in err
    assert "line 1:" not in err and "line 4:" not in err


@pytest.mark.parametrize(
    ("fmt", "capture"),
    [
        ("stream-json", "shell-stream-json.stdout.jsonl"),
        ("stream-json", "mcp-persistent-sdk.stdout.jsonl"),
        ("stream-json", "mcp-dual.stdout.jsonl"),
        ("json", "shell-json.stdout.jsonl"),
        ("acp", "mcp-acp-mixed.stdout.jsonl"),
    ],
)
def test_bound_validate_accepts_the_upstream_captures(fmt: str, capture: str) -> None:
    data = (UPSTREAM / capture).read_bytes()
    check = StreamCheck(fmt)
    problems = check.feed(data) + check.close()
    lines = data.split(b"\n")
    notes = [n for n, line in enumerate(lines, 1) if b'"_oracle_note"' in line]
    assert [n for n, _ in problems] == notes  # only the capture's own omission notes


_STREAM = _error_line() + b"\n" + _error_line(extra=1) + b"[1]\n" + _error_line()[:-1]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, len(_STREAM)), max_size=8))
def test_stream_check_is_the_same_whatever_the_chunks(cuts: list[int]) -> None:
    """The problems found do not depend on where the chunks end."""
    edges = [0, *sorted(cuts), len(_STREAM)]
    check = StreamCheck("stream-json")
    found = []
    for a, b in itertools.pairwise(edges):
        found += check.feed(_STREAM[a:b])
    found += check.close()
    assert [n for n, _ in found] == [3, 4]
    assert check.lines == 5
