"""Built-in tools with Qwen Code's names and argument schemas.

Its face, the modules other packages may import (the rest is private):

* :mod:`.base`: the tool contract: ``Tool``, ``ToolContext``, ``ToolOutcome``;
* :mod:`.toolset`: a session's tools; the message for a tool it does not offer;
* :mod:`.registry`: the built-in tools, their names and aliases;
* :mod:`.output`: the model's budget of a result and its artifact;
* :mod:`.redacted`: an outcome with the registered secrets scrubbed;
* :mod:`.schema`: JSON Schema checks of tool inputs and outside schemas;
* :mod:`.offload`: cancellable work on threads;
* :mod:`.paths`: workspace confinement;
* :mod:`.shell`: the shell tool (its output envelope is shared with MCP);
* :mod:`.linear_regex`: RE2 with Python's meaning;
* :mod:`.worker`: the cancellable worker process (Python ``re``, a costly ``--json-schema`` check);
* :mod:`.atomic`: the one write path of every tool that writes a file;
* :mod:`.netguard`: which addresses a request may reach (``web_fetch``, HTTP hooks);
* :mod:`.skill`: the ``skill`` tool.

Each other module is one tool or its private helper.
"""

__all__ = [
    "atomic",
    "base",
    "linear_regex",
    "netguard",
    "offload",
    "output",
    "paths",
    "redacted",
    "registry",
    "schema",
    "shell",
    "skill",
    "toolset",
    "worker",
]
