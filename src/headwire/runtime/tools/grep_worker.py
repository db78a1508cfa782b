"""The killable side of ``grep_search``: Python ``re`` in a worker process.

A pattern RE2 cannot run with Python's meaning (a backreference, look-around, ``\\b``) is
searched here, with the same walk, filters and limits as the in-process search.  ``re`` can
backtrack for a very long time and holds its process's GIL meanwhile, so it never runs in
headwire's own process: it runs in the cancellable worker (:mod:`headwire.runtime.tools.worker`,
which kills it the moment the call is cancelled or passes the tool timeout, and caps its CPU
time), with :data:`~headwire.runtime.tools.worker.DEFAULT_TIMEOUT_S` when no timeout is set.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from headwire.runtime.tools.worker import DEFAULT_TIMEOUT_S, WorkerFailed, run_in_worker, serve

__all__ = ["DEFAULT_TIMEOUT_S", "main", "search_in_worker"]


async def search_in_worker(
    pattern: str,
    glob: str | None,
    pairs: list[tuple[Path, Path]],
    roots: tuple[Path, ...],
    found: Any,
    timeout_s: float | None,
) -> None:
    """Search in a worker process and add its matches to ``found`` (a ``grep_walk.Matches``);
    :class:`~headwire.runtime.tools.offload.StepTimedOut` after the timeout."""
    request = {
        "pattern": pattern,
        "glob": glob,
        "pairs": [[os.fsdecode(s), os.fsdecode(r)] for s, r in pairs],
        "roots": [os.fsdecode(r) for r in roots],
        "keep": found.keep,
    }
    try:
        answer = await run_in_worker(__name__, request, timeout_s)
    except WorkerFailed:
        found.incomplete = True
        return
    found.lines.extend(answer["lines"])
    found.files.update(dict.fromkeys(answer["files"]))
    found.total += answer["total"]
    found.incomplete = found.incomplete or answer["incomplete"]


def _search(request: dict[str, Any]) -> dict[str, Any]:
    """The worker's job: search with ``re`` as the request says."""
    from headwire.runtime.tools.grep_walk import Matches, compile_pattern, search, search_text

    regex = compile_pattern(request["pattern"])
    found = Matches(keep=request["keep"])
    roots = tuple(Path(r) for r in request["roots"])

    def scan(path: str, data: bytes) -> None:
        search_text(regex, data.decode("utf-8", errors="replace"), path, found)

    for start, root in request["pairs"]:
        search(Path(start), Path(root), scan, request["glob"], found, roots, lambda: False)
    return {
        "lines": found.lines,
        "files": list(found.files),
        "total": found.total,
        "incomplete": found.incomplete,
    }


def main() -> None:
    """The worker process: read the request, search with ``re``, write the answer."""
    serve(_search)
