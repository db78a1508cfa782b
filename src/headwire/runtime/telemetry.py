"""Telemetry settings, and the W3C trace context a shell command inherits.

Qwen Code's ``telemetry.*`` settings, each overridden by its ``QWEN_TELEMETRY_*`` variable
(:func:`telemetry_config`).  When telemetry is off nothing else happens: OpenTelemetry is
never imported (it is the optional extra ``headwire[telemetry]``), no span, no flush.  When it
is on, :func:`start` builds the exporter subscriber (:mod:`headwire.runtime.otel_export`), which
follows the agent's one event stream like the recorder does.

:func:`child_traceparent` is how a tool's child process joins the trace: with
``outboundCorrelation.propagateTraceContext`` on, the subscriber registers each running tool
call's ``traceparent`` (its span), and ``run_shell_command`` puts it into the child's
``TRACEPARENT`` (nothing when telemetry or propagation is off).  :func:`hook_tracer` gives the
hook runner a ``qwen-code.hook`` span per hook run, and with propagation its ``TRACEPARENT``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any, Protocol

from headwire.errors import UsageError
from headwire.records import dataclass

_TRUE = frozenset({"true", "1"})
TRACEPARENT_RE = re.compile(r"^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$")
"""A version-00 W3C ``traceparent``: trace id, parent span id, flags (all-zero ids invalid)."""
CONTENT_LIMIT = 65_536
"""Bytes of prompt or tool text a log record keeps when ``logPrompts`` is on."""
SENSITIVE_DEFAULT = 1_048_576
"""``telemetry.sensitiveSpanAttributeMaxLength``'s default (characters per span attribute)."""
SENSITIVE_LIMIT = 104_857_600
"""The largest ``telemetry.sensitiveSpanAttributeMaxLength`` (Qwen Code's, 100 MiB)."""
RESERVED_RESOURCE_KEYS = ("service.version", "session.id")
"""Resource attributes headwire sets itself: ``resourceAttributes`` cannot replace them."""
TARGETS = ("local", "gcp")
PROTOCOLS = ("grpc", "http")


@dataclass(frozen=True, slots=True)
class TelemetryConfig:
    """The effective telemetry settings (``enabled`` false: telemetry is off)."""

    enabled: bool = False
    target: str | None = None
    otlp_endpoint: str | None = None
    otlp_protocol: str = "grpc"
    log_prompts: bool = False
    outfile: str | None = None
    traces_endpoint: str | None = None
    logs_endpoint: str | None = None
    metrics_endpoint: str | None = None
    """Per-signal endpoints: used as they are (no ``/v1/...`` added), over the base one."""
    user_id: str | None = None
    """``gen_ai.user.id`` on the interaction, model, tool and hook spans."""
    include_sensitive: bool = False
    """Prompt, tool arguments and results, model output as span attributes."""
    sensitive_max_length: int = SENSITIVE_DEFAULT
    resource_attributes: tuple[tuple[str, str], ...] = ()
    metrics_session_id: bool = False
    """``session.id`` on every metric data point (``telemetry.metrics.includeSessionId``)."""
    propagate: bool = False
    """``TRACEPARENT`` in shell-tool and hook children
    (``outboundCorrelation.propagateTraceContext``)."""
    warnings: tuple[str, ...] = ()
    """Resource attributes dropped, one line each (printed as notes at startup)."""


def _flag(value: str | None, fallback: Any) -> bool:
    return bool(fallback) if value is None else value.strip().lower() in _TRUE


def js_prefix(text: str, limit: int) -> str:
    """The longest prefix of ``text`` whose JavaScript length (UTF-16 code units) is at most
    ``limit``, never ending inside a surrogate pair: ``sensitiveSpanAttributeMaxLength``
    counts as Qwen Code counts.  Reads at most ``limit`` characters of ``text``."""
    if 2 * len(text) <= limit:  # no character is more than two units
        return text
    head = text[:limit]
    units = head.encode("utf-16-le", "surrogatepass")
    if len(units) <= 2 * limit:
        return head
    cut = units[: 2 * limit].decode("utf-16-le", "surrogatepass")
    if "\ud800" <= cut[-1] <= "\udbff":
        cut = cut[:-1]  # the high half of a pair the limit cuts through
    return cut


def key_values(text: str | None) -> tuple[dict[str, str], list[str]]:
    """The pairs of an OpenTelemetry ``k=v,k=v`` variable (``OTEL_RESOURCE_ATTRIBUTES``,
    ``OTEL_EXPORTER_OTLP_HEADERS``), percent-decoded, and the items that are not ``k=v``."""
    from urllib.parse import unquote

    pairs: dict[str, str] = {}
    bad: list[str] = []
    for item in (text or "").split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            pairs[unquote(key.strip())] = unquote(value.strip())
        elif item.strip():
            bad.append(item.strip())
    return pairs, bad


def _resource_attributes(
    env_text: str | None, settings: Any, service: str | None
) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """``OTEL_RESOURCE_ATTRIBUTES`` (``k=v,k=v``, percent-encoded) under ``resourceAttributes``
    (settings win), ``OTEL_SERVICE_NAME`` over both; reserved keys dropped with a warning."""
    merged, bad = key_values(env_text)
    warnings = [f"OTEL_RESOURCE_ATTRIBUTES: {item!r} is not key=value; ignored" for item in bad]
    if isinstance(settings, Mapping):
        for key, value in settings.items():
            if not str(key).strip() or not isinstance(value, str):
                warnings.append(
                    f"telemetry.resourceAttributes: {key!r} needs a key and a string; ignored"
                )
                continue
            merged[str(key).strip()] = value
    for key in RESERVED_RESOURCE_KEYS:
        if merged.pop(key, None) is not None:
            warnings.append(f"resource attribute {key!r} is set by headwire; ignored")
    if service:
        merged["service.name"] = service
    return tuple(merged.items()), tuple(warnings)


def telemetry_config(
    value: Mapping[str, Any] | None,
    env: Mapping[str, str],
    flags: Mapping[str, Any] | None = None,
    *,
    propagate: bool = False,
) -> TelemetryConfig:
    """The settings' ``telemetry`` object, under the ``QWEN_TELEMETRY_*`` (then ``OTEL_*``)
    variables, under the ``--telemetry*`` flags (``flags``: their values, ``None`` when not
    given); ``propagate`` is ``outboundCorrelation.propagateTraceContext``.  Raises
    :class:`~headwire.errors.UsageError` for a value Qwen Code refuses."""
    value = value or {}
    flags = flags or {}

    def text(flag: str | None, names: tuple[str, ...], key: str) -> str | None:
        if flag is not None and flags.get(flag) is not None:
            return str(flags[flag])
        for name in names:
            if env.get(name):
                return env[name]
        found = value.get(key)
        return found if isinstance(found, str) and found else None

    def boolean(flag: str | None, var: str, key: str) -> bool:
        if flag is not None and flags.get(flag) is not None:
            return bool(flags[flag])
        return _flag(env.get(var), value.get(key))

    protocol = (
        (
            text("telemetry_otlp_protocol", ("QWEN_TELEMETRY_OTLP_PROTOCOL",), "otlpProtocol")
            or "grpc"
        )
        .strip()
        .lower()
    )
    if protocol not in PROTOCOLS:
        raise UsageError(f"telemetry OTLP protocol: expected grpc or http, got {protocol!r}")
    target = text("telemetry_target", ("QWEN_TELEMETRY_TARGET",), "target")
    if target is not None and target not in TARGETS:
        raise UsageError(f"telemetry target: expected local or gcp, got {target!r}")
    raw_max = env.get("QWEN_TELEMETRY_SENSITIVE_SPAN_ATTRIBUTE_MAX_LENGTH")
    max_length: Any = value.get("sensitiveSpanAttributeMaxLength", SENSITIVE_DEFAULT)
    if raw_max is not None:
        max_length = int(raw_max.strip()) if raw_max.strip().isdigit() else raw_max
    if (
        isinstance(max_length, bool)
        or not isinstance(max_length, int)
        or not 1 <= max_length <= SENSITIVE_LIMIT
    ):
        raise UsageError(
            "telemetry.sensitiveSpanAttributeMaxLength: expected an integer from 1 to "
            f"{SENSITIVE_LIMIT}, got {max_length!r}"
        )
    user = env.get("QWEN_TELEMETRY_USER_ID", "").strip() or str(value.get("userId") or "").strip()
    metrics = value.get("metrics")
    attributes, warnings = _resource_attributes(
        env.get("OTEL_RESOURCE_ATTRIBUTES"),
        value.get("resourceAttributes"),
        env.get("OTEL_SERVICE_NAME", "").strip(),
    )
    return TelemetryConfig(
        enabled=boolean("telemetry", "QWEN_TELEMETRY_ENABLED", "enabled"),
        target=target,
        otlp_endpoint=text(
            "telemetry_otlp_endpoint",
            ("QWEN_TELEMETRY_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"),
            "otlpEndpoint",
        ),
        otlp_protocol=protocol,
        log_prompts=boolean("telemetry_log_prompts", "QWEN_TELEMETRY_LOG_PROMPTS", "logPrompts"),
        outfile=text("telemetry_outfile", ("QWEN_TELEMETRY_OUTFILE",), "outfile"),
        traces_endpoint=text(
            None,
            ("QWEN_TELEMETRY_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            "otlpTracesEndpoint",
        ),
        logs_endpoint=text(
            None,
            ("QWEN_TELEMETRY_OTLP_LOGS_ENDPOINT", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"),
            "otlpLogsEndpoint",
        ),
        metrics_endpoint=text(
            None,
            ("QWEN_TELEMETRY_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
            "otlpMetricsEndpoint",
        ),
        user_id=user or None,
        include_sensitive=_flag(
            env.get("QWEN_TELEMETRY_INCLUDE_SENSITIVE_SPAN_ATTRIBUTES"),
            value.get("includeSensitiveSpanAttributes"),
        ),
        sensitive_max_length=max_length,
        resource_attributes=attributes,
        metrics_session_id=_flag(
            env.get("QWEN_TELEMETRY_METRICS_INCLUDE_SESSION_ID"),
            metrics.get("includeSessionId") if isinstance(metrics, Mapping) else None,
        ),
        propagate=propagate,
        warnings=warnings,
    )


def parse_traceparent(value: str | None) -> tuple[str, str, int] | None:
    """``(trace_id, span_id, flags)`` of a valid ``traceparent``, else ``None``."""
    match = TRACEPARENT_RE.match((value or "").strip().lower())
    if match is None or set(match[1]) == {"0"} or set(match[2]) == {"0"}:
        return None
    return match[1], match[2], int(match[3], 16)


_children: dict[str, str] = {}

_request: ContextVar[str | None] = ContextVar("headwire_request_traceparent", default=None)
"""The ``traceparent`` of the model call under way in this task (an agent's, or a subagent's
in its own task): set by the exporter when the call's span starts, read by the HTTP base."""


def set_request_traceparent(traceparent: str | None) -> None:
    """Name (``None``: forget) the span of the model call this task is making."""
    _request.set(traceparent)


def request_traceparent() -> str | None:
    """The ``traceparent`` header of this task's model request, ``None``: none (telemetry or
    propagation off)."""
    return _request.get()


def set_child_traceparent(call_id: str, traceparent: str | None) -> None:
    """Register (or, with ``None``, forget) the ``traceparent`` of tool call ``call_id``."""
    if traceparent is None:
        _children.pop(call_id, None)
    else:
        _children[call_id] = traceparent


def child_traceparent(call_id: str) -> str | None:
    """The ``TRACEPARENT`` a child process of tool call ``call_id`` gets, ``None``: none."""
    return _children.get(call_id) if _children else None


class HookTracer(Protocol):
    """What the exporter offers the hook runner: a ``qwen-code.hook`` span per hook run."""

    def start_hook(
        self, event: str, tool_name: str | None, tool_use_id: str | None, parent: str | None
    ) -> tuple[Any, str | None]:
        """The span of a hook about to run, and the ``TRACEPARENT`` its process gets
        (``None`` unless ``outboundCorrelation.propagateTraceContext`` is on)."""
        ...

    def end_hook(self, span: Any, outcome: str, error: str | None) -> None:
        """End the span of a hook run (``outcome`` as :class:`~headwire.events.HookRan` says)."""
        ...


_hooks: list[HookTracer] = []


def set_hook_tracer(tracer: HookTracer | None) -> None:
    """Register (``None``: forget) the exporter that traces hook runs."""
    _hooks[:] = [] if tracer is None else [tracer]


def hook_tracer() -> HookTracer | None:
    """The exporter tracing hook runs, ``None`` when telemetry is off."""
    return _hooks[0] if _hooks else None


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
        and config.otlp_protocol == "http"
        and missing("opentelemetry.exporter.otlp.proto.common")
    ):
        raise UsageError(
            "telemetry.otlpProtocol is http but opentelemetry-exporter-otlp-proto-common is not "
            "installed: pip install 'headwire[telemetry]'"
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


def open_outfile(path: str) -> int:
    """A descriptor of ``telemetry.outfile`` opened for appending, at startup, without ever
    blocking: a FIFO nobody reads, a folder, a path that cannot be written or a socket raise
    :class:`~headwire.errors.UsageError` with one line naming the cause."""
    import errno
    import fcntl
    import os
    import stat

    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        why = {
            errno.ENXIO: "a FIFO with no reader",
            errno.EISDIR: "a directory",
        }.get(exc.errno or 0, exc.strerror or str(exc))
        raise UsageError(f"telemetry.outfile: cannot write {path!r}: {why}") from None
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)):
        os.close(fd)
        raise UsageError(f"telemetry.outfile: cannot write {path!r}: not a file")
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    return fd


__all__ = [
    "CONTENT_LIMIT",
    "PROTOCOLS",
    "SENSITIVE_DEFAULT",
    "TARGETS",
    "HookTracer",
    "TelemetryConfig",
    "check_installed",
    "child_traceparent",
    "hook_tracer",
    "js_prefix",
    "key_values",
    "open_outfile",
    "parse_traceparent",
    "request_traceparent",
    "set_child_traceparent",
    "set_hook_tracer",
    "set_request_traceparent",
    "telemetry_config",
]
