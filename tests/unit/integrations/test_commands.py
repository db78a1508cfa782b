"""The Harbor agent's pure half (:mod:`headwire.integrations.commands`), on every Python; and,
with ``HEADWIRE_HARBOR_PYTHON`` (a Python with ``harbor`` 0.25), ``HeadwireAgent`` itself."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.integrations.commands import (
    context_totals,
    install_script,
    max_duration,
    model_flags,
    run_script,
)
from tests.atif_check import harbor_python
from tests.paths import ROOT


def test_model_flags() -> None:
    assert model_flags("openai/gpt-4o") == ["--auth-type", "openai", "-m", "gpt-4o"]
    assert model_flags("anthropic/claude-x") == ["--auth-type", "anthropic", "-m", "claude-x"]
    assert model_flags("gemini/g-2") == ["--auth-type", "gemini", "-m", "g-2"]
    assert model_flags("openrouter/a/b") == ["--auth-type", "openai", "-m", "a/b"]
    assert model_flags("plain") == ["-m", "plain"] and model_flags(None) == []


@given(st.floats(1, 100_000))
def test_max_duration_ends_inside_the_timeout(timeout: float) -> None:
    """The run's limit is below the timeout by a margin (5 to 60 s) whenever that leaves 1 s."""
    limit = max_duration(timeout)
    assert limit is not None and limit >= 1.0
    if timeout > 6:
        assert 5.0 <= timeout - limit <= 60.0
    assert max_duration(None) is None and max_duration(0) is None


def test_run_script_treats_a_run_limit_as_a_normal_end(tmp_path: Path) -> None:
    """The command runs as written: a fake ``headwire`` exiting 53 makes the script exit 0, any
    other code is kept; the arguments arrive unmangled."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "headwire"
    fake.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$HEADWIRE_HOME/args"\nexit "$CODE"\n')
    fake.chmod(0o755)
    home = tmp_path / "home"
    script = run_script(
        "make 'a' file; $(no)",
        model="openai/m",
        max_duration_s=54,
        home=str(home),
        trajectory=str(tmp_path / "t.json"),
        output=str(tmp_path / "out.jsonl"),
    )
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    for code, expected in (("53", 0), ("0", 0), ("1", 1), ("143", 143)):
        done = subprocess.run(["sh", "-c", script], env={**env, "CODE": code}, check=False)
        assert done.returncode == expected
    args = (home / "args").read_text().splitlines()
    assert args[:2] == ["-p", "make 'a' file; $(no)"]
    assert "--trajectory-out" in args and args[args.index("--max-duration") + 1] == "54"
    assert args[args.index("-m") + 1] == "m"


def test_install_script_keeps_a_headwire_on_path(tmp_path: Path) -> None:
    fake = tmp_path / "headwire"
    fake.write_text("#!/bin/sh\necho 9.9\n")
    fake.chmod(0o755)
    env = {"PATH": f"{tmp_path}:/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        ["sh", "-c", install_script()], env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "9.9"
    assert "uv tool install --python 3.12" in install_script()
    assert shlex.quote("headwire==1 ; x") in install_script("headwire==1 ; x")


def test_context_totals_include_subagents() -> None:
    doc = {
        "final_metrics": {
            "total_prompt_tokens": 10,
            "total_completion_tokens": 2,
            "total_cost_usd": 0.5,
            "extra": {"with_subagents": {"total_prompt_tokens": 30, "total_completion_tokens": 5}},
        }
    }
    assert context_totals(doc) == {
        "n_input_tokens": 30,
        "n_output_tokens": 5,
        "n_cache_tokens": None,
        "cost_usd": 0.5,
    }


def test_harbor_agent_in_harbor(tmp_path: Path) -> None:
    """``HeadwireAgent`` under Harbor 0.25: the explicit duration wins, the trial's files give
    the timeout otherwise, and the context is filled from the trajectory."""
    python = harbor_python()
    if python is None:
        pytest.skip("HEADWIRE_HARBOR_PYTHON (a Python with harbor installed) is not set")
    task = tmp_path / "task"
    task.mkdir()
    (task / "task.toml").write_text("[agent]\ntimeout_sec = 120.0\n")
    trial = tmp_path / "trial"
    (trial / "agent").mkdir(parents=True)
    config = {"agent": {}, "task": {"path": str(task)}, "agent_timeout_multiplier": 0.5}
    (trial / "config.json").write_text(json.dumps(config))
    (trial / "agent" / "trajectory.json").write_text(
        json.dumps({"final_metrics": {"total_prompt_tokens": 7, "total_completion_tokens": 3}})
    )
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from harbor.models.agent.context import AgentContext\n"
        "from headwire.integrations.harbor import HeadwireAgent\n"
        "logs = Path(sys.argv[1])\n"
        "a = HeadwireAgent(logs_dir=logs, model_name='openai/m', max_duration_sec=50)\n"
        "b = HeadwireAgent(logs_dir=logs, model_name='openai/m')\n"
        "c = AgentContext()\n"
        "b.populate_context_post_run(c)\n"
        "print(a.run_duration(), b.run_duration(), c.n_input_tokens, c.n_output_tokens)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [python, "-c", code, str(trial / "agent")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["50.0", "54.0", "7", "3"]  # 120 * 0.5 = 60, minus 6
