"""The wire is unchanged: every e2e scenario's stdout equals its recorded golden capture.

The scenarios and the normalization (ids, timings and paths aside) are in
:mod:`tests.e2e.wire_golden`; the captures in ``tests/data/golden``.  A failure shows the first
message that differs.  After an intended wire change, record again and review the diff.
"""

from __future__ import annotations

import pytest

from tests.e2e.wire_golden import SCENARIOS, golden_path, load, run_scenario


def test_every_scenario_has_a_golden_capture() -> None:
    missing = [name for name in SCENARIOS if not golden_path(name).is_file()]
    assert not missing, f"record them: python -m tests.e2e.wire_golden {' '.join(missing)}"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_wire_equals_golden(name: str) -> None:
    expected = load(name)
    got = run_scenario(name)
    assert got["exit"] == expected["exit"]
    for key in ("stdout", "sidecar", "extra"):
        if key == "extra":
            pairs = list(zip(got.get(key, []), expected.get(key, []), strict=True))
        else:
            pairs = [(got.get(key), expected.get(key))]
        for mine, theirs in pairs:
            if mine is None and theirs is None:
                continue
            assert mine is not None and theirs is not None, key
            for i, (a, b) in enumerate(zip(mine, theirs, strict=False)):
                assert a == b, f"{key} message {i} differs"
            assert len(mine) == len(theirs), f"{key}: {len(mine)} messages, golden {len(theirs)}"
