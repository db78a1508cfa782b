"""Whether this run may use the project's own configuration (see :mod:`headwire.runtime.trust`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from headwire.io.stdio import warn
from headwire.runtime.trust import (
    AGENTS_DIR_ENTRY,
    OUTPUT_STYLES_DIR_ENTRY,
    SKILLS_DIR_ENTRY,
    is_trusted,
    project_may,
    untrusted_note,
)


def trusted_project(args: argparse.Namespace, data_dir: Path, cwd: Path) -> bool:
    """``--trust-project``, ``HEADWIRE_TRUST_PROJECT=1`` or the user's trust list."""
    return is_trusted(cwd, data_dir, flag=bool(getattr(args, "trust_project", False)))


def project_agents_dir(args: argparse.Namespace, data_dir: Path, cwd: Path) -> Path | None:
    """The project's agent folder when the project is trusted; ``None`` (with one note when
    it holds agent files) otherwise."""
    folder = cwd / ".headwire" / "agents"
    if project_may(AGENTS_DIR_ENTRY, trusted_project(args, data_dir, cwd)):
        return folder
    try:
        has_agents = folder.is_dir() and any(folder.glob("*.md"))
    except OSError:
        has_agents = False
    if has_agents and folder.resolve() != (data_dir / "agents").resolve():
        warn(untrusted_note(f"agent definitions in {folder}", cwd))
    return None


def _project_folders_allowed(
    args: argparse.Namespace,
    data_dir: Path,
    cwd: Path,
    entry: str,
    sub: str,
    dirs: tuple[str, ...],
    what: str,
) -> bool:
    """Whether the project's ``<dir>/<sub>`` folders (trust table row ``entry``) may be read:
    in a trusted folder; otherwise ``False``, with one note naming ``what`` when one of them
    exists (and is not the user's own ``<data dir>/<sub>``)."""
    if project_may(entry, trusted_project(args, data_dir, cwd)):
        return True
    user = (data_dir / sub).resolve()
    try:
        present = any((cwd / d / sub).is_dir() and (cwd / d / sub).resolve() != user for d in dirs)
    except OSError:
        present = False
    if present:
        warn(untrusted_note(what, cwd))
    return False


def project_styles_allowed(args: argparse.Namespace, data_dir: Path, cwd: Path) -> bool:
    """Whether the project's output-style folders (``.headwire``/``.qwen``/``.claude``
    ``/output-styles``) may be read: in a trusted folder; otherwise ``False``, with one note
    when one of them exists."""
    from headwire.runtime.config.output_styles import STYLE_DIRS

    return _project_folders_allowed(
        args,
        data_dir,
        cwd,
        OUTPUT_STYLES_DIR_ENTRY,
        "output-styles",
        STYLE_DIRS,
        "project output styles",
    )


def project_skills_allowed(args: argparse.Namespace, data_dir: Path, cwd: Path) -> bool:
    """Whether the project's skill folders (``.headwire``/``.qwen``/``.claude``/``.agents``
    ``/skills``) may be read: in a trusted folder; otherwise ``False``, with one note when one
    of them exists."""
    from headwire.runtime.skills import PROJECT_DIRS

    return _project_folders_allowed(
        args, data_dir, cwd, SKILLS_DIR_ENTRY, "skills", PROJECT_DIRS, "project skills"
    )


__all__ = [
    "project_agents_dir",
    "project_skills_allowed",
    "project_styles_allowed",
    "trusted_project",
]
