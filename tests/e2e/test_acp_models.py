"""``headwire --acp``: the models an editor can switch a session to, and the switch itself.

``session/new`` and ``session/load`` answer with ``models`` (the model sent and the user's
catalog models of the run's provider, as Qwen Code answers) and ``configOptions`` (the approval
mode and the model, each a select); ``session/set_config_option`` changes either,
``session/set_model`` (ACP's unstable method, which Zed and Qwen Code speak) the model.  The
switch is the one an SDK's ``set_model`` makes: the next request goes to the named catalog
entry's server with its key; a model that cannot run is an error and changes nothing.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import env_for
from tests.e2e.test_acp_stop_reasons import Acp
from tests.fakes.fake_openai import FakeOpenAI
from tests.wire_schema import check_message

acp = pytest.importorskip("acp")


def _settings(home: Path, a: str, b: str, usual: str) -> None:
    def entry(model: str, url: str, key: str, **more: Any) -> dict[str, Any]:
        return {"id": model, "envKey": key, "baseUrl": url, **more}

    settings = {
        "security": {"auth": {"selectedType": "openai"}},
        "env": {"KEY_A": "sk-a", "KEY_B": "sk-b", "OPENAI_BASE_URL": usual},
        "model": {"name": "model-a"},
        "modelProviders": {
            "openai": [
                entry("model-a", a, "KEY_A"),
                entry("model-b", b, "KEY_B", name="B"),
                entry("model-r", "ftp://nowhere", "KEY_A"),
            ]
        },
    }
    (home / ".headwire").mkdir(parents=True, exist_ok=True)
    (home / ".headwire" / "settings.json").write_text(json.dumps(settings))


def _sent(*fakes: tuple[str, FakeOpenAI]) -> list[tuple[str, str, str | None]]:
    return [
        (name, body["model"], {k.lower(): v for k, v in headers.items()}.get("authorization"))
        for name, fake in fakes
        for body, headers in zip(fake.requests, fake.request_headers, strict=True)
    ]


def test_set_model_and_the_model_option_over_raw_stdio(tmp_path: Path) -> None:
    with (
        FakeOpenAI([{"text": "from a"}]) as a,
        FakeOpenAI([{"text": "from b"}]) as b,
        FakeOpenAI([{"text": "from usual"}]) as usual,
    ):
        _settings(tmp_path / "home", a.base_url, b.base_url, usual.base_url)
        client = Acp(tmp_path, [])
        sent: list[dict[str, Any]] = []

        def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
            message = {"jsonrpc": "2.0", "id": client.ids + 1, "method": method, "params": params}
            check_message("acp", "input", message, method)
            sent.append(message)
            return client.request(method, params)

        new = request("session/new", {"cwd": str(client.proj), "mcpServers": []})["result"]
        client.session = new["sessionId"]
        listed = [("model-a", "model-a"), ("model-b", "B")]
        assert new["models"] == {
            "currentModelId": "model-a",
            "availableModels": [{"modelId": i, "name": n} for i, n in listed],
        }
        assert [o["id"] for o in new["configOptions"]] == ["mode", "model", "output_style"]
        mode, model, _ = new["configOptions"]
        assert (mode["currentValue"], mode["category"]) == ("yolo", "mode")
        assert [o["value"] for o in mode["options"]] == ["plan", "default", "auto-edit", "yolo"]
        assert model["currentValue"] == "model-a"
        assert model["options"] == [{"value": i, "name": n} for i, n in listed]

        assert client.prompt("one")["result"] == {"stopReason": "end_turn"}
        sid = client.session
        options = request(
            "session/set_config_option", {"sessionId": sid, "configId": "model", "value": "model-b"}
        )["result"]["configOptions"]
        assert [o["currentValue"] for o in options] == ["yolo", "model-b", "default"]
        assert client.prompt("two")["result"] == {"stopReason": "end_turn"}

        refused = request("session/set_model", {"sessionId": sid, "modelId": "model-r"})
        assert (
            refused["error"]["code"] == -32602
            and "must start" in refused["error"]["data"]["details"]
        )
        for bad in ("x" * 100_000, "a\nb"):  # outside data, not a model name
            refused = request("session/set_model", {"sessionId": sid, "modelId": bad})
            assert refused["error"]["code"] == -32602, bad[:20]
        unknown = request(
            "session/set_config_option", {"sessionId": sid, "configId": "model", "value": "plain"}
        )
        assert (
            unknown["error"]["code"] == -32602 and "model-b" in unknown["error"]["data"]["details"]
        )
        other = request(
            "session/set_config_option", {"sessionId": sid, "configId": "effort", "value": "hi"}
        )
        assert other["error"]["code"] == -32602
        assert request("session/set_model", {"sessionId": sid, "modelId": "plain"}) == {
            "jsonrpc": "2.0",
            "id": client.ids,
            "result": {},
        }
        assert client.prompt("three")["result"] == {"stopReason": "end_turn"}
        options = request(
            "session/set_config_option", {"sessionId": sid, "configId": "mode", "value": "plan"}
        )["result"]["configOptions"]
        assert [o["currentValue"] for o in options] == ["plan", "plain", "default"]
        assert options[1]["options"][0] == {"value": "plain", "name": "plain"}
        assert client.close() == 0
        got = _sent(("a", a), ("b", b), ("usual", usual))
    assert got == [
        ("a", "model-a", "Bearer sk-a"),
        ("b", "model-b", "Bearer sk-b"),
        ("usual", "plain", None),
    ]


class _Client:
    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise AssertionError("no tool runs here")

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    def on_connect(self, conn: Any) -> None:
        return None


def test_the_acp_client_library_switches_the_model(tmp_path: Path) -> None:
    """The published Python client (``agent-client-protocol``) reads ``configOptions`` and
    changes the model with ``set_config_option``; every frame both ways fits the schema."""
    (tmp_path / "proj").mkdir()
    frames: list[tuple[str, dict[str, Any]]] = []

    def observe(event: Any) -> None:
        incoming = event.direction.value == "incoming"
        frames.append(("output" if incoming else "input", event.message))

    async def drive(base_a: str, base_b: str, base_usual: str) -> list[Any]:
        _settings(tmp_path / "home", base_a, base_b, base_usual)
        async with acp.spawn_agent_process(
            _Client(),
            sys.executable,
            "-m",
            "headwire",
            "--acp",
            env=env_for(tmp_path / "home"),
            cwd=str(tmp_path / "proj"),
            observers=[observe],
        ) as (conn, _proc):
            await conn.initialize(protocol_version=acp.PROTOCOL_VERSION)
            new = await conn.new_session(cwd=str(tmp_path / "proj"), mcp_servers=[])
            model = next(o for o in new.config_options if o.id == "model")
            values = [o.value for o in model.options]
            changed = await conn.set_config_option(
                config_id="model", session_id=new.session_id, value=values[-1]
            )
            await conn.prompt(session_id=new.session_id, prompt=[acp.text_block("hi")])
            return [values, [o.current_value for o in changed.config_options]]

    with (
        FakeOpenAI([{"text": "from a"}]) as a,
        FakeOpenAI([{"text": "from b"}]) as b,
        FakeOpenAI([]) as usual,
    ):
        values, current = asyncio.run(drive(a.base_url, b.base_url, usual.base_url))
        got = _sent(("a", a), ("b", b), ("usual", usual))
    assert values == ["model-a", "model-b"] and current == ["default", "model-b", "default"]
    assert got == [("b", "model-b", "Bearer sk-b")]
    for direction, message in frames:
        check_message("acp", direction, message, "acp frame")


def test_an_editor_picks_the_output_style(tmp_path: Path) -> None:
    """``output_style``, a select of ``configOptions``: ``default``, the built-ins but
    ``Learning`` (it waits at the keyboard) and the user's styles; ``session/set_config_option``
    switches the style from the next prompt on (its section in the system prompt, its reminder
    in the turn), an unknown or ``Learning`` value is ``-32602`` and changes nothing."""
    folder = tmp_path / "home" / ".qwen" / "output-styles"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("---\nname: Review\ndescription: Findings\n---\nREVIEW\n")
    with FakeOpenAI([{"text": "one"}, {"text": "two"}, {"text": "three"}]) as fake:
        settings = {
            "security": {"auth": {"selectedType": "openai"}},
            "env": {"OPENAI_API_KEY": "sk-k", "OPENAI_BASE_URL": fake.base_url},
            "model": {"name": "m"},
        }
        (tmp_path / "home" / ".headwire").mkdir(parents=True)
        (tmp_path / "home" / ".headwire" / "settings.json").write_text(json.dumps(settings))
        client = Acp(tmp_path, [])

        def request(method: str, params: dict[str, Any]) -> dict[str, Any]:
            message = {"jsonrpc": "2.0", "id": client.ids + 1, "method": method, "params": params}
            check_message("acp", "input", message, method)
            return client.request(method, params)

        new = request("session/new", {"cwd": str(client.proj), "mcpServers": []})["result"]
        client.session = sid = new["sessionId"]
        (style,) = [o for o in new["configOptions"] if o["id"] == "output_style"]
        values = [o["value"] for o in style["options"]]
        assert style["currentValue"] == "default" and "category" not in style
        assert values == ["default", "Concise", "Proactive", "Explanatory", "Review"]
        assert client.prompt("plain")["result"] == {"stopReason": "end_turn"}
        change = {"sessionId": sid, "configId": "output_style", "value": "review"}
        options = request("session/set_config_option", change)["result"]["configOptions"]
        assert [o["currentValue"] for o in options][-1] == "Review"
        assert client.prompt("styled")["result"] == {"stopReason": "end_turn"}
        for bad in ("Learning", "nosuch", "x" * 100_000):
            refused = request("session/set_config_option", {**change, "value": bad})
            assert refused["error"]["code"] == -32602, bad[:20]
        back = request("session/set_config_option", {**change, "value": "default"})
        assert back["result"]["configOptions"][-1]["currentValue"] == "default"
        assert client.prompt("plain again")["result"] == {"stopReason": "end_turn"}
        assert client.close() == 0
        systems = [body["messages"][0]["content"] for body in fake.requests]
        lasts = [str(body["messages"][-1]["content"]) for body in fake.requests]
    assert ["# Output Style: Review\nREVIEW" in s for s in systems] == [False, True, False]
    assert ["Review output style is active." in t for t in lasts] == [False, True, False]
