"""May this call run: the permission rules, shell commands parsed, the live policy.

Its face, the modules other packages may import (the rest is private):

* :mod:`.live`: the session's one :class:`Policy` (approval mode, allow and deny rules);
* :mod:`.permissions`: answers to permission requests, the one-shot helpers;
* :mod:`.answers`: clients' answers checked as strictly as their requests;
* :mod:`.rules`: the grammar of ``--allowed-tools``/``--exclude-tools``/``--core-tools``;
* :mod:`.shell_rules`: shell rules decided on the parsed command (and the read-only check
  the shell tool is given).

``shell_syntax`` (the tree-sitter parse) is private.
"""

__all__ = ["answers", "live", "permissions", "rules", "shell_rules"]
