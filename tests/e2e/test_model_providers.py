"""``modelProviders`` end to end: a user's catalog of models, a real run, the requests two local
fake servers receive.

Each case is run against two fakes: ``env`` (``OPENAI_BASE_URL``, key ``sk-fake-local``) and
``catalog`` (the entry's ``baseUrl``).  What reached which fake (the model, the API key, the
entry's custom header, the sampling keys) is compared with what upstream Qwen Code 0.24.4 sent
with the same settings, committed in ``tests/data/model-providers/upstream-0.24.4.json`` (with
``HEADWIRE_ORACLE_PKG_DIR`` upstream is run live and must still send what the capture says;
``HEADWIRE_WRITE_CAPTURE=1`` rewrites it).  Upstream also sends ``max_tokens: 32000`` by
default, which headwire does not: that key is left out of the comparison.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import check_capture, each_case, needs_upstream, side_by_side
from tests.fakes.fake_openai import FakeOpenAI
from tests.paths import ROOT

CAPTURE = ROOT / "tests" / "data" / "model-providers" / "upstream-0.24.4.json"
CATALOG_URL = "CATALOG_URL"
"""Stands for the catalog fake's base URL in the settings below."""


def _entry(**changes: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": "prov-model",
        "envKey": "MY_KEY",
        "baseUrl": CATALOG_URL,
        "generationConfig": {
            "samplingParams": {"temperature": 0.3},
            "customHeaders": {"X-Test": "prov"},
        },
    }
    entry.update(changes)
    return {k: v for k, v in entry.items() if v is not None}


_OPENAI = {"security": {"auth": {"selectedType": "openai"}}}
_TOP_LEVEL = {"generationConfig": {"samplingParams": {"temperature": 0.9, "top_p": 0.5}}}

CASES: dict[str, tuple[dict[str, Any], list[str], dict[str, str]]] = {
    # model.name names an entry: its server, its key, its generationConfig whole (top_p and
    # the top-level temperature are not sent)
    "model.name": (
        {"modelProviders": {"openai": [_entry()]}, "model": {"name": "prov-model", **_TOP_LEVEL}},
        [],
        {"MY_KEY": "key-my"},
    ),
    # -m names it: the entry's key wins over --openai-api-key, its baseUrl over
    # --openai-base-url (where nothing listens)
    "flags": (
        {"modelProviders": {"openai": [_entry()]}},
        [
            *("-m", "prov-model", "--openai-api-key", "key-flag"),
            *("--openai-base-url", "http://127.0.0.1:9/v1"),
        ],
        {"MY_KEY": "key-my"},
    ),
    # a model the catalog does not list runs as before, with model.generationConfig
    "not listed": (
        {"modelProviders": {"openai": [_entry()]}, "model": {"name": "other", **_TOP_LEVEL}},
        [],
        {"MY_KEY": "key-my"},
    ),
    # envKey's variable unset: the provider's usual key
    "envKey unset": (
        {"modelProviders": {"openai": [_entry()]}, "model": {"name": "prov-model"}},
        [],
        {},
    ),
    # a provider id of the user's, mapped by providerProtocol
    "providerProtocol": (
        {
            "modelProviders": {"idealab": [_entry()]},
            "providerProtocol": {"idealab": "openai"},
            "model": {"name": "prov-model"},
        },
        [],
        {"MY_KEY": "key-my"},
    ),
    # the key from the settings' env block
    "env block": (
        {
            "env": {"MY_KEY": "key-envblock"},
            "modelProviders": {"openai": [_entry()]},
            "model": {"name": "prov-model"},
        },
        [],
        {},
    ),
}


def run_case(tmp: Path, which: str, case: str) -> dict[str, Any]:
    """One run of ``which`` for ``case``: what the first request carried, and where it went."""
    settings, flags, env_extra = CASES[case]
    home, proj = tmp / which / "home", tmp / which / "proj"
    proj.mkdir(parents=True)
    folder = ".qwen" if which == "upstream" else ".headwire"
    (home / folder).mkdir(parents=True)
    with FakeOpenAI([{"text": "done"}] * 4) as env_fake, FakeOpenAI([{"text": "done"}] * 4) as cat:
        text = json.dumps({**_OPENAI, **settings}).replace(CATALOG_URL, cat.base_url)
        (home / folder / "settings.json").write_text(text)
        argv = [*flags, "-o", "json", "-p", "hi"]
        command, env = side_by_side(
            which, home, argv, env_fake.base_url, OPENAI_API_KEY="sk-fake-local"
        )
        env.update(env_extra)
        done = subprocess.run(command, cwd=proj, env=env, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    (where, fake), *_ = [(n, f) for n, f in (("env", env_fake), ("catalog", cat)) if f.requests]
    body = fake.requests[0]
    headers = {k.lower(): v for k, v in fake.request_headers[0].items()}
    return {
        "server": where,
        "model": body["model"],
        "authorization": headers.get("authorization"),
        "x-test": headers.get("x-test"),
        "sampling": {k: body[k] for k in ("temperature", "top_p") if k in body},
    }


def test_a_catalog_entry_is_the_models_whole_configuration(tmp_path: Path) -> None:
    """Without the oracle: headwire sends what the capture says upstream sent, case by case."""
    expected = json.loads(CAPTURE.read_text())
    for case in CASES:
        assert run_case(tmp_path / case.replace(" ", "-"), "headwire", case) == expected[case], case


@pytest.mark.slow  # the Node CLI takes seconds to start
@needs_upstream
def test_upstream_sends_what_the_capture_says(tmp_path: Path) -> None:
    got = each_case(
        lambda case: run_case(tmp_path / case.replace(" ", "-"), "upstream", case), CASES
    )
    check_capture(CAPTURE, got)


def test_set_model_takes_the_named_entrys_server_key_and_settings(tmp_path: Path) -> None:
    """In a persistent session, ``set_model`` to another catalog model sends the next turn to
    that entry's server with its key and header; to an entry that cannot run (its base URL is
    not HTTP) it is refused and
    nothing changes; to a model the catalog does not list, the usual server is used.
    ``get_available_models`` lists the catalog's models the run can switch to."""
    from tests.e2e.test_session import Live, control, user

    def entry(model: str, url: str, key: str, header: str, **more: Any) -> dict[str, Any]:
        generation = {"customHeaders": {"X-Test": header}}
        return {"id": model, "envKey": key, "baseUrl": url, "generationConfig": generation, **more}

    with (
        FakeOpenAI([{"text": "from a"}] * 3) as a,
        FakeOpenAI([{"text": "from b"}]) as b,
        FakeOpenAI([{"text": "from usual"}]) as usual,
    ):
        settings = {
            **_OPENAI,
            "env": {"KEY_A": "sk-a", "KEY_B": "sk-b", "OPENAI_BASE_URL": usual.base_url},
            "model": {"name": "model-a"},
            "modelProviders": {
                "openai": [
                    entry("model-a", a.base_url, "KEY_A", "a"),
                    entry("model-b", b.base_url, "KEY_B", "b", name="B"),
                    entry("model-r", "ftp://nowhere", "KEY_A", "r"),
                ]
            },
        }
        (tmp_path / "home" / ".headwire").mkdir(parents=True)
        (tmp_path / "home" / ".headwire" / "settings.json").write_text(json.dumps(settings))
        live = Live([], tmp_path)
        live.send(control("i", "initialize"), control("m", "get_available_models"))
        listed = live.until("control_response")[-1]
        if listed["response"]["request_id"] == "i":
            listed = live.until("control_response")[-1]
        models = listed["response"]["response"]["models"]
        assert models == [{"id": "model-a", "name": "model-a"}, {"id": "model-b", "name": "B"}]
        live.send(user("one"))
        assert live.until("result")[-1]["result"] == "from a"
        live.send(control("1", "set_model", model="model-b"), user("two"))
        assert live.until("result")[-1]["result"] == "from b"
        live.send(control("2", "set_model", model="model-r"))
        refused = live.until("control_response")[-1]["response"]
        assert refused["subtype"] == "error" and "must start with http" in refused["error"]
        live.send(control("3", "set_model", model="plain"), user("three"))
        assert live.until("result")[-1]["result"] == "from usual"
        code, _ = live.finish()
        sent = [
            (fake_name, body["model"], headers.get("authorization"), headers.get("x-test"))
            for fake_name, fake in (("a", a), ("b", b), ("usual", usual))
            for body, headers in zip(
                fake.requests,
                ({k.lower(): v for k, v in h.items()} for h in fake.request_headers),
                strict=True,
            )
        ]
    assert code == 0, live.stderr.decode()[-2000:]
    assert sent == [
        ("a", "model-a", "Bearer sk-a", "a"),
        ("b", "model-b", "Bearer sk-b", "b"),
        ("usual", "plain", None, None),
    ]
