"""``headwire bound`` as a real process: edge cases, formats, upstream samples, exit codes."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from headwire.projection import (
    HEADLESS_TRUNCATION_MARKER,
    TOOL_RESULT_JSON_BYTE_BUDGET,
    project_acp_tool_call_update,
    project_tool_result_content,
)
from headwire.wire import encode
from tests.paths import DATA, SRC

SAMPLES = DATA / "upstream"
BUDGET = TOOL_RESULT_JSON_BYTE_BUDGET
MIB = 1 << 20


def bound_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "headwire", "bound", *args]


def env(**extra: str) -> dict[str, str]:
    """The environment with ``src`` importable and stdout buffered (as it is by default)."""
    base = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    path = base.get("PYTHONPATH")
    base["PYTHONPATH"] = f"{SRC}{os.pathsep}{path}" if path else str(SRC)
    return {**base, **extra}


def run_bound(
    data: bytes | Path, *args: str, timeout: float = 60
) -> subprocess.CompletedProcess[bytes]:
    if isinstance(data, Path):
        with data.open("rb") as stdin:
            return subprocess.run(
                bound_cmd(*args), stdin=stdin, capture_output=True, env=env(), timeout=timeout
            )
    return subprocess.run(
        bound_cmd(*args), input=data, capture_output=True, env=env(), timeout=timeout
    )


def tool_result_line(content: Any, end: bytes = b"\n") -> bytes:
    message = {
        "type": "user",
        "uuid": "3000a1ee-5a53-4413-b2fd-055ab1108686",
        "session_id": "dc26b4b7-0096-4842-b4ee-e8216a3e9198",
        "parent_tool_use_id": None,
        "message": {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "is_error": False,
                    "content": content,
                }
            ],
        },
    }
    return encode(message) + end


def lf_lines(data: bytes) -> list[bytes]:
    """Lines split on ``\\n`` only, terminators kept (a final line may lack one)."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


def content_of(line: bytes) -> Any:
    return json.loads(line)["message"]["content"][0]["content"]


# -- a self-contained sample with every edge case ---------------------------------------------


def test_generated_stream_with_edge_cases() -> None:
    big = "HEAD-" + "é" * 150_000 + "-TAIL"
    lines = [
        encode({"type": "system", "subtype": "init", "session_id": "s"}) + b"\n",
        b"\n",  # empty line
        b"this is not json\n",  # malformed
        tool_result_line(big),
        b'{"type":"assistant","text":"caf\xe9"}\n',  # Latin-1, not UTF-8
        b"   \r\n",  # blank, CRLF
        tool_result_line("small result"),
        tool_result_line([{"type": "text", "text": "a" * 70_000}, {"type": "text", "text": "b"}]),
        b'{"type":"result","result":"done"}',  # no trailing newline
    ]
    data = b"".join(lines)
    result = run_bound(data, "--stats")
    assert result.returncode == 0, result.stderr
    out = lf_lines(result.stdout)
    assert len(out) == len(lines)
    for index in (0, 1, 2, 4, 5, 6, 8):
        assert out[index] == lines[index]
    content = content_of(out[3])
    assert len(encode(content)) <= BUDGET
    assert content == project_tool_result_content(big)
    assert content.startswith("HEAD-") and content.endswith("-TAIL")
    assert len(encode(content_of(out[7]))) <= BUDGET
    assert content_of(out[7])[1] == {"type": "text", "text": "b"}
    stderr = result.stderr.decode()
    assert "headwire bound: line 3: not valid JSON" in stderr
    assert "headwire bound: line 5: invalid UTF-8 at byte 31" in stderr
    assert "line 2:" not in stderr and "line 6:" not in stderr
    assert stderr.splitlines()[-1].startswith("headwire bound: 9 lines, 2 bounded (2 fields: ")
    assert stderr.splitlines()[-1].endswith(", 2 malformed")


def test_without_stats_stderr_holds_only_warnings() -> None:
    result = run_bound(b'{"ok":1}\nbad\n')
    assert result.returncode == 0
    assert result.stdout == b'{"ok":1}\nbad\n'
    assert (
        result.stderr == b"headwire bound: line 2: not valid JSON (Expecting value at column 1)\n"
    )


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n",
        b"\n\n\n",
        b'{"a":1}',
        b"no newline and not json",
        b"\xff\xfe\x00garbage\n\xc3",
        b"\r\n\r\n",
    ],
)
def test_odd_streams_pass_through_exactly(data: bytes) -> None:
    result = run_bound(data)
    assert result.returncode == 0
    assert result.stdout == data


def test_a_file_without_a_trailing_newline_keeps_its_last_bounded_line_open(
    tmp_path: Path,
) -> None:
    data = b'{"type":"system"}\n' + tool_result_line("z" * 300_000, end=b"")
    path = tmp_path / "in.jsonl"
    path.write_bytes(data)
    result = run_bound(path)
    assert result.returncode == 0
    assert result.stdout.startswith(b'{"type":"system"}\n')
    assert not result.stdout.endswith(b"\n")
    assert result.stdout.count(b"\n") == 1
    assert content_of(lf_lines(result.stdout)[1]) == project_tool_result_content("z" * 300_000)


# -- 200 MB lines ------------------------------------------------------------------------------


def run_bound_to_file(source: Path, target: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run the filter from file to file (no 200 MB pipe reads in the test process)."""
    with source.open("rb") as stdin, target.open("wb") as stdout:
        return subprocess.run(
            bound_cmd(*args),
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=env(),
            timeout=120,
        )


def sha256_of(path: Path) -> bytes:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(MIB):
            digest.update(chunk)
    return digest.digest()


@pytest.mark.slow
def test_a_200_mb_tool_result_is_bounded(tmp_path: Path) -> None:
    size = 200 * MIB
    source, target = tmp_path / "huge.jsonl", tmp_path / "out.jsonl"
    head, _, tail = tool_result_line("@").partition(b"@")
    plain = b'{"type":"assistant","text":"' + b"y" * (20 * MIB) + b'"}\n'  # long, no result
    with source.open("wb") as f:
        f.write(b'{"first":true}\n')
        f.write(head + b"H" + b"x" * size + b"T" + tail)
        f.write(plain)
        f.write(b'{"last":true}')
    result = run_bound_to_file(source, target, "--stats")
    assert result.returncode == 0, result.stderr[-2000:]
    out = lf_lines(target.read_bytes())
    assert len(out) == 4
    assert out[0] == b'{"first":true}\n' and out[2] == plain and out[3] == b'{"last":true}'
    content = content_of(out[1])
    assert len(encode(content)) == BUDGET
    assert content.startswith("Hxxx") and content.endswith("xxxT")
    assert HEADLESS_TRUNCATION_MARKER in content
    assert result.stderr.decode() == (
        f"headwire bound: 4 lines, 1 bounded (1 field: {size + 4} -> {BUDGET} JSON bytes), "
        "0 malformed\n"
    )


@pytest.mark.slow
def test_a_200_mb_malformed_line_passes_whole(tmp_path: Path) -> None:
    size = 200 * MIB
    source, target = tmp_path / "bad.jsonl", tmp_path / "out.jsonl"
    with source.open("wb") as f:
        f.write(b'{"type":"user","message":{"content":[{"type":"tool_result","content":"')
        f.write(b"x" * size)
        f.write(b"\xff\n")  # invalid UTF-8 at the very end, and no closing quote
        f.write(b"{}")
    result = run_bound_to_file(source, target)
    assert result.returncode == 0
    assert target.stat().st_size == source.stat().st_size
    assert sha256_of(target) == sha256_of(source)
    assert result.stderr.decode().startswith("headwire bound: line 1: invalid UTF-8 at byte ")


# -- formats -----------------------------------------------------------------------------------


def test_json_format_bounds_inside_the_one_array() -> None:
    messages = [
        {"type": "system", "subtype": "init"},
        json.loads(tool_result_line("q" * 100_000)),
        {"type": "result", "result": "done"},
    ]
    for end in (b"\n", b""):
        result = run_bound(encode(messages) + end, "--format", "json")
        assert result.returncode == 0
        assert result.stdout.endswith(b"]" + end)
        out = json.loads(result.stdout)
        assert out[0] == messages[0] and out[2] == messages[2]
        bounded = out[1]["message"]["content"][0]["content"]
        assert bounded == project_tool_result_content("q" * 100_000)


def test_acp_format_bounds_tool_call_updates() -> None:
    update = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "status": "completed",
        "content": [{"type": "content", "content": {"type": "text", "text": "r" * 200_000}}],
        "rawOutput": "r" * 200_000,
    }
    frame = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": update},
    }
    other = b'{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}\n'
    result = run_bound(encode(frame) + b"\n" + other, "--format", "acp")
    assert result.returncode == 0
    first, second = lf_lines(result.stdout)
    expected = {
        **frame,
        "params": {"sessionId": "s", "update": project_acp_tool_call_update(update)},
    }
    assert first == encode(expected) + b"\n"
    assert second == other


def test_claude_code_text_and_image_results_are_bounded() -> None:
    """Finding (issue 11): Claude Code writes MCP results as text + image lists, a text block
    may carry extra keys, and content may be one block object; each went out at 1 MB."""
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "i"}}
    text = {"type": "text", "text": "m" * MIB}
    lines = [
        tool_result_line([text, image]),
        tool_result_line([{**text, "cache_control": {"type": "ephemeral"}}]),
        tool_result_line(text),
    ]
    result = run_bound(b"".join(lines), "--stats")
    assert result.returncode == 0, result.stderr
    out = lf_lines(result.stdout)
    assert len(out) == 3
    for line in out:
        assert len(line) < BUDGET + 1024
        assert encode(HEADLESS_TRUNCATION_MARKER)[1:-1] in line
    assert content_of(out[0])[1] == image
    assert content_of(out[1])[0]["cache_control"] == {"type": "ephemeral"}
    assert content_of(out[2])["type"] == "text"
    assert b"3 lines, 3 bounded (3 fields" in result.stderr


# -- exit codes ----------------------------------------------------------------------------------


def test_usage_errors_exit_2() -> None:
    result = run_bound(b"", "--format", "xml")
    assert result.returncode == 2
    assert b"invalid value 'xml'" in result.stderr  # one line, no usage block
    assert result.stderr.count(b"\n") == 1
    assert run_bound(b"", "--bogus").returncode == 2


def test_help_documents_formats_and_exit_codes() -> None:
    result = run_bound(b"", "--help")
    assert result.returncode == 0
    text = result.stdout.decode()
    for word in ("stream-json", "json", "acp", "--stats", "--validate", "141", "130", "usage"):
        assert word in text


def test_validate_parses_every_line() -> None:
    data = b'{"ok":1}\n{"broken":}\n'
    quick = run_bound(data)
    assert quick.stdout == data and quick.stderr == b""
    full = run_bound(data, "--validate")
    assert full.stdout == data
    assert full.stderr.decode().startswith("headwire bound: line 2: not valid JSON")


def test_a_closed_stdout_exits_141_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    path.write_bytes(b'{"type":"stream_event","n":12345678}\n' * 1_000_000)
    with path.open("rb") as stdin:
        proc = subprocess.Popen(
            bound_cmd(), stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env()
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.read(10)
        proc.stdout.close()
        stderr = proc.stderr.read()
        assert proc.wait(timeout=60) == 141
    assert stderr == b""


@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_live_stream_flows_and_an_interrupt_exits_130(unbuffered: str) -> None:
    extra = {"PYTHONUNBUFFERED": unbuffered} if unbuffered else {}
    proc = subprocess.Popen(
        bound_cmd(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(**extra),
    )
    assert proc.stdin is not None and proc.stdout is not None
    for line in (b'{"a":1}\n', tool_result_line("w" * 100_000)):
        proc.stdin.write(line)
        proc.stdin.flush()
        out = proc.stdout.readline()  # passed on while the input is still open
        assert out == line or content_of(out) == project_tool_result_content("w" * 100_000)
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert b"Traceback" not in stderr


# -- upstream samples ----------------------------------------------------------------------------

_SAMPLE_FILES = sorted(SAMPLES.glob("*.stdout.jsonl"))


def test_upstream_samples_are_committed() -> None:
    assert len(_SAMPLE_FILES) >= 27 and len(_reconstructable()) >= 8


def _sample_format(path: Path) -> str:
    name = path.name
    if "-acp" in name:
        return "acp"
    if "-json." in name or "-json-mixed." in name:
        return "json"
    return "stream-json"


@pytest.mark.parametrize("path", _SAMPLE_FILES, ids=lambda p: p.name)
def test_upstream_output_is_already_bounded(path: Path) -> None:
    """Upstream's wire is bounded already, so the filter must give back the same bytes."""
    result = run_bound(path, "--format", _sample_format(path), "--stats")
    assert result.returncode == 0
    assert result.stdout == path.read_bytes()
    assert ", 0 bounded (" in result.stderr.decode()


def _unit_and_count(summary: dict[str, Any]) -> tuple[str, int] | None:
    """The periodic original text of an MCP fixture, from its kind and JSON size."""
    units = {"ascii": "x", "emoji": "\U0001f600", "mixed": 'a"\\\x01\n\t\u00e9\u4e2d\U0001f600'}
    kind = summary["kind"].split(":")[0]
    checks = [c for c in summary["oracle_checks"] if "original_json_bytes" in c]
    if kind not in units or not checks:
        return None
    unit = units[kind]
    payload = checks[0]["original_json_bytes"] - 2
    unit_bytes = len(encode(unit)) - 2
    if payload % unit_bytes:
        return None
    return unit, payload // unit_bytes


def _reconstructable() -> list[Any]:
    """MCP headless fixtures (not text, ACP or the TUI's dual sidecar) with a known original."""
    summary_path = SAMPLES / "summary.json"
    found = []
    for entry in json.loads(summary_path.read_text()):
        path = SAMPLES / f"{entry['label']}.stdout.jsonl"
        original = _unit_and_count(entry)
        headless = entry["mode"] not in ("text", "acp", "dual")
        if entry["tool"] == "mcp" and headless and original and path.is_file():
            found.append(pytest.param(path, *original, id=path.name))
    return found


@pytest.mark.parametrize(("path", "unit", "count"), _reconstructable())
def test_unbounded_upstream_output_is_bounded_to_upstream_bytes(
    path: Path, unit: str, count: int
) -> None:
    """Put the fixture's full tool output back into upstream's wire, then bound it: the
    filter must write upstream's exact bytes."""
    wire = path.read_bytes()
    fmt = "json" if wire.startswith(b"[") else "stream-json"
    unbounded: list[bytes] = []
    for line in lf_lines(wire):
        parsed = json.loads(line)
        for message in parsed if isinstance(parsed, list) else [parsed]:
            if message.get("type") == "user" and isinstance(message["message"]["content"], list):
                for block in message["message"]["content"]:
                    if block.get("type") == "tool_result":
                        block["content"] = unit * count
        unbounded.append(encode(parsed) + (b"\n" if line.endswith(b"\n") else b""))
    result = run_bound(b"".join(unbounded), "--format", fmt, "--stats")
    assert result.returncode == 0
    assert result.stdout == wire
    if len(encode(unit * count)) > BUDGET:
        assert ", 1 bounded (1 field: " in result.stderr.decode()


def test_files_are_read_in_order_each_a_stream_of_its_own(tmp_path: Path) -> None:
    big = tool_result_line("x" * 200_000, end=b"")  # no final newline: must not join the next
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_bytes(b"{}\n" + big)
    second.write_bytes(b"not json\n" + tool_result_line("small"))
    done = subprocess.run(
        bound_cmd("--stats", str(first), "-", str(tmp_path / "missing"), str(second)),
        input=b"[1]\n",
        capture_output=True,
        env=env(),
        timeout=60,
    )
    assert done.returncode == 1  # the missing file; the others are written
    out = done.stdout
    # the unterminated last line of a.jsonl is bounded on its own, then stdin's bytes follow
    # (as with cat); a shared stream would have read one line holding both
    assert out.startswith(b"{}\n")
    bounded, rest = out[3:].split(b"}[1]\n", 1)
    assert len(encode(content_of(bounded + b"}"))) == BUDGET
    assert rest == b"not json\n" + tool_result_line("small")
    err = done.stderr.decode().splitlines()
    assert err[0] == f"headwire bound: {tmp_path / 'missing'}: No such file or directory"
    assert err[1].startswith(f"headwire bound: {second}: line 1: ")
    assert err[2].startswith("headwire bound: 5 lines, 1 bounded (1 field: ")


def test_a_directory_or_unreadable_file_is_reported_and_skipped(tmp_path: Path) -> None:
    ok = tmp_path / "ok.jsonl"
    ok.write_bytes(b"{}\n")
    done = subprocess.run(
        bound_cmd(str(tmp_path), str(ok)), capture_output=True, env=env(), timeout=60
    )
    assert done.returncode == 1 and done.stdout == b"{}\n"
    assert done.stderr.decode() == f"headwire bound: {tmp_path}: Is a directory\n"
