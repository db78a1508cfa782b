"""Every file tool stays inside the workspace roots, whatever path or symlink it is handed.

The roots are the working directory plus ``--include-directories``.  Each attack below is run
against each tool that takes that kind of path; a call must fail with ``execution_denied`` (or,
for a race the check cannot see coming, with an error), show nothing of the outside files and
leave the outside directory byte-for-byte as it was.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from headwire.runtime.store.storage import ArtifactStore
from headwire.runtime.tools import atomic as write_path_module
from headwire.runtime.tools import grep as grep_module
from headwire.runtime.tools import ls as ls_module
from headwire.runtime.tools import read_file as read_module
from headwire.runtime.tools.base import Tool, ToolContext
from headwire.runtime.tools.edit import EditTool
from headwire.runtime.tools.glob import GlobTool
from headwire.runtime.tools.grep import GrepTool
from headwire.runtime.tools.ls import ListDirectoryTool
from headwire.runtime.tools.read_file import ReadFileTool
from headwire.runtime.tools.shell import ShellTool
from headwire.runtime.tools.write_file import WriteFileTool
from tests.security.helpers import SECRET, World, make_world, outcome_text, run_tool

# ---------------------------------------------------------------------------------------------
# The attacks: each builds its symlinks in the world and returns the path to hand the tool.

Attack = Callable[[World], str]


def _absolute(w: World) -> str:
    return str(w.outside / "secret.txt")


def _traversal(w: World) -> str:
    return f"{w.ws}/../outside/secret.txt"


def _deep_traversal(w: World) -> str:
    return f"{w.ws}/no/such/../../../outside/./secret.txt"


def _file_link(w: World) -> str:
    (w.ws / "link.txt").symlink_to(w.outside / "secret.txt")
    return str(w.ws / "link.txt")


def _relative_link(w: World) -> str:
    (w.ws / "rel.txt").symlink_to(Path("..") / "outside" / "secret.txt")
    return str(w.ws / "rel.txt")


def _chained_links(w: World) -> str:
    (w.ws / "chain2").symlink_to(w.outside / "secret.txt")
    (w.ws / "chain1").symlink_to(w.ws / "chain2")
    return str(w.ws / "chain1")


def _dir_link(w: World) -> str:
    (w.ws / "linkdir").symlink_to(w.outside)
    return str(w.ws / "linkdir" / "secret.txt")


def _dir_link_deep(w: World) -> str:
    (w.ws / "linkdir").symlink_to(w.outside)
    return str(w.ws / "linkdir" / "sub" / "deep.txt")


def _extra_traversal(w: World) -> str:
    return f"{w.extra}/../outside/secret.txt"


def _extra_link(w: World) -> str:
    (w.extra / "escape.txt").symlink_to(w.outside / "secret.txt")
    return str(w.extra / "escape.txt")


def _proc_root(w: World) -> str:
    # /proc/self/root is "/": the resolved path is the outside file itself.
    return f"/proc/self/root{w.outside}/secret.txt"


FILE_ATTACKS: dict[str, Attack] = {
    "absolute": _absolute,
    "traversal": _traversal,
    "deep-traversal": _deep_traversal,
    "file-symlink": _file_link,
    "relative-symlink": _relative_link,
    "chained-symlinks": _chained_links,
    "dir-symlink": _dir_link,
    "dir-symlink-deep": _dir_link_deep,
    "added-dir-traversal": _extra_traversal,
    "added-dir-symlink": _extra_link,
    "proc-self-root": _proc_root,
}


def _dangling(w: World) -> str:
    (w.ws / "dangling").symlink_to(w.outside / "new.txt")
    return str(w.ws / "dangling")


def _dangling_relative(w: World) -> str:
    (w.ws / "dangling").symlink_to(Path("..") / "outside" / "new.txt")
    return str(w.ws / "dangling")


def _through_dir_link(w: World) -> str:
    (w.ws / "linkdir").symlink_to(w.outside)
    return str(w.ws / "linkdir" / "new.txt")


def _dangling_dir_link(w: World) -> str:
    (w.ws / "ghostdir").symlink_to(w.outside / "ghost")
    return str(w.ws / "ghostdir" / "nested" / "new.txt")


CREATE_ATTACKS: dict[str, Attack] = {
    "new-outside": lambda w: str(w.outside / "new.txt"),
    "new-traversal": lambda w: f"{w.ws}/../outside/new.txt",
    "dangling-symlink": _dangling,
    "dangling-relative-symlink": _dangling_relative,
    "through-dir-symlink": _through_dir_link,
    "dangling-dir-symlink": _dangling_dir_link,
}


def _dir_link_itself(w: World) -> str:
    _dir_link(w)
    return str(w.ws / "linkdir")


def _dir_link_sub(w: World) -> str:
    _dir_link(w)
    return str(w.ws / "linkdir" / "sub")


def _added_dir_link(w: World) -> str:
    (w.extra / "out").symlink_to(w.outside)
    return str(w.extra / "out")


DIR_ATTACKS: dict[str, Attack] = {
    "absolute": lambda w: str(w.outside),
    "root": lambda w: "/",
    "traversal": lambda w: f"{w.ws}/..",
    "traversal-sibling": lambda w: f"{w.ws}/../outside",
    "dir-symlink": _dir_link_itself,
    "dir-symlink-sub": _dir_link_sub,
    "added-dir-symlink": _added_dir_link,
    "home": lambda w: "~",
}


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> World:
    """A fresh world; ``HOME`` points outside, so ``~`` is outside too."""
    w = make_world(tmp_path)
    monkeypatch.setenv("HOME", str(w.outside))
    return w


def assert_refused(
    w: World,
    before: dict[str, Any],
    outcome_error: str | None,
    text: str,
    *,
    denied: bool = True,
    error_type: str | None = None,
) -> None:
    """The call failed, leaked nothing and changed nothing outside."""
    assert outcome_error is not None, text
    if denied:
        assert error_type in ("execution_denied", "invalid_tool_params"), (error_type, text)
    assert "crown jewels" not in text
    assert w.outside_snapshot() == before


# ---------------------------------------------------------------------------------------------
# File paths: read_file, write_file, edit, grep_search(path=FILE).

FILE_TOOLS: dict[str, Callable[[str], tuple[Tool, dict[str, Any]]]] = {
    "read_file": lambda p: (ReadFileTool(), {"file_path": p}),
    "write_file": lambda p: (WriteFileTool(), {"file_path": p, "content": "pwned\n"}),
    "edit": lambda p: (
        EditTool(),
        {"file_path": p, "old_string": "top secret", "new_string": "pwned"},
    ),
    "grep_search": lambda p: (GrepTool(), {"pattern": "crown", "path": p}),
}


@pytest.mark.parametrize("attack", sorted(FILE_ATTACKS))
@pytest.mark.parametrize("tool_name", sorted(FILE_TOOLS))
def test_file_tools_refuse_paths_outside(world: World, tool_name: str, attack: str) -> None:
    target = FILE_ATTACKS[attack](world)
    before = world.outside_snapshot()
    tool, args = FILE_TOOLS[tool_name](target)
    out = run_tool(tool, world.ctx(with_extra=True), **args)
    assert_refused(world, before, out.error, outcome_text(out), error_type=out.error_type)
    if out.error_type == "execution_denied":
        assert out.llm_text.startswith("Path is outside the workspace: ")


CREATE_TOOLS: dict[str, Callable[[str], tuple[Tool, dict[str, Any]]]] = {
    "write_file": lambda p: (WriteFileTool(), {"file_path": p, "content": "pwned\n"}),
    "edit-create": lambda p: (
        EditTool(),
        {"file_path": p, "old_string": "", "new_string": "pwned"},
    ),
}


@pytest.mark.parametrize("attack", sorted(CREATE_ATTACKS))
@pytest.mark.parametrize("tool_name", sorted(CREATE_TOOLS))
def test_creating_tools_never_create_outside(world: World, tool_name: str, attack: str) -> None:
    target = CREATE_ATTACKS[attack](world)
    before = world.outside_snapshot()
    tool, args = CREATE_TOOLS[tool_name](target)
    out = run_tool(tool, world.ctx(with_extra=True), **args)
    assert_refused(world, before, out.error, outcome_text(out), error_type=out.error_type)
    assert not (world.outside / "new.txt").exists()
    assert not (world.outside / "ghost").exists()


# ---------------------------------------------------------------------------------------------
# Directory paths: list_directory, glob(path=), grep_search(path=DIR).

DIR_TOOLS: dict[str, Callable[[str], tuple[Tool, dict[str, Any]]]] = {
    "list_directory": lambda p: (ListDirectoryTool(), {"path": p}),
    "glob": lambda p: (GlobTool(), {"pattern": "**/*", "path": p}),
    "grep_search": lambda p: (GrepTool(), {"pattern": "crown", "path": p}),
}


@pytest.mark.parametrize("attack", sorted(DIR_ATTACKS))
@pytest.mark.parametrize("tool_name", sorted(DIR_TOOLS))
def test_directory_tools_refuse_dirs_outside(world: World, tool_name: str, attack: str) -> None:
    target = DIR_ATTACKS[attack](world)
    before = world.outside_snapshot()
    tool, args = DIR_TOOLS[tool_name](target)
    out = run_tool(tool, world.ctx(with_extra=True), **args)
    text = outcome_text(out)
    assert_refused(world, before, out.error, text, error_type=out.error_type)
    assert "secret.txt" not in text and "deep.txt" not in text


@pytest.mark.parametrize(
    "pattern",
    [
        "../outside/*.txt",
        "../outside/**",
        "{ws}/../outside/*",
        "{outside}/*",
        "{outside}/**/*.txt",
        "/*",
        "/**/secret.txt",
        "linkdir/*",
        "linkdir/**/*.txt",
        "**/secret.txt",
        "**/deep.txt",
        "**/../../outside/*",
        "*/../../outside/*",
        "~/*",
    ],
)
def test_glob_patterns_never_reach_outside(world: World, pattern: str) -> None:
    """A pattern may be refused or find nothing, but it never lists an outside file."""
    (world.ws / "linkdir").symlink_to(world.outside)
    pattern = pattern.format(ws=world.ws, outside=world.outside)
    out = run_tool(GlobTool(), world.ctx(with_extra=True), pattern=pattern)
    listed = out.extra.get("paths", [])
    assert all(
        Path(p).parent.resolve() in (world.ws, world.extra)
        or Path(p).resolve().is_relative_to(world.ws)
        for p in listed
    ), listed
    assert not any("linkdir" in p or "outside" in p for p in listed), listed
    body = out.llm_text.partition("\n---\n")[2]
    assert "secret.txt" not in body and "deep.txt" not in body, out.llm_text


def test_searches_of_the_workspace_skip_symlinks_out(world: World) -> None:
    """Walking the workspace follows no directory symlink and reads no file symlink out."""
    (world.ws / "linkdir").symlink_to(world.outside)
    (world.ws / "leak.txt").symlink_to(world.outside / "secret.txt")
    (world.extra / "leak2.txt").symlink_to(world.outside / "sub" / "deep.txt")
    (world.ws / "ok.txt").symlink_to(world.ws / "inside.txt")  # a link inside stays usable
    ctx = world.ctx(with_extra=True)
    grep = run_tool(GrepTool(), ctx, pattern="crown|hello")
    assert "crown jewels" not in outcome_text(grep)
    assert f"{world.ws}/ok.txt:1:hello inside" in grep.llm_text
    assert f"{world.extra}/added.txt:1:hello added" in grep.llm_text
    globbed = run_tool(GlobTool(), ctx, pattern="**/*.txt")
    assert "linkdir" not in globbed.llm_text and "deep.txt" not in globbed.llm_text
    listed = run_tool(ListDirectoryTool(), ctx, path=str(world.ws))
    assert "secret.txt" not in listed.llm_text


def test_added_directories_are_usable_and_confined(world: World) -> None:
    """``--include-directories`` widens the workspace to exactly the added trees."""
    ctx = world.ctx(with_extra=True)
    assert (
        run_tool(ReadFileTool(), ctx, file_path=str(world.extra / "added.txt")).llm_text
        == "hello added\n"
    )
    wrote = run_tool(
        WriteFileTool(), ctx, file_path=str(world.extra / "new" / "w.txt"), content="w"
    )
    assert wrote.error is None and (world.extra / "new" / "w.txt").read_text() == "w"
    (world.ws / "to-extra").symlink_to(world.extra)  # a link from one root into another is fine
    assert (
        run_tool(ReadFileTool(), ctx, file_path=str(world.ws / "to-extra" / "added.txt")).error
        is None
    )
    without = world.ctx(with_extra=False)
    denied = run_tool(ReadFileTool(), without, file_path=str(world.extra / "added.txt"))
    assert denied.error_type == "execution_denied"
    assert str(world.extra) not in denied.llm_text.partition("(workspace directories:")[2]


def test_a_root_that_is_itself_a_symlink_is_resolved(tmp_path: Path) -> None:
    """A workspace reached through a symlink works, and ``..`` is taken from the real place."""
    w = make_world(tmp_path)
    alias = tmp_path / "alias"
    alias.symlink_to(w.ws)
    ctx = ToolContext(cwd=alias, artifacts=w.ctx().artifacts)
    assert (
        run_tool(ReadFileTool(), ctx, file_path=str(alias / "inside.txt")).llm_text
        == "hello inside\n"
    )
    out = run_tool(ReadFileTool(), ctx, file_path=f"{alias}/../outside/secret.txt")
    assert out.error_type == "execution_denied" and "crown" not in out.llm_text


def test_artifacts_are_readable_but_not_writable(tmp_path: Path) -> None:
    """read_file may open this project's artifacts (the model is pointed at them); nothing may
    write there, and other projects' artifacts stay out of reach."""
    w = make_world(tmp_path)
    home = tmp_path / "home"
    store = ArtifactStore(home, w.ws)
    other = ArtifactStore(home, w.outside)
    mine = store.save("run_shell_command", b"my output\n")
    theirs = other.save("run_shell_command", SECRET.encode())
    ctx = ToolContext(cwd=w.ws, artifacts=store)
    assert run_tool(ReadFileTool(), ctx, file_path=str(mine)).llm_text == "my output\n"
    assert run_tool(ReadFileTool(), ctx, file_path=str(theirs)).error_type == "execution_denied"
    for tool, args in (
        (WriteFileTool(), {"content": "x"}),
        (EditTool(), {"old_string": "my", "new_string": "x"}),
    ):
        out = run_tool(tool, ctx, file_path=str(mine), **args)
        assert out.error_type == "execution_denied"
    assert mine.read_bytes() == b"my output\n"
    assert (
        run_tool(ListDirectoryTool(), ctx, path=str(store.directory)).error_type
        == "execution_denied"
    )
    assert (
        run_tool(GrepTool(), ctx, pattern="output", path=str(store.directory)).error_type
        == "execution_denied"
    )


def test_shell_directory_is_confined(world: World) -> None:
    """The shell's ``directory`` parameter is a path like any other (the command itself is
    governed by approval, not by confinement)."""
    for raw in (str(world.outside), f"{world.ws}/..", str(world.ws / "linkdir")):
        if raw.endswith("linkdir"):
            (world.ws / "linkdir").symlink_to(world.outside)
        out = run_tool(ShellTool(), world.ctx(), command="cat secret.txt", directory=raw)
        assert out.error_type == "execution_denied" and "crown" not in outcome_text(out)


# ---------------------------------------------------------------------------------------------
# Symlinks swapped in after the check (time of check to time of use).


def _swap_file(w: World, victim: Path) -> None:
    victim.unlink()
    victim.symlink_to(w.outside / "secret.txt")


def _swap_dir(w: World, victim: Path) -> None:
    parent = victim.parent
    shutil.rmtree(parent)
    parent.symlink_to(w.outside)


def _patch_resolve(monkeypatch: pytest.MonkeyPatch, module: Any, after: Callable[[], None]) -> None:
    real = module.resolve_in_workspace

    def resolve_then_swap(raw: str, ctx: ToolContext, **kwargs: Any) -> Path:
        resolved: Path = real(raw, ctx, **kwargs)
        after()
        return resolved

    monkeypatch.setattr(module, "resolve_in_workspace", resolve_then_swap)


SWAP_TOOLS: dict[str, tuple[Any, Callable[[str], tuple[Tool, dict[str, Any]]]]] = {
    "read_file": (read_module, FILE_TOOLS["read_file"]),
    "write_file": (write_path_module, FILE_TOOLS["write_file"]),
    "edit": (write_path_module, FILE_TOOLS["edit"]),
    "grep_search": (grep_module, FILE_TOOLS["grep_search"]),
}


@pytest.mark.parametrize("swap", ["file", "dir"])
@pytest.mark.parametrize("tool_name", sorted(SWAP_TOOLS))
def test_symlink_swapped_in_after_the_check(
    world: World, monkeypatch: pytest.MonkeyPatch, tool_name: str, swap: str
) -> None:
    """Between the workspace check and the open, a file (or its directory) becomes a symlink
    out: the open must refuse to follow it."""
    victim_dir = world.ws / "d"
    victim_dir.mkdir()
    victim = victim_dir / ("secret.txt" if swap == "dir" else "victim.txt")
    victim.write_text("top secret but harmless, inside\n")
    module, make = SWAP_TOOLS[tool_name]
    _patch_resolve(
        monkeypatch,
        module,
        lambda: _swap_file(world, victim) if swap == "file" else _swap_dir(world, victim),
    )
    before = world.outside_snapshot()
    tool, args = make(str(victim))
    out = run_tool(tool, world.ctx(), **args)
    text = outcome_text(out)
    assert "crown jewels" not in text, text
    assert world.outside_snapshot() == before
    if tool_name != "grep_search":  # grep skips what it cannot open, like unreadable files
        assert out.error is not None, text


@pytest.mark.parametrize("tool_name", ["write_file", "edit-create"])
def test_directory_swapped_in_before_a_create(
    world: World, monkeypatch: pytest.MonkeyPatch, tool_name: str
) -> None:
    """Creating ``d/new.txt`` while ``d`` is swapped for a link out creates nothing outside."""
    (world.ws / "d").mkdir()
    _patch_resolve(monkeypatch, write_path_module, lambda: _swap_dir(world, world.ws / "d" / "x"))
    before = world.outside_snapshot()
    tool, args = CREATE_TOOLS[tool_name](str(world.ws / "d" / "new.txt"))
    out = run_tool(tool, world.ctx(), **args)
    assert out.error is not None
    assert world.outside_snapshot() == before


def test_list_directory_swapped_for_a_link(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Listing a directory that became a link out lists nothing of the outside."""
    (world.ws / "d").mkdir()
    (world.ws / "d" / "mine.txt").write_text("x")
    _patch_resolve(monkeypatch, ls_module, lambda: _swap_dir(world, world.ws / "d" / "mine.txt"))
    out = run_tool(ListDirectoryTool(), world.ctx(), path=str(world.ws / "d"))
    assert "secret.txt" not in outcome_text(out)
