"""Skills' pure parts: front matter, the settings' precedence, the catalogue, confined reads."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from headwire.runtime.skills import (
    Skill,
    catalogue,
    discover,
    expand,
    parse_skill,
    read_confined,
    visible,
)

NAMES = st.sampled_from(["a", "B", "c", "d"])


def make(name: str, level: str = "user") -> Skill:
    return Skill(name=name, description="d", body="b", base=Path("/s"), level=level)  # type: ignore[arg-type]


def test_parse_skill_reads_upstream_fields() -> None:
    text = (
        "---\nname: tsx-helper\ndescription: Helps with TSX\nallowed-tools:\n  - read_file\n"
        "  - Bash\ndisable-model-invocation: true\nuser-invocable: false\n---\nBody $ARGUMENTS\n"
    )
    skill = parse_skill(text, "SKILL.md", Path("/s/tsx"), "project")
    assert (skill.name, skill.description, skill.body) == (
        "tsx-helper",
        "Helps with TSX",
        "Body $ARGUMENTS",
    )
    assert skill.allowed_tools == ("read_file", "Bash")
    assert not skill.model_invocable and not skill.user_invocable
    assert "Body x y" in expand(skill, "x y")
    for bad in (
        "no front matter",
        "---\nname: x\n---\n",
        "---\ndescription: d\n---\n",
        "---\nname: a b\ndescription: d\n---\n",
    ):
        with pytest.raises(ValueError):
            parse_skill(bad, "SKILL.md", Path("/s"), "user")


@given(
    st.lists(NAMES, unique=True),
    st.lists(NAMES),
    st.lists(NAMES),
    st.lists(NAMES),
)
def test_disabled_wins_over_enabled_over_default_disabled(
    names: list[str], disabled: list[str], enabled: list[str], default_off: list[str]
) -> None:
    shown = {
        s.name
        for s in visible(
            [make(n) for n in names],
            disabled=disabled,
            enabled=enabled,
            default_disabled=default_off,
        )
    }
    low = str.lower
    for name in names:
        off = low(name) in map(low, disabled) or (
            low(name) in map(low, default_off) and low(name) not in map(low, enabled)
        )
        assert (name in shown) == (not off)


@given(st.text(max_size=40), st.text(max_size=40))
def test_the_catalogue_cannot_be_forged(name: str, description: str) -> None:
    text = catalogue(
        [Skill(name=name, description=description, body="", base=Path("/"), level="user")]
    )
    inner = text.split("<available_skills>\n", 1)[1].rsplit("\n</available_skills>", 1)[0]
    assert inner.count("<skill>") == 1 and inner.count("</available_skills>") == 0
    assert "<" not in inner.replace("<skill>", "").replace("</skill>", "").replace(
        "<name>", ""
    ).replace("</name>", "").replace("<description>", "").replace("</description>", "").replace(
        "<location>", ""
    ).replace("</location>", "")


def test_read_confined_refuses_links_fifos_and_big_files(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    root.mkdir()
    (root / "ok.md").write_text("fine")
    assert read_confined(root / "ok.md", root) == "fine"
    (tmp_path / "outside.md").write_text("secret")
    (root / "link.md").symlink_to(tmp_path / "outside.md")
    os.mkfifo(root / "fifo.md")
    (root / "big.md").write_bytes(b"x" * 100)
    for name in ("link.md", "fifo.md"):
        with pytest.raises((OSError, ValueError)):
            read_confined(root / name, root)
    with pytest.raises(ValueError):
        read_confined(root / "big.md", root, limit=10)


def test_first_skill_of_a_name_wins(tmp_path: Path) -> None:
    for root, text in (("high", "first"), ("low", "second")):
        folder = tmp_path / root / "same"
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: same\ndescription: {text}\n---\nbody\n")
    (found,) = discover([(tmp_path / "high", "project"), (tmp_path / "low", "user")])
    assert found.description == "first" and found.level == "project"
