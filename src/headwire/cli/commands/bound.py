"""``headwire bound [FILE ...]``: files (or stdin) to stdout, every textual tool result bounded.

The work is :class:`headwire.bound.BoundFilter`; this module only moves bytes.  Each input (the
FILEs in order, ``-`` for stdin; stdin when none is given) is read in raw chunks of
:data:`READ_SIZE` bytes through a filter of its own, so a file without a final newline never
joins its last line to the next file's first; the pieces are written to stdout as they come,
and warnings and the ``--stats`` summary (over all inputs) go to stderr.  A FILE that cannot
be read is reported on stderr and skipped, like ``cat`` does, and the exit status is then 1.
"""

from __future__ import annotations

import argparse
import io
import sys
from typing import TYPE_CHECKING, BinaryIO, cast

from headwire.bound import BoundFilter, BoundStats, Format
from headwire.cli.flags.parsing import Parser
from headwire.errors import ExitCode
from headwire.io.stdio import stdout_failed, warn

if TYPE_CHECKING:  # loaded by --validate only: a plain filter does not build the schema
    from headwire.protocol.schema.stream import StreamCheck

__all__ = [
    "READ_SIZE",
    "run_bound",
]

READ_SIZE = 1 << 20
"""Bytes asked of stdin per read (a pipe may give fewer)."""

_PROG = "headwire bound"

_DESCRIPTION = """\
Read headless output from the FILEs in order (or stdin: no FILE, or '-') and write it to
stdout with every textual tool result bounded
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
  1    reading an input or writing stdout failed (an unreadable FILE is skipped)
  2    usage error
  130  interrupted (SIGINT)
  141  stdout was closed by its reader before the stream ended (like SIGPIPE)
"""


def _parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=_PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="headless output files, read in order; '-' is stdin (default: stdin)",
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


def _report(flt: BoundFilter, name: str | None = None) -> None:
    where = f"{_PROG}: {name}: " if name is not None else f"{_PROG}: "
    for line_number, reason in flt.take_warnings():
        warn(f"{where}line {line_number}: {reason}")


def _report_schema(problems: list[tuple[int, str]], name: str | None = None) -> None:
    where = f"{_PROG}: {name}: " if name is not None else f"{_PROG}: "
    for line_number, reason in problems:
        warn(f"{where}line {line_number}: {reason}")


def _pump(
    inp: BinaryIO,
    out: BinaryIO,
    flt: BoundFilter,
    name: str | None = None,
    check: StreamCheck | None = None,
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
            _report(flt, name)
        if check is not None:
            _report_schema(check.feed(chunk), name)
    for piece in flt.close():
        write(piece)
    out.flush()
    _report(flt, name)
    if check is not None:
        _report_schema(check.close(), name)


def _buffered_stdout() -> BinaryIO:
    """``sys.stdout.buffer``, buffered even under ``python -u`` / ``PYTHONUNBUFFERED``.

    Unbuffered, it is a raw file whose ``write`` may write only part of a large piece.
    """
    out = sys.stdout.buffer
    if isinstance(out, io.RawIOBase):
        return cast(BinaryIO, io.BufferedWriter(out, buffer_size=1 << 16))
    return out


def run_bound(args: list[str]) -> int:
    """Run ``headwire bound ARGS`` on the process's stdin/stdout; return the exit code."""
    options = _parser().parse_args(args)  # exits with ExitCode.USAGE on a usage error
    fmt = Format(options.format)
    out = _buffered_stdout()
    total = BoundStats()
    status = ExitCode.OK
    names: list[str | None] = list(options.files) or [None]
    try:
        for name in names:
            flt = BoundFilter(fmt, validate=options.validate, measure=options.stats)
            check = None
            if options.validate:
                from headwire.protocol.schema.stream import StreamCheck

                check = StreamCheck(options.format)
            if name is None or name == "-":
                _pump(sys.stdin.buffer, out, flt, name, check)
            else:
                try:
                    f = open(name, "rb")  # noqa: SIM115 - closed below
                except OSError as exc:
                    warn(f"{_PROG}: {name}: {exc.strerror or exc}")
                    status = ExitCode.ERROR
                    continue
                with f:
                    try:
                        _pump(cast(BinaryIO, f), out, flt, name, check)
                    except IsADirectoryError as exc:
                        warn(f"{_PROG}: {name}: {exc.strerror}")
                        status = ExitCode.ERROR
            total.add(flt.stats)
    except BrokenPipeError as exc:
        return stdout_failed(_PROG, exc)
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except OSError as exc:
        warn(f"{_PROG}: {exc.strerror or exc}")
        return ExitCode.ERROR
    if options.stats:
        warn(f"{_PROG}: {total.summary()}")
    return status
