"""A real Harbor 0.25 trial with ``HeadwireAgent`` (``HEADWIRE_HARBOR_PYTHON``: a Python with
``harbor``; skipped otherwise, and without ``bwrap``): the task "create a file" on the local
environment of :mod:`tests.fakes.harbor_local_env`, the model the fake OpenAI server.

* the trial scores reward 1 and leaves a trajectory Harbor's validator accepts, its tokens in
  Harbor's context;
* with a 12 s agent timeout and a model that writes the file then runs ``sleep 600``, the run
  ends by itself (``--max-duration`` 7 s, exit 53 a normal end) before Harbor's timeout, the
  trial still scores 1, and the partial trajectory is there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.atif_check import harbor_python, harbor_validate, load
from tests.fakes.fake_openai import FakeOpenAI
from tests.paths import ROOT

WRITE = {"tool": "write_file", "args": {"file_path": "/app/hello.txt", "content": "hello\n"}}
TEST_SH = """#!/bin/bash
if grep -q hello /app/hello.txt 2>/dev/null; then r=1; else r=0; fi
echo $r > /logs/verifier/reward.txt
"""


def make_task(root: Path) -> Path:
    task = root / "task"
    (task / "tests").mkdir(parents=True)
    (task / "environment").mkdir()
    (task / "task.toml").write_text(
        'version = "1.0"\n[agent]\ntimeout_sec = 120.0\n[verifier]\ntimeout_sec = 60.0\n'
    )
    (task / "instruction.md").write_text("Create the file /app/hello.txt containing hello.\n")
    (task / "environment" / "Dockerfile").write_text("FROM ubuntu:22.04\nWORKDIR /app\n")
    (task / "tests" / "test.sh").write_text(TEST_SH)
    (task / "tests" / "test.sh").chmod(0o755)
    return task


def run_trial(tmp: Path, replies: list[dict[str, Any]], timeout: float | None) -> dict[str, Any]:
    python = harbor_python()
    if python is None:
        pytest.skip("HEADWIRE_HARBOR_PYTHON (a Python with harbor installed) is not set")
    if shutil.which("bwrap") is None:
        pytest.skip("the local Harbor environment needs bwrap")
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "headwire"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -m headwire "$@"\n')
    wrapper.chmod(0o755)
    with FakeOpenAI(replies) as fake:
        env = {
            **os.environ,
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "OPENAI_BASE_URL": fake.base_url,
            "OPENAI_API_KEY": "k",
        }
        args = [python, "-m", "tests.fakes.harbor_trial", str(make_task(tmp)), str(tmp / "trials")]
        if timeout is not None:
            args.append(str(timeout))
        began = time.monotonic()
        done = subprocess.run(
            args, capture_output=True, text=True, env=env, cwd=ROOT, timeout=300, check=False
        )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["elapsed"] = time.monotonic() - began
    return result


def test_trial_scores_reward_1_with_a_valid_trajectory(tmp_path: Path) -> None:
    result = run_trial(tmp_path, [WRITE, {"text": "done"}], None)
    assert result["exception"] is None and result["rewards"] == {"reward": 1.0}
    trajectory = Path(result["trial_dir"]) / "agent" / "trajectory.json"
    doc = load(trajectory)
    harbor_validate(trajectory)
    assert doc["final_metrics"]["total_prompt_tokens"] == result["n_input_tokens"] == 22
    assert result["n_output_tokens"] == 6


def test_trial_ends_before_the_timeout_with_its_trajectory(tmp_path: Path) -> None:
    sleep = {"tool": "run_shell_command", "args": {"command": "sleep 600"}}
    result = run_trial(tmp_path, [WRITE, sleep, {"text": "never"}], 12)
    assert result["exception"] is None, result["exception"]
    assert result["rewards"] == {"reward": 1.0}
    trajectory = Path(result["trial_dir"]) / "agent" / "trajectory.json"
    doc = load(trajectory)
    harbor_validate(trajectory)
    assert "max-duration" in doc["extra"]["result"]["errors"][0]
    names = [c["function_name"] for s in doc["steps"] for c in s.get("tool_calls", [])]
    assert names == ["write_file", "run_shell_command"]
