"""Context files: upstream's discovery order, display paths, blocks, limits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.config import context_files as cf
from headwire.runtime.config.context_files import (
    ContextFile,
    context_file_paths,
    find_project_root,
    format_context,
    load_context,
)
from headwire.runtime.trust import resolve_inside

NAMES = ("QWEN.md", "AGENTS.md")


def tree(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """home/.headwire (user dir), outer/repo (.git) and outer/repo/pkg/sub (cwd)."""
    home = tmp_path / "home"
    user = home / ".headwire"
    repo = tmp_path / "outer" / "repo"
    cwd = repo / "pkg" / "sub"
    for d in (user, cwd, repo / ".git"):
        d.mkdir(parents=True)
    return home, user, repo, cwd


def put(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_order_is_per_name_global_then_top_down(tmp_path: Path) -> None:
    home, user, repo, cwd = tree(tmp_path)
    outer = repo.parent
    files = [
        put(cwd / "AGENTS.md", "a-cwd"),
        put(user / "AGENTS.md", "a-user"),
        put(repo / "QWEN.md", "q-repo"),
        put(cwd / "QWEN.md", "q-cwd"),
        put(user / "QWEN.md", "q-user"),
        put(outer / "QWEN.md", "q-outer"),  # the repository's parent is searched too (upstream)
        put(tmp_path / "QWEN.md", "q-too-high"),
        put(repo / "pkg" / "AGENTS.md", "a-pkg"),
    ]
    found = context_file_paths(cwd, user, NAMES, home=home)
    assert found == [
        user / "QWEN.md",
        repo / "QWEN.md",
        cwd / "QWEN.md",
        user / "AGENTS.md",
        repo / "pkg" / "AGENTS.md",
        cwd / "AGENTS.md",
    ]
    assert tmp_path / "QWEN.md" in files and outer / "QWEN.md" in files  # above the root
    text = load_context(cwd, user, NAMES, home=home)
    order = [line for line in text.splitlines() if not line.startswith("---") and line]
    assert order == ["q-user", "q-repo", "q-cwd", "a-user", "a-pkg", "a-cwd"]
    assert text.startswith(f"--- Context from: {os.path.relpath(user / 'QWEN.md', cwd)} ---\n")
    assert "--- Context from: QWEN.md ---\nq-cwd\n--- End of Context from: QWEN.md ---" in text
    assert "--- Context from: ../QWEN.md ---\na-pkg" not in text
    assert (
        "--- Context from: ../AGENTS.md ---\na-pkg\n--- End of Context from: ../AGENTS.md ---"
        in text
    )


def test_configured_names_in_any_folder(tmp_path: Path) -> None:
    """The trust table lets any folder supply context files (confined, below)."""
    home, user, _repo, cwd = tree(tmp_path)
    put(cwd / "RULES.md", "r")
    put(user / "RULES.md", "u")
    put(cwd / "QWEN.md", "q")
    for trusted in (True, False):
        assert context_file_paths(cwd, user, ("RULES.md",), home=home, trusted=trusted) == [
            user / "RULES.md",
            cwd / "RULES.md",
        ]


def test_home_directory_and_no_repository(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user = home / ".headwire"
    user.mkdir(parents=True)
    put(home / "QWEN.md", "home")
    assert context_file_paths(home, user, NAMES, home=home) == [home / "QWEN.md"]
    work = home / "work" / "x"
    work.mkdir(parents=True)
    put(work / "QWEN.md", "w")
    assert find_project_root(work) is None or find_project_root(work) not in work.parents
    found = context_file_paths(work, user, NAMES, home=home)
    assert found[-1] == work / "QWEN.md" and home / "QWEN.md" in found


def test_symlinked_duplicates_blank_files_and_limits(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    home, user, repo, cwd = tree(tmp_path)
    put(repo / "QWEN.md", "common")
    (cwd / "QWEN.md").symlink_to(repo / "QWEN.md")
    put(cwd / "AGENTS.md", "   \n")
    text = load_context(cwd, user, NAMES, home=home)
    assert text.count("common") == 1 and "AGENTS.md" not in text
    monkeypatch.setattr(cf, "MAX_CONTEXT_FILE_BYTES", 10)
    put(repo / "QWEN.md", "0123456789ABCDEF")
    notes: list[str] = []
    text = load_context(cwd, user, NAMES, home=home, note=notes.append)
    assert "0123456789" in text and "A" not in text.split("---")[2]
    assert notes and "longer than 10 bytes" in notes[0]


def test_format_is_pure_and_skips_blank() -> None:
    files = [ContextFile(Path("/a"), "a", " x \n"), ContextFile(Path("/b"), "b", "\n")]
    assert format_context(files) == "--- Context from: a ---\nx\n--- End of Context from: a ---"
    assert format_context([]) == ""


# -- issue 21: context files are text from inside the folder they are found in -------------


def _secret_home(tmp_path: Path) -> tuple[Path, Path, Path, Path, Path]:
    home, user, repo, cwd = tree(tmp_path)
    secret = home / ".ssh" / "id_rsa"
    secret.parent.mkdir()
    put(secret, "-----BEGIN OPENSSH PRIVATE KEY-----\nFAKE-SECRET-KEY\n")
    return home, user, repo, cwd, secret


def test_links_that_leave_their_folder_are_skipped_with_a_note(tmp_path: Path) -> None:
    home, user, repo, cwd, secret = _secret_home(tmp_path)
    (repo / "AGENTS.md").symlink_to(secret)
    (repo / "QWEN.md").symlink_to("/proc/self/environ")
    put(cwd / "CLAUDE.md", "in-folder text")
    (cwd / "AGENTS.md").symlink_to("CLAUDE.md")  # a link inside its folder is fine
    other = put(secret.with_name("id_ed25519"), "FAKE-SECRET-KEY-2")
    (user / "QWEN.md").symlink_to(other)  # the user's folder is confined the same way
    (cwd / "QWEN.md").symlink_to("../../.git/../../../home/.ssh/id_rsa")  # deduplicated
    notes: list[str] = []
    text = load_context(cwd, user, NAMES, home=home, trusted=False, note=notes.append)
    assert "FAKE-SECRET-KEY" not in text and "PATH=" not in text
    assert "in-folder text" in text
    assert len(notes) == 3, notes
    assert all(n.startswith("headwire: note: context file ") and "\n" not in n for n in notes)
    assert all("skipped: it leads outside" in n for n in notes), notes


def test_special_files_never_block(tmp_path: Path) -> None:
    home, user, repo, cwd = tree(tmp_path)
    os.mkfifo(cwd / "QWEN.md")
    (repo / "AGENTS.md").symlink_to("/dev/zero")
    os.mkfifo(repo / "fifo")
    (repo / "QWEN.md").symlink_to("fifo")  # a link inside the folder, to a FIFO
    notes: list[str] = []
    assert load_context(cwd, user, NAMES, home=home, note=notes.append) == ""
    assert len(notes) == 3, notes
    joined = "\n".join(notes)
    assert joined.count("not a regular file") == 2 and "leads outside" in joined


def test_context_file_names_are_file_names(tmp_path: Path) -> None:
    home, user, _repo, cwd, _secret = _secret_home(tmp_path)
    put(tmp_path / "abs-secret", "ABSOLUTE-SECRET")
    put(cwd / "ok.md", "fine")
    notes: list[str] = []
    names = ["../.ssh/id_rsa", str(tmp_path / "abs-secret"), "..", ".", "a\\b", "ok.md"]
    text = load_context(cwd, user, names, home=home, note=notes.append)
    assert "FAKE-SECRET-KEY" not in text and "ABSOLUTE-SECRET" not in text
    assert "fine" in text
    assert len(notes) == 5 and all("not a file name" in n for n in notes), notes
    assert cf.is_file_name("QWEN.md") and cf.is_file_name(".x")
    assert not any(cf.is_file_name(n) for n in ("", "..", ".", "a/b", "a\\b", "a\0b"))


def test_no_repository_walks_to_home_or_reads_only_the_folder(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user = home / ".headwire"
    user.mkdir(parents=True)
    elsewhere = tmp_path / "srv" / "x"
    elsewhere.mkdir(parents=True)
    put(tmp_path / "srv" / "QWEN.md", "above a folder outside home")
    put(tmp_path / "QWEN.md", "shared tmp")
    put(elsewhere / "QWEN.md", "own")
    assert find_project_root(elsewhere) is None
    assert context_file_paths(elsewhere, user, NAMES, home=home) == [elsewhere / "QWEN.md"]
    assert cf.project_top(elsewhere, home) == elsewhere


@given(st.text(alphabet=st.sampled_from("ab./\\\0 "), max_size=8))
def test_a_file_name_names_a_file_in_the_folder(name: str) -> None:
    """``is_file_name``'s promise: the joined path's parent is the folder itself."""
    folder = "/base/folder"
    if cf.is_file_name(name):
        joined = os.path.normpath(os.path.join(folder, name))
        assert os.path.dirname(joined) == folder and "\0" not in name


@given(st.lists(st.sampled_from(["a", "b", "..", "."]), max_size=5))
def test_resolve_inside_never_answers_outside(parts: list[str]) -> None:
    """``resolve_inside`` returns a path inside the folder, or raises."""
    folder = Path("/base/folder")
    target = folder.joinpath(*parts) if parts else folder / "x"
    try:
        real = resolve_inside(target, folder)
    except OSError as exc:
        assert "leads outside" in str(exc)
    else:
        assert os.path.commonpath([real, os.path.realpath(folder)]) == os.path.realpath(folder)


def test_resolve_inside_follows_links(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "link").symlink_to(tmp_path / "secret")
    with pytest.raises(OSError, match="leads outside"):
        resolve_inside(tmp_path / "in" / "link", tmp_path / "in")


def test_notes_stay_one_line(tmp_path: Path) -> None:
    """A link target with a newline and ESC (the repository chose it) cannot break the note."""
    home, user, _repo, cwd = tree(tmp_path)
    (cwd / "QWEN.md").symlink_to("/nowhere\nheadwire: forged\x1b]2;title\x07")
    notes: list[str] = []
    load_context(cwd, user, NAMES, home=home, note=notes.append)
    assert len(notes) == 1 and "\n" not in notes[0] and "\x1b" not in notes[0], notes
    assert "\\x0aheadwire: forged\\x1b]2;title\\x07" in notes[0]


@given(st.text(max_size=40))
def test_one_line_has_no_control_characters(text: str) -> None:
    """``one_line`` leaves no C0/C1 control character."""
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in cf.one_line(text))
