#!/usr/bin/env python3
"""Generate headwire's conformance vectors from the upstream Qwen Code oracle.

Regenerate every ``tests/vectors/*.jsonl.gz`` file (needs ``node`` and the oracle package;
takes about two minutes; the output is deterministic; ``--out DIR`` writes elsewhere)::

    cd /work/main && \\
    QWEN_ORACLE_PKG_DIR=/tmp/oracle-home/node_modules/@qwen-code/qwen-code \\
    /tmp/hwvenv/bin/python tests/vectors/generate.py

The oracle is ``../shared/oracle/oracle.mjs`` relative to the repository root (override with
``HEADWIRE_ORACLE_SCRIPT``); the package folder comes from ``HEADWIRE_ORACLE_PKG_DIR``, else
``QWEN_ORACLE_PKG_DIR``, else ``/tmp/oracle-home/node_modules/@qwen-code/qwen-code``.  Every
expected value is what upstream (``@qwen-code/qwen-code`` 0.24.4) computed; headwire is never
called here.  ``encode.jsonl.gz`` is produced by ``JSON.stringify`` in plain ``node``.

This module also defines the vector format, and the tests import its decoding helpers.

Files (gzip, one JSON object per line; the first line is a header ``{"header": {...}}``)
-------------------------------------------------------------------------------------

* ``strings.jsonl.gz``: random strings over adversarial alphabets;
* ``upstream.jsonl.gz``: the upstream unit-test cases and derived numbers, by name;
* ``acp.jsonl.gz``: ACP ``session/update`` payloads;
* ``encode.jsonl.gz``: JSON values and the bytes of ``JSON.stringify``.

String recipes (``"in"``, and string leaves of ACP templates as ``{"$str": recipe}``)
------------------------------------------------------------------------------------

* a JSON string: itself (lone surrogates are ``\\udxxx`` escapes);
* ``{"r": [recipe, n]}``: the recipe repeated ``n`` times;
* ``{"c": [recipe, ...]}``: the concatenation;
* ``{"g": [seed, n, alphabet]}``: ``n`` atoms; byte ``i`` of
  ``shake_256(b"headwire-vector:<seed>").digest(n)`` picks atom ``table[byte]`` of the named
  256-entry alphabet table in the file header.

An ACP template is JSON in which ``{"$str": recipe}`` is a string and a list element
``{"$rep": [template, n]}`` stands for ``n`` separately built copies of ``template``.

Expected strings: a JSON string when at most ``SHORT_UNITS`` UTF-16 units, else
``{"n": units, "sha": first 32 hex digits of SHA-256 of the UTF-16LE code units}``.  Strings are
compared as UTF-16 code-unit sequences.  Expected ACP results are :func:`digest` trees.

String checks (``"checks"`` of a string record), each a list:

* ``["h", changed, out, json_bytes, props?]``: ``projectHeadlessToolResultContent``;
* ``["j", budget, marker_index, changed, out, json_bytes, props?]``:
  ``projectJsonStringToByteBudget`` with marker ``header.markers[marker_index]``;
* ``["p", stop_after | null, result]``: ``jsonStringPayloadByteLength``.

``out`` is ``null`` when ``changed`` is false (upstream returned the input itself).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
FORMAT = 1
SHORT_UNITS = 400

HEADLESS_MARKER = "\n[... truncated for Headless transport ...]\n"
ACP_MARKER = "\n[... truncated for ACP transport ...]\n"
TEST_MARKER = "\n[... truncated for test transport ...]\n"

# ----------------------------------------------------------------------------- format helpers


def utf16(s: str) -> bytes:
    """The UTF-16LE code units of ``s`` (lone surrogates kept): a JavaScript string's identity."""
    return s.encode("utf-16-le", "surrogatepass")


def len16(s: str) -> int:
    return len(utf16(s)) // 2


def sha16(s: str) -> str:
    return hashlib.sha256(utf16(s)).hexdigest()[:32]


def expect_string(s: str) -> Any:
    """How an expected string is stored: verbatim when short, else its length and hash."""
    units = utf16(s)
    if len(units) <= 2 * SHORT_UNITS:  # adjacent surrogates joined, as a JSON round trip does
        return units.decode("utf-16-le", "surrogatepass")
    return {"n": len(units) // 2, "sha": hashlib.sha256(units).hexdigest()[:32]}


def string_matches(actual: Any, expected: Any) -> bool:
    if not isinstance(actual, str):
        return False
    units = utf16(actual)
    if isinstance(expected, str):
        return units == utf16(expected)
    return (
        len(units) == 2 * expected["n"]
        and hashlib.sha256(units).hexdigest()[:32] == expected["sha"]
    )


def describe_string(s: Any) -> str:
    """A short human description of a (possibly huge) string, for mismatch reports."""
    if not isinstance(s, str):
        return f"<{type(s).__name__}>"
    n = len16(s)
    if n <= 60:
        return f"{s!r} ({n} units)"
    return f"{s[:25]!r}...{s[-25:]!r} ({n} units, sha {sha16(s)})"


def digest(value: Any) -> Any:
    """A compact, exact, order-preserving description of a JSON value (JS number semantics)."""
    if isinstance(value, str):
        return ["s", expect_string(value)]
    if value is None:
        return ["z"]
    if isinstance(value, bool):
        return ["b", value]
    if isinstance(value, int | float):
        try:
            return ["d", repr(float(value))]
        except OverflowError:
            return ["d", "inf" if value > 0 else "-inf"]
    if isinstance(value, list | tuple):
        return ["a", [digest(v) for v in value]]
    if isinstance(value, dict):
        return ["o", [[k, digest(v)] for k, v in value.items()]]
    raise TypeError(type(value).__name__)


def digest_matches(actual: Any, expected: Any) -> bool:
    """Whether ``actual`` (a value) matches ``expected`` (a :func:`digest` tree)."""
    tag = expected[0]
    if tag == "s":
        return string_matches(actual, expected[1])
    if tag == "z":
        return actual is None
    if tag == "b":
        return isinstance(actual, bool) and actual == expected[1]
    if tag == "d":
        if isinstance(actual, bool) or not isinstance(actual, int | float):
            return False
        return digest(actual) == expected
    if tag == "a":
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(expected[1])
            and all(digest_matches(a, e) for a, e in zip(actual, expected[1], strict=True))
        )
    if tag == "o":
        return (
            isinstance(actual, dict)
            and list(actual) == [k for k, _ in expected[1]]
            and all(digest_matches(actual[k], e) for k, e in expected[1])
        )
    raise ValueError(tag)


class Decoder:
    """Builds strings and values from recipes, with the alphabet tables of a file header."""

    def __init__(self, alphabets: dict[str, list[str]]) -> None:
        self.tables = {name: dict(enumerate(atoms)) for name, atoms in alphabets.items()}
        for name, atoms in alphabets.items():
            if len(atoms) != 256:
                raise ValueError(f"alphabet {name} has {len(atoms)} entries, not 256")

    def string(self, spec: Any) -> str:
        if isinstance(spec, str):
            return spec
        if "r" in spec:
            piece, times = spec["r"]
            return self.string(piece) * times
        if "c" in spec:
            return "".join(self.string(part) for part in spec["c"])
        if "g" in spec:
            seed, n, alphabet = spec["g"]
            data = hashlib.shake_256(f"headwire-vector:{seed}".encode()).digest(n)
            return data.decode("latin-1").translate(self.tables[alphabet])
        raise ValueError(f"bad string recipe {spec!r}")

    def value(self, template: Any) -> Any:
        if isinstance(template, dict):
            if len(template) == 1 and "$str" in template:
                return self.string(template["$str"])
            return {k: self.value(v) for k, v in template.items()}
        if isinstance(template, list):
            out: list[Any] = []
            for item in template:
                if isinstance(item, dict) and len(item) == 1 and "$rep" in item:
                    inner, times = item["$rep"]
                    out.extend(self.value(inner) for _ in range(times))
                else:
                    out.append(self.value(item))
            return out
        return template


def read_vectors(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the records of one vector file."""
    with gzip.open(path, "rt", encoding="ascii") as fh:
        lines = [json.loads(line) for line in fh if line.strip()]
    header = lines[0]["header"]
    if header.get("format") != FORMAT:
        raise ValueError(f"{path}: unknown vector format {header.get('format')}")
    return header, lines[1:]


def write_vectors(path: Path, header: dict[str, Any], records: Iterable[dict[str, Any]]) -> int:
    count = 0
    with open(path, "wb") as out, gzip.GzipFile(filename="", mode="wb", fileobj=out, mtime=0) as gz:
        gz.write((json.dumps({"header": {"format": FORMAT, **header}}) + "\n").encode("ascii"))
        for record in records:
            gz.write((json.dumps(record, separators=(",", ":")) + "\n").encode("ascii"))
            count += 1
    return count


def nonfinite_hook(obj: dict[str, Any]) -> Any:
    """``json.loads`` object hook of ``encode.jsonl.gz``: ``{"$nf": "nan"}`` is a float."""
    if len(obj) == 1 and "$nf" in obj:
        return float(obj["$nf"])
    return obj


# ----------------------------------------------------------------------------- the oracle


def oracle_paths() -> tuple[str, Path, Path] | None:
    """``(node, oracle.mjs, package dir)``, or ``None`` when any of them is missing."""
    node = shutil.which("node")
    script = Path(
        os.environ.get("HEADWIRE_ORACLE_SCRIPT") or REPO.parent / "shared" / "oracle" / "oracle.mjs"
    )
    pkg = Path(
        os.environ.get("HEADWIRE_ORACLE_PKG_DIR")
        or os.environ.get("QWEN_ORACLE_PKG_DIR")
        or "/tmp/oracle-home/node_modules/@qwen-code/qwen-code"
    )
    if node is None or not script.is_file() or not (pkg / "package.json").is_file():
        return None
    return node, script, pkg


class Oracle:
    """A long-lived ``oracle.mjs`` child speaking JSON lines."""

    def __init__(self, node: str, script: Path, pkg: Path) -> None:
        env = {**os.environ, "QWEN_ORACLE_PKG_DIR": str(pkg)}
        self.proc = subprocess.Popen(
            [node, str(script)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )

    def many(self, requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send ``requests`` (pipelined) and return the responses in order; all must be ok."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        stdin = self.proc.stdin

        def write() -> None:
            for request in requests:
                stdin.write(json.dumps(request).encode("ascii") + b"\n")
            stdin.flush()

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        responses = []
        for request in requests:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("oracle exited")
            response = json.loads(line)
            if not response.get("ok"):
                raise RuntimeError(f"oracle error {response} for {str(request)[:300]}")
            responses.append(response)
        writer.join()
        return responses

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        return self.many([request])[0]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


NODE_STRINGIFY = r"""
const rl = require('node:readline').createInterface({ input: process.stdin, crlfDelay: Infinity });
const NF = { nan: NaN, inf: Infinity, '-inf': -Infinity };
const revive = (k, v) =>
  v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 &&
  typeof v.$nf === 'string' ? NF[v.$nf] : v;
rl.on('line', (line) => {
  const text = JSON.stringify(JSON.parse(line, revive));
  process.stdout.write(Buffer.from(text, 'utf8').toString('base64') + '\n');
});
"""


def node_stringify(node: str, texts: list[str]) -> list[bytes]:
    """``JSON.stringify(JSON.parse(text))`` bytes for each JSON text, computed by ``node``."""
    done = subprocess.run(
        [node, "-e", NODE_STRINGIFY],
        input="".join(t + "\n" for t in texts).encode("ascii"),
        capture_output=True,
        check=True,
    )
    lines = done.stdout.decode("ascii").splitlines()
    assert len(lines) == len(texts)
    return [base64.b64decode(line) for line in lines]


def js_text(value: Any) -> str:
    """JSON text that ``JSON.parse`` (with the ``$nf`` reviver) reads as the same JS value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return '{"$nf":"nan"}'
        if math.isinf(value):
            return '{"$nf":"inf"}' if value > 0 else '{"$nf":"-inf"}'
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ",".join(js_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(json.dumps(k) + ":" + js_text(v) for k, v in value.items()) + "}"
    raise TypeError(type(value).__name__)


# ----------------------------------------------------------------------------- alphabets

ASCII = list("abcxyzXYZ0189 /~{}:,.-_=#")
QUOTE = ['"', "\\"]
SHORT_ESC = ["\b", "\t", "\n", "\f", "\r"]
C0 = ["\x00", "\x01", "\x07", "\x0b", "\x0e", "\x1b", "\x1f"]
MISC = ["\x7f", "\x80", "\u07ff", "\u0800", "\u2028", "\u2029", "汉", "é", "\ufeff", "\uffff"]
ASTRAL = ["😀", "\U00010000", "\U0010ffff"]
LONE_HIGH = ["\ud800", "\udbff", "\ud83d"]
LONE_LOW = ["\udc00", "\udfff", "\ude00"]
PAIR = ["\ud83d\ude00", "\ud800\udc00", "\udbff\udfff"]  # adjacent code points, as JS pairs

PROFILES: dict[str, list[tuple[list[str], int]]] = {
    "mix": [
        (ASCII, 96),
        (QUOTE, 16),
        (SHORT_ESC, 20),
        (C0, 14),
        (MISC, 50),
        (ASTRAL, 15),
        (LONE_HIGH, 15),
        (LONE_LOW, 15),
        (PAIR, 15),
    ],
    "ascii": [(ASCII, 216), (QUOTE, 20), (SHORT_ESC, 15), (C0, 5)],
    "esc": [(ASCII, 40), (QUOTE, 60), (SHORT_ESC, 80), (C0, 76)],
    "sur": [(ASCII, 56), (LONE_HIGH, 50), (LONE_LOW, 50), (PAIR, 40), (ASTRAL, 40), (MISC, 20)],
    "wide": [(ASCII, 36), (MISC, 150), (ASTRAL, 40), (PAIR, 30)],
    "emoji": [(ASCII, 56), (ASTRAL, 120), (PAIR, 80)],
}


def build_alphabets() -> dict[str, list[str]]:
    out = {}
    for name, groups in PROFILES.items():
        table = [atoms[j % len(atoms)] for atoms, count in groups for j in range(count)]
        assert len(table) == 256, name
        out[name] = table
    return out


ALPHABETS = build_alphabets()
LONE_PROFILES = ("sur", "mix")
DECODER = Decoder(ALPHABETS)

MARKERS = [
    HEADLESS_MARKER,
    ACP_MARKER,
    TEST_MARKER,
    "",
    "|",
    "\u2026",
    "<cut>",
    '"\\\n\x00',
    "\ud800",
    "\udc00",
    "x\ud83d",
    "\ude00y",
    "😀",
    "\ud83d\ude00",
    "\u2028汉\x1f",
    "\n",
    "\x00" * 10,
    '[\ud83d\ude00 \\ " \x7f \u0800 \U0010ffff \udc00\ud800 é 汉 \x1f \t cut ' + "~" * 60 + "]",
]
FIXED_BUDGETS = [0, 1, 2, 3, 4, 5, 7, 30, 46, 47, 48, 49, 100, 1000, 65536]

# ----------------------------------------------------------------------------- string checks

_seed_counter = [0]


def reseed(start: int) -> None:
    """Make :func:`gen` draw seeds from ``start + 1`` on (the live test uses fresh ones)."""
    _seed_counter[0] = start


def fresh_seed() -> int:
    _seed_counter[0] += 1
    return _seed_counter[0]


def gen(n: int, alphabet: str) -> dict[str, Any]:
    return {"g": [fresh_seed(), n, alphabet]}


def string_checks(
    oracle: Oracle,
    items: list[tuple[Any, list[list[Any]]]],
) -> list[dict[str, Any]]:
    """Run the checks of each ``(recipe, planned checks)`` on the oracle; return records.

    A planned check is ``["h"]``, ``["j", budget, marker_index]`` or ``["p", stop_after]``,
    optionally followed by a props dict (asserted on the oracle's result here).
    """
    requests: list[dict[str, Any]] = []
    for spec, planned in items:
        content = DECODER.string(spec)
        requests.append({"op": "headless", "content": content})
        for check in planned:
            if check[0] == "j":
                requests.append(
                    {
                        "op": "json_string",
                        "content": content,
                        "budget": check[1],
                        "marker": MARKERS[check[2]],
                    }
                )
            elif check[0] == "p":
                req: dict[str, Any] = {"op": "payload_bytes", "content": content}
                if check[1] is not None:
                    req["stop_after"] = check[1]
                requests.append(req)
    responses = iter(oracle.many(requests))
    records = []
    for spec, planned in items:
        content = DECODER.string(spec)
        base = next(responses)
        record: dict[str, Any] = {
            "in": spec,
            "sha": sha16(content),
            "n": len16(content),
            "jb": base["input_json_bytes"],
            "checks": [],
        }
        for check in planned:
            props = check[-1] if isinstance(check[-1], dict) else None
            r = base if check[0] == "h" else next(responses)
            if check[0] in ("h", "j"):
                result = r["result"]
                out = expect_string(result) if r["changed"] else None
                if not r["changed"]:
                    assert utf16(result) == utf16(content)
                stored = (
                    ["h", r["changed"], out, r["json_bytes"]]
                    if check[0] == "h"
                    else ["j", check[1], check[2], r["changed"], out, r["json_bytes"]]
                )
                if props:
                    marker = HEADLESS_MARKER if check[0] == "h" else MARKERS[check[2]]
                    failed = check_props(result, r["json_bytes"], marker, props)
                    if failed:
                        raise AssertionError(f"upstream disagrees with the reference: {failed}")
                    stored.append(props)
            else:
                stored = ["p", check[1], r["result"]]
            record["checks"].append(stored)
        records.append(record)
    return records


def check_props(result: str, json_bytes: int, marker: str, props: dict[str, Any]) -> list[str]:
    """Reference facts about a projected string; returns the ones that do not hold."""
    failed = []
    units = utf16(result)
    n = len(units) // 2
    for key, want in props.items():
        if key == "units":
            ok = n == want
        elif key == "json_bytes":
            ok = json_bytes == want
        elif key == "max_json_bytes":
            ok = json_bytes <= want
        elif key == "marker_at":
            ok = find16(result, marker) == want
        elif key == "has_marker":
            ok = (find16(result, marker) >= 0) == want if marker else True
        elif key == "head_tail":
            at = find16(result, marker)
            ok = at >= 0 and [at, n - at - len16(marker)] == want
        elif key == "starts":
            ok = result.startswith(want)
        elif key == "ends":
            ok = result.endswith(want)
        elif key == "equals":
            ok = utf16(result) == utf16(want)
        elif key == "ratio":  # tail/head unit ratio strictly inside (lo, hi)
            at = find16(result, marker)
            head, tail = at, n - at - len16(marker)
            ok = want[0] * head < tail < want[1] * head
        elif key == "no_lone_surrogates":
            try:
                units.decode("utf-16-le")
                ok = True
            except UnicodeDecodeError:
                ok = False
        else:
            raise ValueError(key)
        if not ok:
            failed.append(f"{key}={want!r}")
    return failed


def random_string_items(oracle: Oracle, rng: random.Random, count: int) -> list[Any]:
    """``count`` random recipes with their planned checks (sizes measured on the oracle).

    Lengths run from 0 to about 200k units.  Dense lone surrogates are slow to encode in Python
    (each one leaves the C fast path), so only a few long strings use the ``sur`` and ``mix``
    alphabets; every other string of any length still may.
    """
    profiles = list(PROFILES)
    plain = [p for p in profiles if p not in LONE_PROFILES]
    long_lone = 0
    specs: list[Any] = []
    for i in range(count):
        alphabet = profiles[i % len(profiles)]
        roll = rng.random()
        if i < 6:
            n = 0 if i < 3 else 1
        elif roll < 0.25:
            n = rng.randint(1, 40)
        elif roll < 0.50:
            n = rng.randint(40, 1000)
        elif roll < 0.70:
            n = rng.randint(1000, 12000)
        elif roll < 0.86:
            n = rng.randint(12000, 70000)
        elif roll < 0.93:
            n = rng.randint(70000, 100000 if alphabet in ("emoji", "sur", "wide") else 200000)
        else:
            specs.append(None)  # boundary-targeted, filled below
            continue
        if n > 6000 and alphabet in LONE_PROFILES:
            if long_lone < 6 and n > 12000:
                long_lone += 1
            else:
                n = rng.randint(1000, 6000)
        spec: Any = gen(n, alphabet)
        if n > 1000 and rng.random() < 0.2:
            atoms = [a for a in ALPHABETS[alphabet] if a not in LONE_HIGH + LONE_LOW]
            run = {"r": [rng.choice(atoms), rng.randint(1, 30000)]}
            split = rng.randint(0, n)
            other = rng.choice(profiles if n - split <= 12000 else plain)
            spec = {"c": [gen(split, alphabet), run, gen(n - split, other)]}
        specs.append(spec)

    # Boundary strings: random head and tail, then an "x" run making the payload 65,534 + delta.
    pending = [i for i, s in enumerate(specs) if s is None]
    parts = []
    for _ in pending:
        a, b = rng.choice(profiles), rng.choice(profiles)
        head_n = rng.randint(0, 1500 if a in LONE_PROFILES else 4000)
        tail_n = rng.randint(0, 3000 if b in LONE_PROFILES else 12000)
        parts.append((gen(head_n, a), gen(tail_n, b)))
    sizes = oracle.many(
        [{"op": "payload_bytes", "content": DECODER.string(p)} for pair in parts for p in pair]
    )
    for k, i in enumerate(pending):
        head, tail = parts[k]
        used = sizes[2 * k]["result"] + sizes[2 * k + 1]["result"]
        target = 65534 + rng.randint(-8, 8)
        fill = max(0, target - used)
        specs[i] = {"c": [head, {"r": ["x", fill]}, tail]}

    payloads = oracle.many([{"op": "payload_bytes", "content": DECODER.string(s)} for s in specs])
    items = []
    for i, (spec, size) in enumerate(zip(specs, payloads, strict=True)):
        p = size["result"]
        m = len(MARKERS)
        planned: list[list[Any]] = [["h"]]
        planned.append(["j", FIXED_BUDGETS[i % 15], i % m])
        planned.append(["j", FIXED_BUDGETS[(i * 7 + 3) % 15], (i * 5 + 1) % m])
        kind = rng.random()
        if kind < 0.4:
            budget = p + 2 + rng.randint(-3, 3)
        elif kind < 0.7:
            budget = rng.randint(0, 2 * p + 100)
        else:
            budget = rng.randint(0, 140000)
        planned.append(["j", max(0, budget), rng.randrange(m)])
        marker_index = rng.randrange(m)
        marker_payload = ref_payload(MARKERS[marker_index])
        planned.append(["j", max(0, marker_payload + 2 + rng.randint(-3, 12)), marker_index])
        planned.append(["p", None])
        stop = rng.choice([p - 1, p, p + 1, rng.randint(0, p + 10), rng.randint(0, 70000)])
        planned.append(["p", max(0, stop)])
        items.append((spec, planned))
    return items


# ----------------------------------------------------------------------------- upstream cases


def lcg_samples() -> list[str]:
    """The fixed-seed fuzz of json-string-byte-projection.test.ts (seed 0x5eed1234, 250 samples).

    ``state = (imul(state, 1664525) + 1013904223) >>> 0``; a sample has ``next() % 200`` atoms,
    each ``ATOMS[next() % 10]``.
    """
    atoms = ["a", '"', "\\", "\n", "\x00", "汉", "😀", "\ud800", "\udc00", "\u2028"]
    state = 0x5EED1234

    def nxt() -> int:
        nonlocal state
        state = (state * 1664525 + 1013904223) & 0xFFFFFFFF
        return state

    samples = []
    for _ in range(250):
        length = nxt() % 200
        samples.append("".join(atoms[nxt() % len(atoms)] for _ in range(length)))
    return samples


def upstream_string_items() -> list[tuple[str, Any, list[list[Any]]]]:
    """(name, recipe, planned checks) for the reference's §5.1, §4.5, §5.5 and §7 item 10."""
    t = MARKERS.index(TEST_MARKER)
    h = MARKERS.index(HEADLESS_MARKER)
    bounded = {"max_json_bytes": 65536}
    items: list[tuple[str, Any, list[list[Any]]]] = []
    natives = [
        "",
        "plain ASCII",
        '"\\\n\b\f\r\t',
        "\x00\x01\x1f",
        "汉字",
        "😀",
        "\ud800",
        "\udc00",
        "\u2028\u2029",
        "\x7f\x80\u07ff\u0800",
    ]
    for k, s in enumerate(natives):
        items.append((f"5.1 native accounting parity #{k}", s, [["p", None], ["h"]]))
    for k, s in enumerate(lcg_samples()):
        items.append((f"5.1 fixed-seed LCG fuzz #{k}", s, [["p", None], ["h"]]))
    for total in (65535, 65536, 65537):
        spec = {"r": ["x", total - 2]}
        items.append(
            (f"5.1 boundary x*({total}-2)", spec, [["h", bounded], ["j", 65536, t, bounded]])
        )
    families = [
        ("汉", 100000, {"units": 21872, "head_tail": [4365, 17463], "json_bytes": 65532}),
        ('"\\\n\x00', 30000, {"units": 21873, "json_bytes": 65534}),
        ("\ud800", 100000, {"units": 10957, "json_bytes": 65526}),
        ("\udc00", 100000, {}),
    ]
    for piece, times, numbers in families:
        spec = {"r": [piece, times]}
        marked = {"has_marker": True, "max_json_bytes": 65536}
        items.append(
            (
                f"5.1/5.5 oversized family {piece!r}*{times}",
                spec,
                [["h", {**marked, **numbers}], ["j", 65536, t, marked]],
            )
        )
    ratio = {"c": ["HEAD-", {"r": ["h", 200000]}, "-", {"r": ["t", 200000]}, "-TAIL"]}
    ratio_props = {"starts": "HEAD-", "ends": "-TAIL", "ratio": [3.9, 4.1], "has_marker": True}
    items.append(("5.1 20/80 ratio", ratio, [["h", ratio_props], ["j", 65536, t, ratio_props]]))
    for suffix in ("-tail", "-tail!!"):
        for label, emoji in (("astral", "😀"), ("adjacent code points", "\ud83d\ude00")):
            spec = {"c": ["head-", {"r": [emoji, 100000]}, suffix]}
            props = {"no_lone_surrogates": True, "ends": suffix, "max_json_bytes": 65536}
            items.append(
                (
                    f"5.1/5.5 surrogate safety {suffix} ({label})",
                    spec,
                    [["h", props], ["j", 65536, t, props]],
                )
            )
    items.append(
        (
            "5.5 fixture '😀'*100000+'-tail'",
            {"c": [{"r": ["😀", 100000]}, "-tail"]},
            [["h", {"units": 32789, "json_bytes": 65533, "no_lone_surrogates": True}]],
        )
    )
    items.append(
        (
            "5.1 budget below marker ('abcdef', 5)",
            "abcdef",
            [["j", 5, t, {"equals": "abc", "json_bytes": 5}]],
        )
    )
    items.append(("5.1 idempotence: small string", "small", [["h"], ["j", 65536, t]]))
    items.append(
        (
            "7.10 'a'*499999",
            {"r": ["a", 499999]},
            [
                [
                    "h",
                    {
                        "units": 65532,
                        "marker_at": 13097,
                        "json_bytes": 65536,
                        "head_tail": [13097, 52391],
                    },
                ]
            ],
        )
    )
    items.append(("7.10 'x'*65534 unchanged", {"r": ["x", 65534]}, [["h"]]))
    items.append(
        (
            "7.10 'x'*65535 projected",
            {"r": ["x", 65535]},
            [["h", {"json_bytes": 65536, "head_tail": [13097, 52391]}]],
        )
    )
    abc = [["j", b, h, {"equals": want}] for b, want in enumerate(["", "", "", "a", "ab", "abc"])]
    abc.append(["j", 5, t, {"equals": "abc", "json_bytes": 5}])
    items.append(("7.10 generic 'abcdef' at budgets 0..5", "abcdef", abc))
    return items


def upstream_records(oracle: Oracle) -> list[dict[str, Any]]:
    items = upstream_string_items()
    records = string_checks(oracle, [(spec, planned) for _, spec, planned in items])
    for (name, _, _), record in zip(items, records, strict=True):
        record["name"] = name
        for check in record["checks"]:  # §5.1: upstream's accounting equals native JSON bytes
            if check[0] == "p" and check[1] is None:
                assert check[2] + 2 == record["jb"], name
    # Idempotence: a projected large string projects to itself.
    ratio_spec = items[[n for n, _, _ in items].index("5.1 20/80 ratio")][1]
    projected = oracle.call({"op": "headless", "content": DECODER.string(ratio_spec)})["result"]
    at = projected.index(HEADLESS_MARKER)
    head, tail = projected[:at], projected[at + len(HEADLESS_MARKER) :]
    assert head.startswith("HEAD-") and tail.endswith("-TAIL")
    spec = {
        "c": [
            "HEAD-",
            {"r": ["h", len(head) - 5]},
            HEADLESS_MARKER,
            {"r": ["t", len(tail) - 5]},
            "-TAIL",
        ]
    }
    assert DECODER.string(spec) == projected
    (again,) = string_checks(oracle, [(spec, [["h"]])])
    assert again["checks"][0][1] is False
    again["name"] = "5.1 idempotence: projected large string"
    records.append(again)
    return records


# ----------------------------------------------------------------------------- ACP


def text_block(text: Any) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def s(recipe: Any) -> dict[str, Any]:
    return {"$str": recipe}


def rep(piece: str, times: int) -> dict[str, Any]:
    return {"$str": {"r": [piece, times]}}


def update(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call-1",
        "status": "completed",
    }
    base.update(fields)
    return base


def shell(**overrides: Any) -> dict[str, Any]:
    value: dict[str, Any] = {
        "type": "shell_result",
        "version": 1,
        "directory": "/work/proj",
        "exitCode": 0,
        "signal": None,
        "pid": 4242,
        "outcome": "completed",
        "outputFiles": [],
        "output": "ok\n",
        "text": "ok\n",
        "error": None,
        "notices": [],
        "truncated": False,
    }
    for key, val in overrides.items():
        if val is _DELETE:
            del value[key]
        else:
            value[key] = val
    return value


_DELETE = object()


def acp_named_cases() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(name, template, props) for §4.7 / §5.3 and the shell_result and A2UI rules."""
    cases: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    big = rep("y", 300000)

    def add(name: str, template: dict[str, Any], **props: Any) -> None:
        cases.append((name, template, props))

    for total in (65535, 65536, 65537):
        add(f"5.3 rawOutput boundary {total}", update(rawOutput=rep("r", total - 2)))
        add(f"5.3 content boundary {total}", update(content=[text_block(rep("c", total - 56))]))
    ratio = s({"c": ["HEAD-", {"r": ["h", 200000]}, "-", {"r": ["t", 200000]}, "-TAIL"]})
    add("5.3 20/80 content", update(content=[text_block(ratio)]), content_json_bytes=65536)
    add("5.3 20/80 rawOutput", update(rawOutput=ratio), rawOutput_json_bytes=65536)
    emoji = s({"c": ["head-", {"r": ["😀", 100000]}, "-tail"]})
    add("5.3 surrogate content", update(content=[text_block(emoji)]))
    add("5.3 surrogate rawOutput", update(rawOutput=emoji))
    pair_cps = s({"c": ["head-", {"r": ["\ud83d\ude00", 100000]}, "-tail!!"]})
    add("5.3 surrogate content (adjacent code points)", update(content=[text_block(pair_cps)]))
    two = [
        text_block(s({"c": ["A-head", {"r": ["a", 300000]}, "A-tail"]})),
        text_block(s({"c": ["B-head", {"r": ["b", 300000]}, "B-tail"]})),
    ]
    add(
        "4.7/5.3 two 300k blocks",
        update(content=two),
        block_payloads=[32713, 32712],
        content_json_bytes=65536,
    )
    add(
        "4.7/5.3 small, 200k, 200k",
        update(
            content=[
                text_block("small"),
                text_block(rep("p", 200000)),
                text_block(rep("q", 200000)),
            ]
        ),
        block_payloads=[5, 32683, 32682],
        content_json_bytes=65536,
    )
    add(
        "4.7/5.3 10k, 50k, 200k",
        update(
            content=[
                text_block(rep("k", 10000)),
                text_block(rep("l", 50000)),
                text_block(rep("m", 200000)),
            ]
        ),
        block_payloads=[10000, 27685, 27685],
        content_json_bytes=65536,
    )
    many = [
        text_block(s({"c": [f"B{i:03d}-", {"r": ["z", 40000]}, f"-E{i:03d}"]})) for i in range(600)
    ]
    add("4.7/5.3 600 x 40k", update(content=many), content_json_bytes=65536, all_marked=True)
    empty = text_block("")
    add(
        "5.3 1192 empty blocks collapse",
        update(content=[{"$rep": [empty, 1192]}]),
        content_json_bytes=97,
    )
    add("5.3 1191 empty blocks kept", update(content=[{"$rep": [empty, 1191]}]))
    add(
        "5.3 1000 x 100 collapse",
        update(content=[{"$rep": [text_block(rep("x", 100)), 1000]}]),
        content_json_bytes=97,
    )
    add("acp 0 blocks", update(content=[]))
    add("acp 0 blocks + big rawOutput", update(content=[], rawOutput=big))
    add("acp 1 small block", update(content=[text_block("hello")]))
    add("acp 2 small blocks", update(content=[text_block("a"), text_block("b")]))
    add("acp many small blocks fit", update(content=[{"$rep": [text_block(rep("w", 50)), 500]}]))
    add("acp 200 x 1000 blocks", update(content=[{"$rep": [text_block(rep("v", 1000)), 200]}]))
    add("acp 1191 x 1 blocks", update(content=[{"$rep": [text_block("1"), 1191]}]))
    add(
        "acp 1190 blocks with one big",
        update(content=[{"$rep": [empty, 1189]}, text_block(rep("Q", 100000))]),
    )
    add("acp paired", update(content=[text_block(big)], rawOutput=big), paired=True)
    add("acp paired small", update(content=[text_block("same")], rawOutput="same"))
    add(
        "acp paired at boundary",
        update(content=[text_block(rep("e", 65480))], rawOutput=rep("e", 65480)),
    )
    add(
        "acp paired one over",
        update(content=[text_block(rep("e", 65481))], rawOutput=rep("e", 65481)),
        paired=True,
    )
    add(
        "acp unpaired equal text, 2 blocks",
        update(content=[text_block(big), text_block("x")], rawOutput=big),
    )
    add(
        "acp unpaired different rawOutput",
        update(content=[text_block(big)], rawOutput=rep("o", 100000)),
    )
    mixed = [
        text_block("ok"),
        {"type": "content", "content": {"type": "text", "text": "t"}, "annotations": {"a": 1}},
    ]
    add(
        "5.3 independent: mixed content kept, rawOutput bounded",
        update(content=mixed, rawOutput=big),
    )
    add(
        "5.3 independent: structured rawOutput kept, content bounded",
        update(content=[text_block(big)], rawOutput={"stdout": big, "code": 0}),
    )
    add(
        "5.3 exempt: block-level extra key",
        update(
            content=[
                {
                    "type": "content",
                    "content": {"type": "text", "text": big},
                    "annotations": {"audience": ["user"]},
                }
            ]
        ),
    )
    add(
        "5.3 exempt: inner extra key",
        update(
            content=[
                {"type": "content", "content": {"type": "text", "text": big, "annotations": None}}
            ]
        ),
    )
    add(
        "5.3 exempt: diff",
        update(content=[{"type": "diff", "path": "/a.txt", "oldText": big, "newText": big}]),
    )
    add("5.3 exempt: terminal", update(content=[{"type": "terminal", "terminalId": "t-1"}]))
    add(
        "5.3 exempt: image",
        update(
            content=[
                {
                    "type": "content",
                    "content": {
                        "type": "image",
                        "data": rep("QUJD", 50000),
                        "mimeType": "image/png",
                    },
                }
            ]
        ),
    )
    add(
        "acp exempt: mixed text and diff",
        update(content=[text_block(big), {"type": "diff", "path": "/b", "newText": "n"}]),
    )
    add("acp non-string text", update(content=[text_block(12345)], rawOutput=big))
    add("acp content not a list", update(content={"type": "content"}, rawOutput=big))
    add(
        "acp block type mismatch",
        update(content=[{"type": "text", "content": {"type": "text", "text": big}}]),
    )
    a2ui_metas = [
        {"serverId": "a2ui", "toolName": "present_ui"},
        {"serverId": "dq-A2UI"},
        {"serverId": "my-A2Ui-server"},
        {"toolName": "present_ui"},
        {"toolName": "x__present_choices"},
        {"toolName": "a2ui_action"},
        {"toolName": "mcp__srv__a2ui_action"},
        {"toolName": "present_choices", "serverId": 7},
        {"toolName": "present_ui", "other": True},
    ]
    for meta in a2ui_metas:
        add(f"5.3 exempt A2UI {meta}", update(content=[text_block(big)], rawOutput=big, _meta=meta))
    not_a2ui = [
        {"toolName": "x_present_ui"},
        {"toolName": "xpresent_ui"},
        {"toolName": "present_ui_x"},
        {"toolName": "present_ui\n"},
        {"toolName": "a2ui_action\n"},
        {"toolName": "\npresent_ui"},
        {"toolName": ["present_ui"]},
        {"serverId": 12, "toolName": 3},
        {"serverId": "a-2-ui"},
        {"serverId": "srv", "toolName": "run_shell_command"},
        {},
    ]
    for meta in not_a2ui:
        add(f"acp not A2UI {meta}", update(content=[text_block(big)], _meta=meta))
    add("acp _meta is a list", update(content=[text_block(big)], _meta=["a2ui"]))
    add("acp _meta is a string", update(content=[text_block(big)], _meta="a2ui"))
    add("acp _meta shared", update(content=[text_block(big)], _meta={"k": {"deep": [1, 2]}}))
    for kind in (
        "tool_call",
        "agent_message_chunk",
        "plan",
        "user_message_chunk",
        "TOOL_CALL_UPDATE",
    ):
        add(
            f"5.3 unrelated kind {kind}",
            {
                "sessionUpdate": kind,
                "toolCallId": "c",
                "content": [text_block(big)],
                "rawOutput": big,
            },
        )
    add("acp no sessionUpdate", {"toolCallId": "c", "content": [text_block(big)]})
    add("5.3 small update by reference", update(content=[text_block("done")], rawOutput="done!"))
    add("5.3 in_progress bounded", update(status="in_progress", content=[text_block(big)]))
    add("acp pending status", update(status="pending", rawOutput=big))
    add(
        "5.3 baseline 499999 ASCII paired",
        update(content=[text_block(rep("x", 499999))], rawOutput=rep("x", 499999)),
        frame_max=262144,
    )
    add(
        "5.3 baseline 500001-unit CJK",
        update(content=[text_block(rep("汉", 500001))]),
        frame_max=262144,
    )
    add("acp rawOutput escapes", update(rawOutput=rep('"\\\n\x00\x1f', 40000)))
    add("acp rawOutput lone surrogates", update(rawOutput=rep("\udc00a\ud800", 40000)))
    add("acp rawOutput number", update(rawOutput=12345, content=[text_block("x")]))
    add("acp rawOutput null", update(rawOutput=None, content=[text_block(big)]))
    add("acp rawOutput list", update(rawOutput=[big], content=[text_block("x")]))

    # shell_result rawOutput (0.24.3+)
    huge = rep("o", 300000)
    add("shell valid small", update(rawOutput=shell()))
    add("shell valid small, keys reordered", update(rawOutput=dict(reversed(shell().items()))))
    add("shell valid small, extra key", update(rawOutput={**shell(), "extra": "k"}))
    add(
        "shell valid huge output+text",
        update(rawOutput=shell(output=huge, text=huge)),
        rawOutput_json_bytes=65536,
    )
    add("shell huge output only", update(rawOutput=shell(output=huge)))
    add("shell huge text, small output", update(rawOutput=shell(text=huge)))
    add(
        "shell huge error",
        update(rawOutput=shell(error=rep("E", 200000), outcome="failed", exitCode=1)),
    )
    add("shell 32 notices", update(rawOutput=shell(notices=[rep("n", 5000)] * 32, output=huge)))
    add("shell one huge notice", update(rawOutput=shell(notices=["a", rep("N", 100000)])))
    add("shell 33 notices (invalid)", update(rawOutput=shell(notices=["n"] * 33, output=huge)))
    add("shell notice not a string (invalid)", update(rawOutput=shell(notices=[1], output=huge)))
    add("shell 32 outputFiles", update(rawOutput=shell(outputFiles=["/f"] * 32, output=huge)))
    add(
        "shell 33 outputFiles (invalid)",
        update(rawOutput=shell(outputFiles=["/f"] * 33, output=huge)),
    )
    add(
        "shell directory 8192 units", update(rawOutput=shell(directory=rep("d", 8192), output=huge))
    )
    add(
        "shell directory 8193 units (invalid)",
        update(rawOutput=shell(directory=rep("d", 8193), output=huge)),
    )
    add(
        "shell directory+files 8192 units with astral",
        update(
            rawOutput=shell(directory=rep("😀", 4000), outputFiles=[rep("f", 192)], output=huge)
        ),
    )
    add(
        "shell directory+files 8193 units with astral (invalid)",
        update(
            rawOutput=shell(directory=rep("😀", 4000), outputFiles=[rep("f", 193)], output=huge)
        ),
    )
    add(
        "shell directory of controls, huge output",
        update(rawOutput=shell(directory=rep("\x01", 8000), output=huge, text=huge)),
    )
    for key, val in [
        ("exitCode", None),
        ("exitCode", -1),
        ("exitCode", 2**53 - 1),
        ("exitCode", -(2**53 - 1)),
        ("exitCode", 3.0),
        ("signal", 15),
        ("pid", None),
        ("version", 1.0),
        ("outcome", "failed"),
        ("outcome", "cancelled"),
        ("outcome", "timed_out"),
        ("truncated", True),
        ("error", ""),
    ]:
        add(
            f"shell valid {key}={val!r} huge", update(rawOutput=shell(**{"output": huge, key: val}))
        )
    for key, val in [
        ("exitCode", 2**53),
        ("exitCode", 1.5),
        ("exitCode", "0"),
        ("exitCode", True),
        ("signal", "SIGTERM"),
        ("pid", 1e300),
        ("version", 2),
        ("version", "1"),
        ("version", True),
        ("outcome", "unknown"),
        ("outcome", 1),
        ("truncated", "no"),
        ("truncated", None),
        ("error", 5),
        ("type", "shell_results"),
        ("notices", "n"),
        ("outputFiles", None),
        ("text", None),
        ("output", 0),
        ("directory", None),
    ]:
        add(
            f"shell invalid {key}={val!r} huge",
            update(rawOutput=shell(**{"output": huge, key: val})),
        )
    for key in ("error", "exitCode", "signal", "pid", "notices", "truncated", "version"):
        add(
            f"shell invalid missing {key}",
            update(rawOutput=shell(**{"output": huge, key: _DELETE})),
        )
    add(
        "shell huge with extra keys",
        update(rawOutput={"zzz": 1, **shell(output=huge, text=huge), "extra": big}),
    )
    add(
        "shell huge, escapes and surrogates",
        update(
            rawOutput=shell(
                output=rep('\ud800"\n汉😀\udc00', 15000),
                text=rep("\x00\ud83d\ude00", 20000),
                error=rep("é", 70000),
                notices=[rep("\u2028", 30000), "x", rep("\udc80", 9000)],
            )
        ),
    )
    add("shell with content", update(content=[text_block(big)], rawOutput=shell(output=huge)))
    add("shell paired text not paired", update(content=[text_block("ok\n")], rawOutput=shell()))
    add("shell rawOutput array", update(rawOutput=[shell(output=huge)]))
    return cases


def random_acp_templates(rng: random.Random, count: int) -> list[tuple[str, dict[str, Any]]]:
    profiles = list(PROFILES)

    def text() -> Any:
        roll = rng.random()
        alphabet = rng.choice(profiles)
        cap = 4000 if alphabet in LONE_PROFILES else 90000  # see random_string_items
        if roll < 0.3:
            return s(gen(rng.randint(0, 40), alphabet))
        if roll < 0.55:
            return s(gen(rng.randint(40, min(cap, 5000)), alphabet))
        if roll < 0.85:
            return s(gen(rng.randint(min(cap, 5000), cap), alphabet))
        atoms = [a for a in ALPHABETS[alphabet] if a not in LONE_HIGH + LONE_LOW]
        return s(
            {
                "c": [
                    gen(rng.randint(0, 3000), alphabet),
                    {"r": [rng.choice(atoms), rng.randint(10000, 150000)]},
                    gen(rng.randint(0, 3000), rng.choice(profiles)),
                ]
            }
        )

    out = []
    for i in range(count):
        fields: dict[str, Any] = {}
        n_roll = rng.random()
        if n_roll < 0.1:
            n = 0
        elif n_roll < 0.7:
            n = rng.randint(1, 4)
        elif n_roll < 0.9:
            n = rng.randint(5, 40)
        else:
            n = rng.randint(100, 1300)
        if n > 60:
            blocks = [{"$rep": [text_block(s(gen(rng.randint(0, 60), rng.choice(profiles)))), n]}]
        else:
            blocks = [text_block(text()) for _ in range(n)]
        if rng.random() < 0.85:
            fields["content"] = blocks
        raw_roll = rng.random()
        if raw_roll < 0.25:
            pass
        elif raw_roll < 0.5:
            fields["rawOutput"] = text()
        elif raw_roll < 0.65 and n and n <= 60 and "content" in fields:
            fields["rawOutput"] = blocks[0]["content"]["text"]
            if rng.random() < 0.6:
                fields["content"] = blocks[:1]
        elif raw_roll < 0.85:
            fields["rawOutput"] = shell(
                output=text(),
                text=text(),
                error=text() if rng.random() < 0.4 else None,
                notices=[text() for _ in range(rng.randint(0, 3))],
                outcome=rng.choice(["completed", "failed", "cancelled", "timed_out"]),
                exitCode=rng.choice([0, 1, None, 137]),
            )
        else:
            fields["rawOutput"] = rng.choice([None, 7, {"data": text()}, [text()], True])
        meta_roll = rng.random()
        if meta_roll < 0.1:
            fields["_meta"] = {
                "serverId": rng.choice(["A2UI-x", "srv"]),
                "toolName": rng.choice(["present_ui", "x__a2ui_action", "tool"]),
            }
        elif meta_roll < 0.3:
            fields["_meta"] = {"toolName": "run_shell_command", "usage": {"n": i}}
        status = rng.choice(["completed", "completed", "failed", "in_progress"])
        kind = "tool_call_update" if rng.random() < 0.92 else rng.choice(["tool_call", "plan"])
        template = {"sessionUpdate": kind, "toolCallId": f"call-{i}", "status": status, **fields}
        out.append((f"random acp #{i}", template))
    return out


def acp_records(oracle: Oracle, rng: random.Random) -> list[dict[str, Any]]:
    cases = acp_named_cases()
    cases += [(name, template, {}) for name, template in random_acp_templates(rng, 180)]
    return acp_check_records(oracle, cases)


def acp_check_records(
    oracle: Oracle, cases: list[tuple[str, dict[str, Any], dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Run ``(name, template, props)`` cases on the oracle; return the vector records."""
    records = []
    batch = 20
    for start in range(0, len(cases), batch):
        chunk = cases[start : start + batch]
        updates = [DECODER.value(template) for _, template, _ in chunk]
        responses = oracle.many([{"op": "acp", "update": u} for u in updates])
        again = oracle.many([{"op": "acp", "update": r["result"]} for r in responses])
        for (name, template, props), u, r, r2 in zip(chunk, updates, responses, again, strict=True):
            result = r["result"]
            if not r["changed"]:
                assert digest(result) == digest(u), name
            failed = check_acp_props(u, result, r, props)
            if failed:
                raise AssertionError(f"{name}: upstream disagrees with the reference: {failed}")
            record = {
                "name": name,
                "update": template,
                "changed": r["changed"],
                "out": digest(result) if r["changed"] else None,
                "jb": r["json_bytes"],
                "cjb": r.get("content_json_bytes"),
                "rjb": r.get("rawOutput_json_bytes"),
                "marker": r["has_marker"],
                "idem_changed": r2["changed"],
            }
            if props:
                record["props"] = props
            records.append(record)
    return records


def ref_payload(s: str) -> int:
    """A slow, independent reading of the reference's per-unit byte table (for aiming/props)."""
    units = [int.from_bytes(utf16(s)[i : i + 2], "little") for i in range(0, 2 * len16(s), 2)]
    total, i = 0, 0
    while i < len(units):
        c = units[i]
        nxt = units[i + 1] if i + 1 < len(units) else -1
        if c in (0x22, 0x5C, 8, 9, 10, 12, 13):
            total += 2
        elif c < 0x20:
            total += 6
        elif c < 0x80:
            total += 1
        elif c < 0x800:
            total += 2
        elif 0xD800 <= c <= 0xDBFF and 0xDC00 <= nxt <= 0xDFFF:
            total += 4
            i += 1
        elif 0xD800 <= c <= 0xDFFF:
            total += 6
        else:
            total += 3
        i += 1
    return total


def find16(haystack: str, needle: str) -> int:
    """Code-unit index of ``needle`` in ``haystack`` (UTF-16), or -1."""
    hay, pin = utf16(haystack), utf16(needle)
    at = hay.find(pin)
    while at >= 0 and at % 2:
        at = hay.find(pin, at + 1)
    return at // 2 if at >= 0 else -1


def block_payloads(result: dict[str, Any]) -> list[int]:
    return [ref_payload(b["content"]["text"]) for b in result["content"]]


def check_acp_props(
    update_in: dict[str, Any],
    result: dict[str, Any],
    response: dict[str, Any],
    props: dict[str, Any],
) -> list[str]:
    failed = []
    for key, want in props.items():
        if key == "block_payloads":
            ok = block_payloads(result) == want
        elif key == "content_json_bytes":
            ok = response.get("content_json_bytes") == want
        elif key == "rawOutput_json_bytes":
            ok = response.get("rawOutput_json_bytes") == want
        elif key == "all_marked":
            ok = len(result["content"]) == len(update_in["content"]) and all(
                ACP_MARKER in b["content"]["text"] for b in result["content"]
            )
        elif key == "paired":
            ok = result["rawOutput"] == result["content"][0]["content"]["text"]
        elif key == "frame_max":
            frame = (
                len(
                    b'{"jsonrpc":"2.0","method":"session/update","params":'
                    b'{"sessionId":"s","update":}}'
                )
                + response["json_bytes"]
            )
            ok = frame < want
        else:
            raise ValueError(key)
        if not ok:
            failed.append(f"{key}={want!r}")
    return failed


# ----------------------------------------------------------------------------- encode


def random_json_values(rng: random.Random, count: int, fixed: bool = True) -> list[Any]:
    floats = [
        1e21,
        1e-7,
        0.1,
        -0.0,
        0.0,
        5e-324,
        1.7976931348623157e308,
        100.0,
        math.nan,
        math.inf,
        -math.inf,
        1e20,
        9.999999999999999e20,
        1e-6,
        1.5e-7,
        123.456,
        -2.5,
        0.000001234,
        9007199254740992.0,
        9007199254740994.0,
        1e300,
        2.2250738585072014e-308,
        1.0,
        -1e-7,
        123456789012345680000.0,
        0.30000000000000004,
        1e16,
        1.2e-5,
        4.35,
        -1e21,
        1e22,
        1e-323,
    ]
    ints = [
        0,
        1,
        -1,
        42,
        2**31,
        2**32,
        2**53 - 1,
        2**53,
        2**53 + 1,
        -(2**53),
        -(2**53) - 1,
        2**63 - 1,
        2**63,
        2**64 - 1,
        2**64,
        -(2**63),
        -(2**63) - 1,
        10**21,
        10**22,
        -(10**25),
        123456789012345678901234567890,
        10**308,
        10**309,
        2**1024,
        2**1024 - 2**970,
        2**1024 - 2**970 - 1,
        10**400,
        -(10**400),
        999999999999999999999,
    ]
    keys = [
        "a",
        "b",
        "type",
        "content",
        "",
        "0",
        "1",
        "2",
        "10",
        "01",
        "-1",
        "1.5",
        "1e3",
        "4294967294",
        "4294967295",
        "9007199254740993",
        "__proto__",
        "constructor",
        "00",
        "k\ud800",
        "\udc00",
        "😀",
        "\ud83d\ude00",
        "汉",
        '"q"',
        "\n",
        "\x00",
        "123abc",
        " 1",
        "1 ",
        "\u0661",
    ]
    mix = ALPHABETS["mix"]

    def text() -> str:
        return "".join(rng.choice(mix) for _ in range(rng.choice([0, 1, 2, 5, 20, 60])))

    def number() -> Any:
        roll = rng.random()
        if roll < 0.3:
            return rng.choice(floats)
        if roll < 0.5:
            (x,) = struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))
            return x
        if roll < 0.6:
            return rng.randint(-(10**6), 10**6) / rng.choice([10, 100, 1000, 7, 3])
        if roll < 0.8:
            return rng.choice(ints)
        return rng.randint(-(2**80), 2**80) >> rng.randint(0, 80)

    def value(depth: int) -> Any:
        roll = rng.random()
        if depth > 4 or roll < 0.45:
            leaf = rng.random()
            if leaf < 0.4:
                return text()
            if leaf < 0.8:
                return number()
            return rng.choice([None, True, False])
        if roll < 0.7:
            return [value(depth + 1) for _ in range(rng.randint(0, 5))]
        out = {}
        for _ in range(rng.randint(0, 6)):
            out[rng.choice(keys) if rng.random() < 0.6 else text()] = value(depth + 1)
        return out

    values: list[Any] = []
    if fixed:
        values += [*floats, *ints, "", "\ud800", "\ud83d\ude00", {"1": 1, "0": 0, "a": 2}]
        values.append(
            {"b": 1, "10": 2, "9": 3, "4294967295": 4, "4294967294": 5, "x": [{"2": 0, "1": 1}]}
        )
    while len(values) < count:
        values.append(value(0))
    return values


def encode_records(node: str, rng: random.Random) -> list[dict[str, Any]]:
    values = random_json_values(rng, 700)
    texts = [js_text(v) for v in values]
    outputs = node_stringify(node, texts)
    records = []
    for text, out in zip(texts, outputs, strict=True):
        records.append({"in": text, "out": base64.b64encode(out).decode("ascii")})
    return records


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    args.add_argument("--out", type=Path, default=HERE, help="folder to write (default: here)")
    out = args.parse_args(argv).out
    out.mkdir(parents=True, exist_ok=True)
    paths = oracle_paths()
    if paths is None:
        print("oracle not found (node, oracle.mjs or the package folder)", file=sys.stderr)
        return 2
    node, script, pkg = paths
    oracle = Oracle(node, script, pkg)
    info = oracle.call({"op": "info"})
    source = {"package": info["package"], "version": info["version"], "node": info["node"]}
    header = {"source": source, "alphabets": ALPHABETS, "markers": MARKERS}
    rng = random.Random(0x5EED_2026)

    counts = {}
    records = upstream_records(oracle)
    counts["upstream"] = write_vectors(out / "upstream.jsonl.gz", header, records)
    items = random_string_items(oracle, rng, 2100)
    records = string_checks(oracle, items)
    counts["strings"] = write_vectors(out / "strings.jsonl.gz", header, records)
    records = acp_records(oracle, rng)
    counts["acp"] = write_vectors(out / "acp.jsonl.gz", header, records)
    oracle.close()
    records = encode_records(node, rng)
    counts["encode"] = write_vectors(
        out / "encode.jsonl.gz", {"source": {"node": info["node"]}}, records
    )
    for name, n in counts.items():
        print(f"{name}: {n} records")
    return 0


def iter_checks(records: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], list[Any]]]:
    for record in records:
        for check in record["checks"]:
            yield record, check


if __name__ == "__main__":
    sys.exit(main())
