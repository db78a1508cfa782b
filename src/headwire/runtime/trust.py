"""Trusted folders: whether a project's own configuration may run code or reach the network.

A repository is data until its user says otherwise.  Project configuration that can execute or
connect -- the MCP servers of ``<project>/.headwire/settings.json`` and the agent definitions
of ``<project>/.headwire/agents/``, its ``hooks`` -- is used only when the project
folder is trusted:

* listed in the user's trust list ``<data dir>/trusted.json`` (``{"folders": ["/abs/path"]}``;
  a folder trusts everything below it), which only the user writes (``headwire trust``);
* or the run says so: ``--trust-project``, or ``HEADWIRE_TRUST_PROJECT=1`` (for CI).

Otherwise that configuration is skipped with one note on stderr.  Whatever the trust, values
in project files never expand headwire's own credentials (see
:func:`headwire.runtime.environment.tool_environment`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from headwire.runtime.storage import private_dir

TRUST_FILE = "trusted.json"
TRUST_ENV = "HEADWIRE_TRUST_PROJECT"
_TRUE = frozenset({"1", "true", "yes", "on"})


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(os.path.expanduser(str(path))))


def trusted_folders(data_dir: Path) -> list[Path]:
    """The folders of the user's trust list (an unreadable or malformed list trusts none)."""
    try:
        data = json.loads((data_dir / TRUST_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return []
    folders = data.get("folders") if isinstance(data, dict) else None
    if not isinstance(folders, list):
        return []
    return [_real(f) for f in folders if isinstance(f, str) and os.path.isabs(f)]


def is_trusted(
    project: Path,
    data_dir: Path,
    *,
    flag: bool = False,
    env: Mapping[str, str] | None = None,
) -> bool:
    """Whether ``project``'s own configuration may be used."""
    env = os.environ if env is None else env
    if flag or env.get(TRUST_ENV, "").strip().lower() in _TRUE:
        return True
    real = _real(project)
    folders = trusted_folders(data_dir)
    return any(real == folder or real.is_relative_to(folder) for folder in folders)


def add_trusted(project: Path, data_dir: Path) -> Path:
    """Add ``project`` to the trust list (created 0600 in a 0700 folder); returns the entry."""
    real = _real(project)
    folders = [str(f) for f in trusted_folders(data_dir)]
    if str(real) not in folders:
        folders.append(str(real))
    private_dir(data_dir)
    path = data_dir / TRUST_FILE
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump({"folders": folders}, out, indent=2)
        out.write("\n")
    os.replace(tmp, path)
    return real


def untrusted_note(what: str, project: Path) -> str:
    """The one stderr line for skipped project configuration."""
    return (
        f"headwire: note: {what} skipped: {project} is not a trusted folder "
        f"(trust it with 'headwire trust', --trust-project or {TRUST_ENV}=1)"
    )


__all__ = [
    "TRUST_ENV",
    "TRUST_FILE",
    "add_trusted",
    "is_trusted",
    "trusted_folders",
    "untrusted_note",
]
