"""``python -m headwire``: the same entry point as the ``headwire`` console script."""

from headwire.cli.main import main

raise SystemExit(main())
