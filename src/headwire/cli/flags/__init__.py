"""The command line's flags, one module per concern, and the parser they share.

Its face, the modules other packages may import (the rest is private):

* :mod:`.agent`: the headless agent's parser (every flag of ``headwire [options] [prompt]``);
* :mod:`.parsing`: the parser every command uses: short errors, no abbreviations;
* :mod:`.contract`: ``--json-schema``, ``--max-budget-usd``, ``--max-duration``;
* :mod:`.permissions`: the permission flags as one live policy;
* :mod:`.model`: the model from flags and environment;
* :mod:`.settings`: settings, prompt files and ``--agents`` applied to the flags;
* :mod:`.trust`: whether this run may use the project's own configuration;
* :mod:`.claude_argv`: Claude Code's variadic tool flags, read before argparse.
"""

__all__ = [
    "agent",
    "claude_argv",
    "contract",
    "model",
    "parsing",
    "permissions",
    "settings",
    "trust",
]
