"""What the Harbor agent runs, without Harbor: pure functions over strings and JSON.

* :func:`model_flags`: Harbor's ``provider/model`` name -> ``--auth-type`` and ``-m``;
* :func:`max_duration`: the agent timeout minus a margin -> ``--max-duration`` seconds;
* :func:`install_script`: a shell script that finds ``headwire`` on ``PATH`` or installs it
  (pip on Python >= 3.11, else ``uv`` with a managed Python 3.12);
* :func:`run_script`: the ``headwire -p ...`` command line, whose exit 53 (a run limit) counts
  as a normal end;
* :func:`context_totals`: the tokens and cost Harbor's ``AgentContext`` gets, from the ATIF
  trajectory headwire wrote (subagents included).
"""

from __future__ import annotations

import shlex
from typing import Any

PROVIDERS = {
    "openai": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "google": "gemini",
    "vertex_ai": "gemini",
}
"""Harbor (LiteLLM) provider prefixes -> headwire's ``--auth-type``; any other provider is
treated as OpenAI-compatible (``OPENAI_BASE_URL``)."""

TRAJECTORY_PATH = "/logs/agent/trajectory.json"
"""Where the trajectory is written in the trial's environment (Harbor downloads /logs/agent)."""

LIMIT_EXIT = 53
"""headwire's exit code for a run limit (``--max-duration`` included): a normal end here."""


def model_flags(model_name: str | None) -> list[str]:
    """``--auth-type`` and ``-m`` for Harbor's ``provider/model`` (``[]`` when none)."""
    if not model_name:
        return []
    provider, sep, model = model_name.partition("/")
    if not sep:
        return ["-m", model_name]
    return ["--auth-type", PROVIDERS.get(provider.lower(), "openai"), "-m", model]


def max_duration(timeout_s: float | None, margin_s: float | None = None) -> float | None:
    """``--max-duration`` for an agent timeout: the timeout minus a margin (10% of it, at least
    5 s and at most 60 s) that leaves time to write the result and the trajectory."""
    if timeout_s is None or timeout_s <= 0:
        return None
    margin = margin_s if margin_s is not None else min(60.0, max(5.0, timeout_s * 0.1))
    return max(1.0, timeout_s - margin)


def install_script(spec: str = "headwire") -> str:
    """A POSIX shell script that makes ``headwire`` runnable as ``headwire``: kept when already
    on ``PATH``; else installed with pip when ``python3`` is 3.11 or newer, else with ``uv``
    (installed first when missing) and a managed Python 3.12 (``uv tool install``)."""
    q = shlex.quote(spec)
    return (
        'set -e; export PATH="$HOME/.local/bin:$PATH"; '
        "if command -v headwire >/dev/null 2>&1; then headwire --version; exit 0; fi; "
        "if command -v python3 >/dev/null 2>&1 && python3 -c "
        "'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then "
        f"python3 -m pip install --user --quiet {q} 2>/dev/null "
        f"|| python3 -m pip install --user --quiet --break-system-packages {q}; "
        "else "
        "if ! command -v uv >/dev/null 2>&1; then "
        "curl -LsSf https://astral.sh/uv/install.sh | sh; fi; "
        f"uv tool install --python 3.12 {q}; "
        "fi; headwire --version"
    )


def run_script(
    instruction: str,
    *,
    model: str | None,
    max_duration_s: float | None,
    home: str,
    trajectory: str = TRAJECTORY_PATH,
    output: str = "/logs/agent/headwire.jsonl",
    extra: list[str] | None = None,
) -> str:
    """The shell command of one trial: ``headwire -p INSTRUCTION --yolo -o stream-json
    --trajectory-out TRAJECTORY`` with ``HEADWIRE_HOME`` at ``home``, stdout kept in ``output``;
    exit 53 (a run limit) becomes 0."""
    args = ["headwire", "-p", instruction, "--yolo", "-o", "stream-json"]
    args += ["--trajectory-out", trajectory, *model_flags(model)]
    if max_duration_s is not None:
        args += ["--max-duration", f"{max_duration_s:g}"]
    args += extra or []
    command = " ".join(shlex.quote(a) for a in args)
    return (
        'export PATH="$HOME/.local/bin:$PATH"; '
        f"mkdir -p {shlex.quote(home)}; "
        f"HEADWIRE_HOME={shlex.quote(home)} {command} > {shlex.quote(output)}; "
        f'code=$?; if [ "$code" -eq {LIMIT_EXIT} ]; then exit 0; fi; exit "$code"'
    )


def context_totals(trajectory: dict[str, Any]) -> dict[str, Any]:
    """``n_input_tokens``, ``n_output_tokens``, ``n_cache_tokens`` (main agent and subagents)
    and ``cost_usd`` from a headwire ATIF trajectory (``None`` where it does not say)."""
    final = trajectory.get("final_metrics") or {}
    both = (final.get("extra") or {}).get("with_subagents") or {}

    def pick(key: str) -> int | None:
        value = both.get(key, final.get(key))
        return int(value) if isinstance(value, int) else None

    cost = final.get("total_cost_usd")
    return {
        "n_input_tokens": pick("total_prompt_tokens"),
        "n_output_tokens": pick("total_completion_tokens"),
        "n_cache_tokens": pick("total_cached_tokens"),
        "cost_usd": float(cost) if isinstance(cost, int | float) else None,
    }


__all__ = [
    "LIMIT_EXIT",
    "PROVIDERS",
    "TRAJECTORY_PATH",
    "context_totals",
    "install_script",
    "max_duration",
    "model_flags",
    "run_script",
]
