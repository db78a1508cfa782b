"""``python -m headwire``: the same entry point as the ``headwire`` script."""

from headwire.cli.main import entry

entry()
