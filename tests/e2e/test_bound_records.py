"""``--include-bound-records``: each ``tool_result`` the 65,536-byte bound cut is followed by a
``system``/``tool_result_bound`` record (stream-JSON, the SDK types, Dual Output); without the
flag the wire has none.  Every line is checked against the wire schema by ``run_cli``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from headwire.sdk import ToolResultBound, parse_message
from headwire.wire import encode
from tests.e2e.helpers import BIG_OUTPUT, BIG_SHA256, run_cli

QUICK_START = [
    "--model",
    "scripted:demo",
    "--yolo",
    "-o",
    "stream-json",
    "-p",
    "Run the big output tool once, then say done.",
]


def test_the_quick_start_run_gives_one_record(tmp_path: Path) -> None:
    sidecar = tmp_path / "dual.jsonl"
    args = [*QUICK_START, "--include-bound-records", "--json-file", str(sidecar)]
    proc = run_cli(args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    messages = proc.lines()
    records = [m for m in messages if m.get("subtype") == "tool_result_bound"]
    assert len(records) == 1
    (record,) = records
    i = messages.index(record)
    block = messages[i - 1]["message"]["content"][0]  # right after the cut tool_result
    assert block["type"] == "tool_result" and block["tool_use_id"] == record["tool_use_id"]
    assert record["shown_json_bytes"] == len(encode(block["content"])) == 65_536
    assert record["original_json_bytes"] > 499_999 and record["parent_tool_use_id"] is None
    artifact = record["artifact"]
    data = Path(artifact["path"]).read_bytes()
    assert data == BIG_OUTPUT and artifact["bytes"] == len(data)
    assert artifact["sha256"] == hashlib.sha256(data).hexdigest() == BIG_SHA256
    parsed = parse_message(record)
    assert isinstance(parsed, ToolResultBound) and parsed.artifact == artifact
    dual = [json.loads(line) for line in sidecar.read_text().splitlines()]
    assert record in dual


def test_without_the_flag_there_is_no_record(tmp_path: Path) -> None:
    proc = run_cli(QUICK_START, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not [m for m in proc.lines() if m.get("subtype") == "tool_result_bound"]
