"""The agent loop and what holds a turn to account: limits, meter, structured output.

Its face, the modules other packages may import (the rest is private):

* :mod:`.loop`: the :class:`Agent` (a session's conversation, one event stream) and its
  ``AgentConfig``;
* :mod:`.limits`: the limits of a run (one gate for every model and tool call);
* :mod:`.meter`: what a session spends (tokens, cost) and the budget check;
* :mod:`.output_schema`: ``--json-schema`` read and checked;
* :mod:`.structured`: a turn's final answer checked against that schema.

Compaction of the conversation will live here.
"""

__all__ = ["context_keeper", "limits", "loop", "meter", "output_schema", "structured"]
