"""Settings applied to flags: flags win, lists merge as documented, env never overrides."""

from __future__ import annotations

from pathlib import Path

import pytest

from headwire.cli.flags.agent import apply_compat, build_parser
from headwire.cli.flags.settings import apply_env, apply_settings, read_prompt_files
from headwire.errors import UsageError
from headwire.runtime.agents.definitions import AgentFileError, agents_from_json
from headwire.runtime.config.settings import make_layer, merge_layers


def settings(data: dict) -> object:  # type: ignore[type-arg]
    return merge_layers((make_layer("user", "u", data, trusted=True),))


def parse(*argv: str):  # type: ignore[no-untyped-def]
    args = build_parser().parse_args(list(argv))
    apply_compat(args)
    return args


def test_flags_win_and_lists_merge() -> None:
    data = {
        "model": {"name": "s-model", "maxSessionTurns": 4},
        "tools": {
            "core": ["read_file"],
            "exclude": ["edit"],
            "allowed": ["glob"],
            "approvalMode": "plan",
        },
        "modelFallbacks": "x,y",
    }
    out = apply_settings(parse(), settings(data))  # type: ignore[arg-type]
    assert (out.model, out.max_session_turns, out.approval_mode) == ("s-model", 4, "plan")
    assert (out.core_tools, out.exclude_tools, out.allowed_tools) == (
        ["read_file"],
        ["edit"],
        ["glob"],
    )
    assert out.fallback_model == ["x", "y"]
    flags = parse(
        "-m",
        "f",
        "--max-turns",
        "2",
        "--yolo",
        "--core-tools",
        "grep_search",
        "--exclude-tools",
        "glob",
        "--allowed-tools",
        "edit",
        "--fallback-model",
        "z",
    )
    out = apply_settings(flags, settings(data))  # type: ignore[arg-type]
    assert (out.model, out.max_session_turns, out.approval_mode) == ("f", 2, None)
    assert out.core_tools == ["grep_search"] and out.exclude_tools == ["edit", "glob"]
    assert out.allowed_tools == ["edit"] and out.fallback_model == ["z"]
    assert flags.exclude_tools == ["glob"]  # the parsed flags are not changed
    assert apply_settings(parse(), settings({})).max_session_turns == -1  # type: ignore[arg-type]


def test_env_fills_only_missing_variables() -> None:
    environ = {"A": "from the environment"}
    assert apply_env({"A": "settings", "B": "settings"}, environ) == ["B"]
    assert environ == {"A": "from the environment", "B": "settings"}


def test_prompt_files(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("base")
    (tmp_path / "a.md").write_text("extra")
    args = parse(
        "--system-prompt-file",
        "p.md",
        "--append-system-prompt",
        "flag",
        "--append-system-prompt-file",
        "a.md",
    )
    read_prompt_files(args, tmp_path)
    assert (args.system_prompt, args.append_system_prompt) == ("base", "flag\n\nextra")
    with pytest.raises(UsageError, match="cannot be used together"):
        read_prompt_files(parse("--system-prompt", "x", "--system-prompt-file", "p.md"), tmp_path)


def test_inline_agents_format() -> None:
    agents = agents_from_json(
        '{"r": {"description": "d", "prompt": "p", "tools": ["Read"], "model": "m"}}'
    )
    assert agents["r"].system_prompt == "p" and agents["r"].tools == ("Read",)
    notes: list[str] = []
    claude = '{"r": {"description": "d", "prompt": "p", "maxTurns": 3, "disallowedTools": []}}'
    assert agents_from_json(claude, note=notes.append)["r"].description == "d"
    assert notes == ["headwire: note: --agents: 'r': not used here: disallowedTools, maxTurns"]
    for text, message in [
        ("[]", "expected a JSON object"),
        ("{", "not valid JSON"),
        ('{"r": 1}', "'r': expected an object"),
        ('{"r": {"description": "d"}}', "'prompt' must be a non-empty string"),
        ('{"r": {"description": "d", "prompt": "p", "tools": "Read"}}', "'tools' must be an array"),
        ('{"r": {"description": "d", "prompt": "p", "colour": "red"}}', "unknown key 'colour'"),
    ]:
        with pytest.raises(AgentFileError, match=message):
            agents_from_json(text)
