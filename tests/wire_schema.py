"""Every line on a wire, checked against headwire's published schema (``headwire.protocol.schema``).

The e2e drivers call these on what they capture: :func:`check_run` on a finished run's stdout
(and the stdin it was given), :func:`check_line` on each line a live driver reads or sends,
:func:`check_tap` on what a tapped launcher (:mod:`tests.wire_tap`) saw.  The mode follows from
the arguments: ``--experimental-acp`` is ACP, ``-o stream-json`` / ``-o json`` headless, text
mode has no wire to check; ``--input-format stream-json`` makes stdin a headless input wire.

Input lines that are not JSON objects are a test's deliberate garbage and are not checked (the
CLI answers them with an error, which is checked as output); everything else must validate.
A test that sends a deliberately malformed *object* says so (``check_input=False`` on the
driver).  :data:`COUNTS` tallies the lines checked; the conftest prints it at the end.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from headwire.protocol.schema import validator

COUNTS: Counter[str] = Counter()
"""Lines validated in this test session, by ``mode direction``."""

_SUBCOMMANDS = ("bound", "schema")


def _option(args: list[str], *names: str) -> str | None:
    value = None
    for i, arg in enumerate(args):
        for name in names:
            if arg == name and i + 1 < len(args):
                value = args[i + 1]
            elif arg.startswith(name + "=") and name.startswith("--"):
                value = arg.split("=", 1)[1]
    return value


def modes_of(args: list[str]) -> tuple[str | None, str | None]:
    """``(output, input)`` wire of a ``headwire ARGS`` run: ``"acp"``, ``"headless"``,
    ``"headless-json"`` (one JSON array) or ``None`` (no wire to check)."""
    if args[:1] and args[0] in _SUBCOMMANDS:
        return None, None
    if "--experimental-acp" in args or "--acp" in args:
        return "acp", "acp"
    output = _option(args, "-o", "--output-format")
    source = _option(args, "--input-format")
    out = {"stream-json": "headless", "json": "headless-json"}.get(output or "")
    return out, ("headless" if source == "stream-json" else None)


def check_message(mode: str, direction: str, message: Any, where: str = "") -> None:
    """``message`` validates against ``mode``'s ``direction`` root (AssertionError if not)."""
    if mode == "headless-json":
        assert isinstance(message, list), f"{where}: -o json writes one array"
        for i, item in enumerate(message):
            check_message("headless", direction, item, f"{where}[{i}]")
        return
    errors = validator(mode, direction).errors(message)  # type: ignore[arg-type]
    assert not errors, f"{where}: not in the {mode} {direction} schema: {errors[0]}"
    COUNTS[f"{mode} {direction}"] += 1


def check_line(mode: str | None, direction: str, line: bytes | str, where: str = "") -> None:
    """One line of a wire (blank lines pass; for input, non-objects are not checked)."""
    if mode is None or not line.strip():
        return
    try:
        message = json.loads(line)
    except ValueError:
        assert direction == "input", f"{where}: not JSON: {line[:200]!r}"
        return
    if direction == "input" and not isinstance(message, dict):
        return
    check_message(mode, direction, message, where)


def check_stream(
    mode: str | None, direction: str, data: bytes, where: str = "", torn_tail: bool = False
) -> None:
    """Every line of ``data``; with ``torn_tail`` a last line without its newline (a killed
    process) is not checked."""
    if mode is None:
        return
    lines = data.split(b"\n")
    if torn_tail and not data.endswith(b"\n"):
        lines = lines[:-1]
    for n, line in enumerate(lines, 1):
        check_line(mode, direction, line, f"{where} line {n}")


def check_run(
    args: list[str],
    stdout: bytes,
    stdin: bytes | None = None,
    *,
    check_input: bool = True,
    torn_tail: bool = False,
) -> None:
    """A finished ``headwire ARGS`` run: every stdout line and every stdin line it was sent."""
    out, inp = modes_of(args)
    check_stream(out, "output", stdout, "stdout", torn_tail)
    if stdin and check_input:
        check_stream(inp, "input", stdin, "stdin")


def check_tap(tap: Path) -> None:
    """Everything a tapped launcher saw: per process, stdout and stdin by its arguments."""
    for argv_file in sorted(tap.glob("*.argv")):
        args = json.loads(argv_file.read_text())
        base = argv_file.with_suffix("")
        out, inp = modes_of(args)
        stdout = base.with_suffix(".stdout")
        stdin = base.with_suffix(".stdin")
        where = f"{tap.name}/{base.name}"
        if stdout.exists():
            check_stream(out, "output", stdout.read_bytes(), f"{where} stdout", torn_tail=True)
        if stdin.exists():
            check_stream(inp, "input", stdin.read_bytes(), f"{where} stdin")


def summary(counts: Iterable[tuple[str, int]] | None = None) -> str:
    """``N lines`` by mode and direction, for the terminal summary."""
    items = sorted(COUNTS.items() if counts is None else counts)
    total = sum(n for _, n in items)
    return f"{total:,} wire lines validated against the schema" + (
        " (" + ", ".join(f"{k}: {n:,}" for k, n in items) + ")" if items else ""
    )
