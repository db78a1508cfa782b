"""``headwire.sdk`` driving the real upstream Qwen Code CLI (0.24.4, Node) in a persistent session.

This is the session the published ``qwen-code-sdk`` cannot read: its tool-result line is
about 65.8 KB, over that SDK's 64 KiB ``readline`` limit.  The model is the fake OpenAI server
in ``tests/fakes``.  Skipped unless ``node`` and the ``@qwen-code/qwen-code`` package are present
(``HEADWIRE_ORACLE_PKG_DIR``, else ``QWEN_ORACLE_PKG_DIR``, else
``/tmp/oracle-home/node_modules/@qwen-code/qwen-code``).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from headwire.sdk import Message, Options, ResultMessage, Session, UserMessage
from headwire.wire import encode
from tests.fakes.fake_openai import FakeOpenAI

PKG = Path(
    os.environ.get("HEADWIRE_ORACLE_PKG_DIR")
    or os.environ.get("QWEN_ORACLE_PKG_DIR")
    or "/tmp/oracle-home/node_modules/@qwen-code/qwen-code"
)
ENTRY = PKG / "cli-entry.js"

pytestmark = [
    pytest.mark.skipif(
        shutil.which("node") is None or not ENTRY.exists(),
        reason="upstream Qwen Code not installed",
    ),
    pytest.mark.slow,  # the Node CLI takes seconds to start
]

BIG = {
    "tool": "run_shell_command",
    "args": {
        "command": "python3 -c \"print('x'*499998)\"",
        "description": "print a large output",
        "is_background": False,
    },
}


def test_headwire_sdk_drives_upstream_qwen_through_a_long_line(tmp_path: Path) -> None:
    version = json.loads((PKG / "package.json").read_text()).get("version")
    if version != "0.24.4":
        pytest.skip(f"upstream Qwen Code {version}, not 0.24.4")
    home, proj = tmp_path / "home", tmp_path / "proj"
    home.mkdir()
    proj.mkdir()

    async def main(base_url: str) -> tuple[list[Message], list[Message], Session]:
        env = {
            "HOME": str(home),
            "OPENAI_API_KEY": "sk-fake-local",
            "OPENAI_BASE_URL": base_url,
            "OPENAI_MODEL": "fake-model",
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
            "NO_COLOR": "1",
            "LANG": "C.UTF-8",
        }
        opts = Options(
            executable=str(ENTRY),
            cwd=proj,
            env=env,
            model="fake-model",
            auth_type="openai",
            approval_mode="yolo",
        )
        session = Session(opts)
        try:
            await session.start()
            assert session.server_info["capabilities"]["can_handle_can_use_tool"] is True
            first = [m async for m in session.turn("Run the big output tool once, then say done.")]
            second = [m async for m in session.turn("Say done again.")]
        finally:  # upstream lingers for seconds after EOF: terminate it after 3 s
            await session.close(timeout_s=3.0)
        return first, second, session

    with FakeOpenAI([BIG, {"text": "done"}, {"text": "done again"}]) as fake:
        first, second, session = asyncio.run(asyncio.wait_for(main(fake.base_url), 120))
    assert session.returncode is not None  # reaped
    (block,) = [r for m in first if isinstance(m, UserMessage) for r in m.tool_results]
    assert isinstance(block.content, str) and len(encode(block.content)) == 65_536
    line = len(encode(next(m for m in first if isinstance(m, UserMessage)).raw)) + 1
    assert line > 65_536  # a line the published qwen-code-sdk cannot read
    assert isinstance(first[-1], ResultMessage) and first[-1].result == "done"
    assert isinstance(second[-1], ResultMessage) and second[-1].result == "done again"
