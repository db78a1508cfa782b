"""Subagents: the ``agent`` tool and the agent definitions it can run.

Its face, the modules other packages may import (the rest is private):

* :mod:`.definitions`: agent definitions read from files and flags;
* :mod:`.tool`: the ``agent`` tool.
"""

__all__ = ["definitions", "tool"]
