"""One switch of a session's model: :meth:`Agent.switch_model`, and the code that uses it.

An SDK's ``set_model``, ACP's ``session/set_model`` and ``model`` option, and the REPL's
``/model`` all switch through it, so a model of another catalog route always brings its own
client and the configuration always names the model sent.  Nothing else assigns a model's name
or the configuration's ``model_name``.
"""

from __future__ import annotations

import ast

from tests.paths import ROOT

SRC = ROOT / "src" / "headwire"
SWITCH = SRC / "runtime" / "agent" / "loop.py"
USERS = {"acp/server.py", "cli/run/repl.py", "cli/run/session.py"}
"""The modules that switch a running session's model."""


def _assignments(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        for target in targets:
            if not isinstance(target, ast.Attribute):
                continue
            owner = target.value
            renames = target.attr == "name" and (
                isinstance(owner, ast.Attribute) and owner.attr == "model"
            )
            if renames or target.attr == "model_name":
                found.append((node.lineno, ast.unparse(target)))
    return found


def test_only_the_switch_renames_a_sessions_model() -> None:
    offenders = [
        f"{path.relative_to(SRC)}:{line}: {target}"
        for path in sorted(SRC.rglob("*.py"))
        if path != SWITCH
        for line, target in _assignments(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert offenders == []
    assert [t for _, t in _assignments(ast.parse(SWITCH.read_text(encoding="utf-8")))] == [
        "self.model.name",
        "self.config.model_name",
    ]


def test_the_switch_has_these_users() -> None:
    users = {
        str(path.relative_to(SRC))
        for path in SRC.rglob("*.py")
        if ".switch_model(" in path.read_text(encoding="utf-8")
    }
    assert users == USERS


def test_what_is_no_model_name_is_refused_and_changes_nothing() -> None:
    """A client's ``set_model`` is outside data: a megabyte of name, a control character or a
    lone surrogate would go to the server and back out on every wire."""
    import pytest

    from headwire.errors import ConfigError
    from headwire.runtime.agent.loop import MODEL_NAME_CHARS, Agent

    class Config:
        model_name = "m"

    class Model:
        name = "m"

    agent = Agent.__new__(Agent)
    agent.config, agent.model = Config(), Model()  # type: ignore[assignment]
    for bad in ("x" * (MODEL_NAME_CHARS + 1), "a\nb", "\x1b[2J", "\ud800", "a\u2028b"):
        with pytest.raises(ConfigError):
            agent.switch_model(bad)
        assert (agent.model.name, agent.config.model_name) == ("m", "m")
    agent.switch_model("accounts/fireworks/models/qwen3 coder")
    assert agent.config.model_name == "accounts/fireworks/models/qwen3 coder"
