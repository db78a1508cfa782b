"""How the ``headwire`` process ends once its exit code is decided.

A run imports a few hundred modules; the interpreter's own shutdown then spends tens of
milliseconds freeing them one by one, after every byte the run owed is already written.
:func:`leave` does what a normal exit must do, in the same order, and then ends the process
without that teardown:

1. waits for the non-daemon threads (``threading._shutdown``, as the interpreter does);
2. runs the ``atexit`` handlers (a library's flush, a temporary folder's removal);
3. flushes every file object still open for writing on a regular file (a writer some feature
   left for the teardown to flush and close loses nothing: the teardown would have flushed
   it); one on a pipe, FIFO or terminal is left alone, since its reader may never read again
   and no signal is heeded any more (:func:`~headwire.io.signals.ignore_until_exit`);
4. flushes ``sys.stdout`` and ``sys.stderr``: if the wire cannot be flushed (a closed pipe),
   or the wire's writer stopped on an error other than its reader leaving (a full disk, an I/O
   error: :func:`~headwire.io.writer.output_failed`), and the run was otherwise a success,
   the code becomes 120, as CPython reports a failed flush at exit;
5. ``os._exit(code)``.

Under a tracer or a profiler (coverage, pytest's in-process runs, ``-X importtime`` readers
that want the normal shutdown) it raises ``SystemExit(code)`` instead, so they see the exit.
"""

import atexit
import gc
import io
import os
import stat
import sys

from headwire.io.stdio import flush_standard_streams

FLUSH_FAILED = 120
"""The exit code when stdout or stderr could not take what a run that exited 0 wrote (what
CPython itself returns when flushing them at exit fails)."""


_WRITERS = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom)


def flush_open_files() -> int:
    """Flush every open text or buffered file object on a regular file (a write there cannot
    wait on a reader), text wrappers first (theirs is the outer buffer); returns how many were
    flushed.  The standard streams are :func:`flush_standard_streams`'s.  A few milliseconds:
    one pass over the objects the garbage collector tracks."""
    found = [o for o in gc.get_objects() if type(o) in _WRITERS]
    found.sort(key=lambda o: type(o) is not io.TextIOWrapper)
    flushed = 0
    for stream in found:
        try:
            if stream.closed or not stream.writable() or stream.fileno() <= 2:
                continue
            if stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                stream.flush()
                flushed += 1
        except (OSError, ValueError):
            pass  # the teardown would have failed the same way, silently
    return flushed


def _observed() -> bool:
    """Whether a tracer or profiler is watching (then the normal shutdown is kept)."""
    return sys.gettrace() is not None or sys.getprofile() is not None


def leave(code: int) -> None:
    """End the process with ``code`` after the steps a normal exit takes (see the module
    docstring), skipping the interpreter's teardown of its modules.  Never returns."""
    if _observed():
        raise SystemExit(code)
    threading = sys.modules.get("threading")  # never imported: no thread to wait for
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    atexit._run_exitfuncs()
    flush_open_files()
    if not flush_standard_streams() and code == 0:
        code = FLUSH_FAILED
    writer = sys.modules.get("headwire.io.writer")  # never imported: nothing written through it
    if code == 0 and writer is not None and writer.output_failed():
        code = FLUSH_FAILED
    os._exit(code)
