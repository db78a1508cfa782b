"""OpenTelemetry export of a run, as Qwen Code names it: one subscriber of the event stream.

Imported only when telemetry is enabled (``cli/build.py`` starts it on a thread).  The spans:

* ``qwen-code.interaction``: one per turn of the main agent; its parent is the caller's span
  when ``TRACEPARENT`` names one (the run joins the caller's trace), else it starts a trace;
* ``qwen-code.llm_request``: one per model call, child of the interaction (a subagent's, of
  its ``agent`` tool span), with the GenAI attributes ``gen_ai.request.model``,
  ``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens``,
  ``gen_ai.usage.cache_read.input_tokens``;
* ``qwen-code.tool``: one per tool call (``gen_ai.tool.name``, ``gen_ai.tool.call.id``); with
  ``outboundCorrelation.propagateTraceContext`` a shell command started by it gets
  ``TRACEPARENT`` naming this span (and a model call's HTTP request a ``traceparent`` header
  naming its ``qwen-code.llm_request`` span);
* ``qwen-code.hook``: one per hook run (``hook_event``, ``tool.name``, ``tool.use_id``,
  ``duration_ms``, ``success``), under the tool span it guards, else the interaction (a
  ``PreToolUse`` hook runs before its tool's span starts); a command hook gets its
  ``TRACEPARENT`` under the same setting.

``telemetry.userId`` adds ``gen_ai.user.id`` to these spans; ``includeSensitiveSpanAttributes``
adds the prompt, tool arguments and results and the model's message, each cut to
``sensitiveSpanAttributeMaxLength`` characters.

Log records ``qwen-code.user_prompt``, ``qwen-code.api_request``, ``qwen-code.api_response``,
``qwen-code.tool_call``; metrics ``qwen-code.session.count``, ``qwen-code.api.request.count``,
``qwen-code.api.request.latency``, ``qwen-code.token.usage``, ``qwen-code.tool.call.count``,
``qwen-code.tool.call.latency`` (with ``session.id`` on each point only under
``telemetry.metrics.includeSessionId``).  Prompt and tool text appear in logs only with
``logPrompts``, each cut to :data:`~headwire.runtime.telemetry.CONTENT_LIMIT` bytes; otherwise
only their sizes.

OTLP/HTTP is sent by the small exporters below: the SDK's protobuf encoders
(``opentelemetry-exporter-otlp-proto-common``) and a :mod:`http.client` POST to
``<endpoint>/v1/traces``, ``/v1/logs``, ``/v1/metrics`` (or the per-signal endpoints).  Export is
batched on background threads; :meth:`OtelSubscriber.aclose` flushes for at most
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
    LogRecordExportResult,
)
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    ConsoleMetricExporter,
    MetricExporter,
    MetricExportResult,
    PeriodicExportingMetricReader,
)
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    ConsoleSpanExporter,
    SpanExporter,
    SpanExportResult,
)
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
from headwire.runtime.store.storage import encode_text
from headwire.runtime.telemetry import (
    CONTENT_LIMIT,
    TelemetryConfig,
    js_prefix,
    key_values,
    open_outfile,
    parse_traceparent,
    set_child_traceparent,
    set_hook_tracer,
    set_request_traceparent,
)

SERVICE = "qwen-code"
FLUSH_BUDGET_S = 0.2
"""The most the flush at exit adds to a run (``HEADWIRE_TELEMETRY_FLUSH_MS`` changes it: a
collector that must receive everything, such as a test's, can wait longer)."""
_DEFAULT_ENDPOINTS = {"grpc": "http://localhost:4317", "http": "http://localhost:4318"}


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate (JSON can carry one, UTF-8 cannot) as U+FFFD, so the
    protobuf and JSON encoders of an export never fail on it."""
    return encode_text(text).decode("utf-8")


def bounded(text: str) -> str:
    """``text`` cut to :data:`CONTENT_LIMIT` UTF-8 bytes (never inside a character), well
    formed; only its first :data:`CONTENT_LIMIT` characters are read."""
    return encode_text(text[:CONTENT_LIMIT])[:CONTENT_LIMIT].decode("utf-8", "ignore")


class _Post:
    """POSTs one signal's OTLP protobuf to its URL with :mod:`http.client` (on the SDK's
    exporter thread; no ``requests``, whose import alone cost a run ~100 ms)."""

    def __init__(self, url: str, headers: dict[str, str], timeout_s: float = 5.0) -> None:
        import http.client  # here, on the builder's thread: not at exit
        from urllib.parse import urlsplit

        self.client = http.client
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UsageError(f"telemetry OTLP endpoint: expected an http(s) URL, got {url!r}")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.headers = {**headers, "Content-Type": "application/x-protobuf"}
        self.timeout_s = timeout_s

    def __call__(self, body: bytes) -> bool:
        client = self.client
        kind = client.HTTPSConnection if self.https else client.HTTPConnection
        conn = kind(self.host, self.port, timeout=self.timeout_s)
        try:
            conn.request("POST", self.path, body, self.headers)
            response = conn.getresponse()
            response.read()
            return bool(200 <= response.status < 300)
        except (OSError, client.HTTPException):
            return False
        finally:
            conn.close()


class _SpanPoster(SpanExporter):
    def __init__(self, post: _Post) -> None:
        from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

        self.post = post
        self.encode = encode_spans  # imported here, on the builder's thread, not at exit

    def export(self, spans: Any) -> SpanExportResult:
        ok = self.post(self.encode(spans).SerializeToString())
        return SpanExportResult.SUCCESS if ok else SpanExportResult.FAILURE


class _LogPoster(LogRecordExporter):
    def __init__(self, post: _Post) -> None:
        from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs

        self.post = post
        self.encode = encode_logs

    def export(self, batch: Any) -> LogRecordExportResult:
        ok = self.post(self.encode(batch).SerializeToString())
        return LogRecordExportResult.SUCCESS if ok else LogRecordExportResult.FAILURE

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True

    def shutdown(self) -> None:
        pass


class _MetricPoster(MetricExporter):
    def __init__(self, post: _Post) -> None:
        from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics

        super().__init__()
        self.post = post
        self.encode = encode_metrics

    def export(
        self, metrics_data: Any, timeout_millis: float = 10_000, **kwargs: Any
    ) -> MetricExportResult:
        ok = self.post(self.encode(metrics_data).SerializeToString())
        return MetricExportResult.SUCCESS if ok else MetricExportResult.FAILURE

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        pass


def _headers() -> dict[str, str]:
    """``OTEL_EXPORTER_OTLP_HEADERS`` (``k=v,k=v``, percent-encoded), as collectors that want
    a token are configured."""
    import os

    return key_values(os.environ.get("OTEL_EXPORTER_OTLP_HEADERS"))[0]


def _exporters(
    config: TelemetryConfig, outfile_fd: int | None
) -> tuple[SpanExporter, MetricExporter, LogRecordExporter]:
    if config.outfile:
        import os

        fd = outfile_fd if outfile_fd is not None else open_outfile(config.outfile)
        out: TextIO = os.fdopen(fd, "a", encoding="utf-8")
        return (
            ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\n"),
            ConsoleMetricExporter(out=out, formatter=lambda m: m.to_json(indent=None) + "\n"),
            ConsoleLogRecordExporter(out=out, formatter=lambda r: r.to_json(indent=None) + "\n"),
        )
    base = (config.otlp_endpoint or _DEFAULT_ENDPOINTS[config.otlp_protocol]).rstrip("/")
    if config.otlp_protocol == "http":
        headers = _headers()
        return (
            _SpanPoster(_Post(config.traces_endpoint or f"{base}/v1/traces", headers)),
            _MetricPoster(_Post(config.metrics_endpoint or f"{base}/v1/metrics", headers)),
            _LogPoster(_Post(config.logs_endpoint or f"{base}/v1/logs", headers)),
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
    return (
        GrpcSpans(endpoint=config.traces_endpoint or base),
        GrpcMetrics(endpoint=config.metrics_endpoint or base),
        GrpcLogs(endpoint=config.logs_endpoint or base),
    )


class OtelSubscriber:
    """Follows one session's events and exports them (see the module docstring)."""

    def __init__(
        self,
        config: TelemetryConfig,
        *,
        session_id: str,
        version: str,
        caller: str | None,
        outfile_fd: int | None = None,
    ) -> None:
        spans, metrics, logs = _exporters(config, outfile_fd)
        resource = Resource(
            {
                "service.name": SERVICE,
                **dict(config.resource_attributes),
                "service.version": version,
                "session.id": session_id,
            }
        )
        self.user = {"gen_ai.user.id": config.user_id} if config.user_id else {}
        self.metric_extra = {"session.id": session_id} if config.metrics_session_id else {}
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
        self.session_count.add(1, dict(self.metric_extra))
        set_hook_tracer(self)

    # -- helpers ----------------------------------------------------------------------------

    def _parent(self, parent: str | None) -> Context | None:
        if parent is not None and parent in self.tools:
            return set_span_in_context(self.tools[parent][0])
        if self.interaction is not None:
            return set_span_in_context(self.interaction)
        return self.root

    def _sensitive(self, text: str) -> str:
        """``text`` cut to ``sensitiveSpanAttributeMaxLength`` JavaScript characters (UTF-16
        code units, as Qwen Code counts), well formed."""
        return well_formed(js_prefix(text, self.config.sensitive_max_length))

    def _traceparent(self, span: Span) -> str | None:
        ctx = span.get_span_context()
        if not (self.config.propagate and ctx.is_valid):
            return None
        return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}"

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
                "session.id": self.session_id,
                **self.user,
            },
        )
        self.fields["trace_id"] = f"{self.interaction.get_span_context().trace_id:032x}"

    def _user_prompt(self, e: ev.UserPrompt) -> None:
        if e.parent is not None:
            return
        attributes: dict[str, Any] = {"prompt_length": len(e.text)}
        if self.config.log_prompts:
            attributes["prompt"] = bounded(e.text)
        if self.config.include_sensitive and self.interaction is not None:
            self.interaction.set_attribute("gen_ai.input.messages", self._sensitive(e.text))
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
                "session.id": self.session_id,
                **self.user,
            },
        )
        self.models[e.parent] = (span, e.model, time.monotonic())
        # published in the task that makes the call: its HTTP request names this span
        set_request_traceparent(self._traceparent(span))
        self._log(f"{SERVICE}.api_request", {"model": e.model})

    def _model_finished(self, e: ev.ModelCallFinished) -> None:
        set_request_traceparent(None)
        found = self.models.pop(e.parent, None)
        if found is None:
            return
        span, model, started = found
        u = e.usage
        ms = int((time.monotonic() - started) * 1000)
        span.set_attributes(
            {
                "gen_ai.response.model": model,
                "duration_ms": ms,
                "success": True,
                "gen_ai.usage.input_tokens": u.input_tokens,
                "gen_ai.usage.output_tokens": u.output_tokens,
                "gen_ai.usage.cache_read.input_tokens": u.cached_tokens,
            }
        )
        if self.config.include_sensitive:
            span.set_attribute("gen_ai.output.messages", self._sensitive(_json(e.message)))
        span.end()
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
        extra = self.metric_extra
        self.api_count.add(1, {"model": model, "status_code": 200, **extra})
        self.api_latency.record(ms, {"model": model, **extra})
        for kind, count in (
            ("input", u.input_tokens),
            ("output", u.output_tokens),
            ("cache", u.cached_tokens),
        ):
            self.token_usage.add(count, {"model": model, "type": kind, **extra})

    def _tool_started(self, e: ev.ToolStarted) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": e.name,
            "gen_ai.tool.call.id": e.call_id,
            "session.id": self.session_id,
            **self.user,
        }
        if self.config.include_sensitive:
            attributes["gen_ai.tool.call.arguments"] = self._sensitive(_json(e.args))
        span = self.tracer.start_span(
            f"{SERVICE}.tool", context=self._parent(e.parent), attributes=attributes
        )
        self.tools[e.call_id] = (span, time.monotonic())
        traceparent = self._traceparent(span)
        if traceparent is not None:
            set_child_traceparent(e.call_id, traceparent)

    def _tool_finished(self, e: ev.ToolFinished) -> None:
        r = e.response
        found = self.tools.pop(r.call_id, None)
        set_child_traceparent(r.call_id, None)
        if found is None:
            return
        span, started = found
        ms = int((time.monotonic() - started) * 1000)
        success = not r.failed
        span.set_attributes({"duration_ms": ms, "success": success})
        if not success:
            span.set_status(Status(StatusCode.ERROR, r.error_type or "error"))
        if self.config.include_sensitive:
            result = r.output if r.output is not None else (r.part_error or r.error or "")
            span.set_attribute("gen_ai.tool.call.result", self._sensitive(result))
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
        extra = self.metric_extra
        self.tool_count.add(1, {"function_name": r.name, "success": success, **extra})
        self.tool_latency.record(ms, {"function_name": r.name, **extra})

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

    # -- hooks (called by the hook runner through headwire.runtime.telemetry.hook_tracer) -----

    def start_hook(
        self, event: str, tool_name: str | None, tool_use_id: str | None, parent: str | None
    ) -> tuple[Any, str | None]:
        attributes: dict[str, Any] = {"session.id": self.session_id, "hook_event": event}
        if tool_name:
            attributes["tool.name"] = tool_name
        if tool_use_id:
            attributes["tool.use_id"] = tool_use_id
        attributes.update(self.user)
        context = self._parent(tool_use_id if tool_use_id in self.tools else parent)
        span = self.tracer.start_span(f"{SERVICE}.hook", context=context, attributes=attributes)
        return (span, time.monotonic()), self._traceparent(span)

    def end_hook(self, span: Any, outcome: str, error: str | None) -> None:
        hook, started = span
        hook.set_attributes(
            {
                "duration_ms": int((time.monotonic() - started) * 1000),
                "success": outcome in ("success", "blocked"),
                "should_proceed": outcome != "blocked",
            }
        )
        if outcome in ("error", "timeout", "cancelled"):
            message = well_formed((error or outcome)[:1024])
            hook.set_attributes({"error": message, "error.type": "hook_error"})
            hook.set_status(Status(StatusCode.ERROR, message))
        hook.end()

    # -- the end ----------------------------------------------------------------------------

    def flush(self, budget_s: float = FLUSH_BUDGET_S) -> None:
        """Send what is pending, waiting at most ``budget_s`` in all: the three signals flush
        at once, each on a daemon thread (so a slow collector never holds the process)."""
        set_hook_tracer(None)
        ms = max(1, int(budget_s * 1000))
        deadline = time.monotonic() + budget_s
        threads = [
            threading.Thread(target=provider.force_flush, args=(ms,), daemon=True)
            for provider in (self.tracer_provider, self.logger_provider, self.meter_provider)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))

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
