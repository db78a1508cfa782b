"""A local OTLP/HTTP receiver for the telemetry tests: ``/v1/traces``, ``/v1/metrics`` and
``/v1/logs``, protobuf or JSON bodies decoded with ``opentelemetry-proto``.

::

    with OtlpReceiver() as otlp:          # 127.0.0.1, a free port
        run headwire with QWEN_TELEMETRY_OTLP_ENDPOINT=otlp.endpoint
        otlp.spans()                      # every span received, flattened to dicts
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format  # type: ignore[import-untyped]
from google.protobuf.message import Message  # type: ignore[import-untyped]
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

_KINDS: dict[str, type[Message]] = {
    "/v1/traces": ExportTraceServiceRequest,
    "/v1/metrics": ExportMetricsServiceRequest,
    "/v1/logs": ExportLogsServiceRequest,
}


def value_of(v: AnyValue) -> Any:
    """A protobuf ``AnyValue`` as a Python value."""
    kind = v.WhichOneof("value")
    return None if kind is None else getattr(v, kind)


def attrs(items: Any) -> dict[str, Any]:
    """Repeated ``KeyValue`` as a dict."""
    return {kv.key: value_of(kv.value) for kv in items}


_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


def _ids_as_base64(node: Any) -> Any:
    """OTLP/JSON writes trace and span ids in hex; protobuf's JSON reader wants base64."""
    if isinstance(node, dict):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode()
            if k in _ID_KEYS and isinstance(v, str)
            else _ids_as_base64(v)
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_ids_as_base64(v) for v in node]
    return node


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            body = b"".join(parts)
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if (self.headers.get("Content-Encoding") or "").lower() == "gzip":
            body = gzip.decompress(body)
        return body

    def do_POST(self) -> None:
        body = self._body()
        kind = _KINDS.get(self.path)
        if kind is None:
            self.send_response(404)
            self.end_headers()
            return
        message = kind()
        if "json" in (self.headers.get("Content-Type") or ""):
            json_format.ParseDict(_ids_as_base64(json.loads(body)), message)
        else:
            message.ParseFromString(body)
        with self.server.lock:
            self.server.received.setdefault(self.path, []).append(message)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.lock = threading.Lock()
        self.received: dict[str, list[Any]] = {}


class OtlpReceiver:
    """The receiver; a context manager serving in a daemon thread."""

    def __init__(self) -> None:
        self._server = _Server()
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        """The base URL to configure (``http://127.0.0.1:PORT``)."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _requests(self, path: str) -> list[Any]:
        with self._server.lock:
            return list(self._server.received.get(path, []))

    def spans(self) -> list[dict[str, Any]]:
        """Every span: name, hex ids, parent id (``""`` for a root), attributes."""
        out = []
        for req in self._requests("/v1/traces"):
            for rs in req.resource_spans:
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        out.append(
                            {
                                "name": s.name,
                                "trace_id": s.trace_id.hex(),
                                "span_id": s.span_id.hex(),
                                "parent": s.parent_span_id.hex(),
                                "attributes": attrs(s.attributes),
                                "status": s.status.code,
                                "resource": attrs(rs.resource.attributes),
                            }
                        )
        return out

    def logs(self) -> list[dict[str, Any]]:
        """Every log record: its event name and attributes."""
        out = []
        for req in self._requests("/v1/logs"):
            for rl in req.resource_logs:
                for sl in rl.scope_logs:
                    for r in sl.log_records:
                        out.append({"event_name": r.event_name, "attributes": attrs(r.attributes)})
        return out

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], float]]]:
        """Metric name -> ``(attributes, value)`` per data point (a sum's value, a
        histogram's count)."""
        out: dict[str, list[tuple[dict[str, Any], float]]] = {}
        for req in self._requests("/v1/metrics"):
            for rm in req.resource_metrics:
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        kind = m.WhichOneof("data")
                        for p in getattr(m, kind).data_points:
                            value = p.count if kind == "histogram" else (p.as_int or p.as_double)
                            out.setdefault(m.name, []).append((attrs(p.attributes), value))
        return out
