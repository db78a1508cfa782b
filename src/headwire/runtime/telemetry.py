"""Telemetry settings, and the W3C trace context a shell command inherits.

Qwen Code's ``telemetry.*`` settings, each overridden by its ``QWEN_TELEMETRY_*`` variable
(:func:`telemetry_config`).  When telemetry is off nothing else happens: OpenTelemetry is
never imported (it is the optional extra ``headwire[telemetry]``), no span, no flush.  When it
is on, :func:`start` builds the exporter subscriber (:mod:`headwire.runtime.otel_export`), which
follows the agent's one event stream like the recorder does.

:func:`child_traceparent` is how a tool's child process joins the trace: the subscriber
registers each running tool call's ``traceparent`` (its span), and ``run_shell_command``
puts it into the child's ``TRACEPARENT`` (nothing when telemetry is off).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from headwire.errors import UsageError
from headwire.records import dataclass

_TRUE = frozenset({"true", "1"})
TRACEPARENT_RE = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")
"""A version-00 W3C ``traceparent``: trace id, parent span id, flags (all-zero ids invalid)."""
CONTENT_LIMIT = 65_536
"""Bytes of prompt or tool text a span or log keeps when ``logPrompts`` is on."""


@dataclass(frozen=True, slots=True)
class TelemetryConfig:
    """The effective telemetry settings (``enabled`` false: telemetry is off)."""

    enabled: bool = False
    target: str | None = None
    otlp_endpoint: str | None = None
    otlp_protocol: str = "grpc"
    log_prompts: bool = False
    outfile: str | None = None


def _flag(value: str | None, fallback: Any) -> bool:
    return bool(fallback) if value is None else value.strip().lower() in _TRUE


def telemetry_config(value: Mapping[str, Any] | None, env: Mapping[str, str]) -> TelemetryConfig:
    """The settings' ``telemetry`` object with the ``QWEN_TELEMETRY_*`` variables on top."""
    value = value or {}

    def text(var: str, key: str) -> str | None:
        found = env.get(var)
        return found if found else value.get(key)

    protocol = (text("QWEN_TELEMETRY_OTLP_PROTOCOL", "otlpProtocol") or "grpc").strip().lower()
    if protocol not in ("grpc", "http"):
        raise UsageError(f"QWEN_TELEMETRY_OTLP_PROTOCOL: expected grpc or http, got {protocol!r}")
    return TelemetryConfig(
        enabled=_flag(env.get("QWEN_TELEMETRY_ENABLED"), value.get("enabled")),
        target=text("QWEN_TELEMETRY_TARGET", "target"),
        otlp_endpoint=text("QWEN_TELEMETRY_OTLP_ENDPOINT", "otlpEndpoint"),
        otlp_protocol=protocol,
        log_prompts=_flag(env.get("QWEN_TELEMETRY_LOG_PROMPTS"), value.get("logPrompts")),
        outfile=text("QWEN_TELEMETRY_OUTFILE", "outfile"),
    )


def parse_traceparent(value: str | None) -> tuple[str, str, int] | None:
    """``(trace_id, span_id, flags)`` of a valid ``traceparent``, else ``None``."""
    match = TRACEPARENT_RE.match((value or "").strip().lower())
    if match is None or set(match[1]) == {"0"} or set(match[2]) == {"0"}:
        return None
    return match[1], match[2], int(match[3], 16)


_children: dict[str, str] = {}


def set_child_traceparent(call_id: str, traceparent: str | None) -> None:
    """Register (or, with ``None``, forget) the ``traceparent`` of tool call ``call_id``."""
    if traceparent is None:
        _children.pop(call_id, None)
    else:
        _children[call_id] = traceparent


def child_traceparent(call_id: str) -> str | None:
    """The ``TRACEPARENT`` a child process of tool call ``call_id`` gets, ``None``: none."""
    return _children.get(call_id) if _children else None


def check_installed(config: TelemetryConfig) -> None:
    """Raise :class:`~headwire.errors.UsageError` (one line: what to install) when the
    exporter ``config`` needs is missing; looks, imports nothing."""
    from importlib.util import find_spec

    def missing(name: str) -> bool:
        try:
            return find_spec(name) is None
        except ModuleNotFoundError:
            return True

    if missing("opentelemetry.sdk"):
        raise UsageError(
            "telemetry is enabled but OpenTelemetry is not installed: "
            "pip install 'headwire[telemetry]', or turn telemetry.enabled off"
        )
    if (
        not config.outfile
        and config.otlp_protocol == "grpc"
        and missing("opentelemetry.exporter.otlp.proto.grpc")
    ):
        raise UsageError(
            "telemetry.otlpProtocol is grpc but opentelemetry-exporter-otlp-proto-grpc is not "
            "installed: install it, or set telemetry.otlpProtocol to http"
        )


__all__ = [
    "CONTENT_LIMIT",
    "TelemetryConfig",
    "check_installed",
    "child_traceparent",
    "parse_traceparent",
    "set_child_traceparent",
    "telemetry_config",
]
