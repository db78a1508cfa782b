"""read_file costs the window in every encoding, and keeps a file's final newline."""

from __future__ import annotations

import asyncio
import codecs
import subprocess
import sys
from pathlib import Path

from headwire.runtime.tools.base import ToolContext
from headwire.runtime.tools.read_file import ReadFileTool


class NoSink:
    def save(self, tool_name: str, data: bytes) -> Path:
        raise OSError("no artifacts here")


def read(path: Path, **args: object) -> str:
    ctx = ToolContext(cwd=path.parent, artifacts=NoSink())
    tool = ReadFileTool()
    call = {"file_path": str(path), **args}
    assert tool.validate(call) is None
    out = asyncio.run(tool.run(call, ctx))
    assert out.error is None, out
    return out.llm_text


def test_final_newline_is_kept(tmp_path: Path) -> None:
    """Before: ``a\\nb\\n`` read as ``a\\nb``, so writing it back lost the newline."""
    with_newline = tmp_path / "a.txt"
    with_newline.write_text("a\nb\n")
    assert read(with_newline) == "a\nb\n"
    without = tmp_path / "b.txt"
    without.write_text("a\nb")
    assert read(without) == "a\nb"
    assert read(with_newline, offset=1) == "Showing lines 2-2 of 2 total lines.\n\n---\n\nb\n"
    assert read(with_newline, limit=1).endswith("---\n\na")


def test_utf16_window(tmp_path: Path) -> None:
    path = tmp_path / "u16.txt"
    path.write_bytes(
        codecs.BOM_UTF16_LE + "".join(f"zeile {i} é\n" for i in range(50)).encode("utf-16-le")
    )
    assert read(path, offset=10, limit=2) == (
        "Showing lines 11-12 of 50 total lines.\n\n---\n\nzeile 10 é\nzeile 11 é"
    )
    assert read(path).endswith("zeile 49 é\n")


CHILD = r"""
import asyncio, resource, sys, time
from pathlib import Path
from headwire.runtime.tools.base import ToolContext
from headwire.runtime.tools.read_file import ReadFileTool

class NoSink:
    def save(self, name, data):
        raise OSError("none")

path = Path(sys.argv[1])
started = time.monotonic()
ctx = ToolContext(cwd=path.parent, artifacts=NoSink())
out = asyncio.run(ReadFileTool().run({"file_path": str(path), "limit": 5}, ctx))
# VmHWM: this process's own peak (ru_maxrss keeps the forking parent's peak across exec)
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM"))
rss_mib = int(hwm.split()[1]) // 1024
print(round(time.monotonic() - started, 2), rss_mib)
print(out.llm_text[:80])
"""


def test_huge_utf16_file_costs_the_window(tmp_path: Path) -> None:
    """A 1 GB sparse UTF-16 file, five lines asked for.  Before: 2.1 GB RSS and 8 s."""
    path = tmp_path / "huge16.txt"
    with path.open("wb") as handle:
        handle.write(codecs.BOM_UTF16_LE + "".join(f"L{i}\n" for i in range(5)).encode("utf-16-le"))
        handle.truncate(1 << 30)
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seconds, rss_mib = done.stdout.split("\n")[0].split()
    assert done.stdout.split("\n")[1].startswith("Showing lines 1-5 of at least")
    assert float(seconds) < 2.0 and int(rss_mib) < 400, done.stdout
