"""The stand-in result of a run that ended before its turn could."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.cli.run.result_guard import ResultGuard, failure_result, output_format_of
from headwire.protocol.messages import InterimResult


@pytest.mark.parametrize(
    ("argv", "fmt"),
    [
        (["-p", "x"], "text"),
        (["-o", "json"], "json"),
        (["-ojson"], "json"),
        (["-o=stream-json"], "stream-json"),
        (["--output-format=stream-json", "-p", "x"], "stream-json"),
        (["--output-format", "yaml"], "text"),
        (["--input-format", "stream-json"], "stream-json"),
        (["--", "-o", "json"], "text"),
        (["-o"], "text"),
    ],
)
def test_output_format_of(argv: list[str], fmt: str) -> None:
    assert output_format_of(argv) == fmt


def test_the_guard_writes_once_and_only_for_machine_formats() -> None:
    written: list[bytes] = []
    guard = ResultGuard("stream-json")
    guard.session_id = "s1"
    guard.fail("bad flag", written.append)
    guard.fail("again", written.append)
    (line,) = written
    result = json.loads(line)
    assert line.endswith(b"\n") and result["session_id"] == "s1"
    assert result["errors"] == ["bad flag"] and result["subtype"] == "error_during_execution"
    json_guard = ResultGuard("json")
    json_guard.fail("x", written.append)
    assert json.loads(written[-1])[0]["is_error"] is True
    text = ResultGuard("text")
    text.fail("x", written.append)
    assert len(written) == 2


def test_a_turn_result_settles_the_run_an_interim_one_does_not() -> None:
    written: list[bytes] = []
    guard = ResultGuard("json")
    guard.seen(InterimResult(failure_result("a subagent failed")))
    guard.fail("late", written.append)
    assert len(written) == 1
    guard = ResultGuard("json")
    guard.seen({"type": "result", "subtype": "success"})
    guard.fail("late", written.append)
    assert len(written) == 1


@given(st.lists(st.text(max_size=12), max_size=6))
def test_any_argv_reads_as_a_format(argv: list[str]) -> None:
    assert output_format_of(argv) in ("text", "json", "stream-json")
