"""The environment headwire's tools run in: the user's own, minus headwire's secrets.

Qwen Code passes its whole environment to the shell tool and to MCP stdio servers, and so does
headwire, with one exception: the model providers' credentials.  ``OPENAI_API_KEY``,
``ANTHROPIC_API_KEY``, ``GEMINI_API_KEY`` and every variable holding an API key headwire was
given (by ``--openai-api-key`` or the environment) are removed, so a command the model runs
(``env``, ``printenv``, a script that logs its settings) cannot copy the key onto the wire,
into the recording or into an artifact.  An MCP server that
needs such a value gets it by naming it in its configuration's ``env``
(``"env": {"OPENAI_API_KEY": "$OPENAI_API_KEY"}``), which is applied after the scrub.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

SECRET_VARIABLES = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"})
"""Variables never passed to a tool's process."""

MIN_CONTAINED_SECRET = 8
"""Secrets at least this long are also found inside longer values (``KEY=sk-...`` lists)."""

_secret_values: set[str] = set()
_withheld: dict[str, str] = {}


def register_secret(value: str | None) -> None:
    """Remember ``value`` (an API key in use) so that no variable carrying it reaches a tool
    and no tool output carries it (:mod:`headwire.runtime.redact`)."""
    if value and value.strip():
        _secret_values.add(value.strip())


def registered_secrets() -> frozenset[str]:
    """Every secret registered so far."""
    return frozenset(_secret_values)


def withhold_secret_variables() -> dict[str, str]:
    """Move :data:`SECRET_VARIABLES` out of ``os.environ`` (and so out of the C environment
    every child inherits) into a private table, registering each value; return what moved.

    headwire's own configuration still reads them through :func:`credential_environment`.
    """
    moved: dict[str, str] = {}
    for name in SECRET_VARIABLES:
        value = os.environ.pop(name, None)
        if value is not None:
            moved[name] = value
            register_secret(value)
    _withheld.update(moved)
    return moved


def credential_environment() -> dict[str, str]:
    """``os.environ`` plus the variables :func:`withhold_secret_variables` took out: the
    environment headwire's own settings are read from (the model's key, ``$OPENAI_API_KEY``
    in an MCP server's configuration), never a child's."""
    return {**os.environ, **_withheld}


def _carries_secret(value: str) -> bool:
    return any(
        value == s or (len(s) >= MIN_CONTAINED_SECRET and s in value) for s in _secret_values
    )


def tool_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """``base`` (default ``os.environ``) without :data:`SECRET_VARIABLES` and without any
    variable whose value holds a registered secret."""
    source = os.environ if base is None else base
    return {
        name: value
        for name, value in source.items()
        if name not in SECRET_VARIABLES and not _carries_secret(value)
    }
