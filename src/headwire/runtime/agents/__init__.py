"""Subagents: the ``agent`` tool and the agent definitions it can run."""
