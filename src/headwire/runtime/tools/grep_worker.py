"""The killable side of ``grep_search``: Python ``re`` in a worker process.

A pattern RE2 cannot run with Python's meaning (a backreference, look-around, ``\\b``) is
searched here, with the same walk, filters and limits as the in-process search.  ``re`` can
backtrack for a very long time and holds its process's GIL meanwhile, so it never runs in
headwire's own process: the worker is a separate Python (its own session, so a terminal's
Ctrl-C reaches headwire only), it gets one JSON request on stdin and answers one JSON object on
stdout (``json``, whose ``\\udcxx`` escapes carry a non-UTF-8 file name both ways), and it
is killed (SIGKILL) the moment the call is cancelled or passes the tool timeout
(:data:`DEFAULT_TIMEOUT_S` when none is set).

A worker never outlives headwire, even one killed with SIGKILL, which cannot clean up: on Linux
the worker asks the kernel for SIGKILL when its parent dies (``PR_SET_PDEATHSIG``, and exits at
once if the parent is already gone), and everywhere its CPU time is capped a little past the
timeout (``RLIMIT_CPU``), so a runaway pattern stops by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
import sys
from pathlib import Path
from typing import Any

from headwire.runtime.environment import tool_environment
from headwire.runtime.tools.offload import StepTimedOut

DEFAULT_TIMEOUT_S = 120.0
_CPU_GRACE_S = 5
"""CPU seconds a worker may use past its timeout before the kernel stops it."""
_PARENT_ENV = "HEADWIRE_GREP_WORKER_PARENT"
_PR_SET_PDEATHSIG = 1
_ENTRY = "from headwire.runtime.tools.grep_worker import main; main()"


def _package_root() -> str:
    import headwire

    return str(Path(headwire.__file__).resolve().parents[1])


async def search_in_worker(
    pattern: str,
    glob: str | None,
    pairs: list[tuple[Path, Path]],
    roots: tuple[Path, ...],
    found: Any,
    timeout_s: float | None,
) -> None:
    """Search in a worker process and add its matches to ``found`` (a ``grep.Matches``);
    :class:`~headwire.runtime.tools.offload.StepTimedOut` after the timeout."""
    limit = timeout_s if timeout_s is not None and timeout_s > 0 else DEFAULT_TIMEOUT_S
    request = {
        "cpu_seconds": math.ceil(limit) + _CPU_GRACE_S,
        "pattern": pattern,
        "glob": glob,
        "pairs": [[os.fsdecode(s), os.fsdecode(r)] for s, r in pairs],
        "roots": [os.fsdecode(r) for r in roots],
        "keep": found.keep,
    }
    env = tool_environment()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_package_root(), env.get("PYTHONPATH")]))
    env[_PARENT_ENV] = str(os.getpid())
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _ENTRY,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(json.dumps(request).encode()), limit)
    except TimeoutError:
        raise StepTimedOut(limit) from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(Exception):
                await asyncio.shield(proc.wait())
    try:
        answer = json.loads(out)
    except ValueError:
        found.incomplete = True
        return
    found.lines.extend(answer["lines"])
    found.files.update(dict.fromkeys(answer["files"]))
    found.total += answer["total"]
    found.incomplete = found.incomplete or answer["incomplete"]


def _die_with_parent() -> None:
    """Ask the kernel to SIGKILL this worker when headwire dies (Linux); exit now if it has."""
    parent = os.environ.pop(_PARENT_ENV, "")
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent.isdigit() and os.getppid() != int(parent):
        os._exit(1)  # orphaned before the request was armed


def _cap_cpu(seconds: int) -> None:
    """Stop this worker after ``seconds`` of CPU time (SIGXCPU, then SIGKILL a second later)."""
    import resource

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGXCPU dumps no core
        resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds + 1))


def main() -> None:
    """The worker: read the request, search with ``re``, write the answer."""
    _die_with_parent()
    from headwire.runtime.tools.grep import Matches, compile_pattern, search, search_text

    request = json.loads(sys.stdin.buffer.read())
    _cap_cpu(int(request.get("cpu_seconds") or DEFAULT_TIMEOUT_S + _CPU_GRACE_S))
    regex = compile_pattern(request["pattern"])
    found = Matches(keep=request["keep"])
    roots = tuple(Path(r) for r in request["roots"])

    def scan(path: str, data: bytes) -> None:
        search_text(regex, data.decode("utf-8", errors="replace"), path, found)

    for start, root in request["pairs"]:
        search(Path(start), Path(root), scan, request["glob"], found, roots, lambda: False)
    answer = {
        "lines": found.lines,
        "files": list(found.files),
        "total": found.total,
        "incomplete": found.incomplete,
    }
    sys.stdout.write(json.dumps(answer))  # ASCII: a surrogate-escaped path survives
