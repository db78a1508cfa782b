"""The agent's front ends (one-shot, session, REPL) and what they share.

Its face, the modules other packages may import (the rest is private):

* :mod:`.oneshot`: the headless agent: flags to a run in the mode they ask for (``main``).

Private to it: ``session`` (the persistent stream-JSON session), ``repl`` and ``slash``
(the REPL), ``dual`` (Dual Output), ``progress`` (the terminal view), ``result_guard``.
The ACP front end is :mod:`headwire.acp`.
"""

__all__ = ["oneshot"]
