"""Entry point of the ``headwire`` command.

``headwire bound ...`` runs the stream filter; anything else is the headless agent.  Imports are
deferred so that ``headwire --version`` starts fast.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Run the command line and return the process exit code."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["bound"]:
        from headwire.cli.bound_cmd import run_bound

        return run_bound(args[1:])
    if args[:1] in (["--version"], ["-v"]) and len(args) == 1:
        from headwire import __version__

        sys.stdout.write(f"{__version__}\n")
        return 0
    from headwire.cli.agent_cmd import run_agent
    from headwire.io.credentials import withhold_credentials
    from headwire.io.memory import pin_mmap_threshold

    withhold_credentials(args)
    pin_mmap_threshold()
    return run_agent(args)
