"""The cancellable worker: slow, uninterruptible work in a process that can be killed at once.

Some work cannot be interrupted from inside headwire's own process: Python ``re`` backtracking
(``grep_search``'s fallback) or ``jsonschema`` checking a hostile answer (``uniqueItems`` is
quadratic) hold the GIL for as long as they run, so no signal handler and no cancellation gets a
turn.  Such work runs here instead: :func:`run_in_worker` starts a separate Python (its own
session, so a terminal's Ctrl-C reaches headwire only), sends it one JSON request on stdin and
reads one JSON answer from stdout (``json``, whose ``\\udcxx`` escapes carry a non-UTF-8 file
name both ways).  The worker is killed (SIGKILL) the moment the awaiting coroutine is cancelled
or the timeout passes (:data:`DEFAULT_TIMEOUT_S` when none is set).

A worker never outlives headwire, even one killed with SIGKILL, which cannot clean up: on Linux
the worker asks the kernel for SIGKILL when its parent dies (``PR_SET_PDEATHSIG``, and exits at
once if the parent is already gone), and everywhere its CPU time is capped a little past the
timeout (``RLIMIT_CPU``), so runaway work stops by itself.

Users (each a module with a ``main()`` that calls :func:`serve`; its name is in the worker's
command line): :data:`WORKER_MODULES`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from headwire.errors import ToolError
from headwire.runtime.environment import tool_environment
from headwire.runtime.tools.offload import StepTimedOut

DEFAULT_TIMEOUT_S = 120.0
_CPU_GRACE_S = 5
"""CPU seconds a worker may use past its timeout before the kernel stops it."""
_PARENT_ENV = "HEADWIRE_WORKER_PARENT"
_PR_SET_PDEATHSIG = 1
WORKER_MODULES = ("headwire.runtime.tools.grep_worker", "headwire.runtime.agent.structured")
"""Every module whose work runs in a worker (a test keeps this list true)."""


class WorkerFailed(ToolError):
    """The worker ended without an answer (it crashed, or its CPU cap stopped it)."""


def _package_root() -> str:
    import headwire

    return str(Path(headwire.__file__).resolve().parents[1])


async def run_in_worker(module: str, request: dict[str, Any], timeout_s: float | None) -> Any:
    """Run ``module``'s ``main()`` on ``request`` in a worker process and return its answer.

    :class:`~headwire.runtime.tools.offload.StepTimedOut` after the timeout,
    :class:`WorkerFailed` when the worker gives no answer; cancelling the caller kills it.
    """
    if module not in WORKER_MODULES:
        raise ValueError(f"{module} is not a worker module")
    limit = timeout_s if timeout_s is not None and timeout_s > 0 else DEFAULT_TIMEOUT_S
    payload = {**request, "cpu_seconds": math.ceil(limit) + _CPU_GRACE_S}
    env = tool_environment()
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [_package_root(), env.get("PYTHONPATH")]))
    env[_PARENT_ENV] = str(os.getpid())
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        f"from {module} import main; main()",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(json.dumps(payload).encode()), limit)
    except TimeoutError:
        raise StepTimedOut(limit) from None
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(Exception):
                await asyncio.shield(proc.wait())
    try:
        return json.loads(out)
    except ValueError:
        raise WorkerFailed(
            f"the worker stopped without an answer (exit {proc.returncode})"
        ) from None


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


def serve(answer: Callable[[dict[str, Any]], Any]) -> None:
    """The worker's side: arm the safeguards, read the request, write ``answer(request)``."""
    _die_with_parent()
    request = json.loads(sys.stdin.buffer.read())
    _cap_cpu(int(request.get("cpu_seconds") or DEFAULT_TIMEOUT_S + _CPU_GRACE_S))
    sys.stdout.write(json.dumps(answer(request)))  # ASCII: a surrogate-escaped text survives
