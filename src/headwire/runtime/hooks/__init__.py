"""Hooks: the user's commands run at the agent's events, and what they decide.

Its face, the modules other packages may import (the rest is private):

* :mod:`.decide`: matchers, the input each event gets, what a hook's answer decides (pure);
* :mod:`.runner`: the session's ``HookRunner`` (command, HTTP and SDK-callback hooks).
"""

__all__ = ["decide", "runner"]
