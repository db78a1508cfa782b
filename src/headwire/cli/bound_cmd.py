"""``headwire bound``: stdin to stdout, with every textual tool result bounded.

The work is :class:`headwire.bound.BoundFilter`; this module only moves bytes.  stdin is read
in raw chunks of :data:`READ_SIZE` bytes, the filter's pieces are written to stdout as they
come, and warnings and the ``--stats`` summary go to stderr.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from typing import BinaryIO, TextIO, cast

from headwire.bound import BoundFilter, Format
from headwire.errors import ExitCode
from headwire.protocol.schema.stream import StreamCheck

__all__ = [
    "READ_SIZE",
    "run_bound",
]

READ_SIZE = 1 << 20
"""Bytes asked of stdin per read (a pipe may give fewer)."""

_PROG = "headwire bound"

_DESCRIPTION = """\
Read headless output on stdin and write it to stdout with every textual tool result bounded
to 65,536 JSON bytes (a head + marker + tail preview).  Every other line, including empty,
malformed and non-UTF-8 lines, is written byte for byte as it came; no line is dropped or
reordered.  Malformed lines (not UTF-8, not JSON) are reported on stderr as
"headwire bound: line N: reason".
"""

_EPILOG = """\
formats:
  stream-json  one event per line; "user" messages whose tool_result content is a string, a
               list of blocks (its texts share one 65,536-byte budget; image and other
               blocks are kept whole) or one text block
  json         one JSON array of such messages per line (upstream's -o json)
  acp          JSON-RPC lines; tool_call_update session updates, live or replayed by
               session/load, use the ACP projection (text blocks that it exempts, next to
               diffs or images or with extra keys, share the budget the same way)

exit status:
  0    success
  1    reading stdin or writing stdout failed
  2    usage error
  130  interrupted (SIGINT)
  141  stdout was closed by its reader before the stream ended (like SIGPIPE)
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=_PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--format",
        choices=[f.value for f in Format],
        default=Format.STREAM_JSON.value,
        help="the headless output format on stdin (default: %(default)s)",
    )
    parser.add_argument(
        "--validate",
        action="store_true",
        help="parse every line to report malformed JSON, and check every message against the "
        "wire schema (`headwire schema`), reporting each line outside it (slower); by default a "
        "line of at most 64 KiB that is UTF-8 and opens and closes like an object or array is "
        "not parsed",
    )
    parser.add_argument(
        "--stats",
        action="store_true",
        help="print a summary of what was bounded (lines, fields, bytes before/after) to stderr",
    )
    return parser


def _report(err: TextIO, flt: BoundFilter) -> None:
    for line_number, reason in flt.take_warnings():
        err.write(f"{_PROG}: line {line_number}: {reason}\n")


def _report_schema(err: TextIO, problems: list[tuple[int, str]]) -> None:
    for line_number, reason in problems:
        err.write(f"{_PROG}: line {line_number}: {reason}\n")


def _pump(
    inp: BinaryIO, out: BinaryIO, err: TextIO, flt: BoundFilter, check: StreamCheck | None = None
) -> None:
    """Copy ``inp`` to ``out`` through ``flt`` until end of input.

    Output is flushed after every read, so a live stream is passed on as it arrives (a read
    from a pipe returns what is there, not a full :data:`READ_SIZE`).
    """
    read = getattr(inp, "read1", inp.read)
    write = out.write
    while chunk := read(READ_SIZE):
        for piece in flt.feed(chunk):
            write(piece)
        out.flush()
        if flt.warnings:
            _report(err, flt)
        if check is not None:
            _report_schema(err, check.feed(chunk))
    for piece in flt.close():
        write(piece)
    out.flush()
    _report(err, flt)
    if check is not None:
        _report_schema(err, check.close())


def _buffered_stdout() -> BinaryIO:
    """``sys.stdout.buffer``, buffered even under ``python -u`` / ``PYTHONUNBUFFERED``.

    Unbuffered, it is a raw file whose ``write`` may write only part of a large piece.
    """
    out = sys.stdout.buffer
    if isinstance(out, io.RawIOBase):
        return cast(BinaryIO, io.BufferedWriter(out, buffer_size=1 << 16))
    return out


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null so the interpreter's final flush cannot raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def run_bound(args: list[str]) -> int:
    """Run ``headwire bound ARGS`` on the process's stdin/stdout; return the exit code."""
    options = _parser().parse_args(args)  # exits with ExitCode.USAGE on a usage error
    flt = BoundFilter(Format(options.format), validate=options.validate, measure=options.stats)
    err = sys.stderr
    try:
        check = StreamCheck(options.format) if options.validate else None
        _pump(sys.stdin.buffer, _buffered_stdout(), err, flt, check)
    except BrokenPipeError:
        _silence_stdout()
        return ExitCode.BROKEN_PIPE
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except OSError as exc:
        err.write(f"{_PROG}: {exc.strerror or exc}\n")
        return ExitCode.ERROR
    if options.stats:
        err.write(f"{_PROG}: {flt.stats.summary()}\n")
    return ExitCode.OK
