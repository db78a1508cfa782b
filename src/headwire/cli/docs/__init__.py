"""Generators of the committed references: docs/cli.md, settings.md and wire.md.

Its face, the modules other packages may import (the rest is private):

* :mod:`.cli`: ``python -m headwire.cli.docs.cli > docs/cli.md``;
* :mod:`.settings`: ``python -m headwire.cli.docs.settings > docs/settings.md``;
* :mod:`.wire`: ``python -m headwire.cli.docs.wire > docs/wire.md``.
"""

__all__ = ["cli", "settings", "wire"]
