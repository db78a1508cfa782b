"""The same telemetry settings under upstream Qwen Code 0.24.4 and headwire export the same
names (issue 25): span names and their parentage, the key GenAI attribute names of each span,
log record names and metric names.  headwire exports a subset of upstream's records (upstream
adds ``qwen-code.tool.execution``, HTTP client spans, memory and resource metrics, ...); every
record headwire exports must exist upstream, under the same parent, with the key attributes.

Both run one ``run_shell_command`` call and a final answer against the scripted fake server,
``telemetry.otlpProtocol: http`` to a local OTLP/HTTP receiver (upstream sends OTLP/JSON,
headwire protobuf; :mod:`tests.fakes.otlp_receiver` decodes both).  Upstream's names are
committed in ``tests/data/telemetry/upstream-0.24.4.json`` so headwire is compared without the
oracle too; with the oracle (``HEADWIRE_ORACLE_PKG_DIR``) upstream is run live and must still
give what the capture says (``HEADWIRE_WRITE_CAPTURE=1`` rewrites it from that run).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import UPSTREAM_ENTRY, side_by_side
from tests.fakes.fake_openai import FakeOpenAI
from tests.paths import ROOT

pytest.importorskip("opentelemetry.sdk", reason="the telemetry extra is not installed")
pytest.importorskip("opentelemetry.proto", reason="opentelemetry-proto is not installed")

from tests.fakes.otlp_receiver import OtlpReceiver

CAPTURE = ROOT / "tests" / "data" / "telemetry" / "upstream-0.24.4.json"
SCRIPT = [{"tool": "run_shell_command", "args": {"command": "echo hi"}}, {"text": "done"}]
FLAGS = ["--auth-type", "openai", "-m", "m", "--yolo", "-o", "stream-json", "-p", "hi"]

KEY_ATTRIBUTES = {
    "qwen-code.interaction": {
        "gen_ai.operation.name",
        "gen_ai.agent.name",
        "gen_ai.conversation.id",
        "session.id",
    },
    "qwen-code.llm_request": {
        "gen_ai.operation.name",
        "gen_ai.request.model",
        "gen_ai.response.model",
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
        "gen_ai.conversation.id",
        "session.id",
        "duration_ms",
        "success",
    },
    "qwen-code.tool": {
        "gen_ai.operation.name",
        "gen_ai.tool.name",
        "gen_ai.tool.call.id",
        "session.id",
        "duration_ms",
        "success",
    },
}
"""The attributes a dashboard keys on: each span of these names carries them in both CLIs."""


def summarize(
    spans: list[dict[str, Any]], logs: list[dict[str, Any]], metrics: dict[str, Any]
) -> dict[str, Any]:
    """The names of a run's export: per span name, its parents' names (``""``: a root) and the
    union of its attribute names; the log record names; the metric names."""
    names = {s["span_id"]: s["name"] for s in spans}
    out: dict[str, dict[str, set[str]]] = {}
    for s in spans:
        entry = out.setdefault(s["name"], {"parents": set(), "attributes": set()})
        entry["parents"].add(names.get(s["parent"], "?") if s["parent"] else "")
        entry["attributes"] |= set(s["attributes"])
    return {
        "spans": {
            name: {k: sorted(v) for k, v in entry.items()} for name, entry in sorted(out.items())
        },
        "logs": sorted({r["event_name"] or r["attributes"].get("event.name", "") for r in logs}),
        "metrics": sorted(metrics),
        "resource": sorted({k for s in spans for k in s["resource"]}),
    }


def run(tmp: Path, which: str) -> dict[str, Any]:
    home, proj = tmp / which / "home", tmp / which / "proj"
    proj.mkdir(parents=True)
    folder = home / (".qwen" if which == "upstream" else ".headwire")
    folder.mkdir(parents=True)
    with OtlpReceiver() as otlp, FakeOpenAI(SCRIPT) as fake:
        telemetry = {"enabled": True, "otlpProtocol": "http", "otlpEndpoint": otlp.endpoint}
        (folder / "settings.json").write_text(json.dumps({"telemetry": telemetry}))
        command, env = side_by_side(
            which,
            home,
            FLAGS,
            fake.base_url,
            HEADWIRE_TELEMETRY_FLUSH_MS="10000",
            TRACEPARENT="",
        )
        done = subprocess.run(command, cwd=proj, env=env, capture_output=True, timeout=180)
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        summary = summarize(otlp.spans(), otlp.logs(), otlp.metrics())
    return summary


def compare(upstream: dict[str, Any], headwire: dict[str, Any]) -> None:
    """headwire's export is upstream's, by name (see the module docstring)."""
    assert set(KEY_ATTRIBUTES) <= set(headwire["spans"]), headwire["spans"].keys()
    for name, entry in headwire["spans"].items():
        assert name in upstream["spans"], f"span {name} is not upstream's"
        theirs = upstream["spans"][name]
        assert set(entry["parents"]) <= set(theirs["parents"]), (name, entry, theirs)
        key = KEY_ATTRIBUTES.get(name, set())
        assert key <= set(entry["attributes"]), (name, key - set(entry["attributes"]))
        assert key <= set(theirs["attributes"]), (name, key - set(theirs["attributes"]))
    assert set(headwire["logs"]) <= set(upstream["logs"]), set(headwire["logs"]) - set(
        upstream["logs"]
    )
    assert set(headwire["metrics"]) <= set(upstream["metrics"]), set(headwire["metrics"]) - set(
        upstream["metrics"]
    )
    assert {"service.name", "service.version"} <= set(headwire["resource"])
    assert {"service.name", "service.version"} <= set(upstream["resource"])


def test_headwire_exports_upstreams_names_from_the_capture(tmp_path: Path) -> None:
    """Without the oracle: headwire against the committed capture of upstream's names."""
    compare(json.loads(CAPTURE.read_text()), run(tmp_path, "headwire"))


@pytest.mark.slow  # the Node CLI takes seconds to start
@pytest.mark.skipif(
    shutil.which("node") is None or not UPSTREAM_ENTRY.exists(),
    reason="upstream Qwen Code not installed (HEADWIRE_ORACLE_PKG_DIR)",
)
def test_the_same_settings_export_the_same_names_upstream(tmp_path: Path) -> None:
    """With the oracle: upstream live, the same settings; the capture still holds for it."""
    upstream = run(tmp_path, "upstream")
    if os.environ.get("HEADWIRE_WRITE_CAPTURE") == "1":
        CAPTURE.parent.mkdir(parents=True, exist_ok=True)
        CAPTURE.write_text(json.dumps(upstream, indent=1, sort_keys=True) + "\n")
    compare(upstream, run(tmp_path, "headwire"))
    compare(upstream, json.loads(CAPTURE.read_text()) | {"resource": upstream["resource"]})
