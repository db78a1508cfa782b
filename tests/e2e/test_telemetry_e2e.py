"""Telemetry (issue 25) against a local OTLP/HTTP receiver (:mod:`tests.fakes.otlp_receiver`).

A run with two model calls and one shell tool call, telemetry on through the
``QWEN_TELEMETRY_*`` variables and a caller's ``TRACEPARENT``:

* spans ``qwen-code.interaction`` > two ``qwen-code.llm_request`` and one ``qwen-code.tool``,
  all in the caller's trace, the interaction's parent the caller's span;
* token attributes on each model span; the shell child's ``TRACEPARENT`` names the tool span;
* log records and metric totals under Qwen Code's names; the ``result`` carries the trace id;
* no prompt text anywhere without ``logPrompts``.

And with telemetry off, ``headwire -p`` never imports OpenTelemetry.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.helpers import env_for, run_cli
from tests.e2e.test_headless_modes import tool_results
from tests.fakes.fake_openai import FakeOpenAI

pytest.importorskip("opentelemetry.sdk", reason="the telemetry extra is not installed")
pytest.importorskip("opentelemetry.proto", reason="opentelemetry-proto is not installed")

from tests.fakes.otlp_receiver import OtlpReceiver

FLAGS = ["--auth-type", "openai", "-m", "m", "--yolo", "-o", "stream-json", "-p"]
CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"
PROMPT = "a private prompt 7f3c"


def user_settings(tmp: Path, settings: dict[str, object]) -> None:
    """``settings`` as the user settings of a :func:`run_cli` run in ``tmp``."""
    folder = tmp / "home" / ".headwire"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(settings))


def test_spans_logs_and_metrics_of_a_run_join_the_callers_trace(tmp_path: Path) -> None:
    script = [
        {"tool": "run_shell_command", "args": {"command": "echo $TRACEPARENT"}},
        {"text": "done"},
    ]
    user_settings(tmp_path, {"outboundCorrelation": {"propagateTraceContext": True}})
    with OtlpReceiver() as otlp, FakeOpenAI(script) as fake:
        proc = run_cli(
            [*FLAGS, PROMPT],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
            QWEN_TELEMETRY_ENABLED="true",
            QWEN_TELEMETRY_OTLP_PROTOCOL="http",
            QWEN_TELEMETRY_OTLP_ENDPOINT=otlp.endpoint,
            HEADWIRE_TELEMETRY_FLUSH_MS="10000",  # a loaded machine must not lose spans
            TRACEPARENT=f"00-{CALLER_TRACE}-{CALLER_SPAN}-01",
        )
        spans, logs, metrics = otlp.spans(), otlp.logs(), otlp.metrics()
        sent = [headers.get("traceparent") for headers in fake.request_headers]
    assert proc.returncode == 0, proc.stderr
    lines = proc.lines()
    assert lines[-1]["type"] == "result" and lines[-1]["trace_id"] == CALLER_TRACE
    assert "sandbox" not in lines[0]
    by_name: dict[str, list[dict[str, object]]] = {}
    for span in spans:
        by_name.setdefault(str(span["name"]), []).append(span)
    (root,) = by_name["qwen-code.interaction"]
    models = by_name["qwen-code.llm_request"]
    (tool,) = by_name["qwen-code.tool"]
    assert len(models) == 2 and len(spans) == 4
    assert {s["trace_id"] for s in spans} == {CALLER_TRACE}
    assert root["parent"] == CALLER_SPAN
    assert all(s["parent"] == root["span_id"] for s in (*models, tool))
    for span in models:
        attrs = span["attributes"]
        assert isinstance(attrs, dict)
        assert attrs["gen_ai.request.model"] == "m"
        assert attrs["gen_ai.usage.input_tokens"] > 0 and attrs["gen_ai.usage.output_tokens"] > 0
    assert tool["attributes"] == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "run_shell_command",
        "gen_ai.tool.call.id": "call_fake_1_0",
        "session.id": lines[0]["session_id"],
        "duration_ms": tool["attributes"]["duration_ms"],
        "success": True,
    }
    assert root["resource"]["service.name"] == "qwen-code"
    (block,) = tool_results(lines)
    assert block["content"] == f"00-{CALLER_TRACE}-{tool['span_id']}-01"  # the child's own
    # each model request's traceparent names its own llm_request span, as upstream's fetch does
    assert sent == [f"00-{CALLER_TRACE}-{span['span_id']}-01" for span in models]
    assert [log["event_name"] for log in logs] == [
        "qwen-code.user_prompt",
        "qwen-code.api_request",
        "qwen-code.api_response",
        "qwen-code.tool_call",
        "qwen-code.api_request",
        "qwen-code.api_response",
    ]
    usage = lines[-1]["usage"]
    tokens = {a["type"]: v for a, v in metrics["qwen-code.token.usage"]}
    assert tokens["input"] == usage["input_tokens"] and tokens["output"] == usage["output_tokens"]
    assert [v for _, v in metrics["qwen-code.api.request.count"]] == [2]
    assert metrics["qwen-code.tool.call.count"] == [
        ({"function_name": "run_shell_command", "success": True}, 1)
    ]
    assert metrics["qwen-code.session.count"] == [({}, 1)]
    exported = json.dumps([spans, logs], default=str)
    assert PROMPT not in exported and "TRACEPARENT" not in exported  # no content by default


def test_log_prompts_puts_the_prompt_in_bounded(tmp_path: Path) -> None:
    with OtlpReceiver() as otlp, FakeOpenAI([{"text": "done"}]) as fake:
        proc = run_cli(
            [*FLAGS, PROMPT],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
            QWEN_TELEMETRY_ENABLED="1",
            QWEN_TELEMETRY_OTLP_PROTOCOL="http",
            QWEN_TELEMETRY_OTLP_ENDPOINT=otlp.endpoint,
            HEADWIRE_TELEMETRY_FLUSH_MS="10000",  # a loaded machine must not lose spans
            QWEN_TELEMETRY_LOG_PROMPTS="1",
            TRACEPARENT="",  # none from the caller: the interaction starts a trace
        )
        logs = otlp.logs()
        spans = otlp.spans()
    assert proc.returncode == 0, proc.stderr
    (prompt,) = [log for log in logs if log["event_name"] == "qwen-code.user_prompt"]
    assert prompt["attributes"]["prompt"] == PROMPT
    (root,) = [s for s in spans if s["name"] == "qwen-code.interaction"]
    assert root["parent"] == "" and proc.lines()[-1]["trace_id"] == root["trace_id"]


def test_telemetry_off_never_imports_opentelemetry(tmp_path: Path) -> None:
    """``headwire -p`` with telemetry off: the run works and no ``opentelemetry`` module was
    loaded (checked in the process itself, at exit)."""
    check = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write("
        "'OTEL-MODULES=%d\\n' % sum(m.startswith('opentelemetry') for m in sys.modules)))\n"
        "from headwire.cli.main import main\n"
        "sys.exit(main())\n"
    )
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    with FakeOpenAI([{"text": "done"}]) as fake:
        done = subprocess.run(
            [sys.executable, "-c", check, *FLAGS, "hi"],
            cwd=proj,
            env=env_for(home, OPENAI_BASE_URL=fake.base_url),
            capture_output=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert "OTEL-MODULES=0" in done.stderr.decode()


def test_a_missing_exporter_stops_the_run_at_startup(tmp_path: Path) -> None:
    """``grpc`` (upstream's default) without its exporter: one line saying what to install,
    exit 2, and no model request."""
    from importlib.util import find_spec

    if find_spec("opentelemetry.exporter.otlp.proto.grpc") is not None:
        pytest.skip("the gRPC exporter is installed here")
    with FakeOpenAI([{"text": "done"}]) as fake:
        proc = run_cli(
            [*FLAGS, "hi"],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
            QWEN_TELEMETRY_ENABLED="1",
        )
        requests = list(fake.requests)
    assert proc.returncode == 2 and requests == []
    (line,) = [x for x in proc.stderr.splitlines() if "otlpProtocol" in x]
    assert "opentelemetry-exporter-otlp-proto-grpc" in line


def test_outfile_gets_the_spans_as_json_lines(tmp_path: Path) -> None:
    """``QWEN_TELEMETRY_OUTFILE``: spans, logs and metrics as JSON lines in the file, nothing
    on stdout but the protocol."""
    outfile = tmp_path / "telemetry.jsonl"
    with FakeOpenAI([{"text": "done"}]) as fake:
        proc = run_cli(
            [*FLAGS, "hi"],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
            QWEN_TELEMETRY_ENABLED="1",
            QWEN_TELEMETRY_OUTFILE=str(outfile),
            HEADWIRE_TELEMETRY_FLUSH_MS="10000",
        )
    assert proc.returncode == 0, proc.stderr
    assert proc.lines()[-1]["type"] == "result" and b"qwen-code." not in proc.stdout
    records = [json.loads(line) for line in outfile.read_text().splitlines() if line.strip()]
    names = {r.get("name") for r in records}
    assert {"qwen-code.interaction", "qwen-code.llm_request"} <= names


def test_without_propagation_a_child_gets_no_span_of_ours(tmp_path: Path) -> None:
    """``outboundCorrelation.propagateTraceContext`` off (the default): the shell child sees the
    caller's ``TRACEPARENT`` unchanged, never one naming headwire's tool span."""
    caller = f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"
    script = [
        {"tool": "run_shell_command", "args": {"command": "echo $TRACEPARENT"}},
        {"text": "done"},
    ]
    with OtlpReceiver() as otlp, FakeOpenAI(script) as fake:
        proc = run_cli(
            [*FLAGS, "hi"],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
            QWEN_TELEMETRY_ENABLED="1",
            QWEN_TELEMETRY_OTLP_PROTOCOL="http",
            QWEN_TELEMETRY_OTLP_ENDPOINT=otlp.endpoint,
            HEADWIRE_TELEMETRY_FLUSH_MS="10000",
            TRACEPARENT=caller,
        )
        spans = otlp.spans()
        sent = [headers.get("traceparent") for headers in fake.request_headers]
    assert proc.returncode == 0, proc.stderr
    (block,) = tool_results(proc.lines())
    assert block["content"] == caller
    assert {s["name"] for s in spans} >= {"qwen-code.tool"}
    assert sent == [None, None]  # no trace context on the model requests either


def test_flags_settings_and_a_hook_span(tmp_path: Path) -> None:
    """Upstream's ``--telemetry*`` flags over the settings; ``userId``, ``resourceAttributes``,
    the per-signal traces endpoint, ``metrics.includeSessionId``,
    ``includeSensitiveSpanAttributes``; a command hook runs under a ``qwen-code.hook`` span
    and, with propagation on, its ``TRACEPARENT`` names that span."""
    script = [
        {"tool": "run_shell_command", "args": {"command": "echo hi"}},
        {"text": "done"},
    ]
    hook_out = tmp_path / "hook-traceparent"
    with OtlpReceiver() as otlp, FakeOpenAI(script) as fake:
        user_settings(
            tmp_path,
            {
                "telemetry": {
                    "enabled": False,  # --telemetry turns it on
                    "otlpProtocol": "grpc",  # --telemetry-otlp-protocol http wins
                    "otlpTracesEndpoint": f"{otlp.endpoint}/v1/traces",
                    "userId": "user-42",
                    "resourceAttributes": {"deployment.environment": "ci", "session.id": "x"},
                    "metrics": {"includeSessionId": True},
                    "includeSensitiveSpanAttributes": True,
                    "sensitiveSpanAttributeMaxLength": 4,
                },
                "outboundCorrelation": {"propagateTraceContext": True},
                "hooks": {
                    "PreToolUse": [
                        {
                            "matcher": "run_shell_command",
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": f"echo $TRACEPARENT > {hook_out}",
                                }
                            ],
                        }
                    ]
                },
            },
        )
        proc = run_cli(
            [
                "--telemetry",
                "--telemetry-otlp-protocol",
                "http",
                "--telemetry-otlp-endpoint",
                otlp.endpoint,
                *FLAGS,
                PROMPT,
            ],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
            HEADWIRE_TELEMETRY_FLUSH_MS="10000",
            TRACEPARENT="",
        )
        spans, metrics = otlp.spans(), otlp.metrics()
    assert proc.returncode == 0, proc.stderr
    assert "'session.id' is set by headwire" in proc.stderr
    by_name = {str(s["name"]): s for s in spans}
    hook, tool, root = (
        by_name["qwen-code.hook"],
        by_name["qwen-code.tool"],
        by_name["qwen-code.interaction"],
    )
    assert hook["parent"] == root["span_id"]  # PreToolUse runs before the tool's span starts
    assert hook["attributes"]["tool.use_id"] == tool["attributes"]["gen_ai.tool.call.id"]
    assert hook["attributes"]["hook_event"] == "PreToolUse"
    assert hook["attributes"]["tool.name"] == "run_shell_command"
    assert hook["attributes"]["success"] is True
    assert hook_out.read_text().startswith(f"00-{hook['trace_id']}-{hook['span_id']}-")
    for span in (root, tool, hook, by_name["qwen-code.llm_request"]):
        assert span["attributes"]["gen_ai.user.id"] == "user-42"
        assert span["resource"]["deployment.environment"] == "ci"
        assert span["resource"]["session.id"] != "x"
    assert root["attributes"]["gen_ai.input.messages"] == PROMPT[:4]
    assert tool["attributes"]["gen_ai.tool.call.arguments"] == '{"co'
    assert len(tool["attributes"]["gen_ai.tool.call.result"]) == 4
    (point,) = metrics["qwen-code.session.count"]
    assert point[0] == {"session.id": proc.lines()[0]["session_id"]}


def test_no_telemetry_flag_turns_it_off(tmp_path: Path) -> None:
    """``--no-telemetry`` over ``QWEN_TELEMETRY_ENABLED``: nothing exported, no trace id."""
    with OtlpReceiver() as otlp, FakeOpenAI([{"text": "done"}]) as fake:
        proc = run_cli(
            ["--no-telemetry", *FLAGS, "hi"],
            tmp_path,
            OPENAI_BASE_URL=fake.base_url,
            QWEN_TELEMETRY_ENABLED="1",
            QWEN_TELEMETRY_OTLP_PROTOCOL="http",
            QWEN_TELEMETRY_OTLP_ENDPOINT=otlp.endpoint,
        )
        spans = otlp.spans()
    assert proc.returncode == 0, proc.stderr
    assert spans == [] and "trace_id" not in proc.lines()[-1]


@pytest.mark.parametrize("kind", ["fifo", "directory", "unwritable"])
def test_an_outfile_that_cannot_be_written_stops_the_run_at_startup(
    tmp_path: Path, kind: str
) -> None:
    """``telemetry.outfile`` a FIFO nobody reads, a folder, or a path in a folder that cannot
    be written: one line on stderr, exit 2, no model request, no hang."""
    import os

    target = tmp_path / "out"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes anywhere")
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        target = locked / "out.jsonl"
    with FakeOpenAI([{"text": "done"}]) as fake:
        proc = run_cli(
            ["--telemetry-outfile", str(target), *FLAGS, "hi"],
            tmp_path,
            timeout=20,
            OPENAI_BASE_URL=fake.base_url,
            QWEN_TELEMETRY_ENABLED="1",
        )
        requests = list(fake.requests)
    assert proc.returncode == 2 and requests == [], proc.stderr
    (line,) = [x for x in proc.stderr.splitlines() if "telemetry.outfile" in x]
    assert str(target) in line
