"""Run one Harbor 0.25 trial of a task with ``HeadwireAgent`` on :mod:`tests.fakes.
harbor_local_env` and print its result as JSON (run by the Harbor Python, a subprocess of the
tests): ``python -m tests.fakes.harbor_trial TASK_DIR TRIALS_DIR [AGENT_TIMEOUT]``."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from harbor.models.trial.config import AgentConfig, EnvironmentConfig, TaskConfig, TrialConfig
from harbor.trial.trial import Trial


async def main(task: Path, trials: Path, timeout: float | None) -> None:
    config = TrialConfig(
        task=TaskConfig(path=task),
        trials_dir=trials,
        agent=AgentConfig(
            import_path="headwire.integrations.harbor:HeadwireAgent",
            model_name="openai/fake-model",
            override_timeout_sec=timeout,
        ),
        environment=EnvironmentConfig(import_path="tests.fakes.harbor_local_env:LocalEnvironment"),
    )
    trial = await Trial.create(config) if hasattr(Trial, "create") else Trial(config)
    result = await trial.run()
    rewards = result.verifier_result.rewards if result.verifier_result else None
    agent = result.agent_result
    print(
        json.dumps(
            {
                "rewards": rewards,
                "exception": str(result.exception_info) if result.exception_info else None,
                "trial_dir": str(trial.paths.trial_dir if hasattr(trial, "paths") else ""),
                "n_input_tokens": agent.n_input_tokens if agent else None,
                "n_output_tokens": agent.n_output_tokens if agent else None,
            }
        )
    )


if __name__ == "__main__":
    timeout = float(sys.argv[3]) if len(sys.argv) > 3 else None
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2]), timeout))
