"""The long fuzz run of the shell permission rules against the real bash.

Generates command lines (``tests/fuzz/shell_lines.py``: quotes, escapes, line continuations,
redirections of every form, substitutions, here-documents, comments, newlines, compound
commands, wrappers) for three claims -- allow rules, the read-only shortcut, a deny rule -- and
runs every line a rule admits with ``bash -c`` in a sandbox that logs every program and builtin
it runs and every file it changes.  Prints, per claim, the lines generated, the lines admitted
(so run), the violations, and the time; exits 1 on any violation (each is printed).

    PYTHONPATH=src:. python benchmarks/fuzz_shell_rules.py --lines 100000 --jobs 2
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for _path in (str(ROOT), str(ROOT / "src")):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from tests.fuzz.shell_lines import (  # noqa: E402
    ALLOW_RULES,
    DENY_RULES,
    Sandbox,
    check_allow,
    check_deny,
    check_read_only,
    gen_allow_line,
    gen_deny_line,
    gen_read_only_line,
)

from headwire.runtime.policy.shell_rules import allows, denies, read_only  # noqa: E402
from headwire.runtime.policy.shell_syntax import analyze  # noqa: E402

CLAIMS = ("allow", "read-only", "deny")


@dataclass
class Tally:
    """One claim's counts."""

    generated: int = 0
    admitted: int = 0
    problems: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.generated += other.generated
        self.admitted += other.admitted
        self.problems += other.problems


def _one(claim: str, rng: random.Random, box: Sandbox) -> tuple[bool, str | None]:
    if claim == "allow":
        line = gen_allow_line(rng)
        admitted = allows(analyze(line), ALLOW_RULES)
        return admitted, check_allow(line, box) if admitted else None
    if claim == "read-only":
        line = gen_read_only_line(rng, box)
        admitted = read_only(analyze(line), box.work, [box.work])
        return admitted, check_read_only(line, box) if admitted else None
    line = gen_deny_line(rng)
    match = denies(analyze(line), DENY_RULES)
    admitted = match.rule is None and match.uncertain is None
    return admitted, check_deny(line, box) if admitted else None


def _worker(args: tuple[int, int, int]) -> dict[str, Tally]:
    start, count, seed = args
    box = Sandbox()
    out = {c: Tally() for c in CLAIMS}
    try:
        for i in range(start, start + count):
            claim = CLAIMS[i % 3]
            admitted, problem = _one(claim, random.Random(seed * 1_000_003 + i), box)
            tally = out[claim]
            tally.generated += 1
            tally.admitted += admitted
            if problem:
                tally.problems.append(problem)
    finally:
        box.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000, help="lines in all")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--chunk", type=int, default=2_000)
    args = parser.parse_args()
    chunks = [
        (start, min(args.chunk, args.lines - start), args.seed)
        for start in range(0, args.lines, args.chunk)
    ]
    started = time.monotonic()
    totals = {c: Tally() for c in CLAIMS}
    with multiprocessing.Pool(args.jobs) as pool:
        for done, part in enumerate(pool.imap_unordered(_worker, chunks), 1):
            for claim in CLAIMS:
                totals[claim].add(part[claim])
            lines = sum(t.generated for t in totals.values())
            bad = sum(len(t.problems) for t in totals.values())
            print(
                f"  {done}/{len(chunks)} chunks, {lines:,} lines, {bad} violations, "
                f"{time.monotonic() - started:.0f} s",
                flush=True,
            )
    elapsed = time.monotonic() - started
    found = 0
    for claim, tally in totals.items():
        print(
            f"{claim:10} generated {tally.generated:>8,}  admitted and run in bash "
            f"{tally.admitted:>8,}  violations {len(tally.problems)}"
        )
        for problem in tally.problems[:20]:
            print(f"  {problem}")
        found += len(tally.problems)
    total = sum(t.generated for t in totals.values())
    print(f"total {total:,} lines in {elapsed:.0f} s, seed {args.seed}: {found} violations")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
