"""File writes are atomic; special files are refused, never opened for a blocking read or write."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from headwire.runtime.tools.atomic import write_atomically
from headwire.runtime.tools.base import ToolContext
from headwire.runtime.tools.edit import EditTool
from headwire.runtime.tools.read_file import ReadFileTool
from headwire.runtime.tools.read_ledger import ReadLedger
from headwire.runtime.tools.write_file import WriteFileTool


class NoSink:
    def save(self, tool_name: str, data: bytes) -> Path:
        raise OSError("no artifacts here")


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    (tmp_path / "ws").mkdir()
    return ToolContext(cwd=tmp_path / "ws", artifacts=NoSink(), timeout_s=5)


def run(tool: object, ctx: ToolContext, **args: object) -> object:
    assert tool.validate(args) is None  # type: ignore[attr-defined]
    return asyncio.run(tool.run(args, ctx))  # type: ignore[attr-defined]


def test_mode_is_kept_and_no_temporary_file_is_left(tmp_path: Path) -> None:
    target = tmp_path / "run.sh"
    target.write_text("#!/bin/sh\necho old\n")
    target.chmod(0o751)
    info = write_atomically(target, b"#!/bin/sh\necho new\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o751
    assert target.read_text() == "#!/bin/sh\necho new\n" and info.st_ino == target.stat().st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.sh"]


def test_a_hard_link_does_not_carry_the_write_outside(ctx: ToolContext, tmp_path: Path) -> None:
    """Before: write_file opened the workspace name with O_TRUNC and wrote through the link,
    overwriting the file outside the workspace."""
    outside = tmp_path / "outside.txt"
    outside.write_text("outside, untouched\n")
    inside = ctx.cwd / "linked.txt"
    os.link(outside, inside)
    ledger = ReadLedger()
    run(ReadFileTool(ledger), ctx, file_path=str(inside))
    out = run(WriteFileTool(ledger), ctx, file_path=str(inside), content="new\n")
    assert out.error is None, out  # type: ignore[attr-defined]
    assert inside.read_text() == "new\n"
    assert outside.read_text() == "outside, untouched\n"


EFBIG_CHILD = r"""
import asyncio, resource, sys
from pathlib import Path
from headwire.runtime.tools.base import ToolContext
from headwire.runtime.tools.edit import EditTool
from headwire.runtime.tools.read_file import ReadFileTool
from headwire.runtime.tools.read_ledger import ReadLedger

class NoSink:
    def save(self, name, data):
        raise OSError("none")

path = Path(sys.argv[1])
ctx = ToolContext(cwd=path.parent, artifacts=NoSink())
ledger = ReadLedger()
asyncio.run(ReadFileTool(ledger).run({"file_path": str(path), "limit": 1}, ctx))
resource.setrlimit(resource.RLIMIT_FSIZE, (60_000, 60_000))  # like `ulimit -f`
args = {"file_path": str(path), "old_string": "line 0\n", "new_string": "x" * 20_000 + "\n"}
out = asyncio.run(EditTool(ledger).run(args, ctx))
print(out.error)
"""


def test_a_failed_write_leaves_the_original_whole(tmp_path: Path) -> None:
    """EFBIG (``ulimit -f``) in the middle of an ``edit``.  Before: the file was truncated and
    cut at the limit, its tail gone."""
    path = tmp_path / "big.txt"
    original = "".join(f"line {i}\n" for i in range(7000))  # ~54 KB, under the limit
    path.write_text(original)
    done = subprocess.run(
        [sys.executable, "-c", EFBIG_CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "File too large" in done.stdout and "EFBIG" in done.stdout, done.stdout
    assert path.read_text() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt"]


@pytest.mark.parametrize("tool", ["write_file", "edit", "read_file"])
def test_fifo_is_refused_at_once(ctx: ToolContext, tool: str) -> None:
    """Before: write_file onto a FIFO blocked forever (and kept the process from exiting)."""
    fifo = ctx.cwd / "pipe"
    os.mkfifo(fifo)
    ledger = ReadLedger()
    tools = {
        "write_file": (WriteFileTool(ledger), {"content": "x"}),
        "edit": (EditTool(ledger), {"old_string": "a", "new_string": "b"}),
        "read_file": (ReadFileTool(ledger), {}),
    }
    chosen, extra = tools[tool]
    started = time.monotonic()
    out = run(chosen, ctx, file_path=str(fifo), **extra)
    assert time.monotonic() - started < 2
    assert out.error is not None and "regular file" in out.llm_text, out  # type: ignore[attr-defined]
    assert stat.S_ISFIFO(fifo.stat().st_mode)
