"""headwire as a Harbor installed agent: ``harbor run --agent
headwire.integrations.harbor:HeadwireAgent`` (Harbor 0.25, Python 3.12+, ``pip install
'headwire[harbor]'``; docs/evaluation.md).

Per trial, in the trial's environment:

* **install**: ``headwire`` on ``PATH`` is used as it is; otherwise it is installed with pip
  (Python >= 3.11) or with ``uv`` and a managed Python 3.12 (older images, e.g. Ubuntu 22.04's
  3.10).  The package installed is ``headwire`` or the agent's ``version`` (``headwire==X``) or
  its ``package`` keyword (any pip requirement, e.g. a wheel's URL);
* **run**: ``headwire -p INSTRUCTION --yolo -o stream-json --trajectory-out
  /logs/agent/trajectory.json`` with ``HEADWIRE_HOME=/logs/agent/headwire`` (the recordings
  come back with the logs), the model from Harbor's ``provider/model`` name
  (:func:`~headwire.integrations.commands.model_flags`), and ``--max-duration`` = the agent
  timeout minus a margin, so the run ends, with its trajectory, before Harbor cancels it.  The
  timeout is the ``max_duration_sec`` keyword when given (``--ak max_duration_sec=600``; the
  most robust), else the ``agent_timeout_sec`` keyword, else what the trial's ``config.json``
  and the task's ``task.toml`` say.  Exit 53 (a run limit) is a normal end;
* **context**: input, output and cache tokens (subagents included) and the cost, from the
  trajectory (:func:`~headwire.integrations.commands.context_totals`).

Harbor is imported here only: nothing else in headwire needs it.
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from harbor.agents.installed.base import BaseInstalledAgent, with_prompt_template
from harbor.environments.base import BaseEnvironment
from harbor.models.agent.context import AgentContext

from headwire.integrations.commands import (
    TRAJECTORY_PATH,
    context_totals,
    install_script,
    max_duration,
    run_script,
)

HOME = "/logs/agent/headwire"
"""``HEADWIRE_HOME`` in the trial's environment (under the agent's log folder)."""

PASSED_ENV = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
)
"""Provider variables of the host passed to the run when set."""


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def trial_timeout(logs_dir: Path) -> float | None:
    """The agent timeout the trial applies, read from the trial's ``config.json`` (override,
    maximum, multipliers) and the task's ``task.toml`` (``[agent] timeout_sec``); ``None`` when
    they cannot be read."""
    try:
        config = json.loads((logs_dir.parent / "config.json").read_text())
    except (OSError, ValueError):
        return None
    agent = config.get("agent") or {}
    base = _number(agent.get("override_timeout_sec"))
    if base is None:
        task_path = (config.get("task") or {}).get("path")
        if not task_path:
            return None
        try:
            task = tomllib.loads((Path(task_path) / "task.toml").read_text())
        except (OSError, ValueError):
            return None
        base = _number((task.get("agent") or {}).get("timeout_sec"))
    if base is None:
        return None
    ceiling = _number(agent.get("max_timeout_sec"))
    if ceiling is not None:
        base = min(base, ceiling)
    multiplier = _number(config.get("agent_timeout_multiplier")) or _number(
        config.get("timeout_multiplier")
    )
    return base * (multiplier or 1.0)


class HeadwireAgent(BaseInstalledAgent):
    """headwire in a Harbor trial (see the module docstring)."""

    def __init__(
        self,
        *args: Any,
        max_duration_sec: float | str | None = None,
        agent_timeout_sec: float | str | None = None,
        package: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._max_duration = _number(max_duration_sec)
        self._agent_timeout = _number(agent_timeout_sec)
        version = self.version()
        self._package = package or (f"headwire=={version}" if version else "headwire")

    @staticmethod
    def name() -> str:
        """The agent's name in Harbor's results."""
        return "headwire"

    def get_version_command(self) -> str | None:
        """How Harbor asks the installed version."""
        return 'PATH="$HOME/.local/bin:$PATH" headwire --version'

    async def install(self, environment: BaseEnvironment) -> None:
        """Use ``headwire`` on PATH, or install it (pip, or uv with a managed Python)."""
        await self.exec_as_agent(environment, command=install_script(self._package))

    def run_duration(self) -> float | None:
        """``--max-duration`` for this trial (explicit keyword first, then the trial's files)."""
        if self._max_duration is not None:
            return self._max_duration
        return max_duration(self._agent_timeout or trial_timeout(self.logs_dir))

    @with_prompt_template
    async def run(
        self, instruction: str, environment: BaseEnvironment, context: AgentContext
    ) -> None:
        """Run headwire on the instruction; the context is filled from its trajectory."""
        env = {k: v for k in PASSED_ENV if (v := os.environ.get(k))}
        command = run_script(
            instruction, model=self.model_name, max_duration_s=self.run_duration(), home=HOME
        )
        await self.exec_as_agent(environment, command=command, env=env or None)

    def populate_context_post_run(self, context: AgentContext) -> None:
        """Tokens (subagents included) and cost from the downloaded trajectory."""
        path = self.logs_dir / Path(TRAJECTORY_PATH).name
        try:
            trajectory = json.loads(path.read_text())
        except (OSError, ValueError):
            return
        totals = context_totals(trajectory)
        context.n_input_tokens = totals["n_input_tokens"]
        context.n_output_tokens = totals["n_output_tokens"]
        context.n_cache_tokens = totals["n_cache_tokens"]
        context.cost_usd = totals["cost_usd"]
        context.metadata = {**(context.metadata or {}), "trajectory": str(path)}


__all__ = ["HeadwireAgent", "trial_timeout"]
