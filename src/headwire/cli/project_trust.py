"""Whether this run may use the project's own configuration (see :mod:`headwire.runtime.trust`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from headwire.io.stdio import warn
from headwire.runtime.trust import AGENTS_DIR_ENTRY, is_trusted, project_may, untrusted_note


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


__all__ = ["project_agents_dir", "trusted_project"]
