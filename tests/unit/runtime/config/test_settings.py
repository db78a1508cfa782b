"""Settings: layers, precedence, trust, one-line errors, and the schema as the only truth."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from headwire.cli.docs.settings import GENERATOR, render
from headwire.runtime.config.pricing import ModelPrice
from headwire.runtime.config.settings import (
    DEFAULT_CONTEXT_FILE_NAMES,
    Settings,
    SettingsError,
    dropped_notes,
    load_settings,
    make_layer,
    merge_layers,
    parse_settings_text,
    settings_schema,
    trust_keys,
    user_only_keys,
)
from tests.paths import ROOT


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()
    return home, proj


def test_no_files_is_the_defaults(tmp_path: Path) -> None:
    home, proj = dirs(tmp_path)
    assert load_settings(home, proj) == Settings()
    assert Settings().context_file_names == DEFAULT_CONTEXT_FILE_NAMES == ("QWEN.md", "AGENTS.md")


def test_cli_over_project_over_user(tmp_path: Path) -> None:
    home, proj = dirs(tmp_path)
    write(home / "settings.json", {"model": {"name": "user", "maxSessionTurns": 3}})
    write(proj / ".headwire" / "settings.json", {"model": {"name": "project"}})
    loaded = load_settings(home, proj)
    assert (loaded.model_name, loaded.max_session_turns) == ("project", 3)
    loaded = load_settings(home, proj, '{"model": {"name": "cli"}}')
    assert loaded.model_name == "cli"
    assert [layer.scope for layer in loaded.layers] == ["user", "project", "cli"]
    assert loaded.layer("project") is not None and loaded.layer("project").source.endswith(  # type: ignore[union-attr]
        ".headwire/settings.json"
    )


def test_settings_file_argument_is_relative_to_cwd(tmp_path: Path) -> None:
    home, proj = dirs(tmp_path)
    write(proj / "ci.json", {"tools": {"approvalMode": "yolo"}})
    assert load_settings(home, proj, "ci.json").approval_mode == "yolo"
    with pytest.raises(
        SettingsError, match=r"^--settings: cannot read .*nope\.json: no such file$"
    ):
        load_settings(home, proj, "nope.json")


def test_lists_merge_as_documented(tmp_path: Path) -> None:
    home, proj = dirs(tmp_path)
    write(home / "settings.json", {"tools": {"exclude": ["a"], "core": ["x"], "allowed": ["p"]}})
    write(proj / ".headwire" / "settings.json", {"tools": {"exclude": ["b", "a"], "core": ["y"]}})
    loaded = load_settings(home, proj)
    assert loaded.tools_exclude == ("a", "b")
    assert loaded.tools_core == ("y",)
    assert loaded.tools_allowed == ("p",)


def test_same_file_for_user_and_project_is_read_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / ".headwire" / "settings.json", {"model": {"name": "m"}})
    loaded = load_settings(home / ".headwire", home)
    assert [layer.scope for layer in loaded.layers] == ["user"]


def test_user_only_key_is_never_taken_from_a_project(tmp_path: Path) -> None:
    home, proj = dirs(tmp_path)
    write(
        proj / ".headwire" / "settings.json", {"tools": {"webFetch": {"allowPrivateNetwork": True}}}
    )
    loaded = load_settings(home, proj)
    assert loaded.web_fetch_allow_private is False
    assert loaded.layers[0].dropped == ("tools.webFetch.allowPrivateNetwork",)
    write(home / "settings.json", {"tools": {"webFetch": {"allowPrivateNetwork": True}}})
    assert load_settings(home, proj).web_fetch_allow_private is True
    assert load_settings(home / "x", proj, '{"tools": {"webFetch": {"allowPrivateNetwork": true}}}')


def test_untrusted_project_loses_the_keys_that_run_code(tmp_path: Path) -> None:
    home, proj = dirs(tmp_path)
    project = {
        "mcpServers": {"s": {"command": "evil"}},
        "env": {"A": "1"},
        "tools": {"allowed": ["run_shell_command"], "approvalMode": "yolo", "exclude": ["x"]},
        "model": {"name": "m"},
    }
    write(proj / ".headwire" / "settings.json", project)
    trusted = load_settings(home, proj)
    assert trusted.mcp_sources() and trusted.env == {"A": "1"} and trusted.approval_mode == "yolo"
    untrusted = load_settings(home, proj, trusted=False)
    assert untrusted.mcp_sources() == [] and dict(untrusted.env) == {}
    assert untrusted.approval_mode is None and untrusted.tools_allowed is None
    assert untrusted.tools_exclude == ("x",) and untrusted.model_name == "m"
    assert set(untrusted.layers[0].dropped) == {
        "mcpServers",
        "env",
        "tools.allowed",
        "tools.approvalMode",
    }
    assert set(trust_keys()) >= {
        "mcpServers",
        "env",
        "tools.allowed",
        "tools.approvalMode",
        "hooks",
    }
    assert set(user_only_keys()) == {
        "security.auth.apiKey",
        "model.generationConfig.customHeaders",
        "modelProviders",
        "providerProtocol",
        "outboundCorrelation.allowDynamicHeaderValues",
        "tools.webFetch.allowPrivateNetwork",
        *(f"tools.executionSandbox.{k}" for k in ("backend", "filesystem", "network", "hideHome")),
        *(
            f"telemetry.{k}"
            for k in (
                "enabled",
                "target",
                "otlpEndpoint",
                "otlpProtocol",
                "logPrompts",
                "outfile",
                "otlpTracesEndpoint",
                "otlpLogsEndpoint",
                "otlpMetricsEndpoint",
                "userId",
                "includeSensitiveSpanAttributes",
                "sensitiveSpanAttributeMaxLength",
                "resourceAttributes",
                "metrics.includeSessionId",
            )
        ),
        "outboundCorrelation.propagateTraceContext",
    }


def test_a_project_never_redirects_telemetry_or_propagates_trace_context(tmp_path: Path) -> None:
    """Issue 25: a project (even a trusted one) cannot point telemetry at its own collector,
    add content to spans, or hand the run's trace context to its commands."""
    home, proj = dirs(tmp_path)
    write(home / "settings.json", {"telemetry": {"enabled": True, "otlpEndpoint": "http://mine"}})
    project = {
        "telemetry": {
            "otlpEndpoint": "http://theirs",
            "otlpTracesEndpoint": "http://theirs/v1/traces",
            "includeSensitiveSpanAttributes": True,
            "resourceAttributes": {"a": "b"},
        },
        "outboundCorrelation": {"propagateTraceContext": True},
    }
    write(proj / ".headwire" / "settings.json", project)
    for trusted in (True, False):
        merged = load_settings(home, proj, trusted=trusted)
        assert dict(merged.telemetry) == {"enabled": True, "otlpEndpoint": "http://mine"}
        assert merged.propagate_trace_context is False
        assert set(merged.layers[1].dropped) == {
            "telemetry.otlpEndpoint",
            "telemetry.otlpTracesEndpoint",
            "telemetry.includeSensitiveSpanAttributes",
            "telemetry.resourceAttributes",
            "outboundCorrelation.propagateTraceContext",
        }


def test_a_project_never_sets_or_weakens_the_sandbox(tmp_path: Path) -> None:
    """Issue 25: ``tools.executionSandbox`` is user-only, taken whole from the highest layer
    that sets it; a project's (even a trusted one's) is dropped, each key named."""
    home, proj = dirs(tmp_path)
    strict = {"filesystem": "read-only", "network": "closed", "hideHome": True}
    write(home / "settings.json", {"tools": {"executionSandbox": strict}})
    loose = {"filesystem": "workspace-write", "network": "open"}
    write(proj / ".headwire" / "settings.json", {"tools": {"executionSandbox": loose}})
    for trusted in (True, False):
        merged = load_settings(home, proj, trusted=trusted)
        assert dict(merged.execution_sandbox or {}) == strict
        assert set(merged.layers[1].dropped) == {
            "tools.executionSandbox.filesystem",
            "tools.executionSandbox.network",
        }
    write(home / "settings.json", {})
    assert load_settings(home, proj).execution_sandbox is None  # a project cannot turn it on
    cli = load_settings(home, proj, json.dumps({"tools": {"executionSandbox": loose}}))
    assert dict(cli.execution_sandbox or {}) == loose


def test_untrusted_project_cannot_loosen_limits_or_pick_files(tmp_path: Path) -> None:
    """Issue 21: an untrusted project's prices, turn limit and context file names are not
    taken (each named in a note); the user's own values stay."""
    home, proj = dirs(tmp_path)
    price = {"m": {"inputPerMillionTokens": 5, "outputPerMillionTokens": 5}}
    write(home / "settings.json", {"modelPricing": price, "model": {"maxSessionTurns": 3}})
    project = {
        "modelPricing": {"m": {"inputPerMillionTokens": 0, "outputPerMillionTokens": 0}},
        "model": {"maxSessionTurns": 999},
        "context": {"fileName": "settings.json"},
    }
    write(proj / ".headwire" / "settings.json", project)
    untrusted = load_settings(home, proj, trusted=False)
    assert untrusted.model_pricing["m"].input_per_million == 5
    assert untrusted.max_session_turns == 3
    assert untrusted.context_file_names == DEFAULT_CONTEXT_FILE_NAMES
    assert set(untrusted.layers[1].dropped) == {
        "modelPricing",
        "model.maxSessionTurns",
        "context.fileName",
    }
    notes = dropped_notes(untrusted)
    assert len(notes) == 3 and all("not a trusted folder" in n for n in notes)
    trusted = load_settings(home, proj)
    assert trusted.model_pricing["m"].input_per_million == 0
    assert trusted.context_file_names == ("settings.json",)


def test_project_settings_file_stays_inside_the_project(tmp_path: Path) -> None:
    home, proj = dirs(tmp_path)
    outside = write(tmp_path / "elsewhere.json", {"model": {"name": "outside"}})
    (proj / ".headwire").mkdir()
    (proj / ".headwire" / "settings.json").symlink_to(outside)
    with pytest.raises(SettingsError, match="cannot read: it leads outside"):
        load_settings(home, proj, trusted=False)
    inside = write(proj / "shared.json", {"model": {"name": "inside"}})
    (proj / ".headwire" / "settings.json").unlink()
    (proj / ".headwire" / "settings.json").symlink_to(inside)
    assert load_settings(home, proj, trusted=False).model_name == "inside"


def test_loaded_settings_are_frozen(tmp_path: Path) -> None:
    home, proj = dirs(tmp_path)
    write(home / "settings.json", {"env": {"A": "1"}, "tools": {"exclude": ["x"]}})
    loaded = load_settings(home, proj)
    with pytest.raises(AttributeError):
        loaded.model_name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        loaded.env["B"] = "2"  # type: ignore[index]
    with pytest.raises(TypeError):
        loaded.layers[0].data["env"]["A"] = "3"  # type: ignore[index]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"tools": {"exlude": []}}', "tools.exlude: unknown key (expected one of: allowed, "),
        ('{"tools": {"exlude": []}}', "did you mean exclude?"),
        ('{"maxSessionTurns": 3}', "keep it as model.maxSessionTurns"),
        ('{"model": "gpt"}', 'model: expected an object, got the string "gpt"'),
        ('{"model": {"maxSessionTurns": "5"}}', "model.maxSessionTurns: expected an integer"),
        ('{"model": {"maxSessionTurns": -2}}', "model.maxSessionTurns: expected a number >= -1"),
        ('{"tools": {"approvalMode": "auto"}}', "expected one of default, plan, auto-edit, yolo"),
        ('{"tools": {"exclude": "x"}}', "tools.exclude: expected an array of strings"),
        ('{"tools": {"exclude": [1]}}', "tools.exclude[0]: expected a string, got 1"),
        ('{"context": {"fileName": 3}}', "context.fileName: expected a string or an array"),
        ('{"env": {"A": 1}}', "env.A: expected a string, got 1"),
        ('{"modelPricing": {"m": {"input": 1}}}', "modelPricing.m.input: unknown key"),
        ('{"context": {"fileName": "../.ssh/id_rsa"}}', "context.fileName: expected a file name"),
        ('{"context": {"fileName": ["QWEN.md", ".."]}}', "context.fileName[1]: expected a file"),
        ('{"modelPricing": {"m": {"inputPerMillionTokens": NaN}}}', "not valid JSON: NaN"),
        ('{"a": 1,}', "not valid JSON: "),
        ("[1]", "expected a JSON object at the top level, got an array of 1 item"),
    ],
)
def test_bad_settings_are_one_line_naming_file_key_and_expectation(text: str, message: str) -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings_text(text, "/p/.headwire/settings.json")
    line = str(caught.value)
    assert line.startswith("/p/.headwire/settings.json: ") and message in line
    assert "\n" not in line


def test_unreadable_and_non_utf8_files(tmp_path: Path) -> None:
    home, proj = dirs(tmp_path)
    (home / "settings.json").write_bytes(b'{"model": {"name": "\xff"}}')
    with pytest.raises(SettingsError, match=r"settings\.json: not UTF-8 \(byte \d+\)$"):
        load_settings(home, proj)
    (home / "settings.json").unlink()
    os.mkfifo(home / "settings.json")
    with pytest.raises(SettingsError, match=r"settings\.json: cannot read: not a regular file$"):
        load_settings(home, proj)  # a FIFO must not hang the start
    (home / "settings.json").unlink()
    (home / "settings.json").mkdir()
    with pytest.raises(SettingsError, match=r"settings\.json: cannot read: "):
        load_settings(home, proj)
    (home / "settings.json").rmdir()
    (home / "settings.json").write_text("   \n")
    assert load_settings(home, proj).layers[0].data == {}


def test_weird_keys_stay_on_one_line() -> None:
    with pytest.raises(SettingsError) as caught:
        parse_settings_text(json.dumps({"tools": {"a\nb" * 50: 1}}), "s.json")
    assert "\n" not in str(caught.value) and "…" in str(caught.value)


@settings(max_examples=150, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    ["model", "tools", "name", "core", "env", "x", "enabled", "context"]
                )
                | st.text(max_size=5),
                inner,
                max_size=3,
            )
        ),
        max_leaves=12,
    )
)
def test_any_json_loads_or_fails_in_one_line(value: Any) -> None:
    """Invariant: a settings text is accepted or refused with one line naming the source."""
    try:
        parse_settings_text(json.dumps(value), "src.json")
    except SettingsError as exc:
        assert str(exc).startswith("src.json: ") and "\n" not in str(exc)


def _leaves(schema: Any, prefix: str = "") -> list[str]:
    out: list[str] = []
    for key, sub in (schema.get("properties") or {}).items():
        if key == "$schema":
            continue
        if sub.get("properties"):
            out += _leaves(sub, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}")
    return out


SAMPLE_VALUES: dict[str, Any] = {
    "model.name": "m",
    "model.maxSessionTurns": 7,
    "model.maxToolCalls": 3,
    "model.maxSubagentDepth": 2.5,
    "model.parseTextToolCalls": True,
    "model.thinkingBudget": 1024,
    "security.auth.selectedType": "anthropic",
    "security.auth.baseUrl": "http://127.0.0.1:1/v1",
    "security.auth.apiKey": "sk-x",
    "modelFallbacks": "a, b,a, c, d",
    "modelPricing": {"m": {"inputPerMillionTokens": 1, "outputPerMillionTokens": 2}},
    "tools.core": ["read_file"],
    "tools.exclude": ["edit"],
    "tools.allowed": ["run_shell_command(ls)"],
    "tools.approvalMode": "plan",
    "tools.todoWrite.enabled": True,
    "tools.listDirectory.enabled": True,
    "tools.webFetch.allowPrivateNetwork": True,
    "tools.executionSandbox.backend": "bwrap",
    "tools.executionSandbox.filesystem": "workspace-write",
    "tools.executionSandbox.network": "open",
    "tools.executionSandbox.hideHome": True,
    "telemetry.enabled": True,
    "telemetry.target": "local",
    "telemetry.otlpEndpoint": "http://127.0.0.1:4318",
    "telemetry.otlpProtocol": "http",
    "telemetry.logPrompts": True,
    "telemetry.outfile": "t.json",
    "telemetry.otlpTracesEndpoint": "http://127.0.0.1:4318/v1/traces",
    "telemetry.otlpLogsEndpoint": "http://127.0.0.1:4318/v1/logs",
    "telemetry.otlpMetricsEndpoint": "http://127.0.0.1:4318/v1/metrics",
    "telemetry.userId": "u",
    "telemetry.includeSensitiveSpanAttributes": True,
    "telemetry.sensitiveSpanAttributeMaxLength": 10,
    "telemetry.resourceAttributes": {"a": "b"},
    "telemetry.metrics.includeSessionId": True,
    "outboundCorrelation.propagateTraceContext": True,
    "outboundCorrelation.allowDynamicHeaderValues": True,
    "context.fileName": "RULES.md",
    "context.autoCompactThreshold": 0.5,
    "context.clearContextOnIdle.toolResultsNumToKeep": 3,
    "context.clearContextOnIdle.toolResultsThresholdMinutes": 5,
    "context.clearContextOnIdle.toolResultsTotalCharsThreshold": 1000,
    "model.generationConfig.contextWindowSize": 32000,
    "model.generationConfig.timeout": 60000,
    "model.generationConfig.streamIdleTimeoutMs": 300000,
    "model.generationConfig.maxRetries": 1,
    "model.generationConfig.retryInitialDelayMs": 3000,
    "model.generationConfig.retryMaxDelayMs": 30000,
    "model.generationConfig.customHeaders": {"X-Client-Request-ID": "req-123"},
    "model.generationConfig.samplingParams": {"temperature": 0.2},
    "model.generationConfig.extra_body": {"enable_thinking": True},
    "model.generationConfig.enableCacheControl": False,
    "model.generationConfig.reasoning": {"effort": "high"},
    "model.generationConfig.toolResultContentFormat": "parts",
    "model.generationConfig.modalities": {"image": True},
    "model.generationConfig.splitToolMedia": False,
    "model.generationConfig.enableRequestMetadata": True,
    "model.generationConfig.schemaCompliance": "auto",
    "env": {"K": "v"},
    "modelProviders": {"openai": [{"id": "m", "baseUrl": "http://127.0.0.1:9/v1"}]},
    "providerProtocol": {"idealab": "openai"},
    "mcpServers": {"s": {"command": "c"}},
    "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]},
    "disableAllHooks": True,
    "stopHookBlockingCap": 3,
    "skills.disabled": ["a"],
    "skills.enabled": ["b"],
    "skills.defaultDisabled": ["c"],
    "skills.disabledLevels": ["project"],
    "general.chatRecording": False,
    "general.preferredEditor": "vim",
    "general.vimMode": True,
    "general.enableAutoUpdate": False,
    "general.showSessionRecap": True,
    "general.sessionRecapAwayThresholdMinutes": 10,
    "general.voice": {"enabled": False},
    "general.cleanupPeriodDays": 7,
    "general.language": "fr",
    "general.terminalBell": False,
    "general.preventSystemSleep": False,
    "general.outputStyle": "Concise",
    "general.outputLanguage": "French",
    "general.gitCoAuthor": {"commit": False},
    "general.defaultFileEncoding": "utf-8-bom",
    "output.format": "json",
    "output.showTimestamps": True,
    "ui": {"theme": "Qwen Dark", "hideBanner": True},
    "ide": {"enabled": False},
    "privacy": {"usageStatisticsEnabled": False},
    "review": {"effort": "high"},
}


def test_every_documented_key_changes_the_loaded_settings() -> None:
    """Each leaf of the schema has a sample here, and setting it changes what is loaded."""
    leaves = _leaves(settings_schema())
    assert sorted(leaves) == sorted(SAMPLE_VALUES)
    empty = merge_layers(())
    for dotted, value in SAMPLE_VALUES.items():
        data: dict[str, Any] = {}
        node = data
        parts = dotted.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
        if dotted.startswith("tools.executionSandbox."):  # a complete object or none
            node.update({"filesystem": "read-only", "network": "closed"})
        node[parts[-1]] = value
        parse_settings_text(json.dumps(data), "s")
        merged = merge_layers((make_layer("user", "s", data, trusted=True),))
        changed = merged != merge_layers((make_layer("user", "s", {}, trusted=True),))
        assert changed or merged.mcp_sources() != empty.mcp_sources(), dotted
    merged = merge_layers(
        (make_layer("user", "s", {"modelFallbacks": "a, b,a, c, d"}, trusted=True),)
    )
    assert merged.model_fallbacks == ("a", "b", "c")
    merged = merge_layers((make_layer("user", "s", SAMPLE_VALUES_NESTED, trusted=True),))
    assert merged.model_pricing == {"m": ModelPrice(1, 2, None)}
    assert merged.context_file_names == ("RULES.md",)


SAMPLE_VALUES_NESTED = {
    "modelPricing": {"m": {"inputPerMillionTokens": 1, "outputPerMillionTokens": 2}},
    "context": {"fileName": "RULES.md"},
}


def test_settings_reference_is_generated_from_the_schema() -> None:
    committed = (ROOT / "docs" / "settings.md").read_text()
    assert committed == render(), f"docs/settings.md is stale: regenerate it with `{GENERATOR}`"
    for dotted in _leaves(settings_schema()):
        assert f"`{dotted}`" in committed, dotted
