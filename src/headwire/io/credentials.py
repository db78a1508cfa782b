"""Keeping headwire's own API key out of its process's public face.

Any process of the same user (a tool's shell among them) can read ``/proc/PID/environ`` and
``/proc/PID/cmdline`` of headwire: they show the environment block and the arguments the
process was started with, whatever ``os.environ`` or ``sys.argv`` hold later.  Once the key has
been read, :func:`withhold_credentials`:

* moves ``OPENAI_API_KEY`` out of ``os.environ`` into a private table (so children never
  inherit it; headwire's own settings still read it through
  :func:`headwire.runtime.environment.credential_environment`) and registers every key it finds,
  there and in ``--openai-api-key`` (or an abbreviation argparse accepts);
* overwrites every occurrence of each key in the original environment block and argument block
  in place with ``*`` (their addresses come from ``/proc/self/stat``; the strings keep their
  length, so nothing that points into the blocks moves);
* makes the process non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``): no core dump, and a process
  of the same user without ``CAP_SYS_PTRACE`` can no longer read its memory or environment.

Everything here is best effort and silent: a failure leaves the process as it was (the output
scrubbing of :mod:`headwire.runtime.redact` still applies).  It costs about a millisecond and
runs only for the agent, after ``--version`` has been answered.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from collections.abc import Iterable, Iterator, Sequence

from headwire.runtime.environment import register_secret, withhold_secret_variables

KEY_FLAG = "--openai-api-key"
SHORTEST_ABBREVIATION = len("--openai-a")
"""argparse accepts any unambiguous prefix; ``--openai-a`` is the shortest for this flag."""
PR_SET_DUMPABLE = 4
ARG_START_FIELD = 48
"""``arg_start`` is field 48 of ``/proc/self/stat`` (1-based), then arg_end, env_start,
env_end (``man 5 proc``)."""


def flag_values(argv: Sequence[str]) -> Iterator[str]:
    """The values given to ``--openai-api-key`` (``--openai-api-key K``, ``...=K``, or an
    abbreviation), up to a ``--`` that ends the options."""
    for i, arg in enumerate(argv):
        if arg == "--":
            return
        name, equals, value = arg.partition("=")
        if len(name) >= SHORTEST_ABBREVIATION and KEY_FLAG.startswith(name):
            if equals:
                yield value
            elif i + 1 < len(argv):
                yield argv[i + 1]


def _blocks() -> list[tuple[int, int]]:
    """``[(arg_start, arg_end), (env_start, env_end)]`` of this process."""
    with open("/proc/self/stat", "rb") as f:
        data = f.read()
    fields = data[data.rindex(b")") + 2 :].split()  # from field 3 on (after "pid (comm)")
    first = ARG_START_FIELD - 3
    a0, a1, e0, e1 = (int(x) for x in fields[first : first + 4])
    return [(a0, a1), (e0, e1)]


def _mask_in_place(start: int, end: int, needles: Iterable[bytes]) -> int:
    """Overwrite every occurrence of each needle in memory ``[start, end)`` with ``*``."""
    if not 0 < start < end:
        return 0
    block = ctypes.string_at(start, end - start)
    masked = 0
    for needle in needles:
        at = block.find(needle)
        while at >= 0:
            ctypes.memset(start + at, ord("*"), len(needle))
            masked += 1
            at = block.find(needle, at + len(needle))
    return masked


def _encoded(value: str) -> bytes:
    try:
        return os.fsencode(value)
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")


def withhold_credentials(argv: Sequence[str]) -> int:
    """Take the API key out of this process's environment and out of what ``/proc`` shows of
    it (see the module docstring); return how many occurrences were overwritten in memory."""
    keys = list(withhold_secret_variables().values())
    keys += [v for v in flag_values(argv) if v.strip()]
    for key in keys:
        register_secret(key)
    needles = {_encoded(k) for k in keys if k}
    masked = 0
    if needles:
        with contextlib.suppress(OSError, ValueError, IndexError):
            for start, end in _blocks():
                masked += _mask_in_place(start, end, needles)
    _set_not_dumpable()
    return masked


def _set_not_dumpable() -> None:
    with contextlib.suppress(OSError, AttributeError, TypeError):
        ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)  # libc, linked into Python
