"""Output styles: the files a style may come from, what a file gives, which style a name picks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from headwire.runtime.agent.loop import DEFAULT_SYSTEM_PROMPT, styled_prompt
from headwire.runtime.config.output_styles import (
    BUILT_IN,
    MAX_STYLE_BYTES,
    StyleError,
    load_styles,
    parse_style,
    read_style_file,
    resolve_style,
    style_roots,
)


def _tree(tmp: Path) -> tuple[Path, Path, Path]:
    """``(data dir, project, home)`` with every style folder made."""
    home, proj = tmp / "home", tmp / "proj"
    data = home / ".headwire"
    for folder in (data, home / ".qwen", proj / ".qwen", proj / ".headwire"):
        (folder / "output-styles").mkdir(parents=True)
    return data, proj, home


def _load(tmp: Path, *, trusted: bool = True) -> tuple[dict[str, object], list[str]]:
    data, proj, home = (
        _tree(tmp)
        if not (tmp / "home").exists()
        else (
            tmp / "home" / ".headwire",
            tmp / "proj",
            tmp / "home",
        )
    )
    notes: list[str] = []
    styles = load_styles(style_roots(data, proj, home, trusted=trusted), home, notes.append)
    return dict(styles), notes


def test_front_matter_and_its_defaults() -> None:
    style = parse_style(
        "---\nname: Reviewer\ndescription: Reviews\nkeep-coding-instructions: true\n---\n"
        "<!-- for teammates -->\nList findings.\n",
        "file",
        "user",
    )
    assert (style.name, style.description, style.body) == ("Reviewer", "Reviews", "List findings.")
    assert style.keep_coding_instructions is True
    bare = parse_style("\ufeffFirst line\nsecond\n", "Terse", "project")
    assert (bare.name, bare.description, bare.keep_coding_instructions) == (
        "Terse",
        "First line",
        False,
    )
    assert parse_style("Shorter wording.", "concise", "user").keep_coding_instructions is True


@pytest.mark.parametrize(
    ("text", "stem", "why"),
    [
        ("<!-- only a comment -->\n", "x", "empty"),
        ("---\nname: default\n---\nbody\n", "x", "reserved"),
        ("body\n", "DEFAULT", "reserved"),
        ("---\nname: a/b\n---\nbody\n", "x", "invalid name"),
        ("---\nname: " + "n" * 65 + "\n---\nbody\n", "x", "invalid name"),
        ("---\nkeep-coding-instructions: maybe\n---\nbody\n", "x", "true or false"),
        ("---\nname: x\nbody\n", "x", "not closed"),
    ],
)
def test_a_file_that_is_no_style(text: str, stem: str, why: str) -> None:
    with pytest.raises(StyleError, match=why):
        parse_style(text, stem, "user")


def test_precedence_project_then_user_then_built_in(tmp_path: Path) -> None:
    data, proj, home = _tree(tmp_path)
    (home / ".qwen" / "output-styles" / "team.md").write_text("---\nname: Team\n---\nUSER\n")
    (proj / ".qwen" / "output-styles" / "team.md").write_text("---\nname: team\n---\nPROJECT\n")
    (proj / ".headwire" / "output-styles" / "t.md").write_text("---\nname: TEAM\n---\nFIRST\n")
    (data / "output-styles" / "concise.md").write_text("MINE\n")
    styles, notes = _load(tmp_path)
    assert notes == []
    assert styles["team"].body == "FIRST"  # type: ignore[attr-defined]
    assert styles["concise"].body == "MINE"  # type: ignore[attr-defined]
    assert set(BUILT_IN) <= set(styles)
    untrusted, _ = _load(tmp_path, trusted=False)
    assert untrusted["team"].body == "USER"  # type: ignore[attr-defined]


def test_the_files_a_style_may_not_come_from(tmp_path: Path) -> None:
    """A project style through a symbolic link, a hard link, a FIFO (never blocks), a file one
    byte over the limit, one holding a NUL byte: each skipped with one note; the limit itself
    and a stray non-UTF-8 byte load."""
    _data, proj, home = _tree(tmp_path)
    folder = proj / ".qwen" / "output-styles"
    secret = home / "secret.md"
    secret.write_text("SECRET\n")
    (folder / "link.md").symlink_to(secret)
    os.link(secret, folder / "hard.md")
    os.mkfifo(folder / "pipe.md")
    head = "---\nname: big\n---\n"
    (folder / "big.md").write_text(head + "x" * (MAX_STYLE_BYTES + 1 - len(head)))
    (folder / "fits.md").write_text(head.replace("big", "fits") + "y" * (MAX_STYLE_BYTES - 19))
    (folder / "nul.md").write_bytes(b"a\x00b\n")
    (folder / "latin.md").write_bytes(b"caf\xe9\n")
    styles, notes = _load(tmp_path)
    assert {"link", "hard", "pipe", "big", "nul"}.isdisjoint(styles)
    assert styles["latin"].body == "caf\ufffd"  # type: ignore[attr-defined]
    assert len(styles["fits"].body) > 24_000  # type: ignore[attr-defined]
    assert len(notes) == 5, notes
    for name, why in [
        ("link", "symbolic link"),
        ("hard", "hard link"),
        ("pipe", "not a regular file"),
        ("big", "larger than 25,000 bytes"),
        ("nul", "NUL byte"),
    ]:
        assert any(f"{name}.md skipped" in n and why in n for n in notes), (name, notes)


def test_a_user_style_may_link_into_the_home_folder_only(tmp_path: Path) -> None:
    _data, _proj, home = _tree(tmp_path)
    (home / "dotfiles").mkdir()
    (home / "dotfiles" / "mine.md").write_text("MINE\n")
    outside = tmp_path / "outside.md"
    outside.write_text("OUTSIDE\n")
    (home / ".qwen" / "output-styles" / "mine.md").symlink_to(home / "dotfiles" / "mine.md")
    (home / ".qwen" / "output-styles" / "out.md").symlink_to(outside)
    styles, notes = _load(tmp_path)
    assert styles["mine"].body == "MINE"  # type: ignore[attr-defined]
    assert "out" not in styles and any("out of the home folder" in n for n in notes)


def test_a_project_style_folder_that_leads_out_of_the_project(tmp_path: Path) -> None:
    """``.claude/output-styles`` a link to a folder elsewhere (``~/.ssh``, say): skipped."""
    _data, proj, _home = _tree(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "key.md").write_text("PRIVATE\n")
    (proj / ".claude").mkdir()
    (proj / ".claude" / "output-styles").symlink_to(elsewhere)
    styles, notes = _load(tmp_path)
    assert "key" not in styles
    assert any("leads out of the project" in n for n in notes)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=400), st.text(alphabet="abcXYZ-_. ", min_size=1, max_size=12))
def test_any_file_is_a_style_or_one_note(
    tmp_path_factory: pytest.TempPathFactory, data: bytes, stem: str
) -> None:
    """Invariant: whatever bytes a style file holds, loading gives the built-ins and either a
    style from it or one note naming it; nothing raises."""
    tmp = tmp_path_factory.mktemp("styles")
    home = tmp / "home"
    folder = home / ".qwen" / "output-styles"
    folder.mkdir(parents=True)
    path = folder / f"{stem}.md"
    path.write_bytes(data)
    notes: list[str] = []
    styles = load_styles(
        style_roots(home / ".headwire", tmp, home, trusted=False), home, notes.append
    )
    assert set(BUILT_IN) <= set(styles)
    custom = [s for s in styles.values() if s.source == "user"]
    assert len(custom) + len(notes) == 1, (custom, notes)
    if notes:
        assert str(path) in notes[0]
    else:
        assert custom[0].body and custom[0].body == custom[0].body.strip()


def test_which_style_a_name_picks() -> None:
    styles = dict(BUILT_IN)
    assert resolve_style(None, styles, interactive=False) == (None, None)
    assert resolve_style(" Default ", styles, interactive=False) == (None, None)
    assert resolve_style("concise", styles, interactive=False)[0] is BUILT_IN["concise"]
    style, note = resolve_style("Bogus", styles, interactive=False)
    assert style is None and note is not None and "'Bogus' not found" in note
    style, note = resolve_style("learning", styles, interactive=False)
    assert style is None and note is not None and "headless" in note
    assert resolve_style("learning", styles, interactive=True) == (BUILT_IN["learning"], None)
    _, note = resolve_style("x" * 1_000_000, styles, interactive=False)  # a flag from a script
    assert note is not None and len(note) < 300


def test_the_prompt_under_a_style() -> None:
    concise = BUILT_IN["concise"]
    prompt = styled_prompt(concise)
    assert prompt.endswith(concise.section()) and "Use the tools" in prompt
    assert "answer concisely" not in prompt and "answer concisely" in DEFAULT_SYSTEM_PROMPT
    reviewer = parse_style("List findings.", "Reviewer", "user")
    assert "Use the tools" not in styled_prompt(reviewer)
    assert reviewer.turn_reminder().startswith(
        "<system-reminder>\nReviewer output style is active."
    )


def test_read_style_file_confines_to_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "styles"
    folder.mkdir()
    (tmp_path / "x.md").write_text("X")
    with pytest.raises(StyleError, match="outside its folder"):
        read_style_file(folder / ".." / "x.md", folder, links_within=None)
