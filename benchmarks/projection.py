"""Time headwire's projections against the real upstream ones (Node), on the same inputs.

    PYTHONPATH=src python benchmarks/projection.py [--reps 21] [--no-fail]

For every input, and for each of ``project_tool_result_content`` (headless),
``project_acp_tool_call_update`` with ``content`` and an equal ``rawOutput`` (acp-paired) and
with ``content`` alone (acp-content), the script

1. checks that headwire's result equals the oracle's, UTF-16 unit for unit (a benchmark that
   timed a wrong answer would mean nothing; mismatching rows are not timed);
2. times the upstream function inside the Node oracle (``bench`` op) and the headwire function
   here with ``time.perf_counter_ns``: the same warm-up calls, then the same number of timed
   calls, min and median per call;
3. prints headwire's median, Node's median and their ratio.

Targets: ratio <= 0.5 on every row, and, per function, the 100 MB input no slower than twice
the 1 MB input (the cost is bounded by the 64 KiB budget, not by the input).  The exit status
is 1 when a target fails (0 with ``--no-fail``), 2 when a result differs from the oracle and 3
when the oracle is not installed.

The oracle is found as described in ``benchmarks/_oracle.py``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import headwire  # noqa: F401
except ImportError:  # running from a checkout without PYTHONPATH=src
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from _oracle import Oracle, OracleUnavailable, locate, u16_units, u16_value
from headwire.projection import project_acp_tool_call_update, project_tool_result_content
from headwire.wire import encode, encode_str

RATIO_TARGET = 0.5
SCALING_TARGET = 2.0
BUDGET = 65_536
ACP_BLOCK_SKELETON = len(b'[{"type":"content","content":{"type":"text","text":""}}]')  # 56

# ---------------------------------------------------------------- inputs


def _repeat(block: str, n: int) -> str:
    """``n`` code points of ``block`` repeated (built by string repetition, not a loop)."""
    return (block * (n // len(block) + 1))[:n]


_ASCII_LINES = "".join(
    f"{i:05d} INFO worker[{i % 7}] processed batch={i * 37 % 1000:03d} status=ok elapsed=12ms\n"
    for i in range(200)
)
_PLAIN_ASCII = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) not in '"\\')
_CJK = "".join(chr(0x4E00 + i) for i in range(0x51A6))  # CJK Unified Ideographs block
_EMOJI = "".join(chr(0x1F600 + i) for i in range(0x50)) + "".join(
    chr(0x1F300 + i) for i in range(0x100)
)
_ESCAPES = '"\\\n\t\r\b\f\x00\x01\x07\x1b\x1fa"\\\n\x7f\u2028/'


@dataclass
class Input:
    name: str
    text: Callable[[str], str]
    """Builds the text for a function kind (``headless`` or ``acp``)."""


def _just_fits(kind: str) -> str:
    """Printable ASCII whose wire JSON is exactly the 65,536-byte bound of the function."""
    if kind == "headless":
        text = _repeat(_PLAIN_ASCII, BUDGET - 2)
        assert len(encode_str(text)) == BUDGET
    else:  # the content array (one text block) must be exactly the bound
        text = _repeat(_PLAIN_ASCII, BUDGET - ACP_BLOCK_SKELETON)
        assert len(encode([_block(text)])) == BUDGET
    return text


INPUTS: list[Input] = [
    Input("ascii-499999", lambda _: _repeat(_ASCII_LINES, 499_999)),
    Input("ascii-1MB", lambda _: _repeat(_ASCII_LINES, 1_000_000)),
    Input("ascii-100MB", lambda _: _repeat(_ASCII_LINES, 100_000_000)),
    Input("cjk-300000", lambda _: _repeat(_CJK, 300_000)),
    Input("emoji-100000", lambda _: _repeat(_EMOJI, 100_000)),
    Input("escapes-1000000", lambda _: _repeat(_ESCAPES, 1_000_000)),
    Input("fits-64KiB", _just_fits),
]

# ---------------------------------------------------------------- functions


def _block(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


def _update(text: str, raw_output: str | None) -> dict[str, Any]:
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "c1",
        "status": "completed",
        "content": [_block(text)],
    }
    if raw_output is not None:
        update["rawOutput"] = raw_output
    return update


def _distinct_copy(s: str) -> str:
    """An equal string that is a different object (as two JSON-decoded fields would be)."""
    return (s + "\0")[:-1]


@dataclass
class Case:
    fn: str
    arg: Any
    call: Callable[[], Any]


def _cases(text_for: Callable[[str], str], paired_copy: bool) -> list[Case]:
    headless_text = text_for("headless")
    acp_text = text_for("acp")
    raw = _distinct_copy(acp_text) if paired_copy else acp_text
    paired = _update(acp_text, raw)
    content_only = _update(acp_text, None)
    return [
        Case("headless", headless_text, lambda: project_tool_result_content(headless_text)),
        Case("acp-paired", paired, lambda: project_acp_tool_call_update(paired)),
        Case("acp-content", content_only, lambda: project_acp_tool_call_update(content_only)),
    ]


# ---------------------------------------------------------------- checking and timing


def _verify(oracle: Oracle, case: Case) -> str | None:
    """``None`` when headwire's result equals the oracle's unit for unit, else a description."""
    ours = case.call()
    if case.fn == "headless":
        resp = oracle.call({"op": "headless", "content": case.arg, "want_units": True})
        if resp["result_units"] != u16_units(ours):
            return (
                f"result differs: oracle {len(resp['result_units'])} units, "
                f"headwire {len(u16_units(ours))} units"
            )
        if resp["changed"] != (ours is not case.arg):
            return f"changed differs: oracle {resp['changed']}, headwire {ours is not case.arg}"
        return None
    resp = oracle.call({"op": "acp", "update": case.arg, "u16": True})
    if resp["result"] != u16_value(ours):
        return "projected update differs"
    if resp["changed"] != (ours is not case.arg):
        return f"changed differs: oracle {resp['changed']}, headwire {ours is not case.arg}"
    return None


def _time_python(call: Callable[[], Any], reps: int, warmup: int) -> tuple[int, int]:
    for _ in range(warmup):
        call()
    times = []
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(reps):
            t0 = time.perf_counter_ns()
            call()
            times.append(time.perf_counter_ns() - t0)
    finally:
        if gc_was_enabled:
            gc.enable()
    times.sort()
    return times[0], times[len(times) // 2]  # the oracle's median: the upper middle


def _time_node(oracle: Oracle, case: Case, reps: int, warmup: int) -> tuple[int, int]:
    request: dict[str, Any] = {"op": "bench", "reps": reps, "warmup": warmup}
    if case.fn == "headless":
        request["content"] = case.arg
    else:
        request["fn"] = "acp"
        request["update"] = case.arg
    resp = oracle.call(request)
    return int(resp["min_ns"]), int(resp["median_ns"])


@dataclass
class Row:
    input: str
    fn: str
    py_min: int = 0
    py_median: int = 0
    node_min: int = 0
    node_median: int = 0
    mismatch: str | None = None

    @property
    def ratio(self) -> float:
        return self.py_median / self.node_median if self.node_median else float("inf")


def _us(ns: int) -> str:
    return f"{ns / 1000:,.1f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=21, help="timed calls per side (21)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls first (5)")
    parser.add_argument("--no-fail", action="store_true", help="exit 0 even if a target fails")
    parser.add_argument(
        "--inputs",
        help="comma-separated subset of: " + ", ".join(i.name for i in INPUTS),
    )
    parser.add_argument(
        "--paired-copy",
        action="store_true",
        help="acp-paired: rawOutput is an equal but distinct str (default: the same object)",
    )
    args = parser.parse_args(argv)
    inputs = INPUTS
    if args.inputs:
        wanted = args.inputs.split(",")
        unknown = set(wanted) - {i.name for i in INPUTS}
        if unknown:
            parser.error(f"unknown inputs: {', '.join(sorted(unknown))}")
        inputs = [i for i in INPUTS if i.name in wanted]

    try:
        location = locate()
    except OracleUnavailable as exc:
        print(exc, file=sys.stderr)
        return 3
    oracle = Oracle(location)
    rows: list[Row] = []
    try:
        info = oracle.info()
        print(
            f"oracle: {info['package']}@{info['version']} on Node {info['node']}; "
            f"headwire on Python {sys.version.split()[0]}; "
            f"reps={args.reps} warmup={args.warmup}"
            + (" (acp-paired: distinct rawOutput copy)" if args.paired_copy else ""),
            flush=True,
        )
        for spec in inputs:
            for case in _cases(spec.text, args.paired_copy):
                row = Row(spec.name, case.fn)
                rows.append(row)
                row.mismatch = _verify(oracle, case)
                if row.mismatch is not None:
                    print(f"  MISMATCH {spec.name} {case.fn}: {row.mismatch}", flush=True)
                    continue
                row.node_min, row.node_median = _time_node(oracle, case, args.reps, args.warmup)
                row.py_min, row.py_median = _time_python(case.call, args.reps, args.warmup)
                print(
                    f"  {spec.name:<16} {case.fn:<12} headwire {_us(row.py_median):>10} µs"
                    f"   node {_us(row.node_median):>10} µs",
                    file=sys.stderr,
                    flush=True,
                )
            del case, spec
    finally:
        oracle.close()

    failed = False
    mismatched = False
    header = (
        f"{'input':<16} {'function':<12} {'hw median µs':>13} {'hw min µs':>10} "
        f"{'node median µs':>15} {'node min µs':>12} {'ratio':>7}  target<={RATIO_TARGET}"
    )
    print()
    print(header)
    print("-" * len(header))
    for row in rows:
        if row.mismatch is not None:
            mismatched = True
            print(f"{row.input:<16} {row.fn:<12} MISMATCH vs oracle: {row.mismatch}")
            continue
        ok = row.ratio <= RATIO_TARGET
        failed |= not ok
        print(
            f"{row.input:<16} {row.fn:<12} {_us(row.py_median):>13} {_us(row.py_min):>10} "
            f"{_us(row.node_median):>15} {_us(row.node_min):>12} {row.ratio:>7.3f}  "
            f"{'PASS' if ok else 'FAIL'}"
        )

    by_key = {(r.input, r.fn): r for r in rows if r.mismatch is None}
    scaling = []
    for fn in ("headless", "acp-paired", "acp-content"):
        big = by_key.get(("ascii-100MB", fn))
        small = by_key.get(("ascii-1MB", fn))
        if big is None or small is None:
            continue
        scaling.append((fn, big.py_median / small.py_median, big, small))
    if scaling:
        print()
        print(f"100 MB / 1 MB (headwire medians; target <= {SCALING_TARGET}):")
        for fn, ratio, big, small in scaling:
            ok = ratio <= SCALING_TARGET
            failed |= not ok
            print(
                f"  {fn:<12} {_us(big.py_median):>10} µs / {_us(small.py_median):>10} µs = "
                f"{ratio:5.2f}  {'PASS' if ok else 'FAIL'}"
            )
    timed = [r.ratio for r in rows if r.mismatch is None]
    if timed:
        print()
        print(
            f"ratio headwire/node: worst {max(timed):.3f}, "
            f"geometric mean {statistics.geometric_mean(timed):.3f}"
        )
    if mismatched:
        print("RESULT: MISMATCH (headwire differs from the oracle)")
        return 2
    print(f"RESULT: {'FAIL' if failed else 'PASS'}")
    return 1 if failed and not args.no_fail else 0


if __name__ == "__main__":
    sys.exit(main())
