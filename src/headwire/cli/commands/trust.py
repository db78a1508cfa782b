"""``headwire trust``: the user's list of trusted folders.

A trusted folder's own configuration runs: the MCP servers of ``.headwire/settings.json`` and
the agent definitions of ``.headwire/agents/`` (see ``docs/security.md``).  Elsewhere they are
skipped with a note.  The list is ``<data dir>/trusted.json``; a folder trusts everything below
it.  For one run, ``--trust-project`` or ``HEADWIRE_TRUST_PROJECT=1`` does the same.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from headwire.errors import ExitCode
from headwire.io.stdio import say, stdout_failed, warn
from headwire.runtime.store.storage import data_dir
from headwire.runtime.trust import TRUST_FILE, add_trusted, trusted_folders

_PROG = "headwire trust"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG, description="Trust a folder's own headwire configuration."
    )
    parser.add_argument(
        "folder", nargs="?", default=None, help="the folder to trust (default: the current one)"
    )
    parser.add_argument("--list", action="store_true", help="print the trusted folders")
    return parser


def run_trust(argv: list[str]) -> int:
    """Add a folder to the trust list, or list it; returns the exit code."""
    args = _parser().parse_args(argv)
    root = data_dir()
    if args.list:
        return _print([str(folder) for folder in trusted_folders(root)])
    folder = Path(args.folder or os.getcwd())
    if not folder.is_dir():
        warn(f"{_PROG}: not a folder: {folder}")
        return ExitCode.USAGE
    try:
        real = add_trusted(folder, root)
    except OSError as exc:
        warn(f"{_PROG}: cannot write {root / TRUST_FILE}: {exc}")
        return ExitCode.ERROR
    return _print([f"trusted: {real}"])


def _print(lines: list[str]) -> int:
    """``lines`` on stdout; the exit code (:func:`~headwire.io.stdio.stdout_failed`'s when
    stdout cannot take them)."""
    try:
        for number, line in enumerate(lines, 1):
            say(line, flush=number == len(lines))
    except OSError as exc:
        return stdout_failed(_PROG, exc)
    return ExitCode.OK


__all__ = ["run_trust"]
