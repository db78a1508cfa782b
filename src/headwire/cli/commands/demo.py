"""``python -m headwire.cli.commands.demo``: print an unbounded stream-JSON session to try ``bound``
on.

The session is shaped like upstream's: ``system/init``, an ``assistant`` tool call, the ``user``
``tool_result`` whose content is the tool's whole 499,999-byte output (as a CLI without the
projection would write it), the final ``assistant`` text and the ``result``.
"""

from __future__ import annotations

import sys

from headwire.wire import encode

SESSION = "00000000-0000-4000-8000-000000000000"


def demo_lines(size: int = 499_999) -> list[bytes]:
    """The demo session as stream-JSON lines (each ending in ``\\n``)."""
    usage = {"input_tokens": 11, "output_tokens": 3}
    messages = [
        {"type": "system", "subtype": "init", "uuid": SESSION, "session_id": SESSION},
        {
            "type": "assistant",
            "uuid": "a1",
            "session_id": SESSION,
            "parent_tool_use_id": None,
            "message": {
                "id": "a1",
                "type": "message",
                "role": "assistant",
                "model": "demo",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "call_1",
                        "name": "run_shell_command",
                        "input": {"command": f"python3 -c \"print('x'*{size - 1})\""},
                    }
                ],
                "stop_reason": "tool_use",
                "usage": usage,
            },
        },
        {
            "type": "user",
            "uuid": "u1",
            "session_id": SESSION,
            "parent_tool_use_id": None,
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_1",
                        "is_error": False,
                        "content": "x" * (size - 1) + "\n",
                    }
                ],
            },
        },
        {
            "type": "result",
            "subtype": "success",
            "uuid": "r1",
            "session_id": SESSION,
            "is_error": False,
            "num_turns": 2,
            "result": "done",
            "usage": usage,
            "permission_denials": [],
        },
    ]
    return [encode(m) + b"\n" for m in messages]


def main() -> int:
    """Write the demo session to stdout."""
    try:
        sys.stdout.buffer.writelines(demo_lines())
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        return 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
