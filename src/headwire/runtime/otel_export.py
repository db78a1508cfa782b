"""OpenTelemetry export of a run, as Qwen Code names it: one subscriber of the event stream.

Imported only when telemetry is enabled (``cli/build.py`` starts it on a thread).  The spans:

* ``qwen-code.interaction``: one per turn of the main agent; its parent is the caller's span
  when ``TRACEPARENT`` names one (the run joins the caller's trace), else it starts a trace;
* ``qwen-code.llm_request``: one per model call, child of the interaction (a subagent's, of
  its ``agent`` tool span), with the GenAI attributes ``gen_ai.request.model``,
  ``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens``,
  ``gen_ai.usage.cache_read.input_tokens``;
* ``qwen-code.tool``: one per tool call (``gen_ai.tool.name``, ``gen_ai.tool.call.id``); a
  shell command started by it gets ``TRACEPARENT`` naming this span.

Log records ``qwen-code.user_prompt``, ``qwen-code.api_request``, ``qwen-code.api_response``,
``qwen-code.tool_call``; metrics ``qwen-code.session.count``, ``qwen-code.api.request.count``,
``qwen-code.api.request.latency``, ``qwen-code.token.usage``, ``qwen-code.tool.call.count``,
``qwen-code.tool.call.latency``.  Prompt and tool text appear only with ``logPrompts``, each
cut to :data:`~headwire.runtime.telemetry.CONTENT_LIMIT` bytes; otherwise only their sizes.

Export is batched on background threads; :meth:`OtelSubscriber.aclose` flushes for at most
:data:`FLUSH_BUDGET_S` and then lets the process go (what is not sent by then is dropped).
"""

from __future__ import annotations

import threading
import time
from typing import Any, TextIO

from opentelemetry._logs import SeverityNumber
from opentelemetry.context import Context
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import (
    BatchLogRecordProcessor,
    ConsoleLogRecordExporter,
    LogRecordExporter,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter
from opentelemetry.trace import (
    NonRecordingSpan,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TraceFlags,
    set_span_in_context,
)

from headwire import events as ev
from headwire.errors import UsageError
from headwire.runtime.telemetry import (
    CONTENT_LIMIT,
    TelemetryConfig,
    parse_traceparent,
    set_child_traceparent,
)

SERVICE = "qwen-code"
FLUSH_BUDGET_S = 0.2
"""The most the flush at exit adds to a run (``HEADWIRE_TELEMETRY_FLUSH_MS`` changes it: a
collector that must receive everything, such as a test's, can wait longer)."""
_DEFAULT_ENDPOINTS = {"grpc": "http://localhost:4317", "http": "http://localhost:4318"}


def bounded(text: str) -> str:
    """``text`` cut to :data:`CONTENT_LIMIT` UTF-8 bytes (never inside a character)."""
    data = text.encode("utf-8", "replace")
    return text if len(data) <= CONTENT_LIMIT else data[:CONTENT_LIMIT].decode("utf-8", "ignore")


def _exporters(config: TelemetryConfig) -> tuple[SpanExporter, MetricExporter, LogRecordExporter]:
    if config.outfile:
        try:
            out: TextIO = open(config.outfile, "a", encoding="utf-8")  # noqa: SIM115 (kept open)
        except OSError as exc:
            raise UsageError(
                f"telemetry.outfile: cannot open {config.outfile!r}: {exc.strerror or exc}"
            ) from None
        return (
            ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\n"),
            ConsoleMetricExporter(out=out, formatter=lambda m: m.to_json(indent=None) + "\n"),
            ConsoleLogRecordExporter(out=out, formatter=lambda r: r.to_json(indent=None) + "\n"),
        )
    base = (config.otlp_endpoint or _DEFAULT_ENDPOINTS[config.otlp_protocol]).rstrip("/")
    if config.otlp_protocol == "http":
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        return (
            OTLPSpanExporter(endpoint=f"{base}/v1/traces", timeout=5),
            OTLPMetricExporter(endpoint=f"{base}/v1/metrics", timeout=5),
            OTLPLogExporter(endpoint=f"{base}/v1/logs", timeout=5),
        )
    try:
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import (  # type: ignore[import-not-found]
            OTLPLogExporter as GrpcLogs,
        )
        from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (  # type: ignore[import-not-found]
            OTLPMetricExporter as GrpcMetrics,
        )
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found]
            OTLPSpanExporter as GrpcSpans,
        )
    except ImportError:
        raise UsageError(
            "telemetry.otlpProtocol is grpc but opentelemetry-exporter-otlp-proto-grpc is not "
            "installed: install it, or set telemetry.otlpProtocol to http"
        ) from None
    return GrpcSpans(endpoint=base), GrpcMetrics(endpoint=base), GrpcLogs(endpoint=base)


class OtelSubscriber:
    """Follows one session's events and exports them (see the module docstring)."""

    def __init__(
        self, config: TelemetryConfig, *, session_id: str, version: str, caller: str | None
    ) -> None:
        spans, metrics, logs = _exporters(config)
        resource = Resource.create(
            {"service.name": SERVICE, "service.version": version, "session.id": session_id}
        )
        self.config = config
        self.session_id = session_id
        self.tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)
        self.tracer_provider.add_span_processor(BatchSpanProcessor(spans))
        self.meter_provider = MeterProvider(
            [PeriodicExportingMetricReader(metrics, export_interval_millis=60_000)],
            resource=resource,
            shutdown_on_exit=False,
        )
        self.logger_provider = LoggerProvider(resource=resource, shutdown_on_exit=False)
        self.logger_provider.add_log_record_processor(BatchLogRecordProcessor(logs))
        self.tracer = self.tracer_provider.get_tracer(SERVICE, version)
        self.logger = self.logger_provider.get_logger(SERVICE, version)
        meter = self.meter_provider.get_meter(SERVICE, version)
        self.session_count = meter.create_counter(f"{SERVICE}.session.count")
        self.api_count = meter.create_counter(f"{SERVICE}.api.request.count")
        self.api_latency = meter.create_histogram(f"{SERVICE}.api.request.latency", unit="ms")
        self.token_usage = meter.create_counter(f"{SERVICE}.token.usage")
        self.tool_count = meter.create_counter(f"{SERVICE}.tool.call.count")
        self.tool_latency = meter.create_histogram(f"{SERVICE}.tool.call.latency", unit="ms")
        parsed = parse_traceparent(caller)
        self.root: Context | None = None
        if parsed is not None:
            trace_id, span_id, flags = parsed
            remote = SpanContext(
                int(trace_id, 16), int(span_id, 16), is_remote=True, trace_flags=TraceFlags(flags)
            )
            self.root = set_span_in_context(NonRecordingSpan(remote))
        self.fields: dict[str, Any] = {}
        """Where the turn's ``trace_id`` goes (the headless emitter's ``result_extra``)."""
        self.interaction: Span | None = None
        self.models: dict[str | None, tuple[Span, str, float]] = {}
        self.tools: dict[str, tuple[Span, float]] = {}
        self.session_count.add(1)

    # -- helpers ----------------------------------------------------------------------------

    def _parent(self, parent: str | None) -> Context | None:
        if parent is not None and parent in self.tools:
            return set_span_in_context(self.tools[parent][0])
        if self.interaction is not None:
            return set_span_in_context(self.interaction)
        return self.root

    def _log(self, name: str, attributes: dict[str, Any]) -> None:
        attributes = {"event.name": name, "session.id": self.session_id, **attributes}
        self.logger.emit(
            event_name=name,
            body=name,
            attributes=attributes,
            severity_number=SeverityNumber.INFO,
        )

    # -- events -----------------------------------------------------------------------------

    def __call__(self, event: ev.Event) -> None:
        handler = _HANDLERS.get(type(event))
        if handler is not None:
            handler(self, event)

    def _turn_started(self, e: ev.TurnStarted) -> None:
        if e.parent is not None:
            return
        self.interaction = self.tracer.start_span(
            f"{SERVICE}.interaction",
            context=self.root,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": SERVICE,
                "gen_ai.conversation.id": self.session_id,
                "gen_ai.request.model": e.info.model,
            },
        )
        self.fields["trace_id"] = f"{self.interaction.get_span_context().trace_id:032x}"

    def _user_prompt(self, e: ev.UserPrompt) -> None:
        if e.parent is not None:
            return
        attributes: dict[str, Any] = {"prompt_length": len(e.text)}
        if self.config.log_prompts:
            attributes["prompt"] = bounded(e.text)
            if self.interaction is not None:
                self.interaction.set_attribute("gen_ai.input.messages", bounded(e.text))
        self._log(f"{SERVICE}.user_prompt", attributes)

    def _model_started(self, e: ev.ModelCallStarted) -> None:
        span = self.tracer.start_span(
            f"{SERVICE}.llm_request",
            context=self._parent(e.parent),
            kind=SpanKind.CLIENT,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": e.model,
                "gen_ai.conversation.id": self.session_id,
            },
        )
        self.models[e.parent] = (span, e.model, time.monotonic())
        self._log(f"{SERVICE}.api_request", {"model": e.model})

    def _model_finished(self, e: ev.ModelCallFinished) -> None:
        found = self.models.pop(e.parent, None)
        if found is None:
            return
        span, model, started = found
        u = e.usage
        span.set_attributes(
            {
                "gen_ai.response.model": model,
                "gen_ai.usage.input_tokens": u.input_tokens,
                "gen_ai.usage.output_tokens": u.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": u.cached_tokens,
            }
        )
        span.end()
        ms = int((time.monotonic() - started) * 1000)
        self._log(
            f"{SERVICE}.api_response",
            {
                "model": model,
                "status_code": 200,
                "duration_ms": ms,
                "input_token_count": u.input_tokens,
                "output_token_count": u.output_tokens,
                "cached_content_token_count": u.cached_tokens,
                "total_token_count": u.total_tokens or u.input_tokens + u.output_tokens,
            },
        )
        self.api_count.add(1, {"model": model, "status_code": 200})
        self.api_latency.record(ms, {"model": model})
        for kind, count in (
            ("input", u.input_tokens),
            ("output", u.output_tokens),
            ("cache", u.cached_tokens),
        ):
            self.token_usage.add(count, {"model": model, "type": kind})

    def _tool_started(self, e: ev.ToolStarted) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": e.name,
            "gen_ai.tool.call.id": e.call_id,
        }
        if self.config.log_prompts:
            attributes["gen_ai.tool.call.arguments"] = bounded(_json(e.args))
        span = self.tracer.start_span(
            f"{SERVICE}.tool", context=self._parent(e.parent), attributes=attributes
        )
        self.tools[e.call_id] = (span, time.monotonic())
        ctx = span.get_span_context()
        if ctx.is_valid:
            set_child_traceparent(
                e.call_id, f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"
            )

    def _tool_finished(self, e: ev.ToolFinished) -> None:
        r = e.response
        found = self.tools.pop(r.call_id, None)
        set_child_traceparent(r.call_id, None)
        if found is None:
            return
        span, started = found
        ms = int((time.monotonic() - started) * 1000)
        success = not r.failed
        if not success:
            span.set_status(Status(StatusCode.ERROR, r.error_type or "error"))
        span.end()
        attributes: dict[str, Any] = {
            "function_name": r.name,
            "call_id": r.call_id,
            "duration_ms": ms,
            "success": success,
        }
        if r.error_type:
            attributes["error_type"] = r.error_type
        if self.config.log_prompts:
            attributes["function_args"] = bounded(_json(r.args))
        self._log(f"{SERVICE}.tool_call", attributes)
        self.tool_count.add(1, {"function_name": r.name, "success": success})
        self.tool_latency.record(ms, {"function_name": r.name})

    def _tool_abandoned(self, e: ev.ToolAbandoned) -> None:
        found = self.tools.pop(e.call_id, None)
        set_child_traceparent(e.call_id, None)
        if found is not None:
            found[0].set_status(Status(StatusCode.ERROR, "abandoned"))
            found[0].end()

    def _turn_finished(self, e: ev.TurnFinished) -> None:
        if e.parent is not None:
            return
        for span, _, _ in self.models.values():
            span.set_status(Status(StatusCode.ERROR, "unfinished"))
            span.end()
        self.models.clear()
        for call_id, (span, _) in self.tools.items():
            set_child_traceparent(call_id, None)
            span.set_status(Status(StatusCode.ERROR, "unfinished"))
            span.end()
        self.tools.clear()
        if self.interaction is not None:
            if e.error is not None:
                self.interaction.set_status(Status(StatusCode.ERROR, e.subtype))
            self.interaction.end()
            self.interaction = None

    # -- the end ----------------------------------------------------------------------------

    def flush(self, budget_s: float = FLUSH_BUDGET_S) -> None:
        """Send what is pending, waiting at most ``budget_s`` (on a daemon thread, so a slow
        collector never holds the process)."""
        ms = max(1, int(budget_s * 1000))

        def go() -> None:
            self.tracer_provider.force_flush(ms)
            self.logger_provider.force_flush(ms)
            self.meter_provider.force_flush(ms)

        thread = threading.Thread(target=go, name="headwire-otel-flush", daemon=True)
        thread.start()
        thread.join(budget_s)

    async def aclose(self) -> None:
        """The bounded flush, off the event loop."""
        import asyncio
        import os

        raw = os.environ.get("HEADWIRE_TELEMETRY_FLUSH_MS", "")
        budget = int(raw) / 1000 if raw.isdigit() else FLUSH_BUDGET_S
        await asyncio.to_thread(self.flush, budget)


def _json(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, default=str)


_HANDLERS: dict[type, Any] = {
    ev.TurnStarted: OtelSubscriber._turn_started,
    ev.UserPrompt: OtelSubscriber._user_prompt,
    ev.ModelCallStarted: OtelSubscriber._model_started,
    ev.ModelCallFinished: OtelSubscriber._model_finished,
    ev.ToolStarted: OtelSubscriber._tool_started,
    ev.ToolFinished: OtelSubscriber._tool_finished,
    ev.ToolAbandoned: OtelSubscriber._tool_abandoned,
    ev.TurnFinished: OtelSubscriber._turn_finished,
}

__all__ = ["FLUSH_BUDGET_S", "OtelSubscriber", "bounded"]
