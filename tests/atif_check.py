"""ATIF checks for tests: a structural check that always runs, and Harbor's own validator.

:func:`check_structure` checks what Harbor 0.25's models require (the keys each object may
have, sequential ``step_id``, agent-only fields, ``source_call_id`` naming a call of its step,
embedded subagents with unique ``trajectory_id`` and resolvable refs).  :func:`harbor_validate`
runs ``harbor.utils.trajectory_validator`` in the Python named by ``HEADWIRE_HARBOR_PYTHON``
(a 3.12+ interpreter with ``harbor`` installed); tests skip it when that is unset.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT_KEYS = {
    "schema_version",
    "session_id",
    "trajectory_id",
    "agent",
    "steps",
    "notes",
    "final_metrics",
    "continued_trajectory_ref",
    "extra",
    "subagent_trajectories",
}
STEP_KEYS = {
    "step_id",
    "timestamp",
    "source",
    "model_name",
    "reasoning_effort",
    "message",
    "reasoning_content",
    "tool_calls",
    "observation",
    "metrics",
    "is_copied_context",
    "llm_call_count",
    "extra",
}
AGENT_ONLY = {"model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"}
METRIC_KEYS = {"prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "extra"}
FINAL_KEYS = {
    "total_prompt_tokens",
    "total_completion_tokens",
    "total_cached_tokens",
    "total_cost_usd",
    "total_steps",
    "extra",
}


def check_structure(doc: dict[str, Any], embedded: bool = False) -> None:
    """Raise AssertionError where ``doc`` breaks a rule of Harbor's ATIF v1.8 models."""
    assert set(doc) <= ROOT_KEYS, set(doc) - ROOT_KEYS
    assert doc["schema_version"] == "ATIF-v1.8"
    assert {"name", "version"} <= set(doc["agent"])
    if embedded:
        assert isinstance(doc.get("trajectory_id"), str)
    steps = doc["steps"]
    assert steps, "at least one step"
    for i, step in enumerate(steps, 1):
        assert set(step) <= STEP_KEYS, set(step) - STEP_KEYS
        assert step["step_id"] == i
        assert step["source"] in ("system", "user", "agent")
        assert isinstance(step["message"], str)
        if step["source"] != "agent":
            assert not set(step) & AGENT_ONLY, step
        assert set(step.get("metrics", {})) <= METRIC_KEYS
        ids = {c["tool_call_id"] for c in step.get("tool_calls", [])}
        for call in step.get("tool_calls", []):
            assert set(call) <= {"tool_call_id", "function_name", "arguments", "extra"}
            assert isinstance(call["arguments"], dict)
        for result in step.get("observation", {}).get("results", []):
            assert set(result) <= {"source_call_id", "content", "subagent_trajectory_ref", "extra"}
            if "source_call_id" in result:
                assert result["source_call_id"] in ids
            for ref in result.get("subagent_trajectory_ref", []):
                assert ref.get("trajectory_id") or ref.get("trajectory_path")
    assert set(doc.get("final_metrics", {})) <= FINAL_KEYS
    subs = doc.get("subagent_trajectories", [])
    assert len({s["trajectory_id"] for s in subs}) == len(subs)
    for sub in subs:
        check_structure(sub, embedded=True)


def harbor_python() -> str | None:
    """The interpreter with ``harbor`` installed, from ``HEADWIRE_HARBOR_PYTHON``."""
    python = os.environ.get("HEADWIRE_HARBOR_PYTHON")
    return python if python and Path(python).exists() else None


def harbor_validate(path: Path) -> None:
    """Validate ``path`` with Harbor's ``TrajectoryValidator``; skip without Harbor."""
    python = harbor_python()
    if python is None:
        pytest.skip("HEADWIRE_HARBOR_PYTHON (a Python with harbor installed) is not set")
    code = (
        "import sys\n"
        "from harbor.utils.trajectory_validator import TrajectoryValidator\n"
        "v = TrajectoryValidator()\n"
        "ok = v.validate(sys.argv[1])\n"
        "print('\\n'.join(v.errors))\n"
        "sys.exit(0 if ok else 1)\n"
    )
    done = subprocess.run(
        [python, "-c", code, str(path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr


def load(path: Path) -> dict[str, Any]:
    """A trajectory file, checked structurally."""
    doc: dict[str, Any] = json.loads(path.read_text())
    check_structure(doc)
    return doc
