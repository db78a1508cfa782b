"""A ``modelProviders`` entry on the OpenAI Responses API (``wireApi: "responses"``), end to
end against a scripted Responses server (:mod:`tests.fakes.fake_responses`).

One run: the model thinks (a reasoning item with ``encrypted_content``), says a few words and
calls the shell; the second request sends the reasoning item back before the call, then the
call and its output, and the model answers.  What the requests hold besides the conversation's
text (the keys, the item kinds and their fields, the reasoning and sampling settings) is
compared with what Qwen Code 0.24.4 sent with the same settings, committed in
``tests/data/responses/upstream-0.24.4.json`` (with ``HEADWIRE_ORACLE_PKG_DIR`` upstream runs
live and must still send it; ``HEADWIRE_WRITE_CAPTURE=1`` rewrites it).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.helpers import check_capture, each_case, needs_upstream, side_by_side
from tests.fakes.fake_responses import FakeResponses
from tests.paths import ROOT

CAPTURE = ROOT / "tests" / "data" / "responses" / "upstream-0.24.4.json"
SCRIPT = [
    {
        "thinking": "plan",
        "text": "let me",
        "tool": "run_shell_command",
        "args": {"command": "echo hi"},
    },
    {"text": "done"},
]
CASES: dict[str, dict[str, Any]] = {
    "effort and sampling": {
        "reasoning": {"effort": "high"},
        "samplingParams": {"temperature": 0.3, "top_p": 0.9, "max_tokens": 1000},
    },
    "no generation settings": {},
}
_FIXED = (
    "stream",
    "store",
    "tool_choice",
    "parallel_tool_calls",
    "reasoning",
    "include",
    "temperature",
    "top_p",
    "max_output_tokens",
)


def _shape(request: dict[str, Any], default_max: bool) -> dict[str, Any]:
    """What a request holds besides the text: its keys, the settings' values, and per input
    item after the first user message its kind and fields.  ``default_max``: no
    ``max_tokens`` was set, so Qwen Code's own default ``max_output_tokens`` (16,384 here) is
    left out of the comparison: headwire sends none, and the model's own limit applies (as in
    its chat-completions requests)."""
    if default_max:
        request = {k: v for k, v in request.items() if k != "max_output_tokens"}
    items = request.get("input", [])
    first_user = next(i for i, item in enumerate(items) if item.get("role") == "user")
    return {
        "keys": sorted(request),
        "fixed": {k: request[k] for k in _FIXED if k in request},
        "items": [
            [item.get("type"), item.get("role"), sorted(item)] for item in items[first_user + 1 :]
        ],
        "tools": sorted({k for tool in request.get("tools", []) for k in tool}),
    }


def run_case(tmp: Path, which: str, case: str) -> dict[str, Any]:
    """One run of ``which`` with the case's ``generationConfig``: the shapes of its requests,
    the call's output sent back, the replayed reasoning item and the answer."""
    tmp = tmp / case.replace(" ", "-") / which
    home, proj = tmp / "home", tmp / "proj"
    folder = home / (".qwen" if which == "upstream" else ".headwire")
    folder.mkdir(parents=True)
    proj.mkdir()
    with FakeResponses([dict(reply) for reply in SCRIPT]) as fake:
        entry = {
            "id": "gpt-r",
            "envKey": "KEY_R",
            "baseUrl": fake.base_url,
            "wireApi": "responses",
            "generationConfig": CASES[case],
        }
        settings = {
            "security": {"auth": {"selectedType": "openai"}},
            "env": {"KEY_R": "sk-r"},
            "model": {"name": "gpt-r"},
            "modelProviders": {"openai": [entry]},
        }
        (folder / "settings.json").write_text(json.dumps(settings))
        flags = ["--yolo", "-o", "stream-json", "-p", "say hi"]
        argv, env = side_by_side(which, home, flags, "http://127.0.0.1:9/unused")
        done = subprocess.run(argv, env=env, cwd=proj, capture_output=True, timeout=120)
        requests, headers = list(fake.requests), list(fake.request_headers)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith(b"{")]
    second = requests[1]["input"]
    output = next(i["output"] for i in second if i.get("type") == "function_call_output")
    return {
        "requests": [_shape(r, "samplingParams" not in CASES[case]) for r in requests],
        "authorization": [
            {k.lower(): v for k, v in h.items()}.get("authorization") for h in headers
        ],
        "output has hi": "hi" in output,
        "reasoning sent back": [i for i in second if i.get("type") == "reasoning"],
        "cache key": [r.get("prompt_cache_key", "").partition(":")[0] for r in requests],
        "result": lines[-1].get("result"),
    }


def _mine(shape: dict[str, Any]) -> dict[str, Any]:
    """headwire's cache key is ``headwire:<session>`` where Qwen Code's is ``qwen-code:``."""
    return {
        **shape,
        "cache key": ["qwen-code" if k == "headwire" else k for k in shape["cache key"]],
    }


def test_headwire_sends_what_the_capture_says(tmp_path: Path) -> None:
    expected = json.loads(CAPTURE.read_text())
    got = each_case(lambda case: _mine(run_case(tmp_path, "headwire", case)), CASES)
    for case in CASES:
        assert got[case] == expected[case], case


@needs_upstream
def test_upstream_sends_what_the_capture_says(tmp_path: Path) -> None:
    check_capture(CAPTURE, each_case(lambda case: run_case(tmp_path, "upstream", case), CASES))
