"""A tool outcome with the registered secrets scrubbed (:func:`headwire.runtime.redact.redact`).

Every outcome passes :func:`redact_outcome` before it reaches the model, a wire, the recording
or an artifact.  It lives with the tools, which own :class:`ToolOutcome`, so that
:mod:`headwire.runtime.redact` stays below them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from headwire.runtime.redact import has_secrets, redact
from headwire.runtime.tools.base import ToolOutcome


def _redact_value(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, bytes):
        return redact(value)
    if isinstance(value, dict):
        return {k: _redact_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_redact_value(v) for v in value)
    return value


def redact_outcome(outcome: ToolOutcome) -> ToolOutcome:
    """``outcome`` with every text (model text, display, error, extras) passed through
    :func:`redact`; the very same object when no secret is registered."""
    if not has_secrets():
        return outcome
    return dataclasses.replace(
        outcome,
        llm_text=redact(outcome.llm_text),
        display=None if outcome.display is None else redact(outcome.display),
        error=None if outcome.error is None else redact(outcome.error),
        extra=_redact_value(outcome.extra),
    )
