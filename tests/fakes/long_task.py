"""A long task for the fake model servers: a limited context window and a model that runs many
big shell commands, for the context-management tests and ``benchmarks/long_run.py``.

The window.  A request is measured by :func:`estimate_tokens`: the byte length of its HTTP body
divided by 4, rounded up (the usual rule of thumb for English text and JSON).  A server with a
window rejects a request whose estimate exceeds it with the provider's "too long" error
(OpenAI's HTTP 400 ``context_length_exceeded`` in :mod:`tests.fakes.fake_openai`) and reports
the same estimate as the usage of every request it answers (``prompt_tokens``), so the usage a
client sees is honest: what the server counts is exactly what it refuses on.  The answer's own
tokens are estimated the same way from the reply's JSON.

The task (:class:`LongTask`).  The model asks for ``steps`` shell calls one after the other,
each printing ``output_bytes`` bytes (``yes LINE | head -c N``; 20,000 bytes are about 5,000
tokens), then answers :attr:`LongTask.final_text`.  Its state is the number of calls issued so
far, kept by the server, so the task goes on whatever the client keeps of the conversation; a
rejected request changes nothing.  A request that offers no tools, or whose last message is the
user's and asks for a summary (near its end), is a summary request (how a client compacts its
history): it is answered with a short summary naming the progress, and counted in
:attr:`LongTask.summaries`.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any

BYTES_PER_TOKEN = 4
SUMMARY_WORDS = re.compile(r"summar|compress|compact|state_snapshot", re.IGNORECASE)


def estimate_tokens(raw: bytes | str) -> int:
    """The token estimate of a request or answer body: its UTF-8 bytes / 4, rounded up."""
    size = len(raw.encode() if isinstance(raw, str) else raw)
    return -(-size // BYTES_PER_TOKEN)


def openai_overflow_error(tokens: int, window: int) -> dict[str, Any]:
    """OpenAI's body for a request over the window (HTTP 400)."""
    return {
        "error": {
            "message": (
                f"This model's maximum context length is {window} tokens. However, your "
                f"messages resulted in {tokens} tokens. Please reduce the length of the messages."
            ),
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }


def _last_user_text(messages: list[Any]) -> str:
    """The text of the last message when it is the user's (else "")."""
    message = messages[-1] if messages else None
    if isinstance(message, dict) and message.get("role") == "user":
        content = message.get("content")
        return content if isinstance(content, str) else json.dumps(content)
    return ""


@dataclass
class LongTask:
    """The scripted long task (see the module docstring); thread-safe."""

    steps: int = 30
    output_bytes: int = 20_000
    tool: str = "run_shell_command"
    delegate: bool = False
    """The first answer is an ``agent`` call: a subagent then runs the steps."""
    issued: int = 0
    summaries: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def final_text(self) -> str:
        """The answer once every step ran."""
        return f"All {self.steps} steps done."

    def command(self, step: int) -> str:
        """The shell command of step ``step`` (1-based): ``output_bytes`` bytes of output."""
        line = f"step {step} of the long task: lorem ipsum dolor sit"
        return f"yes '{line}' | head -c {self.output_bytes}"

    @staticmethod
    def is_summary_request(tools: list[Any], messages: list[Any]) -> bool:
        """A request offering no tools, or ending with a user message that asks for a summary."""
        return not tools or bool(SUMMARY_WORDS.search(_last_user_text(messages)[-600:]))

    def next_reply(self, tools: list[Any], messages: list[Any]) -> dict[str, Any]:
        """The reply (in :mod:`tests.fakes.fake_openai`'s script form, without usage)."""
        with self._lock:
            if self.is_summary_request(tools, messages):
                self.summaries += 1
                return {
                    "text": (
                        f"Summary: the user asked for a {self.steps}-step task; steps 1 to "
                        f"{self.issued} were run with {self.tool} and each printed its "
                        "output. Continue with the next step."
                    )
                }
            if self.delegate:
                self.delegate = False
                args = {
                    "description": "run the long task",
                    "prompt": "Run the long task: call the tool as asked until it is finished.",
                    "subagent_type": "general-purpose",
                }
                return {"tool": "agent", "args": args, "id": "call_delegate"}
            if self.issued < self.steps:
                self.issued += 1
                return {
                    "tool": self.tool,
                    "args": {"command": self.command(self.issued)},
                    "id": f"call_step_{self.issued}",
                }
            return {"text": self.final_text}
