"""Telemetry settings and trace context (issue 25): pure parts, with property tests for the
invariants their docstrings state."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.errors import UsageError
from headwire.runtime.telemetry import (
    CONTENT_LIMIT,
    child_traceparent,
    js_prefix,
    key_values,
    open_outfile,
    parse_traceparent,
    set_child_traceparent,
    telemetry_config,
)


def test_variables_override_the_settings() -> None:
    settings = {"enabled": False, "otlpEndpoint": "http://a", "otlpProtocol": "http"}
    assert not telemetry_config(settings, {}).enabled
    config = telemetry_config(
        settings,
        {"QWEN_TELEMETRY_ENABLED": "1", "QWEN_TELEMETRY_OTLP_ENDPOINT": "http://b"},
    )
    assert config.enabled and config.otlp_endpoint == "http://b" and config.otlp_protocol == "http"
    assert not telemetry_config({"enabled": True}, {"QWEN_TELEMETRY_ENABLED": "yes"}).enabled
    assert telemetry_config(None, {}).otlp_protocol == "grpc"  # upstream's default
    with pytest.raises(UsageError):
        telemetry_config(None, {"QWEN_TELEMETRY_OTLP_PROTOCOL": "udp"})


def test_flags_win_over_variables_and_otel_variables_come_last() -> None:
    """Upstream's order: a flag, then ``QWEN_TELEMETRY_*``, then ``OTEL_*``, then the key."""
    settings = {"enabled": True, "otlpEndpoint": "http://key", "logPrompts": True}
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel", "QWEN_TELEMETRY_LOG_PROMPTS": "1"}
    config = telemetry_config(settings, env)
    assert config.otlp_endpoint == "http://otel" and config.log_prompts
    env["QWEN_TELEMETRY_OTLP_ENDPOINT"] = "http://qwen"
    assert telemetry_config(settings, env).otlp_endpoint == "http://qwen"
    flags = {
        "telemetry": False,
        "telemetry_otlp_endpoint": "http://flag",
        "telemetry_log_prompts": False,
        "telemetry_outfile": "out.jsonl",
        "telemetry_target": "gcp",
        "telemetry_otlp_protocol": "http",
    }
    config = telemetry_config(settings, env, flags)
    assert not config.enabled and config.otlp_endpoint == "http://flag" and not config.log_prompts
    assert config.outfile == "out.jsonl" and config.target == "gcp"
    assert config.otlp_protocol == "http"
    assert telemetry_config(settings, env, {"telemetry": None}).enabled  # flag not given


def test_upstreams_newer_keys() -> None:
    settings = {
        "userId": "  u-1 ",
        "otlpTracesEndpoint": "http://t/v1/traces",
        "includeSensitiveSpanAttributes": True,
        "sensitiveSpanAttributeMaxLength": 7,
        "resourceAttributes": {"team": "a", "service.version": "9", "n": 3},
        "metrics": {"includeSessionId": True},
    }
    env = {
        "OTEL_RESOURCE_ATTRIBUTES": "team=b,region=eu%2D1,bad",
        "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://l",
    }
    config = telemetry_config(settings, env, propagate=True)
    assert config.user_id == "u-1" and config.traces_endpoint == "http://t/v1/traces"
    assert config.logs_endpoint == "http://l" and config.metrics_endpoint is None
    assert config.include_sensitive and config.sensitive_max_length == 7
    assert dict(config.resource_attributes) == {"team": "a", "region": "eu-1"}
    assert len(config.warnings) == 3  # "bad", n (not a string), service.version (reserved)
    assert config.metrics_session_id and config.propagate
    env["OTEL_SERVICE_NAME"] = "svc"
    assert dict(telemetry_config(settings, env).resource_attributes)["service.name"] == "svc"
    for bad in ({"sensitiveSpanAttributeMaxLength": 0}, {"target": "cloud"}):
        with pytest.raises(UsageError):
            telemetry_config(bad, {})
    with pytest.raises(UsageError):
        telemetry_config({}, {"QWEN_TELEMETRY_SENSITIVE_SPAN_ATTRIBUTE_MAX_LENGTH": "104857601"})


def test_open_outfile_never_blocks(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, why in ((fifo, "no reader"), (tmp_path, "directory")):
        with pytest.raises(UsageError, match=why):
            open_outfile(str(path))
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        os.close(open_outfile(str(fifo)))  # with its reader, a FIFO is fine
    finally:
        os.close(reader)
    fd = open_outfile(str(tmp_path / "t.jsonl"))
    os.write(fd, b"x")
    os.close(fd)
    assert (tmp_path / "t.jsonl").read_bytes() == b"x"


def test_traceparent_parsing() -> None:
    good = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    assert parse_traceparent(good) == ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", 1)
    assert parse_traceparent(good.upper()) is not None
    for bad in (None, "", "garbage", good[:-1], f"00-{'0' * 32}-b7ad6b7169203331-01"):
        assert parse_traceparent(bad) is None


@given(st.text(max_size=200))
def test_parse_traceparent_accepts_only_valid_headers(value: str) -> None:
    """Invariant: a parsed value has a 32-hex trace id and 16-hex span id, neither all zero."""
    parsed = parse_traceparent(value)
    if parsed is not None:
        trace_id, span_id, flags = parsed
        assert len(trace_id) == 32 and len(span_id) == 16 and 0 <= flags < 256
        assert int(trace_id, 16) and int(span_id, 16)


def test_child_traceparent_registry() -> None:
    assert child_traceparent("c1") is None
    set_child_traceparent("c1", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    assert (
        child_traceparent(
            "c1",
        )
        is not None
        and child_traceparent("c2") is None
    )
    set_child_traceparent("c1", None)
    assert child_traceparent("c1") is None


@given(st.text(st.characters(codec=None), max_size=40), st.integers(min_value=1, max_value=50))
def test_js_prefix_counts_as_javascript_and_never_splits_a_pair(text: str, limit: int) -> None:
    """Invariant (``js_prefix``): a prefix of ``text`` of at most ``limit`` UTF-16 code units,
    the longest that does not end in half a surrogate pair."""
    out = js_prefix(text, limit)

    def units(s: str) -> int:
        return len(s.encode("utf-16-le", "surrogatepass")) // 2

    assert text.startswith(out) and units(out) <= limit
    if out != text:
        following = text[len(out)]
        assert units(out) + units(following) > limit


def test_key_values_reads_otel_lists() -> None:
    assert key_values("a=1, b%3Dc = x%2Cy ,junk,,=v") == (
        {"a": "1", "b=c": "x,y"},
        ["junk", "=v"],
    )


otel = pytest.importorskip("headwire.runtime.otel_export", reason="telemetry extra missing")


@given(st.text(max_size=300), st.integers(min_value=0, max_value=5))
def test_bounded_content_is_a_utf8_prefix_within_the_limit(text: str, repeat: int) -> None:
    """Invariant (``bounded``): at most ``CONTENT_LIMIT`` UTF-8 bytes, a prefix of the text,
    never cut inside a character; short texts unchanged."""
    big = text * (1 + (CONTENT_LIMIT // max(1, len(text.encode()))) * repeat)
    out = otel.bounded(big)
    data = out.encode("utf-8", "replace")
    assert len(data) <= CONTENT_LIMIT
    assert big.startswith(out) or big.encode("utf-8", "replace").startswith(data)
    if len(big.encode("utf-8", "replace")) <= CONTENT_LIMIT:
        assert out == big


@given(
    st.text(st.characters(codec=None), max_size=200),
    st.integers(min_value=1, max_value=CONTENT_LIMIT * 2),
)
def test_every_exported_text_is_well_formed(text: str, times: int) -> None:
    """A lone surrogate (JSON carries one, UTF-8 cannot) never reaches the encoders: it
    becomes U+FFFD in log content, sensitive span attributes and hook errors alike."""
    big = (text or "\ud800") * (1 + times // max(1, len(text)))
    for out in (otel.bounded(big), otel.well_formed(big[:5000])):
        out.encode("utf-8")  # raises on a surrogate
    assert otel.well_formed("a\ud800b\udfffc") == "a\ufffdb\ufffdc"
