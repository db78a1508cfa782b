"""One-line usage errors, no abbreviations, help for every flag (``cli/flags/parsing.py``)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.cli.commands import bound as bound_cmd
from headwire.cli.commands import sessions as sessions_cmd
from headwire.cli.commands.sessions import format_bytes, parse_duration
from headwire.cli.flags import agent as flags
from headwire.cli.flags.parsing import Parser, did_you_mean
from tests.e2e.helpers import env_for


def parsers() -> Iterator[argparse.ArgumentParser]:
    stack: list[argparse.ArgumentParser] = [
        flags.build_parser(),
        sessions_cmd.build_parser(),
        bound_cmd._parser(),
    ]
    while stack:
        parser = stack.pop()
        yield parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack += list(action.choices.values())


def test_every_flag_of_every_command_has_help_and_no_abbreviations() -> None:
    missing = []
    for parser in parsers():
        assert isinstance(parser, Parser) and parser.allow_abbrev is False, parser.prog
        for action in parser._actions:
            if not action.help or action.help == argparse.SUPPRESS:
                missing.append(f"{parser.prog} {'/'.join(action.option_strings) or action.dest}")
            assert "IGNORED" not in str(action.metavar), action.option_strings
    assert not missing, missing


def run(*args: str, tmp: str = "/tmp") -> subprocess.CompletedProcess[str]:
    from pathlib import Path

    return subprocess.run(
        [sys.executable, "-m", "headwire", *args],
        capture_output=True,
        text=True,
        env=env_for(Path(tmp)),
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ["--yollo"],
            "headwire: unknown option '--yollo' (did you mean '--yolo'?); see 'headwire --help'",
        ),
        (
            ["--output", "json"],
            "headwire: unknown option '--output' (did you mean '--output-format'?)",
        ),
        (
            ["-o", "yaml"],
            "headwire: -o/--output-format: invalid value 'yaml' "
            "(choose from text, json, stream-json); see",
        ),
        (["-o", "jsn"], "(did you mean 'json'?)"),
        (["--max-session-turns", "x"], "headwire: --max-session-turns: invalid int value: 'x'"),
        (
            ["sessions", "lst"],
            "headwire sessions: unknown command 'lst' "
            "(choose from list, show, export, prune) (did you mean 'list'?)",
        ),
        (["sessions", "list", "--jsn"], "unknown option '--jsn' (did you mean '--json'?)"),
        (["sessions", "prune", "--older-than", "soon"], "invalid duration 'soon'"),
        (["bound", "--format", "acpp"], "headwire bound: --format: invalid value 'acpp'"),
        (["bound", "--stat"], "headwire bound: unknown option '--stat' (did you mean '--stats'?)"),
    ],
)
def test_a_usage_error_is_one_short_line(args: list[str], line: str, tmp_path: object) -> None:
    done = run(*args, tmp=str(tmp_path))
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert line in done.stderr
    assert "usage:" not in done.stderr and "IGNORED" not in done.stderr


def test_help_shows_no_placeholders_and_documents_the_script_format_and_environment() -> None:
    text = flags.build_parser().format_help()
    assert "IGNORED_" not in text
    for needle in ("OPENAI_MODEL", "OPENAI_API_KEY", "HEADWIRE_HOME", '{"tool": "NAME"', "delay_s"):
        assert needle in text


def test_did_you_mean_only_suggests_close_words() -> None:
    assert did_you_mean("--yollo", ["--yolo", "--model"]) == " (did you mean '--yolo'?)"
    assert did_you_mean("--zzz", ["--yolo"]) == ""


@given(
    st.lists(st.tuples(st.integers(0, 10_000), st.sampled_from("smhdw")), min_size=1, max_size=4)
)
def test_durations_add_up_their_parts(parts: list[tuple[int, str]]) -> None:
    seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
    text = "".join(f"{n}{u}" for n, u in parts)
    assert parse_duration(text) == sum(n * seconds[u] for n, u in parts)


@pytest.mark.parametrize("bad", ["", "5", "d", "5x", "-5d", "1d 2", "5d!"])
def test_a_bad_duration_is_refused(bad: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_duration(bad)


def test_sizes_read_like_people_write_them() -> None:
    assert [format_bytes(n) for n in (0, 1023, 1024, 5 * 1024**2, 3 * 1024**4)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "5.0 MiB",
        "3072.0 GiB",
    ]
