"""The run-contract flags: ``--json-schema`` and the run limits (``--max-session-turns``,
``--max-budget-usd``, ``--max-tool-calls``, ``--max-duration``).

:func:`prepare_contract` runs once at start, before anything else is built: the schema is read
and checked (a bad one is a :class:`~headwire.errors.UsageError`, exit 2, one line), and what
cannot apply is refused.  :func:`contract_config` gives :func:`headwire.cli.build.build_runtime`
the agent's share: the checked schema and the run's one
:class:`~headwire.runtime.agent.limits.RunLimits` (every limit flag, and a
:class:`~headwire.runtime.agent.meter.Meter` priced from the settings, continuing a resumed
session's totals).
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from headwire.errors import UsageError
from headwire.io.stdio import warn
from headwire.runtime.agent.limits import RunLimits
from headwire.runtime.agent.meter import Meter
from headwire.runtime.agent.structured import StructuredOutput
from headwire.runtime.config.pricing import ModelPrice, price_table
from headwire.runtime.models.base import Model, Usage

_SCHEMA_ATTR = "_headwire_output_schema"


def prepare_contract(args: argparse.Namespace, cwd: Path) -> None:
    """Check the contract flags at start; the schema is kept on ``args``."""
    value = getattr(args, "json_schema", None)
    if value is None:
        return
    if getattr(args, "acp", False):
        raise UsageError(
            "--json-schema does not apply to --acp (ACP has no result message to carry it)"
        )
    from headwire.runtime.agent.output_schema import OutputSchemaError, load_output_schema

    try:
        schema, validator = load_output_schema(value, cwd, note=warn)
    except OutputSchemaError as exc:
        raise UsageError(str(exc)) from None
    setattr(args, _SCHEMA_ATTR, StructuredOutput(schema, validator))


def structured_output(args: argparse.Namespace) -> StructuredOutput | None:
    """The checked ``--json-schema`` (loaded now when :func:`prepare_contract` did not run)."""
    if getattr(args, "json_schema", None) is None:
        return None
    found = getattr(args, _SCHEMA_ATTR, None)
    if found is None:
        prepare_contract(args, Path.cwd())
        found = getattr(args, _SCHEMA_ATTR, None)
    return found if isinstance(found, StructuredOutput) else None


def contract_config(
    args: argparse.Namespace,
    model: Model,
    pricing: Mapping[str, ModelPrice],
    previous: Mapping[str, Usage],
) -> dict[str, Any]:
    """:class:`~headwire.runtime.agent.loop.AgentConfig` fields of the contract flags; a budget for
    a model without a price is a UsageError (it could not be kept)."""
    meter = Meter(price_table(pricing), previous)
    budget = getattr(args, "max_budget_usd", None)
    if budget is not None:
        names = [model.name, *(getattr(args, "fallback_model", None) or [])]
        unpriced = [name for name in names if meter.price(name) is None]
        if unpriced:
            raise UsageError(
                f"--max-budget-usd needs the price of {', '.join(unpriced)}; add it to "
                'modelPricing in settings (--settings \'{"modelPricing": {"'
                + unpriced[0]
                + '": {"inputPerMillionTokens": 1, "outputPerMillionTokens": 2}}}\')'
            )
    turns, tool_calls = (
        getattr(args, "max_session_turns", None),
        getattr(args, "max_tool_calls", None),
    )
    limits = RunLimits(
        max_model_calls=-1 if turns is None else turns,
        max_tool_calls=-1 if tool_calls is None else tool_calls,
        max_budget_usd=budget,
        max_duration_s=getattr(args, "max_duration", None),
        meter=meter,
    )
    return {"limits": limits, "structured": structured_output(args)}


__all__ = ["contract_config", "prepare_contract", "structured_output"]
