"""A fresh differential check of headwire against the live upstream oracle.

About 300 new random cases per run (random strings for the headless and generic projections and
the payload accounting, random ACP updates, random JSON values for ``encode``), checked exactly
like the committed vectors.  Skipped unless ``node``, ``oracle.mjs`` and the
``@qwen-code/qwen-code`` package are all present: the package folder comes from
``HEADWIRE_ORACLE_PKG_DIR``, else ``QWEN_ORACLE_PKG_DIR``, else
``/tmp/oracle-home/node_modules/@qwen-code/qwen-code``; the script from
``HEADWIRE_ORACLE_SCRIPT``, else ``../shared/oracle/oracle.mjs`` next to the repository.
Set ``HEADWIRE_LIVE_SEED`` to replay a run; the seed is in every failure message.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from typing import Any

import pytest

from headwire.wire import encode
from tests.unit.projection.test_conformance import acp_problems, fmt, report, run_string_check

SEED = int(os.environ.get("HEADWIRE_LIVE_SEED") or random.SystemRandom().randrange(2**32))
PATHS = fmt.oracle_paths()

pytestmark = pytest.mark.skipif(
    PATHS is None, reason="upstream oracle not available (node, oracle.mjs or the package)"
)


@pytest.fixture(scope="module")
def oracle() -> Iterator[Any]:
    assert PATHS is not None
    node, script, pkg = PATHS
    live = fmt.Oracle(node, script, pkg)
    try:
        info = live.call({"op": "info"})
        if info.get("version") != "0.24.4":
            pytest.skip(f"oracle runs @qwen-code/qwen-code {info.get('version')}, not 0.24.4")
        yield live
    finally:
        live.close()


def rng_for(name: str) -> random.Random:
    return random.Random(f"{SEED}:{name}")


def random_string_items(rng: random.Random, count: int) -> list[tuple[Any, list[list[Any]]]]:
    fmt.reseed(rng.randrange(10**12, 10**13))
    profiles = list(fmt.PROFILES)
    items = []
    for _ in range(count):
        alphabet = rng.choice(profiles)
        big = alphabet not in fmt.LONE_PROFILES and rng.random() < 0.15
        n = (
            rng.randint(12000, 150000)
            if big
            else rng.choice([rng.randint(0, 60), rng.randint(0, 9000)])
        )
        spec: Any = fmt.gen(n, alphabet)
        if rng.random() < 0.2:
            spec = {
                "c": [
                    spec,
                    {"r": ["x", rng.randint(0, 70000)]},
                    fmt.gen(rng.randint(0, 2000), alphabet),
                ]
            }
        m = len(fmt.MARKERS)
        budget = rng.choice(
            [rng.choice(fmt.FIXED_BUDGETS), rng.randint(0, 200), rng.randint(0, 70000), 65536]
        )
        planned: list[list[Any]] = [
            ["h"],
            ["j", budget, rng.randrange(m)],
            ["j", rng.randint(0, 3 * n + 10), rng.randrange(m)],
            ["p", None],
            ["p", rng.randint(0, 3 * n + 10)],
        ]
        items.append((spec, planned))
    return items


def test_live_strings(oracle: Any) -> None:
    """170 fresh random strings, five checks each."""
    records = fmt.string_checks(oracle, random_string_items(rng_for("strings"), 170))
    mismatches = []
    for record in records:
        text = fmt.DECODER.string(record["in"])
        for check in record["checks"]:
            problem = run_string_check(text, check, fmt.MARKERS)
            if problem:
                mismatches.append(f"{json.dumps(record['in'])[:80]}: {check[:3]}: {problem}")
    assert not mismatches, f"seed {SEED}: " + report(mismatches, 5 * len(records))


def test_live_acp(oracle: Any) -> None:
    """70 fresh random ACP updates."""
    rng = rng_for("acp")
    fmt.reseed(rng.randrange(10**12, 10**13))
    cases = [(name, template, {}) for name, template in fmt.random_acp_templates(rng, 70)]
    records = fmt.acp_check_records(oracle, cases)
    mismatches = []
    for record in records:
        for problem in acp_problems(record, fmt.DECODER.value(record["update"])):
            mismatches.append(f"{record['name']} {json.dumps(record['update'])[:200]}: {problem}")
    assert not mismatches, f"seed {SEED}: " + report(mismatches, len(records))


def test_live_encode() -> None:
    """60 fresh random JSON values through ``JSON.stringify``."""
    assert PATHS is not None
    values = fmt.random_json_values(rng_for("encode"), 60, fixed=False)
    texts = [fmt.js_text(v) for v in values]
    expected = fmt.node_stringify(PATHS[0], texts)
    mismatches = []
    for text, want in zip(texts, expected, strict=True):
        got = encode(json.loads(text, object_hook=fmt.nonfinite_hook))
        if got != want:
            mismatches.append(
                f"{text[:200]}\n    headwire {got[:200]!r}\n    node     {want[:200]!r}"
            )
    assert not mismatches, f"seed {SEED}: " + report(mismatches, len(texts))
