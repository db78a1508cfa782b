"""The subcommands: bound, sessions, doctor, schema, trust (and the demo).

Its face, the modules other packages may import (the rest is private):

* :mod:`.bound`: ``headwire bound``;
* :mod:`.sessions`: ``headwire sessions``;
* :mod:`.doctor`: ``headwire doctor``;
* :mod:`.schema`: ``headwire schema``;
* :mod:`.trust`: ``headwire trust``.

``demo`` is run as ``python -m headwire.cli.commands.demo``.
"""

__all__ = ["bound", "doctor", "schema", "sessions", "trust"]
