"""Entry point of the ``headwire`` command.

``headwire bound ...`` runs the stream filter, ``headwire sessions ...`` lists, shows, exports
and prunes recorded sessions, ``headwire schema ...`` prints the wire's JSON Schema,
``headwire doctor ...`` probes a model endpoint,
``headwire trust`` edits the trusted folders; a first word that looks like a mistyped
subcommand or another agent's subcommand (``exec``, ``mcp``, ``resume``) is an error that says
what to type; anything else is the headless agent.  Imports
are deferred so that ``headwire --version`` starts fast.

:func:`entry` is what the ``headwire`` script and ``python -m headwire`` call: :func:`main`,
then :func:`~headwire.io.process_exit.leave`, which ends the process without the
interpreter's module teardown once the exit code is decided.
"""

import sys


def _asks_version(args: "list[str]") -> bool:
    return len(args) == 1 and args[0] in ("--version", "-v")


def _print_version(version: str) -> int:
    """``version`` on stdout (our own constant: nothing to sanitize); when stdout cannot take
    it, :func:`~headwire.io.stdio.stdout_failed`'s exit code (141 or 1)."""
    try:
        sys.stdout.write(version + "\n")
        sys.stdout.flush()
    except OSError as exc:
        from headwire.io.stdio import stdout_failed

        return stdout_failed("headwire", exc)
    return 0


def entry() -> None:
    """The process: run :func:`main` on ``sys.argv`` and exit with its code.  Never returns.

    Descriptors 0, 1 and 2 are made open first
    (:func:`~headwire.io.std_descriptors.open_closed_descriptors`), so no file the run opens
    can take the number of a stream the parent closed."""
    from headwire.io.std_descriptors import open_closed_descriptors

    open_closed_descriptors()
    code = main()
    if _asks_version(sys.argv[1:]):  # nothing to tear down: the ordinary exit is as fast
        raise SystemExit(code)
    from headwire.io.process_exit import leave

    leave(code)


def main(argv: "list[str] | None" = None) -> int:
    """Run the command line and return the process exit code."""
    args = sys.argv[1:] if argv is None else argv
    if _asks_version(args):  # first: the least imported
        from headwire import __version__

        return _print_version(__version__)
    from headwire.io.stdio import install_excepthook

    install_excepthook()
    if args[:1] == ["bound"]:
        from headwire.cli.commands.bound import run_bound

        return run_bound(args[1:])
    if args[:1] == ["schema"]:
        from headwire.cli.commands.schema import run_schema

        return run_schema(args[1:])
    if args[:1] == ["doctor"]:
        from headwire.cli.commands.doctor import run_doctor

        return run_doctor(args[1:])
    if args[:1] == ["sessions"]:
        from headwire.cli.commands.sessions import run_sessions

        return run_sessions(args[1:])
    if args[:1] == ["trust"]:
        from headwire.cli.commands.trust import run_trust

        return run_trust(args[1:])
    from headwire.cli.run.oneshot import run_agent
    from headwire.io.credentials import withhold_credentials
    from headwire.io.memory import pin_mmap_threshold
    from headwire.io.signals import ignore_until_exit

    withhold_credentials(args)
    pin_mmap_threshold()
    code = run_agent(args)
    ignore_until_exit()  # the exit code is decided: a late signal must not kill the process
    return code
