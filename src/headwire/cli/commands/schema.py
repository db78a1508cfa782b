"""``headwire schema``: print the JSON Schema (2020-12) of headwire's wire.

Without ``--mode`` the whole schema is printed (every mode, both directions); with it, one
mode as a standalone schema whose root validates a message headwire writes, and whose
``x-input`` names the ``$defs`` entry that validates a message it reads.  The schema is the
package's ``headwire/protocol/schema/wire.json``; ``docs/wire.md`` is generated from it.
"""

from __future__ import annotations

import argparse
import json
import sys

from headwire.errors import ExitCode
from headwire.io.stdio import stdout_failed
from headwire.protocol.schema import MODES, document, headwire_variant, mode_document

__all__ = ["run_schema"]

_PROG = "headwire schema"

_DESCRIPTION = """\
Print the JSON Schema (draft 2020-12) of every message headwire writes and reads: the headless
wires (JSON, stream-JSON, persistent sessions with their control messages), the Dual Output
sidecar and its reverse channel, and ACP.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=_PROG, description=_DESCRIPTION)
    parser.add_argument(
        "--mode",
        choices=MODES,
        default=None,
        help="print one mode as a standalone schema (default: the whole schema)",
    )
    parser.add_argument(
        "--headwire-only",
        action="store_true",
        help="leave out what only Qwen Code sends (the parts marked x-upstream-only)",
    )
    return parser


def run_schema(args: list[str]) -> int:
    """Run ``headwire schema ARGS``; return the exit code."""
    options = _parser().parse_args(args)  # exits with ExitCode.USAGE on a usage error
    schema = document() if options.mode is None else mode_document(options.mode)
    if options.headwire_only:
        schema = headwire_variant(schema)
    try:
        sys.stdout.write(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
        sys.stdout.flush()
    except OSError as exc:
        return stdout_failed("headwire schema", exc)
    return ExitCode.OK
