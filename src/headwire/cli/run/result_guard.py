"""One ``result``, always: the stand-in result of a run that ended before its turn could.

In JSON and stream-JSON modes (a persistent session is stream-JSON) a client decides from the
last line, so a run that fails before its turn starts (bad flags, a bad settings file or
``--json-schema``, no model, a signal while MCP servers start) still ends with exactly one error
``result`` (``error_during_execution``, ``errors: [message]``, zero usage and cost), next to the
one-line message on stderr; the exit code is the failure's (2 for what is found before the run,
130/143 for a signal).  Text mode keeps stdout empty.  :class:`ResultGuard` watches the messages
of the run and writes the stand-in only when no turn's result went out.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Sequence

from headwire.protocol import messages as m
from headwire.protocol.messages import InterimResult, JsonDict
from headwire.wire import encode

Write = Callable[[bytes], None]


def output_format_of(argv: Sequence[str]) -> str:
    """The ``-o/--output-format`` that ``argv`` asks for (``text`` when none is readable);
    ``--input-format stream-json`` alone means stream-JSON too."""
    found = "text"
    stream_input = False
    args = list(argv)
    for index, arg in enumerate(args):
        if arg == "--":
            break
        value: str | None = None
        if arg in ("-o", "--output-format", "--input-format") and index + 1 < len(args):
            value = args[index + 1]
        elif arg.startswith(("--output-format=", "--input-format=")):
            value = arg.split("=", 1)[1]
        elif arg.startswith("-o") and len(arg) > 2 and not arg.startswith("--"):
            value = arg[2:].removeprefix("=")
        if value is None:
            continue
        if arg.startswith("--input-format"):
            stream_input = value == "stream-json"
        elif value in ("text", "json", "stream-json"):
            found = value
    return "stream-json" if stream_input else found


def failure_result(message: str, session_id: str | None = None, exit_code: int = 1) -> JsonDict:
    """The stand-in error result (nothing ran: zero durations, usage and cost); ``exit_code``
    is the process's (2 for a usage error, 130/143 after a signal)."""
    result = m.result_error(
        uuid=str(uuid.uuid4()),
        session_id=session_id or str(uuid.uuid4()),
        duration_ms=0,
        duration_api_ms=0,
        num_turns=0,
        usage=m.usage_dict(0, 0, 0),
        permission_denials=[],
        message=message,
        run=m.run_fields(stop_reason=None, total_cost_usd=0, model_usage={}, exit_code=exit_code),
    )
    return result


def _stdout(data: bytes) -> None:
    try:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass  # nobody reads stdout: stderr has the message


class ResultGuard:
    """Whether a run's ``result`` went out; writes the stand-in when it did not."""

    def __init__(self, output_format: str) -> None:
        self.output_format = output_format
        self.done = False
        self.session_id: str | None = None

    def seen(self, message: JsonDict) -> None:
        """Note a message on its way to stdout (a turn's own result settles the run)."""
        if message.get("type") == "result" and not isinstance(message, InterimResult):
            self.done = True

    def fail(self, message: str, write: Write | None = None, exit_code: int = 1) -> None:
        """End the run with the stand-in result, unless a result already went out (or the
        format is text); ``exit_code`` is the process's."""
        if self.done or self.output_format not in ("json", "stream-json"):
            return
        self.done = True
        data = encode(failure_result(message, self.session_id, exit_code))
        data = b"[" + data + b"]\n" if self.output_format == "json" else data + b"\n"
        (write or _stdout)(data)


__all__ = ["ResultGuard", "failure_result", "output_format_of"]
