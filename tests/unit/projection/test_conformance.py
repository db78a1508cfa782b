"""headwire against the committed conformance vectors of upstream Qwen Code 0.24.4.

The vectors in ``tests/vectors/*.jsonl.gz`` were computed by the real upstream functions (and
``encode.jsonl.gz`` by Node's ``JSON.stringify``); see ``tests/vectors/generate.py`` for the
format and for how to regenerate them.  No oracle, Node or network is needed here.  Every vector
must match exactly: strings as UTF-16 code-unit sequences, "returned unchanged" as object
identity, and every recorded JSON byte count.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import importlib.util
import json
import sys
from collections.abc import Callable
from functools import cache
from types import ModuleType
from typing import Any

import pytest

from headwire.projection import (
    ACP_TRUNCATION_MARKER,
    HEADLESS_TRUNCATION_MARKER,
    json_string_payload_bytes,
    project_acp_tool_call_update,
    project_json_string,
    project_tool_result_content,
)
from headwire.wire import encode, encode_str, payload_bytes
from tests.paths import VECTORS

SHOWN = 25


def _load_format() -> ModuleType:
    name = "headwire_vector_format"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, VECTORS / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


fmt = _load_format()


@cache
def vectors(name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    header, records = fmt.read_vectors(VECTORS / name)
    return header, records


def report(mismatches: list[str], total: int) -> str:
    shown = "\n".join(mismatches[:SHOWN])
    more = f"\n... and {len(mismatches) - SHOWN} more" if len(mismatches) > SHOWN else ""
    return f"{len(mismatches)} of {total} checks disagree with upstream:\n{shown}{more}"


def check_string_records(header: dict[str, Any], records: list[dict[str, Any]]) -> None:
    decoder = fmt.Decoder(header["alphabets"])
    markers: list[str] = header["markers"]
    mismatches: list[str] = []
    total = 0
    for index, record in enumerate(records):
        text = decoder.string(record["in"])
        label = record.get("name") or f"#{index} {json.dumps(record['in'])[:70]}"
        units = fmt.utf16(text)
        if len(units) != 2 * record["n"] or hashlib.sha256(units).hexdigest()[:32] != record["sha"]:
            mismatches.append(f"{label}: the recipe no longer builds the recorded input")
            continue
        total += 1
        got_json = payload_bytes(text) + 2  # len(encode(text)), JSON.stringify's length
        if got_json != record["jb"]:
            mismatches.append(f"{label}: JSON bytes of input {got_json} != {record['jb']}")
        for check in record["checks"]:
            total += 1
            problem = run_string_check(text, check, markers)
            if problem:
                mismatches.append(f"{label}: {check[:3]}: {problem}")
    assert not mismatches, report(mismatches, total)


def run_string_check(text: str, check: list[Any], markers: list[str]) -> str | None:
    """``None`` when headwire agrees with one recorded upstream check, else a description."""
    op = check[0]
    if op == "p":
        stop_after, want = check[1], check[2]
        if stop_after is None:
            got = json_string_payload_bytes(text)
        else:
            got = json_string_payload_bytes(text, stop_after)
        return None if got == want else f"payload bytes {got} != {want}"
    if op == "h":
        changed, out, json_bytes = check[1:4]
        props = check[4] if len(check) > 4 else None
        marker = HEADLESS_TRUNCATION_MARKER
        result = project_tool_result_content(text)
    else:
        budget, marker_index, changed, out, json_bytes = check[1:6]
        props = check[6] if len(check) > 6 else None
        marker = markers[marker_index]
        result = project_json_string(text, budget, marker)
    if not changed:
        if result is not text:
            return f"upstream returned the input itself; headwire {fmt.describe_string(result)}"
    elif result is text or not fmt.string_matches(result, out):
        return f"got {fmt.describe_string(result)}, upstream {out!r}"
    got_json = len(encode_str(result))
    if got_json != json_bytes:
        return f"JSON bytes {got_json} != {json_bytes}"
    if props:
        failed = fmt.check_props(result, got_json, marker, props)
        if failed:
            return f"reference facts do not hold: {failed}"
    return None


def test_upstream_unit_cases() -> None:
    """§5.1 (native parity, LCG fuzz, boundaries, families, 20/80, surrogates, idempotence),
    §4.5 / §5.5 derived numbers and §7 item 10."""
    check_string_records(*vectors("upstream.jsonl.gz"))


def test_random_strings() -> None:
    """Random adversarial strings: headless, generic projection at many budgets and markers,
    and payload accounting with and without an early stop."""
    check_string_records(*vectors("strings.jsonl.gz"))


def contains(value: Any, marker: str) -> bool:
    """Whether a string anywhere in ``value`` contains ``marker`` (free of surrogates)."""
    if isinstance(value, str):
        return marker in value
    if isinstance(value, list):
        return any(contains(v, marker) for v in value)
    if isinstance(value, dict):
        return any(contains(v, marker) for v in value.values())
    return False


def acp_problems(record: dict[str, Any], update: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    before = copy.deepcopy(update)  # shares the (immutable) strings; cheap
    result = project_acp_tool_call_update(update)
    if not record["changed"]:
        if result is not update:
            problems.append("upstream returned the update itself; headwire returned a new one")
    elif result is update:
        problems.append("upstream projected the update; headwire returned it unchanged")
    elif not fmt.digest_matches(result, record["out"]):
        problems.append("projected update differs from upstream")
    if update != before:
        problems.append("the input update was mutated")
    measured: dict[str, Callable[[], int | None]] = {
        "jb": lambda: len(encode(result)),
        "cjb": lambda: len(encode(result["content"])) if "content" in result else None,
        "rjb": lambda: len(encode(result["rawOutput"])) if "rawOutput" in result else None,
    }
    for key, measure in measured.items():
        got = measure()
        if got != record[key]:
            problems.append(f"{key} {got} != {record[key]}")
    if contains(result, ACP_TRUNCATION_MARKER) != record["marker"]:
        problems.append(f"has marker != {record['marker']}")
    again = project_acp_tool_call_update(result)
    if (again is not result) != record["idem_changed"]:
        problems.append(
            f"re-projection changed={again is not result}, upstream {record['idem_changed']}"
        )
    for key, want in record.get("props", {}).items():
        if key == "block_payloads":
            ok = [payload_bytes(b["content"]["text"]) for b in result["content"]] == want
        elif key == "content_json_bytes":
            ok = len(encode(result["content"])) == want
        elif key == "rawOutput_json_bytes":
            ok = len(encode(result["rawOutput"])) == want
        elif key == "all_marked":
            ok = len(result["content"]) == len(update["content"]) and all(
                ACP_TRUNCATION_MARKER in b["content"]["text"] for b in result["content"]
            )
        elif key == "paired":
            ok = result["rawOutput"] == result["content"][0]["content"]["text"]
        elif key == "frame_max":
            frame = {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": "s", "update": result},
            }
            ok = len(encode(frame)) < want
        else:
            raise ValueError(key)
        if not ok:
            problems.append(f"reference fact {key}={want!r} does not hold")
    return problems


def test_acp_updates() -> None:
    """``tool_call_update`` projection: content arrays, rawOutput strings and shell results,
    pairing, exemptions (A2UI, non-canonical blocks, other kinds), identity when unchanged."""
    header, records = vectors("acp.jsonl.gz")
    decoder = fmt.Decoder(header["alphabets"])
    mismatches = []
    for record in records:
        problems = acp_problems(record, decoder.value(record["update"]))
        mismatches.extend(f"{record['name']}: {p}" for p in problems)
    assert not mismatches, report(mismatches, len(records))


def test_encode_matches_json_stringify() -> None:
    """``encode(value)`` equals the UTF-8 of Node's ``JSON.stringify`` of the same value."""
    _, records = vectors("encode.jsonl.gz")
    mismatches = []
    for record in records:
        value = json.loads(record["in"], object_hook=fmt.nonfinite_hook)
        want = base64.b64decode(record["out"])
        try:
            got = encode(value)
        except Exception as exc:  # report, do not stop at the first
            got = f"raised {exc!r}".encode()
        if got != want:
            mismatches.append(
                f"{record['in'][:120]}\n    headwire {got[:120]!r}\n    node     {want[:120]!r}"
            )
    assert not mismatches, report(mismatches, len(records))


def test_vector_coverage() -> None:
    """The committed vectors cover what the conformance issue asks for."""
    _, strings = vectors("strings.jsonl.gz")
    header, upstream = vectors("upstream.jsonl.gz")
    _, acp = vectors("acp.jsonl.gz")
    _, encoded = vectors("encode.jsonl.gz")
    assert len(strings) >= 2000
    assert max(r["n"] for r in strings) >= 190_000
    assert min(r["n"] for r in strings) == 0
    budgets = {c[1] for r in strings for c in r["checks"] if c[0] == "j"}
    assert {0, 1, 2, 3, 4, 5, 7, 30, 46, 47, 48, 49, 100, 1000, 65536} <= budgets
    markers_used = {c[2] for r in strings for c in r["checks"] if c[0] == "j"}
    assert markers_used == set(range(len(header["markers"])))
    stops = [c[1] for r in strings for c in r["checks"] if c[0] == "p"]
    assert None in stops and sum(s is not None for s in stops) >= 2000
    names = [r["name"] for r in upstream]
    assert sum(n.startswith("5.1 fixed-seed LCG fuzz") for n in names) == 250
    assert len(acp) >= 200
    assert sum(r["changed"] for r in acp) >= 100 and sum(not r["changed"] for r in acp) >= 50
    assert len(encoded) >= 500


@pytest.mark.parametrize("name", ["strings", "upstream", "acp", "encode"])
def test_vector_source(name: str) -> None:
    header, _ = vectors(f"{name}.jsonl.gz")
    if name != "encode":
        assert header["source"]["package"] == "@qwen-code/qwen-code"
        assert header["source"]["version"] == "0.24.4"
    assert header["source"]["node"].startswith("v")
