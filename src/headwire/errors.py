"""Every error headwire raises, in one tree, and the process exit codes, defined once.

::

    HeadwireError
    ├── ConfigError        bad flags, settings, scripts, agent or MCP files (exit 2)
    │   └── UsageError     a command-line usage error
    ├── ProtocolError      a peer broke a wire protocol (stdin lines, JSON-RPC, Dual Output)
    │   ├── LocalProtocolError   we were asked to do something the protocol forbids
    │   └── RemoteProtocolError  the peer sent something the protocol forbids
    ├── ToolError          a tool refused or failed a call (the model reads the message)
    ├── ModelServerError   a model call failed (status, retryable)
    ├── RunLimitError      a run hit a limit (turns, budget, time, tool calls)
    ├── StorageError       the data directory (recordings, artifacts) cannot be used
    └── SDKError           errors of the Python client (:mod:`headwire.sdk`)

Each module defines its own precise subclasses (``PathDenied(ToolError)``,
``RpcError(RemoteProtocolError)`` …), so a caller can catch as narrowly or as broadly as it
needs.  Configuration errors also derive from :class:`ValueError`, as they did before the tree.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """The ``headwire`` process's exit codes (the README's exit-code table)."""

    OK = 0
    ERROR = 1
    """The run ended with an error result (model failure, tool crash, cancelled)."""
    USAGE = 2
    """Bad flags or input, found before the run started."""
    TURN_LIMIT = 53
    """A run limit other than ``--max-tool-calls`` was reached: ``--max-session-turns`` /
    ``--max-turns`` (Qwen Code's code), ``--max-budget-usd``, ``--max-duration``."""
    RUN_BUDGET = 55
    """``--max-tool-calls`` was reached (Qwen Code's code for its run budgets)."""
    INTERRUPTED = 130
    """SIGINT (128 + 2), as a shell reports it."""
    BROKEN_PIPE = 141
    """The reader of stdout went away (128 + SIGPIPE), ``headwire bound`` only."""
    TERMINATED = 143
    """SIGTERM (128 + 15)."""


class HeadwireError(Exception):
    """The root of every exception headwire defines."""


class ConfigError(HeadwireError, ValueError):
    """Configuration that cannot be used; ``str()`` is the one-line message for the user."""


class UsageError(ConfigError):
    """A command-line usage error: reported on stderr with exit code 2."""


class ProtocolError(HeadwireError):
    """A wire protocol was broken."""


class LocalProtocolError(ProtocolError):
    """This side was about to break the protocol (e.g. answer a request twice)."""


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol (a malformed line, an unknown request)."""


class ToolError(HeadwireError):
    """A tool refused or failed a call; the message is model-facing."""


class ModelServerError(HeadwireError):
    """A model call failed."""


class RunLimitError(HeadwireError):
    """A run reached one of its limits."""


class StorageError(HeadwireError):
    """The data directory could not be used (recordings, artifacts)."""


class SDKError(HeadwireError):
    """Base class of the Python client's errors."""


__all__ = [
    "ConfigError",
    "ExitCode",
    "HeadwireError",
    "LocalProtocolError",
    "ModelServerError",
    "ProtocolError",
    "RemoteProtocolError",
    "RunLimitError",
    "SDKError",
    "StorageError",
    "ToolError",
    "UsageError",
]
