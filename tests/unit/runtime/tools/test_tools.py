"""The built-in tools against real files and real ``bash`` subprocesses."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import stat
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from headwire.runtime.policy.shell_rules import is_read_only_command
from headwire.runtime.tools import shell as shell_module
from headwire.runtime.tools.base import ApprovalMode, Tool, ToolContext, ToolOutcome
from headwire.runtime.tools.edit import EditTool
from headwire.runtime.tools.glob import GlobTool, compile_glob
from headwire.runtime.tools.grep import GrepTool
from headwire.runtime.tools.ls import ListDirectoryTool
from headwire.runtime.tools.read_file import ReadFileTool
from headwire.runtime.tools.read_ledger import ReadLedger
from headwire.runtime.tools.registry import builtin_tools, canonical_name, select_tools
from headwire.runtime.tools.shell import SAVED_FOOTER, ShellTool, truncated_envelope
from headwire.runtime.tools.toolset import ToolOptions, session_tools
from headwire.runtime.tools.write_file import WriteFileTool

MODES: tuple[ApprovalMode, ...] = ("default", "plan", "auto-edit", "yolo")


class DirSink:
    """A tiny artifact sink: numbered private files in one directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.count = 0

    def save(self, tool_name: str, data: bytes) -> Path:
        self.count += 1
        path = self.directory / f"{tool_name}_{self.count}.output"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    other = tmp_path / "outside"
    other.mkdir()
    (other / "secret.txt").write_text("top secret\n")
    return other


@pytest.fixture
def ctx(tmp_path: Path, ws: Path) -> ToolContext:
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    return ToolContext(cwd=ws, artifacts=DirSink(artifacts))


def run(coro: Coroutine[Any, Any, ToolOutcome]) -> ToolOutcome:
    return asyncio.run(coro)


T = TypeVar("T")


def run_any(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def call(tool: Tool, ctx: ToolContext, **args: Any) -> ToolOutcome:
    problem = tool.validate(args)
    assert problem is None, problem
    return run(tool.run(args, ctx))


def editor_after_read(ctx: ToolContext, path: Path) -> EditTool:
    """An ``edit`` tool whose session has read ``path`` (read before write)."""
    ledger = ReadLedger()
    assert call(ReadFileTool(ledger), ctx, file_path=str(path)).error is None
    return EditTool(ledger)


# ---------------------------------------------------------------------------------------------
# read_file


def test_read_file_full_and_window(ctx: ToolContext, ws: Path) -> None:
    path = ws / "a.txt"
    path.write_text("".join(f"line {i}   \n" for i in range(1, 11)))
    full = call(ReadFileTool(), ctx, file_path=str(path))
    assert full.error is None and full.display is None
    assert full.llm_text == "\n".join(f"line {i}" for i in range(1, 11)) + "\n"  # kept, as upstream
    part = call(ReadFileTool(), ctx, file_path=str(path), offset=2, limit=3)
    assert part.llm_text == "Showing lines 3-5 of 10 total lines.\n\n---\n\nline 3\nline 4\nline 5"
    assert part.display == "Read lines 3-5 of 10 from a.txt"


def test_read_file_caps_characters(ctx: ToolContext, ws: Path) -> None:
    path = ws / "wide.txt"
    path.write_text(("y" * 1000 + "\n") * 40)
    out = call(ReadFileTool(), ctx, file_path=str(path))
    assert out.display == "Read lines 1-25 of 40 from wide.txt (truncated)"
    assert out.llm_text.endswith("... [truncated]")
    assert len(out.llm_text) < 25_100


def test_read_file_errors(ctx: ToolContext, ws: Path) -> None:
    tool = ReadFileTool()
    assert tool.validate({"file_path": "rel.txt"}) == (
        "File path must be absolute, but was relative: rel.txt. You must provide an absolute path."
    )
    assert (
        tool.validate({"file_path": str(ws / "x"), "offset": -1})
        == "Offset must be a non-negative integer"
    )
    assert (
        tool.validate({"file_path": str(ws / "x"), "limit": 0})
        == "Limit must be a positive integer"
    )
    assert tool.validate({}) == "params must have required property 'file_path'"
    assert tool.validate({"file_path": 3}) == "params/file_path must be string"
    missing = call(tool, ctx, file_path=str(ws / "nope.txt"))
    assert missing.error == f"File not found: {ws / 'nope.txt'}"
    assert missing.error_type == "execution_failed" and missing.display == "File not found."
    directory = call(tool, ctx, file_path=str(ws))
    assert directory.display == "Path is a directory." and directory.error
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    binary = call(tool, ctx, file_path=str(ws / "blob.bin"))
    assert binary.error is None and binary.display == "Skipped binary file: blob.bin"


def test_read_file_confinement(ctx: ToolContext, ws: Path, outside: Path) -> None:
    tool = ReadFileTool()
    for raw in (str(outside / "secret.txt"), str(ws / ".." / "outside" / "secret.txt")):
        out = call(tool, ctx, file_path=raw)
        assert out.error_type == "execution_denied"
        assert out.llm_text.startswith("Path is outside the workspace: ")
        assert "top secret" not in out.llm_text
    (ws / "link.txt").symlink_to(outside / "secret.txt")
    (ws / "linkdir").symlink_to(outside)
    for path in (ws / "link.txt", ws / "linkdir" / "secret.txt"):
        out = call(tool, ctx, file_path=str(path))
        assert out.error_type == "execution_denied" and "top secret" not in out.llm_text
    (ws / "inner.txt").write_text("fine\n")
    (ws / "ok-link").symlink_to(ws / "inner.txt")
    assert call(tool, ctx, file_path=str(ws / "ok-link")).llm_text == "fine\n"


def test_read_file_reads_artifacts_when_sink_exposes_directory(ctx: ToolContext) -> None:
    saved = ctx.artifacts.save("run_shell_command", b"saved output\n")
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
    assert call(ReadFileTool(), ctx, file_path=str(saved)).llm_text == "saved output\n"


# ---------------------------------------------------------------------------------------------
# write_file and edit


def test_write_file_create_and_overwrite(ctx: ToolContext, ws: Path) -> None:
    target = ws / "deep" / "dir" / "f.txt"
    writer = WriteFileTool(ReadLedger())
    created = call(writer, ctx, file_path=str(target), content="one\ntwo\n")
    assert created.llm_text == f"Successfully created and wrote to new file: {target}."
    assert created.display is None and target.read_text() == "one\ntwo\n"
    again = call(writer, ctx, file_path=str(target), content="one\nthree\n")  # it wrote it
    assert again.llm_text == f"Successfully overwrote file: {target}."
    assert "-two" in again.extra["diff"] and "+three" in again.extra["diff"]
    assert WriteFileTool().validate({"file_path": str(ws), "content": ""}) == (
        f"Path is a directory, not a file: {ws}"
    )
    assert (
        WriteFileTool().validate({"file_path": "x.txt", "content": ""})
        == "File path must be absolute: x.txt"
    )


def test_write_file_confinement(ctx: ToolContext, ws: Path, outside: Path) -> None:
    tool = WriteFileTool()
    (ws / "evil").symlink_to(outside / "secret.txt")
    (ws / "dangling").symlink_to(outside / "new.txt")
    for path in (outside / "x.txt", ws / ".." / "outside" / "y.txt", ws / "evil", ws / "dangling"):
        out = call(tool, ctx, file_path=str(path), content="pwned")
        assert out.error_type == "execution_denied", path
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert not (outside / "new.txt").exists() and not (outside / "x.txt").exists()


def test_edit_success_and_snippet(ctx: ToolContext, ws: Path) -> None:
    path = ws / "code.py"
    path.write_text("".join(f"l{i}\n" for i in range(1, 21)))
    out = call(
        editor_after_read(ctx, path),
        ctx,
        file_path=str(path),
        old_string="l10\n",
        new_string="TEN\n",
    )
    assert out.error is None and out.display is None
    assert out.llm_text.startswith(f"The file: {path} has been updated. Showing lines 6-14 of 21")
    assert "TEN" in path.read_text() and "l10\n" not in path.read_text()
    created = call(EditTool(), ctx, file_path=str(ws / "new.txt"), old_string="", new_string="a\nb")
    assert created.llm_text.startswith(f"Created new file: {ws / 'new.txt'} with provided content.")
    assert (ws / "new.txt").read_text() == "a\nb"


def test_edit_errors(ctx: ToolContext, ws: Path) -> None:
    path = ws / "f.txt"
    path.write_text("x = 1\nx = 1\n")
    editor = editor_after_read(ctx, path)
    zero = call(editor, ctx, file_path=str(path), old_string="y = 2", new_string="z")
    assert zero.error_type == "execution_failed"
    assert zero.error is not None and zero.error.startswith(
        f"Failed to edit, 0 occurrences found for old_string in {path}. No edits made."
    )
    assert zero.display == "Error: Failed to edit, could not find the string to replace."
    many = call(editor, ctx, file_path=str(path), old_string="x = 1", new_string="x = 2")
    assert (
        many.error == f"Failed to edit. Found 2 occurrences for old_string in {path} "
        "but replace_all was not enabled."
    )
    same = call(
        editor,
        ctx,
        file_path=str(path),
        old_string="x = 1",
        new_string="x = 1",
        replace_all=True,
    )
    assert same.error is not None and same.error.startswith("No changes to apply.")
    exists = call(editor, ctx, file_path=str(path), old_string="", new_string="new")
    assert exists.error == f"File already exists, cannot create: {path}"
    missing = call(editor, ctx, file_path=str(ws / "nope"), old_string="a", new_string="b")
    assert missing.error == f"File not found: {ws / 'nope'}"
    assert path.read_text() == "x = 1\nx = 1\n"
    replaced = call(
        editor,
        ctx,
        file_path=str(path),
        old_string="x = 1",
        new_string="x = 2",
        replace_all=True,
    )
    assert replaced.error is None and path.read_text() == "x = 2\nx = 2\n"


def test_edit_keeps_crlf_and_confinement(ctx: ToolContext, ws: Path, outside: Path) -> None:
    path = ws / "win.txt"
    path.write_bytes(b"a\r\nb\r\nc\r\n")
    out = call(
        editor_after_read(ctx, path), ctx, file_path=str(path), old_string="b\nc", new_string="B\nC"
    )
    assert out.error is None and path.read_bytes() == b"a\r\nB\r\nC\r\n"
    (ws / "link").symlink_to(outside / "secret.txt")
    for target in (outside / "secret.txt", ws / "link", ws / ".." / "outside" / "secret.txt"):
        denied = call(EditTool(), ctx, file_path=str(target), old_string="top", new_string="x")
        assert denied.error_type == "execution_denied"
    assert (outside / "secret.txt").read_text() == "top secret\n"


# ---------------------------------------------------------------------------------------------
# list_directory, glob, grep_search


def test_list_directory(ctx: ToolContext, ws: Path, outside: Path) -> None:
    (ws / "src").mkdir()
    (ws / "b.txt").write_text("b")
    (ws / "A.md").write_text("a")
    (ws / "debug.log").write_text("x")
    (ws / ".gitignore").write_text("*.log\n")
    out = call(ListDirectoryTool(), ctx, path=str(ws))
    assert (
        out.llm_text
        == f"Listed 4 item(s) in {ws}:\n---\n[DIR] src\n.gitignore\nA.md\nb.txt\n\n(1 git-ignored)"
    )
    assert out.display == "Listed 4 item(s) (1 git-ignored)"
    ignored = call(ListDirectoryTool(), ctx, path=str(ws), ignore=["*.md", "b.tx?"])
    assert ignored.display == "Listed 2 item(s) (1 git-ignored)"
    (ws / "empty").mkdir()
    assert call(ListDirectoryTool(), ctx, path=str(ws / "empty")).display == "Directory is empty."
    not_dir = call(ListDirectoryTool(), ctx, path=str(ws / "b.txt"))
    assert not_dir.error == f"Error: Path is not a directory: {ws / 'b.txt'}"
    assert call(ListDirectoryTool(), ctx, path=str(outside)).error_type == "execution_denied"
    assert ListDirectoryTool().validate({"path": "rel"}) == "Path must be absolute: rel"


def test_list_directory_truncates(ctx: ToolContext, ws: Path) -> None:
    for i in range(105):
        (ws / f"f{i:03}").write_text("")
    out = call(ListDirectoryTool(), ctx, path=str(ws))
    assert out.display == "Listed 105 item(s) (truncated)"
    assert out.llm_text.endswith("\n---\n[5 items truncated] ...")


def test_glob_matching_and_order(ctx: ToolContext, ws: Path) -> None:
    now = time.time()
    for rel, age in (
        ("src/new.py", 10),
        ("src/newer.py", 5),
        ("lib/b.py", 10 * 86400),
        ("lib/a.py", 20 * 86400),
        ("node_modules/x.py", 1),
        ("top.py", 3 * 86400),
    ):
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        os.utime(path, (now - age, now - age))
    out = call(GlobTool(), ctx, pattern="**/*.py")
    listed = out.llm_text.split("---\n", 1)[1].splitlines()
    expected = ["src/newer.py", "src/new.py", "lib/a.py", "lib/b.py", "top.py"]
    assert listed == [str(ws / rel) for rel in expected]
    assert out.llm_text.startswith(
        'Found 5 file(s) matching "**/*.py" in the workspace directory, sorted by'
    )
    assert out.display == "Found 5 matching file(s)"
    top = call(GlobTool(), ctx, pattern="*.PY")
    assert top.llm_text.endswith(f"\n---\n{ws / 'top.py'}")
    scoped = call(GlobTool(), ctx, pattern="*.py", path="lib")
    assert (
        scoped.display == "Found 2 matching file(s)" and f"within {ws / 'lib'}" in scoped.llm_text
    )
    none = call(GlobTool(), ctx, pattern="**/*.rs")
    assert none.llm_text == 'No files found matching pattern "**/*.rs" in the workspace directory'
    assert none.display == "No files found"


def test_glob_confinement_and_syntax(ctx: ToolContext, ws: Path, outside: Path) -> None:
    assert (
        call(GlobTool(), ctx, pattern="*.txt", path=str(outside)).error_type == "execution_denied"
    )
    assert call(GlobTool(), ctx, pattern="../outside/*.txt").error_type == "execution_denied"
    assert GlobTool().validate({"pattern": "  "}) == "The 'pattern' parameter cannot be empty."
    regex = compile_glob("src/**/*.{ts,tsx}", ignore_case=True)
    assert regex.match("src/a.ts") and regex.match("src/x/y/B.TSX") and not regex.match("lib/a.ts")
    assert compile_glob("a?[!x].c").match("ab1.c") and not compile_glob("a?[!x].c").match("abx.c")


def test_grep_search(ctx: ToolContext, ws: Path, outside: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "a.py").write_text("import os\nTODO: one\nx = 1\r\nlast todo")
    (ws / "src" / "b.txt").write_text("todo two\n")
    (ws / ".hidden").write_text("todo hidden\n")
    (ws / "bin.dat").write_bytes(b"todo\x00binary")
    (ws / "ignored").mkdir()
    (ws / "ignored" / "c.py").write_text("todo ignored\n")
    (ws / ".gitignore").write_text("ignored/\n")
    (ws / "leak.txt").symlink_to(outside / "secret.txt")
    out = call(GrepTool(), ctx, pattern="todo|secret")
    assert out.llm_text == (
        'Found 3 matches for pattern "todo|secret" in the workspace directory:\n---\n'
        f"{ws}/src/a.py:2:TODO: one\n{ws}/src/a.py:4:last todo\n{ws}/src/b.txt:1:todo two"
    )
    assert out.display == "Found 3 matches"
    filtered = call(GrepTool(), ctx, pattern="todo", glob="*.txt")
    assert filtered.display == "Found 1 match" and '(filter: "*.txt")' in filtered.llm_text
    limited = call(GrepTool(), ctx, pattern="todo", limit=1)
    assert limited.display == "Found 3 matches (truncated)"
    assert limited.llm_text.endswith("\n---\n[2 lines truncated] ...")
    one_file = call(GrepTool(), ctx, pattern="x = 1", path="src/a.py")
    assert one_file.llm_text.endswith(f"{ws}/src/a.py:3:x = 1")
    none = call(GrepTool(), ctx, pattern="zzz")
    assert none.llm_text == 'No matches found for pattern "zzz" in the workspace directory.'
    assert GrepTool().validate({"pattern": "("}) is not None
    assert call(GrepTool(), ctx, pattern="x", path=str(outside)).error_type == "execution_denied"


# ---------------------------------------------------------------------------------------------
# run_shell_command


def test_shell_small_output(ctx: ToolContext, ws: Path) -> None:
    (ws / "sub").mkdir()
    out = call(ShellTool(), ctx, command="echo hi; echo err >&2; printf '\\033[31mred\\033[0m'")
    assert out.display == "hi\nerr\nred"
    assert out.llm_text == (
        "Command: echo hi; echo err >&2; printf '\\033[31mred\\033[0m'\n"
        "Directory: (root)\nOutput: hi\nerr\nred\nError: (none)\nExit Code: 0\n"
        "Signal: (none)\nProcess Group PGID: (none)"
    )
    assert out.error is None and out.artifact is None
    here = call(ShellTool(), ctx, command="pwd", directory=str(ws / "sub"))
    assert here.display == str(ws / "sub") and f"Directory: {ws / 'sub'}" in here.llm_text


def test_shell_failures(ctx: ToolContext, ws: Path, outside: Path) -> None:
    failed = call(ShellTool(), ctx, command="exit 3")
    assert failed.display == "Command exited with code: 3"
    assert failed.error_type == "execution_failed" and failed.error == failed.llm_text
    assert "Exit Code: 3" in failed.llm_text
    no_match = call(ShellTool(), ctx, command="grep nothing /dev/null")
    assert no_match.error is None and "Exit Code: 1" in no_match.llm_text
    killed = call(ShellTool(), ctx, command="kill -9 $$")
    assert killed.display == "Command terminated by signal: 9" and "Signal: 9" in killed.llm_text
    denied = call(ShellTool(), ctx, command="ls", directory=str(outside))
    assert (
        denied.error
        == f"Directory '{outside}' is not within any of the registered workspace directories."
    )
    tool = ShellTool()
    assert tool.validate({"command": "  "}) == "Command cannot be empty."
    assert (
        tool.validate({"command": "ls", "directory": "rel"})
        == "Directory must be an absolute path."
    )
    assert tool.validate({"command": "ls", "timeout": 0}) == "params/timeout must be >= 1"
    assert (
        tool.validate({"command": "ls", "timeout": 600_001}) == "params/timeout must be <= 600000"
    )
    assert tool.validate({"command": "sleep 1 &", "is_background": True}) is not None
    coerced: dict[str, Any] = {"command": "ls", "is_background": "false", "timeout": "5000"}
    assert tool.validate(coerced) is None and coerced == {
        "command": "ls",
        "is_background": False,
        "timeout": 5000,
    }


def test_shell_large_output_saved_byte_exact(ctx: ToolContext) -> None:
    command = "python3 -c \"print('x'*499998)\""
    out = call(ShellTool(), ctx, command=command, description="print a large output")
    expected = ("x" * 499998 + "\n").encode()
    assert out.artifact is not None
    saved = out.artifact.read_bytes()
    assert hashlib.sha256(saved).hexdigest() == hashlib.sha256(expected).hexdigest()
    assert stat.S_IMODE(out.artifact.stat().st_mode) == 0o600
    assert out.display == "x" * 499998 + "\n" + SAVED_FOOTER + str(out.artifact)
    assert out.llm_text.startswith(
        "Tool output was too large and has been truncated.\n"
        f"The full output has been saved to: {out.artifact}\n"
        "To read the complete output, use the read_file tool"
    )
    assert out.llm_text.endswith(
        "xxx\nError: (none)\nExit Code: 0\nSignal: (none)\nProcess Group PGID: (none)"
    )
    assert len(out.llm_text) < 5_000 and out.error is None


def test_shell_envelope_matches_upstream_sample_size() -> None:
    """The recorded upstream run: 4,557 characters of JSON text parts for this exact call."""
    command = "python3 -c \"print('x'*499998)\""
    llm = "\n".join(
        [
            f"Command: {command}",
            "Directory: (root)",
            "Output: " + "x" * 499998,
            "Error: (none)",
            "Exit Code: 0",
            "Signal: (none)",
            "Process Group PGID: (none)",
        ]
    )
    path = Path(
        "/sample/upstream-runs/shell-stream-json/home/.qwen/tmp/"
        + "7" * 64
        + "/run_shell_command_580b59ead172.output"
    )
    text = truncated_envelope(llm, path)
    assert len(json.dumps([{"type": "text", "text": text}])) == 4557
    assert "\nTruncated part of the output:\nCommand: " in text
    assert "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n..." in text


def test_shell_capture_cap(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shell_module, "MAX_CAPTURE_BYTES", 1 << 20)
    out = call(ShellTool(), ctx, command="head -c 3000000 /dev/zero | tr '\\0' a")
    assert out.artifact is not None and out.artifact.read_bytes() == b"a" * (1 << 20)
    assert out.extra["output_bytes"] == 3_000_000
    assert "captured the first 1.0 MB of 2.9 MB" in (out.display or "")


def _gone(pid: int) -> bool:
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if handle.read().split(")")[-1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def test_shell_timeout_kills_process_group(ctx: ToolContext) -> None:
    tool = ShellTool()
    tool.kill_grace_s = 0.3
    started = time.monotonic()
    out = call(tool, ctx, command="sleep 30 & echo $!; trap '' TERM; sleep 30", timeout=600)
    assert time.monotonic() - started < 5
    assert out.error_type == "timeout"
    assert out.error == "Command timed out after 600ms before it could complete."
    pid = int((out.display or "").splitlines()[-1])
    assert out.llm_text.startswith(out.error + " Below is the output before it timed out:\n")
    assert _gone(pid)


def test_shell_cancellation_kills_process_group(ctx: ToolContext) -> None:
    async def scenario() -> ToolOutcome:
        task = asyncio.ensure_future(
            ShellTool().run({"command": "sleep 30 & echo $!; sleep 30"}, ctx)
        )
        await asyncio.sleep(0.4)
        ctx.cancelled.set()
        return await asyncio.wait_for(task, 5)

    out = run(scenario())
    assert out.error_type == "cancelled"
    assert out.llm_text.startswith(
        "Command was cancelled by user before it could complete. Below is"
    )
    assert _gone(int((out.display or "").strip()))
    again = run(ShellTool().run({"command": "echo never"}, ctx))
    assert again.llm_text == "Command was cancelled by user before it could start."


def test_shell_does_not_block_event_loop(ctx: ToolContext) -> None:
    async def scenario() -> tuple[ToolOutcome, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        side = asyncio.ensure_future(ticker())
        out = await ShellTool().run({"command": "sleep 0.5; echo done"}, ctx)
        side.cancel()
        return out, ticks

    out, ticks = run_any(scenario())
    assert out.display == "done" and ticks >= 20


def test_shell_background(ctx: ToolContext, ws: Path) -> None:
    out = call(
        ShellTool(), ctx, command="echo started; sleep 0.2; echo finished", is_background=True
    )
    assert out.llm_text.startswith("Background shell started.\nid: bg_")
    assert out.artifact is not None
    deadline = time.monotonic() + 5
    while "finished" not in out.artifact.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert out.artifact.read_text() == "started\nfinished\n"


def test_shell_repeated_large_outputs_release_memory(ctx: ToolContext) -> None:
    import tracemalloc

    tracemalloc.start()
    try:
        for _ in range(3):
            out = call(ShellTool(), ctx, command="head -c 5000000 /dev/zero | tr '\\0' z")
            assert out.artifact is not None and out.artifact.stat().st_size == 5_000_000
            del out
        current, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert current < 8_000_000


# ---------------------------------------------------------------------------------------------
# Approvals and selection


def test_shell_tool_is_given_its_read_only_check() -> None:
    """The shell tool does not import the permission layer: built without a check, every
    command asks; the session's tools get the policy's check through ``ToolOptions``."""
    bare = ShellTool()
    assert bare.needs_approval({"command": "ls -la"}, "default")
    given = ShellTool(lambda command: command == "ls -la")
    assert not given.needs_approval({"command": "ls -la"}, "default")
    assert given.needs_approval({"command": "ls -la", "is_background": True}, "default")
    options = ToolOptions(shell_read_only=is_read_only_command)
    shell = {tool.name: tool for tool in session_tools(options)}["run_shell_command"]
    assert not shell.needs_approval({"command": "cat README.md"}, "default")


def test_approval_matrix() -> None:
    tools = {tool.name: tool for tool in builtin_tools(read_only=is_read_only_command)}
    expected = {
        "read_file": (False, False, False, False),
        "list_directory": (False, False, False, False),
        "glob": (False, False, False, False),
        "grep_search": (False, False, False, False),
        "write_file": (True, True, False, False),
        "edit": (True, True, False, False),
        "run_shell_command": (True, True, True, False),
    }
    for name, answers in expected.items():
        args = {"command": "rm -rf build"} if name == "run_shell_command" else {}
        assert tuple(tools[name].needs_approval(args, mode) for mode in MODES) == answers, name
    shell = tools["run_shell_command"]
    assert not shell.needs_approval({"command": "ls -la"}, "default")
    assert shell.needs_approval({"command": "ls > out.txt"}, "default")
    assert shell.needs_approval({"command": "cat ~/.ssh/id_rsa"}, "default")
    assert not shell.needs_approval({"command": "cat README.md"}, "plan")
    assert shell.needs_approval({"command": "cat x; rm y"}, "plan")
    kinds = {name: tools[name].kind for name in tools}
    assert kinds == {
        "read_file": "read",
        "list_directory": "search",
        "glob": "search",
        "grep_search": "search",
        "write_file": "edit",
        "edit": "edit",
        "run_shell_command": "execute",
    }


class FakeMcpTool(GlobTool):
    name = "mcp__srv__lookup"


def _names(tools: list[Tool]) -> list[str]:
    return sorted(tool.name for tool in tools)


def test_select_tools() -> None:
    tools: list[Tool] = [*builtin_tools(), FakeMcpTool()]
    default = _names(select_tools(tools))
    assert "list_directory" not in default and "mcp__srv__lookup" in default and len(default) == 7
    assert _names(select_tools(tools, ls_enabled=True)) == sorted(t.name for t in tools)
    core = select_tools(tools, core=["run_shell_command(git status)", "ReadFileTool", "ListFiles"])
    assert _names(core) == ["list_directory", "mcp__srv__lookup", "read_file", "run_shell_command"]
    assert _names(select_tools(tools, core=["ShellTool"])) == [
        "mcp__srv__lookup",
        "run_shell_command",
    ]
    assert _names(select_tools(tools, core=["Bash"])) == ["mcp__srv__lookup", "run_shell_command"]
    no_shell = _names(select_tools(tools, exclude=["ShellTool"]))
    assert "run_shell_command" not in no_shell and "edit" in no_shell
    assert "run_shell_command" in _names(
        select_tools(tools, exclude=["run_shell_command(rm -rf *)"])
    )
    assert _names(select_tools(tools, exclude=["edit", "read_file", "mcp__srv"])) == [
        "run_shell_command"
    ]
    assert _names(select_tools(tools, core=["edit", "write_file"], exclude=["write_file"])) == [
        "edit",
        "mcp__srv__lookup",
    ]
    assert canonical_name("replace") == "edit" and canonical_name("SearchFiles") == "grep_search"


def test_every_tool_has_a_consistent_schema() -> None:
    for tool in builtin_tools():
        schema = tool.parameters
        assert schema["type"] == "object" and set(schema["required"]) <= set(schema["properties"])
        assert tool.description and tool.display_name


def test_shell_output_sniffed_as_binary_is_not_decoded() -> None:
    """Upstream's sniff: a NUL among the first 512 bytes makes the output binary, which is not
    decoded (its text is empty); a NUL later is decoded like any other byte."""
    from headwire.runtime.tools.shell import BINARY_SNIFF_BYTES, RunResult, output_text

    binary = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4
    assert output_text(RunResult(binary, len(binary), 0, "exit")) == ()
    late = b"x" * BINARY_SNIFF_BYTES + b"\x00tail"
    assert output_text(RunResult(late, len(late), 0, "exit")) == (late.decode(),)
    capped = RunResult(binary, len(binary) * 2, 0, "exit")
    (notice,) = output_text(capped)
    assert notice.startswith("[Output exceeded the maximum captured size")


def test_shell_output_of_random_bytes_is_binary_whatever_its_first_bytes() -> None:
    """Past upstream's sniff window, output that is mostly not UTF-8 is binary (not decoded),
    without a NUL anywhere; text in a legacy 8-bit encoding, or holding encoded U+FFFD, and a
    short output stay upstream's (decoded)."""
    import random

    from headwire.runtime.tools.shell import LOOKS_BINARY_MIN_BYTES, RunResult, is_binary_output

    noise = random.Random(28).randbytes(3 << 20).replace(b"\x00", b"\x01")
    assert is_binary_output(noise)
    assert output_text_of(b"text line\n" * 100 + noise) == ()
    latin1 = ("Les élèves déjà arrivés à l'école.\n" * 20_000).encode("latin-1")
    assert not is_binary_output(latin1)
    replacement = ("ok \ufffd\ufffd\n" * 20_000).encode()
    assert not is_binary_output(replacement)
    short = noise[:LOOKS_BINARY_MIN_BYTES]
    assert not is_binary_output(short)
    assert RunResult(short, len(short), 0, "exit").data == short


def output_text_of(data: bytes) -> tuple[str, ...]:
    from headwire.runtime.tools.shell import RunResult, output_text

    return output_text(RunResult(data, len(data), 0, "exit"))


@hypothesis_settings(max_examples=40, deadline=None)
@given(
    st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1),
    st.integers(1, 900),
)
def test_valid_utf8_shell_output_is_never_binary(text: str, repeat: int) -> None:
    """Any valid UTF-8 without an early NUL is text, however long."""
    from headwire.runtime.tools.shell import is_binary_output

    assert not is_binary_output((text * repeat).encode())


_ESCAPE_PIECES = st.sampled_from(
    ["\x1b[", "\x9b", "\x1b]", "\x1b\\", "\x07", "\x1bA", "\x1b", "0", ";", "m", "a", "é", "\n"]
)


@hypothesis_settings(max_examples=300, deadline=None)
@given(st.lists(_ESCAPE_PIECES, max_size=30).map("".join) | st.text(max_size=40))
def test_strip_ansi_is_the_regular_expression_with_a_quick_exit(text: str) -> None:
    """Text without ESC or C1 CSI skips the regular expression and is unchanged by it."""
    assert shell_module.strip_ansi(text) == shell_module._ANSI.sub("", text)
